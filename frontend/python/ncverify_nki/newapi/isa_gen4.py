"""`nki.isa` 0.6 calls that exist on NeuronCore-v4 (trn3) only: exponential (NKI 0.3.0) and
activate2 (NKI 0.4.0) (docstrings: aws-neuron-sdk nki/api/nki/isa/__init__.py at 81ce03ae). Both
compute `op(a * data + b)`-shaped values in fp32, which the model's Scalar-engine activation
instruction computes as fl(fl(x * scale) + bias): each call is rewritten into that form exactly
(negations are exact in fp32) and refused where it cannot be."""

from .. import errors, ops, trace
from ..program import Enum
from ..signatures import refuse, api
from ..tiles import as_view
from . import isa as core
from .constants import current_version, nc_version, reduce_cmd


def _gen4(call):
    v = current_version()
    if v < nc_version.gen4:
        raise errors.NkiError("%s exists on NeuronCore-v4 (trn3) only (the page: \"Available only "
                              "on NeuronCore-v4 and newer\"); this kernel is traced for "
                              "NeuronCore-v%d" % (call, int(v)))


def _column(call, x, data, arg):
    v = ops._v(x, arg)
    if not ops._is_column(v):
        raise errors.NkiError("%s: %s= is a number or a tile of shape (data.shape[0], 1); this "
                              "tile is %s" % (call, arg, tuple(v.shape)))
    ops._check_partitions_agree(data, v, call)
    return v


def _operand(call, x, data, arg):
    """A number (an fp32 immediate) or a [P, 1] tile."""
    return float(x) if ops.is_scalar(x) else _column(call, x, data, arg)


def _negated(call, x, data, arg):
    """-x: a negated immediate, or a [P, 1] fp32 SBUF tile written by a Vector tensor_scalar
    (x * -1.0, exact in fp32)."""
    if ops.is_scalar(x):
        return -float(x)
    v = _column(call, x, data, arg)
    tr = trace.current()
    t = tr.temp("sbuf", "fp32", v.logical_lins(), "neg_" + arg).full_view()
    tr.instr("tensor_scalar", [(None, t), (None, v), ("op0", Enum("multiply")),
                               ("operand0", -1.0), ("engine", Enum("vector"))])
    return t


@api("nisa.exponential")
def exponential(dst, src, max_value=0.0, reduce_res=None, reduce_cmd=reduce_cmd.idle,
                reduce_init=0.0, name=None):
    """dst = exp(src - max_value) in fp32, cast to dst.dtype. The model has no Vector-engine
    exponential: the values are those of the Scalar engine's exp activation with bias
    -max_value (the same fp32 subtraction), and the latency is that instruction's. The running
    sum lives in the Vector engine's accumulator, which that instruction does not touch, so
    every reduce_cmd but idle (and reduce_res) is refused."""
    call = "nisa.exponential"
    core._name_arg(call, name)
    _gen4(call)
    if reduce_cmd not in ("idle", "reset", "reduce", "reset_reduce", "load_reduce"):
        raise errors.NkiError("%s: reduce_cmd= takes a member of nisa.reduce_cmd, not %r" %
                              (call, reduce_cmd))
    if reduce_cmd == "reset":
        raise errors.NkiError("%s: reduce_cmd=reset; the page supports idle, reset_reduce, "
                              "reduce and load_reduce" % call)
    if reduce_cmd != "load_reduce" and not (ops.is_scalar(reduce_init) and
                                            float(reduce_init) == 0.0):
        raise errors.NkiError("%s: reduce_init= must be unset or 0.0 unless reduce_cmd is "
                              "load_reduce (the page)" % call)
    if reduce_cmd != "idle":
        refuse(call, "reduce_cmd", reduce_cmd, "the running sum is kept in the Vector engine's "
               "accumulator; the model computes exp on the Scalar engine, whose accumulator is "
               "another" + ("; so reduce_init, which load_reduce loads, is not modelled either"
                            if reduce_cmd == "load_reduce" else ""))
    if reduce_res is not None:
        refuse(call, "reduce_res", "a tile", "with reduce_cmd=idle the Vector accumulator is "
               "undefined (the page), and the model does not compute it")
    d = core._dst(call, dst)
    v = ops._v(src, "src")
    if v.tensor.mem == "hbm":
        raise errors.NkiError("%s: src is in HBM; the Vector engine reads SBUF or PSUM" % call)
    if len(v.order) > 4:
        raise errors.NkiError("%s: src is %d-dimensional; the page allows up to 4D" %
                              (call, len(v.order)))
    core._same_elements(call, d, v, "src")
    if not ops.is_scalar(max_value):
        mv = _column(call, max_value, v, "max_value")
        if mv.tensor.dtype != "fp32":
            raise errors.NkiError("%s: max_value must be float32 (the page); this tile is %s" %
                                  (call, mv.tensor.dtype))
    bias = _negated(call, max_value, v, "max_value")
    ops.activation("exp", v, bias=None if ops.is_scalar(bias) and bias == 0.0 else bias,
                   out=d)


# The (op0, op1) pairs of the tensor-scalar stage (the page's list of six).
_PAIRS = (("multiply", "add"), ("multiply", "subtract"), ("multiply", "bypass"),
          ("add", "bypass"), ("subtract", "bypass"), ("bypass", "bypass"))


def _stage_op(op, arg):
    # The page spells a skipped stage nl.bypass (its list of the six pairs); None is accepted
    # too, as the argument's absence.
    if op is None or ops._is_bypass(op):
        return "bypass"
    return ops.alu_name(op, arg)


@api("nisa.activate2")
def activate2(dst, op, data, imm0, imm1, op0, op1, relu_param=0.0, reverse0=False,
              reverse1=False, reduce_op=None, reduce_res=None, reduce_cmd=reduce_cmd.idle,
              name=None):
    """dst = op((data op0 imm0) op1 imm1) on the Scalar engine, in fp32; the six (op0, op1)
    pairs are each the activation's fl(fl(x * scale) + bias) with scale and bias taken from
    imm0/imm1 (negated where the pair subtracts). The accumulator is the Scalar engine's, as
    activation's: reduce_op nl.add (the model's accumulator adds); reduce_res reads it out."""
    call = "nisa.activate2"
    core._name_arg(call, name)
    _gen4(call)
    for arg, x in (("reverse0", reverse0), ("reverse1", reverse1)):
        if not isinstance(x, bool):
            raise errors.NkiError("%s: %s= takes True or False, not %r" % (call, arg, x))
    n0, n1 = _stage_op(op0, "op0"), _stage_op(op1, "op1")
    if (n0, n1) not in _PAIRS:
        raise errors.NkiError("%s: (op0, op1) = (%s, %s) is not one of the six pairs the page "
                              "lists: %s" % (call, n0, n1, ", ".join("(%s, %s)" % p
                                                                     for p in _PAIRS)))
    if reverse0 and n0 == "bypass":
        raise errors.NkiError("%s: reverse0 requires op0 to be set (the page)" % call)
    if reverse1 and n1 == "bypass":
        raise errors.NkiError("%s: reverse1 requires op1 to be set (the page)" % call)
    if not (ops.is_scalar(relu_param) and float(relu_param) == 0.0):
        refuse(call, "relu_param", relu_param, "the model's activation functions take no "
               "parameter (parameterized ones such as nl.prelu are not modelled)")
    cmd = _reduce(call, reduce_op, reduce_cmd)
    d = core._dst(call, dst)
    v = ops._v(data, "data")
    if v.tensor.mem == "hbm":
        raise errors.NkiError("%s: data is in HBM; the Scalar engine reads SBUF or PSUM" % call)
    core._same_elements(call, d, v, "data")
    if not ops.is_scalar(imm0) and not ops.is_scalar(imm1) and n0 != "bypass" and \
            n1 != "bypass":
        a, b = ops._v(imm0, "imm0"), ops._v(imm1, "imm1")
        if a.tensor.dtype != b.tensor.dtype:
            raise errors.NkiError("%s: imm0 and imm1 are tiles of %s and %s; both immediates "
                                  "must have the same dtype (the page)" %
                                  (call, a.tensor.dtype, b.tensor.dtype))
    scale, bias = 1.0, None
    if n0 == "multiply":
        scale = _operand(call, imm0, v, "imm0")
        if n1 == "add":
            bias = _operand(call, imm1, v, "imm1")
        elif n1 == "subtract" and not reverse1:
            bias = _negated(call, imm1, v, "imm1")  # x * imm0 - imm1
        elif n1 == "subtract":
            scale = _negated(call, imm0, v, "imm0")  # imm1 - x * imm0 = x * -imm0 + imm1
            bias = _operand(call, imm1, v, "imm1")
    elif n0 == "add":
        bias = _operand(call, imm0, v, "imm0")
    elif n0 == "subtract":
        if reverse0:
            scale, bias = -1.0, _operand(call, imm0, v, "imm0")  # imm0 - x
        else:
            bias = _negated(call, imm0, v, "imm0")  # x - imm0
    if not ops.is_scalar(scale) and scale.tensor.dtype != "fp32":
        raise errors.NkiError("%s: a multiplying imm0 tile is the activation's scale, which is "
                              "float32; this one is %s" % (call, scale.tensor.dtype))
    rr = None
    if reduce_res is not None:
        rr = as_view(reduce_res, "reduce_res")
        if rr.tensor.mem == "hbm" or not ops._is_column(rr):
            raise errors.NkiError("%s: reduce_res is a [P, 1] tile in SBUF or PSUM" % call)
        ops._check_partitions_agree(v, rr, call)
    ops.activation(op, v, bias=bias, scale=scale, reduce_res=rr, reduce_cmd=cmd, out=d)


def _reduce(call, reduce_op, cmd):
    if cmd not in ("idle", "reset", "reduce", "reset_reduce", "load_reduce"):
        raise errors.NkiError("%s: reduce_cmd= takes a member of nisa.reduce_cmd, not %r" %
                              (call, cmd))
    if cmd == "load_reduce":
        raise errors.NkiError("%s: reduce_cmd=load_reduce; the Scalar engine's accumulator takes "
                              "idle, reset, reduce or reset_reduce (the page)" % call)
    if cmd in ("reduce", "reset_reduce") and reduce_op is None:
        raise errors.NkiError("%s: reduce_cmd=%s reduces, but reduce_op is not given" %
                              (call, cmd))
    if reduce_op is not None:
        name = ops.alu_name(reduce_op, "reduce_op")
        if name not in ("add", "max", "min", "abs_max", "abs_min"):
            raise errors.NkiError("%s: reduce_op=%s; the page lists nl.add, nl.maximum, "
                                  "nl.minimum, nl.abs_max and nl.abs_min" % (call, name))
        if name != "add":
            refuse(call, "reduce_op", reduce_op, "the model's Scalar-engine accumulator adds")
    return cmd

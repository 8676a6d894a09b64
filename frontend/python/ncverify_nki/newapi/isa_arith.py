"""`nki.isa` 0.6, the Vector engine's compound element-wise calls: scalar_tensor_tensor,
tensor_scalar_reduce, tensor_copy_predicated (docstrings: aws-neuron-sdk nki/api/nki/isa/
__init__.py at 81ce03ae; pages https://awsdocs-neuron.readthedocs-hosted.com/en/latest/nki/api/
generated/nki.isa.<name>.html). Each writes `dst` (its dtype is the output's); frontend/README.md
"nki.isa (new API)" says what each argument does here."""

from .. import errors, ops, trace
from ..program import Enum
from ..signatures import api, refuse
from ..tiles import as_view
from . import isa as core
from .constants import reduce_cmd

_BITWISE = ("bitwise_and", "bitwise_or", "bitwise_xor", "shift_left", "shift_right",
            "logical_and", "logical_or", "logical_xor")
_VECTOR = [("engine", Enum("vector"))]


def _arith(call, op, arg):
    name = ops.alu_name(op, arg)
    if name in _BITWISE:
        raise errors.NkiError("%s: %s=%s is a bitvec operator; this call takes arithmetic "
                              "operators (it computes in fp32)" % (call, arg, name))
    return name


def _scalar_or_column(call, x, data, arg):
    """operand0: a compile-time number (an fp32 immediate) or a [P, 1] tile over data's
    partitions."""
    if ops.is_scalar(x):
        return float(x)
    v = ops._v(x, arg)
    if not ops._is_column(v):
        raise errors.NkiError("%s: %s= is a number or a tile of shape (data.shape[0], 1); this "
                              "tile is %s" % (call, arg, tuple(v.shape)))
    ops._check_partitions_agree(data, v, call)
    return v


def _on_chip(call, v, what):
    if v.tensor.mem == "hbm":
        raise errors.NkiError("%s: %s is in HBM; the Vector engine reads SBUF or PSUM tiles" %
                              (call, what))


def _same_tensor(a, b):
    return not ops.is_scalar(b) and a.tensor is b.tensor


@api("nisa.scalar_tensor_tensor")
def scalar_tensor_tensor(dst, data, op0, operand0, op1, operand1, reverse0=False, reverse1=False,
                         name=None):
    """dst = (data op0 operand0) op1 operand1, all in fp32 (the page: "equivalent to running
    two operations back-to-back", tensor_scalar then tensor_tensor). The model has no fused
    instruction, so it records those two Vector-engine instructions with the intermediate kept
    in fp32: in dst itself when dst is fp32 and the second one can read it (dst is not operand1,
    not operand0's column, not a second PSUM operand), else in an fp32 SBUF tile of data's shape.
    The values are the fused instruction's; the latency is two instructions'."""
    call = "nisa.scalar_tensor_tensor"
    core._name_arg(call, name)
    for arg, v in (("reverse0", reverse0), ("reverse1", reverse1)):
        if not isinstance(v, bool):
            raise errors.NkiError("%s: %s= takes True or False, not %r" % (call, arg, v))
    d = core._dst(call, dst)
    v = ops._v(data, "data")
    _on_chip(call, v, "data")
    o1 = ops._v(operand1, "operand1")
    _on_chip(call, o1, "operand1")
    if v.tensor.mem == "psum" and o1.tensor.mem == "psum":
        raise errors.NkiError("%s: data and operand1 cannot both be in PSUM (the page)" % call)
    core._same_elements(call, d, v, "data")
    core._same_elements(call, d, o1, "operand1")
    name0, name1 = _arith(call, op0, "op0"), _arith(call, op1, "op1")
    o0 = _scalar_or_column(call, operand0, v, "operand0")
    tr = trace.current()
    if d.tensor.dtype == "fp32" and not _same_tensor(d, o1) and not _same_tensor(d, o0) and \
            not (d.tensor.mem == "psum" and o1.tensor.mem == "psum"):
        mid = d
    else:
        mid = tr.temp("sbuf", "fp32", v.logical_lins(), "stt").full_view()
    args = [(None, mid), (None, v), ("op0", Enum(name0)), ("operand0", o0)]
    if reverse0:
        args.append(("reverse0", True))
    tr.instr("tensor_scalar", args + _VECTOR)
    a, b = (o1, mid) if reverse1 else (mid, o1)
    tr.instr("tensor_tensor", [(None, d), (None, a), (None, b), ("op", Enum(name1))] + _VECTOR)


_REDUCE_OPS = ("add", "multiply", "max", "min")


def _unary_op0(call, op0, operand0):
    """op0 and operand0; the page allows a unary op0 (nl.abs, nl.rsqrt, ...) with operand0 None
    or 0: the ALU's unary operator (core.unary_op0 checks operand0 and the generation)."""
    unary0 = core.unary_op0(call, op0, operand0, False)
    if unary0 is None:
        return _arith(call, op0, "op0"), operand0
    return unary0


@api("nisa.tensor_scalar_reduce")
def tensor_scalar_reduce(dst, data, op0, operand0, reduce_op, reduce_res=None, reverse0=False,
                         reduce_cmd=reduce_cmd.reset_reduce, reduce_init=None,
                         reduce_res_negate=False, name=None):
    """dst = data op0 operand0; reduce_res = reduce_op over the free elements of that result
    (computed in fp32), from the identity (reduce_cmd.reset_reduce). The model's instruction
    reduces within the call and keeps nothing in the Vector engine's accumulator, so the calls
    that chain through it (reduce_cmd.reduce, load_reduce, reduce_res=None) are refused.
    reduce_res_negate: reduce_res = -reduction, a second Vector instruction (x * -1 is exact)."""
    call = "nisa.tensor_scalar_reduce"
    core._name_arg(call, name)
    if reverse0:
        refuse(call, "reverse0", reverse0, "the page marks it \"not supported yet\"")
    if reduce_cmd not in ("idle", "reset", "reduce", "reset_reduce", "load_reduce"):
        raise errors.NkiError("%s: reduce_cmd= takes a member of nisa.reduce_cmd, not %r" %
                              (call, reduce_cmd))
    if reduce_cmd in ("idle", "reset"):
        raise errors.NkiError("%s: reduce_cmd=%s; the page supports reset_reduce, reduce and "
                              "load_reduce" % (call, reduce_cmd))
    if reduce_init is not None and reduce_cmd != "load_reduce":
        raise errors.NkiError("%s: reduce_init= is read by reduce_cmd=load_reduce only (the "
                              "page); this call's reduce_cmd is %s" % (call, reduce_cmd))
    if reduce_cmd == "load_reduce" and reduce_init is None:
        raise errors.NkiError("%s: reduce_cmd=load_reduce loads reduce_init into the "
                              "accumulator; reduce_init is missing" % call)
    if reduce_cmd != "reset_reduce":
        refuse(call, "reduce_cmd", reduce_cmd, "the model's tensor_scalar_reduce starts each "
               "reduction from the operator's identity and does not share the Vector engine's "
               "accumulator with other calls" +
               ("; so reduce_init, which load_reduce loads, is not modelled either"
                if reduce_cmd == "load_reduce" else ""))
    if reduce_res is None:
        refuse(call, "reduce_res", None, "keeping the reduction in the Vector engine's "
               "accumulator for a later call is not modelled; pass the [P, 1] tile")
    if not isinstance(reduce_res_negate, bool):
        raise errors.NkiError("%s: reduce_res_negate= takes True or False, not %r" %
                              (call, reduce_res_negate))
    d = core._dst(call, dst)
    v = ops._v(data, "data")
    _on_chip(call, v, "data")
    core._same_elements(call, d, v, "data")
    name0, operand0 = _unary_op0(call, op0, operand0)
    red = ops.alu_name(reduce_op, "reduce_op")
    if red not in _REDUCE_OPS:
        raise errors.NkiError("%s: reduce_op=%s; the page lists nl.add, nl.multiply, nl.max and "
                              "nl.min" % (call, red))
    o0 = _scalar_or_column(call, operand0, v, "operand0")
    rr = as_view(reduce_res, "reduce_res")
    _on_chip(call, rr, "reduce_res")
    if not ops._is_column(rr):
        raise errors.NkiError("%s: reduce_res must have one element per partition; this tile is "
                              "%s" % (call, tuple(rr.shape)))
    ops._check_partitions_agree(v, rr, call)
    tr = trace.current()
    tr.instr("tensor_scalar_reduce", [(None, d), (None, v), ("op0", Enum(name0)),
                                      ("operand0", o0), ("reduce_op", Enum(red)),
                                      ("reduce_res", rr)])
    if reduce_res_negate:
        tr.instr("tensor_scalar", [(None, rr), (None, rr), ("op0", Enum("multiply")),
                                   ("operand0", -1.0)] + _VECTOR)


_PREDICATE_DTYPES = ("uint8", "uint16", "uint32")


@api("nisa.tensor_copy_predicated")
def tensor_copy_predicated(dst, src, predicate, reverse_pred=False, name=None):
    """dst = src where predicate (xor reverse_pred) is non-zero; elsewhere dst keeps its value.
    src is a tile of dst's dtype or a number."""
    call = "nisa.tensor_copy_predicated"
    core._name_arg(call, name)
    from ..expr import Predicate

    if isinstance(predicate, Predicate):
        raise errors.NkiError("%s takes its predicate as a tile; an affine condition is what "
                              "affine_select takes" % call)
    if not isinstance(reverse_pred, bool):
        raise errors.NkiError("%s: reverse_pred= takes True or False, not %r" %
                              (call, reverse_pred))
    d = core._dst(call, dst)
    p = ops._v(predicate, "predicate")
    _on_chip(call, p, "predicate")
    if p.tensor.dtype not in _PREDICATE_DTYPES:
        raise errors.NkiError("%s: the predicate must be a uint8, uint16 or uint32 tile; this one "
                              "is %s" % (call, p.tensor.dtype))
    core._same_elements(call, d, p, "predicate")
    if ops.is_scalar(src):
        s = float(src)
    else:
        s = ops._v(src, "src")
        _on_chip(call, s, "src")
        if s.tensor.dtype != d.tensor.dtype:
            raise errors.NkiError("%s: src and dst must share a dtype (%s and %s)" %
                                  (call, s.tensor.dtype, d.tensor.dtype))
        if s.tensor.mem == "psum" and p.tensor.mem == "psum":
            raise errors.NkiError("%s: src and predicate cannot both be in PSUM (the page)" %
                                  call)
        core._same_elements(call, d, s, "src")
    args = [(None, d), (None, s), ("predicate", p)]
    if reverse_pred:
        args.append(("reverse_predicate", True))
    trace.current().instr("tensor_copy_predicated", args)

"""Stand-ins for the scan instructions of `nki.isa`: tensor_tensor_scan and
tensor_scalar_cumulative (each one Vector-engine instruction, model/semantics/scan.cpp).

tensor_tensor_scan follows the neuronxcc.nki.isa page (Neuron SDK 2.26, the reference isa.py
follows). tensor_scalar_cumulative has only the newer nki.isa page (Neuron SDK 2.27 on:
https://awsdocs-neuron.readthedocs-hosted.com/en/v2.27.0/nki/api/generated/nki.isa.tensor_scalar_cumulative.html),
whose signature takes the output as `dst=`; that signature is the one implemented here.
"""

from . import errors, ops, trace
from .program import Enum
from .signatures import api, refuse
from .tiles import Tile, as_view

# ALU operators the scans take: the arithmetic ones (the engine computes in fp32); the bitwise
# operators are not arithmetic and are refused by name.
_BITWISE = ("bitwise_and", "bitwise_or", "bitwise_xor", "shift_left", "shift_right",
            "logical_and", "logical_or", "logical_xor")
_CUMULATIVE_OP1 = ("add", "subtract", "multiply", "max", "min")


def _arith(op, arg, call):
    name = ops.alu_name(op, arg)
    if name in _BITWISE:
        raise errors.NkiError("%s: %s=%s is a bitwise operator; the scan takes arithmetic "
                              "operators (it computes in fp32)" % (call, arg, name))
    return name


def _masked(x, mask):
    if mask is None or not isinstance(x, Tile):
        return x
    from .masks import apply_mask

    return Tile(apply_mask(x._view, mask))


def _column(x, data, arg, call, need_fp32):
    """A per-partition operand: a Python/NumPy number (an fp32 immediate) or a tile with one
    element per partition of `data`."""
    if ops.is_scalar(x):
        return float(x)
    if not isinstance(x, Tile):
        raise errors.NkiError("%s: %s= takes a number or a tile with one element per partition, "
                              "not %s" % (call, arg, type(x).__name__))
    v = ops._v(x, arg)
    if not ops._is_column(v):
        raise errors.NkiError("%s: %s= must have one element per partition; this tile is %s" %
                              (call, arg, tuple(v.shape)))
    if need_fp32 and v.tensor.dtype != "fp32":
        raise errors.NkiError("%s: %s= must be float32 (the page: \"Must be FP32 datatype\"); "
                              "this tile is %s" % (call, arg, v.tensor.dtype))
    ops._check_partitions_agree(data, v, call)
    return v


def _result_dtype(call, dtype, a, b):
    """The page: the dtype of data0 or data1, whichever has the highest precision."""
    if dtype is not None:
        return ops._dtype(dtype, None)
    da, db = a.tensor.dtype, b.tensor.dtype
    if da == db:
        return da
    if "fp32" in (da, db):
        return "fp32"
    raise errors.NkiError("%s: data0 is %s and data1 %s; which is the more precise is not "
                          "settled here: pass dtype=" % (call, da, db))


@api("nisa.tensor_tensor_scan")
def tensor_tensor_scan(data0, data1, initial, op0, op1, reverse0=False, reverse1=False, *,
                       dtype=None, mask=None):
    call = "nisa.tensor_tensor_scan"
    for arg, v in (("reverse0", reverse0), ("reverse1", reverse1)):
        if not isinstance(v, bool):
            raise errors.NkiError("%s: %s= takes True or False, not %r" % (call, arg, v))
    tr = trace.current()
    a = ops._v(_masked(data0, mask), "data0")
    b = ops._v(_masked(data1, mask), "data1")
    if a.tensor.mem == "psum" and b.tensor.mem == "psum":
        raise errors.NkiError("%s: data0 and data1 cannot both be in PSUM (the page lists SBUF+"
                              "SBUF, SBUF+PSUM and PSUM+SBUF)" % call)
    ops.check_same_shape(a, b, call)
    init = _column(initial, a, "initial", call, need_fp32=False)
    dst, t = ops._out(tr, None, a, _result_dtype(call, dtype, a, b))
    args = [(None, dst), (None, a), (None, b), ("initial", init),
            ("op0", Enum(_arith(op0, "op0", call))), ("op1", Enum(_arith(op1, "op1", call)))]
    if reverse0:
        args.append(("reverse0", True))
    if reverse1:
        args.append(("reverse1", True))
    tr.instr("tensor_tensor_scan", args, produces=t)
    return Tile(dst)


@api("nisa.tensor_scalar_cumulative")
def tensor_scalar_cumulative(dst, src, op0, op1, imm0, imm1=None, reduce_cmd="reset_reduce"):
    call = "nisa.tensor_scalar_cumulative"
    if reduce_cmd in ("idle", "reset"):
        refuse(call, "reduce_cmd", reduce_cmd, "the page defines the result for reset_reduce, "
               "reduce and load_reduce only")
    if reduce_cmd not in ("reset_reduce", "reduce", "load_reduce"):
        raise errors.NkiError("%s: reduce_cmd= takes a member of nisa.reduce_cmd, not %r" %
                              (call, reduce_cmd))
    tr = trace.current()
    s = ops._v(src, "src")
    d = as_view(dst, "dst")
    if d.tensor.mem == "hbm":
        raise errors.NkiError("%s: dst must be an SBUF or PSUM tile (the Vector engine writes "
                              "it); %s is in HBM" % (call, d.tensor.name))
    for v, what in ((s, "src"), (d, "dst")):
        if v.tensor.dtype in ("int32", "uint32"):
            raise errors.NkiError("%s: %s is %s; INT32/UINT32 are not supported as input/output "
                                  "dtypes (the page: ISA limitation)" % (call, what,
                                                                        v.tensor.dtype))
    ops.check_same_shape(d, s, call)
    o0 = _arith(op0, "op0", call)
    o1 = ops.alu_name(op1, "op1")
    if o1 not in _CUMULATIVE_OP1:
        raise errors.NkiError("%s: op1=%s; the cumulative operation is add, subtract, multiply, "
                              "max or min" % (call, o1))
    args = [(None, d), (None, s), ("op0", Enum(o0)),
            ("imm0", _column(imm0, s, "imm0", call, need_fp32=True)), ("op1", Enum(o1)),
            ("reduce_cmd", Enum(reduce_cmd))]
    # imm1 is the value load_reduce loads; the other commands do not read it (the page).
    if reduce_cmd == "load_reduce":
        if imm1 is None:
            raise errors.NkiError("%s: reduce_cmd=load_reduce loads imm1 into the accumulator; "
                                  "imm1 is missing" % call)
        args.append(("imm1", _column(imm1, s, "imm1", call, need_fp32=True)))
    tr.instr("tensor_scalar_cumulative", args)

"""Stand-ins for nisa.tensor_partition_reduce, nisa.select_reduce, nisa.sequence_bounds and
nisa.range_select, one instruction each (model/semantics/partition_reduce.cpp, select_reduce.cpp,
sequence_bounds.cpp), with the signatures of the neuronxcc.nki.isa pages of Neuron SDK 2.26:
https://awsdocs-neuron.readthedocs-hosted.com/en/v2.26.1/nki/api/generated/nki.isa.tensor_partition_reduce.html
and .../nki.isa.select_reduce.html, .../nki.isa.sequence_bounds.html,
.../nki.isa.range_select.html (docstrings in aws-neuron/aws-neuron-sdk
general/nki/api/nki/isa/__init__.py at 0521004c). frontend/README.md lists what each argument
does here."""

import numpy as np

from . import errors, ops, rules, trace
from .expr import Lin
from .program import Enum
from .signatures import api, refuse
from .tiles import Tile, as_view

_FP32_MIN = float(np.finfo(np.float32).min)  # the only on_false_value range_select takes


def _masked(x, mask):
    if mask is None or not isinstance(x, Tile):
        return x
    from .masks import apply_mask

    return Tile(apply_mask(x._view, mask))


def _known(lin):
    v = trace.current().evaluate(lin)
    return v.const if v.is_const() else None


def _column(call, x, data, arg):
    """A tile with one element per partition of `data` (a [P, 1] column)."""
    if not isinstance(x, Tile):
        raise errors.NkiError("%s: %s= takes a tile with one element per partition, not %s"
                              % (call, arg, type(x).__name__))
    v = ops._v(x, arg)
    if not ops._is_column(v):
        raise errors.NkiError("%s: %s= must have one element per partition; this tile is %s"
                              % (call, arg, tuple(v.shape)))
    ops._check_partitions_agree(data, v, call)
    return v


def _max_only(call, reduce_op):
    if ops.alu_name(reduce_op, "reduce_op") != "max":
        refuse(call, "reduce_op", reduce_op, "the page: only max is supported")


def _accumulator(call, reduce_cmd, reduce_res, allowed):
    """reduce_cmd as the page lists it; reduce_res reads the registers out of a reducing call."""
    if reduce_cmd not in ("idle", "reset", "reduce", "reset_reduce", "load_reduce"):
        raise errors.NkiError("%s: reduce_cmd= takes a member of nisa.reduce_cmd, not %r"
                              % (call, reduce_cmd))
    if reduce_cmd not in allowed:
        refuse(call, "reduce_cmd", reduce_cmd, "the page lists %s" % ", ".join(allowed))
    if reduce_res is not None and reduce_cmd not in ("reduce", "reset_reduce"):
        raise errors.NkiError("%s: reduce_res= reads the reduction out of the accumulator, but "
                              "reduce_cmd=%s does not reduce: pass reduce_cmd=reset_reduce (or "
                              "reduce to continue one)" % (call, reduce_cmd))
    args = [("reduce_cmd", Enum(reduce_cmd))] if reduce_cmd != "idle" else []
    if reduce_res is not None:
        rr = as_view(reduce_res, "reduce_res")
        if rr.tensor.dtype not in ("fp32", "bf16", "fp16", "fp8_e4m3", "fp8_e4m3fn", "fp8_e5m2"):
            raise errors.NkiError("%s: reduce_res must be a float tile; this one is %s"
                                  % (call, rr.tensor.dtype))
        args.append(("reduce_res", rr))
    return args


@api("nisa.tensor_partition_reduce")
def tensor_partition_reduce(op, data, *, mask=None, dtype=None):
    call = "nisa.tensor_partition_reduce"
    name = ops.alu_name(op)
    if name not in ("add", "max", "bitwise_or", "bitwise_and"):
        raise errors.NkiError("%s: op=%s; the page lists add, max, bitwise_or and bitwise_and"
                              % (call, name))
    tr = trace.current()
    v = ops._v(_masked(data, mask), "data")
    if v.tensor.mem == "psum":
        raise errors.NkiError("%s: the GpSimd engine cannot read PSUM; copy %s to SBUF first"
                              % (call, v.tensor.name))
    out = ops._dtype(dtype, v.tensor.dtype)
    if name.startswith("bitwise_") and (v.tensor.dtype not in ("int32", "uint8", "uint16",
                                                               "uint32") or
                                        out not in ("int32", "uint8", "uint16", "uint32")):
        raise errors.NkiError("%s: op=%s works on integer tiles; the data is %s" %
                              (call, name, v.tensor.dtype))
    # [P, f1, ...] -> [1, f1, ...]: the partitions reduce, the free dims stay.
    shape = [Lin.of(1)] + list(v.logical_lins()[1:])
    if len(shape) == 1:
        shape.append(Lin.of(1))
    t = rules.result_tile(tr, "sbuf", out, shape, tr.assigned_name())
    dst = t.full_view()
    tr.instr("tensor_partition_reduce", [(None, dst), (None, v), ("op", Enum(name))], produces=t)
    return Tile(dst)


@api("nisa.select_reduce")
def select_reduce(*, dst, predicate, on_true, on_false, reduce_res=None, reduce_cmd="idle",
                  reduce_op=np.amax, reverse_pred=False, mask=None, dtype=None):
    call = "nisa.select_reduce"
    if not isinstance(reverse_pred, bool):
        raise errors.NkiError("%s: reverse_pred= takes True or False, not %r"
                              % (call, reverse_pred))
    _max_only(call, reduce_op)
    acc = _accumulator(call, reduce_cmd, reduce_res, ("idle", "reset_reduce", "reduce"))
    tr = trace.current()
    d = as_view(_masked(dst, mask), "dst")
    if d.tensor.mem == "hbm":
        raise errors.NkiError("%s: dst must be an SBUF or PSUM tile; %s is in HBM"
                              % (call, d.tensor.name))
    if dtype is not None and ops._dtype(dtype, d.tensor.dtype) != d.tensor.dtype:
        refuse(call, "dtype", dtype, "the result is written into dst, so its dtype is dst's (%s)"
               % d.tensor.dtype)
    p = ops._v(_masked(predicate, mask), "predicate")
    t = ops._v(_masked(on_true, mask), "on_true")
    if p.tensor.dtype not in ("uint8", "uint16"):
        raise errors.NkiError("%s: the predicate must be an 8- or 16-bit integer tile (the page: "
                              "int8, uint8, int16, uint16); this one is %s" % (call, p.tensor.dtype))
    if t.tensor.dtype in ("int32", "uint32"):
        raise errors.NkiError("%s: on_true cannot be %s (the page: any dtype but tfloat32, int32, "
                              "uint32)" % (call, t.tensor.dtype))
    if p.tensor.mem == "psum" and t.tensor.mem == "psum":
        raise errors.NkiError("%s: on_true and predicate cannot both be in PSUM" % call)
    ops.check_same_shape(p, t, call)
    ops.check_same_shape(d, t, call)
    if ops.is_scalar(on_false):
        off = float(on_false)  # an fp32 immediate, as the page asks of a scalar
    else:
        off = _column(call, on_false, t, "on_false")
    args = [(None, d), ("predicate", p), ("on_true", t), ("on_false", off)] + acc
    if reverse_pred:
        args.append(("reverse_pred", True))
    tr.instr("select_reduce", args)


@api("nisa.sequence_bounds")
def sequence_bounds(*, segment_ids, dtype=None):
    call = "nisa.sequence_bounds"
    tr = trace.current()
    v = ops._v(segment_ids, "segment_ids")
    if v.tensor.mem == "psum":
        raise errors.NkiError("%s: the GpSimd engine cannot read PSUM; copy %s to SBUF first"
                              % (call, v.tensor.name))
    lins = v.logical_lins()
    if len(lins) != 2:
        raise errors.NkiError("%s: segment_ids is a [1, n] tile; this one is %s"
                              % (call, tuple(v.shape)))
    if _known(lins[0]) not in (None, 1):
        raise errors.NkiError("%s: the partition dimension must be 1 (the page); segment_ids "
                              "has %d partitions" % (call, _known(lins[0])))
    out = ops._dtype(dtype, v.tensor.dtype)
    for what, dt in (("segment_ids", v.tensor.dtype), ("dtype", out)):
        if dt not in ("fp32", "int32"):
            raise errors.NkiError("%s: %s is %s; the page allows float32 or int32" %
                                  (call, what, dt))
    t = rules.result_tile(tr, "sbuf", out, [Lin.of(1), Lin.of(2), lins[1]], tr.assigned_name())
    dst = t.full_view()
    tr.instr("sequence_bounds", [(None, dst), (None, v)], produces=t)
    return Tile(dst)


_RANGE_CMP = {"is_equal": "eq", "is_lt": "lt", "is_le": "le", "is_gt": "gt", "is_ge": "ge"}


def _cmp(call, op, arg):
    name = ops.alu_name(op, arg)
    if name not in _RANGE_CMP:
        raise errors.NkiError("%s: %s=%s; the page lists equal, less, less_equal, greater and "
                              "greater_equal" % (call, arg, name))
    return Enum(_RANGE_CMP[name])


@api("nisa.range_select")
def range_select(*, on_true_tile, comp_op0, comp_op1, bound0, bound1, reduce_cmd="idle",
                 reduce_res=None, reduce_op=np.amax, range_start=0, on_false_value=_FP32_MIN,
                 mask=None, dtype=None):
    call = "nisa.range_select"
    tr = trace.current()
    if tr.generation not in ("trn2", "trn3"):
        raise errors.NkiError("%s exists from NeuronCore-v3 on (the page: \"Available only on "
                              "NeuronCore-v3 and beyond\"); a kernel for trn2 says so with "
                              "nki.jit(platform_target='trn2')" % call)
    _max_only(call, reduce_op)
    if not ops.is_scalar(on_false_value) or float(on_false_value) != _FP32_MIN:
        refuse(call, "on_false_value", on_false_value,
               "the page: due to hardware constraints it must be FP32_MIN (nl.fp32.min)")
    try:
        start = Lin.of(range_start)
    except TypeError:
        raise errors.NkiError("%s: range_start= is a compile-time integer (or a loop index), not "
                              "%s" % (call, type(range_start).__name__)) from None
    acc = _accumulator(call, reduce_cmd, reduce_res, ("idle", "reset", "reset_reduce", "reduce"))
    v = ops._v(_masked(on_true_tile, mask), "on_true_tile")
    if v.tensor.dtype not in ("fp32", "bf16", "fp16", "fp8_e4m3", "fp8_e4m3fn", "fp8_e5m2"):
        raise errors.NkiError("%s: on_true_tile must be a float tile; this one is %s"
                              % (call, v.tensor.dtype))
    bounds = []
    for arg, b in (("bound0", bound0), ("bound1", bound1)):
        bv = _column(call, b, v, arg)
        if bv.tensor.dtype != "fp32":
            raise errors.NkiError("%s: %s must be float32 (the page); this tile is %s"
                                  % (call, arg, bv.tensor.dtype))
        bounds.append(bv)
    out = ops._dtype(dtype, v.tensor.dtype)
    dst, t = ops._out(tr, None, v, out)
    args = [(None, dst), ("on_true", v), ("bound0", bounds[0]), ("bound1", bounds[1]),
            ("cmp0", _cmp(call, comp_op0, "comp_op0")), ("cmp1", _cmp(call, comp_op1, "comp_op1")),
            ("range_start", start)] + acc
    tr.instr("range_select", args, produces=t)
    return Tile(dst)

"""`nki.isa` 0.6 selections with a max reduction, and sequence bounds: select_reduce,
range_select, sequence_bounds (docstrings: aws-neuron-sdk nki/api/nki/isa/__init__.py at
81ce03ae). The instructions are the legacy stand-ins' (isa_select.py), writing `dst`. What
changed from the legacy pages: every call writes dst (positional first); range_select's
reduce_cmd defaults to reset_reduce; reduce_res=None keeps the reduction in the Vector engine's
accumulator for a later call (the IR's shared accumulator registers)."""

import numpy as np

from .. import errors, ops, trace
from .. import isa_select as legacy
from ..expr import Lin
from ..signatures import api, refuse
from ..tiles import as_view
from . import isa as core
from .constants import current_version, nc_version, reduce_cmd

_FP32_MIN = legacy._FP32_MIN


def _known(lin):
    v = trace.current().evaluate(lin)
    return v.const if v.is_const() else None


def _on_chip(call, v, what):
    if v.tensor.mem == "hbm":
        raise errors.NkiError("%s: %s is in HBM; the Vector engine reads SBUF or PSUM" %
                              (call, what))


def _accumulator(call, cmd, reduce_res, allowed, data):
    args = legacy._accumulator(call, cmd, reduce_res, allowed)
    if reduce_res is not None:
        rr = as_view(reduce_res, "reduce_res")
        if rr.tensor.mem == "hbm" or not ops._is_column(rr):
            raise errors.NkiError("%s: reduce_res is a [P, 1] tile in SBUF or PSUM; this one is "
                                  "%s in %s" % (call, tuple(rr.shape), rr.tensor.mem.upper()))
        ops._check_partitions_agree(data, rr, call)
    return args


@api("nisa.select_reduce")
def select_reduce(dst, predicate, on_true, on_false, reduce_res=None, reduce_cmd=reduce_cmd.idle,
                  reduce_op=np.maximum, reverse_pred=False, name=None):
    """dst = where(predicate xor reverse_pred, on_true, on_false) in fp32, cast to dst.dtype;
    the accumulator follows reduce_cmd with max; reduce_res reads it out."""
    call = "nisa.select_reduce"
    core._name_arg(call, name)
    if not isinstance(reverse_pred, bool):
        raise errors.NkiError("%s: reverse_pred= takes True or False, not %r" %
                              (call, reverse_pred))
    legacy._max_only(call, reduce_op)
    d = core._dst(call, dst)
    p = ops._v(predicate, "predicate")
    t = ops._v(on_true, "on_true")
    _on_chip(call, p, "predicate")
    _on_chip(call, t, "on_true")
    acc = _accumulator(call, reduce_cmd, reduce_res, ("idle", "reset_reduce", "reduce"), t)
    if p.tensor.dtype not in ("uint8", "uint16"):
        raise errors.NkiError("%s: the predicate must be an 8- or 16-bit integer tile (the page: "
                              "int8, uint8, int16, uint16); this one is %s" %
                              (call, p.tensor.dtype))
    if t.tensor.dtype in ("int32", "uint32"):
        raise errors.NkiError("%s: on_true cannot be %s (the page: any dtype but tfloat32, "
                              "int32, uint32)" % (call, t.tensor.dtype))
    if p.tensor.mem == "psum" and t.tensor.mem == "psum":
        raise errors.NkiError("%s: on_true and predicate cannot both be in PSUM" % call)
    ops.check_same_shape(p, t, call)
    core._same_elements(call, d, t, "on_true")
    off = float(on_false) if ops.is_scalar(on_false) else \
        legacy._column(call, on_false, t, "on_false")
    args = [(None, d), ("predicate", p), ("on_true", t), ("on_false", off)] + acc
    if reverse_pred:
        args.append(("reverse_pred", True))
    trace.current().instr("select_reduce", args)


@api("nisa.range_select")
def range_select(dst, on_true_tile, comp_op0, comp_op1, bound0, bound1,
                 reduce_cmd=reduce_cmd.reset_reduce, reduce_res=None, reduce_op=np.maximum,
                 range_start=0, on_false_value=_FP32_MIN, name=None):
    """dst = on_true_tile where comp_op0(i, bound0) and comp_op1(i, bound1), i = range_start +
    the element's free index (fp32), else FP32_MIN; NeuronCore-v3 and newer. The page's
    signature shows the on_false_value default as `...`; the value it must be is FP32_MIN
    (-3.4028235e+38), which is the default here."""
    call = "nisa.range_select"
    core._name_arg(call, name)
    if current_version() < nc_version.gen3:
        raise errors.NkiError("%s exists on NeuronCore-v3 and newer (the page: \"Available only "
                              "on NeuronCore-v3 and newer\"); this kernel is traced for "
                              "NeuronCore-v%d" % (call, int(current_version())))
    legacy._max_only(call, reduce_op)
    # Compared as fp32: nki-library writes the constant as -3.4028235e38, a double that rounds
    # to FP32_MIN.
    if not ops.is_scalar(on_false_value) or np.float32(on_false_value) != np.float32(_FP32_MIN):
        refuse(call, "on_false_value", on_false_value,
               "the page: due to hardware constraints it must be FP32_MIN (-3.4028235e+38)")
    try:
        start = Lin.of(range_start)
    except TypeError:
        raise errors.NkiError("%s: range_start= is a compile-time integer, not %s" %
                              (call, type(range_start).__name__)) from None
    d = core._dst(call, dst)
    v = ops._v(on_true_tile, "on_true_tile")
    _on_chip(call, v, "on_true_tile")
    acc = _accumulator(call, reduce_cmd, reduce_res, ("idle", "reset", "reset_reduce", "reduce"),
                       v)
    if v.tensor.dtype not in ("fp32", "bf16", "fp16", "fp8_e4m3", "fp8_e4m3fn", "fp8_e5m2"):
        raise errors.NkiError("%s: on_true_tile must be a float tile; this one is %s" %
                              (call, v.tensor.dtype))
    core._same_elements(call, d, v, "on_true_tile")
    bounds = []
    for arg, b in (("bound0", bound0), ("bound1", bound1)):
        bv = legacy._column(call, b, v, arg)
        if bv.tensor.dtype != "fp32":
            raise errors.NkiError("%s: %s must be float32 (the page); this tile is %s" %
                                  (call, arg, bv.tensor.dtype))
        bounds.append(bv)
    args = [(None, d), ("on_true", v), ("bound0", bounds[0]), ("bound1", bounds[1]),
            ("cmp0", legacy._cmp(call, comp_op0, "comp_op0")),
            ("cmp1", legacy._cmp(call, comp_op1, "comp_op1")), ("range_start", start)] + acc
    trace.current().instr("range_select", args)


@api("nisa.sequence_bounds")
def sequence_bounds(dst, segment_ids, name=None):
    """dst [1, 2, n] (or [1, 2n]) = the start index of each element's segment, then its end
    (one past the last element); padding (segment id 0) gives start n, end -1. GpSimd engine,
    SBUF only; fp32 or int32."""
    call = "nisa.sequence_bounds"
    core._name_arg(call, name)
    d = core._dst(call, dst, ("sbuf",))
    v = ops._v(segment_ids, "segment_ids")
    if v.tensor.mem != "sbuf":
        raise errors.NkiError("%s: segment_ids is in %s; the GpSimd engine reads SBUF only" %
                              (call, v.tensor.mem.upper()))
    lins = v.logical_lins()
    if len(lins) != 2:
        raise errors.NkiError("%s: segment_ids is a [1, n] tile; this one is %s" %
                              (call, tuple(v.shape)))
    for what, view in (("segment_ids", v), ("dst", d)):
        p = _known(view.logical_lins()[0])
        if p not in (None, 1):
            raise errors.NkiError("%s: the partition dimension must be 1 (the page); %s has %d "
                                  "partitions" % (call, what, p))
        if view.tensor.dtype not in ("fp32", "int32"):
            raise errors.NkiError("%s: %s is %s; the page allows float32 or int32" %
                                  (call, what, view.tensor.dtype))
    n, fd = _known(lins[1]), _known(ops._free_size(d))
    if n is not None and fd is not None and fd != 2 * n:
        raise errors.NkiError("%s: dst holds %d elements per partition; for %d segment ids it "
                              "holds 2 x %d (starts, then ends)" % (call, fd, n, n))
    trace.current().instr("sequence_bounds", [(None, d), (None, v)])

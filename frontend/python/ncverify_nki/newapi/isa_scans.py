"""`nki.isa` 0.6 scans and statistics along or across partitions: tensor_tensor_scan,
tensor_scalar_cumulative, bn_stats, bn_aggr, tensor_partition_reduce (docstrings: aws-neuron-sdk
nki/api/nki/isa/__init__.py at 81ce03ae). The instructions are the legacy stand-ins'
(isa_scan.py, isa_stats.py, isa_select.py), writing `dst`."""

from .. import errors, ops, trace
from .. import isa_scan as legacy_scan
from ..program import Enum
from ..signatures import api, refuse
from . import isa as core
from .constants import reduce_cmd


def _known(lin):
    v = trace.current().evaluate(lin)
    return v.const if v.is_const() else None


@api("nisa.tensor_tensor_scan")
def tensor_tensor_scan(dst, data0, data1, initial, op0, op1, reverse0=False, reverse1=False,
                       name=None):
    """res[:, i] = op1(op0(data0[:, i], res[:, i-1]), data1[:, i]) from `initial`, in fp32, cast
    to dst.dtype."""
    call = "nisa.tensor_tensor_scan"
    core._name_arg(call, name)
    for arg, v in (("reverse0", reverse0), ("reverse1", reverse1)):
        if not isinstance(v, bool):
            raise errors.NkiError("%s: %s= takes True or False, not %r" % (call, arg, v))
    d = core._dst(call, dst)
    a, b = ops._v(data0, "data0"), ops._v(data1, "data1")
    for v, what in ((a, "data0"), (b, "data1")):
        if v.tensor.mem == "hbm":
            raise errors.NkiError("%s: %s is in HBM; the Vector engine reads SBUF or PSUM" %
                                  (call, what))
    if a.tensor.mem == "psum" and b.tensor.mem == "psum":
        raise errors.NkiError("%s: data0 and data1 cannot both be in PSUM (the page lists SBUF+"
                              "SBUF, SBUF+PSUM and PSUM+SBUF)" % call)
    ops.check_same_shape(a, b, call)
    core._same_elements(call, d, a, "data0")
    init = legacy_scan._column(initial, a, "initial", call, need_fp32=False)
    args = [(None, d), (None, a), (None, b), ("initial", init),
            ("op0", Enum(legacy_scan._arith(op0, "op0", call))),
            ("op1", Enum(legacy_scan._arith(op1, "op1", call)))]
    if reverse0:
        args.append(("reverse0", True))
    if reverse1:
        args.append(("reverse1", True))
    trace.current().instr("tensor_tensor_scan", args)


@api("nisa.tensor_scalar_cumulative")
def tensor_scalar_cumulative(dst, src, op0, op1, imm0, imm1=None,
                             reduce_cmd=reduce_cmd.reset_reduce, name=None):
    """reg = op1(op0(src[i], imm0), reg); dst[i] = reg, the register starting as reduce_cmd
    says (the legacy stand-in already has this signature, less name=)."""
    core._name_arg("nisa.tensor_scalar_cumulative", name)
    core._dst("nisa.tensor_scalar_cumulative", dst)
    legacy_scan.tensor_scalar_cumulative(dst, src, op0, op1, imm0, imm1, reduce_cmd)


_BN_STATS_FMAX = 512  # the page: nl.tile_size.bn_stats_fmax


def _stats(call, op, dst, data, cols):
    d = core._dst(call, dst)
    v = ops._v(data, "data")
    if v.tensor.mem == "hbm":
        raise errors.NkiError("%s: data is in HBM; the Vector engine reads SBUF or PSUM" % call)
    pd, pv = _known(d.logical_lins()[0]), _known(v.logical_lins()[0])
    if pd is not None and pv is not None and pd != pv:
        raise errors.NkiError("%s: dst has %d partitions and data %d" % (call, pd, pv))
    fd = _known(ops._free_size(d))
    if fd is not None and fd != cols:
        raise errors.NkiError("%s: dst holds %d elements per partition; the instruction writes "
                              "%d" % (call, fd, cols))
    return d, v


@api("nisa.bn_stats")
def bn_stats(dst, data, name=None):
    """dst [P, 6] = (count, mean, variance * count) of the even then the odd elements of each
    partition (at most 512), in fp32, cast to dst.dtype."""
    call = "nisa.bn_stats"
    core._name_arg(call, name)
    d, v = _stats(call, "bn_stats", dst, data, 6)
    free = _known(ops._free_size(v))
    if free is not None and free > _BN_STATS_FMAX:
        raise errors.NkiError("%s: %d elements per partition; the page allows at most 512 "
                              "(nl.tile_size.bn_stats_fmax): split the tile and aggregate the "
                              "outputs with one bn_aggr" % (call, free))
    trace.current().instr("bn_stats", [(None, d), (None, v)])


@api("nisa.bn_aggr")
def bn_aggr(dst, data, name=None):
    """dst [P, 2] = (mean, variance) of the elements that data's bn_stats triples describe."""
    call = "nisa.bn_aggr"
    core._name_arg(call, name)
    d, v = _stats(call, "bn_aggr", dst, data, 2)
    free = _known(ops._free_size(v))
    if free is not None and free % 3:
        raise errors.NkiError("%s: %d elements per partition; the input holds (count, mean, "
                              "variance * count) triples from bn_stats, so a multiple of 3" %
                              (call, free))
    trace.current().instr("bn_aggr", [(None, d), (None, v)])


_INTEGER = ("int32", "uint8", "uint16", "uint32")


@api("nisa.tensor_partition_reduce")
def tensor_partition_reduce(dst, op, data, name=None):
    """dst [1, F] = op over the partitions of data [P, F], per free element, on the GpSimd
    engine (SBUF only). op: add, max (fp32), bitwise_or, bitwise_and (integer tiles); the
    page's `average` is refused."""
    call = "nisa.tensor_partition_reduce"
    core._name_arg(call, name)
    opn = ops.alu_name(op) if not (isinstance(op, str) and op == "average") else op
    if opn == "average":
        refuse(call, "op", "average", "the model's partition reduction has no average (how the "
               "hardware divides, and in what order it rounds, is not documented)")
    if opn not in ("add", "max", "bitwise_or", "bitwise_and"):
        raise errors.NkiError("%s: op=%s; the page lists add, average, max, bitwise_or and "
                              "bitwise_and" % (call, opn))
    d = core._dst(call, dst, ("sbuf",))
    v = ops._v(data, "data")
    if v.tensor.mem != "sbuf":
        raise errors.NkiError("%s: data is in %s; the GpSimd engine reads SBUF only" %
                              (call, v.tensor.mem.upper()))
    if opn.startswith("bitwise_") and (v.tensor.dtype not in _INTEGER or
                                       d.tensor.dtype not in _INTEGER):
        raise errors.NkiError("%s: op=%s works on integer tiles; data is %s and dst %s" %
                              (call, opn, v.tensor.dtype, d.tensor.dtype))
    pd = _known(d.logical_lins()[0])
    if pd is not None and pd != 1:
        raise errors.NkiError("%s: dst has %d partitions; the reduction across partitions "
                              "writes one" % (call, pd))
    fd, fv = _known(ops._free_size(d)), _known(ops._free_size(v))
    if fd is not None and fv is not None and fd != fv:
        raise errors.NkiError("%s: dst holds %d elements per partition and data %d; they must "
                              "match" % (call, fd, fv))
    trace.current().instr("tensor_partition_reduce", [(None, d), (None, v), ("op", Enum(opn))])

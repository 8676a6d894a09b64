"""Stand-in for `neuronxcc.nki.isa` (nisa): one instruction per call, as the ISA documents."""

import numpy as np

from . import errors, ops, trace
from .program import Enum, Indirect
from .sealed import SealedClass
from .signatures import api, refuse
from .tiles import Tile, as_view


class _Engine:
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return "nisa.%s_engine" % self.name


tensor_engine = _Engine("tensor")
vector_engine = _Engine("vector")
scalar_engine = _Engine("scalar")
gpsimd_engine = _Engine("gpsimd")
unknown_engine = _Engine(None)


class engine(metaclass=SealedClass):  # noqa: N801 (nisa.engine.vector etc.)
    tensor = tensor_engine
    vector = vector_engine
    scalar = scalar_engine
    gpsimd = gpsimd_engine
    unknown = unknown_engine


class reduce_cmd(metaclass=SealedClass):  # noqa: N801
    idle = "idle"
    reset = "reset"
    reduce = "reduce"
    reset_reduce = "reset_reduce"
    load_reduce = "load_reduce"  # the newer API's command, taken by tensor_scalar_cumulative


# The reference this file follows: the neuronxcc.nki.isa pages of the NKI API reference (Neuron
# SDK 2.26, https://awsdocs-neuron.readthedocs-hosted.com/en/v2.26.1/nki/api/nki.isa.html; their
# docstrings are aws-neuron/aws-neuron-sdk general/nki/api/nki/isa/__init__.py at release 2.26.0).
# Each call has the documented signature; frontend/README.md "Arguments of every call" says what
# each argument does here.

_ENGINES = {"tensor": "nisa.tensor_engine", "vector": "nisa.vector_engine",
            "scalar": "nisa.scalar_engine", "gpsimd": "nisa.gpsimd_engine"}


def _eng(e, call, allowed):
    """engine=: None for unknown_engine (the compiler's choice, model/compiler), else the name,
    which must be one the call's page allows."""
    if not isinstance(e, _Engine):
        raise errors.NkiError("%s: engine= takes %s or nisa.unknown_engine, not %r" %
                              (call, " / ".join(_ENGINES[a] for a in allowed), e))
    if e.name is not None and e.name not in allowed:
        raise errors.NkiError("%s: engine=%s is not one the call runs on (%s or "
                              "nisa.unknown_engine)" % (call, _ENGINES[e.name],
                                                        " / ".join(_ENGINES[a] for a in allowed)))
    return e.name


def _masked(x, mask):
    if mask is None or not isinstance(x, Tile):
        return x
    from .masks import apply_mask

    return Tile(apply_mask(x._view, mask))


def _pe_values(v, arg):
    from .expr import Lin

    if not isinstance(v, (tuple, list)) or len(v) not in (0, 2):
        raise errors.NkiError("nisa.nc_matmul: %s= takes a (row, column) pair, not %r" % (arg, v))
    try:
        return [Lin.of(x) for x in v]
    except TypeError:
        raise errors.NkiError("nisa.nc_matmul: %s= holds integers or affine expressions, not %r"
                              % (arg, v)) from None


def _check_pe_tile(tile_position, tile_size, stationary):
    """PE tiling (tile_position/tile_size) places a small matmul in part of the 128x128 PE array;
    the product is the same. The page's rules are checked where the values are known: both set
    or neither, multiples of 32, inside the array, not both 32 (NeuronCore-v2), and the size at
    least the stationary tile's (rows: partitions, columns: free size)."""
    pos, size = _pe_values(tile_position, "tile_position"), _pe_values(tile_size, "tile_size")
    if not pos and not size:
        return
    if not pos or not size:
        raise errors.NkiError("nisa.nc_matmul: tile_position and tile_size must both be set to "
                              "enable PE tiling (only %s is)" %
                              ("tile_position" if pos else "tile_size"))
    for arg, vals in (("tile_position", pos), ("tile_size", size)):
        for v in vals:
            if v.is_const() and (v.const % 32 or not 0 <= v.const <= 128):
                raise errors.NkiError("nisa.nc_matmul: %s=(%s): each value must be a multiple "
                                      "of 32 within the 128x128 PE array" %
                                      (arg, ", ".join(x.text() for x in vals)))
    if all(v.is_const() for v in size):
        if size[0].const == 32 and size[1].const == 32:
            raise errors.NkiError("nisa.nc_matmul: tile_size=(32, 32): NeuronCore-v2 cannot "
                                  "have both the row and the column size 32")
        if any(s.const == 0 for s in size):
            raise errors.NkiError("nisa.nc_matmul: tile_size must be positive")
        for p, s in zip(pos, size):
            if p.is_const() and p.const + s.const > 128:
                raise errors.NkiError("nisa.nc_matmul: the PE tile at %s of size %s leaves the "
                                      "128x128 array" % (p.const, s.const))
        v = as_view(stationary, "stationary")
        r = trace.current().evaluate
        rows, cols = r(v.logical_lins()[0]), r(ops._free_size(v))
        for what, need, have in (("rows (partitions)", rows, size[0]),
                                 ("columns (free size)", cols, size[1])):
            if need.is_const() and need.const > have.const:
                raise errors.NkiError("nisa.nc_matmul: tile_size %s %d is smaller than the "
                                      "stationary tile's %d" % (what, have.const, need.const))


@api("nisa.nc_matmul")
def nc_matmul(stationary, moving, *, is_stationary_onezero=False, is_moving_onezero=False,
              is_transpose=False, tile_position=(), tile_size=(), mask=None, perf_mode=None):
    # is_transpose is a hint that `moving` is an identity matrix (ISA-OLD nc_matmul; NeuronCore-v2
    # has no transpose mode, the flag only labels the instruction for the profiler): the result is
    # stationary.T @ moving whatever moving holds, [stationary free, moving free] in fp32 PSUM.
    # The is_*_onezero hints change only the speed of an fp32 operand; the values are the same.
    for arg, v in (("is_stationary_onezero", is_stationary_onezero),
                   ("is_moving_onezero", is_moving_onezero), ("is_transpose", is_transpose)):
        if not isinstance(v, bool):
            raise errors.NkiError("nisa.nc_matmul: %s= takes True or False, not %r" % (arg, v))
    _check_pe_tile(tile_position, tile_size, stationary)
    if perf_mode not in (None, "none"):
        refuse("nisa.nc_matmul", "perf_mode", perf_mode,
               "neuronxcc.nki's nc_matmul has no performance mode, and trn1 (NeuronCore-v2) none")
    return ops.matmul(_masked(stationary, mask), _masked(moving, mask),
                      trace.current().assigned_name())


@api("nisa.nc_transpose")
def nc_transpose(data, *, mask=None, dtype=None, engine=unknown_engine):
    return ops.transpose(_masked(data, mask), _eng(engine, "nisa.nc_transpose",
                                                   ("tensor", "vector")), dtype)


_REDUCE_CMDS = ("idle", "reset", "reduce", "reset_reduce")


def _reduce_cmd(c, call):
    if c == "load_reduce":
        refuse(call, "reduce_cmd", c, "load_reduce is a command of tensor_scalar_cumulative; "
               "this call's accumulator takes idle, reset, reduce or reset_reduce")
    if c not in _REDUCE_CMDS:
        raise errors.NkiError("%s: reduce_cmd= takes a member of nisa.reduce_cmd, not %r" %
                              (call, c))
    return c


@api("nisa.activation")
def activation(op, data, *, bias=None, scale=1.0, reduce_op=None, reduce_res=None,
               reduce_cmd=reduce_cmd.idle, mask=None, dtype=None):
    # reduce_cmd drives the Scalar engine's accumulator registers exactly as given (idle leaves
    # them, reset zeroes, reduce adds, reset_reduce zeroes then adds); reduce_res, when given,
    # reads them out after the instruction.
    cmd = _reduce_cmd(reduce_cmd, "nisa.activation")
    if reduce_op is not None and ops.alu_name(reduce_op, "reduce_op") != "add":
        refuse("nisa.activation", "reduce_op", reduce_op,
               "on NeuronCore-v2 the accumulator reduces with add only")
    return ops.activation(op, _masked(data, mask), bias=bias, scale=scale,
                          reduce_res=reduce_res, reduce_cmd=cmd, dtype=dtype)


@api("nisa.activation_reduce")
def activation_reduce(op, data, *, reduce_op, reduce_res, bias=None, scale=1.0, mask=None,
                      dtype=None):
    if ops.alu_name(reduce_op, "reduce_op") != "add":
        refuse("nisa.activation_reduce", "reduce_op", reduce_op,
               "on NeuronCore-v2 the reduction is an addition only")
    return ops.activation(op, _masked(data, mask), bias=bias, scale=scale,
                          reduce_res=reduce_res, reduce_cmd="reset_reduce", dtype=dtype)


@api("nisa.tensor_reduce")
def tensor_reduce(op, data, axis, *, mask=None, dtype=None, negate=False, keepdims=False):
    name = ops.alu_name(op)
    if negate and name.startswith(("bitwise_", "shift_", "logical_")):
        raise errors.NkiError("nisa.tensor_reduce: negate=True applies to arithmetic operators "
                              "only, not %s" % name)
    return ops.reduce(name, _masked(data, mask), axis, negate=bool(negate),
                      dtype=dtype, keepdims=bool(keepdims))


@api("nisa.tensor_scalar")
def tensor_scalar(data, op0, operand0, reverse0=False, op1=None, operand1=None, reverse1=False, *,
                  dtype=None, mask=None, engine=unknown_engine):
    return ops.tensor_scalar(_masked(data, mask), op0, operand0, reverse0, op1, operand1,
                             reverse1, dtype, _eng(engine, "nisa.tensor_scalar",
                                                   ("vector", "scalar", "gpsimd")))


@api("nisa.tensor_tensor")
def tensor_tensor(data1, data2, op, *, dtype=None, mask=None, engine=unknown_engine):
    if all(isinstance(d, Tile) and d._view.tensor.mem == "psum" for d in (data1, data2)):
        raise errors.NkiError("nisa.tensor_tensor: data1 and data2 cannot both be in PSUM (the "
                              "tensor_tensor page); copy one of them to SBUF first")
    return ops.binary(ops.alu_name(op), _masked(data1, mask), _masked(data2, mask), dtype=dtype,
                      engine=_eng(engine, "nisa.tensor_tensor", ("vector", "gpsimd")))


@api("nisa.tensor_copy")
def tensor_copy(src, *, mask=None, dtype=None, engine=unknown_engine):
    eng = _eng(engine, "nisa.tensor_copy", ("vector", "scalar", "gpsimd"))
    if eng == "gpsimd" and isinstance(src, Tile) and src._view.tensor.mem == "psum":
        raise errors.NkiError("nisa.tensor_copy: engine=nisa.gpsimd_engine cannot read PSUM "
                              "(choose the Vector or Scalar engine)")
    return ops.copy(_masked(src, mask), dtype=dtype, engine=eng)


@api("nisa.tensor_copy_predicated")
def tensor_copy_predicated(*, src, dst, predicate, reverse_pred=False, mask=None, dtype=None):
    """dst = src where predicate (a tile) is non-zero; elsewhere dst keeps its value."""
    from .expr import Predicate

    if isinstance(predicate, Predicate):
        raise errors.NkiError("nisa.tensor_copy_predicated takes its predicate as a tile; an "
                              "affine condition of index grids is what affine_select takes")
    tr = trace.current()
    pv = as_view(predicate, "predicate")
    if pv.tensor.dtype not in ("uint8", "uint16", "uint32"):
        raise errors.NkiError("nisa.tensor_copy_predicated: the predicate must be a uint8, "
                              "uint16 or uint32 tile; this one is %s" % pv.tensor.dtype)
    d = as_view(_masked(dst, mask), "dst")
    if dtype is not None and ops._dtype(dtype, d.tensor.dtype) != d.tensor.dtype:
        refuse("nisa.tensor_copy_predicated", "dtype", dtype,
               "the copy writes dst in place, so its dtype is dst's (%s)" % d.tensor.dtype)
    src_v = float(src) if ops.is_scalar(src) else ops._v(_masked(src, mask), "src")
    if not ops.is_scalar(src) and src_v.tensor.dtype != d.tensor.dtype:
        raise errors.NkiError("nisa.tensor_copy_predicated: src and dst must share a dtype "
                              "(%s and %s)" % (src_v.tensor.dtype, d.tensor.dtype))
    args = [(None, d), (None, src_v), ("predicate", ops._v(_masked(predicate, mask), "predicate"))]
    if reverse_pred:
        args.append(("reverse_predicate", True))
    tr.instr("tensor_copy_predicated", args)


@api("nisa.reciprocal")
def reciprocal(data, *, dtype=None, mask=None):
    return ops.reciprocal(_masked(data, mask), dtype=dtype)


@api("nisa.tensor_scalar_reduce")
def tensor_scalar_reduce(*, data, op0, operand0, reduce_op, reduce_res, reverse0=False,
                         dtype=None, mask=None):
    if reverse0:
        refuse("nisa.tensor_scalar_reduce", "reverse0", reverse0,
               "the page marks it \"not supported yet\"")
    tr = trace.current()
    v = as_view(_masked(data, mask), "data")
    dst, t = ops._out(tr, None, v, ops._dtype(dtype, v.tensor.dtype))
    if ops.alu_name(reduce_op, "reduce_op") not in ("add", "max", "min"):
        raise errors.NkiError("nisa.tensor_scalar_reduce reduces with add, max or min")
    args = [(None, dst), (None, v), ("op0", _enum(ops.alu_name(op0, "op0"))),
            ("operand0", float(operand0) if ops.is_scalar(operand0) else as_view(operand0)),
            ("reduce_op", _enum(ops.alu_name(reduce_op))),
            ("reduce_res", as_view(reduce_res, "reduce_res"))]
    tr.instr("tensor_scalar_reduce", args, produces=t)
    return Tile(dst)


def _enum(name):
    from .program import Enum

    return Enum(name)


@api("nisa.affine_select")
def affine_select(pred, on_true_tile, on_false_value, *, mask=None, dtype=None):
    return ops.affine_select(pred, _masked(on_true_tile, mask), on_false_value, dtype)


@api("nisa.iota")
def iota(expr, dtype, *, mask=None):
    if mask is not None:
        refuse("nisa.iota", "mask", mask, "a masked iota leaves part of its fresh tile unwritten")
    return ops.iota(expr, dtype)


@api("nisa.memset")
def memset(shape, value, dtype, *, mask=None, engine=unknown_engine):
    from .language import allocate

    eng = _eng(engine, "nisa.memset", ("vector", "gpsimd"))
    if mask is not None:
        refuse("nisa.memset", "mask", mask, "a masked memset leaves part of its fresh tile "
               "unwritten")
    t = allocate(shape, dtype, None)
    ops.memset_view(t._view, value, eng)
    return t


class oob_mode(metaclass=SealedClass):  # noqa: N801 (nisa.oob_mode.error)
    error = "error"
    skip = "skip"


class dge_mode(metaclass=SealedClass):  # noqa: N801
    unknown = "unknown"
    none = "none"
    swdge = "swdge"
    hwdge = "hwdge"


def _check_dge(call, mode):
    """dge_mode picks who generates the DMA descriptors: the bytes moved are the same. none and
    swdge exist on every NeuronCore (their cost is not told apart: the DMA cost model has one
    mode); hardware DGE needs NeuronCore-v3, so it is accepted only for a kernel whose decorator
    targets trn2 or trn3 (`platform_target=`)."""
    if mode in ("unknown", "none", "swdge"):
        return
    if mode == "hwdge" and trace.current().generation in ("trn2", "trn3"):
        return
    refuse(call, "dge_mode", mode, "hardware DGE needs NeuronCore-v3 or newer; trn1 has none "
           "(a kernel for trn2 says so with nki.jit(platform_target='trn2'))")


# The full range of an index tile's dtype: the offsets an oob_mode.skip DMA accepts (a row whose
# index leaves the tensor is skipped, not an error).
_INDEX_RANGE = {"int32": (-2**31, 2**31 - 1), "uint32": (0, 2**32 - 1)}


def _rmw_op(op):
    """dst_rmw_op: the ISA page (nki.isa.dma_copy, SDK 2.2x) documents np.add only (later pages
    nl.add); the accumulation is the DMA engines' fp32 add, cast to dst's dtype."""
    from . import language as nl

    if op is np.add or op is nl.add:
        return "add"
    refuse("nisa.dma_copy", "dst_rmw_op", op, "the documented read-modify-write operation is "
           "np.add (nl.add) only")


@api("nisa.dma_copy")
def dma_copy(*, dst, src, mask=None, dst_rmw_op=None, oob_mode=oob_mode.error,
             dge_mode=dge_mode.unknown):
    """A DMA: dst = src (cast through fp32). oob_mode.skip: a row of an indirect access whose
    index leaves its tensor is not transferred. dst_rmw_op=np.add: dst = dst + src in fp32."""
    if oob_mode not in ("error", "skip"):
        refuse("nisa.dma_copy", "oob_mode", oob_mode, "the modes are oob_mode.error and "
               "oob_mode.skip")
    rmw = None if dst_rmw_op is None else _rmw_op(dst_rmw_op)
    if rmw is not None and oob_mode == "skip":
        refuse("nisa.dma_copy", "oob_mode", oob_mode, "with dst_rmw_op only oob_mode.error is "
               "allowed (the dma_copy page)")
    _check_dge("nisa.dma_copy", dge_mode)
    tr = trace.current()
    d, s = as_view(_masked(dst, mask)), as_view(_masked(src, mask))
    extra = []
    if oob_mode == "skip":
        if d.indirect is None and s.indirect is None:
            refuse("nisa.dma_copy", "oob_mode", oob_mode, "skipping concerns the run-time "
                   "indices of an indirect access (t[idx_tile, ...]); this DMA has none")
        for v in (d, s):
            if v.indirect is not None:
                ind = v.indirect
                lo, hi = _INDEX_RANGE[ind.offsets.tensor.dtype]
                v.indirect = Indirect(ind.dim, ind.offsets, lo, hi)
        extra.append(("oob_skip", True))
    if rmw is not None:
        extra.append(("dst_rmw", Enum(rmw)))
    queue = tr.queue_for(d.tensor if d.tensor.mem == "hbm" else s.tensor)
    tr.instr("dma_copy", [(None, d), (None, s)] + ([("queue", queue)] if queue else []) + extra)


# The permutation of each supported rank (nisa.dma_transpose's page): axis i of the result is axis
# axes[i] of the source.
_DMA_TRANSPOSE_AXES = {2: (1, 0), 3: (2, 1, 0), 4: (3, 1, 2, 0)}


@api("nisa.dma_transpose")
def dma_transpose(src, *, axes=None, mask=None, dtype=None, dge_mode=dge_mode.unknown):
    """A DMA that writes a fresh SBUF tile with `src`'s axes permuted; the dtype cast, if any,
    is the DMA's (through fp32, as dma_copy's). The page allows a source in HBM or SBUF: from
    SBUF the DMA moves elements across partitions (the permuted source view)."""
    v = as_view(_masked(src, mask), "src")
    v.refuse_indirect("nisa.dma_transpose")
    rank = len(v.order)
    if rank not in _DMA_TRANSPOSE_AXES:
        refuse("nisa.dma_transpose", "src", "a rank-%d tile" % rank,
               "the documented transposes are of 2-, 3- and 4-D tiles")
    want = _DMA_TRANSPOSE_AXES[rank]
    if axes is not None and tuple(axes) != want:
        refuse("nisa.dma_transpose", "axes", tuple(axes),
               "a rank-%d source transposes with axes %s only" % (rank, want))
    _check_dge("nisa.dma_transpose", dge_mode)
    if dge_mode == "hwdge":
        _check_transpose_hwdge(v, rank)
    if v.units or v.tensor.mem not in ("hbm", "sbuf"):
        refuse("nisa.dma_transpose", "src", "a tile in %s" % v.tensor.mem,
               "the transposing DMA reads HBM or SBUF (the dma_transpose page)")
    from .language import load
    from .program import View

    permuted = View(v.tensor, v.dims, [v.order[a] for a in want])
    if v.tensor.mem == "hbm":
        return load(Tile(permuted), dtype=dtype)
    permuted.across_partitions = True  # an SBUF view whose partition dim is not first
    tr = trace.current()
    t = tr.temp("sbuf", ops._dtype(dtype, v.tensor.dtype), permuted.logical_lins())
    queue = tr.queue_for(v.tensor)
    tr.instr("dma_copy", [(None, t.full_view()), (None, permuted)] +
             ([("queue", queue)] if queue else []), produces=t)
    return Tile(t.full_view())


def _check_transpose_hwdge(v, rank):
    """The dma_transpose page's "DMA Direct Transpose Constraints" for dge_mode.hwdge."""
    shape = []
    for n in v.logical_lins():
        if not n.is_const():
            refuse("nisa.dma_transpose", "dge_mode", "hwdge", "its constraints are on the "
                   "source's sizes, which must be fixed (--shape)")
        shape.append(n.const)
    from .program import DTYPE_BYTES

    if DTYPE_BYTES[v.tensor.dtype] != 2:
        refuse("nisa.dma_transpose", "dge_mode", "hwdge", "a hardware-DGE transpose needs a "
               "2-byte dtype, not %s" % v.tensor.dtype)
    if rank == 2 and shape[0] != 16:
        refuse("nisa.dma_transpose", "dge_mode", "hwdge", "a 2-D hardware-DGE transpose needs "
               "src.shape[0] == 16, not %d" % shape[0])
    if rank > 2 and (shape[0] not in (1, 2, 4, 8, 16) or (shape[0] * shape[-2]) % 16):
        refuse("nisa.dma_transpose", "dge_mode", "hwdge", "a 3-/4-D hardware-DGE transpose "
               "needs src.shape[0] in {1, 2, 4, 8, 16} and src.shape[0] * src.shape[-2] a "
               "multiple of 16")
    if shape[-1] > 128:
        refuse("nisa.dma_transpose", "dge_mode", "hwdge", "a hardware-DGE transpose needs "
               "src.shape[-1] <= 128, not %d" % shape[-1])


def unsupported(name):
    def f(*args, **kw):
        raise errors.NkiError("nisa.%s is not modelled by ncverify's front end" % name)

    return f


for _n in ("iota_partition", "scalar_tensor_tensor",
           "nc_matmul_mx", "quantize_mx",
           "exponential", "tensor_copy_dynamic_src", "tensor_copy_dynamic_dst", "rand2",
           "rng", "core_barrier", "sendrecv", "builtin"):
    globals()[_n] = unsupported(_n)

# The top-8 family and dropout live in their own module (isa_top8.py).
from .isa_top8 import dropout, max8, nc_find_index8, nc_match_replace8  # noqa: E402,F401
# The scans and the statistics live in their own modules (isa_scan.py, isa_stats.py).
from .isa_scan import tensor_scalar_cumulative, tensor_tensor_scan  # noqa: E402,F401
from .isa_stats import bn_aggr, bn_stats  # noqa: E402,F401
# The gathers and the stream shuffle live in their own module (gathers.py).
from .gathers import local_gather, nc_stream_shuffle  # noqa: E402,F401
# tensor_partition_reduce, select_reduce, sequence_bounds, range_select (isa_select.py).
from .isa_select import (range_select, select_reduce, sequence_bounds,  # noqa: E402,F401
                         tensor_partition_reduce)

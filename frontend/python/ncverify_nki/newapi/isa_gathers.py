"""`nki.isa` 0.6 data movement by index and across partitions on the compute engines:
local_gather, nc_n_gather, nc_stream_shuffle (docstrings: aws-neuron-sdk nki/api/nki/isa/
__init__.py at 81ce03ae). The instructions are the legacy stand-ins' (gathers.py: local_gather,
gather_flattened, nc_stream_shuffle), writing `dst`. nc_stream_shuffle takes dst first (NKI
0.1.0 release notes: "src and dst order changed"); nc_n_gather is the ISA name of
nl.gather_flattened (NKI 0.1.0)."""

from .. import errors, gathers, ops, trace
from ..expr import Lin
from ..signatures import api
from . import isa as core


def _known(lin):
    v = trace.current().evaluate(lin)
    return v.const if v.is_const() else None


def _same_partitions(call, a, b, what_a, what_b):
    pa, pb = _known(a.logical_lins()[0]), _known(b.logical_lins()[0])
    if pa is not None and pb is not None and pa != pb:
        raise errors.NkiError("%s: %s has %d partitions and %s %d; they must match" %
                              (call, what_a, pa, what_b, pb))


@api("nisa.local_gather")
def local_gather(dst, src_buffer, index, num_elem_per_idx=1, num_valid_indices=None,
                 name=None):
    """Each GpSimd core (16 partitions) gathers, for each of its first num_valid_indices uint16
    indices (flattened partition first), num_elem_per_idx contiguous elements of each
    partition's own src_buffer row: dst [P, n * num_elem_per_idx], src_buffer's dtype (no
    cast). An index outside the row fails the run (the page: undefined)."""
    call = "nisa.local_gather"
    core._name_arg(call, name)
    d = core._dst(call, dst, ("sbuf",))
    src = ops._v(src_buffer, "src_buffer")
    idx = ops._v(index, "index")
    gathers._sbuf(call, src, "src_buffer")
    gathers._sbuf(call, idx, "index")
    if idx.tensor.dtype != "uint16":
        raise errors.NkiError("%s: index is %s; the indices must be uint16 (the page)" %
                              (call, idx.tensor.dtype))
    if d.tensor.dtype != src.tensor.dtype:
        raise errors.NkiError("%s: dst is %s and src_buffer %s; the gather preserves the dtype "
                              "(the page: no casting)" % (call, d.tensor.dtype,
                                                          src.tensor.dtype))
    e = gathers._int_arg(call, "num_elem_per_idx", num_elem_per_idx)
    if e not in (1, 2, 4, 8, 16, 32):
        raise errors.NkiError("%s: num_elem_per_idx=%d; it must be 1, 2, 4, 8, 16 or 32" %
                              (call, e))
    nv = 0 if num_valid_indices is None else gathers._int_arg(call, "num_valid_indices",
                                                              num_valid_indices)
    _same_partitions(call, src, idx, "src_buffer", "index")
    _same_partitions(call, src, d, "src_buffer", "dst")
    ps = _known(src.logical_lins()[0])
    if ps is not None and ps % gathers._GROUP:
        raise errors.NkiError("%s: src_buffer has %d partitions; the count must be a multiple "
                              "of 16 (16 per GpSimd core)" % (call, ps))
    per_core = ops._free_size(idx).scale(gathers._GROUP)
    known = _known(per_core)
    if nv < 0 or nv > 4096 or (known is not None and nv > known):
        raise errors.NkiError("%s: num_valid_indices=%d; it must be at most the %s indices a "
                              "core's 16 partitions of index hold, and at most 4096" %
                              (call, nv, "?" if known is None else known))
    if nv == 0 and known is not None and known > 4096:
        raise errors.NkiError("%s: %d indices per core (all of index's); a core gathers at "
                              "most 4096" % (call, known))
    n = Lin.of(nv) if nv else per_core
    want, fd = _known(n.scale(e)), _known(ops._free_size(d))
    if want is not None and fd is not None and want != fd:
        raise errors.NkiError("%s: dst holds %d elements per partition; the gather writes %d "
                              "(num_valid_indices x num_elem_per_idx)" % (call, fd, want))
    args = [(None, d), (None, src), ("index", idx), ("num_elem_per_idx", e)]
    if nv:
        args.append(("num_valid_indices", nv))
    trace.current().instr("local_gather", args)


@api("nisa.nc_n_gather")
def nc_n_gather(dst, data, indices, name=None):
    """dst[p, j] = data[p, indices[p, j]] over the flattened free elements of each partition
    (uint32 indices; an index outside the partition's elements fails the run). GpSimd engine,
    SBUF only; dst has data's dtype and indices' elements per partition."""
    call = "nisa.nc_n_gather"
    core._name_arg(call, name)
    d = core._dst(call, dst, ("sbuf",))
    v = ops._v(data, "data")
    i = ops._v(indices, "indices")
    gathers._sbuf(call, v, "data")
    gathers._sbuf(call, i, "indices")
    if i.tensor.dtype != "uint32":
        raise errors.NkiError("%s: indices is %s; the indices must be uint32 (the page)" %
                              (call, i.tensor.dtype))
    if d.tensor.dtype != v.tensor.dtype:
        raise errors.NkiError("%s: dst is %s and data %s; dst must have data's dtype (the page)"
                              % (call, d.tensor.dtype, v.tensor.dtype))
    _same_partitions(call, v, i, "data", "indices")
    core._same_elements(call, d, i, "indices")
    trace.current().instr("gather_flattened", [(None, d), (None, v), ("indices", i)])


@api("nisa.nc_stream_shuffle")
def nc_stream_shuffle(dst, src, shuffle_mask, name=None):
    """Within each quadrant of 32 partitions, dst partition i takes src partition
    shuffle_mask[i]; 255 leaves dst's partition unchanged (NKI 0.4.0). Same dtype, same
    elements per partition."""
    call = "nisa.nc_stream_shuffle"
    core._name_arg(call, name)
    d = core._dst(call, dst)
    s = ops._v(src, "src")
    if s.tensor.mem == "hbm":
        raise errors.NkiError("%s: src is in HBM; the Vector engine reads SBUF or PSUM" % call)
    if d.tensor.dtype != s.tensor.dtype:
        raise errors.NkiError("%s: dst is %s and src %s; dst must have src's dtype (the page)" %
                              (call, d.tensor.dtype, s.tensor.dtype))
    fs, fd = _known(ops._free_size(s)), _known(ops._free_size(d))
    if fs is not None and fd is not None and fs != fd:
        raise errors.NkiError("%s: src has %d elements per partition and dst %d; they must "
                              "match" % (call, fs, fd))
    trace.current().instr("nc_stream_shuffle", [(None, d), (None, s),
                                                ("shuffle_mask",
                                                 gathers._mask_entries(call, shuffle_mask))])

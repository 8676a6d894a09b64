"""`nisa.dma_transpose` of an indirect source (`src.ap(..., vector_offset=idx, indirect_dim=0)`),
the software-DGE gather-transpose (`dma_gather_transpose`). The 0.6 docstring (aws-neuron-sdk
nki/api/nki/isa/__init__.py at 81ce03ae, "DMA Indirect Transpose Constraints";
https://awsdocs-neuron.readthedocs-hosted.com/en/latest/nki/api/generated/nki.isa.dma_transpose.html):
`flat_indices = indices.T.flatten()[:src.shape[0]]; gathered = src[flat_indices, :];
dst = gathered.T`, with dge_mode unknown or swdge, a 4-D src with len(src[1]) or len(src[2]) 1,
src.shape[-1] <= 128, a 2-byte dtype, src in HBM, indices a uint32 SBUF tile of [16..128 (a
multiple of 16), N] with N * rows >= src.shape[0], src.shape[0] a multiple of 16, NeuronCore-v3+.

The model's instruction is one DMA: the gather reads row r of src at the offset indices[r] (the IR's
indirect access, as an indirect dma_copy), and the transpose is the destination's view taken in
the source's axis order (the supported permutations are their own inverses), so row r of the
gather lands in dst[..., r] and the DMA moves each element once, as the hardware's does. Only a
single column of indices is modelled (N = 1: indices.shape[0] == src.shape[0]); N > 1, whose
flattening is column-major, is refused, as is oob_mode.skip (the rows it skips pair with rows of
the transposed destination, which the model's skipping DMA does not pair)."""

from .. import errors, trace
from ..expr import Lin
from ..program import DTYPE_BYTES
from ..signatures import refuse
from .constants import current_version, nc_version

_TP = "nisa.dma_transpose"
# Axis i of the result is axis _AXES[rank][i] of the source (the page's permutations).
_AXES = {2: (1, 0), 3: (2, 1, 0), 4: (3, 1, 2, 0)}


def _one(r, x):
    x = r(Lin.of(x))
    return x.is_const() and x.const == 1


def gather_transpose(d, v, dge, oob, dst_shape, src_shape):
    """dst view d (SBUF) = the indirect src view v (HBM) transposed with the permutation `want`
    with the page's permutation of its rank (axis i of dst is axis want[i] of src); `dst_shape`
    and `src_shape` the kernel's shapes (their size-1 axes included)."""
    if dge not in ("unknown", "swdge"):
        raise errors.NkiError("%s: dge_mode=%s: an indirect transpose takes dge_mode unknown or "
                              "swdge (the page: it is lowered to a software-DGE transpose)" %
                              (_TP, dge))
    if current_version() < nc_version.gen3:
        raise errors.NkiError("%s: an indirect transpose needs NeuronCore-v3 or newer (--gen trn2 "
                              "or trn3)" % _TP)
    if oob == "skip":
        refuse(_TP, "oob_mode", "skip", "the gather-transpose's skipped rows would pair with "
               "rows of the transposed destination, which the model's skipping DMA does not do")
    if v.tensor.mem != "hbm":
        raise errors.NkiError("%s: an indirect transpose reads its src from HBM, not %s" %
                              (_TP, v.tensor.mem.upper()))
    if d.tensor.mem != "sbuf":
        raise errors.NkiError("%s: dst is in %s; the transpose writes SBUF" %
                              (_TP, d.tensor.mem.upper()))
    if DTYPE_BYTES[v.tensor.dtype] != 2:
        raise errors.NkiError("%s: an indirect transpose moves a 2-byte dtype, not %s" %
                              (_TP, v.tensor.dtype))
    if v.tensor.dtype != d.tensor.dtype:
        raise errors.NkiError("%s: src.dtype (%s) must equal dst.dtype (%s)" %
                              (_TP, v.tensor.dtype, d.tensor.dtype))
    r = trace.current().evaluate
    shape = []
    for n in src_shape:
        n = Lin.of(n)
        n = r(n)
        if not n.is_const():
            raise errors.NkiError("%s: an indirect transpose's constraints are on the source's "
                                  "sizes, which must be fixed (--shape)" % _TP)
        shape.append(n.const)
    if len(shape) == 4 and shape[1] != 1 and shape[2] != 1:
        raise errors.NkiError("%s: a 4-D indirect transpose needs src.shape[1] or src.shape[2] "
                              "to be 1, not %s" % (_TP, tuple(shape)))
    if shape[-1] > 128:
        raise errors.NkiError("%s: an indirect transpose needs src.shape[-1] <= 128, not %d" %
                              (_TP, shape[-1]))
    if shape[0] % 16:
        raise errors.NkiError("%s: an indirect transpose needs src.shape[0] a multiple of 16, "
                              "not %d" % (_TP, shape[0]))
    ind = v.indirect
    o = ind.offsets
    rows = r(o.logical_lins()[0])
    if o.tensor.mem != "sbuf" or o.tensor.dtype != "uint32":
        raise errors.NkiError("%s: an indirect transpose's indices are a uint32 SBUF tile, not "
                              "%s %s" % (_TP, o.tensor.mem.upper(), o.tensor.dtype))
    if not rows.is_const() or rows.const % 16 or not 16 <= rows.const <= 128:
        raise errors.NkiError("%s: an indirect transpose's indices have 16 to 128 rows, a "
                              "multiple of 16, not %s" % (_TP, rows.text()))
    if rows.const != shape[0]:
        raise errors.NkiError("%s: %s rows of indices for a source of %d rows: only one column "
                              "of indices, one per source row, is modelled (several columns "
                              "flatten column-major)" % (_TP, rows.text(), shape[0]))
    want = _AXES.get(len(shape))
    if want is None:
        raise errors.NkiError("%s: src has rank %d; the transposes are of 2-, 3- and 4-D tiles" %
                              (_TP, len(shape)))
    # dst in the source's axis order (want is its own inverse: dst axis want[i] is src axis i),
    # an SBUF view whose partition dim is not first, which only a DMA writes. Size-1 axes are
    # left out: they change no element's place (the kernel's view may carry axes no storage dim
    # backs, newapi/views.py).
    want_dst = tuple(shape[a] for a in want)
    nki_dst = [r(Lin.of(x)) for x in dst_shape]
    if len(nki_dst) != len(shape) or any(not x.is_const() or x.const != n
                                         for x, n in zip(nki_dst, want_dst)):
        raise errors.NkiError("%s: dst %s is not src %s transposed with axes %s (%s)" %
                              (_TP, tuple(x.text() for x in nki_dst), tuple(shape), tuple(want),
                               want_dst))
    kept = [sd for sd in d.order if not _one(r, d.dims[sd][1])]
    axes = [j for j in range(len(want)) if want_dst[j] != 1]
    if len(kept) != len(axes):
        raise errors.NkiError("%s: dst's view of '%s' does not keep one storage dim per axis of "
                              "more than one element" % (_TP, d.tensor.name))
    storage_of = dict(zip(axes, kept))
    dst = d.with_dims(d.dims, [storage_of[want[i]] for i in range(len(shape)) if shape[i] != 1])
    dst.across_partitions = True
    tr = trace.current()
    queue = tr.queue_for(v.tensor)
    tr.instr("dma_copy", [(None, dst), (None, v)] + ([("queue", queue)] if queue else []))

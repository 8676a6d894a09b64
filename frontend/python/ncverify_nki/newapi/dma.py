"""The DMA calls of `nki.isa` (NKI 0.2-0.6): dma_copy, dma_transpose and dma_compute. A DMA moves
HBM and SBUF, never PSUM (since NKI 0.3.0, release notes "Breaking changes"); the dtype changes
through fp32. Sources: the 0.6 reference's docstrings (aws-neuron-sdk nki/api/nki/isa/
__init__.py at 81ce03ae; https://awsdocs-neuron.readthedocs-hosted.com/en/latest/nki/api/
generated/nki.isa.dma_copy.html, .../nki.isa.dma_transpose.html, .../nki.isa.dma_compute.html)
and the release notes of NKI 0.3.0-0.6.0."""

from .. import errors, ops, rules, trace
from .. import isa as legacy
from ..expr import Lin
from ..program import Enum, View
from ..signatures import api, refuse
from ..tiles import as_view
from .constants import (current_version, dge_mode, engine, nc_version, oob_mode,
                        unknown_engine)
from .dma_gather_transpose import gather_transpose
from .isa import _name_arg

_DGE_MODES = ("unknown", "none", "swdge", "hwdge")
_OOB_MODES = ("error", "skip")


# The enums' integer values in the reference (aws-neuron-sdk nki/api/nki/isa/__init__.py at
# 81ce03ae: `class dge_mode(Enum): unknown = 0, swdge = 1, hwdge = 2, none = 3`; `class
# oob_mode(Enum): error = 0, skip = 1`). NKI 0.2 took a raw integer for the member of that value;
# 0.3.0 stopped ("Raw integer enum constants no longer accepted", release notes, Breaking
# changes). The front end covers 0.2-0.6 and reads such a number as 0.2 did (as it reads 0.2's
# `platform_target=`): nki-library d2ad3a5 passes `dge_mode=3` (`_DGE_MODE_NONE = 3`).
_RAW_VALUES = {"dge_mode": ("unknown", "swdge", "hwdge", "none"), "oob_mode": ("error", "skip")}


def _enum_member(call, arg, value, members, cls):
    if isinstance(value, int) and not isinstance(value, bool):
        raw = _RAW_VALUES[cls]
        if not 0 <= value < len(raw):
            raise errors.NkiError("%s: %s=%d: no member of nisa.%s has that value (%s), and "
                                  "raw integers are not modes since NKI 0.3.0; use nisa.%s."
                                  "<name>" % (call, arg, value, cls, ", ".join(
                                      "%s = %d" % (m, i) for i, m in enumerate(raw)), cls))
        value = raw[value]
    if not isinstance(value, str) or value not in members:
        raise errors.NkiError("%s: %s= takes a member of nisa.%s (%s), not %r" %
                              (call, arg, cls, ", ".join(members), value))
    return value


def _no_psum(call, views):
    for what, v in views:
        if v.tensor.mem == "psum":
            raise errors.NkiError("%s: %s is in PSUM; a DMA reads and writes HBM or SBUF only "
                                  "(NKI 0.3.0; copy PSUM to SBUF with nisa.tensor_copy first)" %
                                  (call, what))


def _priority(call, priority):
    """priority= (0-3, lower first) orders DMA queues on NeuronCore-v4; values are unchanged by
    it, but the model's DMA queues have no priorities, so its timing would ignore it."""
    if priority is None:
        return
    if isinstance(priority, bool) or not isinstance(priority, int) or not 0 <= priority <= 3:
        raise errors.NkiError("%s: priority= takes 0, 1, 2 or 3, not %r" % (call, priority))
    if current_version() < nc_version.gen4:
        raise errors.NkiError("%s: priority= needs NeuronCore-v4 (--gen trn3); this kernel is "
                              "traced for NeuronCore-v%d" % (call, int(current_version())))
    refuse(call, "priority", priority, "DMA quality-of-service priorities order the queues; the "
           "model's DMA queues have none, so its timing would not follow them")


def _elements(v):
    n = Lin.of(1)
    for size in v.logical_lins():
        n = n.mul(size)
    return trace.current().evaluate(n)


def _same_count(call, a, b, what_a, what_b):
    na, nb = _elements(a), _elements(b)
    if na.is_const() and nb.is_const() and na.const != nb.const:
        raise errors.NkiError("%s: %s has %d elements, %s %d; they must match" %
                              (call, what_a, na.const, what_b, nb.const))


def _pieces(dst, src, dst_axis_of):
    """A DMA whose on-chip operand is a view kept as its pattern (`.ap` or a reshape stepping
    twice through one storage dim) that is one IR access only with a dim of its tile split: the
    same DMA as one DMA per index of one axis (the one of fewest elements that works), each
    piece one access as the tensors are declared, [(dst piece, src piece)]; None when no
    on-chip operand needs a split or no single axis avoids it (the tensor is split then,
    views.py). A split is for the rest of the kernel, and the compute engines' instructions
    that read the tile later cannot be cut in pieces (a reduction, a matmul): nki-library's
    attention_cte reads 209 elements of a free dim a dma_transpose source would split into rows
    of 128. An HBM tensor is only ever read by DMAs, and is split (one DMA, as the hardware
    moves it).
    A DMA moves each element independently, so the pieces move the same elements to the same
    places; the model prices them as that many DMAs. Axis j of src is axis dst_axis_of(j) of
    dst."""
    from .views import NkiTensor, maps_as_is

    ops = [x for x in (dst, src) if isinstance(x, NkiTensor)]
    if len(ops) < 2 or any(x._indirect is not None for x in ops):
        return None
    if all(maps_as_is(x) or x._base.mem == "hbm" for x in ops):
        return None  # an HBM tensor, which only DMAs read, is split instead (one DMA)
    sizes = [trace.current().evaluate(Lin.of(n)) for n in src.shape]
    if not all(n.is_const() for n in sizes):
        return None
    for j in sorted(range(len(sizes)), key=lambda a: sizes[a].const):
        n, k = sizes[j].const, dst_axis_of(j)
        if n < 2:
            continue
        pieces = []
        for i in range(n):
            try:
                s_i = src[tuple([slice(None)] * j + [slice(i, i + 1)])]
                d_i = dst[tuple([slice(None)] * k + [slice(i, i + 1)])]
            except errors.NkiError:  # an axis a view cannot slice (a partition dim kept)
                break
            if not (maps_as_is(s_i) and maps_as_is(d_i)):
                break
            pieces.append((d_i, s_i))
        else:
            return pieces
    return None


# ------------------------------------------------------------------ dma_copy

_CP = "nisa.dma_copy"


@api("nisa.dma_copy")
def dma_copy(dst, src, priority=None, oob_mode=oob_mode.error, dge_mode=dge_mode.unknown,
             engine=unknown_engine, name=None):
    """dst = src through the DMA engines (the dtype cast through fp32); element counts match.
    dge_mode picks who generates descriptors (the bytes moved are the same): hwdge needs
    NeuronCore-v3 and src and dst of one dtype (NKI 0.3.0), and only it takes engine= (sync or
    scalar). oob_mode.skip skips the rows of an indirect access whose index is outside."""
    _name_arg(_CP, name)
    if tuple(dst.shape) == tuple(src.shape):
        pieces = _pieces(dst, src, lambda j: j)
        if pieces:
            for d_i, s_i in pieces:
                dma_copy(d_i, s_i, priority, oob_mode, dge_mode, engine, name)
            return
    s, d = as_view(src, "src"), as_view(dst, "dst")
    _no_psum(_CP, (("src", s), ("dst", d)))
    oob = _enum_member(_CP, "oob_mode", oob_mode, _OOB_MODES, "oob_mode")
    dge = _enum_member(_CP, "dge_mode", dge_mode, _DGE_MODES, "dge_mode")
    _check_engine(engine, dge)
    _priority(_CP, priority)
    if dge == "hwdge" and current_version() < nc_version.gen3:
        raise errors.NkiError("%s: dge_mode=hwdge: hardware DGE needs NeuronCore-v3 or newer "
                              "(--gen trn2 or trn3); this kernel is traced for NeuronCore-v%d" %
                              (_CP, int(current_version())))
    if dge == "hwdge" and s.tensor.dtype != d.tensor.dtype:
        raise errors.NkiError("%s: a hardware-DGE DMA needs src and dst of one dtype (%s and %s; "
                              "NKI 0.3.0)" % (_CP, s.tensor.dtype, d.tensor.dtype))
    _same_count(_CP, d, s, "dst", "src")
    legacy.dma_copy(dst=dst, src=src, oob_mode=oob, dge_mode=dge)


def _check_engine(e, dge):
    """engine=: the sequencer that runs the hardware DGE, nisa.engine.sync or .scalar; valid only
    with dge_mode.hwdge (the dma_copy page). It changes no value."""
    if e is unknown_engine:
        return
    if isinstance(e, int) and not isinstance(e, bool):
        raise errors.NkiError("%s: engine=%d: a raw integer is not an engine since NKI 0.3.0; "
                              "use nisa.engine.<name>" % (_CP, e))
    if e not in (engine.sync, engine.scalar):
        raise errors.NkiError("%s: engine= takes nisa.engine.sync or nisa.engine.scalar (the "
                              "hardware DGE's sequencer), not %r" % (_CP, e))
    if dge != "hwdge":
        raise errors.NkiError("%s: engine=nisa.engine.%s is valid only with "
                              "dge_mode=nisa.dge_mode.hwdge" % (_CP, e.name))


# ------------------------------------------------------------------ dma_transpose

_TP = "nisa.dma_transpose"
# Axis i of the result is axis AXES[i] of the source (the page's permutations).
_AXES = {2: (1, 0), 3: (2, 1, 0), 4: (3, 1, 2, 0)}


@api("nisa.dma_transpose")
def dma_transpose(dst, src, axes=None, priority=None, dge_mode=dge_mode.unknown,
                  oob_mode=oob_mode.error, name=None):
    """dst (SBUF) = src (HBM or SBUF) with its axes permuted as the page lists them per rank;
    src.dtype == dst.dtype, and since NKI 0.4.0 dst's shape is exactly the permuted one (rank
    included). A direct transpose takes dge_mode unknown or hwdge (hwdge: NeuronCore-v3 and the
    page's shape constraints); an SBUF source moves elements across partitions."""
    _name_arg(_TP, name)
    want = _AXES.get(len(src.shape))
    if want is not None and len(dst.shape) == len(want):
        pieces = _pieces(dst, src, lambda j: want.index(j))
        if pieces:
            for d_i, s_i in pieces:
                dma_transpose(d_i, s_i, axes, priority, dge_mode, oob_mode, name)
            return
    v, d = as_view(src, "src"), as_view(dst, "dst")
    if v.indirect is not None:  # the software-DGE gather-transpose
        nki_src = tuple(src.shape) if hasattr(src, "_starts") else tuple(v.shape)
        nki_want = _AXES.get(len(nki_src))
        if axes is not None and nki_want is not None and tuple(axes) != nki_want:
            raise errors.NkiError("%s: axes=%s: a rank-%d source transposes with axes %s only" %
                                  (_TP, tuple(axes), len(nki_want), nki_want))
        _priority(_TP, priority)
        dge = _enum_member(_TP, "dge_mode", dge_mode, _DGE_MODES, "dge_mode")
        oob = _enum_member(_TP, "oob_mode", oob_mode, _OOB_MODES, "oob_mode")
        nki_dst = tuple(dst.shape) if hasattr(dst, "_starts") else tuple(d.shape)
        gather_transpose(d, v, dge, oob, nki_dst, nki_src)
        return
    if d.tensor.mem != "sbuf":
        raise errors.NkiError("%s: dst is in %s; the transpose writes SBUF" %
                              (_TP, d.tensor.mem.upper()))
    if v.tensor.mem not in ("hbm", "sbuf") or v.units:
        raise errors.NkiError("%s: src is in %s; the transposing DMA reads HBM or SBUF" %
                              (_TP, v.tensor.mem.upper()))
    if v.tensor.dtype != d.tensor.dtype:
        raise errors.NkiError("%s: src.dtype (%s) must equal dst.dtype (%s)" %
                              (_TP, v.tensor.dtype, d.tensor.dtype))
    rank = len(v.order)
    # the kernel's view of src (its size-1 axes that no storage dim carries included)
    nki_src = tuple(src.shape) if hasattr(src, "_starts") else tuple(v.shape)
    if rank < 2 and len(nki_src) in _AXES:
        # At most one axis of the kernel's tile has more than one element (a [P, 1] column, an
        # .ap with unit pairs): every transpose keeps the elements' order, so the storage view
        # is its own transpose (the checks below still compare the kernel's shapes).
        want = tuple(range(rank))
    elif rank not in _AXES:
        raise errors.NkiError("%s: src has rank %d; the transposes are of 2-, 3- and 4-D tiles" %
                              (_TP, rank))
    else:
        want = _AXES[rank]
    nki_want = _AXES.get(len(nki_src), want)
    if axes is not None and tuple(axes) != nki_want:
        raise errors.NkiError("%s: axes=%s: a rank-%d source transposes with axes %s only" %
                              (_TP, tuple(axes), len(nki_want), nki_want))
    _priority(_TP, priority)
    dge = _enum_member(_TP, "dge_mode", dge_mode, _DGE_MODES, "dge_mode")
    if dge in ("none", "swdge"):
        raise errors.NkiError("%s: dge_mode=%s: a direct transpose takes dge_mode unknown or "
                              "hwdge (swdge is the indirect transpose's)" % (_TP, dge))
    if dge == "hwdge":
        if current_version() < nc_version.gen3:
            raise errors.NkiError("%s: dge_mode=hwdge needs NeuronCore-v3 (--gen trn2 or trn3)" %
                                  _TP)
        if rank < 2:
            refuse(_TP, "dge_mode", "hwdge", "its constraints are stated on a 2-, 3- or 4-D "
                   "source; this one has one axis of more than one element")
        legacy._check_transpose_hwdge(v, rank)
    if _enum_member(_TP, "oob_mode", oob_mode, _OOB_MODES, "oob_mode") == "skip":
        raise errors.NkiError("%s: oob_mode=skip is valid only for an indirect source" % _TP)
    permuted = View(v.tensor, v.dims, [v.order[a] for a in want])
    r = trace.current().evaluate
    # The shapes the kernel sees (an NkiTensor's size-1 axes that no storage dim carries, such
    # as an .ap pair [1, 1], are not dims of its access): those must match exactly, rank
    # included; the accesses must then agree but for size-1 dims.
    nki_dst = tuple(dst.shape) if hasattr(dst, "_starts") else tuple(d.shape)
    if len(nki_src) in _AXES and (len(nki_dst) != len(nki_src) or any(
            _differ(r, dst_n, nki_src[a]) for dst_n, a in zip(nki_dst, nki_want))):
        raise errors.NkiError("%s: dst %s is not src %s transposed with axes %s (%s); since NKI "
                              "0.4.0 the shapes, rank included, must match exactly" %
                              (_TP, nki_dst, nki_src, nki_want,
                               tuple(nki_src[a] for a in nki_want)))
    have = [x for x in d.logical_lins() if not _one(r, x)]
    need = [x for x in permuted.logical_lins() if not _one(r, x)]
    if len(have) != len(need) or any(_differ(r, a, b) for a, b in zip(have, need)):
        raise errors.NkiError("%s: dst %s is not src %s transposed with axes %s (%s); since NKI "
                              "0.4.0 the shapes, rank included, must match exactly" %
                              (_TP, tuple(d.shape), tuple(v.shape), want,
                               tuple(permuted.shape)))
    if v.tensor.mem == "sbuf":
        permuted.across_partitions = True  # an SBUF view whose partition dim is not first
    tr = trace.current()
    queue = tr.queue_for(v.tensor if v.tensor.mem == "hbm" else d.tensor)
    tr.instr("dma_copy", [(None, d), (None, permuted)] + ([("queue", queue)] if queue else []))


def _differ(r, a, b):
    x = r(Lin.of(a).sub(Lin.of(b)))
    return x.is_const() and x.const != 0


def _one(r, a):
    x = r(Lin.of(a))
    return x.is_const() and x.const == 1


# ------------------------------------------------------------------ dma_compute

_CO = "nisa.dma_compute"


@api("nisa.dma_compute")
def dma_compute(dst, srcs, reduce_op, scales=None, unique_indices=True, oob_mode=oob_mode.error,
                name=None):
    """dst = srcs[0] + srcs[1] + ... in fp32 on the DMA engines, cast to dst.dtype (only nl.add
    and scales of 1.0 are supported, the page says). Recorded as DMAs: the first source copied
    into dst (none when a source is dst itself, the read-modify-write form), each other one
    added with the DMA's read-modify-write add, in order. Where that would round to dst.dtype
    between steps (a non-fp32 dst, more than two sources or the first not of dst's dtype) the
    sum goes through an fp32 SBUF staging tile and one final DMA (an SBUF dst), else it is
    refused."""
    _name_arg(_CO, name)
    if ops.alu_name(reduce_op, "reduce_op") != "add":
        raise errors.NkiError("%s: reduce_op must be nl.add (the only one the page supports)" %
                              _CO)
    if not isinstance(srcs, (list, tuple)) or not 1 <= len(srcs) <= 16:
        raise errors.NkiError("%s: srcs= takes a list of 1 to 16 tensors, not %r" % (_CO, srcs))
    views = [as_view(s, "srcs[%d]" % k) for k, s in enumerate(srcs)]
    d = as_view(dst, "dst")
    _no_psum(_CO, [("dst", d)] + [("srcs[%d]" % k, v) for k, v in enumerate(views)])
    if scales is not None:
        if not isinstance(scales, (list, tuple)) or len(scales) != len(views):
            raise errors.NkiError("%s: scales= takes one number per source (%d), not %r" %
                                  (_CO, len(views), scales))
        if any(not ops.is_scalar(x) or float(x) != 1.0 for x in scales):
            raise errors.NkiError("%s: every scale must be 1.0 (the page: other scales are not "
                                  "supported), not %r" % (_CO, scales))
    if unique_indices is not True:
        refuse(_CO, "unique_indices", unique_indices, "non-unique scatter indices are not "
               "supported (the page)")
    if _enum_member(_CO, "oob_mode", oob_mode, _OOB_MODES, "oob_mode") == "skip":
        refuse(_CO, "oob_mode", "skip", "the model's read-modify-write DMA checks every index "
               "(oob_mode.error)")
    for k, v in enumerate(views):
        _same_count(_CO, d, v, "dst", "srcs[%d]" % k)
    own = [k for k, v in enumerate(views) if _same_view(v, d)]
    for k, v in enumerate(views):
        if k not in own and v.tensor is d.tensor and not _disjoint(v, d):
            refuse(_CO, "srcs[%d]" % k, "a view overlapping dst", "a source that overlaps dst "
                   "but is not dst itself is read while dst is written")
    if len(own) > 1:
        refuse(_CO, "srcs", "dst twice", "the read-modify-write form has dst once")
    order = own + [k for k in range(len(views)) if k not in own]
    tr = trace.current()
    exact = d.tensor.dtype == "fp32" or len(views) == 1 or \
        (len(views) == 2 and (own or views[order[0]].tensor.dtype == d.tensor.dtype))
    if exact:
        _sum_into(tr, d, [views[k] for k in order], bool(own))
        return
    if d.tensor.mem != "sbuf":
        refuse(_CO, "dst", "a %s tensor in %s" % (d.tensor.dtype, d.tensor.mem.upper()),
               "the DMA engines round the fp32 sum once; summed step by step in dst each step "
               "would round to dst.dtype, and the fp32 staging tile that avoids it is an SBUF "
               "tile, for an SBUF dst")
    # The fp32 sum in an SBUF staging tile, then one DMA that rounds it to dst.dtype: the
    # values are the engines'; the time is one DMA more than theirs.
    stage = rules.result_tile(tr, "sbuf", "fp32", d.logical_lins(), d.tensor.name + "_sum")
    _sum_into(tr, stage.full_view(), [views[k] for k in order], False)
    _dma(tr, d, stage.full_view())


def _dma(tr, d, v, rmw=False):
    hbm = d.tensor if d.tensor.mem == "hbm" else v.tensor
    queue = tr.queue_for(hbm)
    tr.instr("dma_copy", [(None, d), (None, v)] + ([("queue", queue)] if queue else []) +
             ([("dst_rmw", Enum("add"))] if rmw else []))


def _sum_into(tr, d, views, first_is_dst):
    """d = views[0] + views[1] + ... as DMAs: a copy of the first (none when it is d itself),
    then a read-modify-write add of each other, in order."""
    for n, v in enumerate(views):
        if n == 0 and first_is_dst:
            continue
        _dma(tr, d, v, rmw=n > 0)


def _disjoint(a, b):
    """Whether two views of one tensor are known to share no element."""
    from .tensor_engine import _box

    ba, bb = _box(a), _box(b)
    return ba is not None and bb is not None and any(
        hi1 <= lo2 or hi2 <= lo1 for (lo1, hi1), (lo2, hi2) in zip(ba, bb))


def _same_view(a, b):
    if a is b:
        return True
    return a.tensor is b.tensor and a.order == b.order and a.indirect is None and \
        b.indirect is None and all(
            trace.current().evaluate(x.sub(y)) == Lin.of(0)
            for da, db in zip(a.dims, b.dims) for x, y in zip(da[:2], db[:2])) and \
        all(da[2] == db[2] for da, db in zip(a.dims, b.dims))

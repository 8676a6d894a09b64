"""Splitting a storage dim of a tensor, so that a view stepping twice through one dim
(`t.reshape((128, 4, 16))` of a (128, 64) buffer, `reshape_dim`, an `.ap` pattern with two pairs
in one row, a run-time offset scaled by a multiple of a dim's stride) is one IR access.

The IR's access has one start, size and step per storage dim (program.View), so such a view
needs the dim declared as two: (128, 64) becomes (128, 4, 16), the same bytes in the same order.
Every access of the tensor recorded so far, and every live view the kernel holds, is rewritten
in the split shape; if one of them cannot be (an earlier `t[:, 8:40]` straddles the 16-element
rows), the split is refused with the access named. The on-chip tensors of nl.ndarray and all
HBM tensors whose sizes are known are split; not those of a legacy allocation. A PSUM tensor's
accumulation bookkeeping (the blocks its accumulation groups started, keyed by the accesses'
text in tiles.py, and the regions earlier matmuls wrote) is carried into the split shape. An
HBM tensor is flat bytes, row-major: a kernel argument or output declared with a finer
factorisation of its dims holds the same bytes in the same order, so the kernel's interface is
unchanged. Its shape as the kernel declared it is kept (`interface_shape`): the program declares
it (`interface [...]` after the tensor's shape, trace.py), `ncverify run` takes `.npy` inputs in
either shape and writes outputs in it, and the simulator hands arrays in and out in it. A size-1 dim appended to a
tensor (add_unit_dim) carries a broadcast when every other dim is used."""

import weakref

from .. import errors, trace
from ..expr import Lin
from ..program import Instr, Loop
from .sizes import const as _const


class Unmapped(errors.NkiError):
    """A pattern pair that no storage dim (or run of them) of the tensor steps through."""


def register(view):
    """Remember a live NkiTensor of its tensor (rewritten in place when the tensor is split)."""
    t = view._base
    refs = t.__dict__.setdefault("nki_views", [])
    if len(refs) > 256:
        refs[:] = [r for r in refs if r() is not None]
    refs.append(weakref.ref(view))


def register_tile(tile):
    """Remember a Tile the kernel was handed for an HBM argument (its view is rewritten when the
    tensor is split)."""
    tile._view.tensor.__dict__.setdefault("nki_tiles", []).append(weakref.ref(tile))


def refusal(t):
    """Why t's dims cannot be split (None: they can)."""
    if t.mem != "hbm" and (not t.__dict__.get("nki_owned") or t.role != "buffer"):
        return "'%s' is not an on-chip tensor of nl.ndarray; only those and HBM tensors are " \
            "redeclared with a dim split" % t.name
    if t.mem == "psum" and (t.copy_back is not None or t.copied is not None):
        return "'%s' holds a Tensor-engine transpose whose SBUF copy keeps its shape" % t.name
    if t.fold or t.logical or any(m is not None for m in t.mods):
        return "'%s' has a legacy allocation" % t.name
    if any(_const(s) is None for s in t.shape):
        return "the sizes of '%s' are not known (give them with --param)" % t.name
    if len(t.shape) >= 5:
        return "'%s' already has 5 dims (an access has at most a partition and 4 free dims)" % \
            t.name
    return None


def cut_for(t, c):
    """(d, b): the free storage dim d that an element stride c falls inside, to be split into
    (size_d / b, b) so that a dim has stride c; None when c is a dim's stride already or splits
    none evenly."""
    sizes = [_const(s) for s in t.shape]
    stride = 1
    for d in range(len(sizes) - 1, 0 if t.mem != "hbm" else -1, -1):
        if sizes[d] is None:
            return None
        extent = stride * sizes[d]
        if stride < c < extent and c % stride == 0 and extent % c == 0:
            return d, c // stride
        stride = extent
    return None


def _split(start, size, step, b):
    """One access dim (start, size, step) of a dim split into (outer, inner of size b): the two
    dims and which of them the access keeps; None when the access is not one in the split
    shape."""
    start = Lin.of(start)
    n = _const(size)
    q, r = start.floordiv(b), start.mod(b)
    one, size = Lin.of(1), Lin.of(size)
    if n == 1:
        return [q, one, 1], [r, one, 1], ["inner"]
    rc = r.const if r.is_const() else None
    if n is None or rc is None:
        return None
    if step == 0:
        return [q, one, 1], [r, size, 0], ["inner"]
    if step == 1 and rc == 0 and n % b == 0:
        return [q, Lin.of(n // b), 1], [Lin.of(0), Lin.of(b), 1], ["outer", "inner"]
    if rc + step * (n - 1) < b:
        return [q, one, 1], [r, size, step], ["inner"]
    if step % b == 0:
        return [q, size, step // b], [r, one, 1], ["outer"]
    return None


def _renumber(x, d):
    return x + 1 if x > d else x


def _views_of(t, stmts, out):
    for s in stmts:
        if isinstance(s, Instr):
            for v in s.views():
                if v.tensor is t and all(v is not w for w in out):
                    out.append(v)
        elif isinstance(s, Loop):
            _views_of(t, s.body, out)
    return out


def _new_view(v, d, b):
    """View v in the shape with dim d split; None when it is not one access there."""
    if v.indirect is not None and v.indirect.dim == d:
        return None
    parts = _split(v.dims[d][0], v.dims[d][1], v.dims[d][2], b)
    if parts is None:
        return None
    outer, inner, kept = parts
    dims = [list(x) for x in v.dims[:d]] + [outer, inner] + [list(x) for x in v.dims[d + 1:]]
    order = []
    for x in v.order:
        if x == d:
            order += [d + (k == "inner") for k in kept]
        else:
            order.append(_renumber(x, d))
    return dims, order


def split(t, d, b, why):
    """Redeclare t with storage dim d split into (size / b, b), rewriting every recorded access
    and live view of t; an NkiError naming the access that cannot be rewritten otherwise."""
    no = refusal(t)
    if no is not None:
        raise errors.NkiError("%s; splitting its dim %d into rows of %d would do, but %s" %
                              (why, d, b, no))
    tr = trace.current()
    views = _views_of(t, tr.root, [])
    # The argument handles the kernel holds (plain Tiles): each becomes the NkiTensor of its
    # whole view, whose axis over the split dim steps through both parts, so the kernel still
    # sees the shape it declared.
    from .views import NkiTensor

    handles = [r() for r in t.__dict__.get("nki_tiles", [])]
    handles = [(x, NkiTensor.of(x)) for x in handles
               if x is not None and not isinstance(x, NkiTensor) and x._view.tensor is t]
    printer = None
    new_views = []
    for v in views:
        nv = _new_view(v, d, b)
        if nv is None:
            from ..program import Printer

            printer = printer or Printer(tr.resolve)
            raise errors.NkiError("%s; splitting its dim %d into rows of %d would do, but the "
                                  "earlier access %s is not one access in that shape" %
                                  (why, d, b, printer.access(v)))
        new_views.append((v, nv))
    live = [r() for r in t.__dict__.get("nki_views", [])]
    live = [x for x in live if x is not None]
    new_live = []
    for x in live:
        nx = _new_nki(x, d, b)
        if nx is None:
            raise errors.NkiError("%s; splitting its dim %d into rows of %d would do, but a view "
                                  "of '%s' the kernel holds (shape %s) is not one access in that "
                                  "shape" % (why, d, b, t.name, tuple(x.shape)))
        new_live.append((x, nx))
    psum = _psum_bookkeeping(t, d, b, new_views, why) if t.mem == "psum" else None
    # Commit: the tensor, the recorded accesses, the live views.
    if t.mem == "hbm" and "interface_shape" not in t.__dict__:
        t.interface_shape = list(t.shape)
    size = _const(t.shape[d])
    t.__dict__.setdefault("split_why", []).append(
        "'%s' was declared with its dim %d (%d) split into (%d, %d) for: %s" %
        (t.name, d, size, size // b, b, why))
    t.shape[d:d + 1] = [Lin.of(size // b), Lin.of(b)]
    t.mods.insert(d + 1, None)
    t.nki_to_storage = list(range(len(t.shape)))
    for v, (dims, order) in new_views:
        v.dims, v.order = dims, order
        if v.indirect is not None:
            v.indirect.dim = _renumber(v.indirect.dim, d)
    for x, (starts, axes, indirect) in new_live:
        x._starts, x._axes, x._indirect = starts, axes, indirect
    if psum is not None:
        t.group_keys, regions = psum
        if regions is not None:
            t.matmul_regions = regions
    for tile, nk in handles:
        tile.__dict__.clear()
        tile.__dict__.update(nk.__dict__)
        tile.__class__ = NkiTensor
        live.append(tile)
    t.nki_tiles = []
    t.nki_views = [weakref.ref(x) for x in live]


def add_unit_dim(t, why):
    """Redeclare t with a size-1 dim appended (the same bytes in the same order), for a view
    that broadcasts through a dim no other axis uses: every recorded access and live view of t
    gets that dim at start 0, size 1; an NkiError naming why t cannot be redeclared
    otherwise."""
    no = refusal(t)
    if no is not None:
        raise errors.NkiError("%s; a size-1 dim appended to '%s' would carry it, but %s" %
                              (why, t.name, no))
    from .views import NkiTensor

    tr = trace.current()
    handles = [r() for r in t.__dict__.get("nki_tiles", [])]
    handles = [(x, NkiTensor.of(x)) for x in handles
               if x is not None and not isinstance(x, NkiTensor) and x._view.tensor is t]
    views = _views_of(t, tr.root, [])
    if t.mem == "psum":  # tiles._block_key's form: (start, size, step) text per dim
        unit = ((Lin.of(0).text(), Lin.of(1).text(), 1),)
        t.group_keys = {(dims + unit, pieces) for dims, pieces in t.group_keys}
        if t.__dict__.get("matmul_regions") is not None:
            t.matmul_regions = [list(box) + [(0, 1)] for box in t.matmul_regions]
    if t.mem == "hbm" and "interface_shape" not in t.__dict__:
        t.interface_shape = list(t.shape)
    t.__dict__.setdefault("split_why", []).append(
        "'%s' was declared with a size-1 dim appended for: %s" % (t.name, why))
    t.shape.append(Lin.of(1))
    t.mods.append(None)
    t.nki_to_storage = list(range(len(t.shape)))
    for v in views:
        v.dims.append([Lin.of(0), Lin.of(1), 1])
    live = [r() for r in t.__dict__.get("nki_views", [])]
    live = [x for x in live if x is not None]
    for x in live:
        x._starts = x._starts + [Lin.of(0)]
    for tile, nk in handles:
        tile.__dict__.clear()
        tile.__dict__.update(nk.__dict__)
        tile.__class__ = NkiTensor
        live.append(tile)
    t.nki_tiles = []
    t.nki_views = [weakref.ref(x) for x in live]


class Merged(Exception):
    """A tensor's dims were merged while a view was being made: make it again."""


def merge(t, d, why):
    """Redeclare HBM tensor t with storage dims d and d + 1 merged into one (the same bytes in
    the same order), rewriting every recorded access and live view of t; an NkiError naming
    the access that is not one access in the merged shape (or why t cannot be redeclared)."""
    no = refusal(t) if t.mem == "hbm" else "'%s' is on chip, where dim 0 is the partition " \
        "dim" % t.name
    if no is not None:
        raise errors.NkiError("%s; merging its dims %d and %d would do, but %s" %
                              (why, d, d + 1, no))
    from .views import Axis, NkiTensor

    tr = trace.current()
    inner = _const(t.shape[d + 1])
    handles = [r() for r in t.__dict__.get("nki_tiles", [])]
    handles = [(x, NkiTensor.of(x)) for x in handles
               if x is not None and not isinstance(x, NkiTensor) and x._view.tensor is t]
    views = _views_of(t, tr.root, [])
    printer = None
    new_views = []
    for v in views:
        nv = _merged_view(v, d, inner)
        if nv is None:
            from ..program import Printer

            printer = printer or Printer(tr.resolve)
            raise errors.NkiError("%s; merging its dims %d and %d would do, but the earlier "
                                  "access %s is not one access in that shape" %
                                  (why, d, d + 1, printer.access(v)))
        new_views.append((v, nv))
    live = [r() for r in t.__dict__.get("nki_views", [])]
    live = [x for x in live if x is not None]
    new_live = []
    for x in live:
        nx = _merged_nki(x, d, inner, Axis)
        if nx is None:
            if x._indirect is not None:
                raise errors.NkiError("%s; merging its dims %d and %d would do, but an "
                                      "indirect view of '%s' the kernel holds is not one access "
                                      "in that shape" % (why, d, d + 1, t.name))
            # kept as its pattern (shape, strides, offset: the same elements), an access again
            # only if an instruction uses it (the tensor split then, or the use refused)
            nx = ("flat", [Lin.of(n) for n in x.shape], [Lin.of(st) for st in x.strides],
                  Lin.of(x.offset), "a view of '%s' the kernel held when its dims %d and %d were "
                  "merged (%s) steps twice through the merged dim" % (t.name, d, d + 1, why))
        new_live.append((x, nx))
    if "interface_shape" not in t.__dict__:
        t.interface_shape = list(t.shape)
    t.__dict__.setdefault("split_why", []).append(
        "'%s' was declared with its dims %d and %d merged for: %s" % (t.name, d, d + 1, why))
    t.shape[d:d + 2] = [Lin.of(_const(t.shape[d]) * inner)]
    del t.mods[d + 1]
    t.nki_to_storage = list(range(len(t.shape)))
    for v, (dims, order) in new_views:
        v.dims, v.order = dims, order
    for x, nx in new_live:
        if nx[0] == "flat":
            x._starts = x._starts[:d] + [Lin.of(0)] + x._starts[d + 2:]
            x._axes, x._flat, x._why = None, (nx[1], nx[2], nx[3]), nx[4]
        else:
            x._starts, x._axes = nx
    for tile, nk in handles:
        tile.__dict__.clear()
        tile.__dict__.update(nk.__dict__)
        tile.__class__ = NkiTensor
        live.append(tile)
    t.nki_tiles = []
    t.nki_views = [weakref.ref(x) for x in live]


def _merged_dim(a, b, inner):
    """Access dims a and b ([start, size, step]) of storage dims d and d + 1 as one of the
    merged dim, and which of them the access keeps there (None: not one access)."""
    na, nb = _const(a[1]), _const(b[1])
    start = Lin.of(a[0]).scale(inner).add(Lin.of(b[0]))
    if na == 1:
        return [start, Lin.of(b[1]), b[2]], "b"
    if nb == 1:
        return [start, Lin.of(a[1]), a[2] * inner], "a"
    if nb == inner and _const(b[0]) == 0 and b[2] == 1 and a[2] == 1 and na is not None:
        return [start, Lin.of(na * inner), 1], "both"
    return None


def _merged_view(v, d, inner):
    if v.indirect is not None or v.units:
        return None
    got = _merged_dim(v.dims[d], v.dims[d + 1], inner)
    if got is None:
        return None
    dim, kept = got
    order = list(v.order)
    if kept == "both":
        k = order.index(d) if d in order else -1
        if k < 0 or k + 1 >= len(order) or order[k + 1] != d + 1:
            return None
        del order[k + 1]
    elif d in order and d + 1 in order:
        return None  # two kept axes, one of size 1: the access would lose an axis
    elif kept == "b" and d + 1 in order:
        order[order.index(d + 1)] = d
    elif kept == "a" and d + 1 in order:
        order.remove(d + 1)
    order = [x - 1 if x > d + 1 else x for x in order]
    dims = [list(x) for x in v.dims[:d]] + [dim] + [list(x) for x in v.dims[d + 2:]]
    return dims, order


def _merged_nki(x, d, inner, Axis):
    """The starts and axes of NkiTensor x with dims d and d + 1 merged (None: not one)."""
    if x._indirect is not None:
        return None
    starts = list(x._starts)
    merged_start = Lin.of(starts[d]).scale(inner).add(Lin.of(starts[d + 1]))
    starts = starts[:d] + [merged_start] + starts[d + 2:]
    if x._axes is None:
        return starts, None

    def renum(dd):
        return dd - 1 if dd is not None and dd > d + 1 else dd

    axes = []
    for a in x._axes:
        segs = []
        for k, (dd, n, st) in enumerate(a.segs):
            if dd == d + 1 and segs and segs[-1][0] == d and _const(n) == inner and st == 1 \
                    and segs[-1][2] == 1:
                prev = segs.pop()
                segs.append((d, Lin.of(prev[1]).scale(inner), 1))
            elif dd == d:
                segs.append((d, n, st * inner))
            elif dd == d + 1:
                segs.append((d, n, st))
            else:
                segs.append((renum(dd), n, st))
        axes.append(Axis(a.count, segs))
    # each of d, d + 1 stepped by one axis at most, or both merged into one seg
    used = [dd for a in axes for dd, _, _ in a.segs if dd == d]
    if len(used) > 1:
        return None
    return starts, axes


def _psum_bookkeeping(t, d, b, new_views, why):
    """A PSUM tensor's accumulation bookkeeping in the split shape: the blocks its accumulation
    groups started (tiles.py keys them by the access's text: each key is the text of a recorded
    access, mapped to the text of that access rewritten) and the regions earlier nc_matmul
    calls wrote (tensor_engine.py: [(start, stop)] per dim; one that straddles rows becomes
    the rows it covers whole and its partial first and last rows)."""
    from ..tiles import _block_key

    tr = trace.current()
    text = {}
    for v, (dims, _) in new_views:
        text[_block_key(tr, v)] = tuple((tr.resolve(Lin.of(a)).text(),
                                         tr.resolve(Lin.of(n)).text(), st) for a, n, st in dims)
    keys = set()
    for dims, pieces in t.group_keys:
        if dims not in text:
            raise errors.NkiError("%s; splitting its dim %d into rows of %d would do, but an "
                                  "accumulation group of '%s' started in a block that no recorded "
                                  "access names" % (why, d, b, t.name))
        keys.add((text[dims], pieces))
    regions = t.__dict__.get("matmul_regions")
    if regions is None:
        return keys, None
    out = []
    for box in regions:
        lo, hi = box[d]
        rows = []
        if lo // b == (hi - 1) // b:  # inside one row
            rows.append(((lo // b, lo // b + 1), (lo % b, (hi - 1) % b + 1)))
        else:
            first, last = -(-lo // b), hi // b  # the whole rows [first, last)
            if lo % b:
                rows.append(((lo // b, lo // b + 1), (lo % b, b)))
            if first < last:
                rows.append(((first, last), (0, b)))
            if hi % b:
                rows.append(((hi // b, hi // b + 1), (0, hi % b)))
        out += [box[:d] + [o, i] + box[d + 1:] for o, i in rows]
    return keys, out


def _new_nki(x, d, b):
    """The starts, axes and indirect dim of NkiTensor x in the split shape (None: not one)."""
    from .views import Axis

    ind = x._indirect
    if ind is not None:
        if ind[0] == d:
            return None
        ind = (_renumber(ind[0], d),) + tuple(ind[1:])
    start = x._starts[d]
    starts = x._starts[:d] + [start.floordiv(b), start.mod(b)] + x._starts[d + 1:]
    if x._axes is None:
        return starts, None, ind
    axes = []
    for a in x._axes:
        segs = []
        for dd, n, st in a.segs:
            if dd != d:
                segs.append((None if dd is None else _renumber(dd, d), n, st))
                continue
            parts = _split(start, n, st, b)
            if parts is None:
                return None
            outer, inner, kept = parts
            starts[d], starts[d + 1] = outer[0], inner[0]
            for k in kept:
                part = outer if k == "outer" else inner
                segs.append((d + (k == "inner"), part[1], part[2]))
        axes.append(Axis(a.count, segs))
    return starts, axes, ind


def structure(t, attempt, pairs, why, strides=()):
    """attempt(t) with t's dims split as the pattern's pairs need when it fails: each pair's
    stride and extent made a dim boundary, and each of `strides` (a run-time offset's scale) a
    dim's stride; for an HBM tensor no splits map, two dims merged first where a pair runs
    across both (`_merge_for`). The splits are planned on t's shape alone and made only when the
    pattern is then one access, so a failing view leaves t as it was."""
    try:
        return attempt(t, False)
    except Unmapped as e:
        first = e
    cuts, blocked = _plan(t, attempt, pairs, strides)
    if cuts is None and t.mem == "hbm" and not strides:
        merged, _ = _plan(t, attempt, pairs, strides, merges=True)
        cuts = merged if merged is not None else cuts
    if refusal(t) is not None:
        if cuts or blocked:
            d, b = cuts[0] if cuts else blocked
            # (either raises the refusal with the reason)
            (merge(t, d, why or str(first)) if b is None else split(t, d, b, why or str(first)))
        raise first
    if cuts is None:
        if blocked is not None:
            d, b = blocked
            raise errors.NkiError("%s; splitting its dim %d into rows of %d would do, but '%s' "
                                  "already has 5 dims (an access has at most a partition and 4 "
                                  "free dims, and names every dim of its tensor)" %
                                  (why or str(first), d, b, t.name))
        raise first
    for d, b in cuts:
        if b is None:
            merge(t, d, why or str(first))
        else:
            split(t, d, b, why or str(first))
    return attempt(t, False)


class _Shape:
    """What the pattern mapping reads of a tensor: its name, memory and shape."""

    def __init__(self, t, shape):
        self.name, self.mem, self.shape = t.name, t.mem, shape


def _plan(t, attempt, pairs, strides=(), merges=False):
    """(cuts, blocked): the splits ((dim, inner size), in order) after which attempt maps the
    pattern, None when no splits at pair boundaries (or at the given strides) do; and the cut
    that the 5-dim limit stopped, if one did. With `merges` (an HBM tensor the plain plan could
    not map), a merge of two dims ((dim, None), `_merge_for`) comes before any split and a
    split is only at a pair's step (the merged rows a pair runs across need not start at a
    multiple of its count)."""
    shape = list(t.shape)
    cuts = []
    on_chip = t.mem != "hbm"
    for _ in range(5):
        probe = _Shape(t, shape)
        try:
            attempt(probe, True)
            return cuts, None
        except Unmapped:
            pass
        # A merge first (an HBM tensor's rows a pair runs across), so that the splits after it
        # are planned, and made, on the merged shape and a merge never meets a 5-dim tensor.
        m = _merge_for(shape, pairs) if merges else None
        if m is not None:
            shape[m:m + 2] = [Lin.of(_const(shape[m]) * _const(shape[m + 1]))]
            cuts.append((m, None))
            continue
        cut = None
        for st in strides:
            s = _const(st)
            cut = cut_for(probe, s) if s is not None and s > 0 else None
            if cut is not None:
                break
        for k, (st, n) in enumerate(pairs if cut is None else ()):
            s = _const(st)
            if (k == 0 and on_chip) or s is None or s == 0 or n == 1 or not isinstance(n, int):
                continue
            for c in (s,) if merges else (s, s * n):
                cut = cut_for(probe, c)
                if cut is not None:
                    break
            if cut is not None:
                break
        if cut is not None and len(shape) >= 5:
            return None, cut
        if cut is None:
            return None, None
        d, b = cut
        shape[d:d + 1] = [Lin.of(_const(shape[d]) // b), Lin.of(b)]
        cuts.append(cut)
    return None, None


def _merge_for(shape, pairs):
    """d: an HBM tensor's dims d and d + 1 to merge (`merge`) so that a pair stepping through
    dim d + 1 at its stride with more elements than that dim has (rmsnorm_tkg's `.ap` over the
    B x S rows of a [B, S, H] input, 1008 of 2016 at a time, B = 63, S = 32) is a step through
    one dim; None when no pair is one."""
    sizes = [_const(x) for x in shape]
    if None in sizes:
        return None
    strides = [1] * len(sizes)
    for d in range(len(sizes) - 2, -1, -1):
        strides[d] = strides[d + 1] * sizes[d + 1]
    for st, n in pairs:
        s = _const(st)
        if s is None or s == 0 or not isinstance(n, int) or n == 1:
            continue
        for d in range(len(sizes) - 1):
            # (a count of whole rows is a run of whole dims already: no merge needed)
            if strides[d + 1] == s and n > sizes[d + 1] and n % sizes[d + 1] and \
                    n <= sizes[d] * sizes[d + 1]:
                return d
    return None

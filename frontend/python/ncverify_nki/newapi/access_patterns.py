"""`.ap(pattern, offset, scalar_offset, vector_offset, indirect_dim, dtype)` of the new API's
tensors (the access-pattern deep dive, nki/deep-dives/nki-aps.rst) and run-time offsets: a
pattern's [step, count] pairs mapped onto the storage dims of the tensor (program.View has one
start, size and step per storage dim), the offset split over them, and `scalar_offset`,
`vector_offset`, `select(dim, tensor)` and `vector_select` as the IR's indirect access
(program.Indirect)."""

from .. import errors, splitting, trace
from ..expr import Lin, SymInt
from ..tiles import Tile
from . import refine, views
from .sizes import const as _const, integer as _int, mem_name as _mem_name, same as _same


def access_pattern(v, pattern, offset, scalar_offset, vector_offset, indirect_dim, dtype):
    """t.ap(pattern, offset, ...): the view addressing t's storage by [[step, count], ...]
    (the access-pattern deep dive): element (i, ...) is storage[offset + sum(step_k * i_k)]."""
    t = v._base
    name = "%s.ap" % t.name
    if dtype is not None:
        views._reinterpret(v, dtype, "ap(dtype=)")
    if scalar_offset is not None and vector_offset is not None:
        raise errors.NkiError("%s: at most one of scalar_offset and vector_offset" % name)
    if not isinstance(pattern, (list, tuple)) or not pattern or \
            any(not isinstance(p, (list, tuple)) or len(p) != 2 for p in pattern):
        raise errors.NkiError("%s: pattern must be a list of [step, count] pairs, not %r" %
                              (name, pattern))
    pairs = [(Lin.of(_lin(p[0], name + ": a step")), _count(p[1], name)) for p in pattern]
    for st, n in pairs:
        if isinstance(n, int) and n < 1:
            raise errors.NkiError("%s: a count of %d" % (name, n))
        c = _const(st)
        if c is not None and c < 0:
            raise errors.NkiError("%s: a negative step (%d)" % (name, c))
    off = Lin.of(v.offset) if offset is None else Lin.of(_lin(offset, name + ": offset"))
    if isinstance(scalar_offset, (int, SymInt)) and not isinstance(scalar_offset, bool):
        # An offset the trace knows as an integer: a Python int, or a loop variable or the
        # program id, which the trace keeps symbolic where NKI's specialised kernel has a
        # Python int (nki-library's TensorView.select passes those to scalar_offset). The
        # element offset is the deep dive's offset + scalar_offset * prod(shape[k + 1:]),
        # known before the instructions run: a static view.
        off = off.add(Lin.of(scalar_offset).mul(_indirect_scale(v, indirect_dim, name)))
        scalar_offset = None
    if vector_offset is None and scalar_offset is None:
        def attempt(tt, dry):
            starts = split_offset(tt, off, name)
            axes = map_pattern(tt, pairs, name, None, starts)
            return None if dry else views.NkiTensor(t, starts, axes)

        if all(isinstance(n, int) for _, n in pairs):
            try:
                return attempt(t, False)
            except refine.Unmapped as e:
                # kept as its pattern until an instruction uses it (views.NkiTensor._resolve
                # splits the tensor then), so that a DMA can move it in pieces instead
                # (dma.py): a split is for the rest of the kernel
                return views.NkiTensor(t, v._starts, None, None, str(e),
                                       ([n for _, n in pairs], [st for st, _ in pairs], off))
        return refine.structure(t, attempt, pairs, None)
    k = _int(indirect_dim, name + ": indirect_dim")
    scale = _indirect_scale(v, k, name)
    if t.mem != "hbm" and vector_offset is not None:
        raise errors.NkiError("%s: vector_offset into '%s' (in %s): its indirect dim 0 is the "
                              "partition dim, which is never addressed at run time (per-row "
                              "offsets read HBM)" % (name, t.name, _mem_name(t.mem)))

    def attempt_indirect(tt, dry):
        starts = split_offset(tt, off, name)
        d = _storage_dim_of_stride(tt, scale)
        if d is None:
            # refine.structure splits a dim of t at this stride when one holds it evenly
            raise refine.Unmapped(
                "%s: the run-time offset is scaled by stride %s (dim %d), which is no storage "
                "dim's stride of '%s' %s: the IR offsets one storage dim, by 1 per unit of the "
                "value, so a dim of that stride is needed (a dim split at it: the stride must "
                "divide a dim's extent evenly and be a multiple of the dim's own stride)" %
                (name, scale.text(), k, t.name, tuple(SymInt.make(s) for s in tt.shape)))
        if vector_offset is not None:
            if k != 0:
                raise errors.NkiError("%s: vector_offset needs indirect_dim=0 (the deep dive: "
                                      "'only indirect_dim=0 is supported')" % name)
            # The leading pair's step is ignored (the deep dive): it steps through the indirect
            # dim, row r at the offsets' value r.
            axes = map_pattern(tt, pairs, name, d, starts)
            if dry:
                return None
            return vector_offsets(views.NkiTensor(t, starts, axes), axes, d, vector_offset, name,
                                   count=pairs[0][1])
        if dry:
            map_pattern(tt, pairs, name, None, starts)
            return None
        return _scalar_offset(t, starts, pairs, d, scalar_offset, name)

    for _ in range(3):
        try:
            return refine.structure(t, attempt_indirect, pairs, None, strides=(scale,))
        except refine.Merged:  # t's leading dims merged for the offsets' rows: map it again
            off = Lin.of(v.offset) if offset is None else off
    raise errors.NkiError("%s: the offsets' rows could not be made one storage dim" % name)


def _indirect_scale(v, indirect_dim, name):
    """The elements one unit of a run-time offset moves: prod(A.shape[indirect_dim + 1:]) of
    the tensor A that .ap is called on (the access-pattern deep dive, "Dynamic Access with
    scalar_offset and vector_offset"; the migration guide's "Dynamic access pattern")."""
    k = _int(indirect_dim, name + ": indirect_dim")
    shape = v.shape
    if not 0 <= k < len(shape):
        raise errors.NkiError("%s: indirect_dim %d of a %d-dimensional view" %
                              (name, k, len(shape)))
    scale = Lin.of(1)
    for n in shape[k + 1:]:
        scale = scale.mul(Lin.of(n))
    stride = Lin.of(v.strides[k])
    if not _same(scale, stride):
        # nki-library reshapes the tensor it calls .ap on so that a dim has the stride it
        # wants, and there the two agree; for a view whose stride differs no page says which
        raise errors.NkiError("%s: a run-time offset on dim %d of a view whose stride there "
                              "(%s) is not the product of the sizes after it (%s, the deep "
                              "dive's scale): which one NKI scales by is not documented; call "
                              ".ap on a contiguous view" % (name, k, stride.text(), scale.text()))
    return scale


def _text(n):
    return str(n) if isinstance(n, int) else n.text()


def _shown(n):
    """A count as the refusals list it: an int, or the text of a symbolic one."""
    return n if isinstance(n, int) else n.text()


def _count(x, name):
    """A pattern count: an int when the trace knows it, else a symbolic size (a dim's size,
    given with --param or not)."""
    lin = Lin.of(_lin(x, name + ": a count"))
    c = _const(lin)
    if c is None:
        # one value for every value of the loop variables in it (nki-library's
        # min(128, (s - 1 - i * 64) // 64 + 1) over a loop whose every i gives 128)
        lo, hi = splitting.lin_range(trace.current(), lin)
        if lo == hi:
            return int(lo)
    return c if c is not None else lin


def _lin(x, what):
    if isinstance(x, bool):
        raise errors.NkiError("%s must be an integer, not %r" % (what, x))
    try:
        return Lin.of(x)
    except TypeError:
        raise errors.NkiError("%s must be an integer, not %r" % (what, x))


def _storage_strides(t):
    out = [Lin.of(1)] * len(t.shape)
    for d in range(len(t.shape) - 2, -1, -1):
        out[d] = out[d + 1].mul(t.shape[d + 1])
    return out


def _storage_dim_of_stride(t, st):
    S = _storage_strides(t)
    for d in range(len(S)):
        if _same(S[d], st) and (_const(t.shape[d]) != 1 or d == len(S) - 1):
            return d
    return None


def split_offset(t, off, name):
    """A flat element offset as a start per storage dim: each run-time term goes to the
    outermost dim whose stride divides its coefficient; the constant part is written in the
    mixed radix of the storage shape."""
    S = [_const(s) for s in _storage_strides(t)]
    starts = [Lin.of(0) for _ in S]
    off = trace.current().evaluate(off)
    Sym = _storage_strides(t)
    for atom, coef in off.terms:
        if atom.kind == "mul":  # a run-time index times a symbolic stride
            hit = next(((d, o) for d in range(len(S)) if S[d] is None
                        for f, o in (atom.args, atom.args[::-1]) if _same(f, Sym[d])), None)
            if hit is not None:
                starts[hit[0]] = starts[hit[0]].add(hit[1].scale(coef))
                continue
        d = next((d for d, s in enumerate(S) if s and coef % s == 0), None)
        if d is None:
            raise errors.NkiError("%s: the offset term %s is not a multiple of a storage stride "
                                  "of '%s' (known strides %s; give symbolic sizes with --param)"
                                  % (name, Lin(((atom, coef),), 0).text(), t.name, S))
        starts[d] = starts[d].add(Lin(((atom, coef // S[d]),), 0))
    c = off.const
    if c and None in S:
        raise errors.NkiError("%s: a constant offset into '%s' needs its sizes known (give them "
                              "with --param)" % (name, t.name))
    for d, s in enumerate(S):
        if c:
            starts[d] = starts[d].add(Lin.of(c // s))
            c %= s
    return starts


def map_pattern(t, pairs, name, rows_dim, starts):
    """Each [step, count] pair onto the storage dim it steps through (outermost dim whose stride
    divides the step and whose size holds the count from the start there), or onto a run of
    whole storage dims (a pair over contiguous rows); count-1 pairs need none, step-0 pairs are
    broadcasts."""
    S = _storage_strides(t)
    sizes = [_const(s) for s in t.shape]
    first = [_const(s) for s in starts]  # None: a run-time start (the interpreter checks it)
    used = set()
    axes = []
    on_chip = t.mem != "hbm"
    for k, (st, n) in enumerate(pairs):
        if k == 0 and rows_dim is not None:
            used.add(rows_dim)
            axes.append(views.Axis(n, [(rows_dim, n, 0)]))
            continue
        if k == 0 and on_chip:
            if not _same(st, S[0]):
                raise errors.NkiError(
                    "%s: the first pair of an %s access steps through partitions and its step "
                    "must be the free size per partition (%s), not %s (the deep dive: reading "
                    "every other partition is not allowed)" %
                    (name, _mem_name(t.mem), S[0].text(), st.text()))
            used.add(0)
            axes.append(views.Axis(n, [(0, n, 1)]))
            continue
        if n == 1:
            axes.append(views.Axis(1, []))
            continue
        if _const(st) == 0:
            axes.append(views.Axis(n, [(None, n, 0)]))
            continue
        seg = _one_dim(st, n, S, sizes, first, used, on_chip, t.shape, starts)
        if seg is None and isinstance(n, int):
            seg = _dim_run(st, n, S, sizes, first, used, on_chip)
        if seg is None:
            raise refine.Unmapped(
                "%s: pair %d [%s, %s] of %s is not a step through one storage dim of '%s' %s "
                "nor through whole consecutive ones%s: the IR's access names each storage dim "
                "once, with one start, size and step" %
                (name, k, st.text(), _text(n), [[p[0].text(), _shown(p[1])] for p in pairs],
                 t.name,
                 tuple(SymInt.make(s) for s in t.shape),
                 " (not the partition dim of an on-chip tensor)" if on_chip else ""))
        used.update(d for d, _, _ in seg)
        axes.append(views.Axis(n, seg))
    return axes


def _one_dim(st, n, S, sizes, first, used, on_chip, shape, starts):
    for d in range(len(S)):
        if d in used or (on_chip and d == 0):
            continue
        if _same(st, S[d]):
            q = 1
        else:
            cs, cd = _const(st), _const(S[d])
            if cs is None or cd is None or cs % cd:
                continue
            q = cs // cd
        if not isinstance(n, int):  # a symbolic count: the whole dim, from its start
            if q == 1 and first[d] == 0 and _same(n, shape[d]):
                return [(d, n, 1)]
            # or one whose last index stays inside the dim for every value of the loop
            # variables in it (a count 128 - i from start i of a dim of 128)
            if sizes[d] is not None and isinstance(starts, list):
                last = Lin.of(starts[d]).add(Lin.of(n).sub(Lin.of(1)).scale(q))
                lo, hi = splitting.lin_range(trace.current(), last)
                if hi < sizes[d] and splitting.lin_range(trace.current(), Lin.of(n))[0] >= 1:
                    return [(d, n, q)]
            continue
        if sizes[d] is None:
            if q == 1:
                return [(d, n, 1)]
            continue
        if (first[d] or 0) + q * (n - 1) < sizes[d]:
            return [(d, n, q)]
    return None


def _dim_run(st, n, S, sizes, first, used, on_chip):
    """A pair over several whole storage dims: step = the innermost one's stride. The outermost
    dim of the run may start at a run-time index (as in _one_dim, the interpreter checks that
    the access stays inside the dim); the inner ones are whole."""
    inner = next((d for d in range(len(S)) if _same(st, S[d])), None)
    if inner is None or None in sizes:
        return None
    segs, rem, d = [], n, inner
    while d >= 0:
        if d in used or (on_chip and d == 0):
            return None
        if (first[d] or 0) + rem <= sizes[d]:
            segs.insert(0, (d, rem, 1))
            return segs
        if first[d] is None:
            return None
        if rem % sizes[d] or first[d] != 0:
            return None
        segs.insert(0, (d, sizes[d], 1))
        rem //= sizes[d]
        d -= 1
    return None


def _offsets_view(x, rows, what, scalar=False):
    from ..tiles import as_view

    if not isinstance(x, Tile):
        raise errors.NkiError("%s: the run-time offsets must be an SBUF tensor, not %s (a "
                              "VirtualRegister offset is not modelled)" % (what,
                                                                          type(x).__name__))
    o = as_view(x, "offsets")
    if o.tensor.mem == "hbm":
        raise errors.NkiError("%s: the offsets '%s' are in HBM; they are read from SBUF" %
                              (what, o.tensor.name))
    if o.tensor.dtype not in ("int32", "uint32"):
        raise errors.NkiError("%s: the offsets '%s' are %s; run-time offsets are int32 or "
                              "uint32" % (what, o.tensor.name, o.tensor.dtype))
    # an NkiTensor's own shape: its size-1 axes that no storage dim carries (`.ap` pairs
    # [1, 1], an expand_dim) are axes of the offsets too, which the IR access lacks
    lins = [Lin.of(s) for s in x.shape] if isinstance(x, views.NkiTensor) else o.logical_lins()
    shape = [_const(s) for s in lins]
    if len(shape) != 2 or shape[1] != 1 or (rows is not None and shape[0] != rows):
        raise errors.NkiError("%s: the offsets '%s' have shape %s; they must be %s" %
                              (what, o.tensor.name, tuple(o.shape),
                               "(1, 1)" if scalar else "(%s, 1): one per row" % rows))
    return o


def vector_offsets(v, axes, d, vector_offset, what, count=None):
    """Row r of the view reads storage dim d at start + vector_offset[r] (program.Indirect)."""
    t = v._base
    from ..tiles import as_view

    rows = _const(as_view(vector_offset, "vector_offset").logical_lins()[0])
    if count is not None and rows != count:
        raise errors.NkiError("%s: the leading pair counts %d rows and vector_offset has %s" %
                              (what, count, rows))
    o = _offsets_view(vector_offset, rows, what)
    size = _const(t.shape[d])
    if size is None:
        raise errors.NkiError("%s: indirect addressing into '%s' needs the size of its dim %d "
                              "known (give it with --param): the offsets read are checked "
                              "against it" % (what, t.name, d))
    axes = [a.copy() for a in axes]
    axes[0] = views.Axis(rows, [(d, rows, 0)])
    out = views.NkiTensor(t, v._starts, axes, (d, o, 0, size - 1))
    if _const(views.ir_rows(out._view)) != rows:
        out = None  # not a view the kernel holds (the tensor may be redeclared below)
        sizes = [_const(n) for n in t.shape]
        outer = [k for k in range(d) if sizes[k] != 1]
        if t.mem == "hbm" and outer and all(_const(v._starts[k]) == 0 for k in outer) and \
                None not in sizes:
            # the offsets count blocks from the tensor's start: they run through dims 0..d,
            # which an HBM tensor (flat bytes) may declare as one
            merged = 1
            for k in range(d + 1):
                merged *= sizes[k]
            why = ("%s: the offsets count rows of %s elements from the start of '%s', which "
                   "run through its storage dims %s of sizes %s" %
                   (what, _stride_text(t, d), t.name, list(range(d + 1)), tuple(sizes[:d + 1])))
            if refine.refusal(t) is None:
                for _ in range(d):
                    refine.merge(t, 0, why)
                raise refine.Merged()
            raise errors.NkiError(
                "%s: the offsets count rows of %s elements from the start of '%s', which run "
                "through its storage dims %s of sizes %s; the IR offsets one storage dim and "
                "takes the rows from its first, so '%s' would have to be declared with those "
                "dims merged into one of %d (%s), and the front end only splits a tensor's "
                "dims" % (what, _stride_text(t, d), t.name, list(range(d + 1)),
                          tuple(sizes[:d + 1]), t.name, merged, tuple([merged] + sizes[d + 1:])))
        raise errors.NkiError("%s: the rows of '%s' picked by the offsets are its storage dim %d, "
                              "and the IR's access takes its rows from its first storage dim "
                              "(the dims before it dropped by an index come first): index the "
                              "view so that dim %d is its first, or use .ap" %
                              (what, t.name, d, d))
    return out


def _stride_text(t, d):
    """The stride of storage dim d of t, as text."""
    return _storage_strides(t)[d].text()


def _scalar_offset(t, starts, pairs, d, scalar_offset, what):
    """A (1, 1) offset shifts the whole access along storage dim d: every index of dim d (which
    the pattern may step through too) moves by the value, read at run time."""
    if t.mem != "hbm" and d == 0:
        raise errors.NkiError("%s: a run-time offset on the partition dim of '%s' (in %s): "
                              "on-chip tensors are addressed at run time in their free dims "
                              "only" % (what, t.name, _mem_name(t.mem)))
    o = _offsets_view(scalar_offset, 1, what, scalar=True)
    return _shifted(t, starts, map_pattern(t, pairs, what, None, starts), d, o, what)


def _shifted(t, starts, axes, d, o, what):
    size = _const(t.shape[d])
    if size is None:
        raise errors.NkiError("%s: indirect addressing into '%s' needs the size of its dim %d "
                              "known (give it with --param): the offsets read are checked "
                              "against it" % (what, t.name, d))
    v = views.NkiTensor(t, starts, axes, (d, Shared(o), 0, size - 1))
    v._structured(what)
    return v


class Shared:
    """A (1, 1) run-time offset shared by every row of an access. The IR's indirect access reads
    one offset per row, so an access of R > 1 rows reads a [R, 1] column holding the value: the
    first instruction that consumes such a view copies it there (ops.partition_broadcast: a DMA
    to HBM scratch and one back; the values exact, the latency that choice's,
    frontend/README.md), and later ones reuse the column (the value at that first
    instruction)."""

    def __init__(self, offsets):
        self.offsets, self.columns = offsets, {}

    def column(self, t, rows):
        if rows is None or rows > 128:
            raise errors.NkiError("a run-time offset shared by %s rows of '%s': the IR's offsets "
                                  "are one per row, a column of at most 128 partitions" %
                                  (rows if rows is not None else "a symbolic number of", t.name))
        if rows == 1:
            return self.offsets
        if rows not in self.columns:
            from .. import ops

            self.columns[rows] = ops.partition_broadcast(trace.current(), self.offsets, rows)
        return self.columns[rows]


def dynamic_select(v, d, index):
    """select(dim, tensor): dim d at a run-time index, removed from the view."""
    if v._on_chip() and d == 0:
        raise errors.NkiError("select: a run-time index on the partition dim of '%s' (in %s): "
                              "on-chip tensors are addressed at run time in their free dims "
                              "only (the select reference)" % (v.name, _mem_name(v._base.mem)))
    if v._indirect is not None:
        raise errors.NkiError("select: '%s' is already indirectly addressed (one dynamic select "
                              "per view)" % v.name)
    axes = v._structured("select")
    a = axes[d]
    if len(a.segs) != 1 or a.segs[0][0] is None or a.segs[0][2] != 1:
        raise errors.NkiError("select: dim %d of this view of '%s' does not step through one "
                              "storage dim by 1" % (d, v.name))
    s = a.segs[0][0]
    o = _offsets_view(index, 1, "select", scalar=True)
    rest = [x for k, x in enumerate(axes) if k != d]
    if not rest:
        rest = [views.Axis(1, [])]
    return _shifted(v._base, v._starts, rest, s, o, "select")

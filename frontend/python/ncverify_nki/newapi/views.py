"""NkiTensor views of the new API (NKI 0.2-0.6): indexing, the 0.5 view methods (slice, select,
permute, broadcast, expand_dim, squeeze_dim, reshape_dim, flatten_dims, rearrange, reshape,
vector_select) and the tensor attributes (shape, strides, offset, name, dtype, buffer, ndim,
size); `.ap(...)` patterns and run-time offsets are access_patterns.py, dim splits refine.py.

The reference defines a view as (shape, strides, offset) over a tensor's flat storage: element
(i, ...) is storage[offset + sum(strides[k] * i_k)] (the language guide, "Anatomy of a tensor";
the access-pattern deep dive nki/deep-dives/nki-aps.rst). The IR's access (program.View) has,
per storage dim, one start, size and step, and an order of the kept dims. A view is kept here in
the form both share: per storage dim its start, and per view axis the storage dims it steps
through (`segs`, outermost first: one for a plain axis, several for axes merged by flatten_dims
or reshape, none for an added size-1 axis). The flat strides and offset are computed from it.
A reshape that splits a storage dim is kept flat (shape, strides, offset) until it is used as
an access: then its pattern is mapped onto the storage dims, the tensor's dims split where it
needs (refine.py), or the view is refused with the reason; `.ap`, `.strides` and `.offset` of it
work either way. A dtype reinterpretation is refused (the IR has none).
"""

from .. import errors, trace
from ..expr import ONE, ZERO, IndexExpr, Lin, SymInt
from ..program import Indirect, View
from ..tiles import DS, Tile
from . import access_patterns as patterns, refine
from .sizes import const as _const, integer as _int, mem_name as _mem_name, same as _same

# The names Tile.__getattr__ hands to an NkiTensor in the new dialect.
METHODS = ("ap", "slice", "select", "permute", "broadcast", "expand_dim", "squeeze_dim",
           "reshape_dim", "flatten_dims", "rearrange", "reshape", "view", "reinterpret_cast",
           "vector_select", "is_contiguous", "is_indirect", "get_pattern", "indirect", "strides",
           "offset", "size")


class Axis:
    """One axis of a view: `count` elements; `segs` the storage dims it steps through, outermost
    first, each (dim, size, step) with dim None for a broadcast axis no storage dim carries yet."""

    def __init__(self, count, segs):
        # (through the instance dict: program.Tensor.__init__ says why)
        d = self.__dict__
        d["count"] = count if count.__class__ is Lin else Lin.of(count)
        d["segs"] = segs

    def copy(self):
        return Axis(self.count, [tuple(s) for s in self.segs])


class NkiTensor(Tile):
    """A view of one tensor's storage, as a kernel of the new API sees it."""

    def __init__(self, base, starts, axes, indirect=None, why=None, flat=None):
        # (through the instance dict: program.Tensor.__init__ says why)
        d = self.__dict__
        d["_base"] = base  # program.Tensor
        d["_starts"] = [s if s.__class__ is Lin else Lin.of(s) for s in starts]  # per storage dim
        d["_axes"] = axes  # list of Axis (None: a flat-only view, see `why`)
        d["_indirect"] = indirect  # (storage dim, offsets View, lo, hi)
        d["_why"] = why  # why the IR cannot address this view (consuming it is refused)
        d["_flat"] = flat  # (shape, strides, offset) a flat-only view keeps
        refine.register(self)

    # ---- construction
    @staticmethod
    def of(x):
        if isinstance(x, NkiTensor):
            return x
        v = x._view
        t = v.tensor
        if t.fold or t.logical or t.nki_to_storage != list(range(len(t.shape))):
            raise errors.NkiError("'%s' has block dims or padded storage (legacy allocation); "
                                  "the new API's views address plain tensors" % t.name)
        dims = v.dims
        axes = [Axis(dims[d][1], [(d, dims[d][1], dims[d][2])]) for d in v.order]
        for a in v.units:
            axes.insert(a, Axis(1, []))
        ind = None
        if v.indirect is not None:
            ind = (v.indirect.dim, v.indirect.offsets, v.indirect.lo, v.indirect.hi)
        return NkiTensor(t, [d[0] for d in v.dims], axes, ind)

    def _derive(self, axes, starts=None, indirect="same"):
        return NkiTensor(self._base, self._starts if starts is None else starts, axes,
                         self._indirect if indirect == "same" else indirect)

    def _structured(self, what):
        if self._axes is None:
            self._resolve(what)
        return [a.copy() for a in self._axes]

    def _resolve(self, what):
        """A flat view (a reshape that splits a storage dim) as an access: its pattern mapped
        onto the storage dims, a tensor's dims split where it needs (refine.py)."""
        shape, strides, off = self._flat
        t = self._base
        if self._indirect is not None or any(_const(n) is None for n in shape):
            raise errors.NkiError("%s of '%s': %s" % (what, t.name, self._why))
        pairs = [(Lin.of(st), _const(n)) for st, n in zip(strides, shape)]

        def attempt(tt, dry):
            starts = patterns.split_offset(tt, Lin.of(off), what)
            return starts, patterns.map_pattern(tt, pairs, what, None, starts)

        try:
            self._starts, self._axes = refine.structure(t, attempt, pairs, self._why)
        except refine.Unmapped:
            raise errors.NkiError("%s of '%s': %s" % (what, t.name, self._why))
        self._flat = None

    def _contiguous_view(self):
        """A view kept as its pattern whose elements (per partition on chip) are one contiguous
        run of storage in row-major order, as the access of that run: for an instruction that
        pairs its operands' elements in row-major order (row_major below) the same elements in
        the same order, with no dim of the tensor split. None when it is not such a run."""
        shape, strides, off = self._flat
        if self._indirect is not None:
            return None
        sizes = [_const(n) for n in shape]
        steps = [_const(st) for st in strides]
        if None in sizes or None in steps:
            return None
        first = 1 if self._on_chip() else 0
        run = 1
        for n, st in reversed(list(zip(sizes[first:], steps[first:]))):
            if n != 1 and st != run:
                return None
            run *= n
        pairs = ([(Lin.of(steps[0]), sizes[0])] if first else []) + [(Lin.of(1), run)]
        t = self._base
        try:
            starts = patterns.split_offset(t, Lin.of(off), "a view")
            axes = patterns.map_pattern(t, pairs, "a view", None, starts)
        except errors.NkiError:
            return None
        return NkiTensor(t, starts, axes)._view

    def _on_chip(self):
        return self._base.mem != "hbm"

    def _vector(self):
        """Whether axis 0 is the rows of per-row run-time offsets (vector_select): it stays
        first and is not sliced, split or broadcast."""
        if self._indirect is None or not self._axes or not self._axes[0].segs:
            return False
        return self._axes[0].segs[0][0] == self._indirect[0] and self._axes[0].segs[0][2] == 0

    def _dim(self, dim, what, extra=0):
        n = len(self.shape) + extra
        d = _int(dim, what + ": dim")
        if d < 0:
            d += n
        if not 0 <= d < n:
            raise errors.NkiError("%s: dim %d of a %d-dimensional view of '%s'" %
                                  (what, dim, len(self.shape), self._base.name))
        return d

    # ---- the IR access
    @property
    def _view(self):
        axes = self._axes
        if axes is None:
            if getattr(trace.current(), "nki_row_major", False):
                v = self._contiguous_view()
                if v is not None:
                    return v
            self._resolve("an instruction's operand")
            axes = self._axes
        t = self._base
        on_chip = t.mem != "hbm"
        starts = self._starts
        # Axis k stepping through storage dim k alone, for every dim (most views: a tensor as
        # made, or sliced): the access in one pass. Else the general rule below.
        dims, order = [], []
        for a in axes:
            segs = a.segs
            if len(segs) != 1:
                break
            d, size, step = segs[0]
            if d != len(dims):
                break
            dims.append([starts[d], size if size.__class__ is Lin else Lin.of(size), step])
            order.append(d)
        else:
            if len(dims) == len(starts):
                return self._access(t, dims, order, on_chip)
        dims = [[s, ONE, 1] for s in starts]
        used = None  # the storage dims the axes step through, made at the first broadcast axis
        order = []
        for k, a in enumerate(axes):
            for d, size, step in a.segs:
                if d is None:
                    if used is None:
                        used = {e for b in axes for e, _, _ in b.segs if e is not None}
                        if self._indirect is not None:
                            used.add(self._indirect[0])  # a run-time offset's dim: no broadcast
                    free = [c for c in range(len(dims)) if c not in used and
                            (c > 0 or not on_chip)]
                    if not free:
                        # a size-1 dim appended to the tensor carries it (the same bytes)
                        refine.add_unit_dim(t, "axis %d of '%s' is broadcast and every storage "
                                               "dim is used by another axis: the IR's access "
                                               "broadcasts through a storage dim (step 0)" %
                                            (k, t.name))
                        starts = self._starts  # (add_unit_dim gave this view the new dim)
                        dims.append([Lin.of(0), Lin.of(1), 1])
                        free = [len(dims) - 1]
                    d = free[-1]
                    used.add(d)
                dims[d] = [starts[d], size if size.__class__ is Lin else Lin.of(size), step]
                order.append(d)
        return self._access(t, dims, order, on_chip)

    def _access(self, t, dims, order, on_chip):
        """The View of `_view`: its checks, the partition dim's place, run-time offsets."""
        if len(order) > 5:
            raise errors.NkiError("a view of '%s' steps through %d storage dims; an access has "
                                  "at most a partition and 4 free dims" % (t.name, len(order)))
        if on_chip and (not order or order[0] != 0):
            raise errors.NkiError("a view of on-chip '%s' must keep the partition dim first" %
                                  t.name)
        v = View(t, dims, order)
        # its .perm: the dropped dims after the partition dim (through the instance dict, as
        # program.View.__init__: every operand of every call makes one)
        v.__dict__["partition_leads"] = True
        if self._indirect is not None:
            d, offsets, lo, hi = self._indirect
            if isinstance(offsets, patterns.Shared):
                offsets = offsets.column(t, _const(ir_rows(v)))
            v.indirect = Indirect(d, offsets, lo, hi)
        return v

    # ---- attributes
    @property
    def shape(self):
        if self._axes is None:
            return tuple(SymInt.make(Lin.of(s)) for s in self._flat[0])
        return tuple(SymInt.make(a.count) for a in self._axes)

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        n = Lin.of(1)
        for s in self.shape:
            n = n.mul(Lin.of(s))
        return SymInt.make(n)

    @property
    def dtype(self):
        from ..dtypes import DType

        return DType(self._base.dtype)

    @property
    def name(self):
        return self._base.name

    @property
    def buffer(self):
        return buffer_of(self._base)

    def _storage_strides(self):
        shape = self._base.shape
        out = [Lin.of(1)] * len(shape)
        for d in range(len(shape) - 2, -1, -1):
            out[d] = out[d + 1].mul(shape[d + 1])
        return out

    def _axis_stride(self, k):
        a = self._axes[k]
        S = self._storage_strides()
        if a.segs:
            d, _, step = a.segs[-1]
            return Lin.of(0) if d is None or step == 0 else S[d].scale(step)
        # an added size-1 axis: the stride that keeps the view contiguous (as if inserted)
        return self._axis_stride(k + 1).mul(self._axes[k + 1].count) \
            if k + 1 < len(self._axes) else Lin.of(1)

    @property
    def strides(self):
        if self._axes is None:
            return tuple(SymInt.make(Lin.of(s)) for s in self._flat[1])
        return tuple(SymInt.make(self._axis_stride(k)) for k in range(len(self._axes)))

    @property
    def offset(self):
        if self._axes is None:
            return SymInt.make(Lin.of(self._flat[2]))
        S = self._storage_strides()
        off = Lin.of(0)
        for d, s in enumerate(self._starts):
            off = off.add(s.mul(S[d]))
        return SymInt.make(off)

    def get_pattern(self):
        """The view's access pattern [[stride, count], ...] (the get_pattern reference)."""
        return [[st, n] for st, n in zip(self.strides, self.shape)]

    def is_indirect(self):
        return self._indirect is not None

    def is_contiguous(self):
        """Each non-size-1 dim's stride is the product of the inner sizes; an on-chip view's
        partition dim is not counted (the is_contiguous reference)."""
        shape, strides = self.shape, self.strides
        inner = Lin.of(1)
        first = 1 if self._on_chip() else 0
        for k in range(len(shape) - 1, first - 1, -1):
            n = _int(shape[k], "is_contiguous: size")
            if n != 1:
                st = _const(strides[k])
                if st is None:
                    raise errors.NkiError("is_contiguous of '%s' needs its sizes known (--param)"
                                          % self._base.name)
                if st != _const(inner):
                    return False
            inner = inner.mul(Lin.of(shape[k]))
        return True

    def __repr__(self):
        return "NkiTensor(%s %s %s)" % (self._base.name, self._base.dtype, self.shape)

    # ---- indexing
    def __getitem__(self, idx):
        return getitem(self, idx)

    def __setitem__(self, idx, value):
        from ..tiles import assign

        assign(getitem(self, idx)._view, value)

    # ---- the 0.5 view methods
    def slice(self, dim, start, end, step=1):
        d = self._dim(dim, "slice")
        n = self.shape[d]
        if _const(start) is not None and _const(start) < 0 or \
                (_const(end) is not None and _const(n) is not None and _const(end) > _const(n)):
            raise errors.NkiError("slice: [%s, %s) is outside dim %d of size %s" %
                                  (start, end, d, n))
        return _apply(self, {d: slice(start, end, step)}, "slice")

    def select(self, dim, index):
        d = self._dim(dim, "select")
        if isinstance(index, Tile):
            return patterns.dynamic_select(self, d, index)
        if d == 0 and self._on_chip():
            raise errors.NkiError("select: dim 0 of on-chip '%s' is its partition dim, which a "
                                  "view keeps (index it with t[i:i+1] or t[i])" % self._base.name)
        return _apply(self, {d: index}, "select", drop=True)

    def permute(self, dims):
        dims = [self._dim(k, "permute") for k in dims]
        if sorted(dims) != list(range(self.ndim)):
            raise errors.NkiError("permute: %s is not a permutation of the %d dims of '%s'" %
                                  (tuple(dims), self.ndim, self._base.name))
        if self._on_chip() and dims[0] != 0:
            raise errors.NkiError("permute: on-chip '%s' keeps its partition dim first "
                                  "(dims[0] must be 0)" % self._base.name)
        if self._vector() and dims[0] != 0:
            raise errors.NkiError("permute: the indirect dim of '%s' stays first" %
                                  self._base.name)
        if self._axes is None:
            sh, st, off = self._flat
            return _flat(self, [sh[k] for k in dims], [st[k] for k in dims], off)
        axes = self._structured("permute")
        return self._derive([axes[k] for k in dims])

    def broadcast(self, dim, size):
        d = self._dim(dim, "broadcast")
        if _const(self.shape[d]) != 1:
            raise errors.NkiError("broadcast: dim %d of '%s' has size %s, not 1" %
                                  (d, self._base.name, self.shape[d]))
        if d == 0 and (self._on_chip() or self._vector()):
            raise errors.NkiError("broadcast: dim 0 of '%s' is its %s dim, which cannot be "
                                  "broadcast by a view" % (self._base.name, "partition" if
                                                           self._on_chip() else "indirect"))
        n = _int(size, "broadcast: size")
        if self._axes is None:
            sh, st, off = [list(x) for x in self._flat[:2]] + [self._flat[2]]
            sh[d], st[d] = n, 0
            return _flat(self, sh, st, off)
        axes = self._structured("broadcast")
        seg = axes[d].segs[-1][0] if axes[d].segs else None
        axes[d] = Axis(n, [(seg, n, 0)])
        return self._derive(axes)

    def expand_dim(self, dim):
        d = self._dim(dim, "expand_dim", extra=1)
        if d == 0 and (self._on_chip() or self._vector()):
            raise errors.NkiError("expand_dim: dim 0 of '%s' stays its partition/indirect dim" %
                                  self._base.name)
        if self._axes is None:
            sh, st, off = [list(x) for x in self._flat[:2]] + [self._flat[2]]
            sh.insert(d, 1)
            st.insert(d, Lin.of(st[d]).mul(Lin.of(sh[d + 1])) if d < len(st) else 1)
            return _flat(self, sh, st, off)
        axes = self._structured("expand_dim")
        axes.insert(d, Axis(1, []))
        return self._derive(axes)

    def squeeze_dim(self, dim):
        d = self._dim(dim, "squeeze_dim")
        if _const(self.shape[d]) != 1:
            raise errors.NkiError("squeeze_dim: dim %d of '%s' has size %s, not 1" %
                                  (d, self._base.name, self.shape[d]))
        if d == 0 and (self._on_chip() or self._vector()):
            raise errors.NkiError("squeeze_dim: dim 0 of '%s' stays its partition/indirect dim"
                                  % self._base.name)
        if self._axes is None:
            sh, st, off = self._flat
            return _flat(self, sh[:d] + sh[d + 1:], st[:d] + st[d + 1:], off)
        axes = self._structured("squeeze_dim")
        del axes[d]
        return self._derive(axes)

    def reshape_dim(self, dim, shape):
        d = self._dim(dim, "reshape_dim")
        sizes = _infer(list(shape), self.shape[d], "reshape_dim")
        if d == 0 and (self._on_chip() or self._vector()) and len(sizes) != 1:
            raise errors.NkiError("reshape_dim: dim 0 of '%s' is its partition/indirect dim" %
                                  self._base.name)
        new = list(self.shape[:d]) + sizes + list(self.shape[d + 1:])
        return _regroup(self, new, "reshape_dim")

    def flatten_dims(self, start_dim, end_dim):
        a = self._dim(start_dim, "flatten_dims")
        b = self._dim(end_dim, "flatten_dims")
        if a > b:
            raise errors.NkiError("flatten_dims: start_dim %d after end_dim %d" % (a, b))
        if a == 0 and (self._on_chip() or self._vector()):
            raise errors.NkiError("flatten_dims: dim 0 of '%s' is its partition/indirect dim" %
                                  self._base.name)
        strides, shape = self.strides, self.shape
        for k in range(a, b):
            if _const(shape[k]) != 1 and _const(shape[k + 1]) != 1 and not _same(
                    Lin.of(strides[k]), Lin.of(strides[k + 1]).mul(Lin.of(shape[k + 1]))):
                raise errors.NkiError("flatten_dims: dims %d and %d of '%s' are not contiguous "
                                      "in memory (strides %s)" % (k, k + 1, self._base.name,
                                                                  tuple(strides)))
        if self._axes is None:
            n = Lin.of(1)
            for k in range(a, b + 1):
                n = n.mul(Lin.of(shape[k]))
            sh, st, off = self._flat
            return _flat(self, list(sh[:a]) + [n] + list(sh[b + 1:]),
                         list(st[:a]) + [st[b]] + list(st[b + 1:]), off)
        axes = self._structured("flatten_dims")
        count = Lin.of(1)
        segs = []
        for k in range(a, b + 1):
            count = count.mul(axes[k].count)
            segs += [s for s in axes[k].segs if _const(s[1]) != 1]
        return self._derive(axes[:a] + [Axis(count, segs)] + axes[b + 1:])

    def reshape(self, shape):
        shape = list(shape) if isinstance(shape, (tuple, list)) else [shape]
        total = Lin.of(1)
        for s in self.shape:
            total = total.mul(Lin.of(s))
        sizes = _infer(shape, SymInt.make(total), "reshape")
        if (self._on_chip() or self._vector()) and not _same(sizes[0],
                                                                          self.shape[0]):
            raise errors.NkiError("reshape: on-chip '%s' keeps its partition dim (%s), not %s" %
                                  (self._base.name, self.shape[0], sizes[0]))
        return _regroup(self, sizes, "reshape")

    def rearrange(self, src_pattern, dst_pattern, fixed_sizes=None):
        """einops-style: split the grouped names of src_pattern, reorder to dst_pattern, merge
        its groups (the rearrange reference)."""
        fixed = dict(fixed_sizes or {})
        src = [p if isinstance(p, (tuple, list)) else (p,) for p in src_pattern]
        if len(src) != len(self.shape):
            raise errors.NkiError("rearrange: %d names in the source pattern for %d dims" %
                                  (len(src), len(self.shape)))
        v = self
        at = 0
        names = []
        for group in src:
            if len(group) > 1:
                v = v.reshape_dim(at, tuple(fixed.get(n, -1) for n in group))
            names += list(group)
            at += len(group)
        if len(set(names)) != len(names):
            raise errors.NkiError("rearrange: a name repeats in %r" % (src_pattern,))
        dst = [p if isinstance(p, (tuple, list)) else (p,) for p in dst_pattern]
        flat = [n for g in dst for n in g]
        if sorted(flat) != sorted(names):
            raise errors.NkiError("rearrange: %r and %r name different dims" %
                                  (src_pattern, dst_pattern))
        v = v.permute(tuple(names.index(n) for n in flat))
        at = 0
        for g in dst:
            if len(g) > 1:
                v = v.flatten_dims(at, at + len(g) - 1)
            at += 1
        return v

    def view(self, dtype):
        return _reinterpret(self, dtype, "view")

    def reinterpret_cast(self, dtype):
        return _reinterpret(self, dtype, "reinterpret_cast")

    def vector_select(self, dim, vector_offset):
        d = self._dim(dim, "vector_select")
        if d != 0:
            raise errors.NkiError("vector_select: dim must be 0, not %d" % d)
        if self._on_chip():
            raise errors.NkiError("vector_select: '%s' is in %s; per-partition indirect "
                                  "addressing reads HBM only" % (self._base.name,
                                                                 _mem_name(self._base.mem)))
        if self._indirect is not None:
            raise errors.NkiError("vector_select: '%s' is already indirectly addressed (one "
                                  "dynamic select per view)" % self._base.name)
        axes = self._structured("vector_select")
        if len(axes[0].segs) != 1 or axes[0].segs[0][2] != 1 or axes[0].segs[0][0] is None:
            raise errors.NkiError("vector_select: dim 0 of this view of '%s' does not step "
                                  "through one storage dim by 1 (%s)" %
                                  (self._base.name, self.get_pattern()))
        s = axes[0].segs[0][0]
        try:
            return patterns.vector_offsets(self, axes, s, vector_offset, "vector_select")
        except refine.Merged:  # the tensor's leading dims merged for the rows: again
            return self.vector_select(dim, vector_offset)

    def indirect(self, index, num_elem=None):
        raise errors.NkiError("tensor.indirect (Tensor Indirection, NeuronCore-v4) is not "
                              "modelled")

    def ap(self, pattern, offset=None, scalar_offset=None, vector_offset=None, indirect_dim=0,
           dtype=None):
        return patterns.access_pattern(self, pattern, offset, scalar_offset, vector_offset,
                              indirect_dim, dtype)


class row_major:
    """`with row_major():` an instruction that pairs its operands' elements in row-major order
    (an element-wise copy: the IR's rule is the same partitions and free size) reads a view kept
    as its pattern whose elements are one contiguous run as that run, so the tensor keeps its
    declared shape (views that step twice through a dim are otherwise split, refine.py)."""

    # (the flag and the saved value are written through the instance dicts: a write to a
    # sealed object looks at the caller's frame, sandbox._seal, and every tensor_copy enters)
    def __enter__(self):
        tr = trace.current()
        self.__dict__["_prev"] = getattr(tr, "nki_row_major", False)
        tr.__dict__["nki_row_major"] = True

    def __exit__(self, *exc):
        trace.current().__dict__["nki_row_major"] = self._prev
        return False


def maps_as_is(x):
    """Whether x is one IR access without a dim of its tensor split (a view kept as its
    pattern, views that are not NkiTensors and structured views are)."""
    if not isinstance(x, NkiTensor) or x._axes is not None:
        return True
    shape, strides, off = x._flat
    if x._indirect is not None or any(_const(n) is None for n in shape):
        return False
    pairs = [(Lin.of(st), _const(n)) for st, n in zip(strides, shape)]
    try:
        starts = patterns.split_offset(x._base, Lin.of(off), "a view")
        patterns.map_pattern(x._base, pairs, "a view", None, starts)
    except errors.NkiError:
        return False
    return True


def ir_axes(x, axis, call):
    """The axes of x's IR access that the view's axes `axis` are (a call that takes axes reads
    the access): an axis merged from several storage dims is several, an added size-1 axis
    none."""
    if not isinstance(x, NkiTensor):
        return axis
    if x._axes is None:  # a view kept as its pattern: the access it is, to read its axes
        x._resolve(call)
    axes = x._axes
    counts = [max(1, len(a.segs)) if a.segs else 0 for a in axes]
    if all(c == 1 for c in counts):
        return axis
    rank = len(axes)
    wanted = [axis] if isinstance(axis, int) else list(axis)
    wanted = sorted(_int(a, call + ": axis") % rank for a in wanted)
    for k in wanted:
        if counts[k] == 0:
            # an added size-1 axis the call names: a size-1 dim appended to the tensor (the
            # same bytes) carries it, so the access has it (a reduce over it reads one element)
            refine.add_unit_dim(x._base, "%s: axis %d of this view of '%s' is an added size-1 "
                                "dim, which its access does not have" % (call, k, x.name))
            axes[k] = Axis(1, [(len(x._base.shape) - 1, Lin.of(1), 1)])
            counts[k] = 1
    starts = [sum(counts[:k]) for k in range(rank)]
    return [starts[k] + j for k in wanted for j in range(counts[k])]


def owned(tile):
    """A tensor nl.ndarray (and nl.zeros, ...) made: the kernel holds it only as an NkiTensor,
    so its dims may be split (refine.py) with every view of it rewritten."""
    tile._view.tensor.__dict__["nki_owned"] = True  # (as program.Tensor.__init__)
    return NkiTensor.of(tile)


def owned_tensor(t):
    """owned() of the whole of tensor t (nl.ndarray's result), made without the full view that
    NkiTensor.of would read it from: the same starts and axes."""
    shape = t.shape
    if t.fold or t.logical or t.nki_to_storage != list(range(len(shape))):
        return owned(Tile(t.full_view()))  # (NkiTensor.of refuses it, saying why)
    t.__dict__["nki_owned"] = True  # (as program.Tensor.__init__)
    return NkiTensor(t, [ZERO] * len(shape), [Axis(n, [(d, n, 1)]) for d, n in enumerate(shape)])


def ir_rows(v):
    """The rows of an IR access (model/interp place_view): the size of its first dim in the
    `.perm` the printer writes (program.View.perm: dropped dims first, after the partition dim
    on chip), or of storage dim 0 without a perm. Run-time offsets come one per row."""
    perm = v.perm() or list(range(len(v.dims)))
    return v.dims[perm[0]][1]


def buffer_of(t):
    """The buffer object (nl.sbuf, nl.psum, nl.shared_hbm, nl.private_hbm) of a tensor. A
    kernel argument is in `nl.hbm` (an alias of private_hbm in the 0.6 reference): the SDK's
    MX deep-dive kernels assert `stationary_hbm.buffer == moving_hbm.buffer == nl.hbm` of their
    inputs (aws-neuron-sdk nki/deep-dives/src/mxfp-matmul/mx_kernels.py, lines 157 and 219).
    Outputs and other nl.shared_hbm tensors are shared_hbm."""
    from . import language as nl

    if t.mem == "sbuf":
        return nl.sbuf
    if t.mem == "psum":
        return nl.psum
    return nl.private_hbm if t.role in ("scratch", "input") else nl.shared_hbm


def attribute(tile, name):
    """Tile.__getattr__ in the new dialect: the NkiTensor attribute or method `name`."""
    if name not in METHODS:
        raise AttributeError(name)
    return getattr(NkiTensor.of(tile), name)


# ------------------------------------------------------------------ indexing

def getitem(tile, idx):
    """t[idx] by the new API's rules (the __getitem__ reference): ints, slices with a positive
    step, `...`, negative indices and nl.ds; an integer on an on-chip tensor's dim 0 keeps a
    size-1 partition dim, and the result keeps at least 2 dims on chip (1 in HBM)."""
    v = NkiTensor.of(tile)
    rank = len(v.shape)
    if not isinstance(idx, tuple):
        idx = (idx,)
    if sum(1 for i in idx if i is Ellipsis) > 1:
        raise errors.NkiError("an index with more than one '...'")
    if any(i is Ellipsis for i in idx):
        k = next(n for n, i in enumerate(idx) if i is Ellipsis)
        idx = idx[:k] + (slice(None),) * (rank - len(idx) + 1) + idx[k + 1:]
    if len(idx) > rank:
        raise errors.NkiError("%d indices for '%s' of rank %d" % (len(idx), v.name, rank))
    for i in idx:
        if isinstance(i, (Tile, IndexExpr)):
            raise errors.NkiError("indexing '%s' with a %s: the new API indexes with integers, "
                                  "slices and nl.ds (run-time indices: .select, "
                                  ".vector_select, .ap(vector_offset=))" %
                                  (v.name, "tensor" if isinstance(i, Tile) else "nl.arange grid"))
    return _apply(v, dict(enumerate(idx)), "index", drop=True, keep_partition=True)


def _apply(v, by_axis, what, drop=False, keep_partition=False):
    if v._axes is None:
        return _flat_apply(v, by_axis, what, drop, keep_partition)
    axes = v._structured(what)
    starts = list(v._starts)
    dropped = []
    for k, i in sorted(by_axis.items()):
        a = axes[k]
        n = a.count
        if isinstance(i, slice):
            axes[k] = _slice_axis(v, k, a, i, starts, what)
        elif isinstance(i, DS):
            axes[k] = _slice_axis(v, k, a, slice(i.start, i.start.add(i.size), 1), starts, what,
                                  size=i.size)
        else:
            lin = _index(v, k, n, i, what)
            axes[k] = _slice_axis(v, k, a, slice(lin, lin.add(Lin.of(1)), 1), starts, what,
                                  size=Lin.of(1))
            if drop and not (keep_partition and k == 0 and v._on_chip()):
                dropped.append(k)
    if v._vector() and 0 in by_axis and not (
            isinstance(by_axis[0], slice) and by_axis[0] == slice(None)):
        raise errors.NkiError("%s: dim 0 of '%s' is indirectly addressed; it cannot be sliced "
                              "or selected" % (what, v.name))
    least = 2 if v._on_chip() else 1
    while dropped and len(axes) - len(dropped) < least:
        dropped.pop()  # the last dim indexed stays, size 1
    axes = [a for k, a in enumerate(axes) if k not in dropped]
    return NkiTensor(v._base, starts, axes, v._indirect)


def _bounds(n, sl, what, size=None):
    """(start, count, step) of slice sl of a dim of n elements (Python's rules when known)."""
    step = 1 if sl.step is None else sl.step
    if not isinstance(step, int) or isinstance(step, bool) or step <= 0:
        raise errors.NkiError("%s: a slice step must be a positive integer, not %r" %
                              (what, sl.step))
    lo = Lin.of(0) if sl.start is None else Lin.of(sl.start)
    hi = n if sl.stop is None else Lin.of(sl.stop)
    nc = _const(n)
    if nc is not None and size is None:
        clo, chi = _const(lo), _const(hi)
        if clo is not None and chi is not None:  # Python's rules: negatives, clamping
            clo, chi, _ = slice(clo, chi, step).indices(nc)
            lo, hi = Lin.of(clo), Lin.of(max(chi, clo))
    for b in (lo, hi):
        if b.is_const() and b.const < 0:
            raise errors.NkiError("%s: a negative slice bound into a dim of symbolic size" % what)
    count = size if size is not None else hi.sub(lo)
    if step > 1:
        count = count.add(Lin.of(step - 1)).floordiv(step)
    return lo, count, step


def _flat_apply(v, by_axis, what, drop, keep_partition):
    """Indexing of a flat view (a reshape not yet an access): its shape, strides and offset."""
    shape = [Lin.of(x) for x in v._flat[0]]
    strides = [Lin.of(x) for x in v._flat[1]]
    off = Lin.of(v._flat[2])
    dropped = []
    for k, i in sorted(by_axis.items()):
        if isinstance(i, (slice, DS)):
            sl = i if isinstance(i, slice) else slice(i.start, i.start.add(i.size), 1)
            lo, count, step = _bounds(shape[k], sl, what, None if isinstance(i, slice) else
                                      i.size)
            off = off.add(lo.mul(strides[k]))
            shape[k], strides[k] = count, strides[k].scale(step)
            continue
        lin = _index(v, k, shape[k], i, what)
        off = off.add(lin.mul(strides[k]))
        shape[k] = Lin.of(1)
        if drop and not (keep_partition and k == 0 and v._on_chip()):
            dropped.append(k)
    least = 2 if v._on_chip() else 1
    while dropped and len(shape) - len(dropped) < least:
        dropped.pop()
    keep = [k for k in range(len(shape)) if k not in dropped]
    return _flat(v, [shape[k] for k in keep], [strides[k] for k in keep], off)


def _flat(v, shape, strides, off):
    return NkiTensor(v._base, v._starts, None, v._indirect, v._why,
                     (list(shape), list(strides), off))


def _index(v, k, n, i, what):
    """An integer index into dim k (n elements): negative counts from the end."""
    try:
        lin = Lin.of(i)
    except TypeError:
        raise errors.NkiError("%s: an index of type %s into '%s'" % (what, type(i).__name__,
                                                                     v.name))
    nc = _const(n)
    if lin.is_const() and lin.const < 0:
        if nc is None:
            raise errors.NkiError("%s: a negative index into a dim of symbolic size" % what)
        lin = Lin.of(lin.const + nc)
    c = _const(lin)
    if c is not None and nc is not None and not 0 <= c < nc:
        raise errors.NkiError("%s: index %d is outside dim %d of '%s' (size %d)" %
                              (what, c, k, v.name, nc))
    return lin


def _slice_axis(v, k, a, sl, starts, what, size=None):
    """Axis a restricted to sl (start, stop, positive step), moving the storage starts."""
    lo, count, step = _bounds(a.count, sl, what, size)
    if not a.segs:
        return Axis(count, [])
    if len(a.segs) == 1:
        d, _, st = a.segs[0]
        if d is not None:
            starts[d] = starts[d].add(lo.scale(st))
        return Axis(count, [(d, count, st * step)])
    # An axis merged from several storage dims: the slice must fall on whole inner blocks.
    inner = Lin.of(1)
    for _, s, _ in a.segs[1:]:
        inner = inner.mul(Lin.of(s))
    ci, cc = _const(inner), _const(count)
    lo_e = trace.current().evaluate(lo)
    whole = ci is not None and lo_e.mod(ci) == Lin.of(0)  # lo is a multiple of the inner rows
    if step == 1 and whole and cc is not None and cc % ci == 0:
        d, _, st = a.segs[0]
        starts[d] = starts[d].add(lo_e.floordiv(ci).scale(st))
        return Axis(count, [(d, cc // ci, st)] + a.segs[1:])
    last = _const(a.segs[-1][1])
    r = lo_e.mod(last) if last is not None else None
    if cc is not None and r is not None and r.is_const() and \
            r.const + step * (cc - 1) < last and \
            all(_const(n) is not None for _, n, _ in a.segs[:-1]):
        # Within one row of the innermost merged dim: the outer ones at one index each (the
        # mixed radix of lo's row), the innermost sliced.
        row = lo_e.floordiv(last)
        for d, n, st in reversed(a.segs[:-1]):
            starts[d] = starts[d].add(row.mod(_const(n)).scale(st))
            row = row.floordiv(_const(n))
        d, _, st = a.segs[-1]
        starts[d] = starts[d].add(r.scale(st))
        return Axis(count, [(d, count, st * step)])
    sizes = tuple(_const(n) for _, n, _ in a.segs)
    span = ""
    if ci is not None and cc is not None and lo_e.is_const():
        span = " (elements %d..%d, step %d, in rows of %d)" % (
            lo_e.const, lo_e.const + step * (cc - 1), step, ci)
    why = v._base.__dict__.get("split_why")
    raise errors.NkiError(
        "%s: dim %d of this view of '%s' steps through its storage dims %s of sizes %s; this "
        "slice%s neither covers whole rows of the inner dims from a row's start nor stays within "
        "one row, so it is no single (start, size, step) per storage dim, which is what the IR's "
        "access has%s" %
        (what, k, v.name, [d for d, _, _ in a.segs], sizes, span,
         "; " + "; ".join(why[-2:]) if why else ""))


def _infer(shape, total, what):
    """A shape with at most one -1, its product checked against total."""
    sizes = []
    unknown = [k for k, s in enumerate(shape) if not isinstance(s, SymInt) and s == -1]
    if len(unknown) > 1:
        raise errors.NkiError("%s: more than one -1 in %r" % (what, tuple(shape)))
    known = Lin.of(1)
    for k, s in enumerate(shape):
        if k not in unknown:
            known = known.mul(Lin.of(s))
    if unknown:
        t, kn = _const(total), _const(known)
        if t is None or kn is None or kn == 0 or t % kn:
            raise errors.NkiError("%s: -1 in %r cannot be inferred from %s elements" %
                                  (what, tuple(shape), total))
    for k, s in enumerate(shape):
        sizes.append(SymInt.make(Lin.of(_const(total) // _const(known))) if k in unknown else s)
    prod = Lin.of(1)
    for s in sizes:
        prod = prod.mul(Lin.of(s))
    if not _same(prod, total):
        raise errors.NkiError("%s: %r has %s elements, the view %s" %
                              (what, tuple(shape), prod.text(), Lin.of(total).text()))
    return sizes


def _regroup(v, sizes, what):
    """The view with its axes regrouped to `sizes` (row-major order kept): each new axis made of
    consecutive storage-dim runs adjacent in memory; an on-chip view keeps its partition axis. A
    size that splits one storage dim gives a view the IR cannot address (kept flat, for .ap and
    the attributes)."""
    keep = 1 if v._on_chip() or v._vector() else 0
    if v._axes is not None:
        axes = v._structured(what)
        out = _regroup_axes(v, axes[keep:], sizes[keep:])
        if out is not None:
            return v._derive(axes[:keep] + out)
    if not v.is_contiguous():
        raise errors.NkiError("%s of '%s' to %s: the view is not contiguous (strides %s)" %
                              (what, v.name, tuple(sizes), tuple(v.strides)))
    st, strides = Lin.of(1), []
    for s in reversed(sizes):
        strides.insert(0, st)
        st = st.mul(Lin.of(s))
    if keep:
        strides[0] = Lin.of(v.strides[0])
    why = ("%s to %s splits a storage dim of '%s' (shape %s) into several axes, and the IR's "
           "access has one start, size and step per storage dim" %
           (what, tuple(sizes), v.name, tuple(SymInt.make(s) for s in v._base.shape)))
    return NkiTensor(v._base, v._starts, None, v._indirect, why,
                     (list(sizes), strides, Lin.of(v.offset)))


def _regroup_axes(v, axes, sizes):
    runs = [s for a in axes for s in a.segs if _const(s[1]) != 1]
    S = v._storage_strides()
    out, at = [], 0
    for size in sizes:
        if _const(size) == 1:
            out.append(Axis(1, []))
            continue
        segs, n = [], Lin.of(1)
        while at < len(runs) and not _same(n, size):
            segs.append(runs[at])
            n = n.mul(Lin.of(runs[at][1]))
            at += 1
        if not _same(n, size):
            return None
        for (d1, _, st1), (d2, n2, st2) in zip(segs, segs[1:]):
            if d1 is None or d2 is None or st1 == 0 or st2 == 0 or \
                    not _same(S[d1].scale(st1), S[d2].scale(st2).mul(Lin.of(n2))):
                return None
        out.append(Axis(size, segs))
    return out if at == len(runs) else None


# The unsigned integer type of each MX packed dtype's size: the host hands packed MX data as such
# words (the MX deep dive: "we mimic the packed data using uint ... and simply view it as
# MXFP_x4 in the kernel").
_PACKED_CARRIER = {"fp8_e4m3fn_x4": "uint32", "fp8_e5m2_x4": "uint32", "fp4_e2m1fn_x4": "uint16"}


def _retype_packed_input(t, name):
    """`.ap(dtype=<MX x4 type>)` of a kernel input of the same element size that nothing has
    read yet: the input is declared with the packed dtype instead (the same bytes; every view
    of it, the kernel's argument too, sees the packed dtype from here on). Any other
    reinterpretation is refused: the IR has none."""
    if _PACKED_CARRIER.get(name) != t.dtype or t.role != "input" or t.mem != "hbm":
        return False
    if t.producers or getattr(t, "read_elsewhere", False):
        return False
    t.dtype = name
    return True


def _reinterpret(v, dtype, what):
    from ..dtypes import normalize

    name = normalize(dtype).name
    if name == v._base.dtype:
        return v
    if _retype_packed_input(v._base, name):
        return v
    raise errors.NkiError("%s(%s) of '%s' (%s): the IR has no reinterpretation of a tensor's "
                          "bytes as another dtype" % (what, name, v.name, v._base.dtype))

"""Tiles as the kernel sees them: indexing (ints, slices, nl.ds, index grids), assignment, and
the in-place `+=` of matmul accumulation.

Assignment `dst[...] = result` retargets the instruction that produced a fresh result so that it
writes `dst` directly (one instruction, as the NKI compiler emits it); any other assignment is a
copy (a DMA when either side is in HBM, else a Vector tensor_copy).
"""

from . import errors, rules, trace
from .dtypes import DType
from .expr import IndexExpr, Lin, SymInt
from .program import Indirect, View


class DS:
    """nl.ds(start, size): a dynamic slice."""

    def __init__(self, start, size):
        self.start, self.size = Lin.of(start), Lin.of(size)


class Tile:
    def __init__(self, view):
        # (through the instance dict, as program.Tensor.__init__: a tile per call result)
        self.__dict__["_view"] = view

    # ---- what a kernel reads
    @property
    def shape(self):
        return self._view.shape

    @property
    def dtype(self):
        return DType(self._view.tensor.dtype)

    @property
    def buffer(self):
        if _new_dialect():  # the buffer object the kernel compares with (nl.sbuf, ...)
            from .newapi import views

            return views.buffer_of(self._view.tensor)
        return self._view.tensor.mem

    @property
    def ndim(self):
        return len(self._view.order)

    @property
    def name(self):
        return self._view.tensor.name

    def __len__(self):
        s = self.shape[0]
        if isinstance(s, SymInt):
            raise errors.NkiError("len() of a tile whose first dim is symbolic (%s)" % s)
        return s

    def __iter__(self):
        raise errors.NkiError("a tile cannot be iterated in Python; index it with a loop "
                              "variable")

    def __bool__(self):
        # A kernel argument is a handle to an HBM tensor: `if arg:` tests that the caller passed
        # one (Python's truth of a non-empty object), never the values in HBM (the vendor's
        # tensor_scalar_cumulative example: `nl.load(imm1) if imm1 else None`).
        t = self._view.tensor
        if t.mem == "hbm" and t.role == "input":
            return True
        # A branch on tensor values: data-dependent, decided per run on the device, and the
        # program has no branch (loop splitting covers conditions on loop variables only).
        raise errors.NkiError("a tile has no truth value: this branch depends on tensor values, "
                              "which are only known on the device (select with "
                              "nisa.affine_select / a mask, or compute both sides)")

    def __getattr__(self, name):
        # The new API's NkiTensor methods and attributes (.ap, .slice, .strides, ...;
        # newapi/views.py); the legacy API has none of them.
        if name.startswith("_"):
            raise AttributeError(name)
        from .newapi import views

        if not _new_dialect():
            if name in views.METHODS:  # a kernel of today's API traced as legacy: say why
                raise errors.NkiError(
                    "'.%s' is a tensor method of today's API (`import nki`, NKI 0.2-0.6); this "
                    "kernel is traced with the legacy neuronxcc.nki API, whose tensors have "
                    "none, because it or a module it imports imports neuronxcc (other than "
                    "neuronxcc.nki.typing)" % name)
            raise AttributeError(name)

        return views.attribute(self, name)

    # ---- indexing
    def __getitem__(self, idx):
        if _new_dialect():  # the new API's indexing rules (newapi/views.py)
            from .newapi import views

            return views.getitem(self, idx)
        return Tile(index_view(self._view, idx))

    def __setitem__(self, idx, value):
        if _new_dialect():
            from .newapi import views

            assign(views.getitem(self, idx)._view, value)
            return
        assign(index_view(self._view, idx), value)

    def _inplace(self, other, op):
        from . import ops

        if isinstance(other, Tile) and other._view.tensor.producers and \
                other._view.tensor.producers[0].op == "matmul" and op == "add":
            accumulate_matmul(self._view, other._view)
            return Accumulated(self._view)
        ops.binary(op, self, other, out=self._view)
        return Accumulated(self._view)

    def __iadd__(self, o):
        return self._inplace(o, "add")

    def __isub__(self, o):
        return self._inplace(o, "subtract")

    def __imul__(self, o):
        return self._inplace(o, "multiply")

    def __itruediv__(self, o):
        return self._inplace(o, "divide")

    # ---- arithmetic builds instructions
    def _bin(self, op, o, reverse=False):
        from . import ops

        if reverse:
            return ops.binary(op, o, self, operator=True)
        return ops.binary(op, self, o, operator=True)

    def __add__(self, o):
        return self._bin("add", o)

    def __radd__(self, o):
        return self._bin("add", o, True)

    def __sub__(self, o):
        return self._bin("subtract", o)

    def __rsub__(self, o):
        return self._bin("subtract", o, True)

    def __mul__(self, o):
        return self._bin("multiply", o)

    def __rmul__(self, o):
        return self._bin("multiply", o, True)

    def __truediv__(self, o):
        return self._bin("divide", o)

    def __rtruediv__(self, o):
        return self._bin("divide", o, True)

    def __neg__(self):
        return self._bin("multiply", -1.0)

    def __pow__(self, o):
        return self._bin("pow", o)

    def __gt__(self, o):
        return self._bin("is_gt", o)

    def __ge__(self, o):
        return self._bin("is_ge", o)

    def __lt__(self, o):
        return self._bin("is_lt", o)

    def __le__(self, o):
        return self._bin("is_le", o)

    __hash__ = object.__hash__

    # ---- views without instructions
    def broadcast_to(self, shape):
        return Tile(broadcast_view(self._view, shape))

    def reshape(self, shape):
        if _new_dialect():
            from .newapi import views

            return views.NkiTensor.of(self).reshape(shape)
        return Tile(reshape_view(self._view, shape))

    def view_as(self, dtype):
        raise errors.NkiError("reinterpreting a tile's dtype is not modelled")

    def __repr__(self):
        return "Tile(%s %s %s)" % (self._view.tensor.name, self._view.tensor.dtype, self.shape)


class Accumulated(Tile):
    """What `tile += x` returns: the same tile, the update already recorded. Python then either
    rebinds the name to it (`acc += ...`) or assigns it back (`acc[i] += ...`: a no-op)."""


def _new_dialect():
    """Whether the kernel being traced is written in the new API (`import nki`)."""
    return trace._current is not None and trace._current.dialect == "nki"


def as_view(x, what="operand"):
    if isinstance(x, Tile):
        return x._view
    if isinstance(x, View):
        return x
    raise errors.NkiError("%s must be a tile, got %s" % (what, type(x).__name__))


def _normalize_index(idx, rank):
    if not isinstance(idx, tuple):
        idx = (idx,)
    if any(i is Ellipsis for i in idx):
        k = idx.index(Ellipsis)
        fill = rank - (len(idx) - 1)
        idx = idx[:k] + (slice(None),) * fill + idx[k + 1:]
    if len(idx) > rank:
        raise errors.NkiError("%d indices for a tile of rank %d" % (len(idx), rank))
    return idx + (slice(None),) * (rank - len(idx))


def index_view(view, idx):
    """The access `view[idx]`: one index per dim of the tile (NKI order)."""
    rank = len(view.order)
    idx = _normalize_index(idx, rank)
    if any(isinstance(i, Tile) for i in idx):
        return _indirect_view(view, idx)
    dims = [list(d) for d in view.dims]
    t = view.tensor
    if any(isinstance(i, IndexExpr) for i in idx):
        return _index_grid(view, dims, idx)
    order, dropped = [], []
    for k, i in enumerate(idx):
        s = view.order[k]
        start, size, step = dims[s]
        if isinstance(i, slice):
            a = Lin.of(0) if i.start is None else Lin.of(i.start)
            b = size if i.stop is None else Lin.of(i.stop)
            c = 1 if i.step is None else i.step
            if not isinstance(c, int) or c <= 0:
                raise errors.NkiError("slice step must be a positive integer")
            if (a.is_const() and a.const < 0) or (b.is_const() and b.const < 0):
                raise errors.NkiError("negative slice bounds are not supported; use explicit "
                                      "indices")
            n = b.sub(a)
            if c > 1:
                n = n.add(Lin.of(c - 1)).floordiv(c)
            dims[s] = [start.add(a.scale(step)), n, step * c]
            order.append(s)
        elif isinstance(i, DS):
            dims[s] = [start.add(i.start.scale(step)), i.size, step]
            order.append(s)
        else:
            try:
                lin = Lin.of(i)
            except TypeError:
                raise errors.NkiError("index of type %s into tile '%s' is not supported" %
                                      (type(i).__name__, t.name))
            dims[s] = [start.add(lin.scale(step)), Lin.of(1), step]
            if t.mem != "hbm" and not 1 <= s <= t.nblock:
                dropped.append(s)
    # An on-chip tile keeps a partition axis and at least one free axis: `buf[:, i]` of a
    # [P, n] buffer is a [P, 1] tile, while `buf[:, j, :]` of [P, m, n] is [P, n].
    while dropped and len(order) < 2:
        order.append(dropped.pop())
        order.sort()
    return View(t, dims, order)


def _indirect_view(view, idx):
    """`t[idx_tile, ...]`: indirect addressing, a DMA whose rows are gathered from (or scattered
    to) the rows of an HBM tensor named by integers held on chip. The index tile [R, 1] (int32
    or uint32, one index per partition) picks the row of the indexed dim for each of the R rows
    of the access, which become the tile's partitions; the other indices select within each row
    as usual. Every index read is checked by the interpreter against the tensor (the NKI
    simulator's behaviour and the hardware's `oob_mode.error`)."""
    t = view.tensor
    at = [k for k, i in enumerate(idx) if isinstance(i, Tile)]
    if len(at) > 1:
        raise errors.NkiError("more than one index tile into '%s': indirect addressing offsets "
                              "one dim" % t.name)
    k = at[0]
    if t.mem != "hbm":
        raise errors.NkiError("an index tile into '%s' (in %s): indirect addressing reads or "
                              "writes HBM only" % (t.name, t.mem))
    if any(not isinstance(i, int) for i in idx[:k]):
        raise errors.NkiError("the index tile into '%s' must index its first non-scalar dim: "
                              "its rows become the tile's partitions" % t.name)
    offsets = idx[k]._view
    if offsets.tensor.mem == "hbm":
        raise errors.NkiError("the index tile into '%s' is in HBM; load the indices on chip "
                              "first (nl.load)" % t.name)
    if offsets.tensor.dtype not in ("int32", "uint32"):
        raise errors.NkiError("the index tile into '%s' is %s; indirect indices are int32 or "
                              "uint32" % (t.name, offsets.tensor.dtype))
    shape = offsets.logical_lins()
    if len(shape) != 2 or shape[1] != Lin.of(1):
        raise errors.NkiError("the index tile into '%s' has shape %s; it must be [rows, 1]: one "
                              "index per partition" % (t.name, tuple(offsets.shape)))
    s = view.order[k]
    size = view.dims[s][1]
    if not size.is_const():
        raise errors.NkiError("indirect addressing into '%s' needs the size of its dim %d fixed "
                              "(give it with --shape): the indices read are checked against it" %
                              (t.name, k))
    rest = list(idx)
    rest[k] = 0  # the indexed dim: placed below, its position taken from the offsets
    out = index_view(view, tuple(rest))
    dims = [list(d) for d in out.dims]
    dims[s] = [view.dims[s][0], shape[0], 0]
    order = [s] + [d for d in out.order if d != s]
    res = View(t, dims, order)
    res.indirect = Indirect(s, offsets, 0, size.const - 1)
    return res


def _index_grid(view, dims, idx):
    """Advanced indexing with nl.arange / nl.mgrid grids: tile axis a -> tensor dim."""
    t = view.tensor
    nd = max(len(i.shape) for i in idx if isinstance(i, IndexExpr))
    axis_of = {}
    scalars = []
    for k, i in enumerate(idx):
        s = view.order[k]
        start, size, step = dims[s]
        if isinstance(i, slice) and i == slice(None):
            raise errors.NkiError("mixing ':' with index grids is not supported; index every "
                                  "dim with nl.arange grids")
        if isinstance(i, IndexExpr):
            off = nd - len(i.shape)
            axes = [a for a, c in i.coefs.items() if c]
            if len(axes) > 1:
                raise errors.NkiError("an index that combines two grid axes is not affine in "
                                      "one dim (tile '%s')" % t.name)
            if not axes:
                dims[s] = [start.add(i.base.scale(step)), Lin.of(1), step]
                scalars.append(s)
                continue
            a = axes[0]
            c = i.coefs[a]
            if c <= 0:
                raise errors.NkiError("a grid index with a negative or zero step")
            if (a + off) in axis_of:
                raise errors.NkiError("one grid axis indexes two dims of '%s'" % t.name)
            axis_of[a + off] = s
            dims[s] = [start.add(i.base.scale(step)), Lin.of(i.shape[a]), step * c]
        else:
            dims[s] = [start.add(Lin.of(i).scale(step)), Lin.of(1), step]
            scalars.append(s)
    order, units = [], []
    for a in range(nd):
        if a in axis_of:
            order.append(axis_of[a])
        elif scalars:
            order.append(scalars.pop(0))
        elif t.mem == "hbm":
            units.append(a)  # e.g. axis 1 of nl.arange(n)[:, None] into a rank-1 tensor
        else:
            raise errors.NkiError("grid axis %d indexes no dim of '%s'" % (a, t.name))
    return View(t, dims, order, units)


def broadcast_view(view, shape):
    view.refuse_indirect("broadcast_to")
    shape = list(shape)
    if len(shape) != len(view.order):
        raise errors.NkiError("broadcast_to %s from rank %d" % (tuple(shape), len(view.order)))
    dims = [list(d) for d in view.dims]
    for k, s in enumerate(view.order):
        want = Lin.of(shape[k])
        if dims[s][1] == want:
            continue
        if dims[s][1] != Lin.of(1):
            raise errors.NkiError("broadcast_to: dim %d has size %s, not 1" % (k, dims[s][1]))
        if k == 0 and view.tensor.mem != "hbm":
            raise errors.NkiError("broadcast along the partition dim is not a view (it needs a "
                                  "copy across partitions)")
        dims[s] = [dims[s][0], want, 0]
    return View(view.tensor, dims, list(view.order))


def reshape_view(view, shape):
    raise errors.NkiError("reshape of '%s' to %s needs a second view of one buffer, which the IR "
                          "does not have" % (view.tensor.name, tuple(shape)))


def assign(target, value):
    tr = trace.current()
    if isinstance(value, Accumulated):
        return
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        from . import ops

        ops.assign_scalar(target, float(value))
        return
    src = as_view(value, "assigned value")
    mask = getattr(src.tensor, "mask_applied", None)
    if mask is not None and src.covers_whole():
        # `dst[i_p, i_f] = call(..., mask=m)`: the call wrote only where m holds, so does the
        # assignment (its fresh result is the narrowed extent, or the whole tile narrowed)
        from .masks import apply_mask

        if [tr.evaluate(x) for x in src.logical_lins()] == \
                [tr.evaluate(x) for x in target.logical_lins()]:
            src = apply_mask(src, mask)
        target = apply_mask(target, mask)
        tr.last_mask = None
    if not _assigns_named_tile(tr) and _retarget(tr, src, target):
        return
    rules.copy(tr, target, src)


def _assigns_named_tile(tr):
    """`dst[...] = name` (a tile kept in a variable) is a copy, as written; `dst[...] = call(...)`
    lets the call write dst (rules.py)."""
    import ast

    where = errors.user_location()
    node = tr.src.statement(*where) if where else None
    return isinstance(node, ast.Assign) and isinstance(node.value, ast.Name)


def _retarget(tr, src, target):
    t = src.tensor
    if not t.producers or t.read_elsewhere or t.dead or t.block is not tr.stack[-1]:
        return False
    if not src.covers_whole():
        return False
    for ins in t.producers:
        if not rules.can_write(ins, target.tensor.mem):
            return False
        for _, v in ins.args:
            if isinstance(v, View) and v.tensor is t and not v.covers_whole():
                return False
    for ins in t.producers:
        for a in ins.args:
            if isinstance(a[1], View) and a[1].tensor is t:
                a[1] = target
        tr.note_use(target, ins) if ins.args[0][1] is target else None
    target.tensor.producers = []
    t.dead = True
    z = target.tensor
    if any(ins.op != "matmul" for ins in t.producers):
        z.matmul_only = False
    else:
        z.group_keys.add(_group_key(tr, target)[0])  # a later += adds to it
    if z.zero_state == "pending":
        z.zero_state = "covered" if target.covers_whole() else \
            ("needed" if z.zero_fill else "unset")
    return True


def _block_key(tr, view):
    """Which part of a tensor a view names, as written (block indices before any modulo)."""
    return tuple((tr.resolve(a).text(), tr.resolve(n).text(), st) for a, n, st in view.dims)


def _group_key(tr, target):
    """The accumulation group a write of `target` belongs to: its block, and which piece of
    each split loop (splitting.py) at or above the last loop that picks the block it is in (a
    later piece of such a loop enters the group anew). Also the loops below the tensor's
    declaration, the names its block index uses, and the position of the last loop among them
    that picks the block (-1: none)."""
    z = target.tensor
    depth = next((k for k, b in enumerate(tr.stack) if b is z.block), len(tr.stack) - 1)
    loops = tr.loops[depth:]
    used = set()
    for start, _, _ in target.dims:
        used.update(tr.resolve(start).names())
    last = max([k for k, l in enumerate(loops) if l.var in used], default=-1)
    pieces = tuple((l.var, k) for l in loops[:last + 1]
                   for k, f in enumerate(l.family) if f is l and k > 0)
    return (_block_key(tr, target), pieces), depth, loops, used, last


def accumulate_matmul(target, result, group=None):
    """`target += nc_matmul(...)`: the matmul writes target. Into a PSUM tile not written yet
    (nl.zeros or a fresh nl.ndarray) the first matmul of the accumulation group overwrites:
    - in the tile's own block: this matmul overwrites;
    - in a loop whose every iteration writes its own block (the index uses the loop variable):
      each overwrites;
    - otherwise the group is the loops below the last one whose variable picks the block (the
      group restarts each time they are entered): one such loop has its first iteration
      peeled (trace.Tracer._peel); several are preceded by a memset of the block.
    `group`: _group_key(tr, target) when the caller has it (nothing it reads changes here)."""
    tr = trace.current()
    t = result.tensor
    ins = t.producers[0]
    if target.tensor.mem != "psum":
        raise errors.NkiError("matmul results accumulate in PSUM; '%s' is in %s" %
                              (target.tensor.name, target.tensor.mem))
    if t.read_elsewhere or not result.covers_whole() or t.block is not tr.stack[-1]:
        raise errors.NkiError("+= needs the matmul result directly (nc_matmul / nl.matmul on "
                              "the right-hand side)")
    ins.args[0][1] = target
    # (the flags through the instance dicts, as program.Tensor.__init__: every matmul of an
    # unrolled kernel comes here)
    t.__dict__["dead"] = True
    z = target.tensor
    key, depth, loops, used, last = group or _group_key(tr, target)
    if not z.matmul_only or key in z.group_keys:
        ins.set("accumulate", True)  # adds to what this block already holds
        return
    z.group_keys.add(key)
    if z.zero_state == "pending":
        # written by matmul groups only (no memset at declaration)
        z.__dict__["zero_state"] = "peeling"
    if not loops or loops[-1].var in used:
        ins.set("accumulate", False)
        return
    # The group: the loops below the last one whose variable picks the block.
    group = loops[last + 1:]
    ins.set("accumulate", True)
    if len(group) == 1:
        ins.args_tensor_zero = z
        ins.group_view = target
        group[0].peel.append(ins)
        return
    from .program import Instr

    block = tr.stack[depth + last + 1]
    at = next(k for k, st in enumerate(block) if st is group[0])
    block.insert(at, Instr("memset", [[None, target], ["value", 0.0]]))


def tensor_of(tile):
    """The tensor a tile the kernel returned stands for, read without the trace (which has ended
    when the outputs are marked): a new-API view (newapi/views.NkiTensor) keeps its tensor as
    `_base`, and building its IR access may need the trace (a flat-only view, a reshaped output)."""
    base = tile.__dict__.get("_base")
    return base if base is not None else tile._view.tensor

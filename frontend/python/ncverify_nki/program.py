"""The traced program: tensors, views (accesses), statements, and their `.nkir` text.

A Tensor keeps its dims in storage order: for an on-chip tensor the partition dim first, then
the NKI block dims (those before `par_dim`), then the free dims, as the registered kernels lay
them out. A View is an access: per storage dim a start, size and step, plus the order in which
the kept dims appear in the tile the kernel sees (a transposing DMA access is a View whose kept
dims are not in storage order).
"""

from . import errors
from .expr import ONE, ZERO, Lin, SymInt

DTYPES = ("fp32", "bf16", "fp16", "fp8_e4m3", "fp8_e4m3fn", "fp8_e5m2", "int32", "uint8",
          "uint16", "uint32")
DTYPE_BYTES = {"fp32": 4, "bf16": 2, "fp16": 2, "fp8_e4m3": 1, "fp8_e4m3fn": 1, "fp8_e5m2": 1,
               "int32": 4, "uint8": 1, "uint16": 2, "uint32": 4,
               # MX packed (NKI 0.6 dtype page; MX deep dive "Data Tensor"): four fp8 values in
               # 32 bits, four fp4 values in 16 bits
               "fp8_e4m3fn_x4": 4, "fp8_e5m2_x4": 4, "fp4_e2m1fn_x4": 2}


class Tensor:
    # The fields whose starting value is shared (None, False, True) are class attributes: a
    # write replaces them in the instance's dict, and an unrolled kernel makes tens of thousands
    # of tensors, each with a dict of only the fields it has its own value for.
    logical = None  # the NKI sizes when the storage is padded (PSUM bank per tile)
    fold = None  # block storage dim -> element stride when blocks fold into the free dim
    placement = None  # (partition Lin, byte offset Lin) for direct allocation
    bufs = None  # rotating copies (direct allocation with extra tiles)
    decl = None  # the BufferDecl statement
    block = None  # the statement list holding decl
    read_elsewhere = False
    zero_state = None  # None | pending | needed | covered | peeling | unset (ZeroInit)
    zero_fill = True
    matmul_only = False  # a fresh PSUM tile written by `+=` matmul groups only so far
    dead = False
    copy_back = None  # (dtype, name) of a Tensor-engine transpose result in PSUM
    copied = None  # its SBUF copy, once an engine operand needed it

    def __init__(self, name, mem, dtype, shape, role="buffer", nki_to_storage=None):
        shape = [s if s.__class__ is Lin else Lin.of(s) for s in shape]  # storage order
        nki_to_storage = nki_to_storage or list(range(len(shape)))
        # Written through the instance dict: the sealed __setattr__ (sandbox._seal) looks at
        # its caller's frame on every write, and an unrolled kernel makes tens of thousands of
        # tensors. A kernel cannot reach __init__ (kernel_language refuses '_' names).
        self.__dict__.update(
            name=name,
            mem=mem,  # hbm | sbuf | psum
            dtype=dtype,
            shape=shape,
            role=role,  # input | output | scratch | buffer
            kind_given=role,
            # NKI dim k is storage dim nki_to_storage[k] (identity for HBM and plain tiles).
            nki_to_storage=nki_to_storage,
            # on-chip: storage dims 1..nblock are NKI block dims (those before par_dim)
            nblock=nki_to_storage.index(0) if mem != "hbm" else 0,
            mods=[None] * len(shape),  # mod_alloc: storage dim index taken modulo n
            producers=[],  # instructions that wrote it while it was a fresh result
            group_keys=set())  # the blocks (access text) an accumulation group has started

    def storage_view(self):
        """The whole tensor with its dims in storage order (partition first)."""
        v = self.full_view()
        return View(self, v.dims, sorted(v.order))

    def block_views(self):
        """The whole tensor as views a memset may write: one per block when its blocks are
        placed apart (fold), else the storage view."""
        if not self.fold:
            return [self.storage_view()]
        import itertools

        full = self.storage_view()
        out = []
        blocks = sorted(self.fold)
        for idx in itertools.product(*[range(self.logical[s].const) for s in blocks]):
            dims = [list(d) for d in full.dims]
            for s, i in zip(blocks, idx):
                dims[s] = [Lin.of(i), Lin.of(1), 1]
            out.append(View(self, dims, [d for d in full.order if d not in blocks]))
        return out

    def nki_shape(self):
        sizes = self.logical or self.shape
        return tuple(SymInt.make(sizes[self.nki_to_storage[k]]) for k in range(len(sizes)))

    def full_view(self):
        sizes = self.logical or self.shape
        order = [self.nki_to_storage[k] for k in range(len(sizes))]
        return View(self, [[ZERO, s, 1] for s in sizes], order)


class View:
    """An access of `tensor`; `order` lists the kept storage dims in tile order."""

    # Tile axes of size 1 that no tensor dim backs: `v[nl.arange(n)[:, None]]` of a rank-1 HBM
    # tensor is an [n, 1] tile (tiles.py _index_grid). The access has the tensor's dims only; a
    # tile loaded from it keeps the unit axes.
    units = ()
    # Indirect addressing (tiles.py _indirect_view): an Indirect whose offsets, read at run time
    # from an on-chip [rows, 1] tile, shift tensor dim `dim` row by row.
    indirect = None
    # The core whose memory the access names (a Lin; None: the executing core's own):
    # nisa.sendrecv writes the peer's dst (newapi/sendrecv.py, `.core(...)` in .nkir).
    core = None

    def __init__(self, tensor, dims, order, units=()):
        # (through the instance dict, as Tensor.__init__: views are made by the hundred
        # thousand; units, indirect and core are class attributes until a view has its own)
        d = self.__dict__
        d["tensor"] = tensor
        d["dims"] = dims  # per storage dim: [start Lin, size Lin, step int]
        d["order"] = order
        if units:
            d["units"] = tuple(units)

    @property
    def shape(self):
        return tuple(SymInt.make(x) for x in self.logical_lins())

    def logical_lins(self):
        dims = self.dims
        out = [dims[d][1] for d in self.order]
        for a in self.units:
            out.insert(a, Lin.of(1))
        return out

    def covers_whole(self):
        t = self.tensor
        if t.fold or len(self.dims) != len(t.shape):
            return False
        return all(d[0] == Lin.of(0) and d[1] == t.shape[k] and d[2] == 1
                   for k, d in enumerate(self.dims)) and self.order == sorted(self.order)

    def perm(self):
        """The `.perm` of the access, or None when the kept dims are in storage order."""
        if self.order == sorted(self.order):
            return None
        dropped = [d for d in range(len(self.dims)) if d not in self.order]
        perm = dropped + list(self.order)
        if self.tensor.mem != "hbm" and perm[0] != 0 and self.order and self.order[0] == 0 and \
                getattr(self, "partition_leads", False):
            # a view of the new API (newapi/views.py): on chip the partition dim leads, the
            # dropped (size-1) dims follow it
            perm = [0] + dropped + list(self.order[1:])
        if self.tensor.mem != "hbm" and perm[0] != 0 and \
                not getattr(self, "across_partitions", False):
            raise errors.NkiError("tile of '%s' is indexed with its partition dim in another "
                                  "position: an on-chip tensor keeps its partition dim first"
                                  % self.tensor.name)
        return perm

    def with_dims(self, dims, order=None):
        out = View(self.tensor, dims, list(self.order if order is None else order))
        out.partition_leads = getattr(self, "partition_leads", False)  # newapi/views.py
        return out

    def refuse_indirect(self, what):
        """Views derived by a rule that knows nothing of run-time offsets must not drop them."""
        if self.indirect is not None:
            raise errors.NkiError("%s of an indirectly addressed access of '%s' is not "
                                  "modelled" % (what, self.tensor.name))


class Indirect:
    """Tensor dim `dim` of an access is offset, for view row r, by the integer offsets[r, 0] read
    at run time; the values may range over [lo, hi] (the interpreter checks each one)."""

    def __init__(self, dim, offsets, lo, hi):
        self.dim, self.offsets, self.lo, self.hi = dim, offsets, lo, hi


class BufferDecl:
    def __init__(self, tensor, bufs=None):
        self.__dict__.update(tensor=tensor, bufs=bufs)  # (as Tensor.__init__)


class ZeroInit:
    """nl.zeros in PSUM: a memset only if the first matmul cannot overwrite it (see tiles.py)."""

    def __init__(self, tensor):
        # (through the instance dict, as Tensor.__init__) the nl.zeros line, for its memsets'
        # `@line`
        self.__dict__.update(tensor=tensor, line=errors.kernel_line())


class Instr:
    def __init__(self, op, args, line=None):
        # (through the instance dict, as Tensor.__init__)
        self.__dict__.update(
            op=op,
            args=args,  # list of [name or None, value]
            # The kernel line whose call made it (`@line`; 0: unknown). Instructions are made
            # while the call runs, so the stack names it; a copy made later (a peeled loop
            # iteration) passes its original's line.
            line=errors.kernel_line() if line is None else line)

    def get(self, name):
        for k, v in self.args:
            if k == name:
                return v
        return None

    def set(self, name, value):
        for a in self.args:
            if a[0] == name:
                a[1] = value
                return
        self.args.append([name, value])

    def views(self):
        """The views the instruction names, with the offsets views of indirect accesses."""
        out = [v for _, v in self.args if isinstance(v, View)]
        for v in out:
            if v.indirect is not None:
                return out + [v.indirect.offsets for v in out if v.indirect is not None]
        return out


class Loop:
    def __init__(self, var, kind, start, stop, step):
        self.var, self.kind = var, kind
        self.start, self.stop, self.step = start, stop, step
        self.body = []
        self.peel = []  # matmuls whose first iteration overwrites a zeroed PSUM tile


class AxisSteps:
    """affine_select / iota steps by tile axis; printed per free dim of the destination view."""

    def __init__(self, coefs, ndim):
        self.coefs, self.ndim = coefs, ndim

    def for_view(self, dst):
        off = len(dst.order) - self.ndim
        axis_of_dim = {s: a - off for a, s in enumerate(dst.order)}
        dims = dst.perm() or list(range(len(dst.dims)))
        return [self.coefs.get(axis_of_dim[s], 0) if s in axis_of_dim else 0 for s in dims[1:]]


class Enum:
    def __init__(self, name):
        self.__dict__["name"] = name  # (as Tensor.__init__: most instructions have one)


def float_text(x):
    import numpy as np

    f = np.float32(x)
    if np.isnan(f):
        return "nan" if not np.signbit(f) else "-nan"
    if np.isinf(f):
        return "inf" if f > 0 else "-inf"
    return str(f)


class Printer:
    def __init__(self, resolve):
        self.resolve = resolve  # Lin -> Lin with params' aliases substituted

    def lin(self, x):
        return self.resolve(Lin.of(x)).text()

    def access(self, v):
        t = v.tensor
        if t.fold:
            return self._folded_access(v)
        parts = []
        # (a constant is its own resolution, Tracer.resolve: most starts and sizes are, and
        # this runs for every operand of every instruction the program prints; the comparisons
        # with 0 and 1 are Lin.__eq__'s for a constant, inline)
        res = self.resolve
        mods, shape = t.mods, t.shape
        k = 0
        for start, size, step in v.dims:
            if mods[k] is not None:
                start = start.mod(mods[k])
            if start.terms:
                start = res(start)
            if size.terms:
                size = res(size)
            full = shape[k]
            k += 1
            if not start.terms and start.const == 0 and \
                    size == (res(full) if full.terms else full) and step == 1:
                parts.append(":")
            elif not size.terms and size.const == 1 and step == 1:
                parts.append(start.text())
            else:
                parts.append("%s:+%s%s" % (start.text(), _paren(size.text()),
                                           "" if step == 1 else ":%d" % step))
        s = "%s[%s]" % (t.name, ", ".join(parts))
        order = v.order
        # (perm() is None exactly when the kept dims are in storage order)
        perm = None if len(order) < 2 or (len(order) == 2 and order[0] < order[1]) else v.perm()
        if perm is not None:
            s += ".perm(%s)" % ", ".join(str(p) for p in perm)
        if v.core is not None:
            s += ".core(%s)" % self.lin(v.core)
        if v.indirect is not None:
            ind = v.indirect
            s += ".indirect(%d, %s, %d, %d)" % (ind.dim, self.access(ind.offsets), ind.lo, ind.hi)
        return s

    def _folded_access(self, v):
        """A view of a tensor whose block dims fold into its free dim: [P, F] with the free start
        moved by block index x stride (allocation._callable)."""
        t = v.tensor
        start = v.dims[-1][0]
        for s, stride in t.fold.items():
            b_start, b_size, _ = v.dims[s]
            if self.resolve(b_size) != Lin.of(1):
                raise errors.NkiError("an access to several blocks of '%s' at once (its blocks "
                                      "are placed apart by its allocator)" % t.name)
            start = start.add(b_start.scale(stride))
        dims = [v.dims[0], [start, v.dims[-1][1], v.dims[-1][2]]]
        parts = []
        for (a, n, st) in dims:
            a, n = self.resolve(a), self.resolve(n)
            parts.append("%s:+%s%s" % (a.text(), _paren(n.text()), "" if st == 1 else ":%d" % st))
        return "%s[%s]" % (t.name, ", ".join(parts))

    def value(self, x):
        if isinstance(x, View):
            return self.access(x)
        if isinstance(x, Enum):
            return x.name
        if isinstance(x, bool):
            return "true" if x else "false"
        if isinstance(x, float):
            return float_text(x)
        if isinstance(x, list):
            return "[%s]" % ", ".join(str(i) for i in x)
        return self.lin(x)

    def statements(self, stmts, indent, out):
        pad = "  " * indent
        for s in stmts:
            c = s.__class__  # (by exact class: this visits every statement of the program)
            if c is Instr:
                args = []
                for name, v in s.args:
                    if v.__class__ is View:
                        text = self.access(v)
                    else:
                        if isinstance(v, AxisSteps):
                            v = v.for_view(s.args[0][1])
                        text = self.value(v)
                    args.append(text if name is None else "%s=%s" % (name, text))
                out.append("%s%s %s%s" % (pad, s.op, ", ".join(args),
                                          " @line %d" % s.line if s.line else ""))
            elif c is BufferDecl:
                t = s.tensor
                if t.dead:
                    continue
                line = "%sbuffer %s : %s %s [%s]" % (pad, t.name, t.mem, t.dtype,
                                                    ", ".join([self.lin(d) for d in t.shape]))
                if s.bufs:
                    line += " bufs %d" % s.bufs
                if t.placement is not None:
                    line += " at (%s, %s)" % (self.lin(t.placement[0]), self.lin(t.placement[1]))
                out.append(line)
            elif c is ZeroInit:
                if s.tensor.zero_state == "needed" and not s.tensor.dead:
                    for view in s.tensor.block_views():
                        out.append("%smemset %s, value=0%s" % (pad, self.access(view),
                                                               _at_line(s.line)))
            elif c is Loop:
                rng = "%s, %s" % (self.lin(s.start), self.lin(s.stop))
                if s.step != 1:
                    rng += ", %d" % s.step
                out.append("%sfor %s in %s(%s) {" % (pad, s.var, s.kind, rng))
                self.statements(s.body, indent + 1, out)
                out.append("%s}" % pad)


def _at_line(line):
    """The `.nkir` annotation naming the kernel line of an instruction (none when unknown)."""
    return " @line %d" % line if line else ""


def _paren(text):
    return text if all(c.isalnum() or c == "_" for c in text) else "(%s)" % text

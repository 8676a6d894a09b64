"""Stand-in for `neuronxcc.nki.language` (nl): every call records instructions into the trace."""

import numpy as np

from . import allocation as _allocation  # (an import statement in allocate cost every call)
from . import errors, ops, per_program, rules, trace
from .dtypes import (DType, bfloat16, bool_, float8_e4m3, float8_e5m2, float16, float32,  # noqa
                     int32, normalize, tfloat32, uint8, uint16, uint32)
from .expr import IndexExpr, Lin, SymInt
from .program import Tensor
from .sealed import SealedClass
from .signatures import api
from .tiles import DS, Tile, as_view

# ---------------------------------------------------------------- memories


class Buffer:
    def __init__(self, name, mem, role=None):
        self.name, self.mem, self.role = name, mem, role

    def __repr__(self):
        return "nl." + self.name


sbuf = Buffer("sbuf", "sbuf")
psum = Buffer("psum", "psum")
hbm = Buffer("hbm", "hbm", "scratch")
private_hbm = Buffer("private_hbm", "hbm", "scratch")
shared_hbm = Buffer("shared_hbm", "hbm", "output")


class par_dim(metaclass=SealedClass):  # noqa: N801 (NKI spelling)
    def __init__(self, size):
        self.size = size

    def __repr__(self):
        return "par_dim(%s)" % (self.size,)


class tile_size(metaclass=SealedClass):  # noqa: N801
    """nl.tile_size (LANG-OLD programming model, also KLR's kernelEnv; docs/SOURCES.md)."""

    pmax = 128  # partitions
    psum_fmax = 512  # fp32 elements of one PSUM bank per partition
    gemm_stationary_fmax = 128  # stationary free size of nc_matmul
    gemm_moving_fmax = 512  # moving free size of nc_matmul
    bn_stats_fmax = 512


def allocate(shape, dtype, buffer, name=None, zero=False, fill=None):
    return Tile(allocate_tensor(shape, dtype, buffer, name, zero, fill).full_view())


def allocate_tensor(shape, dtype, buffer, name=None, zero=False, fill=None):
    """The tensor `allocate` declares (the new API's calls make their own view of it)."""
    tr = trace.current()
    if buffer is None:
        buffer = sbuf
    alloc = None
    if not isinstance(buffer, Buffer):
        alloc, buffer = buffer, buffer.memory
    dt = normalize(dtype if dtype is not None else float32).name
    shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
    hint = name or tr.assigned_name()
    if buffer.mem == "hbm":
        dims = [Lin.of(s.size if isinstance(s, par_dim) else s) for s in shape]

        tr.sizes_known(dims)

        def make():
            t = Tensor(tr.unique(hint), "hbm", dt, dims, buffer.role)
            t.kind_given = buffer.role
            tr.hbm.append(t)
            return t

        # traced once per program: a shared_hbm tensor is one for every program (per_program.py)
        t = per_program.shared_hbm(tr, dims, dt, make) if buffer.role == "output" else make()
        if zero or fill is not None:
            raise errors.NkiError("an HBM tensor is not initialised by the kernel; write it "
                                  "with nl.store")
        return t
    pos = [k for k, s in enumerate(shape) if isinstance(s, par_dim)]
    if len(pos) > 1:
        raise errors.NkiError("more than one par_dim in a shape")
    p = pos[0] if pos else 0
    sizes = [Lin.of(s.size if isinstance(s, par_dim) else s) for s in shape] if pos else \
        [Lin.of(s) for s in shape]
    sizes = tr.loop_free_sizes(sizes)
    if sizes[p].is_const() and not 1 <= sizes[p].const <= 128:
        raise errors.NkiError("an on-chip tensor has at most 128 partitions; this one's "
                              "partition dim is %d" % sizes[p].const)
    if p == 0:  # the partition dim first (every tile of the new API): storage is NKI order
        t = Tensor(tr.unique(hint), buffer.mem, dt, sizes, "buffer", list(range(len(shape))))
    else:
        storage = [p] + [k for k in range(len(shape)) if k != p]
        nki_to_storage = [storage.index(k) for k in range(len(shape))]
        t = Tensor(tr.unique(hint), buffer.mem, dt, [sizes[k] for k in storage], "buffer",
                   nki_to_storage)
    if alloc is not None:
        _allocation.apply(alloc, t, p)
    tr.declare(t)
    if buffer.mem == "psum" and fill is None:
        tr.zero_init(t, zeros=zero)
    elif zero or fill is not None:
        ops.memset_view(t.storage_view(), 0.0 if fill is None else float(fill))
    return t


# The reference this file follows: the neuronxcc.nki.language pages of the NKI API reference (Neuron
# SDK 2.26, https://awsdocs-neuron.readthedocs-hosted.com/en/v2.26.1/nki/api/nki.language.html;
# docstrings in aws-neuron/aws-neuron-sdk general/nki/api/nki/language/__init__.py at release
# 2.26.0). frontend/README.md "Arguments of every call" says what each argument does here.


# lazy_initialization (not on the reference pages; nki-samples' flash_fwd passes it to nl.full,
# and the compiler takes it) says when the fill is issued, not what it is: the model issues it at
# the declaration, which is what lazy_initialization=False asks and gives the same values as a
# deferred fill.
@api("nl.ndarray")
def ndarray(shape, dtype, *, buffer=None, name="", lazy_initialization=True):
    return allocate(shape, dtype, buffer, name or None)


@api("nl.zeros")
def zeros(shape, dtype, *, buffer=None, name="", lazy_initialization=True):
    return allocate(shape, dtype, buffer, name or None, zero=True)


@api("nl.ones")
def ones(shape, dtype, *, buffer=None, name="", lazy_initialization=True):
    return allocate(shape, dtype, buffer, name or None, fill=1.0)


@api("nl.full")
def full(shape, fill_value, dtype, *, buffer=None, name="", lazy_initialization=True):
    return allocate(shape, dtype, buffer, name or None, fill=fill_value)


@api("nl.empty_like")
def empty_like(a, dtype=None, *, buffer=None, name="", lazy_initialization=True):
    return allocate(a.shape, dtype or a.dtype, buffer, name or None)


@api("nl.zeros_like")
def zeros_like(a, dtype=None, *, buffer=None, name="", lazy_initialization=True):
    return allocate(a.shape, dtype or a.dtype, buffer, name or None, zero=True)


# ---------------------------------------------------------------- indices and loops


@api("nl.arange")
def arange(start, stop=None):
    if stop is None:
        start, stop = 0, start
    return IndexExpr.arange(start, stop)


class _MGrid:
    def __getitem__(self, key):
        if not isinstance(key, tuple):
            key = (key,)
        out = []
        for k, s in enumerate(key):
            if not isinstance(s, slice) or s.step not in (None, 1):
                raise errors.NkiError("nl.mgrid takes start:stop slices")
            g = IndexExpr.arange(s.start or 0, s.stop)
            out.append(g[tuple(slice(None) if j == k else None for j in range(len(key)))])
        return _Grid(out)


class _Grid(tuple):
    def __new__(cls, items):
        return super().__new__(cls, items)

    @property
    def p(self):
        return self[0]

    @property
    def x(self):
        return self[1]

    @property
    def y(self):
        return self[2]

    @property
    def z(self):
        return self[3]


mgrid = _MGrid()


@api("nl.ds")
def ds(start, size):
    return DS(start, size)


class _Range:
    def __init__(self, kind, args):
        if len(args) == 1:
            start, stop, step = 0, args[0], 1
        elif len(args) == 2:
            (start, stop), step = args, 1
        elif len(args) == 3:
            start, stop, step = args
        else:
            raise errors.NkiError("a range takes 1 to 3 arguments")
        if isinstance(step, SymInt) or not isinstance(step, (int, np.integer)) or step <= 0:
            raise errors.NkiError("a loop step must be a positive integer constant")
        self.kind, self.start, self.stop, self.step = kind, start, stop, int(step)

    def __iter__(self):
        tr = trace.current()
        # once per piece the loop splits into (trace.Tracer.iterate, splitting.py)
        return tr.iterate(self.kind, self.start, self.stop, self.step, _loop_var_name())


def _loop_var_name():
    import ast

    from .errors import user_location

    tr = trace.current()
    where = user_location()
    node = tr.src.statement(*where) if where else None
    if isinstance(node, ast.For) and isinstance(node.target, ast.Name):
        return node.target.id
    return "i"


# Scheduling hints some public kernels pass to a loop (nki-samples: `precise_schedule=True`,
# `directives=ncc.no_reorder()`): they order instructions in the compiler's schedule only; the
# model's engines issue in program order, so they change nothing here. Any other keyword is an
# error.
_LOOP_HINTS = ("precise_schedule", "directives")


def _loop_keywords(call, kw):
    for k in kw:
        if k not in _LOOP_HINTS:
            raise errors.NkiError("%s: unknown keyword argument '%s' (a loop takes start, stop, "
                                  "step and the scheduling hints %s)" %
                                  (call, k, ", ".join(_LOOP_HINTS)))


def affine_range(*args, **kw):
    _loop_keywords("nl.affine_range", kw)
    return _Range("affine_range", args)


def sequential_range(*args, **kw):
    _loop_keywords("nl.sequential_range", kw)
    return _Range("sequential_range", args)


@api("nl.static_range")
def static_range(*args):
    try:
        return range(*[int(a) if not isinstance(a, SymInt) else a.__index__() for a in args])
    except errors.NkiError as e:
        raise errors.NkiError("static_range is unrolled while tracing: " + e.message)


@api("nl.program_id")
def program_id(axis):
    return trace.current().program_id(axis)


@api("nl.num_programs")
def num_programs(axes=None):
    return trace.current().num_programs(axes)


@api("nl.program_ndim")
def program_ndim():
    tr = trace.current()
    return len(tr.grid) if tr.grid else 0


# ---------------------------------------------------------------- memory movement


class _Constant:
    """nl.shared_constant(array): constant data the kernel loads. The IR has no constant
    tensors, so a load of one is generated on chip where the model can (rules.constant_tile)."""

    def __init__(self, values, dtype):
        self._values, self.dtype = values, dtype

    @property
    def shape(self):
        return self._values.shape

    def __getitem__(self, idx):
        if idx is Ellipsis or idx == (slice(None),) * self._values.ndim or \
                (isinstance(idx, tuple) and all(isinstance(i, slice) and i == slice(None)
                                                for i in idx)):
            return self
        raise errors.NkiError("a shared constant is loaded whole in the model")


@api("nl.shared_constant")
def shared_constant(constant, dtype=None):
    values = np.asarray(constant)
    if values.ndim != 2:
        raise errors.NkiError("a shared constant must be 2-D ([partitions, free])")
    return _Constant(values, normalize(dtype if dtype is not None else values.dtype))


@api("nl.shared_identity_matrix")
def shared_identity_matrix(n, dtype=None):
    """nl.shared_identity_matrix(n, dtype): the n x n identity as a shared constant."""
    return shared_constant(np.identity(n), dtype if dtype is not None else "uint8")


@api("nl.load")
def load(src, *, mask=None, dtype=None):
    tr = trace.current()
    if isinstance(src, _Constant):
        return Tile(rules.constant_tile(tr, src._values, ops._dtype(dtype, src.dtype.name)))
    full = as_view(src, "src")
    v = _masked(full, mask)
    if v.tensor.mem != "hbm":
        return ops.copy(Tile(v), dtype=dtype)
    if len(full.logical_lins()) < 2:
        raise errors.NkiError("nl.load of a rank-%d access: an on-chip tile needs a partition "
                              "dim and a free dim (index with a slice, a[i:i + 1, :], to keep "
                              "one partition)" % len(full.logical_lins()))
    # the tile keeps its whole shape; a mask narrows what the DMA moves into it
    t = tr.temp("sbuf", ops._dtype(dtype, v.tensor.dtype), full.logical_lins())
    dst = _masked(t.full_view(), mask)
    queue = tr.queue_for(v.tensor)
    tr.instr("dma_copy", [(None, dst), (None, v)] + ([("queue", queue)] if queue else []),
             produces=t)
    return Tile(t.full_view())


@api("nl.load_transpose2d")
def load_transpose2d(src, *, mask=None, dtype=None):
    v = _masked(as_view(src, "src"), mask)
    v.refuse_indirect("load_transpose2d")
    if len(v.order) != 2:
        raise errors.NkiError("load_transpose2d takes a 2-D tile")
    from .program import View

    return load(Tile(View(v.tensor, v.dims, [v.order[1], v.order[0]])), dtype=dtype)


@api("nl.store")
def store(dst, value, *, mask=None):
    tr = trace.current()
    d = _masked(as_view(dst, "dst"), mask)
    if ops.is_scalar(value):
        v = _scalar_tile(tr, d, value)
    else:
        v = _masked(as_view(value, "value"), mask)
    if d.tensor.mem != "hbm":
        raise errors.NkiError("nl.store writes HBM; '%s' is in %s" % (d.tensor.name, d.tensor.mem))
    if v.tensor.mem == "psum":
        v = rules.evict(tr, v)
    queue = tr.queue_for(d.tensor)
    tr.instr("dma_copy", [(None, d), (None, v)] + ([("queue", queue)] if queue else []))


def _scalar_tile(tr, dst, value):
    """`nl.store(dst, 3.0)`: the documented memset of dst, done as the compiler must: a tile of
    dst's shape set on chip, then the DMA of it."""
    shape = dst.logical_lins()
    if len(shape) < 2:
        raise errors.NkiError("nl.store of a scalar into a rank-%d access: the tile that holds "
                              "it needs a partition and a free dim" % len(shape))
    if shape[0].is_const() and shape[0].const > 128:
        raise errors.NkiError("nl.store of a scalar into %d rows: a tile has at most 128 "
                              "partitions" % shape[0].const)
    t = tr.temp("sbuf", dst.tensor.dtype, shape)
    tr.instr("memset", [(None, t.full_view()), ("value", float(value))], produces=t)
    return t.full_view()


def _masked(view, mask):
    if mask is None:
        return view
    from .masks import apply_mask

    return apply_mask(view, mask)


# ---------------------------------------------------------------- compute


@api("nl.matmul")
def matmul(x, y, *, transpose_x=False, mask=None):
    tr = trace.current()
    vx = _masked(as_view(x, "x"), mask)
    y = Tile(_masked(as_view(y, "y"), mask))
    if transpose_x:
        return ops.matmul(Tile(vx), y, tr.assigned_name())
    from . import rules

    xt = rules.tensor_engine_transpose(tr, rules.operand(tr, vx), vx.tensor.dtype, "x_t")
    return ops.matmul(Tile(xt.full_view()), y, tr.assigned_name())


@api("nl.transpose")
def transpose(x, *, dtype=None, mask=None):
    return ops.transpose(Tile(_masked(as_view(x, "x"), mask)), None, dtype)


def _unary(func):
    def f(x, *, dtype=None, mask=None):
        return ops.activation(func, Tile(_masked(as_view(x), mask)), dtype=dtype)

    f.__name__ = func
    f = api("nl." + func)(f)
    ops.ACT[f] = func
    return f


exp = _unary("exp")
log = _unary("log")
tanh = _unary("tanh")
sigmoid = _unary("sigmoid")
relu = _unary("relu")
gelu = _unary("gelu")
silu = _unary("silu")
square = _unary("square")
sqrt = _unary("sqrt")
rsqrt = _unary("rsqrt")
sin = _unary("sin")
abs = _unary("abs")  # noqa: A001 (NKI's name)


@api("nl.copy")
def copy(src, *, mask=None, dtype=None):
    return ops.copy(Tile(_masked(as_view(src), mask)), dtype=dtype)


@api("nl.reciprocal")
def reciprocal(x, *, dtype=None, mask=None):
    return ops.reciprocal(Tile(_masked(as_view(x), mask)), dtype=dtype)


@api("nl.negative")
def negative(x, *, dtype=None, mask=None):
    return ops.binary("multiply", Tile(_masked(as_view(x), mask)), -1.0, dtype=dtype)


def _binary(op, name):
    def f(x, y, *, dtype=None, mask=None):
        if mask is not None:
            x = Tile(_masked(as_view(x), mask)) if isinstance(x, Tile) else x
            y = Tile(_masked(as_view(y), mask)) if isinstance(y, Tile) else y
        return ops.binary(op, x, y, dtype=dtype)

    f.__name__ = name
    f = api("nl." + name)(f)
    ops.ALU[f] = op
    return f


add = _binary("add", "add")
subtract = _binary("subtract", "subtract")
multiply = _binary("multiply", "multiply")
divide = _binary("divide", "divide")
maximum = _binary("max", "maximum")
minimum = _binary("min", "minimum")
power = _binary("pow", "power")
greater = _binary("is_gt", "greater")
greater_equal = _binary("is_ge", "greater_equal")
less = _binary("is_lt", "less")
less_equal = _binary("is_le", "less_equal")
equal = _binary("is_equal", "equal")
not_equal = _binary("not_equal", "not_equal")
bitwise_and = _binary("bitwise_and", "bitwise_and")
bitwise_or = _binary("bitwise_or", "bitwise_or")
bitwise_xor = _binary("bitwise_xor", "bitwise_xor")


def _reduction(op, name):
    def f(x, axis, *, dtype=None, mask=None, keepdims=False):
        return ops.reduce(op, Tile(_masked(as_view(x), mask)), axis, dtype=dtype,
                          keepdims=bool(keepdims))

    f.__name__ = name
    f = api("nl." + name)(f)
    ops.ALU[f] = op
    return f


max = _reduction("max", "max")  # noqa: A001
min = _reduction("min", "min")  # noqa: A001
sum = _reduction("add", "sum")  # noqa: A001
ops.ALU[max] = "max"
ops.ALU[min] = "min"
ops.ALU[sum] = "add"
ops.ACT[copy] = "copy"
ops.ACT[reciprocal] = "reciprocal"


@api("nl.device_print")
def device_print(prefix, x, *, mask=None):
    return None


@api("nl.broadcast_to")
def broadcast_to(src, *, shape):
    """A new SBUF tile of `shape` (NumPy broadcasting from src's shape; src itself when the
    shapes agree, as the page says): across partitions by ops.partition_broadcast, along the free
    dims by a copy that reads each broadcast element repeatedly."""
    from .tiles import broadcast_view

    tr = trace.current()
    v = as_view(src, "src")
    want = [Lin.of(x) for x in shape]
    have = v.logical_lins()
    if len(want) != len(have):
        raise errors.NkiError("nl.broadcast_to %s from a rank-%d tile: the ranks must agree" %
                              (tuple(shape), len(have)))
    if [tr.evaluate(x) for x in want] == [tr.evaluate(x) for x in have]:
        return src if isinstance(src, Tile) else Tile(v)
    if v.tensor.mem == "hbm":
        return load(Tile(broadcast_view(v, want)))
    parts, rows = tr.evaluate(want[0]), tr.evaluate(have[0])
    if parts != rows:
        if rows != Lin.of(1) or not parts.is_const():
            raise errors.NkiError("nl.broadcast_to: dim 0 of size %s to %s: only a dim of size 1 "
                                  "broadcasts" % (rows, parts))
        v = ops.partition_broadcast(tr, v, parts.const)
    if [tr.evaluate(x) for x in v.logical_lins()] == [tr.evaluate(x) for x in want]:
        return Tile(v)
    return ops.copy(Tile(broadcast_view(v, want)))


def unsupported(name):
    def f(*args, **kw):
        raise errors.NkiError("nl.%s is not modelled by ncverify's front end" % name)

    return f


for _n in ("where", "all_reduce", "mean",
           "var", "softmax", "erf", "logical_and", "logical_or", "invert", "ceil", "floor",
           "sign", "trunc", "cos", "tan", "arctan", "atomic_rmw", "select",
           "expand_dims", "load_transpose", "layer_norm", "rms_norm"):
    globals()[_n] = unsupported(_n)

from .launch import nc, spmd_dim  # noqa: E402,F401  (launch grid axes: launch.py)
# The random calls live in their own module (language_random.py).
from .language_random import dropout, rand, random_seed  # noqa: E402,F401
# nl.gather_flattened lives with the ISA gathers (gathers.py).
from .gathers import gather_flattened  # noqa: E402,F401


class _Limits:
    """nl.fp32.min etc.: the finite range of a dtype (as numpy's finfo)."""

    def __init__(self, np_dtype):
        fi = np.finfo(np_dtype)
        self.min, self.max, self.eps = float(fi.min), float(fi.max), float(fi.eps)


fp32 = _Limits(np.float32)
fp16 = _Limits(np.float16)

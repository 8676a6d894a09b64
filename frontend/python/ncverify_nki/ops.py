"""The instructions behind NKI's calls: each function emits IR instructions into the trace and
returns the result tile. Engine choices come from rules.py."""

import numbers

import numpy as np

from . import errors, rules, trace
from .dtypes import normalize
from .expr import ONE, Lin
from .program import Enum, Tensor
from .tiles import Tile, as_view

ALU = {}  # function object -> ALU op name
ACT = {}  # function object -> activation func name
# Function objects NKI documents as operators or activation functions but the model does not
# compute (the new API's shared page: nl.erf, nl.logical_and, ...) -> why; naming one as an `op=`
# stops the trace with the reason instead of "not an operation the model knows".
UNMODELLED = {}


def _register_numpy():
    for f, n in [(np.add, "add"), (np.subtract, "subtract"), (np.multiply, "multiply"),
                 (np.divide, "divide"), (np.true_divide, "divide"), (np.maximum, "max"),
                 (np.max, "max"), (np.amax, "max"), (np.minimum, "min"), (np.min, "min"),
                 (np.amin, "min"), (np.power, "pow"), (np.greater, "is_gt"),
                 (np.greater_equal, "is_ge"), (np.less, "is_lt"), (np.less_equal, "is_le"),
                 (np.equal, "is_equal"), (np.not_equal, "not_equal"),
                 (np.bitwise_and, "bitwise_and"), (np.bitwise_or, "bitwise_or"),
                 (np.bitwise_xor, "bitwise_xor"), (np.left_shift, "shift_left"),
                 (np.right_shift, "shift_right"), (np.sum, "add")]:
        ALU[f] = n
    for f, n in [(np.exp, "exp"), (np.log, "log"), (np.tanh, "tanh"), (np.square, "square"),
                 (np.sqrt, "sqrt"), (np.reciprocal, "reciprocal"), (np.sin, "sin"),
                 (np.abs, "abs"), (np.copy, "copy")]:
        ACT[f] = n


_register_numpy()


def alu_name(f, what="op"):
    if isinstance(f, str):
        return f
    try:
        if f in ALU:
            return ALU[f]
    except TypeError:
        pass
    _refuse_unmodelled(f, what)
    if unary_alu_name(f) is not None:
        raise errors.NkiError("%s %s is a unary operator: the new API's pages document unary "
                              "ALU operators as nisa.tensor_scalar / nisa.tensor_scalar_reduce "
                              "op0 only (with operand0 None or 0; in `import nki` kernels); "
                              "elsewhere use nisa.activation" % (what, _fname(f)))
    try:
        unary = f in ACT
    except TypeError:
        unary = False
    if unary:
        raise errors.NkiError("%s %s is an activation function, not an ALU operator: use "
                              "nisa.activation" % (what, _fname(f)))
    raise errors.NkiError("%s %s is not an ALU operation the model knows" % (what, _fname(f)))


# The new API's unary ALU operators (shared page "Supported Math Operators for NKI ISA",
# Arithmetic Unary: nl.abs, nl.square, nl.relu, nl.rsqrt, nl.reciprocal). They are the
# activation-function objects, so they are recognised through ACT.
UNARY_ALU = ("abs", "square", "relu", "rsqrt", "reciprocal")


def unary_alu_name(f):
    """The ALU operator name of a unary operator object (nl.rsqrt -> "rsqrt"), else None."""
    if isinstance(f, str):
        return f if f in UNARY_ALU else None
    try:
        name = ACT.get(f)
    except TypeError:
        return None
    return name if name in UNARY_ALU else None


def unary_op0(call, op0, operand0, reverse0):
    """(name, 0.0) when op0 is a unary operator, else None. The tensor_scalar and
    tensor_scalar_reduce pages: operand0 "must be None or 0 when op0 is a unary operator (e.g.,
    nl.abs)"; which input a reversed unary operator reads is not documented, so reverse0 is
    refused."""
    name = unary_alu_name(op0)
    if name is None:
        return None
    if operand0 is not None and not (is_scalar(operand0) and float(operand0) == 0.0):
        raise errors.NkiError("%s: op0=nl.%s is a unary operator; operand0 must be None or 0 (the "
                              "page), not %r" % (call, name, operand0))
    if reverse0:
        raise errors.NkiError("%s: reverse0=True with the unary op0=nl.%s: the page does not say "
                              "which input a reversed unary operator reads" % (call, name))
    return name, 0.0


def act_name(f):
    if isinstance(f, str):
        return f
    try:
        if f in ACT:
            return ACT[f]
    except TypeError:
        pass
    _refuse_unmodelled(f, "activation function")
    raise errors.NkiError("activation function %s is not one the model knows (exp, log, tanh, "
                          "relu, sigmoid, gelu, silu, square, sqrt, rsqrt, reciprocal, sin, abs, "
                          "copy)" % _fname(f))


def _refuse_unmodelled(f, what):
    try:
        why = UNMODELLED.get(f)
    except TypeError:
        return
    if why is not None:
        raise errors.NkiError("%s %s is not modelled (%s)" % (what, _fname(f), why))


def _fname(f):
    return getattr(f, "__name__", repr(f))


def is_scalar(x):
    return isinstance(x, numbers.Real) and not isinstance(x, bool) or isinstance(x, np.floating)


def _dtype(dtype, default):
    return normalize(dtype).name if dtype is not None else default


def _free_size(view):
    sizes = view.logical_lins()[1:]
    if sizes and not any(s.terms for s in sizes):  # known sizes (most): their product
        n = 1
        for s in sizes:
            n *= s.const
        return Lin((), n)
    n = ONE
    for s in sizes:
        n = n.mul(s)
    return n


def _is_column(view):
    return len(view.order) >= 1 and _free_size(view) == Lin.of(1)


def _out(tr, out, like, dtype, hint=None, mem="sbuf"):
    """The destination: `out` (a view, in place) or a fresh tile shaped like `like`."""
    if out is not None:
        return out, None
    t = rules.result_tile(tr, mem, dtype, like.logical_lins(), hint)
    return t.full_view(), t


def _engine_arg(engine):
    # No engine= in the source: unpinned, the compiler-choice rules pick (model/compiler).
    return [("engine", Enum(engine))] if engine is not None else []


def _v(x, what="operand"):
    """as_view for an engine operand (a pending transpose result is copied back first)."""
    return rules.operand(trace.current(), as_view(x, what))


def binary(op, a, b, out=None, dtype=None, engine=None, operator=False):
    """`a op b`; `operator` says it came from a Python operator (`1.0 / t` is a reciprocal,
    nl.divide(1.0, t) an ALU divide, as the registered kernels model them)."""
    tr = trace.current()
    if is_scalar(a) and is_scalar(b):
        raise errors.NkiError("an elementwise op needs at least one tile")
    if is_scalar(a):
        if op == "divide" and float(a) == 1.0 and engine is None and operator:
            return reciprocal(b, dtype=dtype, out=out)
        v = _v(b)
        rev = op not in ("add", "multiply", "max", "min")
        return _tensor_scalar(tr, v, op, float(a), rev, out, _weak(tr, dtype, v, a), engine)
    va = _v(a)
    if is_scalar(b):
        return _tensor_scalar(tr, va, op, float(b), False, out, _weak(tr, dtype, va, b), engine)
    vb = _v(b)
    if dtype is None:
        dtype = promote(va.tensor.dtype, vb.tensor.dtype)
    va, vb = _agree_partitions(tr, va, vb)
    if _is_column(vb) and not _is_column(va):
        _check_partitions_agree(va, vb, op)
        return _tensor_scalar(tr, va, op, vb, False, out, dtype, engine)
    if _is_column(va) and not _is_column(vb):
        _check_partitions_agree(vb, va, op)
        rev = op not in ("add", "multiply", "max", "min")
        return _tensor_scalar(tr, vb, op, va, rev, out, dtype, engine)
    check_same_shape(va, vb, op)
    dst, t = _out(tr, out, va, _dtype(dtype, va.tensor.dtype))
    args = [(None, dst), (None, va), (None, vb), ("op", Enum(op))] + _engine_arg(engine)
    tr.instr("tensor_tensor", args, produces=t)
    return Tile(dst)


def _weak(tr, dtype, view, scalar):
    """The output dtype of an arithmetic op on a tile and a Python number without dtype=, in the
    legacy API: "Weakly typed scalars ... will be inferred as the widest dtype supported by
    hardware" (integer int32, floating float32), then promoted with the tile's ("NKI Type
    Promotion", nki.api.shared at SDK 2.26: "(np.float16, 1.2) -> np.float32", "(np.int8, 2) ->
    np.int32"). The new API's pages state no such rule: there the tile's dtype is kept."""
    if dtype is not None or tr.dialect != "neuronxcc":
        return dtype
    weak = "int32" if isinstance(scalar, (int, np.integer)) else "fp32"
    return promote(view.tensor.dtype, weak)


_FLOAT_RANK = {"fp8_e4m3": 1, "fp8_e4m3fn": 1, "fp8_e5m2": 1, "bf16": 2, "fp16": 2, "fp32": 3}
_INT_RANK = {"uint8": 1, "uint16": 2, "int32": 3, "uint32": 3}


def promote(a, b):
    """The output dtype of an arithmetic op on tiles of dtypes a and b without dtype= ("NKI Type
    Promotion", nki.api.shared at SDK 2.26; tensor_tensor's dtype: "whichever input type has the
    highest precision"): (float, int) the float; (float, float) the wider, bf16 with fp16 fp32,
    two fp8 kinds bf16; (int, int) the wider, int32 with uint32 fp32."""
    if a == b:
        return a
    fa, fb = a in _FLOAT_RANK, b in _FLOAT_RANK
    if fa != fb:
        return a if fa else b
    rank = _FLOAT_RANK if fa else _INT_RANK
    if rank[a] == rank[b]:
        return "bf16" if rank[a] == 1 else "fp32"  # fp8 kinds; bf16/fp16; int32/uint32
    return a if rank[a] > rank[b] else b


def _agree_partitions(tr, va, vb):
    """NumPy broadcasting of the partition dim: an operand over one partition is copied to the
    other operand's partitions first (partition_broadcast)."""
    pa, pb = tr.evaluate(va.logical_lins()[0]), tr.evaluate(vb.logical_lins()[0])
    if not (pa.is_const() and pb.is_const()) or pa == pb:
        return va, vb
    if pb.const == 1:
        return va, partition_broadcast(tr, vb, pa.const)
    if pa.const == 1:
        return partition_broadcast(tr, va, pb.const), vb
    return va, vb  # 64 against 128 partitions: not a broadcast; the shape checks say so


def partition_broadcast(tr, view, parts):
    """A fresh SBUF tile holding the one partition of `view` on each of `parts` partitions.

    The compiler's lowering of a partition broadcast is not documented (a GpSimd or stream
    shuffle, a matmul with ones, DMAs are all possible). Every one of them copies values
    exactly, so the model picks one it can state: the row goes to an HBM scratch tensor and
    comes back with a DMA that reads it `parts` times (an HBM access may repeat a dim with step
    0; an on-chip one may not). The values are the hardware's; the latency is this choice's
    (frontend/README.md)."""
    if parts > 128:
        raise errors.NkiError("a broadcast to %d partitions: a tile has at most 128" % parts)
    if view.tensor.mem == "psum":
        view = rules.evict(tr, view)
    shape = view.logical_lins()
    dtype = view.tensor.dtype
    row = Tensor(tr.unique(view.tensor.name + "_row"), "hbm", dtype, shape, "scratch")
    tr.hbm.append(row)
    tr.instr("dma_copy", [(None, row.full_view()), (None, view)])
    from .tiles import broadcast_view

    src = broadcast_view(row.full_view(), [Lin.of(parts)] + shape[1:])
    t = rules.result_tile(tr, "sbuf", dtype, [Lin.of(parts)] + shape[1:],
                          view.tensor.name + "_bcast")
    tr.instr("dma_copy", [(None, t.full_view()), (None, src)], produces=t)
    return t.full_view()


def _check_partitions_agree(data, column, what):
    """A column operand is one value per partition of the data tile (the ISA's tensor_scalar).
    A single partition was broadcast before (_agree_partitions); other counts that differ are
    refused here, at the call, rather than emitted and failed by the ISA rule at run time."""
    r = trace.current().evaluate
    pd, pc = r(data.logical_lins()[0]), r(column.logical_lins()[0])
    if pd.is_const() and pc.is_const() and pd.const != pc.const:
        raise errors.NkiError("%s of a tile over %d partitions with a column over %d: only a "
                              "single partition broadcasts" % (what, pd.const, pc.const))


def check_same_shape(a, b, what):
    """Operands of an elementwise op agree in partitions and free size (when both are known)."""
    r = trace.current().evaluate
    pa, pb = [r(x) for x in a.logical_lins()[:1]], [r(x) for x in b.logical_lins()[:1]]
    fa, fb = r(_free_size(a)), r(_free_size(b))
    known = all(x.is_const() for x in pa + pb + [fa, fb])
    if known and (pa != pb or fa != fb):
        raise errors.NkiError("%s of tiles with different shapes: %s and %s" %
                              (what, tuple(a.shape), tuple(b.shape)))


def _tensor_scalar(tr, v, op, operand, reverse, out, dtype, engine, op1=None, operand1=None,
                   reverse1=False):
    dst, t = _out(tr, out, v, _dtype(dtype, v.tensor.dtype))
    args = [(None, dst), (None, v), ("op0", Enum(op)), ("operand0", operand)]
    if reverse:
        args.append(("reverse0", True))
    if op1 is not None:
        args += [("op1", Enum(op1)), ("operand1", operand1)]
        if reverse1:
            args.append(("reverse1", True))
    args += _engine_arg(engine)
    tr.instr("tensor_scalar", args, produces=t)
    return Tile(dst)


def _is_bypass(op):
    return any(op is b for b in BYPASS)


BYPASS = []  # nl.bypass of the new API: an operator that skips its tensor_scalar stage


def tensor_scalar(data, op0, operand0, reverse0=False, op1=None, operand1=None, reverse1=False,
                  dtype=None, engine=None, out=None, unary0=None):
    """unary0: the (name, 0.0) of a unary op0 that the caller has checked (unary_op0), which
    replaces op0 and operand0."""
    tr = trace.current()
    # nl.bypass (NKI 0.4.0) as op1 skips the second stage, as op0 the first: the instruction is
    # then the other stage alone. Both stages bypassed would be a plain cast, which this call
    # does not record.
    if op1 is not None and _is_bypass(op1):
        op1, operand1, reverse1 = None, None, False
    if _is_bypass(op0):
        if op1 is None:
            raise errors.NkiError("tensor_scalar with op0 and op1 both nl.bypass (or op1 absent) "
                                  "computes nothing; use nisa.tensor_copy for a copy")
        op0, operand0, reverse0, op1, operand1, reverse1 = op1, operand1, reverse1, None, None, \
            False
    v = _v(data, "data")
    if unary0 is not None:
        op0, operand0 = unary0
    o0 = float(operand0) if is_scalar(operand0) else _v(operand0, "operand0")
    o1 = None
    if op1 is not None:
        o1 = float(operand1) if is_scalar(operand1) else _v(operand1, "operand1")
    return _tensor_scalar(tr, v, alu_name(op0, "op0"), o0, bool(reverse0), out, dtype, engine,
                          alu_name(op1, "op1") if op1 is not None else None, o1, bool(reverse1))


def reciprocal(x, dtype=None, out=None, engine=None):
    tr = trace.current()
    v = _v(x)
    dst, t = _out(tr, out, v, _dtype(dtype, v.tensor.dtype))
    tr.instr("reciprocal", [(None, dst), (None, v)] + _engine_arg(engine), produces=t)
    return Tile(dst)


def copy(x, dtype=None, engine=None, out=None):
    tr = trace.current()
    v = as_view(x)
    dst, t = _out(tr, out, v, _dtype(dtype, v.tensor.dtype))
    if v.tensor.mem == "hbm":
        raise errors.NkiError("copy of an HBM tensor: load it with nl.load first")
    tr.instr("tensor_copy", [(None, dst), (None, v)] + _engine_arg(engine), produces=t)
    return Tile(dst)


def activation(func, data, bias=None, scale=1.0, reduce_res=None, reduce_cmd="idle", dtype=None,
               out=None):
    """nisa.activation: reduce_cmd drives the accumulator registers as given (the IR's default is
    idle); reduce_res reads them out. The caller has checked that the reduction is an add."""
    tr = trace.current()
    v = _v(data, "data")
    dst, t = _out(tr, out, v, _dtype(dtype, v.tensor.dtype))
    args = [(None, dst), (None, v), ("func", Enum(act_name(func)))]
    if is_scalar(scale):
        if float(scale) != 1.0:
            args.append(("scale", float(scale)))
    else:
        args.append(("scale", _v(scale, "scale")))
    if bias is not None:
        args.append(("bias", float(bias) if is_scalar(bias) else _v(bias, "bias")))
    if reduce_cmd != "idle":
        args.append(("reduce_cmd", Enum(reduce_cmd)))
    if reduce_res is not None:
        args.append(("reduce_res", as_view(reduce_res, "reduce_res")))
    tr.instr("activation", args, produces=t)
    return Tile(dst)


def _axes(view, axis):
    rank = len(view.order)
    axis = [axis] if isinstance(axis, int) else list(axis)
    axis = sorted(a + rank if a < 0 else a for a in axis)
    if 0 in axis:
        raise errors.NkiError("reduction along the partition axis is not an engine "
                              "instruction; transpose first")
    if axis != list(range(rank - len(axis), rank)):
        raise errors.NkiError("the model reduces the innermost free axes; axis=%s of a rank-%d "
                              "tile is not" % (axis, rank))
    return len(axis)


def reduce(op, data, axis, negate=False, dtype=None, keepdims=False, out=None):
    """A reduction of the innermost free axes. The result keeps the partition axis and the other
    free axes; keepdims=True keeps each reduced axis as size 1 (numpy's rule), and without it an
    on-chip tile still keeps one free axis (tiles.index_view's rule), so [P, F] gives [P, 1]
    either way."""
    tr = trace.current()
    v = _v(data, "data")
    n = _axes(v, axis)
    kept = v.logical_lins()[:len(v.order) - n]
    if out is None:
        ones = [Lin.of(1)] * (n if keepdims else max(0, 2 - len(kept)))
        t = rules.result_tile(tr, "sbuf", _dtype(dtype, v.tensor.dtype), kept + ones)
        dst = t.full_view()
    else:
        dst, t = out, None
    args = [(None, dst), (None, v), ("op", Enum(op))]
    if n != 1:
        args.append(("axes", n))
    if negate:
        args.append(("negate", True))
    tr.instr("tensor_reduce", args, produces=t)
    return Tile(dst)


# The Tensor engine's input dtypes (ISA nc_matmul: float8_e4m3/float8_e5m2/bfloat16/float16/
# tfloat32/float32; the model's tfloat32 is fp32). The newer page adds that an fp32 operand needs
# an fp32 partner: the engine multiplies either in fp32 passes or in the low-precision path.
_MATMUL_DTYPES = ("fp8_e4m3", "fp8_e5m2", "bf16", "fp16", "fp32")


def _check_matmul_dtypes(ds, dm):
    for what, d in (("stationary", ds), ("moving", dm)):
        if d not in _MATMUL_DTYPES:
            raise errors.NkiError("nc_matmul: the %s tile is %s; the Tensor engine reads fp8, "
                                  "bf16, fp16 or fp32" % (what, d))
    if (ds == "fp32") != (dm == "fp32"):
        raise errors.NkiError("nc_matmul: an fp32 operand needs an fp32 partner (stationary %s, "
                              "moving %s)" % (ds, dm))


def matmul(stationary, moving, hint=None):
    tr = trace.current()
    s, m = _v(stationary, "stationary"), _v(moving, "moving")
    if s.tensor.mem == "hbm" or m.tensor.mem == "hbm":
        raise errors.NkiError("matmul operands must be on chip (load them first)")
    _check_matmul_dtypes(s.tensor.dtype, m.tensor.dtype)
    t = rules.result_tile(tr, "psum", "fp32", [_free_size(s), _free_size(m)], hint)
    dst = t.full_view()
    tr.instr("matmul", [(None, dst), ("stationary", s), ("moving", m)], produces=t)
    return Tile(dst)


def transpose(data, engine=None, dtype=None):
    tr = trace.current()
    v = _v(data, "data")
    out_dt = _dtype(dtype, v.tensor.dtype)
    if engine is None and rules.fits_vector_transpose(v) and out_dt == v.tensor.dtype:
        engine = "vector"  # the compiler's choice by shape (model/compiler nc_transpose_engine)
    if engine == "vector":
        return Tile(rules.vector_engine_transpose(tr, v, out_dt, tr.assigned_name()).full_view())
    if engine not in (None, "tensor"):
        raise errors.NkiError("nc_transpose runs on the Tensor or Vector engine, not %s" % engine)
    return Tile(rules.tensor_engine_transpose(tr, v, out_dt, tr.assigned_name()).full_view())


def memset_view(view, value, engine=None):
    tr = trace.current()
    tr.instr("memset", [(None, view), ("value", float(value))] + _engine_arg(engine))


def _engines_start_at(start, rows):
    """The compute engines' partition-start rule (model/isa: start 0 for more than 64 partitions,
    0 or 64 for 33-64, a multiple of 32 for at most 32)."""
    if rows > 64:
        return start == 0
    if rows > 32:
        return start in (0, 64)
    return start % 32 == 0


def assign_scalar(view, value):
    """`tile[i, j] = c`: a memset of the view. A view of SBUF that starts at a partition the
    engines cannot start at (`t[1, j] = c` of a [32, n] tile) cannot be a memset there; the
    compiler's lowering of such an assignment is not documented, so the model picks one that is
    legal and exact: a memset of a fresh tile at partition 0 and a DMA into place (DMA queues
    address any partition). The values are the hardware's; the latency is this choice's
    (frontend/README.md)."""
    start, rows = view.dims[0][0], view.dims[0][1]
    if view.tensor.mem == "sbuf" and start.is_const() and rows.is_const() and \
            not _engines_start_at(start.const, rows.const):
        tr = trace.current()
        t = rules.result_tile(tr, "sbuf", view.tensor.dtype, view.logical_lins(),
                              view.tensor.name + "_fill")
        tr.instr("memset", [(None, t.full_view()), ("value", float(value))], produces=t)
        tr.instr("dma_copy", [(None, view), (None, t.full_view())])
        return
    memset_view(view, value)


def affine_select(pred, on_true, on_false, dtype=None):
    tr = trace.current()
    v = as_view(on_true, "on_true_tile")
    cond = _single_condition(pred, "pred")
    dst, t = _out(tr, None, v, _dtype(dtype, v.tensor.dtype))
    src = v
    if v.tensor.mem == "psum":
        tr.instr("tensor_copy", [(None, dst), (None, v)], produces=t)
        src = dst
    offset, cm, steps, cmp = _affine_args(cond)
    tr.instr("affine_select", [(None, dst), ("on_true", src), ("offset", offset),
                               ("channel_multiplier", cm), ("steps", steps), ("cmp", Enum(cmp)),
                               ("on_false", float(on_false))], produces=t)
    return Tile(dst)


def iota(expr, dtype, shape=None):
    tr = trace.current()
    from .expr import IndexExpr

    if not isinstance(expr, IndexExpr):
        raise errors.NkiError("iota takes an affine expression of index grids")
    shape = list(expr.shape)
    t = rules.result_tile(tr, "sbuf", _dtype(dtype, "int32"), shape)
    dst = t.full_view()
    offset, cm, steps, _ = _affine_args((expr, ">="))
    tr.instr("iota", [(None, dst), ("offset", offset), ("channel_multiplier", cm),
                      ("steps", steps)], produces=t)
    return Tile(dst)


_CMP = {"<": "lt", "<=": "le", ">": "gt", ">=": "ge", "==": "eq", "!=": "ne"}


def _single_condition(pred, what):
    from .expr import Predicate

    if not isinstance(pred, Predicate) or len(pred.conds) != 1:
        raise errors.NkiError("%s must be one affine comparison of index grids" % what)
    return pred.conds[0]


def _affine_args(cond):
    """offset, channel multiplier, per-axis steps (printed against the destination view) and
    the comparison of `expr OP 0`."""
    from .program import AxisSteps

    expr, op = cond
    coefs = dict(expr.coefs)
    cm = coefs.pop(0, 0)
    return expr.base, cm, AxisSteps(coefs, len(expr.shape)), _CMP[op]

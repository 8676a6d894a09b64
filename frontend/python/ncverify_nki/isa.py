"""Stand-in for `neuronxcc.nki.isa` (nisa): one instruction per call, as the ISA documents."""

from . import errors, ops, trace
from .sealed import SealedClass
from .tiles import Tile, as_view


class _Engine:
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return "nisa.%s_engine" % self.name


tensor_engine = _Engine("tensor")
vector_engine = _Engine("vector")
scalar_engine = _Engine("scalar")
gpsimd_engine = _Engine("gpsimd")
unknown_engine = _Engine(None)


class engine(metaclass=SealedClass):  # noqa: N801 (nisa.engine.vector etc.)
    tensor = tensor_engine
    vector = vector_engine
    scalar = scalar_engine
    gpsimd = gpsimd_engine
    unknown = unknown_engine


class reduce_cmd(metaclass=SealedClass):  # noqa: N801
    idle = "idle"
    reset = "reset"
    reduce = "reduce"
    reset_reduce = "reset_reduce"


def _eng(e):
    if e is None:
        return None
    if isinstance(e, _Engine):
        return e.name
    raise errors.NkiError("engine= takes nisa.tensor_engine / vector_engine / scalar_engine / "
                          "gpsimd_engine")


def _masked(x, mask):
    if mask is None or not isinstance(x, Tile):
        return x
    from .masks import apply_mask

    return Tile(apply_mask(x._view, mask))


def nc_matmul(stationary, moving, is_stationary_onezero=False, is_moving_onezero=False,
              mask=None, is_transpose=False, **kw):
    if is_transpose:
        # The Tensor engine's transpose mode: with the identity as the moving tile the product
        # stationary.T @ I is the stationary tile transposed, passed through exactly. Modelled
        # as a Tensor-engine transpose of `stationary` into PSUM (the moving tile is not read).
        return ops.pe_transpose(_masked(stationary, mask), trace.current().assigned_name())
    return ops.matmul(_masked(stationary, mask), _masked(moving, mask),
                      trace.current().assigned_name())


def nc_transpose(data, mask=None, dtype=None, engine=unknown_engine, **kw):
    return ops.transpose(_masked(data, mask), _eng(engine), dtype)


def activation(op, data, bias=None, scale=1.0, reduce_op=None, reduce_res=None,
               reduce_cmd=None, mask=None, dtype=None, **kw):
    return ops.activation(op, _masked(data, mask), bias=bias, scale=scale, reduce_op=reduce_op,
                          reduce_res=reduce_res, reduce_cmd=reduce_cmd if reduce_res is not None
                          else None, dtype=dtype)


def activation_reduce(op, data, reduce_op, reduce_res, bias=None, scale=1.0, mask=None,
                      dtype=None, **kw):
    return ops.activation(op, _masked(data, mask), bias=bias, scale=scale, reduce_op=reduce_op,
                          reduce_res=reduce_res, reduce_cmd="reset_reduce", dtype=dtype)


def tensor_reduce(op, data, axis, mask=None, dtype=None, negate=False, keepdims=False, **kw):
    return ops.reduce(ops.alu_name(op), _masked(data, mask), axis, negate=negate, dtype=dtype)


def tensor_scalar(data, op0, operand0, reverse0=False, op1=None, operand1=None, reverse1=False,
                  dtype=None, mask=None, engine=unknown_engine, **kw):
    return ops.tensor_scalar(_masked(data, mask), op0, operand0, reverse0, op1, operand1,
                             reverse1, dtype, _eng(engine))


def tensor_tensor(data1, data2, op, dtype=None, mask=None, engine=unknown_engine, **kw):
    return ops.binary(ops.alu_name(op), _masked(data1, mask), _masked(data2, mask), dtype=dtype,
                      engine=_eng(engine))


def tensor_copy(src, mask=None, dtype=None, engine=unknown_engine, **kw):
    return ops.copy(_masked(src, mask), dtype=dtype, engine=_eng(engine))


def tensor_copy_predicated(src, dst, predicate, mask=None, reverse_pred=False, **kw):
    """dst = src where predicate (a tile) is non-zero; elsewhere dst keeps its value."""
    from .expr import Predicate

    if isinstance(predicate, Predicate):
        raise errors.NkiError("tensor_copy_predicated takes its predicate as a tile; an affine "
                              "condition of index grids is what affine_select takes")
    tr = trace.current()
    pv = as_view(predicate, "predicate")
    if pv.tensor.dtype not in ("uint8", "uint16", "uint32", "int32"):
        raise errors.NkiError("a copy predicate must be an integer tile (uint8/16/32, int32); "
                              "this one is %s" % pv.tensor.dtype)
    d = as_view(_masked(dst, mask), "dst")
    src_v = float(src) if ops.is_scalar(src) else ops._v(_masked(src, mask), "src")
    args = [(None, d), (None, src_v), ("predicate", ops._v(_masked(predicate, mask), "predicate"))]
    if reverse_pred:
        args.append(("reverse_predicate", True))
    tr.instr("tensor_copy_predicated", args)


def reciprocal(data, dtype=None, mask=None, **kw):
    return ops.reciprocal(_masked(data, mask), dtype=dtype)


def tensor_scalar_reduce(data, op0, operand0, reduce_op, reduce_res, reverse0=False, dtype=None,
                         mask=None, **kw):
    tr = trace.current()
    v = as_view(_masked(data, mask), "data")
    dst, t = ops._out(tr, None, v, ops._dtype(dtype, v.tensor.dtype))
    if ops.alu_name(reduce_op, "reduce_op") not in ("add", "max", "min"):
        raise errors.NkiError("tensor_scalar_reduce reduces with add, max or min")
    args = [(None, dst), (None, v), ("op0", _enum(ops.alu_name(op0, "op0"))),
            ("operand0", float(operand0) if ops.is_scalar(operand0) else as_view(operand0)),
            ("reduce_op", _enum(ops.alu_name(reduce_op))),
            ("reduce_res", as_view(reduce_res, "reduce_res"))]
    if reverse0:
        args.append(("reverse0", True))
    tr.instr("tensor_scalar_reduce", args, produces=t)
    return Tile(dst)


def _enum(name):
    from .program import Enum

    return Enum(name)


def affine_select(pred, on_true_tile, on_false_value, mask=None, dtype=None, **kw):
    return ops.affine_select(pred, _masked(on_true_tile, mask), on_false_value, dtype)


def iota(expr, dtype, mask=None, **kw):
    return ops.iota(expr, dtype)


def memset(shape, value, dtype, mask=None, engine=unknown_engine, **kw):
    from .language import allocate

    t = allocate(shape, dtype, None)
    ops.memset_view(t._view, value, _eng(engine))
    return t


def dma_copy(dst=None, src=None, mask=None, **kw):


    tr = trace.current()
    if dst is None or src is None:
        raise errors.NkiError("dma_copy needs dst= and src=")
    d, s = as_view(_masked(dst, mask)), as_view(_masked(src, mask))
    queue = tr.queue_for(d.tensor if d.tensor.mem == "hbm" else s.tensor)
    tr.instr("dma_copy", [(None, d), (None, s)] + ([("queue", queue)] if queue else []))



def unsupported(name):
    def f(*args, **kw):
        raise errors.NkiError("nisa.%s is not modelled by ncverify's front end" % name)

    return f


for _n in ("bn_stats", "bn_aggr", "local_gather", "nc_find_index8", "nc_match_replace8",
           "max8", "range_select", "select_reduce", "sequence_bounds", "tensor_tensor_scan",
           "nc_stream_shuffle", "dropout", "iota_partition", "scalar_tensor_tensor",
           "tensor_partition_reduce", "nc_matmul_mx", "quantize_mx", "dma_transpose",
           "exponential", "tensor_copy_dynamic_src", "tensor_copy_dynamic_dst", "rand2",
           "rng", "core_barrier", "sendrecv", "builtin"):
    globals()[_n] = unsupported(_n)

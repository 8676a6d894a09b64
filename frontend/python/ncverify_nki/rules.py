"""How the front end lowers NKI calls onto IR instructions, once, with the same rules the
registered kernels (kernels/sd_attention.cpp) state in their header comment. Which engine runs a
call without `engine=` is not decided here: such calls are emitted unpinned (no `engine=` in the
.nkir text) and the compiler-choice rules of model/compiler pick the engine, for traced kernels
and registered ones alike; a call with `engine=` stays pinned.

- `dst[...] = call(...)` makes the call write dst directly (one instruction); `dst[...] = name`,
  a tile kept in a variable, is a copy, as written;
- copies and PSUM evictions (nl.copy, nisa.tensor_copy without engine, `dst[...] = tile`) are
  unpinned tensor_copy; a copy to or from HBM is a DMA;
- `tile op scalar` and `tile op column` are unpinned tensor_scalar, `tile op tile` unpinned
  tensor_tensor, the operator `1.0 / tile` and nl.reciprocal unpinned reciprocal (while
  nl.divide(1.0, tile) is an ALU divide with reversed operands);
- an nc_transpose without engine (the compiler picks the Tensor engine by shape beyond 32x32,
  model/compiler nc_transpose_engine), nl.transpose and the transpose a
  `nl.matmul(transpose_x=False)` needs run on the Tensor engine into an fp32 PSUM tile; an
  engine operand reads it after a copy back to SBUF in the input's dtype, while an explicit
  copy or an assignment is itself that copy (`operand`); a Vector-engine transpose larger than 32x32 is tiled
  into 32x32 transposes (the last block partial);
- affine_select cannot read PSUM (GpSimd): a PSUM input is copied to the destination first and
  masked in place;
- `+=` matmuls into a PSUM tile not yet written (nl.zeros or a fresh nl.ndarray) are an
  accumulation group: the first matmul overwrites; one loop below the tile's declaration the
  loop's first iteration is peeled, and where that is not possible the tile is zeroed first
  (tiles.accumulate_matmul);
- a store of a PSUM tile (DMA cannot read PSUM) is preceded by an unpinned copy to an SBUF tile
  of the same dtype;
- a load of `nl.shared_constant(values)` is generated on chip, as the registered allocated kernel
  does: an identity matrix is a memset to 1 and an affine_select keeping the diagonal, a
  constant matrix a memset; other constants are not modelled (the IR has no constant data);
- every HBM tensor gets its own DMA queue, numbered in the order of its first transfer;
- buffers are declared single-buffered (the source gives no buffer count); the compiler's
  multi-buffering of loop-local ones is model/compiler's compiler_buffers.
"""

from . import errors
from .expr import Lin
from .program import Enum, View

VECTOR_TRANSPOSE = 32  # the Vector engine transposes at most 32x32 (ISA-OLD nc_transpose)


def can_write(ins, mem):
    if mem == "hbm":
        return ins.op == "dma_copy"
    if ins.op == "matmul":
        return mem == "psum"
    if ins.op == "transpose":
        eng = ins.get("engine")
        return mem == "psum" if eng is None or eng.name == "tensor" else True
    return True


def copy(tr, dst, src, engine=None):
    if dst.tensor.mem == "hbm" and src.tensor.mem == "psum":
        src = evict(tr, src)
    if dst.tensor.mem == "hbm" or src.tensor.mem == "hbm":
        queue = tr.queue_for(dst.tensor if dst.tensor.mem == "hbm" else src.tensor)
        return tr.instr("dma_copy", [(None, dst), (None, src)] +
                        ([("queue", queue)] if queue else []))
    args = [(None, dst), (None, src)]
    if engine is not None:
        args.append(("engine", Enum(engine)))
    return tr.instr("tensor_copy", args)


def constant_tile(tr, values, dtype):
    """The SBUF tile a load of constant `values` gives, generated on chip."""
    import numpy as np

    p, f = values.shape
    if p > 128:
        raise errors.NkiError("a shared constant with %d partitions (at most 128)" % p)
    t = result_tile(tr, "sbuf", dtype, [p, f])
    view = t.full_view()
    if p == f and np.array_equal(values, np.identity(p, dtype=values.dtype)):
        produce(tr, t, "memset", [(None, view), ("value", 1.0)])
        from .program import AxisSteps

        produce(tr, t, "affine_select", [(None, view), ("on_true", view), ("offset", Lin.of(0)),
                                         ("channel_multiplier", 1), ("steps", AxisSteps({1: -1}, 2)),
                                         ("cmp", Enum("eq")), ("on_false", 0.0)])
    elif values.size and np.all(values == values.flat[0]):
        produce(tr, t, "memset", [(None, view), ("value", float(values.flat[0]))])
    else:
        raise errors.NkiError("a shared constant other than an identity or a constant matrix is "
                              "not modelled (the IR has no constant data)")
    return view


def evict(tr, view):
    """A compiler-inserted PSUM -> SBUF copy (same dtype) of `view`; returns the SBUF view."""
    if view.tensor.copy_back is not None:
        return operand(tr, view)
    t = result_tile(tr, "sbuf", view.tensor.dtype, view.logical_lins(), view.tensor.name + "_sb")
    tr.instr("tensor_copy", [(None, t.full_view()), (None, view)])
    return t.full_view()


def result_tile(tr, mem, dtype, shape, hint=None):
    t = tr.temp(mem, dtype, [Lin.of(s) for s in shape], hint)
    return t


def produce(tr, tensor, op, args):
    """Emits `op` writing the fresh result `tensor` (its full view first in args)."""
    return tr.instr(op, args, produces=tensor)


def tensor_engine_transpose(tr, src, out_dtype, hint=None):
    """nc_transpose on the Tensor engine: PSUM fp32 [F, P], then a copy to SBUF (out_dtype)."""
    shape = src.shape
    if len(shape) != 2:
        raise errors.NkiError("transpose of a rank-%d tile; the model transposes [P, F] tiles"
                              % len(shape))
    p, f = shape
    ps = result_tile(tr, "psum", "fp32", [f, p], (hint or "t") + "_psum")
    produce(tr, ps, "transpose", [(None, ps.full_view()), (None, src)])
    ps.copy_back = (out_dtype, hint)  # copied to SBUF when an engine operand needs it
    return ps


def operand(tr, view):
    """The view an engine reads for `view`: a Tensor-engine transpose result still in PSUM is
    first copied back to SBUF in the transposed tile's dtype (once); an explicit copy
    (nl.copy, nisa.tensor_copy, an assignment) reads the PSUM tile itself."""
    t = view.tensor
    if t.copy_back is None:
        return view
    if t.copied is None:
        dtype, hint = t.copy_back
        out = result_tile(tr, "sbuf", dtype, t.shape, hint)
        produce(tr, out, "tensor_copy", [(None, out.full_view()), (None, t.full_view())])
        t.copied = out
    return View(t.copied, [list(d) for d in view.dims], list(view.order))


def fits_vector_transpose(src):
    """Whether an nc_transpose without engine of `src` goes to the Vector engine: both sides known
    to be at most 32 (ISA-OLD nc_transpose; model/compiler nc_transpose_engine)."""
    shape = src.shape
    if len(shape) != 2:
        return False
    p, f = [Lin.of(s) for s in shape]
    return (p.is_const() and f.is_const() and p.const <= VECTOR_TRANSPOSE and
            f.const <= VECTOR_TRANSPOSE)


def vector_engine_transpose(tr, src, out_dtype, hint=None):
    """nc_transpose(engine=vector): one instruction up to 32x32, else 32x32 blocks in loops."""
    p, f = [Lin.of(s) for s in src.shape]
    out = result_tile(tr, "sbuf", out_dtype, [f, p], hint)
    if p.is_const() and f.is_const() and p.const <= VECTOR_TRANSPOSE and \
            f.const <= VECTOR_TRANSPOSE:
        produce(tr, out, "transpose", [(None, out.full_view()), (None, src),
                                       ("engine", Enum("vector"))])
        return out
    if not p.is_const() or p.const % VECTOR_TRANSPOSE:
        raise errors.NkiError("a Vector-engine transpose of %s partitions: the model tiles it "
                              "into 32-partition blocks, so it must be a multiple of 32" % p.text())
    dst_full, src_rows = out.full_view(), src
    blocks_p = p.const // VECTOR_TRANSPOSE
    blocks_f = f.add(Lin.of(VECTOR_TRANSPOSE - 1)).floordiv(VECTOR_TRANSPOSE)
    la = tr.open_loop("affine_range", 0, blocks_p, 1, "i_tp_q")
    a = _name(la.var)
    lb = tr.open_loop("affine_range", 0, blocks_f, 1, "i_tp_d")
    c = _name(lb.var)
    w = Lin.of(VECTOR_TRANSPOSE).minmax("min", f.sub(c.scale(VECTOR_TRANSPOSE)))
    rows = (a.scale(VECTOR_TRANSPOSE), Lin.of(VECTOR_TRANSPOSE))
    cols = (c.scale(VECTOR_TRANSPOSE), w)
    d = _sub2(dst_full, cols, rows)
    s = _sub2(src_rows, rows, cols)
    tr.instr("transpose", [(None, d), (None, s), ("engine", Enum("vector"))], produces=out)
    tr.close_loop(lb)
    tr.close_loop(la)
    return out


def _name(var):
    from .expr import name_lin

    return name_lin(var)


def _sub2(view, first, second):
    """Sub-view of a 2-D tile: (start, size) within its two tile dims."""
    dims = [list(d) for d in view.dims]
    for (start, size), s in zip((first, second), view.order):
        d = dims[s]
        dims[s] = [d[0].add(start.scale(d[2])), size, d[2]]
    return View(view.tensor, dims, list(view.order))

"""Small NKI kernels, one per group of calls the front end supports, for the front-end tests.
Each must trace, pass the model's dynamic checks, and (where stated) compute a known result."""

from dataclasses import dataclass

import numpy as np

import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl
import neuronxcc.nki.typing as nt  # noqa: F401  (imported as kernels do)
from neuronxcc.nki.language import par_dim


print("module-level output must not reach the traced program")


@nki.jit
def copy_rows(a):
    """nl.load / nl.store through slices, an affine loop and a sequential loop."""
    rows, cols = a.shape
    print("a kernel's own debug print")
    assert rows % 128 == 0 and cols <= 512
    out = nl.ndarray((rows, cols), dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(rows // 128):
        t = nl.load(a[i * 128:(i + 1) * 128, :])
        nl.store(out[i * 128:(i + 1) * 128, :], value=t)
    for i in nl.sequential_range(rows // 128):
        t = nl.load(a[nl.ds(i * 128, 128), :])
        nl.store(out[nl.ds(i * 128, 128), :], value=t)
    return out


@nki.jit
def elementwise(a, b):
    """nl arithmetic: add, subtract, multiply, divide, maximum, minimum, negative, exp,
    reciprocal, scalar operands, columns, operators, a static_range and Python range."""
    n, m = a.shape
    assert n == 128 and m == 256 and b.shape == a.shape
    out = nl.ndarray((n, m), dtype=nl.float32, buffer=nl.shared_hbm)
    x = nl.load(a)
    y = nl.load(b)
    s = nl.add(x, y)
    s = nl.subtract(s, 0.5)
    s = nl.multiply(s, y)
    s = nl.maximum(s, -4.0)
    s = nl.minimum(s, 4.0)
    s = nl.divide(s, 2.0)
    s = nl.negative(s)
    col = nl.max(s, axis=1)
    s = s - col
    s = nl.exp(s)
    total = nl.sum(s, axis=1)
    s = s * nl.reciprocal(total)
    for _ in nl.static_range(2):
        s = s + 0.0
    for _ in range(2):
        s = 1.0 * s
    nl.store(out, value=s)
    return out


@nki.jit
def matmuls(a, b):
    """nl.matmul with and without transpose_x, nl.transpose, nisa.nc_matmul accumulation over a
    loop into nl.zeros in PSUM, nisa.tensor_copy eviction."""
    k, m = a.shape
    k2, n = b.shape
    assert k == 256 and m == 128 and n == 512 and k2 == k
    out = nl.ndarray((m, n), dtype=nl.float32, buffer=nl.shared_hbm)
    out2 = nl.ndarray((m, n), dtype=nl.float32, buffer=nl.shared_hbm)
    acc = nl.zeros((par_dim(m), n), dtype=nl.float32, buffer=nl.psum)
    for i in nl.affine_range(k // 128):
        lhs = nl.load(a[nl.ds(i * 128, 128), :])
        rhs = nl.load(b[nl.ds(i * 128, 128), :])
        acc += nisa.nc_matmul(stationary=lhs, moving=rhs)
    res = nisa.tensor_copy(acc, dtype=nl.float32)
    nl.store(out, value=res)
    lhs0 = nl.load(a[0:128, :])
    rhs0 = nl.load(b[0:128, :])
    p = nl.matmul(lhs0, rhs0, transpose_x=True)
    lhs_t = nl.transpose(lhs0)
    p2 = nl.matmul(lhs_t, rhs0[:, 0:128], transpose_x=False)
    nl.store(out2, value=p)
    nl.store(out2[:, 0:128], value=p2)
    return out, out2


@nki.jit
def isa_calls(a):
    """nisa: activation with bias/scale/reduce, activation_reduce, tensor_scalar (two ops),
    tensor_tensor, tensor_reduce, reciprocal, memset, iota, affine_select, nc_transpose on
    both engines, tensor_scalar_reduce, tensor_copy_predicated, dma_copy, engine choice."""
    n, m = a.shape
    assert n == 128 and m == 128
    out = nl.ndarray((n, m), dtype=nl.float32, buffer=nl.shared_hbm)
    x = nl.load(a)
    bias = nl.full((par_dim(n), 1), -1.0, dtype=nl.float32)
    acc = nl.zeros((par_dim(n), 1), dtype=nl.float32)
    e = nisa.activation(np.exp, data=x, bias=bias, scale=0.5, reduce_op=np.add, reduce_res=acc,
                        reduce_cmd=nisa.reduce_cmd.reset_reduce)
    acc2 = nl.ndarray((par_dim(n), 1), dtype=nl.float32)
    e2 = nisa.activation_reduce(np.tanh, data=e, reduce_op=np.add, reduce_res=acc2)
    t = nisa.tensor_scalar(e2, np.multiply, 2.0, op1=np.add, operand1=acc)
    t = nisa.tensor_tensor(t, x, op=np.subtract, engine=nisa.gpsimd_engine)
    m_col = nisa.tensor_reduce(np.max, data=t, axis=(1,), negate=True)
    r = nisa.reciprocal(acc2)
    t = nisa.tensor_scalar(t, np.add, m_col, engine=nisa.scalar_engine)
    t = nisa.tensor_scalar(t, np.multiply, r)
    i_p, i_f = nl.mgrid[0:n, 0:m]
    masked = nisa.affine_select(pred=(i_p >= i_f), on_true_tile=t, on_false_value=0.0)
    idx = nisa.iota(i_p * 2 + i_f, dtype=nl.int32)
    z = nisa.memset((n, m), 0.0, dtype=nl.float32)
    z[...] = nisa.tensor_copy(masked, engine=nisa.vector_engine)
    tr = nisa.nc_transpose(z)
    tv = nisa.nc_transpose(tr[0:32, 0:32], engine=nisa.vector_engine)
    red = nl.ndarray((par_dim(n), 1), dtype=nl.float32)
    s = nisa.tensor_scalar_reduce(data=tr, op0=np.multiply, operand0=1.0, reduce_op=np.add,
                                  reduce_res=red)
    nisa.tensor_copy_predicated(src=x, dst=s, predicate=nl.greater(x, 0.5, dtype=nl.uint8))
    nisa.dma_copy(dst=out, src=s)
    nl.store(out[0:32, 0:32], value=tv)
    nl.store(out[:, 0:1], value=nisa.tensor_copy(idx[:, 0:1], dtype=nl.float32))
    return out


@nki.jit
def masked_tail(a):
    """mask= on loads and stores: the last tile of a length that is not a multiple of 128."""
    n, m = a.shape
    assert m <= 512
    out = nl.ndarray((n, m), dtype=a.dtype, buffer=nl.shared_hbm)
    i_p, i_f = nl.mgrid[0:128, 0:m]
    for i in nl.affine_range((n + 127) // 128):
        t = nl.load(a[i * 128 + i_p, i_f], mask=(i * 128 + i_p < n))
        nl.store(out[i * 128 + i_p, i_f], value=t, mask=(i * 128 + i_p < n))
    return out


@nki.jit
def spmd_rows(a):
    """A launch grid: program_id picks the rows, num_programs is the grid size."""
    g, rows, cols = a.shape
    assert rows == 128 and cols <= 512
    out = nl.ndarray((g, rows, cols), dtype=a.dtype, buffer=nl.shared_hbm)
    pid = nl.program_id(0)
    assert nl.num_programs(0) == g
    t = nl.load(a[pid, :, :])
    nl.store(out[pid, :, :], value=nl.multiply(t, 3.0))
    return out


@nki.baremetal
def writes_argument(a, result):
    """An old-style kernel that writes an argument (the argument becomes an output)."""
    n, m = a.shape
    assert n == 128 and m == 64
    nl.store(result, value=nl.load(a))


@nki.compiler.skip_middle_end_transformations
@nki.jit
def allocated_copy(a):
    """Direct allocation: an SBUF tile placed with ncc-style mod_alloc and rotating blocks."""
    import neuronxcc.nki.compiler as ncc

    n, m = a.shape
    assert n == 512 and m == 128
    out = nl.ndarray((n, m), dtype=a.dtype, buffer=nl.shared_hbm)
    buf = nl.ndarray((4, par_dim(128), m), dtype=a.dtype,
                     buffer=ncc.sbuf.mod_alloc(base_addr=0, num_free_tiles=(2,)))
    for i in nl.affine_range(n // 128):
        buf[i, :, :] = nl.load(a[nl.ds(i * 128, 128), :])
        nl.store(out[nl.ds(i * 128, 128), :], value=buf[i, :, :])
    return out


@nki.jit
def loop_branch(a):
    """An `if` on a loop variable that every iteration decides the same way (i < 4 in a loop
    of 2) is resolved while tracing; an integer index keeps an on-chip tile's free axis."""
    n, m = a.shape
    assert n == 256 and m == 64
    out = nl.ndarray((n, m), dtype=a.dtype, buffer=nl.shared_hbm)
    col = nl.ndarray((par_dim(128), 2), dtype=a.dtype)
    for i in nl.affine_range(2):
        if i < 4:
            t = nl.load(a[nl.ds(i * 128, 128), :])
            col[:, i] = nl.max(t, axis=1)
            nl.store(out[nl.ds(i * 128, 128), :], value=t + col[:, i])
    return out


@dataclass(frozen=True)
class Scaling:
    factor: float = 1.0
    add_bias: bool = False


@nki.jit
def configured(a, bias=None, config=Scaling()):
    """Keyword arguments beyond flags: a config object (`--param config.factor=2.5` or
    `--param "config=Scaling(factor=0.5, add_bias=True)"`) and an optional tensor (`--input
    bias=fp32[128,64]` makes it one; left out it stays None)."""
    n, m = a.shape
    assert n == 128 and m == 64
    out = nl.ndarray((n, m), dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.multiply(nl.load(a), config.factor)
    if config.add_bias:
        assert bias is not None, "add_bias needs the bias tensor"
        t = nl.add(t, nl.load(bias))
    nl.store(out, value=t)
    return out

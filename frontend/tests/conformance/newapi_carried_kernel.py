"""Kernels of today's API whose `nl.affine_range` loops (12 iterations: more than the 8 the
tracer unrolls at once, so each stays a loop of the program) do or do not carry a dependency
from one iteration to the next (newapi_simulate_test.py, `CarriedDependencies`)."""

import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def running_sums(x):
    """Block j of the output is the sum of x's blocks 0..j (4 columns each): every iteration
    adds into one tile made before the loop, as the SDK's fused_mamba v1/v2 do."""
    p, f = x.shape
    out = nl.ndarray((p, f), dtype=x.dtype, buffer=nl.shared_hbm)
    acc = nl.ndarray((p, 4), dtype=nl.float32, buffer=nl.sbuf)
    nisa.memset(dst=acc, value=0.0)
    for j in nl.affine_range(f // 4):
        t = nl.ndarray((p, 4), dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=x[:, j * 4:(j + 1) * 4])
        nisa.tensor_tensor(dst=acc, data1=acc, data2=t, op=nl.add)
        nisa.dma_copy(dst=out[:, j * 4:(j + 1) * 4], src=acc)
    return out


@nki.jit
def doubled_in_blocks(x):
    """Each iteration doubles its own block of a tile made before the loop, in place: the
    iterations are independent."""
    p, f = x.shape
    out = nl.ndarray((p, f), dtype=x.dtype, buffer=nl.shared_hbm)
    buf = nl.ndarray((p, f), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=buf, src=x)
    for j in nl.affine_range(f // 4):
        nisa.tensor_scalar(dst=buf[:, j * 4:(j + 1) * 4], data=buf[:, j * 4:(j + 1) * 4],
                           op0=nl.multiply, operand0=2.0)
    nisa.dma_copy(dst=out, src=buf)
    return out


@nki.jit
def broadcast_rows(x):
    """Each iteration broadcasts its own row of x to 8 partitions (nl.broadcast_to stages the
    row in one scratch HBM tensor that the iteration writes before it reads): independent."""
    n, f = x.shape
    out = nl.ndarray((n * 8, f), dtype=x.dtype, buffer=nl.shared_hbm)
    for j in nl.affine_range(n):
        row = nl.ndarray((1, f), dtype=x.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=row, src=x[j:j + 1, :])
        wide = nl.broadcast_to(row, (8, f))
        nisa.dma_copy(dst=out[j * 8:(j + 1) * 8, :], src=wide)
    return out

"""A new-API kernel (`import nki`) whose contraction length is a shape the kernel leaves open:
nc_matmul with accumulate=(k > 0) over nl.affine_range(K // 128) splits the loop into its first
iteration (overwrite) and the rest (accumulate), both still loops over the symbolic K."""
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def matmul_k_tiles(a, b):
    K, M = a.shape
    N = b.shape[1]
    assert K % 128 == 0 and M <= 128 and N <= 512
    out = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    acc = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.psum)
    for k in nl.affine_range(K // 128):
        at = nl.ndarray((128, M), dtype=a.dtype, buffer=nl.sbuf)
        bt = nl.ndarray((128, N), dtype=b.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=at, src=a[k * 128:(k + 1) * 128, :])
        nisa.dma_copy(dst=bt, src=b[k * 128:(k + 1) * 128, :])
        nisa.nc_matmul(acc, at, bt, accumulate=(k > 0))
    res = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(res, acc)
    nisa.dma_copy(dst=out, src=res)
    return out


@nki.jit
def flag_on_a_shape(a, b):
    """accumulate= depends on a shape the kernel leaves open, outside any loop."""
    K, M = a.shape
    N = b.shape[1]
    out = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    acc = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.psum)
    at = nl.ndarray((128, M), dtype=a.dtype, buffer=nl.sbuf)
    bt = nl.ndarray((128, N), dtype=b.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=at, src=a[0:128, :])
    nisa.dma_copy(dst=bt, src=b[0:128, :])
    nisa.nc_matmul(acc, at, bt, accumulate=(M > 64))
    res = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(res, acc)
    nisa.dma_copy(dst=out, src=res)
    return out


@nki.jit
def iota_over_symbolic_dims(a):
    """A pattern whose dims are not dst's, with sizes the kernel leaves open."""
    P, F = a.shape
    out = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.sbuf)
    nisa.iota(t, [[1, 2], [2, F // 2]])
    nisa.dma_copy(dst=out, src=t)
    return out

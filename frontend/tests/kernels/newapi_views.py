"""New-API (`import nki`) kernels reaching their tensors through views: `ncverify import`
traces them for every shape (tools/tests/frontend_test.cpp, FrontendNewApiViews)."""
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def column_blocks(a):
    """a [n, m]: per 128-row block and 64-column block (nl.ds with loop variables), the block
    doubled, written to out through .ap with an offset of the loop variables."""
    n, m = a.shape
    out = nl.ndarray((n, m), dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(n // 128):
        for j in nl.affine_range(m // 64):
            t = nl.ndarray((128, 64), dtype=a.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=t, src=a[nl.ds(i * 128, 128), nl.ds(j * 64, 64)])
            u = nl.ndarray((128, 64), dtype=a.dtype, buffer=nl.sbuf)
            nisa.tensor_scalar(u, t, nl.multiply, 2.0)
            nisa.dma_copy(dst=out.ap([[m, 128], [1, 64]], offset=i * 128 * m + j * 64), src=u)
    return out


@nki.jit
def halves_swapped(a):
    """a [128, 2, 32] in HBM: the two halves of each row swapped through permute-free views:
    select, expand_dim and a flatten of the result."""
    p, h, w = a.shape
    assert (p, h, w) == (128, 2, 32)
    out = nl.ndarray((128, 64), dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((128, 2, 32), dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    u = nl.ndarray((128, 2, 32), dtype=a.dtype, buffer=nl.sbuf)
    nisa.tensor_copy(u.select(1, 0).expand_dim(1), t[:, 1:2, :])
    nisa.tensor_copy(u[:, 1, :], t.select(1, 0))
    nisa.dma_copy(dst=out, src=u.flatten_dims(1, 2))
    return out


@nki.jit
def blocks_transposed(a):
    """a [128, 64]: each row's four 16-element blocks transposed (element (k, j) of the
    blocks to (j, k)) through a reshape_dim view: t is declared [128, 4, 16]."""
    p, f = a.shape
    assert (p, f) == (128, 64)
    out = nl.ndarray((128, 64), dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((128, 64), dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    u = nl.ndarray((128, 16, 4), dtype=a.dtype, buffer=nl.sbuf)
    nisa.tensor_copy(u, t.reshape_dim(1, (4, 16)).permute((0, 2, 1)))
    nisa.dma_copy(dst=out, src=u.flatten_dims(1, 2))
    return out


@nki.jit
def split_argument_dim(a):
    """The reshape splits dim 1 of the kernel argument a: a is declared [128, 4, 16], the same
    bytes in the same order (its `interface [p, f]` clause says so)."""
    p, f = a.shape
    assert (p, f) == (128, 64)
    t = nl.ndarray((128, 4, 8), dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a.reshape((128, 4, 16))[:, :, 0:8])
    out = nl.ndarray((128, 4, 8), dtype=a.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=t)
    return out


@nki.jit
def split_argument_straddled(a):
    """Refused: the same split, after an access of a that straddles its rows of 16."""
    p, f = a.shape
    assert (p, f) == (128, 64)
    t = nl.ndarray((128, 32), dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a[:, 8:40])
    nisa.dma_copy(dst=t, src=a.reshape((128, 4, 16))[:, :, 8:16])
    return a


@nki.jit
def split_argument_and_output(a):
    """a [128, 64] and out [128, 64], both stepped through as [128, 4, 16] (so both declared
    split): out is a with the two halves of every 16-element block swapped. `run` takes a and
    gives out in the kernel's shape [128, 64]."""
    p, f = a.shape
    assert (p, f) == (128, 64)
    lo = nl.ndarray((128, 4, 8), dtype=a.dtype, buffer=nl.sbuf)
    hi = nl.ndarray((128, 4, 8), dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=lo, src=a.reshape((128, 4, 16))[:, :, 0:8])
    nisa.dma_copy(dst=hi, src=a.reshape((128, 4, 16))[:, :, 8:16])
    out = nl.ndarray((128, 64), dtype=a.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out.reshape((128, 4, 16))[:, :, 0:8], src=hi)
    nisa.dma_copy(dst=out.reshape((128, 4, 16))[:, :, 8:16], src=lo)
    return out


@nki.jit
def batches_flattened(a):
    """a [b, 128, m] read through a.reshape((b * 128, m)) by 128-row blocks (nl.ds on the
    merged dim), and written back per batch through .ap with a symbolic count m."""
    b, n, m = a.shape
    assert n == 128
    out = nl.ndarray((b * n, m), dtype=a.dtype, buffer=nl.shared_hbm)
    flat = a.reshape((b * n, m))
    for i in nl.affine_range(b):
        t = nl.ndarray((128, m), dtype=a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=flat[nl.ds(i * 128, 128), :])
        nisa.dma_copy(dst=out.ap([[m, n], [1, m]], offset=i * n * m), src=t)
    return out


@nki.jit
def counts_of_loop_variables(a):
    """.ap counts that depend on the variable of a loop the trace keeps: (8255 - i) // 64 - 64,
    which is 64 for every i of the loop (m <= 4096: i < 64), and 64 - i from element i, whose
    last index stays inside the dim of 64 for every i."""
    n, m = a.shape
    assert n == 128
    t = nl.ndarray((128, 64), dtype=a.dtype, buffer=nl.sbuf)
    u = nl.ndarray((128, 64), dtype=a.dtype, buffer=nl.sbuf)
    nisa.memset(u, 0.0)
    for i in nl.affine_range(m // 64):
        nisa.dma_copy(dst=t.ap([[64, 128], [1, (8255 - i) // 64 - 64]], offset=0),
                      src=a.ap([[m, 128], [1, (8255 - i) // 64 - 64]], offset=i * 64))
        nisa.tensor_copy(u.ap([[64, 128], [1, 64 - i]], offset=i),
                         t.ap([[64, 128], [1, 64 - i]], offset=i))
    out = nl.ndarray((128, 64), dtype=a.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=u)
    return out

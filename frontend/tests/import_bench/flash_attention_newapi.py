"""A flash-attention forward written for the new API (`import nki`, destination-first nki.isa),
for bench/newapi_import_bench: per-tile loops in the new API's Python style (K and V tiles kept
in Python lists, the running max, sum and output rebound every key tile). The key-tile loop must
unroll (a list indexed by its variable, carried rebindings); the query-tile loop stays a loop of
the program (its body's Python effects do not depend on the iteration), unless `collect=True`
keeps every query tile's output in a Python list, which unrolls it too (the fully specialised
program NKI itself makes). q and k are (d, seqlen), v is (seqlen, d), d = 128; no mask, no
scale."""

import nki
import nki.isa as nisa
import nki.language as nl

TILE = 128


def _sbuf(shape):
    return nl.ndarray(shape, dtype=nl.float32, buffer=nl.sbuf)


@nki.jit
def flash_fwd(q, k, v, collect=False):
    d, seqlen = q.shape
    assert d == TILE and seqlen % TILE == 0
    out = nl.ndarray((seqlen, d), dtype=q.dtype, buffer=nl.shared_hbm)
    n_tiles = seqlen // TILE
    k_tiles, v_tiles = [], []
    for j in nl.affine_range(n_tiles):
        kt = _sbuf((d, TILE))
        nisa.dma_copy(dst=kt, src=k[:, nl.ds(j * TILE, TILE)])
        k_tiles.append(kt)
        vt = _sbuf((TILE, d))
        nisa.dma_copy(dst=vt, src=v[nl.ds(j * TILE, TILE), :])
        v_tiles.append(vt)
    results = []
    for i in nl.affine_range(n_tiles):
        q_tile = _sbuf((d, TILE))
        nisa.dma_copy(dst=q_tile, src=q[:, nl.ds(i * TILE, TILE)])
        m = _sbuf((TILE, 1))
        nisa.memset(m, -3.0e38)
        s_sum = _sbuf((TILE, 1))
        nisa.memset(s_sum, 0.0)
        acc = _sbuf((TILE, d))
        nisa.memset(acc, 0.0)
        for j in nl.affine_range(n_tiles):
            s = nl.ndarray((TILE, TILE), dtype=nl.float32, buffer=nl.psum)
            nisa.nc_matmul(s, q_tile, k_tiles[j])
            m_tile = _sbuf((TILE, 1))
            nisa.tensor_reduce(m_tile, nl.maximum, s, axis=1, keepdims=True)
            m_new = _sbuf((TILE, 1))
            nisa.tensor_tensor(m_new, m, m_tile, nl.maximum)
            neg_max = _sbuf((TILE, 1))
            nisa.tensor_scalar(neg_max, m_new, nl.multiply, -1.0)
            p = _sbuf((TILE, TILE))
            nisa.activation(p, nl.exp, s, bias=neg_max)
            alpha = _sbuf((TILE, 1))
            nisa.activation(alpha, nl.exp, m, bias=neg_max)
            p_sum = _sbuf((TILE, 1))
            nisa.tensor_reduce(p_sum, nl.add, p, axis=1, keepdims=True)
            s_sum_new = _sbuf((TILE, 1))
            nisa.tensor_scalar(s_sum_new, s_sum, nl.multiply, alpha, op1=nl.add, operand1=p_sum)
            p_t = nl.ndarray((TILE, TILE), dtype=nl.float32, buffer=nl.psum)
            nisa.nc_transpose(p_t, p)
            p_t_sbuf = _sbuf((TILE, TILE))
            nisa.tensor_copy(p_t_sbuf, p_t)
            pv = nl.ndarray((TILE, d), dtype=nl.float32, buffer=nl.psum)
            nisa.nc_matmul(pv, p_t_sbuf, v_tiles[j])
            scaled = _sbuf((TILE, d))
            nisa.tensor_scalar(scaled, acc, nl.multiply, alpha)
            acc_new = _sbuf((TILE, d))
            nisa.tensor_tensor(acc_new, scaled, pv, nl.add)
            m, s_sum, acc = m_new, s_sum_new, acc_new
        inv = _sbuf((TILE, 1))
        nisa.reciprocal(inv, s_sum)
        o = _sbuf((TILE, d))
        nisa.tensor_scalar(o, acc, nl.multiply, inv)
        if collect:
            results.append(o)
        else:
            nisa.dma_copy(dst=out[nl.ds(i * TILE, TILE), :], src=o)
    for i, o in enumerate(results):
        nisa.dma_copy(dst=out[nl.ds(i * TILE, TILE), :], src=o)
    return out

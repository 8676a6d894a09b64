"""A flash-attention forward written for the new API (`import nki`), for bench/newapi_import_bench:
per-tile loops in the new API's Python style (K and V tiles kept in Python lists, the running
max, sum and output rebound every key tile). The key-tile loop must unroll (a list indexed by its
variable, carried rebindings); the query-tile loop stays a loop of the program (its body's
Python effects do not depend on the iteration), unless `collect=True` keeps every query tile's
output in a Python list, which unrolls it too (the fully specialised program NKI itself makes).
q and k are (d, seqlen), v is (seqlen, d), d = 128; no causal mask, no scale."""

import nki
import nki.language as nl

TILE = 128


@nki.jit
def flash_fwd(q, k, v, collect=False):
    d, seqlen = q.shape
    assert d == TILE and seqlen % TILE == 0
    out = nl.ndarray((seqlen, d), dtype=q.dtype, buffer=nl.shared_hbm)
    n_tiles = seqlen // TILE
    k_tiles, v_tiles = [], []
    for j in nl.affine_range(n_tiles):
        k_tiles.append(nl.load(k[:, nl.ds(j * TILE, TILE)]))
        v_tiles.append(nl.load(v[nl.ds(j * TILE, TILE), :]))
    results = []
    for i in nl.affine_range(n_tiles):
        q_tile = nl.load(q[:, nl.ds(i * TILE, TILE)])
        m = nl.full((TILE, 1), -3.0e38, dtype=nl.float32, buffer=nl.sbuf)
        s_sum = nl.zeros((TILE, 1), dtype=nl.float32, buffer=nl.sbuf)
        acc = nl.zeros((TILE, d), dtype=nl.float32, buffer=nl.sbuf)
        for j in nl.affine_range(n_tiles):
            s = nl.matmul(q_tile, k_tiles[j], transpose_x=True)
            m_new = nl.maximum(m, nl.max(s, axis=1, keepdims=True))
            p = nl.exp(nl.subtract(s, m_new))
            alpha = nl.exp(nl.subtract(m, m_new))
            s_sum = nl.add(nl.multiply(s_sum, alpha), nl.sum(p, axis=1, keepdims=True))
            pv = nl.matmul(nl.transpose(p), v_tiles[j], transpose_x=True)
            acc = nl.add(nl.multiply(acc, alpha), pv)
            m = m_new
        o = nl.multiply(acc, nl.reciprocal(s_sum))
        if collect:
            results.append(o)
        else:
            nl.store(out[nl.ds(i * TILE, TILE), :], value=o)
    for i, o in enumerate(results):
        nl.store(out[nl.ds(i * TILE, TILE), :], value=o)
    return out

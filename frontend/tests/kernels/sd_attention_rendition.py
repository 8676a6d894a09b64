"""ncverify's own NKI rendition of the registered `sd_attention` kernel (kernels/sd_attention.cpp:
the SD small-head fused self-attention tutorial's structure), written for the front-end tests.
It must trace to a program that runs bit-identically (outputs, trace, latency) with the
registered kernel. It spells its indices differently from the tutorial on purpose (slices,
nl.ds, nl.mgrid) so that those paths are exercised."""

import numpy as np

import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl
from neuronxcc.nki.language import par_dim

TILE = 128


@nki.jit
def sd_attention(q, k, v, use_causal_mask=False, mixed_precision=True):
    kd = q.dtype
    pe = nl.bfloat16 if mixed_precision else np.float32
    seqlen, d_head = q.shape
    assert k.shape == (seqlen, d_head) and v.shape == (seqlen, d_head)
    assert d_head <= 128
    assert seqlen % TILE == 0
    assert seqlen <= 4096
    out = nl.ndarray((seqlen, d_head), dtype=kd, buffer=nl.shared_hbm)
    n_tiles = seqlen // TILE

    v_all = nl.ndarray((par_dim(TILE), n_tiles, d_head), dtype=pe)
    for t in nl.affine_range(n_tiles):
        v_all[:, t, :] = nl.load(v[nl.ds(t * TILE, TILE), :], dtype=pe)

    q_t = nl.ndarray((n_tiles, par_dim(d_head), TILE), dtype=pe)
    for t in nl.affine_range(n_tiles):
        q_t[t, :, :] = nl.load_transpose2d(q[t * TILE:(t + 1) * TILE, :], dtype=pe) * 0.125

    k_t = nl.ndarray((n_tiles, par_dim(d_head), TILE), dtype=pe)
    for t in nl.affine_range(n_tiles):
        k_t[t, :, :] = nl.load_transpose2d(k[t * TILE:(t + 1) * TILE, :], dtype=pe)

    for qi in nl.affine_range(n_tiles):
        scores = nl.ndarray((par_dim(TILE), seqlen), dtype=kd)
        partial_max = nl.ndarray((par_dim(TILE), n_tiles), dtype=kd)
        for ki in nl.affine_range(n_tiles):
            s_psum = nl.zeros((par_dim(TILE), TILE), dtype=np.float32, buffer=nl.psum)
            s_psum += nisa.nc_matmul(stationary=q_t[qi, :, :], moving=k_t[ki, :, :])
            if use_causal_mask:
                row, col = nl.mgrid[0:TILE, 0:TILE]
                scores[:, nl.ds(ki * TILE, TILE)] = nisa.affine_select(
                    pred=(qi * TILE + row >= ki * TILE + col), on_true_tile=s_psum,
                    on_false_value=-9984.0, dtype=kd)
            else:
                scores[:, nl.ds(ki * TILE, TILE)] = nl.copy(s_psum, dtype=kd)
            partial_max[:, ki] = nisa.tensor_reduce(np.max, data=scores[:, nl.ds(ki * TILE, TILE)],
                                                    axis=(1,), dtype=kd, negate=True)
        neg_max = nisa.tensor_reduce(np.min, data=partial_max, axis=(1,), dtype=kd)

        probs = nl.ndarray((par_dim(TILE), seqlen), dtype=pe)
        divisor = nl.ndarray((par_dim(TILE), d_head), dtype=kd)
        e = nisa.activation(np.exp, data=scores, bias=neg_max, scale=1.0)
        row_sum = nisa.tensor_reduce(np.add, data=e, axis=(1,), dtype=kd)
        probs[:, :] = nl.copy(e, dtype=pe)
        divisor[:, :] = nl.copy((1.0 / row_sum).broadcast_to((TILE, d_head)), dtype=kd)

        probs_t = nl.ndarray((par_dim(TILE), n_tiles, TILE), dtype=pe)
        acc = nl.zeros((par_dim(d_head), TILE), dtype=np.float32, buffer=nl.psum)
        for ki in nl.affine_range(n_tiles):
            probs_t[:, ki, :] = nisa.nc_transpose(probs[:, nl.ds(ki * TILE, TILE)])
        for ki in nl.affine_range(n_tiles):
            acc += nisa.nc_matmul(stationary=v_all[:, ki, :], moving=probs_t[:, ki, :])
        o = nl.copy(acc, dtype=kd)
        o_scaled = o * nisa.nc_transpose(divisor)
        i_d, i_s = nl.mgrid[0:d_head, 0:TILE]
        nl.store(out[qi * TILE + i_s, i_d], value=o_scaled)
    return out

"""ncverify's own NKI rendition of the registered `sd_attention_allocated` kernel (direct
allocation: every SBUF tensor at a byte offset of a running counter, two interleaved query tiles
per iteration with double-buffered per-tile tensors, PSUM tiles in fixed banks, transposes by
identity matmuls). Written for the front-end tests: it must run bit-identically with the
registered kernel, and exercises mod_alloc, psum.alloc with a bank function and shared
constants."""

import functools

import numpy as np

import neuronxcc.nki as nki
import neuronxcc.nki.compiler as ncc
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl
from neuronxcc.nki.language import par_dim


class Placer:
    """Hands out consecutive SBUF byte ranges (per partition)."""

    def __init__(self):
        self.at = 0

    def take(self, nbytes, tiles=None):
        buf = ncc.sbuf.mod_alloc(base_addr=self.at, num_free_tiles=tiles) if tiles else \
            ncc.sbuf.mod_alloc(base_addr=self.at)
        self.at += nbytes
        return buf


def bank_of(banks, idx, pdim_size, fdim_size):
    return (banks[idx], 0, 0)


@nki.jit
def allocated_attention(q, k, v, mixed_precision=True):
    f32 = np.float32
    pe = nl.bfloat16 if mixed_precision else f32
    pe_bytes = np.dtype(pe).itemsize
    bs, d_head, seqlen = q.shape
    assert d_head == 128
    assert k.shape == (bs, d_head, seqlen) and v.shape == (bs, seqlen, d_head)
    d, s = d_head, seqlen
    out = nl.ndarray((bs, d, s), dtype=q.dtype, buffer=nl.shared_hbm)
    mem = Placer()
    eye = nl.shared_constant(np.identity(128, dtype=np.int8), dtype=nl.bfloat16)
    eye_pe = nl.ndarray((par_dim(128), 128), dtype=pe, buffer=mem.take(128 * pe_bytes))
    eye_pe[...] = nl.load(eye)
    eye_f32 = nl.ndarray((par_dim(128), 128), dtype=f32, buffer=mem.take(512))
    eye_f32[...] = nl.load(eye)
    b = nl.program_id(axis=0)
    nq, nk, nv, nred = s // 128, s // 512, s // 128, s // 1024

    v_sb = nl.ndarray((nv, par_dim(128), d), dtype=pe, buffer=mem.take(nv * d * pe_bytes, (nv,)))
    for i in nl.affine_range(nv):
        v_sb[i, :, :] = nl.load(v[b, nl.ds(i * 128, 128), :], dtype=pe)
    q_sb = nl.ndarray((nq, par_dim(d), 128), dtype=pe, buffer=mem.take(nq * 128 * pe_bytes, (nq,)))
    for i in nl.affine_range(nq):
        q_sb[i, :, :] = nl.load(q[b, :, nl.ds(i * 128, 128)], dtype=pe)
        q_sb[i, :, :] = nl.multiply(q_sb[i, :, :], 0.125)
    k_sb = nl.ndarray((nk, par_dim(d), 512), dtype=pe, buffer=mem.take(nk * 512 * pe_bytes, (nk,)))
    for i in nl.affine_range(nk):
        k_sb[i, :, :] = nl.load(k[b, :, nl.ds(i * 512, 512)], dtype=pe)

    for pair in nl.affine_range(nq // 2):
        def two(shape, dtype, nbytes, tiles=2):
            return nl.ndarray((2, par_dim(shape[0]), shape[1]), dtype=dtype,
                              buffer=mem.take(nbytes, (tiles,)))

        scores = two((128, s), f32, s * 4, tiles=1)
        probs = two((128, s), pe, 2 * s * pe_bytes)
        probs_t = two((128, s), pe, 2 * s * pe_bytes)
        divisor = two((128, d), f32, 2 * d * 4)
        inv_wide = two((128, d), f32, 2 * d * 4)
        o_sb = two((d, 128), f32, 2 * 128 * 4)
        o_div = two((128, d), f32, 2 * d * 4)
        row_max = two((128, nk), f32, 2 * nk * 4)
        part_sum = two((128, nred), f32, 2 * nred * 4)
        neg_max = two((128, 1), f32, 2 * 4)
        row_sum = two((128, 1), f32, 2 * 4)
        inv_sum = two((128, 1), f32, 2 * 4)
        s_ps = nl.ndarray((2, nk, par_dim(128), 512), dtype=f32,
                          buffer=ncc.psum.mod_alloc(base_bank=0, num_bank_tiles=(2, 4)))
        t_ps = nl.ndarray((2, nk, par_dim(128), 512), dtype=f32,
                          buffer=ncc.psum.mod_alloc(base_bank=0, num_bank_tiles=(2, 4)))
        o_ps = nl.ndarray((2, par_dim(d), 128), dtype=f32,
                          buffer=ncc.psum.alloc(functools.partial(bank_of,
                                                                  {(0,): 1, (1,): 5})))
        div_t = nl.ndarray((2, par_dim(128), d), dtype=f32,
                           buffer=ncc.psum.alloc(functools.partial(bank_of,
                                                                   {(0,): 2, (1,): 7})))
        for g in nl.affine_range(2):
            for j in nl.affine_range(nk):
                s_ps[g, j, :, :] = nisa.nc_matmul(moving=k_sb[j, :, :],
                                                  stationary=q_sb[pair * 2 + g, :, :])
                scores[g, :, nl.ds(j * 512, 512)] = nisa.tensor_scalar_reduce(
                    data=s_ps[g, j, :, :], op0=np.multiply, operand0=1.0, reduce_op=np.max,
                    reduce_res=row_max[g, :, j], dtype=f32)
            neg_max[g, :, 0] = nisa.tensor_reduce(np.max, data=row_max[g, :, :], axis=(1,),
                                                  dtype=f32, negate=True)
            for r in nl.affine_range(nred):
                probs[g, :, nl.ds(r * 1024, 1024)] = nisa.activation_reduce(
                    np.exp, data=scores[g, :, nl.ds(r * 1024, 1024)], reduce_op=np.sum,
                    reduce_res=part_sum[g, :, r], bias=neg_max[g, :, 0], scale=1.0)
            row_sum[g, :, 0] = nisa.tensor_reduce(np.add, data=part_sum[g, :, :], axis=(1,),
                                                  dtype=f32)
            inv_sum[g, :, 0] = nl.divide(1.0, row_sum[g, :, 0])
            inv_wide[g, :, :] = inv_sum[g, :, 0].broadcast_to((128, d))
            divisor[g, :, :] = nl.copy(inv_wide[g, :, :], dtype=f32)
            for t in nl.affine_range(nv // 4):
                for o in nl.affine_range(4):
                    t_ps[g, t, :, nl.ds(o * 128, 128)] = nisa.nc_matmul(
                        probs[g, :, nl.ds((t * 4 + o) * 128, 128)], eye_pe)
                probs_t[g, :, nl.ds(t * 512, 512)] = nl.copy(t_ps[g, t, :, :])
            for i in nl.affine_range(nv):
                o_ps[g, :, :] += nisa.nc_matmul(moving=probs_t[g, :, nl.ds(i * 128, 128)],
                                                stationary=v_sb[i, :, :])
            o_sb[g, :, :] = nisa.tensor_copy(o_ps[g, :, :], dtype=f32, engine=nisa.vector_engine)
            div_t[g, :, :] = nisa.nc_matmul(divisor[g, :, :], eye_f32)
            o_div[g, :, :] = o_sb[g, :, :] * div_t[g, :, :]
            nl.store(out[b, :, nl.ds((pair * 2 + g) * 128, 128)], value=o_div[g, :, :])
    return out

"""A small kernel with attention_cte's signature: copies q to the output; refuses a
configuration the way nki-library's kernel does (an assertion), when cache_softmax is asked for
a seqlen_q that is not a multiple of 128."""

import neuronxcc.nki.language as nl
from neuronxcc import nki

from ..utils_stub import kernel_assert


@nki.jit
def attention_cte(q, k, v, scale=1.0, causal_mask=True, k_prior=None, v_prior=None,
                  prior_used_len=None, sink=None, sliding_window=None, tp_q=True, tp_k=False,
                  tp_out=False, cache_softmax=False, softmax_dtype=nl.float32,
                  mm_out_dtype=nl.float32, cp_offset=None, global_cp_deg=None,
                  cp_strided_q_slicing=False, bound_min=None, bound_max=None):
    bs, seqlen_q, d = q.shape
    kernel_assert(not cache_softmax or seqlen_q % 128 == 0, "cache_softmax needs seqlen_q % 128")
    out = nl.ndarray((seqlen_q, d), dtype=q.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(seqlen_q // 128):
        nl.store(out[i * 128:(i + 1) * 128, :], value=nl.load(q[0, i * 128:(i + 1) * 128, :]))
    return out

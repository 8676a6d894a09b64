"""A one-tile attention kernel written with the high-level nl API in a transposed layout
(q, k, v as [d, s], out as [s, d]), checked with --layout/--contract in the front-end tests."""

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def one_tile_attention(q, k, v, scale=1.0):
    d_head, seqlen = q.shape
    assert q.shape == k.shape == v.shape
    assert d_head <= 128 and seqlen == 128
    out = nl.ndarray((seqlen, d_head), dtype=q.dtype, buffer=nl.shared_hbm)
    q_sb = nl.load(q)
    k_sb = nl.load(k)
    v_sb = nl.load(v)
    scores = nl.matmul(q_sb, k_sb, transpose_x=True)  # [s_q, s_k]
    scores = nl.multiply(scores, scale)
    row_max = nl.max(scores, axis=1)
    p = nl.exp(nl.subtract(scores, row_max))
    p = nl.divide(p, nl.sum(p, axis=1))
    v_t = nl.transpose(v_sb)  # [s, d]
    o = nl.matmul(p, v_t, transpose_x=False)
    nl.store(out, value=o)
    return out


@nki.jit
def with_unused_seed(q, k, v, seed):
    """The same attention with an input outside the attention problem (as flash_fwd's dropout
    seed): check fills it with zeros."""
    d_head, seqlen = q.shape
    assert k.shape == q.shape and v.shape == q.shape
    return one_tile_attention(q, k, v)


@nki.jit
def with_own_mixed_precision(q, k, v, mixed_precision="fast"):
    """A keyword argument named like sd_attention's option `mixed_precision` with a meaning of its
    own (as attention_cte.py's `sink` and `sliding_window` are attention_cte's options' names):
    with check's --contract-option, `--param mixed_precision=...` is this kernel's."""
    d_head, seqlen = q.shape
    assert k.shape == q.shape and v.shape == q.shape and mixed_precision == "fast"
    return one_tile_attention(q, k, v)

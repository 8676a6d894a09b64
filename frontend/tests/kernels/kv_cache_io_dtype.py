"""kv_cache_decode.py's small decode kernel (one batch, H query heads sharing one KV head, the same
interface and layout) rounding as nki-library's attention_tkg does for any q dtype, whose io type
is q.dtype (attention_tkg.py line 822): q and K into the QK matmul in their own dtypes, the
scores, their max and the row sum in fp32, exp written straight in q's dtype (line 2359), the row
sum and PV both of those values, PV times the fp32 1 / sum, stored in `out_dtype`. Checked in the
front-end tests under attention_tkg's contract at the dtypes of nki-library's fp8 KV rows (q, k
and v fp8, the output bf16) and fp32 rows; `bug` plants what that contract must catch:
"scores_in_io" keeps the scores in q's dtype (fp8) instead of fp32, "p_bf16" writes exp in bf16
whatever q's dtype and takes V in bf16 for PV (wrong for fp32 q), "stale" reads the active tokens from the cache's active
slots."""

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

MASKED = -30000.0  # exp(MASKED - row max) is 0 in fp32 for any row max of the check's inputs


@nki.jit
def kv_decode_io(q, k_active, v_active, k_prior, v_prior, mask, out_dtype="bfloat16",
                 bug="none"):
    d_head, n_rows = q.shape
    n_active = k_active.shape[1]
    n_slots = mask.shape[1]
    n_cached = n_slots - n_active
    assert d_head <= 128 and n_slots <= 128 and n_rows <= 128 and k_prior.shape[1] >= n_slots
    io = q.dtype
    out = nl.ndarray((n_rows, d_head), dtype=getattr(nl, out_dtype), buffer=nl.shared_hbm)
    q_sb = nl.load(q)
    k_sb = nl.ndarray((d_head, n_slots), dtype=k_prior.dtype, buffer=nl.sbuf)
    # a matmul's operands are both fp32 or both narrower (the PE array's rule)
    v_dtype = nl.bfloat16 if bug == "p_bf16" else v_prior.dtype
    v_sb = nl.ndarray((n_slots, d_head), dtype=v_dtype, buffer=nl.sbuf)
    if bug == "stale":
        k_sb[...] = nl.load(k_prior[:, 0:n_slots])
        v_sb[...] = nl.load(v_prior[0:n_slots, :])
    else:
        k_sb[:, 0:n_cached] = nl.load(k_prior[:, 0:n_cached])
        v_sb[0:n_cached, :] = nl.load(v_prior[0:n_cached, :])
        k_sb[:, n_cached:n_slots] = nl.load(k_active)
        v_sb[n_cached:n_slots, :] = nl.load(v_active)
    visible = nl.load(mask, dtype=nl.float32)  # [H*A, S]: 1 or 0
    scores = nl.matmul(q_sb, k_sb, transpose_x=True)  # [H*A, S] fp32
    # a masked slot's score is MASKED whatever the (stale) key holds
    scores = nl.add(nl.multiply(scores, visible),
                    nl.multiply(nl.subtract(visible, 1.0), -MASKED))
    if bug == "scores_in_io":
        scores = nl.copy(scores, dtype=io)
    row_max = nl.max(scores, axis=1, dtype=nl.float32)
    p = nl.exp(nl.subtract(scores, row_max, dtype=nl.float32),
               dtype=nl.bfloat16 if bug == "p_bf16" else io)
    row_sum = nl.sum(p, axis=1, dtype=nl.float32)
    o = nl.matmul(p, v_sb, transpose_x=False)  # [H*A, d] fp32
    nl.store(out, value=nl.multiply(o, nl.reciprocal(row_sum)))
    return out

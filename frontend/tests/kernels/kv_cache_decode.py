"""A small decode kernel against a KV cache (one batch, H query heads sharing one KV head), in
nki-library attention_tkg's interface in a layout of its own: q [d, H*A] (heads and active tokens
flattened), k_active [d, A], v_active [A, d], the cache k_prior [d, F] and v_prior [F, d] of which
it reads the first S slots (the last A of them are the active tokens' slots, taken from k_active /
v_active), the mask [H*A, S] uint8, out [H*A, d]. Checked with a KV-cache --layout in the
front-end tests; `bug` plants the faults the check must catch:
"stale" reads the active tokens from the cache's active slots, "off_by_one" reads cache slot j + 1
for slot j."""

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

MASKED = -30000.0  # exp(MASKED - row max) is 0 in fp32 for any row max of the check's inputs


@nki.jit
def kv_decode(q, k_active, v_active, k_prior, v_prior, mask, bug="none"):
    d_head, n_rows = q.shape
    n_active = k_active.shape[1]
    n_slots = mask.shape[1]
    n_cached = n_slots - n_active
    assert d_head <= 128 and n_slots <= 128 and n_rows <= 128 and k_prior.shape[1] >= n_slots
    out = nl.ndarray((n_rows, d_head), dtype=q.dtype, buffer=nl.shared_hbm)
    q_sb = nl.load(q, dtype=nl.float32)
    k_sb = nl.ndarray((d_head, n_slots), dtype=nl.float32, buffer=nl.sbuf)
    v_sb = nl.ndarray((n_slots, d_head), dtype=nl.float32, buffer=nl.sbuf)
    if bug == "stale":
        k_sb[...] = nl.load(k_prior[:, 0:n_slots], dtype=nl.float32)
        v_sb[...] = nl.load(v_prior[0:n_slots, :], dtype=nl.float32)
    else:
        shift = 1 if bug == "off_by_one" else 0
        k_sb[:, 0:n_cached] = nl.load(k_prior[:, shift:n_cached + shift], dtype=nl.float32)
        v_sb[0:n_cached, :] = nl.load(v_prior[0:n_cached, :], dtype=nl.float32)
        k_sb[:, n_cached:n_slots] = nl.load(k_active, dtype=nl.float32)
        v_sb[n_cached:n_slots, :] = nl.load(v_active, dtype=nl.float32)
    visible = nl.load(mask, dtype=nl.float32)  # [H*A, S]: 1 or 0
    scores = nl.matmul(q_sb, k_sb, transpose_x=True)  # [H*A, S]
    # a masked slot's score is MASKED whatever the (stale) key holds
    scores = nl.add(nl.multiply(scores, visible),
                    nl.multiply(nl.subtract(visible, 1.0), -MASKED))
    row_max = nl.max(scores, axis=1)
    p = nl.exp(nl.subtract(scores, row_max))
    p = nl.divide(p, nl.sum(p, axis=1))
    o = nl.matmul(p, v_sb, transpose_x=False)
    nl.store(out, value=o)
    return out

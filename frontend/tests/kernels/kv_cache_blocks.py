"""A small decode kernel reading its KV cache through a block table, as nki-library's attention_tkg
does with block KV (`active_blocks_table`: a batch's logical block t lives in physical block
table[t]), in a layout of its own: one batch, H query heads sharing one KV head, q [d, H*A],
k_active [d, A], v_active [A, d], the physical cache k_prior / v_prior [N, L*d] (N blocks of L
slots, a block's slots side by side), the table [T, 1] uint32 (T = S / L blocks cover the S slots
the kernel reads; the last A slots are the active tokens', taken from k_active / v_active), the
mask [H*A, S] uint8, out [H*A, d]. Checked with a KV-cache --layout (check/kv_cache_layout.h, role
`table`) in the front-end tests; `bug="ignore_table"` reads physical blocks 0..T-1 in order, as
a kernel that ignores the table would.

The kernel takes its slots in its own order: block t's slot l (slot t*L + l) is column l*T' + t
of the scores (T' = the cached blocks), so each gathered block row splits into L key tiles."""

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

MASKED = -30000.0  # exp(MASKED - row max) is 0 in fp32 for any row max of the check's inputs


@nki.jit
def kv_blocks_decode(q, k_active, v_active, k_prior, v_prior, table, mask, bug="none"):
    d_head, n_rows = q.shape
    n_active = k_active.shape[1]
    n_slots = mask.shape[1]
    block_len = k_prior.shape[1] // d_head
    n_cached = n_slots - n_active
    assert n_cached % block_len == 0 and n_slots <= 128 and n_rows <= 128 and d_head <= 128
    n_blocks = n_cached // block_len  # the blocks of cached slots (the active ones come apart)
    out = nl.ndarray((n_rows, d_head), dtype=q.dtype, buffer=nl.shared_hbm)
    q_sb = nl.load(q, dtype=nl.float32)
    i_f = nl.arange(block_len * d_head)[None, :]
    if bug == "ignore_table":
        k_blocks = nl.load(k_prior[0:n_blocks, :], dtype=nl.float32)
        v_blocks = nl.load(v_prior[0:n_blocks, :], dtype=nl.float32)
    else:
        idx = nl.load(table[0:n_blocks, :])  # [T', 1]: the physical block of each logical one
        k_blocks = nl.load(k_prior[idx, i_f], dtype=nl.float32)
        v_blocks = nl.load(v_prior[idx, i_f], dtype=nl.float32)
    scores = nl.ndarray((n_rows, n_slots), dtype=nl.float32, buffer=nl.sbuf)
    visible = nl.ndarray((n_rows, n_slots), dtype=nl.float32, buffer=nl.sbuf)
    i_r = nl.arange(n_rows)[:, None]
    i_t = nl.arange(n_blocks)[None, :]
    for l in range(block_len):
        k_l = nl.transpose(k_blocks[:, l * d_head:(l + 1) * d_head])  # [d, T']
        cols = slice(l * n_blocks, (l + 1) * n_blocks)
        scores[:, cols] = nl.matmul(q_sb, k_l, transpose_x=True)
        visible[:, cols] = nl.load(mask[i_r, l + block_len * i_t], dtype=nl.float32)
    scores[:, n_cached:n_slots] = nl.matmul(q_sb, nl.load(k_active, dtype=nl.float32),
                                            transpose_x=True)
    visible[:, n_cached:n_slots] = nl.load(mask[:, n_cached:n_slots], dtype=nl.float32)
    # a masked slot's score is MASKED whatever the (stale) key holds
    s = nl.add(nl.multiply(scores, visible), nl.multiply(nl.subtract(visible, 1.0), -MASKED))
    p = nl.exp(nl.subtract(s, nl.max(s, axis=1)))
    p = nl.divide(p, nl.sum(p, axis=1))
    o = nl.ndarray((n_rows, d_head), dtype=nl.float32, buffer=nl.sbuf)  # the sum of L + 1 PVs
    o[...] = nl.matmul(p[:, n_cached:n_slots], nl.load(v_active, dtype=nl.float32),
                       transpose_x=False)
    for l in range(block_len):
        o[...] = nl.add(o, nl.matmul(p[:, l * n_blocks:(l + 1) * n_blocks],
                                     v_blocks[:, l * d_head:(l + 1) * d_head], transpose_x=False))
    nl.store(out, value=o)
    return out

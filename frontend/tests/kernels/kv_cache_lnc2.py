"""A small decode kernel on two cores (an LNC2 launch, `kernel[2]`), as nki-library's
attention_tkg splits its work at lnc=2 and exchanges results with `nisa.sendrecv`: core p
computes the output rows of its half of the query rows (the first or second H*A/2 of the heads'
rows), sends them to the other core, and stores the rows it receives, so every output row goes
through the exchange. Layout as kv_cache_decode.py (one batch, H query heads sharing one KV
head): q [d, H*A], k_active [d, A], v_active [A, d], k_prior [d, F], v_prior [F, d] (the first S
slots read, the last A of them the active tokens' slots, taken from k_active / v_active), the mask
[H*A, S] uint8, out [H*A, d]. Checked with a KV-cache --layout and --grid 2 in the front-end
tests; `bug="wrong_half"` stores the received rows where this core's own rows go (the halves
swapped), `bug="one_half"` has both cores compute the first half of the rows."""

import nki
import nki.isa as nisa
import nki.language as nl

MASKED = -30000.0  # exp(MASKED - row max) is 0 in fp32 for any row max of the check's inputs


@nki.jit
def kv_lnc2_decode(q, k_active, v_active, k_prior, v_prior, mask, bug="none"):
    d_head, n_rows = q.shape
    n_active = k_active.shape[1]
    n_slots = mask.shape[1]
    n_cached = n_slots - n_active
    half = n_rows // 2
    assert n_rows % 2 == 0 and d_head <= 128 and n_slots <= 128 and n_rows <= 128
    out = nl.ndarray((n_rows, d_head), dtype=q.dtype, buffer=nl.shared_hbm)
    pid = nl.program_id(0)
    mine = 0 if bug == "one_half" else pid  # the half of the rows this core computes
    q_sb = nl.load(q[:, nl.ds(mine * half, half)], dtype=nl.float32)  # [d, H*A/2]
    k_sb = nl.ndarray((d_head, n_slots), dtype=nl.float32, buffer=nl.sbuf)
    v_sb = nl.ndarray((n_slots, d_head), dtype=nl.float32, buffer=nl.sbuf)
    k_sb[:, 0:n_cached] = nl.load(k_prior[:, 0:n_cached], dtype=nl.float32)
    v_sb[0:n_cached, :] = nl.load(v_prior[0:n_cached, :], dtype=nl.float32)
    k_sb[:, n_cached:n_slots] = nl.load(k_active, dtype=nl.float32)
    v_sb[n_cached:n_slots, :] = nl.load(v_active, dtype=nl.float32)
    visible = nl.load(mask[nl.ds(mine * half, half), :], dtype=nl.float32)  # 1 or 0
    scores = nl.matmul(q_sb, k_sb, transpose_x=True)  # [H*A/2, S]
    scores = nl.add(nl.multiply(scores, visible),
                    nl.multiply(nl.subtract(visible, 1.0), -MASKED))
    # (the new dialect's nl binary calls do not broadcast: the row statistics widened first)
    row_max = nl.max(scores, axis=1, keepdims=True)
    p = nl.exp(nl.subtract(scores, nl.broadcast_to(row_max, shape=scores.shape)))
    inv = nl.reciprocal(nl.sum(p, axis=1, keepdims=True))  # (no division in the new dialect)
    p = nl.multiply(p, nl.broadcast_to(inv, shape=p.shape))
    rows = nl.ndarray((half, d_head), dtype=nl.float32, buffer=nl.sbuf)
    p_t = nl.ndarray((n_slots, half), dtype=nl.float32, buffer=nl.sbuf)
    p_t[...] = nl.transpose(p)  # [S, H*A/2]: the slots on the partitions
    rows[...] = nl.matmul(p_t, v_sb, transpose_x=True)
    theirs = nl.ndarray((half, d_head), dtype=nl.float32, buffer=nl.sbuf)
    nisa.sendrecv(src=rows, dst=theirs, send_to_rank=1 - pid, recv_from_rank=1 - pid, pipe_id=0)
    dest = pid if bug == "wrong_half" else 1 - pid
    nl.store(out[nl.ds(dest * half, half), :], value=theirs)
    return out

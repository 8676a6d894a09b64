"""A small new-API (`import nki`) decode kernel against a KV cache that applies rotary position
embedding to q and k_active itself, the way nki-library's attention_tkg does with fuse_rope (one
batch, H query heads sharing one KV head, A active tokens, d a multiple of 64). Written for
ncverify's tests from the library's documented algorithm (attention_tkg.py _rope / _apply_rope
docstrings), in a layout of its own:
q [d, H*A] (heads outer), k_active [d, A], v_active [A, d], the cache k_prior [d, F] and v_prior
[F, d] of which it reads the first S slots (the last A are the active tokens' slots, taken from
k_active / v_active; the cached keys are used as stored: a cache holds rotated keys),
mask [H*A, S] uint8, inv_freqs [d/2, 1] fp32, rope_pos_ids [1, A] fp32, out [H*A, d].

RoPE: pair t is (x[t], x[t + d/2]), turned by pos * inv_freqs[t] (rotate-half:
x * cos + cat(-x2, x1) * sin). cos and sin come from the Scalar engine's Sin, whose valid input
is [-pi, pi]: the fp32 angle is shifted by pi (sin) or 1.5 pi (cos), reduced modulo 2 pi in fp32
and shifted back by -pi. q is then scaled by 1 / sqrt(d) in place. The attention rounds as
attention_tkg's contract says (bf16 q, k, v and P, fp32 scores and sums, the sum over the bf16 P,
PV on unnormalised P, then x 1 / sum in fp32).

`bug` plants the faults the check must catch: "swapped" takes rotate_half's halves the other way
round (cat(x2, -x1): every pair turned backwards), "position" rotates by position + 1."""

import math

import nki
import nki.isa as nisa
import nki.language as nl

MASKED = -30000.0  # exp(MASKED - row max) is 0 in fp32 for any row max of the check's inputs


def reduced_sin(dst, angle, shift):
    """dst = Sin(((angle + shift) mod 2 pi) - pi) = sin(angle + shift - pi), the argument reduced
    into Sin's range [-pi, pi] in fp32 (k = round(x / 2 pi - 0.5), x - k 2 pi)."""
    rows, cols = angle.shape
    x = nl.ndarray((rows, cols), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_scalar(x, angle, op0=nl.add, operand0=shift)
    kf = nl.ndarray((rows, cols), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_scalar(kf, x, op0=nl.multiply, operand0=1.0 / (2 * math.pi), op1=nl.add,
                       operand1=-0.5)
    ki = nl.ndarray((rows, cols), dtype=nl.int32, buffer=nl.sbuf)
    nisa.tensor_copy(ki, kf)
    ky = nl.ndarray((rows, cols), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_scalar(ky, ki, op0=nl.multiply, operand0=2 * math.pi)
    nisa.tensor_tensor(x, x, ky, op=nl.subtract)
    nisa.tensor_scalar(x, x, op0=nl.add, operand0=-math.pi)
    nisa.activation(dst, op=nl.sin, data=x)


def rope(dst, src, cos, sin, heads, n_active, swapped):
    """dst (bf16) = src * cos + rotate_half(src) * sin, column h * A + a turned by token a's
    angles; the products and the add in fp32."""
    d_head, cols = src.shape
    half = d_head // 2
    x = nl.ndarray((d_head, cols), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(x, src)
    rot = nl.ndarray((d_head, cols), dtype=nl.float32, buffer=nl.sbuf)
    if swapped:
        nisa.tensor_copy(rot[0:half, :], x[half:d_head, :])
        nisa.tensor_scalar(rot[half:d_head, :], x[0:half, :], op0=nl.multiply, operand0=-1.0)
    else:
        nisa.tensor_scalar(rot[0:half, :], x[half:d_head, :], op0=nl.multiply, operand0=-1.0)
        nisa.tensor_copy(rot[half:d_head, :], x[0:half, :])
    xc = nl.ndarray((d_head, cols), dtype=nl.float32, buffer=nl.sbuf)
    for h in range(heads):
        c0, c1 = h * n_active, (h + 1) * n_active
        nisa.tensor_tensor(xc[:, c0:c1], x[:, c0:c1], cos, op=nl.multiply)
        nisa.tensor_tensor(rot[:, c0:c1], rot[:, c0:c1], sin, op=nl.multiply)
    nisa.tensor_tensor(dst, xc, rot, op=nl.add)


@nki.jit
def kv_rope_decode(q, k_active, v_active, k_prior, v_prior, mask, inv_freqs, rope_pos_ids,
                   bug="none"):
    d_head, n_rows = q.shape
    n_active = k_active.shape[1]
    n_slots = mask.shape[1]
    n_cached = n_slots - n_active
    heads = n_rows // n_active
    half = d_head // 2
    assert d_head % 64 == 0 and d_head <= 128 and n_slots <= 128 and n_rows <= 128
    assert k_prior.shape[1] >= n_slots
    out = nl.ndarray((n_rows, d_head), dtype=q.dtype, buffer=nl.shared_hbm)

    # the angle of pair t for token a on rows t and t + d/2: inv_freqs on both halves' partitions,
    # the positions on every partition (a partition-stride-0 read)
    freq = nl.ndarray((d_head, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=freq[0:half, :], src=inv_freqs)
    nisa.dma_copy(dst=freq[half:d_head, :], src=inv_freqs)
    pos = nl.ndarray((d_head, n_active), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=pos, src=rope_pos_ids.ap([[0, d_head], [1, n_active]], offset=0))
    angle = nl.ndarray((d_head, n_active), dtype=nl.float32, buffer=nl.sbuf)
    if bug == "position":
        nisa.tensor_scalar(angle, pos, op0=nl.add, operand0=1.0, op1=nl.multiply, operand1=freq)
    else:
        nisa.tensor_scalar(angle, pos, op0=nl.multiply, operand0=freq)
    cos = nl.ndarray((d_head, n_active), dtype=nl.float32, buffer=nl.sbuf)
    sin = nl.ndarray((d_head, n_active), dtype=nl.float32, buffer=nl.sbuf)
    reduced_sin(sin, angle, math.pi)
    reduced_sin(cos, angle, 1.5 * math.pi)

    q_in = nl.ndarray((d_head, n_rows), dtype=q.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=q_in, src=q)
    q_sb = nl.ndarray((d_head, n_rows), dtype=q.dtype, buffer=nl.sbuf)
    rope(q_sb, q_in, cos, sin, heads, n_active, bug == "swapped")
    nisa.activation(q_sb, op=nl.copy, data=q_sb, scale=1.0 / math.sqrt(d_head))

    k_in = nl.ndarray((d_head, n_active), dtype=k_active.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=k_in, src=k_active)
    k_sb = nl.ndarray((d_head, n_slots), dtype=k_prior.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=k_sb[:, 0:n_cached], src=k_prior[:, 0:n_cached])
    rope(k_sb[:, n_cached:n_slots], k_in, cos, sin, 1, n_active, bug == "swapped")
    v_sb = nl.ndarray((n_slots, d_head), dtype=v_prior.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=v_sb[0:n_cached, :], src=v_prior[0:n_cached, :])
    nisa.dma_copy(dst=v_sb[n_cached:n_slots, :], src=v_active)

    # scores [H*A, S] in fp32; a masked slot's score is MASKED whatever the (stale) key holds
    qk = nl.ndarray((n_rows, n_slots), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(qk, q_sb, k_sb)
    visible = nl.ndarray((n_rows, n_slots), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=visible, src=mask)
    scores = nl.ndarray((n_rows, n_slots), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_tensor(scores, qk, visible, op=nl.multiply)
    fill = nl.ndarray((n_rows, n_slots), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_scalar(fill, visible, op0=nl.subtract, operand0=1.0, op1=nl.multiply,
                       operand1=-MASKED)
    nisa.tensor_tensor(scores, scores, fill, op=nl.add)
    neg_max = nl.ndarray((n_rows, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_reduce(neg_max, op=nl.maximum, data=scores, axis=1, negate=True)
    # exp written straight into bf16 (the contract's exp_dtype and P), summed from that P
    p = nl.ndarray((n_rows, n_slots), dtype=q.dtype, buffer=nl.sbuf)
    nisa.activation(p, op=nl.exp, data=scores, bias=neg_max)
    total = nl.ndarray((n_rows, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_reduce(total, op=nl.add, data=p, axis=1)
    inv = nl.ndarray((n_rows, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.reciprocal(inv, total)

    p_t_ps = nl.ndarray((n_slots, n_rows), dtype=q.dtype, buffer=nl.psum)
    nisa.nc_transpose(p_t_ps, p)
    p_t = nl.ndarray((n_slots, n_rows), dtype=q.dtype, buffer=nl.sbuf)
    nisa.tensor_copy(p_t, p_t_ps)
    acc = nl.ndarray((n_rows, d_head), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(acc, p_t, v_sb)
    o = nl.ndarray((n_rows, d_head), dtype=q.dtype, buffer=nl.sbuf)
    nisa.tensor_scalar(o, acc, op0=nl.multiply, operand0=inv)
    nisa.dma_copy(dst=out, src=o)
    return out

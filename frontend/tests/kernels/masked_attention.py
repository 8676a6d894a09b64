"""Small attention kernels whose problem goes beyond q, k, v and a bottom-right causal mask, each
with a flag that breaks it, checked with `check --layout` in tools/tests/frontend_layout_test.cpp:
a sliding window, a top-left causal mask, sink logits, a prior read up to a run-time length
(prefix caching), a run-time query offset (context parallelism), per-query key bounds
(sequence packing) and the cached softmax statistics (cache_softmax), as nki-library's
attention_cte states them (attention_cte_torch.py). Layout:
q [d, Sq], k and v [d, S], out [Sq, d]; one tile (Sq <= 128 queries, S <= 128 keys per matmul)."""

import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

_MASKED = -30000.0  # added to a masked score: its exp is 0 in fp32


def _scores(q_sb, k_sb, scale):
    return nl.multiply(nl.matmul(q_sb, k_sb, transpose_x=True), scale)  # [Sq, S] fp32


def _penalty(visible):
    """0 where `visible` (1.0 / 0.0) holds, _MASKED elsewhere."""
    return nl.multiply(nl.subtract(visible, 1.0), -_MASKED)


def _finish(out, parts, sink=None):
    """softmax over the keys of every (scores, v [d, keys]) part, plus an optional sink logit per
    query ([Sq, 1]) in the denominator only, times v; stored into out [Sq, d]."""
    row_max = None
    for scores, _ in parts:
        m = nl.max(scores, axis=1)
        row_max = m if row_max is None else nl.maximum(row_max, m)
    if sink is not None:
        row_max = nl.maximum(row_max, sink)
    total = None
    acc = None
    for scores, v_sb in parts:
        p = nl.exp(nl.subtract(scores, row_max))
        s = nl.sum(p, axis=1)
        total = s if total is None else nl.add(total, s)
        o = nl.matmul(p, nl.transpose(v_sb), transpose_x=False)  # PSUM
        acc = o if acc is None else nl.add(nl.copy(acc), o)
    if sink is not None:
        total = nl.add(total, nl.exp(nl.subtract(sink, row_max)))
    nl.store(out, value=nl.divide(acc, total))
    return out


def _out(q):
    d_head, seqlen_q = q.shape
    return nl.ndarray((seqlen_q, d_head), dtype=q.dtype, buffer=nl.shared_hbm)


@nki.jit
def window_attention(q, k, v, window=16, off_by_one=False):
    """Causal with a sliding window of `window` keys at Sq = S (off_by_one: one key more)."""
    d_head, seqlen = q.shape
    assert k.shape == q.shape and v.shape == q.shape and seqlen <= 128
    out = _out(q)
    scores = _scores(nl.load(q), nl.load(k), 1.0)
    i_p = nl.arange(seqlen)[:, None]
    i_f = nl.arange(seqlen)[None, :]
    w = window + 1 if off_by_one else window
    scores = nisa.affine_select(pred=(i_p - i_f >= 0), on_true_tile=scores,
                                on_false_value=_MASKED)
    scores = nisa.affine_select(pred=(i_f - i_p + w > 0), on_true_tile=scores,
                                on_false_value=_MASKED)
    return _finish(out, [(scores, nl.load(v))])


@nki.jit
def causal_attention(q, k, v, top_left=True):
    """Causal at Sq <= S: query i sees keys j <= i (top-left, as attention_cte) or, with
    top_left=False, keys j <= i + S - Sq (bottom-right)."""
    d_head, seqlen_q = q.shape
    _, seqlen_kv = k.shape
    assert seqlen_q <= seqlen_kv <= 128
    out = _out(q)
    scores = _scores(nl.load(q), nl.load(k), 1.0)
    i_p = nl.arange(seqlen_q)[:, None]
    i_f = nl.arange(seqlen_kv)[None, :]
    shift = 0 if top_left else seqlen_kv - seqlen_q
    scores = nisa.affine_select(pred=(i_p + shift - i_f >= 0), on_true_tile=scores,
                                on_false_value=_MASKED)
    return _finish(out, [(scores, nl.load(v))])


@nki.jit
def sink_attention(q, k, v, sink, drop_sink=False):
    """No mask, one sink logit (sink [1, 1]: one head) in every row's denominator (drop_sink:
    left out)."""
    d_head, seqlen = q.shape
    out = _out(q)
    scores = _scores(nl.load(q), nl.load(k), 1.0)
    s = None if drop_sink else nl.broadcast_to(sink, shape=(seqlen, 1))
    return _finish(out, [(scores, nl.load(v))], sink=s)


@nki.jit
def prior_attention(q, k, v, k_prior, v_prior, prior_len, ignore_len=False):
    """Prefix caching: the first prior_len[0, 0] slots of k_prior / v_prior [d, P] before the
    active keys, which are causal top-left (ignore_len: every prior slot used)."""
    d_head, seqlen_q = q.shape
    _, seqlen_kv = k.shape
    _, prior = k_prior.shape
    out = _out(q)
    q_sb = nl.load(q)
    active = _scores(q_sb, nl.load(k), 1.0)
    i_p = nl.arange(seqlen_q)[:, None]
    i_f = nl.arange(seqlen_kv)[None, :]
    active = nisa.affine_select(pred=(i_p - i_f >= 0), on_true_tile=active,
                                on_false_value=_MASKED)
    prior_scores = _scores(q_sb, nl.load(k_prior), 1.0)
    if not ignore_len:
        j_f = nl.arange(prior)[None, :]
        slots = nisa.iota(i_p * 0 + j_f, dtype=nl.float32)
        used = nl.broadcast_to(prior_len, shape=(seqlen_q, 1))
        used = nl.copy(used, dtype=nl.float32)
        prior_scores = nl.add(prior_scores, _penalty(nl.less(slots, used, dtype=nl.float32)))
    return _finish(out, [(prior_scores, nl.load(v_prior)), (active, nl.load(v))])


@nki.jit
def cp_attention(q, k, v, cp_offset, degree=2, strided=False, ignore_offset=False):
    """Context parallelism: this rank's Sq queries at positions cp_offset + i (strided:
    cp_offset + i * degree) among all S keys, causal (ignore_offset: as if the offset were 0)."""
    d_head, seqlen_q = q.shape
    _, seqlen_kv = k.shape
    out = _out(q)
    scores = _scores(nl.load(q), nl.load(k), 1.0)
    i_p = nl.arange(seqlen_q)[:, None]
    i_f = nl.arange(seqlen_kv)[None, :]
    step = degree if strided else 1
    qpos = nisa.iota(i_p * step + i_f * 0, dtype=nl.float32)
    if not ignore_offset:
        off = nl.copy(nl.broadcast_to(cp_offset, shape=(seqlen_q, 1)), dtype=nl.float32)
        qpos = nl.add(qpos, off)
    keys = nisa.iota(i_p * 0 + i_f, dtype=nl.float32)
    scores = nl.add(scores, _penalty(nl.less_equal(keys, qpos, dtype=nl.float32)))
    return _finish(out, [(scores, nl.load(v))])


@nki.jit
def packed_attention(q, k, v, bound_min, bound_max, ignore_max=False):
    """Sequence packing: query i sees keys in [bound_min[i, 0], bound_max[i, 0]) (fp32 [Sq, 1]);
    ignore_max: keys after its sequence too."""
    d_head, seqlen_q = q.shape
    _, seqlen_kv = k.shape
    out = _out(q)
    scores = _scores(nl.load(q), nl.load(k), 1.0)
    i_p = nl.arange(seqlen_q)[:, None]
    i_f = nl.arange(seqlen_kv)[None, :]
    keys = nisa.iota(i_p * 0 + i_f, dtype=nl.float32)
    lo = nl.load(bound_min)
    scores = nl.add(scores, _penalty(nl.greater_equal(keys, lo, dtype=nl.float32)))
    if not ignore_max:
        hi = nl.load(bound_max)
        scores = nl.add(scores, _penalty(nl.less(keys, hi, dtype=nl.float32)))
    return _finish(out, [(scores, nl.load(v))])


@nki.jit
def cached_softmax_attention(q, k, v, wrong_max=False, wrong_sum=False):
    """No mask; besides out, the softmax statistics as attention_cte's cache_softmax stores them
    (attention_cte.py lines 369-372, 795-808): neg_max = -(row max) and sum_recip = 1 / (row sum
    of exp(s - max)), fp32 [128, Sq / 128] with query t * 128 + p at [p, t] (attention_cte's
    [bs, 128, Sq / 128] for one row; Sq = 128 here: one tile). wrong_max: the max of the first
    64 keys only (half the key tile); wrong_sum: the sum without the last key's term."""
    d_head, seqlen_q = q.shape
    _, seqlen_kv = k.shape
    assert seqlen_q == 128 and seqlen_kv <= 128
    out = _out(q)
    neg_max = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.shared_hbm)
    sum_recip = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.shared_hbm)
    scores = _scores(nl.load(q), nl.load(k), 1.0)
    row_max = nl.max(scores, axis=1)
    p = nl.exp(nl.subtract(scores, row_max))
    total = nl.sum(p, axis=1)
    if wrong_sum:
        total = nl.subtract(total, p[:, seqlen_kv - 1])
    o = nl.matmul(p, nl.transpose(nl.load(v)), transpose_x=False)
    nl.store(out, value=nl.divide(o, nl.sum(p, axis=1)))
    cached = nl.max(scores[:, 0:64], axis=1) if wrong_max else row_max
    nl.store(neg_max, value=nl.multiply(cached, -1.0))
    nl.store(sum_recip, value=nl.reciprocal(total))
    return out, neg_max, sum_recip

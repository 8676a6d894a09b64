"""Differential cases, new dialect: views of HBM kernel arguments and outputs that step twice
through one of their dims (an `.ap` with two pairs in one row, a `reshape` that splits a dim, a
run-time offset scaled by a multiple of a dim's stride). The front end declares such a tensor
with that dim split (the same bytes, row-major; newapi/refine.py); the references here are the
access-pattern deep dive's definition, written from the documentation, not the implementation:
element (i, ...) of `t.ap(pattern, offset)` is flat(t)[offset + sum(step_k * i_k)], and
`scalar_offset=v, indirect_dim=k` adds v * prod(t.shape[k+1:]) (the migration guide, "Dynamic
access pattern"). Run by `python3 -m ncverify_nki.run` (ctest label `frontend`)."""

import contextlib
import unittest

import numpy as np

import nki
import nki.isa as nisa
import nki.language as nl
from diffharness import Mismatch, run_case
from ncverify_nki.expr import Lin
from ncverify_nki.newapi import access_patterns, dma, refine, views
from ncverify_nki.simulate import KernelNotTraced
from targets import default, on

default("trn1")


def ap_golden(storage, pattern, offset):
    """The deep dive's loop: flatten the storage, read offset + sum(step * index)."""
    flat = storage.reshape(-1)
    shape = [n for _, n in pattern]
    idx = np.full(shape, offset, dtype=np.int64)
    for k, (step, n) in enumerate(pattern):
        ax = [1] * len(shape)
        ax[k] = n
        idx = idx + (np.arange(n) * step).reshape(ax)
    return flat[idx]


def to_sbuf(src, shape):
    t = nl.ndarray(shape, dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=src)
    return t


def to_hbm(t):
    o = nl.ndarray(t.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=o, src=t)
    return o


@nki.jit
def argument_pairs(a, k, c, rows, m):
    """An argument [k * 128, c] read as [128, k, c] (pairs [c, 128], [128 * c, k], [1, c]: two
    steps through its dim 0), with views taken before and after: a held view made before the
    split, and slices after it of whole blocks of 128 rows and of rows within one block."""
    held = a[128:256, 0:c]
    # dst of another shape than src: one DMA, a's dim split (dma.py moves a DMA between views
    # of one shape in pieces instead)
    t = to_sbuf(a.ap([[c, 128], [128 * c, k], [1, c]], offset=0), (128, k * c))
    u = to_sbuf(held, (128, c))
    w = to_sbuf(a[rows:rows + m, 1:c], (m, c - 1))
    blocks = to_sbuf(a[128:].reshape((k - 1, 128, c)).permute((1, 0, 2)), (128, k - 1, c))
    return to_hbm(t), to_hbm(u), to_hbm(w), to_hbm(blocks)


@nki.jit
def argument_reshape(a, shape):
    """An argument read through a reshape that splits one of its dims and merges the inner part
    with the next (nki-library's (4, 7) -> (2, 14))."""
    return to_hbm(to_sbuf(a.reshape(shape), shape))


@nki.jit
def scaled_offset(a, k, c, block, rows):
    """a [k * 128, c] viewed as [k, 128, c]: the first `rows` rows of block v (read at run
    time) through .ap(scalar_offset=v, indirect_dim=0), whose offset is v * 128 * c elements: k
    blocks of 128 rows, a multiple of dim 0's stride c."""
    v = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
    nisa.dma_copy(dst=v, src=block)
    view = a.reshape((k, 128, c)).ap([[c, rows], [1, c]], offset=0, scalar_offset=v,
                                     indirect_dim=0)
    return to_hbm(to_sbuf(view, (rows, c)))


@nki.jit
def output_pairs(a, k, c):
    """An output [k * 128, c] written through .ap pairs that step twice through its dim 0: the
    caller gets the output in the shape the kernel declared."""
    t = to_sbuf(a, (128, k * c))  # of another shape than dst's view: one DMA, o split
    o = nl.ndarray((k * 128, c), dtype=nl.float32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=o.ap([[c, 128], [128 * c, k], [1, c]], offset=0), src=t)
    return o


@nki.jit
def traced_offsets(a, k, c):
    """scalar_offset values the kernel knows when it is traced: the variable of a loop over the
    blocks of a [k * 128, c] argument viewed as [k, 128, c], and an int on its dim 1."""
    t = nl.ndarray((128, k, c), dtype=nl.float32, buffer=nl.sbuf)
    for i in nl.affine_range(k):
        nisa.dma_copy(dst=t[:, i, :], src=a.reshape((k, 128, c)).ap(
            [[c, 128], [1, c]], offset=0, scalar_offset=i, indirect_dim=0))
    u = to_sbuf(a.ap([[c, 128], [1, c - 1]], offset=0, scalar_offset=1, indirect_dim=1),
                (128, c - 1))
    return to_hbm(t), to_hbm(u)


@nki.jit
def broadcast_without_a_carrier(a, n):
    """A [p, c] tile broadcast along a new axis: its dims are the partition dim and the one
    the other axis steps through, so a size-1 dim appended to it carries the broadcast."""
    t = to_sbuf(a, a.shape)
    u = nl.ndarray((a.shape[0], n, a.shape[1]), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(u, t.expand_dim(1).broadcast(1, n))
    return to_hbm(u)


@nki.jit
def reduce_over_an_added_axis(a):
    """A max over an added size-1 axis (nki-library's reshape_dim(1, [1, s]).permute(...) with
    one tile): each result is the one element it reads."""
    t = to_sbuf(a, a.shape)
    u = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_reduce(dst=u, op=nl.maximum, data=t.reshape_dim(1, [1, a.shape[1]])
                       .permute([0, 2, 1]), axis=[2], keepdims=False)
    return to_hbm(u)


@nki.jit
def reduce_of_a_pattern(a):
    """A sum over the last axis of .ap([[64, p], [16, 4], [1, 1], [1, 16]]): the pattern steps
    twice through the tile's free dim (kept as its pattern until the reduce uses it) and has an
    added size-1 axis before the one reduced."""
    t = to_sbuf(a, a.shape)
    u = nl.ndarray((a.shape[0], 4, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_reduce(dst=u, op=nl.add, data=t.ap([[64, a.shape[0]], [16, 4], [1, 1], [1, 16]]),
                       axis=[3], keepdims=False)
    return to_hbm(u)


@nki.jit
def copy_into_a_pattern(a, b):
    """An element-wise copy into a view that steps twice through a tile's free dim but is one
    contiguous run in row-major order (t.ap([[56, p], [14, 2], [1, 14]]): elements 0..27 of
    each row, nki-library's reshape_dim of its sink tile): the tile keeps its declared shape,
    so a later slice across its would-be rows of 14 is one access."""
    p = a.shape[0]
    t = to_sbuf(b, b.shape)
    src = to_sbuf(a, a.shape)
    nisa.tensor_copy(dst=t.ap([[56, p], [14, 2], [1, 14]]), src=src)
    w = nl.ndarray((p, 20), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(w, t[:, 10:30])
    return to_hbm(t), to_hbm(w)


@nki.jit
def psum_split(s, mv, c):
    """Two matmul products in the halves of a PSUM tile [m, 2c] (a loop: the halves' starts
    are symbolic), read back through .ap pairs that step twice through its free dim (the tile
    is declared split into (2, c)), then a second product into each half, which adds (the
    first write of a PSUM location overwrites, later ones add: the bookkeeping survives the
    split)."""
    m = s.shape[1]
    ts, tm = to_sbuf(s, s.shape), to_sbuf(mv, mv.shape)
    acc = nl.ndarray((m, 2 * c), dtype=nl.float32, buffer=nl.psum)
    for i in nl.affine_range(2):
        nisa.nc_matmul(acc[:, nl.ds(i * c, c)], ts, tm)
    x = nl.ndarray((m, c, 2), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(x, acc.ap([[2 * c, m], [1, c], [c, 2]]))
    for i in nl.affine_range(2):
        nisa.nc_matmul(acc[:, nl.ds(i * c, c)], ts, tm)
    nisa.nc_matmul(acc[:, 0:c], ts, tm)
    y = nl.ndarray((m, 2 * c), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(y, acc)
    return to_hbm(x), to_hbm(y)


@nki.jit
def five_dims(a):
    """A tile with 5 dims read by the Vector engine through pairs that step twice through its
    last dim."""
    t = to_sbuf(a, a.shape)
    u = nl.ndarray((2, 2, 8), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(u, t.ap([[128, 2], [1, 2], [2, 8]], offset=0))
    return to_hbm(u)


@nki.jit
def dma_in_pieces(a):
    """A DMA whose source .ap steps twice through the free dim of an SBUF tile ([64, 128],
    [16, 4], [1, 8]: rows of 16 read 8 at a time) moves it in pieces, one per index of the axis
    of 4, so the tile keeps its declared shape: a later slice across its rows of 16 is one
    access. Then a dma_transpose of a source that steps twice through one dim (nki-library's
    attention_cte: [[512, p], [1, 1], [128, 4], [1, 128]])."""
    t = to_sbuf(a, (128, 64))
    u = nl.ndarray((128, 4, 8), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=u, src=t.ap([[64, 128], [16, 4], [1, 8]]))
    w = nl.ndarray((128, 20), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(w, t[:, 8:28])
    return to_hbm(u), to_hbm(w)


@on("trn2")
def transpose_in_pieces(a):
    p = a.shape[0]
    t = to_sbuf(a, a.shape)
    u = nl.ndarray((128, 1, 4, p), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_transpose(dst=u, src=t.ap([[512, p], [1, 1], [128, 4], [1, 128]]))
    w = nl.ndarray((p, 300), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(w, t[:, 100:400])
    return to_hbm(u), to_hbm(w)


@nki.jit
def offsets_across_dims(kp, idx):
    """Per-row offsets counting rows of w = kp.shape[2] * 8 elements of a [b, 16, c] argument
    (nki-library's paged KV cache reshaped to [2b, 8c]): the rows run through its dims 0 and 1,
    which the argument is declared with merged ([2b, 8, c])."""
    b, _, c = kp.shape
    r = kp.reshape((b * 2, 8 * c))
    ix = to_sbuf_int(idx)
    t = nl.ndarray((128, 8 * c), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=r.ap([[8 * c, 128], [1, 8 * c]], offset=0, vector_offset=ix,
                                  indirect_dim=0))
    return to_hbm(t)


def to_sbuf_int(a):
    t = nl.ndarray(a.shape, dtype=nl.int32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    return t


class ArgumentViews(unittest.TestCase):
    def test_pairs_through_one_dim_of_an_argument(self):
        def body(c):
            k, cols = int(c.rng.integers(2, 5)), int(c.rng.integers(2, 40))
            a = c.floats((k * 128, cols))
            rows = int(c.rng.integers(0, k * 128))
            m = int(c.rng.integers(1, 128 - rows % 128 + 1))
            t, u, w, blocks = argument_pairs(a, k, cols, rows, m)
            c.check("a.ap(two pairs in dim 0)", t,
                    ap_golden(a, [[cols, 128], [128 * cols, k], [1, cols]], 0)
                    .reshape(128, k * cols))
            c.check("a view held across the split", u, a[128:256, 0:cols])
            c.check("rows within one block after the split", w, a[rows:rows + m, 1:cols])
            c.check("whole blocks after the split", blocks,
                    a[128:].reshape(k - 1, 128, cols).transpose(1, 0, 2))
        run_case("nki_views_argument_pairs", body)

    def test_reshape_splitting_a_dim_of_an_argument(self):
        def body(c):
            q = int(c.rng.integers(2, 9))
            a = c.floats((2 * q, 7))
            got = argument_reshape(a, (2, q * 7))
            c.check("a.reshape((2, 7q)) of a (2q, 7) argument", got, a.reshape(2, q * 7))
        run_case("nki_views_argument_reshape", body)

    def test_run_time_offset_scaled_by_a_multiple_of_a_stride(self):
        def body(c):
            k, cols = int(c.rng.integers(2, 5)), int(c.rng.integers(1, 33))
            a = c.floats((k * 128, cols))
            v, rows = int(c.rng.integers(0, k)), int(c.rng.integers(1, 129))
            got = scaled_offset(a, k, cols, np.array([[v]], dtype=np.int32), rows)
            c.check("scalar_offset=%d, indirect_dim=0 of a (%d, 128, %d) view" % (v, k, cols),
                    got, ap_golden(a, [[cols, rows], [1, cols]], v * 128 * cols))
        run_case("nki_views_scaled_offset", body)

    def test_an_output_written_through_pairs_in_one_dim(self):
        def body(c):
            k, cols = int(c.rng.integers(2, 5)), int(c.rng.integers(1, 33))
            a = c.floats((128, k * cols))
            got = output_pairs(a, k, cols)
            want = np.empty((k * 128, cols), dtype=np.float32)
            idx = ap_golden(np.arange(want.size), [[cols, 128], [128 * cols, k], [1, cols]], 0)
            want.reshape(-1)[idx] = a.reshape(128, k, cols)
            c.check("o.ap(two pairs in dim 0) = a", got, want)
        run_case("nki_views_output_pairs", body)


class OnChipViews(unittest.TestCase):
    def test_scalar_offsets_known_when_traced(self):
        def body(c):
            k, cols = int(c.rng.integers(2, 5)), int(c.rng.integers(2, 33))
            a = c.floats((k * 128, cols))
            t, u = traced_offsets(a, k, cols)
            c.check("scalar_offset=i (a loop variable), indirect_dim=0", t,
                    a.reshape(k, 128, cols).transpose(1, 0, 2))
            c.check("scalar_offset=1, indirect_dim=1", u, a[0:128, 1:cols])
        run_case("nki_views_traced_offsets", body)

    def test_a_broadcast_through_an_appended_unit_dim(self):
        def body(c):
            p, f = c.shape(free=(1, 48))
            n = int(c.rng.integers(2, 6))
            a = c.floats((p, f))
            got = broadcast_without_a_carrier(a, n)
            c.check("t.expand_dim(1).broadcast(1, %d)" % n, got,
                    np.broadcast_to(a[:, None, :], (p, n, f)))
        run_case("nki_views_broadcast_carrier", body)

    def test_a_psum_tile_split_keeps_its_accumulation(self):
        def body(c):
            kk, m, cols = int(c.rng.integers(1, 17)), int(c.rng.integers(1, 129)), \
                int(c.rng.integers(1, 257))
            s = c.ints((kk, m), -4, 4).astype(np.float32)
            mv = c.ints((kk, cols), -4, 4).astype(np.float32)
            x, y = psum_split(s, mv, cols)
            prod = s.T @ mv
            c.check("the halves read through .ap", x, np.stack([prod, prod], axis=2))
            c.check("products added after the split", y,
                    np.concatenate([3 * prod, 2 * prod], axis=1))
        run_case("nki_views_psum_split", body)

    def test_dmas_in_pieces_keep_the_tile_as_declared(self):
        def body(c):
            a = c.floats((128, 64))
            u, w = dma_in_pieces(a)
            c.check("t.ap([[64, 128], [16, 4], [1, 8]]) in pieces", u,
                    ap_golden(a, [[64, 128], [16, 4], [1, 8]], 0))
            c.check("t[:, 8:28] after it", w, a[:, 8:28])
            p = int(c.rng.integers(1, 17))
            b = c.floats((p, 512))
            u, w = transpose_in_pieces(b)
            c.check("dma_transpose of [[512, p], [1, 1], [128, 4], [1, 128]] in pieces", u,
                    ap_golden(b, [[512, p], [1, 1], [128, 4], [1, 128]], 0)
                    .transpose(3, 1, 2, 0))
            c.check("t[:, 100:400] after it", w, b[:, 100:400])
        run_case("nki_views_dma_pieces", body)

    def test_a_reduce_over_an_added_size_1_axis(self):
        def body(c):
            a = c.floats(c.shape())
            c.check("tensor_reduce(max) over an added size-1 axis", reduce_over_an_added_axis(a),
                    a)
        run_case("nki_views_reduce_unit_axis", body)

    def test_offsets_counting_rows_across_two_dims(self):
        def body(c):
            b, cols = int(c.rng.integers(1, 9)), int(c.rng.integers(1, 9))
            kp = c.floats((b, 16, cols))
            idx = c.ints((128, 1), 0, 2 * b - 1)
            got = offsets_across_dims(kp, idx)
            c.check("rows idx[r] of kp.reshape((2b, 8c))", got,
                    kp.reshape(2 * b, 8 * cols)[idx[:, 0]])
        run_case("nki_views_offsets_merge", body)

    def test_a_reduce_over_a_pattern_kept_as_such(self):
        def body(c):
            p = int(c.rng.integers(1, 129))
            a = c.ints((p, 64), -8, 8).astype(np.float32)  # sums exact in any order
            c.check("tensor_reduce(add, axis=[3]) of a 4-axis pattern", reduce_of_a_pattern(a),
                    a.reshape(p, 4, 1, 16).sum(axis=3))
        run_case("nki_views_reduce_pattern", body)

    def test_a_copy_into_a_contiguous_pattern_keeps_the_tile(self):
        def body(c):
            p = int(c.rng.integers(1, 129))
            a, b = c.floats((p, 2, 14)), c.floats((p, 56))
            t, w = copy_into_a_pattern(a, b)
            want = b.copy()
            want[:, 0:28] = a.reshape(p, 28)
            c.check("t.ap([[56, p], [14, 2], [1, 14]]) = a", t, want)
            c.check("t[:, 10:30] after it", w, want[:, 10:30])
        run_case("nki_views_row_major_copy", body)

    def test_a_sixth_dim_is_refused(self):
        a = np.zeros((2, 2, 2, 2, 16), dtype=np.float32)
        with self.assertRaises(KernelNotTraced) as cm:
            five_dims(a)
        self.assertIn("already has 5 dims", str(cm.exception))


@contextlib.contextmanager
def patched(module, name, replacement):
    original = getattr(module, name)
    setattr(module, name, replacement(original))
    try:
        yield
    finally:
        setattr(module, name, original)


def offset_on_the_next_dim(storage_dim_of_stride):
    """The run-time offset put on the dim after the one of its stride (a mistrace)."""
    def wrong(t, st):
        d = storage_dim_of_stride(t, st)
        return d + 1 if d is not None and d + 1 < len(t.shape) else d
    return wrong


def split_loses_the_outer_start(split):
    """A held view rewritten into the split shape at outer index 0 (a mistrace)."""
    def wrong(start, size, step, b):
        parts = split(start, size, step, b)
        if parts is not None:
            parts[0][0] = parts[0][0].scale(0)
        return parts
    return wrong


def psum_bookkeeping_forgotten(bookkeeping):
    """A PSUM split that forgets the regions earlier matmuls wrote and the blocks their
    accumulation groups started (a mistrace: later matmuls overwrite)."""
    def wrong(t, d, b, new_views, why):
        bookkeeping(t, d, b, new_views, why)
        return set(), []
    return wrong


def pieces_reversed(pieces):
    """DMA pieces whose sources are taken in the reverse order (a mistrace)."""
    def wrong(dst, src, dst_axis_of):
        got = pieces(dst, src, dst_axis_of)
        return None if got is None else [(d, s) for (d, _), (_, s) in zip(got, got[::-1])]
    return wrong


def run_one_element_late(contiguous_view):
    """The contiguous run of a pattern taken one element later (a mistrace)."""
    def wrong(self):
        shape, strides, off = self._flat
        self._flat = (shape, strides, Lin.of(off).add(Lin.of(1)))
        try:
            return contiguous_view(self)
        finally:
            self._flat = (shape, strides, off)
    return wrong


class WrongMappingsAreCaught(unittest.TestCase):
    """The cases above fail when the front end maps a view wrongly."""

    def test_an_offset_on_the_wrong_dim(self):
        def body(c):
            a = c.floats((3 * 128, 4))
            got = scaled_offset(a, 3, 4, np.array([[1]], dtype=np.int32), 64)
            c.check("block 1", got, a[128:192])
        run_case("nki_views_selftest_offset", body)  # right: passes
        with patched(access_patterns, "_storage_dim_of_stride", offset_on_the_next_dim):
            with self.assertRaises(Mismatch) as cm:
                run_case("nki_views_selftest_offset", body)
        self.assertIn("block 1", str(cm.exception))

    def test_psum_accumulation_forgotten_by_a_split(self):
        with patched(refine, "_psum_bookkeeping", psum_bookkeeping_forgotten):
            with self.assertRaises(Mismatch) as cm:
                OnChipViews("test_a_psum_tile_split_keeps_its_accumulation") \
                    .test_a_psum_tile_split_keeps_its_accumulation()
        self.assertIn("products added after the split", str(cm.exception))

    def test_a_contiguous_run_one_element_late(self):
        with patched(views.NkiTensor, "_contiguous_view", run_one_element_late):
            with self.assertRaises(Mismatch) as cm:
                OnChipViews("test_a_copy_into_a_contiguous_pattern_keeps_the_tile") \
                    .test_a_copy_into_a_contiguous_pattern_keeps_the_tile()
        self.assertIn("= a", str(cm.exception))

    def test_dma_pieces_out_of_order(self):
        with patched(dma, "_pieces", pieces_reversed):
            with self.assertRaises(Mismatch) as cm:
                OnChipViews("test_dmas_in_pieces_keep_the_tile_as_declared") \
                    .test_dmas_in_pieces_keep_the_tile_as_declared()
        self.assertIn("in pieces", str(cm.exception))

    def test_a_held_view_rewritten_at_the_wrong_rows(self):
        with patched(refine, "_split", split_loses_the_outer_start):
            with self.assertRaises(Mismatch) as cm:
                ArgumentViews("test_pairs_through_one_dim_of_an_argument") \
                    .test_pairs_through_one_dim_of_an_argument()
        self.assertIn("a view held across the split", str(cm.exception))


if __name__ == "__main__":
    unittest.main()

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
from ncverify_nki.newapi import access_patterns, refine
from targets import default

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
    t = to_sbuf(a.ap([[c, 128], [128 * c, k], [1, c]], offset=0), (128, k, c))
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
    t = to_sbuf(a, (128, k, c))
    o = nl.ndarray((k * 128, c), dtype=nl.float32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=o.ap([[c, 128], [128 * c, k], [1, c]], offset=0), src=t)
    return o


class ArgumentViews(unittest.TestCase):
    def test_pairs_through_one_dim_of_an_argument(self):
        def body(c):
            k, cols = int(c.rng.integers(2, 5)), int(c.rng.integers(2, 40))
            a = c.floats((k * 128, cols))
            rows = int(c.rng.integers(0, k * 128))
            m = int(c.rng.integers(1, 128 - rows % 128 + 1))
            t, u, w, blocks = argument_pairs(a, k, cols, rows, m)
            c.check("a.ap(two pairs in dim 0)", t,
                    ap_golden(a, [[cols, 128], [128 * cols, k], [1, cols]], 0))
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
            a = c.floats((128, k, cols))
            got = output_pairs(a, k, cols)
            want = np.empty((k * 128, cols), dtype=np.float32)
            idx = ap_golden(np.arange(want.size), [[cols, 128], [128 * cols, k], [1, cols]], 0)
            want.reshape(-1)[idx] = a
            c.check("o.ap(two pairs in dim 0) = a", got, want)
        run_case("nki_views_output_pairs", body)


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

    def test_a_held_view_rewritten_at_the_wrong_rows(self):
        with patched(refine, "_split", split_loses_the_outer_start):
            with self.assertRaises(Mismatch) as cm:
                ArgumentViews("test_pairs_through_one_dim_of_an_argument") \
                    .test_pairs_through_one_dim_of_an_argument()
        self.assertIn("a view held across the split", str(cm.exception))


if __name__ == "__main__":
    unittest.main()

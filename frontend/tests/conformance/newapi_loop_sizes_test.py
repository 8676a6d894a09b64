"""A tile whose size is computed from the loop variable (`import nki`, NKI 0.2-0.6): the last,
partial tile of a row loop, `rows = min(n, i * 128 + 128) - i * 128`, as ucb-bar/autocomp's
layernorm and rmsnorm harnesses write it. NKI runs the loop in Python, so each iteration has its
own tile shape; the front end keeps the loop where the size is the same in every iteration of a
split of it and unrolls it where it is not (a program's tensor shapes are params only). Before
this, at n = 4096 (32 iterations: the loop stays a loop, split at its last iteration) the size
kept the loop variable and the program failed validation ("shape uses 'i'"); the growing tile
was already unrolled and is here as the other branch of the rule.
ncverify's own kernels; the expected arrays are computed here with NumPy. Run by
`python3 -m ncverify_nki.run` (ctest label `conformance`)."""

import unittest

import numpy as np

import nki
import nki.isa as nisa
import nki.language as nl
from targets import default

default("trn2")


@nki.jit
def scale_rows(a):
    """2 * a, 128 rows at a time; the last tile has n % 128 rows."""
    n, f = a.shape
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range((n + 127) // 128):
        p0 = i * 128
        rows = min(n, p0 + 128) - p0
        t = nl.ndarray((rows, f), dtype=a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a[p0:p0 + rows, 0:f])
        nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=2.0)
        nisa.dma_copy(dst=out[p0:p0 + rows, 0:f], src=t)
    return out


@nki.jit
def row_sums_growing(a):
    """Tile i has i + 1 columns (a size that differs in every iteration): out[:, i] = the sum
    of a[:, 0:i + 1]."""
    p, k = a.shape
    out = nl.ndarray((p, k), dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(k):
        t = nl.ndarray((p, i + 1), dtype=a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a[0:p, 0:i + 1])
        s = nl.ndarray((p, 1), dtype=a.dtype, buffer=nl.sbuf)
        nisa.tensor_reduce(dst=s, op=nl.add, data=t, axis=1, keepdims=True)
        nisa.dma_copy(dst=out[0:p, i:i + 1], src=s)
    return out


class LoopSizesTest(unittest.TestCase):
    def test_partial_last_tile(self):
        rng = np.random.default_rng(3)
        for n in (4096, 300, 100):
            with self.subTest(n=n):
                a = rng.standard_normal((n, 8)).astype(np.float32)
                np.testing.assert_array_equal(scale_rows(a), 2 * a)

    def test_a_size_that_changes_every_iteration(self):
        a = np.random.default_rng(4).standard_normal((16, 6)).astype(np.float32)
        np.testing.assert_allclose(row_sums_growing(a), np.cumsum(a, axis=1), rtol=1e-6,
                                   atol=1e-6)


if __name__ == "__main__":
    unittest.main()

"""nisa.bn_stats and nisa.bn_aggr under the simulator: ncverify's own kernels, compared with
the model's documented formulas written out in NumPy float32 (bit for bit) and with float64
NumPy mean/variance (closeness), and the page's limits refused at the kernel's line. Run by
`python3 -m ncverify_nki.run` (ctest label `conformance`)."""

import unittest

import numpy as np

import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl
from ncverify_nki.simulate import KernelNotTraced

f32 = np.float32


def golden_stats(x):
    """(count, mean, m2) of the even- then the odd-indexed elements of each row, in fp32 with
    sequential sums (model/semantics/README.md, "Statistics")."""
    rows, n = x.shape
    out = np.zeros((rows, 6), dtype=f32)
    for half in (0, 1):
        part = x[:, half::2].astype(f32)
        count = part.shape[1]
        s = np.zeros(rows, dtype=f32)
        for j in range(count):
            s = (s + part[:, j]).astype(f32)
        mean = (s / f32(count)).astype(f32) if count else np.zeros(rows, dtype=f32)
        m2 = np.zeros(rows, dtype=f32)
        for j in range(count):
            d = (part[:, j] - mean).astype(f32)
            m2 = (m2 + (d * d).astype(f32)).astype(f32)
        out[:, 3 * half] = count
        out[:, 3 * half + 1] = mean
        out[:, 3 * half + 2] = m2
    return out


def golden_aggr(stats):
    rows, n = stats.shape
    count = np.zeros(rows, dtype=f32)
    weighted = np.zeros(rows, dtype=f32)
    for t in range(n // 3):
        count = (count + stats[:, 3 * t]).astype(f32)
        weighted = (weighted + (stats[:, 3 * t] * stats[:, 3 * t + 1]).astype(f32)).astype(f32)
    mean = (weighted / count).astype(f32)
    m2 = np.zeros(rows, dtype=f32)
    for t in range(n // 3):
        d = (stats[:, 3 * t + 1] - mean).astype(f32)
        term = (stats[:, 3 * t] * (d * d).astype(f32)).astype(f32)
        m2 = (m2 + (stats[:, 3 * t + 2] + term).astype(f32)).astype(f32)
    return np.stack([mean, (m2 / count).astype(f32)], axis=1)


@nki.jit
def stats_of(x):
    """bn_stats of a tile with at most 512 elements per partition: the raw [P, 6] output."""
    n, m = x.shape
    out = nl.ndarray((n, 6), dtype=nl.float32, buffer=nl.shared_hbm)
    nl.store(out, value=nisa.bn_stats(nl.load(x)))
    return out


@nki.jit
def mean_var(x):
    """Mean and variance per row of a [P, m] tensor, m a multiple of 512 or less than it."""
    n, m = x.shape
    chunk = min(m, nl.tile_size.bn_stats_fmax)
    out = nl.ndarray((n, 2), dtype=nl.float32, buffer=nl.shared_hbm)
    stats = nl.ndarray((n, 6 * (m // chunk)), dtype=nl.float32, buffer=nl.sbuf)
    t = nl.load(x)
    for c in nl.static_range(m // chunk):
        stats[:, 6 * c:6 * c + 6] = nisa.bn_stats(t[:, chunk * c:chunk * c + chunk])
    nl.store(out, value=nisa.bn_aggr(stats))
    return out


@nki.jit
def stats_with(x, mode):
    n, m = x.shape
    out = nl.ndarray((n, 6), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.load(x)
    if mode == "too_wide":
        r = nisa.bn_stats(t)
    elif mode == "not_triples":
        r = nisa.bn_aggr(t[:, 0:4])
    else:
        r = nisa.bn_stats(t[:, 0:8], axis=1)
    nl.store(out[:, 0:2], value=r[:, 0:2])
    return out


class BnStatsAggr(unittest.TestCase):
    def setUp(self):
        self.rng = np.random.default_rng(6)

    def test_stats_of_even_and_odd_elements_including_an_odd_count(self):
        x = self.rng.uniform(-10.0, 10.0, (128, 37)).astype(f32)
        got = stats_of(x)
        np.testing.assert_array_equal(got, golden_stats(x))
        self.assertEqual(got[0, 0], 19.0)  # elements 0, 2, ..., 36
        self.assertEqual(got[0, 3], 18.0)

    def test_mean_and_variance_of_one_chunk_and_of_two_aggregated(self):
        for width in (200, 1024):
            with self.subTest(width=width):
                x = (self.rng.random((128, width)) * 100).astype(f32)
                got = mean_var(x)
                chunk = min(width, 512)
                stats = np.concatenate([golden_stats(x[:, c:c + chunk])
                                        for c in range(0, width, chunk)], axis=1)
                np.testing.assert_array_equal(got, golden_aggr(stats))
                x64 = x.astype(np.float64)
                np.testing.assert_allclose(got[:, 0], x64.mean(axis=1), rtol=1e-5)
                np.testing.assert_allclose(got[:, 1], x64.var(axis=1), rtol=1e-4)

    def test_limits_are_refused_at_the_kernel_line(self):
        x = np.ones((128, 600), dtype=f32)
        for mode, words in (("too_wide", "at most 512"), ("not_triples", "multiple of 3"),
                            ("axis", "unknown keyword argument 'axis'")):
            with self.subTest(mode=mode):
                with self.assertRaises(KernelNotTraced) as caught:
                    stats_with(x, mode)
                self.assertIn("stats_test.py:", str(caught.exception))
                self.assertIn(words, str(caught.exception))


if __name__ == "__main__":
    unittest.main()

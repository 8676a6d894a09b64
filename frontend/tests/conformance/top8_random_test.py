"""The top-8 family (nisa.max8, nisa.nc_find_index8, nisa.nc_match_replace8) and the random calls
(nl.rand, nisa.dropout, nl.dropout) through the simulator: ncverify's own kernels, each argument
the ISA pages document, NumPy golden values computed here. Random values are the model's own
generator's (model/semantics/random.h): the tests check what the documentation promises of them
(range, drop rate, kept values unscaled), never particular numbers. Run by
`python3 -m ncverify_nki.run` (ctest label `conformance`)."""

import unittest

import numpy as np

import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl
from ncverify_nki.simulate import DynamicCheckFailure, KernelNotTraced


@nki.jit
def top8_all(x, imm):
    """max8 (bf16 output), their uint16 indices, and the row with them replaced by imm (with the
    uint32 indices in dst_idx)."""
    n, m = x.shape
    top = nl.ndarray((n, 8), dtype=nl.bfloat16, buffer=nl.shared_hbm)
    where = nl.ndarray((n, 8), dtype=nl.uint16, buffer=nl.shared_hbm)
    replaced = nl.ndarray((n, m), dtype=x.dtype, buffer=nl.shared_hbm)
    where32 = nl.ndarray((n, 8), dtype=nl.uint32, buffer=nl.shared_hbm)
    t = nl.load(x)
    best = nisa.max8(src=t)
    nl.store(top, value=nisa.max8(src=t, dtype=nl.bfloat16))
    nl.store(where, value=nisa.nc_find_index8(data=t, vals=best, dtype=nl.uint16))
    idx = nl.ndarray((n, 8), dtype=nl.uint32)
    out = nisa.nc_match_replace8(data=t, vals=best, imm=imm, dst_idx=idx)
    nl.store(replaced, value=out)
    nl.store(where32, value=idx)
    return top, where, replaced, where32


@nki.jit
def max8_3d(x):
    """max8 of a [P, 4, 10] tile: the free dims are flattened."""
    n, a, b = x.shape
    out = nl.ndarray((n, 8), dtype=x.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nisa.max8(src=nl.load(x)))
    return out


@nki.jit
def find_given(x, v):
    """nc_find_index8 of values the kernel is given (they may be missing from x)."""
    n, m = x.shape
    out = nl.ndarray((n, 8), dtype=nl.uint32, buffer=nl.shared_hbm)
    nl.store(out, value=nisa.nc_find_index8(data=nl.load(x), vals=nl.load(v)))
    return out


@nki.jit
def max8_of_four(x):
    out = nl.ndarray((x.shape[0], 8), dtype=x.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nisa.max8(src=nl.load(x)))
    return out


@nki.jit
def find_as_float(x):
    out = nl.ndarray((x.shape[0], 8), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.load(x)
    nl.store(out, value=nisa.nc_find_index8(data=t, vals=nisa.max8(src=t), dtype=nl.float32))
    return out


@nki.jit
def seeded(x):
    nl.random_seed(7)
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.load(x))
    return out


@nki.jit
def two_rands():
    """Two nl.rand tiles (fp32 and bf16) of one kernel."""
    a = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    b = nl.ndarray((128, 512), dtype=nl.bfloat16, buffer=nl.shared_hbm)
    nl.store(a, value=nl.rand((128, 512)))
    nl.store(b, value=nl.rand((128, 512), dtype=nl.bfloat16))
    return a, b


@nki.jit
def drop_scalar(x, p):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nisa.dropout(nl.load(x), prob=p))
    return out


@nki.jit
def drop_per_row(x, probs):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nisa.dropout(nl.load(x), nl.load(probs)))
    return out


@nki.jit
def drop_language(x):
    out = nl.ndarray(x.shape, dtype=nl.bfloat16, buffer=nl.shared_hbm)
    nl.store(out, value=nl.dropout(nl.load(x), rate=0.5, dtype=nl.bfloat16))
    return out


def numpy_match_replace(row, vals, imm):
    """The nc_match_replace8 page's NumPy equivalent, one row."""
    row = row.copy()
    idx = np.zeros(len(vals), dtype=np.uint32)
    for j, v in enumerate(vals):
        hits = np.where(row == v)[0]
        if hits.size:
            idx[j] = hits[0]
            row[hits[0]] = imm
    return row, idx


class Top8(unittest.TestCase):
    def test_top8_family_against_numpy(self):
        rng = np.random.default_rng(3)
        # few distinct values: duplicates in every row
        x = (rng.integers(0, 40, size=(64, 300)) * 0.125).astype(np.float32)
        top, where, replaced, where32 = top8_all(x, imm=-1.0)
        best = -np.sort(-x, axis=1)[:, :8]
        np.testing.assert_array_equal(np.asarray(top, dtype=np.float32), best)  # exact in bf16
        self.assertEqual(where.dtype, np.uint16)
        for r in range(64):
            first = [int(np.where(x[r] == v)[0][0]) for v in best[r]]
            np.testing.assert_array_equal(where[r], first)
            want_row, want_idx = numpy_match_replace(x[r], best[r], np.float32(-1.0))
            np.testing.assert_array_equal(replaced[r], want_row)
            np.testing.assert_array_equal(where32[r], want_idx)

    def test_max8_flattens_the_free_dims(self):
        x = np.random.default_rng(5).standard_normal((32, 4, 10)).astype(np.float32)
        got = max8_3d(x)
        np.testing.assert_array_equal(got, -np.sort(-x.reshape(32, 40), axis=1)[:, :8])

    def test_a_value_not_in_the_data_is_an_undefined_result(self):
        x = np.arange(128 * 16, dtype=np.float32).reshape(128, 16)
        v = x[:, :8].copy()
        v[5, 3] = -1.0
        with self.assertRaises(DynamicCheckFailure) as e:
            find_given(x, v)
        self.assertEqual(e.exception.kind, "undefined_result")
        self.assertIn("not in partition 5", str(e.exception))
        np.testing.assert_array_equal(find_given(x, x[:, 8:].copy()),
                                      np.tile(np.arange(8, 16), (128, 1)))

    def test_refusals_name_the_rule(self):
        with self.assertRaises(KernelNotTraced) as e:
            max8_of_four(np.zeros((16, 4), dtype=np.float32))
        self.assertIn("8 to 16384", str(e.exception))
        with self.assertRaises(KernelNotTraced) as e:
            find_as_float(np.zeros((16, 16), dtype=np.float32))
        self.assertIn("uint16 or uint32", str(e.exception))
        with self.assertRaises(KernelNotTraced) as e:
            seeded(np.zeros((16, 16), dtype=np.float32))
        self.assertIn("nl.random_seed", str(e.exception))


class Random(unittest.TestCase):
    def test_rand_is_uniform_in_the_unit_interval(self):
        a, b = two_rands()
        for t in (np.asarray(a, dtype=np.float32), np.asarray(b, dtype=np.float32)):
            self.assertTrue(np.all(t >= 0) and np.all(t <= 1))
            self.assertAlmostEqual(float(t.mean()), 0.5, delta=0.01)
        self.assertLess(np.mean(np.asarray(a) == np.asarray(b, dtype=np.float32)), 0.01)
        a2, _ = two_rands()
        np.testing.assert_array_equal(a, a2)  # the model's generator is reproducible

    def test_dropout_probabilities_and_no_rescaling(self):
        x = (np.random.default_rng(1).random((128, 512)) + 1.0).astype(np.float32)
        np.testing.assert_array_equal(drop_scalar(x, p=0.0), x)
        np.testing.assert_array_equal(drop_scalar(x, p=1.0), np.zeros_like(x))
        got = drop_scalar(x, p=0.3)
        kept = got != 0
        np.testing.assert_array_equal(got[kept], x[kept])  # kept values are not rescaled
        self.assertAlmostEqual(float(1 - kept.mean()), 0.3, delta=0.02)

    def test_dropout_per_partition_probability(self):
        x = np.ones((128, 256), dtype=np.float32)
        probs = np.where(np.arange(128) % 2 == 0, 0.0, 1.0).astype(np.float32).reshape(128, 1)
        got = drop_per_row(x, probs)
        np.testing.assert_array_equal(got[0::2], 1.0)
        np.testing.assert_array_equal(got[1::2], 0.0)

    def test_language_dropout_casts(self):
        x = np.full((128, 512), 3.0, dtype=np.float32)
        got = np.asarray(drop_language(x), dtype=np.float32)
        self.assertTrue(set(np.unique(got)) <= {0.0, 3.0})
        self.assertAlmostEqual(float((got == 0).mean()), 0.5, delta=0.02)


if __name__ == "__main__":
    unittest.main()

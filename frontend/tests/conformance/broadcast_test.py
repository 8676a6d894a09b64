"""ncverify as an NKI simulator: NumPy broadcasting between tiles, across the partition dim (a
tile of one partition meets one of many) and along the free dims, in nl elementwise calls and in
nl.broadcast_to. The kernels are ncverify's own, each checked against NumPy here. Run by
`python3 -m ncverify_nki.run` (ctest label `conformance`)."""

import unittest

import numpy as np

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit(mode="simulation")
def add_row(a, row):
    """[P, F] + [1, F]: the row is added to every partition."""
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.add(nl.load(a), nl.load(row)))
    return out


@nki.jit(mode="simulation")
def scale_by_corner(a, c):
    """[P, F] * [1, 1]."""
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.multiply(nl.load(a), nl.load(c)))
    return out


@nki.jit(mode="simulation")
def column_minus_row(col, row):
    """[P, 1] - [1, F] = [P, F]: the operand order matters."""
    out = nl.ndarray((col.shape[0], row.shape[1]), dtype=col.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.subtract(nl.load(col), nl.load(row)))
    return out


@nki.jit(mode="simulation")
def row_minus_column(row, col):
    """[1, F] - [P, 1] = [P, F]."""
    out = nl.ndarray((col.shape[0], row.shape[1]), dtype=col.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.subtract(nl.load(row), nl.load(col)))
    return out


@nki.jit(mode="simulation")
def spread(a, parts=128):
    """nl.broadcast_to of an SBUF tile: [1, F] -> [parts, F], [P, 1] -> [P, F] and unchanged."""
    f = a.shape[1]
    out = nl.ndarray((parts, f), dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)
    nl.store(out, value=nl.broadcast_to(t, shape=(parts, f)))
    return out


@nki.jit(mode="simulation")
def widen(col, width=48):
    out = nl.ndarray((col.shape[0], width), dtype=col.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.broadcast_to(nl.load(col), shape=(col.shape[0], width)))
    return out


@nki.jit(mode="simulation")
def same_shape(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.broadcast_to(nl.load(a), shape=a.shape))
    return out


@nki.jit(mode="simulation")
def spread_from_hbm(a):
    """nl.broadcast_to of an HBM tensor (implicitly a tile): [1, F] -> [64, F]."""
    out = nl.ndarray((64, a.shape[1]), dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.broadcast_to(a, shape=(64, a.shape[1])))
    return out


class BroadcastTest(unittest.TestCase):
    def setUp(self):
        self.rng = np.random.default_rng(7)

    def values(self, *shape):
        return self.rng.standard_normal(shape).astype(np.float32)

    def test_partition_broadcast_in_elementwise_calls(self):
        a, row, c = self.values(128, 96), self.values(1, 96), self.values(1, 1)
        np.testing.assert_array_equal(add_row(a, row), a + row)
        np.testing.assert_array_equal(scale_by_corner(a, c), a * c)

    def test_both_operands_broadcast_in_order(self):
        col, row = self.values(100, 1), self.values(1, 40)
        np.testing.assert_array_equal(column_minus_row(col, row), col - row)
        np.testing.assert_array_equal(row_minus_column(row, col), row - col)

    def test_broadcast_to(self):
        row = self.values(1, 33)
        np.testing.assert_array_equal(spread(row), np.repeat(row, 128, axis=0))
        np.testing.assert_array_equal(spread(row, parts=5), np.repeat(row, 5, axis=0))
        col = self.values(20, 1)
        np.testing.assert_array_equal(widen(col), np.repeat(col, 48, axis=1))
        a = self.values(16, 8)
        np.testing.assert_array_equal(same_shape(a), a)
        np.testing.assert_array_equal(spread_from_hbm(row), np.repeat(row, 64, axis=0))

    def test_integer_rows(self):
        row = (np.arange(64, dtype=np.int32) * 3 - 50).reshape(1, 64)
        np.testing.assert_array_equal(spread(row), np.repeat(row, 128, axis=0))


if __name__ == "__main__":
    unittest.main()

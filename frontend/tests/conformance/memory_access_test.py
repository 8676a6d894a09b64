"""ncverify as an NKI simulator: the memory accesses of NKI beyond plain slices. Indirect
addressing (rows of an HBM tensor gathered or scattered by indices held on chip), index grids into
rank-1 tensors, the store of a scalar, and DMA transposes. The kernels are ncverify's own, each
checked against a NumPy value computed here. Run by `python3 -m ncverify_nki.run` (ctest label
`conformance`)."""

import unittest

import numpy as np

import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl
from ncverify_nki.simulate import UnwrittenOutput


@nki.jit(mode="simulation")
def gather_rows(table, ids):
    """out[r, :] = table[ids[r], :]: the ids go HBM -> SBUF as an [n, 1] column first."""
    n = ids.shape[0]
    m = table.shape[1]
    out = nl.ndarray((n, m), dtype=table.dtype, buffer=nl.shared_hbm)
    col = nl.load(ids[nl.arange(n)[:, None]])
    rows = nl.load(table[col[nl.arange(n)[:, None], 0], nl.arange(m)[None, :]])
    nl.store(out, value=rows)
    return out


@nki.jit(mode="simulation")
def scatter_rows(values, ids):
    """out = 0 everywhere, then out[ids[r], :] = values[r, :] (a scatter through HBM)."""
    n, m = values.shape
    out = nl.ndarray((128, m), dtype=values.dtype, buffer=nl.shared_hbm)
    nl.store(out, -0.5)
    col = nl.load(ids[nl.arange(n)[:, None]])
    tile = nl.load(values)
    nl.store(out[col, nl.arange(m)[None, :]], value=tile)
    return out


@nki.jit(mode="simulation")
def scatter_only(values, ids):
    """out[ids[r], :] = values[r, :] and nothing else: the other rows of out are never written."""
    n, m = values.shape
    out = nl.ndarray((128, m), dtype=values.dtype, buffer=nl.shared_hbm)
    col = nl.load(ids[nl.arange(n)[:, None]])
    nl.store(out[col, nl.arange(m)[None, :]], value=nl.load(values))
    return out


@nki.jit(mode="simulation")
def every_third_row(table):
    """Rows 0, 3, 6, ... of table, the indices made on chip by iota."""
    m = table.shape[1]
    out = nl.ndarray((32, m), dtype=table.dtype, buffer=nl.shared_hbm)
    idx = nisa.iota(3 * nl.arange(32)[:, None], dtype=np.int32)
    nl.store(out, value=nl.load(table[idx, nl.arange(m)[None, :]]))
    return out


@nki.jit(mode="simulation")
def column_from_vector(v):
    """A rank-1 tensor indexed by nl.arange(n)[:, None] is an [n, 1] tile."""
    n = v.shape[0]
    out = nl.ndarray((n, 1), dtype=v.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.load(v[nl.arange(n)[:, None]]))
    return out


@nki.jit(mode="simulation")
def transposed(a):
    """nisa.dma_transpose of an HBM tensor: [m, n] -> [n, m] (rank 2) or [a, b, c] -> [c, b, a]."""
    t = nisa.dma_transpose(a)
    out = nl.ndarray(t.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=t)
    return out


@nki.jit(mode="simulation")
def transposed_to_bf16(a):
    """The transposing DMA's cast (dtype=)."""
    t = nisa.dma_transpose(a, dtype=nl.bfloat16)
    out = nl.ndarray(t.shape, dtype=nl.bfloat16, buffer=nl.shared_hbm)
    nl.store(out, value=t)
    return out


@nki.jit(mode="simulation")
def element_by_element(x):
    """out = x with out[i, j] = 10 * i + j written one element at a time in rows 1..5 (rows the
    engines cannot start at alone) and row 0, then added to x."""
    out = nl.ndarray((32, 4), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.zeros((32, 4), dtype=nl.float32)
    for i in nl.static_range(6):
        for j in nl.static_range(4):
            t[i, j] = 10 * i + j
    nl.store(out, value=nl.add(t, nl.load(x)))
    return out


class MemoryAccessTest(unittest.TestCase):
    def test_gather_rows(self):
        rng = np.random.default_rng(1)
        table = rng.standard_normal((200, 96)).astype(np.float32)
        ids = rng.integers(0, 200, size=64).astype(np.int32)  # with repeats
        np.testing.assert_array_equal(gather_rows(table, ids), table[ids])

    def test_gather_rows_uint32_ids(self):
        table = np.arange(40 * 8, dtype=np.float32).reshape(40, 8)
        ids = np.array([39, 0, 17, 17], dtype=np.uint32)
        np.testing.assert_array_equal(gather_rows(table, ids), table[ids])

    def test_scatter_rows(self):
        rng = np.random.default_rng(2)
        values = rng.standard_normal((48, 64)).astype(np.float32)
        ids = rng.permutation(128)[:48].astype(np.int32)
        want = np.full((128, 64), -0.5, dtype=np.float32)
        want[ids] = values
        np.testing.assert_array_equal(scatter_rows(values, ids), want)

    def test_a_partly_written_output_comes_back_with_a_warning(self):
        values = np.arange(2 * 16, dtype=np.float32).reshape(2, 16)
        ids = np.array([5, 100], dtype=np.int32)
        with self.assertWarns(UnwrittenOutput) as cm:
            out = scatter_only(values, ids)
        self.assertEqual((cm.warning.output, cm.warning.count), ("out", 126 * 16))
        np.testing.assert_array_equal(out[ids], values)
        others = np.delete(out, ids, axis=0)
        self.assertTrue(np.isnan(others).all())  # never a made-up value a test could match

    def test_iota_indices(self):
        table = np.arange(100 * 16, dtype=np.float32).reshape(100, 16)
        np.testing.assert_array_equal(every_third_row(table), table[3 * np.arange(32)])

    def test_an_index_beyond_the_table_raises_index_error(self):
        table = np.zeros((50, 8), dtype=np.float32)
        ids = np.array([0, 49, 50], dtype=np.int32)  # 50 is one past the last row
        with self.assertRaises(IndexError) as cm:
            gather_rows(table, ids)
        # As the NKI simulator raises it: a plain IndexError in NumPy's words about the flattened
        # table (row 50's first element is element 400 of 400), the check's fields kept on it.
        e = cm.exception
        self.assertIs(type(e), IndexError)
        self.assertEqual(str(e), "index 400 is out of bounds for axis 0 with size 400")
        self.assertEqual(e.kind, "indirect_range")
        self.assertIn("dma_copy", e.instruction)
        self.assertEqual(e.file, "memory_access_test.py")
        load_line = [n for n, text in enumerate(open(__file__), 1)
                     if "rows = nl.load(table[col[" in text][0]
        self.assertEqual(e.line, load_line)
        self.assertIn("offset 50 at row 2", e.message)
        with self.assertRaises(IndexError):
            gather_rows(table, np.array([-1], dtype=np.int32))

    def test_element_assignment_in_any_partition(self):
        x = np.random.default_rng(5).standard_normal((32, 4)).astype(np.float32)
        want = np.zeros((32, 4), np.float32)
        for i in range(6):
            for j in range(4):
                want[i, j] = 10 * i + j
        np.testing.assert_array_equal(element_by_element(x), want + x)

    def test_rank1_index_grid(self):
        v = np.arange(7, dtype=np.int32) * 5
        np.testing.assert_array_equal(column_from_vector(v), v[:, None])

    def test_dma_transpose(self):
        rng = np.random.default_rng(3)
        a = rng.standard_normal((96, 40)).astype(np.float32)
        np.testing.assert_array_equal(transposed(a), a.T)
        b = rng.standard_normal((6, 5, 4)).astype(np.float32)
        np.testing.assert_array_equal(transposed(b), np.transpose(b, (2, 1, 0)))

    def test_dma_transpose_casts(self):
        a = np.array([[1.0, 1.00390625], [3.0, -2.0]], dtype=np.float32)  # 1 + 2^-8 rounds to 1
        out = transposed_to_bf16(a)
        np.testing.assert_array_equal(np.asarray(out, dtype=np.float32),
                                      np.array([[1.0, 3.0], [1.0, -2.0]], dtype=np.float32))


if __name__ == "__main__":
    unittest.main()

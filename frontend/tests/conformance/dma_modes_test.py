"""nisa.dma_copy's run-time modes under the simulator: oob_mode.skip (a row of an indirect access
whose index falls outside the tensor is left alone, in a gather and in a scatter),
dst_rmw_op=np.add (the destination rows accumulate the source in float32, rounded to the
destination's dtype) and nisa.dma_transpose of an SBUF tile, with what each refuses at the
kernel's line (and a mask= written with Python's `and`, which NKI does not support). ncverify's own kernels; the
expected arrays are computed here with NumPy. Run by `python3 -m ncverify_nki.run` (ctest label
`conformance`)."""

import unittest

import numpy as np

import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl
from ncverify_nki.simulate import KernelNotTraced

FILL = -7.0  # what rows nobody transfers hold


@nki.jit(mode="simulation")
def pick_rows(table, ids):
    """out[r] = table[ids[r]] where ids[r] names a row of table; FILL elsewhere."""
    n = ids.shape[0]
    m = table.shape[1]
    out = nl.ndarray((n, m), dtype=table.dtype, buffer=nl.shared_hbm)
    col = nl.load(ids[nl.arange(n)[:, None]])
    rows = nisa.memset(shape=(n, m), value=FILL, dtype=table.dtype)
    ir, ic = nl.mgrid[0:n, 0:m]
    nisa.dma_copy(dst=rows[ir, ic], src=table[col, ic], oob_mode=nisa.oob_mode.skip)
    nl.store(out, value=rows)
    return out


@nki.jit(mode="simulation")
def place_rows(values, ids, height):
    """out (height rows) = FILL, then out[ids[r]] = values[r] for the ids inside out."""
    n, m = values.shape
    out = nl.ndarray((height, m), dtype=values.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nisa.memset(shape=(height, m), value=FILL, dtype=values.dtype))
    col = nl.load(ids[nl.arange(n)[:, None]])
    tile = nl.load(values)
    nisa.dma_copy(dst=out[col, nl.arange(m)[None, :]], src=tile, oob_mode=nisa.oob_mode.skip)
    return out


@nki.jit(mode="simulation")
def add_rows_into(base, values, ids):
    """out = base, then out[ids[r]] += values[r] (repeated ids add up)."""
    n, m = values.shape
    out = nl.ndarray(base.shape, dtype=base.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.load(base))
    col = nl.load(ids[nl.arange(n)[:, None]])
    tile = nl.load(values)
    nisa.dma_copy(dst=out[col, nl.arange(m)[None, :]], src=tile, dst_rmw_op=np.add)
    return out


@nki.jit(mode="simulation")
def add_rows_into_bf16(base, values, ids):
    """add_rows_into with a bfloat16 destination: base is rounded to it, each sum is too."""
    n, m = values.shape
    out = nl.ndarray(base.shape, dtype=nl.bfloat16, buffer=nl.shared_hbm)
    nl.store(out, value=nl.load(base))
    col = nl.load(ids[nl.arange(n)[:, None]])
    nisa.dma_copy(dst=out[col, nl.arange(m)[None, :]], src=nl.load(values), dst_rmw_op=np.add)
    return out


@nki.jit(mode="simulation")
def accumulate_on_chip(a, b):
    """An SBUF destination accumulates too: out = a + b through dst_rmw_op (nl.add)."""
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    acc = nl.load(a)
    nisa.dma_copy(dst=acc, src=b, dst_rmw_op=nl.add)
    nl.store(out, value=acc)
    return out


@nki.jit(mode="simulation")
def modes_refused(table, ids, mode):
    n = ids.shape[0]
    m = table.shape[1]
    out = nl.ndarray((n, m), dtype=table.dtype, buffer=nl.shared_hbm)
    col = nl.load(ids[nl.arange(n)[:, None]])
    rows = nisa.memset(shape=(n, m), value=0.0, dtype=table.dtype)
    ir, ic = nl.mgrid[0:n, 0:m]
    if mode == "multiply":
        nisa.dma_copy(dst=rows[ir, ic], src=table[col, ic], dst_rmw_op=np.multiply)
    elif mode == "rmw_and_skip":
        nisa.dma_copy(dst=rows[ir, ic], src=table[col, ic], dst_rmw_op=np.add,
                      oob_mode=nisa.oob_mode.skip)
    elif mode == "skip_direct":
        nisa.dma_copy(dst=rows, src=table[0:n, :], oob_mode=nisa.oob_mode.skip)
    nl.store(out, value=rows)
    return out


@nki.jit(mode="simulation")
def transpose_in_sbuf(a):
    """nisa.dma_transpose of a tile already in SBUF: [m, n] -> [n, m], [a, b, c] -> [c, b, a]."""
    t = nisa.dma_transpose(nl.load(a))
    out = nl.ndarray(t.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=t)
    return out


@nki.jit(mode="simulation", platform_target="trn2")
def transpose_hwdge(a):
    """The hardware-DGE transpose (trn2): the page's constraints on the source apply."""
    t = nisa.dma_transpose(nl.load(a), dge_mode=nisa.dge_mode.hwdge)
    out = nl.ndarray(t.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=t)
    return out


@nki.jit(mode="simulation")
def masked_with_and(a):
    """A mask written with Python's `and` (NKI documents &): refused with that reason."""
    n, m = a.shape
    out = nl.ndarray((n, m), dtype=a.dtype, buffer=nl.shared_hbm)
    ix, iy = nl.mgrid[0:n, 0:m]
    t = nl.load(a)
    nl.store(out, value=nl.exp(t, mask=(ix < n // 2 and iy < m // 2)))
    return out


def to_bf16(x):
    """float32 -> the nearest bfloat16 (ties to even), as float32 (finite values)."""
    bits = np.asarray(x, dtype=np.float32).view(np.uint32)
    bits = (bits + (((bits >> 16) & 1) + 0x7FFF)) & 0xFFFF0000
    return bits.astype(np.uint32).view(np.float32)


class OobSkipTest(unittest.TestCase):
    def test_gather_leaves_rows_whose_index_is_outside(self):
        rng = np.random.default_rng(11)
        table = rng.standard_normal((40, 24)).astype(np.float32)
        ids = np.array([3, 40, -1, 39, 0, 1000, 17, -40], dtype=np.int32)
        want = np.full((len(ids), 24), FILL, dtype=np.float32)
        inside = (ids >= 0) & (ids < len(table))
        want[inside] = table[ids[inside]]
        np.testing.assert_array_equal(pick_rows(table, ids), want)

    def test_uint32_indices_beyond_int32(self):
        table = np.arange(10 * 4, dtype=np.float32).reshape(10, 4)
        ids = np.array([9, 4294967295, 2147483648, 0], dtype=np.uint32)
        want = np.full((4, 4), FILL, dtype=np.float32)
        want[0], want[3] = table[9], table[0]
        np.testing.assert_array_equal(pick_rows(table, ids), want)

    def test_scatter_writes_only_rows_inside(self):
        rng = np.random.default_rng(12)
        values = rng.standard_normal((6, 16)).astype(np.float32)
        ids = np.array([0, 30, 5, -2, 29, 31], dtype=np.int32)
        want = np.full((30, 16), FILL, dtype=np.float32)
        for r, i in enumerate(ids):
            if 0 <= i < 30:
                want[i] = values[r]
        np.testing.assert_array_equal(place_rows(values, ids, 30), want)

    def test_without_skip_an_index_outside_raises_index_error(self):
        # oob_mode.error (here with dst_rmw_op, which allows no other mode): row 12 of a 12-row
        # tensor is NumPy's "index 96 ... size 96" on the flattened tensor, as the NKI simulator
        # words it; the interpreter's fields ride along.
        table = np.zeros((12, 8), dtype=np.float32)
        with self.assertRaises(IndexError) as caught:
            add_rows_into(table, np.ones((2, 8), dtype=np.float32),
                          np.array([1, 12], dtype=np.int32))
        e = caught.exception
        self.assertIs(type(e), IndexError)
        self.assertEqual(str(e), "index 96 is out of bounds for axis 0 with size 96")
        self.assertIn("dst_rmw=add", e.instruction)
        self.assertEqual(e.file, "dma_modes_test.py")
        self.assertIn("offset 12 at row 1", e.message)


class DstRmwTest(unittest.TestCase):
    def test_repeated_rows_add_up_in_float32(self):
        rng = np.random.default_rng(13)
        base = rng.standard_normal((20, 32)).astype(np.float32)
        values = rng.standard_normal((8, 32)).astype(np.float32)
        ids = np.array([4, 19, 4, 0, 7, 4, 19, 11], dtype=np.int32)
        want = base.copy()
        for r, i in enumerate(ids):  # one float32 rounding per row, in row order
            want[i] = (want[i] + values[r]).astype(np.float32)
        np.testing.assert_array_equal(add_rows_into(base, values, ids), want)

    def test_bfloat16_destination_rounds_each_sum(self):
        rng = np.random.default_rng(14)
        base = rng.uniform(-4, 4, (16, 64)).astype(np.float32)
        values = rng.uniform(-1e-2, 1e-2, (4, 64)).astype(np.float32)
        ids = np.array([2, 2, 9, 15], dtype=np.int32)
        want = to_bf16(base)
        for r, i in enumerate(ids):  # float32 sum, rounded to bfloat16, row after row
            want[i] = to_bf16(want[i] + values[r])
        got = np.asarray(add_rows_into_bf16(base, values, ids), dtype=np.float32)
        np.testing.assert_array_equal(got, want)
        self.assertFalse(np.array_equal(want, to_bf16(base)))  # some sums do move

    def test_sbuf_destination(self):
        rng = np.random.default_rng(15)
        a = rng.standard_normal((128, 40)).astype(np.float32)
        b = rng.standard_normal((128, 40)).astype(np.float32)
        np.testing.assert_array_equal(accumulate_on_chip(a, b), (a + b).astype(np.float32))


class TransposeFromSbufTest(unittest.TestCase):
    def test_two_and_three_dims(self):
        rng = np.random.default_rng(16)
        a = rng.standard_normal((16, 100)).astype(np.float32)
        np.testing.assert_array_equal(transpose_in_sbuf(a), a.T)
        b = rng.standard_normal((8, 3, 20)).astype(np.float32)
        np.testing.assert_array_equal(transpose_in_sbuf(b), np.transpose(b, (2, 1, 0)))

    def test_hardware_dge_constraints(self):
        a = (np.arange(16 * 64) % 251).astype(np.float16).reshape(16, 64)
        np.testing.assert_array_equal(transpose_hwdge(a), a.T)
        for bad, words in ((a.astype(np.float32), "2-byte dtype"),
                           (a[:8], "src.shape[0] == 16")):
            with self.subTest(words=words):
                with self.assertRaises(KernelNotTraced) as caught:
                    transpose_hwdge(np.ascontiguousarray(bad))
                self.assertIn("dma_modes_test.py:", str(caught.exception))
                self.assertIn(words, str(caught.exception))


class RefusalTest(unittest.TestCase):
    def test_refusals_name_the_argument_at_the_kernel_line(self):
        table = np.zeros((16, 8), dtype=np.float32)
        ids = np.arange(4, dtype=np.int32)
        for mode, words in (("multiply", "dst_rmw_op=multiply is not modelled"),
                            ("rmw_and_skip", "oob_mode='skip' is not modelled"),
                            ("skip_direct", "this DMA has none")):
            with self.subTest(mode=mode):
                with self.assertRaises(KernelNotTraced) as caught:
                    modes_refused(table, ids, mode)
                self.assertIn("dma_modes_test.py:", str(caught.exception))
                self.assertIn(words, str(caught.exception))

    def test_a_mask_joined_with_python_and_is_refused(self):
        with self.assertRaises(KernelNotTraced) as caught:
            masked_with_and(np.zeros((16, 16), dtype=np.float32))
        self.assertIn("dma_modes_test.py:", str(caught.exception))
        self.assertIn("does not support `and` for masks", str(caught.exception))


if __name__ == "__main__":
    unittest.main()

"""ncverify as an NKI simulator, through every way a test file calls a kernel: the kernels here
are ncverify's own (own words), each checked against a NumPy value computed in the test. Run by
`python3 -m ncverify_nki.run` (ctest label `conformance`)."""

import unittest
import warnings

import numpy as np

import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl
from ncverify_nki.simulate import (CapacitySpill, DynamicCheckFailure, KernelNotTraced,
                                   OutOfBoundsAccess, UndefinedValuesUnused)

ROWS = 128


@nki.jit(mode="simulation")
def scale_and_shift(x, y, scale=2.0):
    """out = x * scale + y, tile by tile over the rows."""
    n, m = x.shape
    out = nl.ndarray((n, m), dtype=x.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(n // ROWS):
        a = nl.load(x[i * ROWS:(i + 1) * ROWS, :])
        b = nl.load(y[i * ROWS:(i + 1) * ROWS, :])
        nl.store(out[i * ROWS:(i + 1) * ROWS, :], value=nl.add(nl.multiply(a, scale), b))
    return out


@nki.jit
def contract(lhs_t, rhs):
    """out = lhs_t.T @ rhs, accumulated in PSUM over 128-row chunks of the contraction."""
    k, m = lhs_t.shape
    _, n = rhs.shape
    out = nl.ndarray((m, n), dtype=nl.float32, buffer=nl.shared_hbm)
    acc = nl.zeros((m, n), dtype=nl.float32, buffer=nl.psum)
    for c in nl.affine_range(k // ROWS):
        a = nl.load(lhs_t[c * ROWS:(c + 1) * ROWS, :])
        b = nl.load(rhs[c * ROWS:(c + 1) * ROWS, :])
        acc += nisa.nc_matmul(stationary=a, moving=b)
    nl.store(out, value=nl.copy(acc, dtype=nl.float32))
    return out


@nki.jit
def to_bf16(x):
    """The input rounded to bf16 in an HBM output of dtype bfloat16."""
    n, m = x.shape
    out = nl.ndarray((n, m), dtype=nl.bfloat16, buffer=nl.shared_hbm)
    t = nl.load(x)
    nl.store(out, value=nl.copy(t, dtype=nl.bfloat16))
    return out


@nki.jit
def per_program_rows(x):
    """Each program of a 1-D launch grid negates its own 128-row block."""
    n, m = x.shape
    out = nl.ndarray((n, m), dtype=x.dtype, buffer=nl.shared_hbm)
    p = nl.program_id(0)
    t = nl.load(x[p * ROWS:(p + 1) * ROWS, :])
    nl.store(out[p * ROWS:(p + 1) * ROWS, :], value=nl.negative(t))
    return out


@nki.jit
def into_argument(x, result):
    """Writes its result into the array it is given (no return value)."""
    t = nl.load(x)
    nl.store(result, value=nl.exp(t))


@nki.jit
def scale_rows_in_place(x, factor):
    """x[i] *= factor, program i of the grid on its own 128-row block (reads and writes x)."""
    p = nl.program_id(0)
    t = nl.load(x[p * ROWS:(p + 1) * ROWS, :])
    nl.store(x[p * ROWS:(p + 1) * ROWS, :], value=nl.multiply(t, factor))


@nki.jit
def reads_past_the_end(x):
    """Reads four 128-row blocks of x whatever its size: the last block is out of bounds when x
    has fewer than 512 rows."""
    n, m = x.shape
    out = nl.ndarray((ROWS, m), dtype=x.dtype, buffer=nl.shared_hbm)
    acc = nl.zeros((ROWS, m), dtype=nl.float32, buffer=nl.sbuf)
    for blk in nl.sequential_range(4):
        t = nl.load(x[nl.ds(blk * ROWS, ROWS), :])
        acc[...] = nl.add(acc, t)
    nl.store(out, value=acc)
    return out


@nki.jit
def sorts(x):
    """A call the model does not have (nisa.scalar_tensor_tensor: not modelled)."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    nl.store(out, value=nisa.scalar_tensor_tensor(data=t, op0=np.add, operand0=1.0,
                                                  op1=np.multiply, operand1=t))
    return out


@nki.jit
def two_wide_rows(x, y):
    """out = x[:, :8] + y[:, :8] with both inputs loaded whole first: 2 x 120,000 bytes per
    partition live together, more than trn1's usable SBUF (180,224), while every instruction fits:
    the compiler spills."""
    out = nl.ndarray((ROWS, 8), dtype=nl.float32, buffer=nl.shared_hbm)
    a = nl.load(x)
    b = nl.load(y)
    nl.store(out, value=nl.add(a[:, 0:8], b[:, 0:8]))
    return out


@nki.jit
def reciprocal_rows(x, stored):
    """1/x on the Scalar engine over all 128 rows, the first `stored` rows stored: 1/0 is outside
    reciprocal's documented range (its output undefined), which matters only where it is stored."""
    out = nl.ndarray((stored, x.shape[1]), dtype=nl.float32, buffer=nl.shared_hbm)
    a = nl.load(x)
    r = nisa.activation(op=nl.reciprocal, data=a)
    nl.store(out, value=r[0:stored, :])
    return out


def bf16_round(a):
    """float32 -> the nearest bf16 value (ties to even), as float32."""
    bits = a.astype(np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16
    return rounded.astype(np.uint32).view(np.float32)


@nki.jit
def loads_too_many_rows(x):
    """nl.load of a whole 256-row input: a tile of 256 partitions, which no NeuronCore has."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.exp(nl.load(x)))
    return out


class SimulatedCalls(unittest.TestCase):
    def setUp(self):
        self.rng = np.random.default_rng(7)

    def data(self, *shape):
        return self.rng.standard_normal(shape).astype(np.float32)

    def test_jit_call_with_a_keyword(self):
        x, y = self.data(256, 96), self.data(256, 96)
        out = scale_and_shift(x, y, scale=0.5)
        self.assertIsInstance(out, np.ndarray)
        self.assertEqual(out.dtype, np.float32)
        np.testing.assert_allclose(out, x * 0.5 + y, rtol=1e-6, atol=1e-6)

    def test_live_buffers_over_sbuf_warn_of_spills_and_keep_their_values(self):
        x, y = self.data(ROWS, 30000), self.data(ROWS, 30000)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = nki.simulate_kernel(two_wide_rows, x, y)
        np.testing.assert_array_equal(out, x[:, :8] + y[:, :8])
        spills = [w for w in caught if issubclass(w.category, CapacitySpill)]
        self.assertEqual(len(spills), 1, [str(w.message) for w in caught])
        self.assertIn("live SBUF buffers need", str(spills[0].message))

    def test_an_undefined_activation_value_warns_unless_an_output_depends_on_it(self):
        x = self.data(ROWS, 16) + 4.0
        x[64:, :] = 0.0
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = nki.simulate_kernel(reciprocal_rows, x, 64)
        np.testing.assert_array_equal(out, np.float32(1.0) / x[:64, :])
        notes = [w for w in caught if issubclass(w.category, UndefinedValuesUnused)]
        self.assertEqual(len(notes), 1, [str(w.message) for w in caught])
        self.assertIn("reciprocal", str(notes[0].message))
        with self.assertRaises(DynamicCheckFailure) as failed:
            nki.simulate_kernel(reciprocal_rows, x, ROWS)
        self.assertIn("undefined_result", str(failed.exception))

    def test_simulate_kernel_and_simulate(self):
        lhs_t, rhs = self.data(256, 64), self.data(256, 128)
        golden = lhs_t.T.astype(np.float64) @ rhs.astype(np.float64)
        a = nki.simulate_kernel(contract, lhs_t, rhs)
        b = nki.simulate(contract)(lhs_t, rhs)
        np.testing.assert_allclose(a, golden, rtol=1e-4, atol=1e-4)
        np.testing.assert_array_equal(a, b)

    def test_bf16_output(self):
        x = self.data(128, 64) * 100
        out = to_bf16(x)
        self.assertEqual(out.shape, (128, 64))
        # bf16 comes back as ml_dtypes.bfloat16 when installed, else float32 holding the values
        self.assertIn(out.dtype.name, ("bfloat16", "float32"))
        np.testing.assert_array_equal(out.astype(np.float32), bf16_round(x))
        self.assertFalse(np.array_equal(bf16_round(x), x))  # the rounding is visible

    def test_launch_grid(self):
        x = self.data(512, 32)
        out = per_program_rows[4](x)
        np.testing.assert_array_equal(out, -x)
        # the grid is the one given at the call: eight programs cover a twice larger input
        y = self.data(1024, 32)
        np.testing.assert_array_equal(per_program_rows[8](y), -y)

    def test_output_argument_updated_in_place(self):
        x = self.data(128, 16)
        result = np.zeros_like(x)
        self.assertIsNone(into_argument(x, result))
        np.testing.assert_allclose(result, np.exp(x), rtol=1e-5)

    def test_argument_updated_in_place_keeps_the_values_it_was_given(self):
        x = self.data(256, 16)
        before = x.copy()
        self.assertIsNone(scale_rows_in_place[2](x, 3.0))
        np.testing.assert_array_equal(x, before * 3.0)

    def test_dynamic_check_failure_names_instruction_line_and_indices(self):
        x = self.data(3 * ROWS, 8)
        with self.assertRaises(DynamicCheckFailure) as caught:
            reads_past_the_end(x)
        e = caught.exception
        self.assertIsInstance(e, OutOfBoundsAccess)
        self.assertIsInstance(e, IndexError)
        self.assertIsInstance(e, AssertionError)  # as the NKI simulator's constraint checks
        self.assertEqual(e.kind, "out_of_bounds")
        self.assertIn("dma_copy", e.instruction)
        self.assertEqual(e.file, "simulate_calls_test.py")
        load_line = [n for n, text in enumerate(open(__file__), 1)
                     if "t = nl.load(x[nl.ds(blk * ROWS" in text][0]
        self.assertEqual(e.line, load_line)
        self.assertEqual(e.loop_indices, {"blk": 3})
        self.assertIn("simulate_calls_test.py:%d" % load_line, str(e))
        # the same kernel on a large enough input passes every check
        y = self.data(4 * ROWS, 8)
        np.testing.assert_allclose(reads_past_the_end(y), y.reshape(4, ROWS, 8).sum(0),
                                   rtol=1e-5, atol=1e-5)

    def test_untraceable_kernel_is_refused_at_its_line(self):
        with self.assertRaises(KernelNotTraced) as caught:
            sorts(self.data(128, 8))
        self.assertIn("simulate_calls_test.py:", str(caught.exception))
        self.assertIn("scalar_tensor_tensor", str(caught.exception))

    def test_a_tile_over_128_partitions_is_refused_at_its_line(self):
        with self.assertRaisesRegex(KernelNotTraced, r"simulate_calls_test.py:\d+: a tile of 256 "
                                    "partitions: an on-chip tile has at most 128"):
            loads_too_many_rows(self.data(256, 8))


if __name__ == "__main__":
    unittest.main()

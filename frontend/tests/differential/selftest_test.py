"""The differential harness can fail: each test breaks one thing on purpose (a front-end mapping
monkeypatched to swap two operands or drop a flag, a wrong NumPy reference, a case that does
not pass an argument its coverage row claims, a call that is not refused) and expects the
harness to report it, naming the case and the seed that replays it. Run by
`python3 -m ncverify_nki.run` (ctest label `frontend`)."""

import contextlib
import unittest

import numpy as np

import legacy_elementwise_test as elementwise
import neuronxcc.nki.isa as nisa
from diffharness import Mismatch, run_case, to_bf16
from ncverify_nki import ops


@contextlib.contextmanager
def patched(module, name, replacement):
    original = getattr(module, name)
    setattr(module, name, replacement(original))
    try:
        yield
    finally:
        setattr(module, name, original)


def swap_subtract(binary):
    """ops.binary with the operands of a tile-tile subtract swapped (a mistrace)."""
    def wrong(op, a, b, *args, **kw):
        if op == "subtract" and not ops.is_scalar(a) and not ops.is_scalar(b):
            a, b = b, a
        return binary(op, a, b, *args, **kw)
    return wrong


def drop_reverse0(tensor_scalar):
    """ops.tensor_scalar that ignores reverse0 (a mistrace)."""
    def wrong(data, op0, operand0, reverse0=False, *args, **kw):
        return tensor_scalar(data, op0, operand0, False, *args, **kw)
    return wrong


class HarnessFails(unittest.TestCase):
    def test_bf16_rounding_is_to_nearest_even(self):
        """The references' bf16 rounding: ties to even, overflow to infinity, NaN kept."""
        x = np.array([1 + 2 ** -8, 1 + 3 * 2 ** -8, 1 + 2 ** -8 + 2 ** -20, -(1 + 2 ** -8),
                      3.4028235e38, np.nan, 2 ** -130], dtype=np.float32)
        want = np.array([1.0, 1 + 2 ** -6, 1 + 2 ** -7, -1.0, np.inf, np.nan, 2 ** -130],
                        dtype=np.float32)
        np.testing.assert_array_equal(to_bf16(x), want)

    def test_swapped_subtract_operands_are_reported(self):
        with patched(ops, "binary", swap_subtract):
            with self.assertRaises(Mismatch) as cm:
                elementwise.TensorTensor("test_tt_ops").test_tt_ops()
        msg = str(cm.exception)
        self.assertIn("tt_ops", msg)
        self.assertIn("subtract", msg)
        self.assertIn("NCVERIFY_DIFF_SEED=", msg)  # the replay command
        # and without the patch the same case passes
        elementwise.TensorTensor("test_tt_ops").test_tt_ops()

    def test_dropped_reverse0_is_reported(self):
        with patched(ops, "tensor_scalar", drop_reverse0):
            with self.assertRaises(Mismatch) as cm:
                elementwise.TensorScalar("test_ts_two_ops").test_ts_two_ops()
        self.assertIn("reverse0", str(cm.exception))

    def test_wrong_reference_is_reported(self):
        """A NumPy reference with the operands of subtract swapped fails against the
        simulator's (correct) output."""
        def body(c):
            a = c.floats(c.shape())
            b = c.floats(a.shape)
            got, = elementwise.run(lambda ta, tb: [nisa.tensor_tensor(ta, tb, np.subtract)],
                                   a, b)
            c.check("tensor_tensor(subtract) against b - a", got, b - a)
        with self.assertRaises(Mismatch) as cm:
            run_case("selftest_wrong_reference", body)
        self.assertIn("seed", str(cm.exception))

    def test_tolerance_is_not_a_blank_cheque(self):
        """A result one bf16 step off fails an exact comparison."""
        def body(c):
            a = c.floats((4, 8), 1, 2)
            got, = elementwise.run(lambda ta: [nisa.tensor_copy(ta)], a)
            c.check("copy against a + 2**-7", got, a + np.float32(2 ** -7))
        with self.assertRaises(Mismatch):
            run_case("selftest_tolerance", body)

    def test_unexercised_claim_is_reported(self):
        """A case that does not pass an argument its coverage row claims fails."""
        def body(c):  # claims tensor_tensor's dtype and engine, passes neither
            a = c.floats((4, 8))
            elementwise.run(lambda ta: [nisa.tensor_tensor(ta, ta, np.add)], a)
        with self.assertRaises(AssertionError) as cm:
            run_case("tt_dtype_engine", body)
        self.assertIn("coverage_table says it exercises", str(cm.exception))

    def test_a_default_value_is_not_coverage(self):
        """Passing an argument with its default value (engine=unknown_engine, dtype=None)
        does not count as exercising it."""
        def body(c):
            a = c.floats((4, 8))
            elementwise.run(lambda ta: [nisa.tensor_tensor(ta, ta, np.add, dtype=None,
                                                           engine=nisa.unknown_engine)], a)
        with self.assertRaises(AssertionError):
            run_case("tt_dtype_engine", body)

    def test_a_call_that_is_not_refused_is_reported(self):
        def body(c):
            a = c.floats((4, 8))
            call = lambda t: nisa.tensor_tensor(t, t, np.add, engine=nisa.vector_engine)  # noqa
            c.refused(elementwise.tiles_kernel, (a,), {"body": lambda t: [call(t)]},
                      "nisa.tensor_tensor", "engine", call)
        with self.assertRaises(Mismatch) as cm:
            run_case("selftest_not_refused", body)
        self.assertIn("was not refused", str(cm.exception))


if __name__ == "__main__":
    unittest.main()

"""The scan instructions under the simulator (nisa.tensor_tensor_scan,
nisa.tensor_scalar_cumulative): ncverify's own kernels, each compared with a NumPy scan written
out here from the documented recurrences, and every argument either exercised or refused at the
kernel's line. Run by `python3 -m ncverify_nki.run` (ctest label `conformance`)."""

import unittest

import numpy as np

import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl
from ncverify_nki.simulate import KernelNotTraced


def golden_tt_scan(a, b, init, op0, op1, reverse0=False, reverse1=False, out_dtype=np.float32):
    """acc = init; acc = op1(op0(a, acc), b) per element (reverse0: op0(acc, a); reverse1:
    op1(b, x)), all in float32; each output is acc converted to out_dtype."""
    a = a.astype(np.float32)
    b = b.astype(np.float32)
    out = np.zeros(a.shape, dtype=np.float32)
    acc = np.broadcast_to(np.asarray(init, dtype=np.float32).reshape(-1), (a.shape[0],)).copy()
    for i in range(a.shape[1]):
        x = op0(acc, a[:, i]) if reverse0 else op0(a[:, i], acc)
        acc = (op1(b[:, i], x) if reverse1 else op1(x, b[:, i])).astype(np.float32)
        out[:, i] = acc
    return out.astype(out_dtype)


def to_bf16(x):
    """float32 -> the nearest bfloat16 (ties to even), held in float32 (finite values)."""
    bits = np.asarray(x, dtype=np.float32).view(np.uint32)
    bits = (bits + (((bits >> 16) & 1) + 0x7FFF)) & 0xFFFF0000
    return bits.astype(np.uint32).view(np.float32)


def golden_cumulative(src, op0, imm0, op1, start):
    """reg = start; reg = op1(op0(src, imm0), reg) per element; out = reg (float32)."""
    src = src.astype(np.float32)
    reg = np.broadcast_to(np.asarray(start, dtype=np.float32).reshape(-1),
                          (src.shape[0],)).copy()
    imm0 = np.asarray(imm0, dtype=np.float32).reshape(-1)
    out = np.zeros(src.shape, dtype=np.float32)
    for i in range(src.shape[1]):
        reg = op1(op0(src[:, i], imm0), reg).astype(np.float32)
        out[:, i] = reg
    return out


@nki.jit
def linear_recurrence(a, b):
    """h[i] = a[i] * h[i-1] + b[i], h[-1] = 0, in two halves chained through the last column."""
    n, m = a.shape
    out = nl.ndarray((n, m), dtype=nl.float32, buffer=nl.shared_hbm)
    ta, tb = nl.load(a), nl.load(b)
    h = nl.ndarray((n, m), dtype=nl.float32, buffer=nl.sbuf)
    half = m // 2
    h[:, 0:half] = nisa.tensor_tensor_scan(ta[:, 0:half], tb[:, 0:half], initial=0.0,
                                           op0=np.multiply, op1=np.add)
    h[:, half:m] = nisa.tensor_tensor_scan(ta[:, half:m], tb[:, half:m],
                                           initial=h[:, half - 1], op0=np.multiply, op1=np.add)
    nl.store(out, value=h)
    return out


@nki.jit
def reversed_scan(a, b, init):
    """acc = b - max(acc, a) per element (reverse0 and reverse1 both set), into bfloat16."""
    n, m = a.shape
    out = nl.ndarray((n, m), dtype=nl.bfloat16, buffer=nl.shared_hbm)
    ta, tb, ti = nl.load(a), nl.load(b), nl.load(init)
    r = nisa.tensor_tensor_scan(ta, tb, ti, nl.maximum, nl.subtract, True, True,
                                dtype=nl.bfloat16)
    nl.store(out, value=r)
    return out


@nki.jit
def bf16_scan(a, b):
    """A running sum of bf16 inputs (rounded from the fp32 arguments) with a bf16 result (the
    inputs' dtype): the running value stays fp32."""
    n, m = a.shape
    out = nl.ndarray((n, m), dtype=nl.bfloat16, buffer=nl.shared_hbm)
    ta = nl.copy(nl.load(a), dtype=nl.bfloat16)
    tb = nl.copy(nl.load(b), dtype=nl.bfloat16)
    r = nisa.tensor_tensor_scan(ta, tb, 1.0, nl.add, nl.add)
    nl.store(out, value=r)
    return out


@nki.jit
def scan_with(a, b, mode):
    """Calls that must be refused (or rejected), one per mode."""
    n, m = a.shape
    out = nl.ndarray((n, m), dtype=nl.float32, buffer=nl.shared_hbm)
    ta, tb = nl.load(a), nl.load(b)
    if mode == "bitwise":
        r = nisa.tensor_tensor_scan(ta, tb, 0.0, nl.bitwise_and, nl.add)
    elif mode == "both_psum":
        pa = nl.zeros((n, m), dtype=nl.float32, buffer=nl.psum)
        pb = nl.zeros((n, m), dtype=nl.float32, buffer=nl.psum)
        r = nisa.tensor_tensor_scan(pa, pb, 0.0, nl.multiply, nl.add)
    elif mode == "wide_initial":
        r = nisa.tensor_tensor_scan(ta, tb, tb, nl.multiply, nl.add)
    else:
        r = nisa.tensor_tensor_scan(ta, tb, 0.0, nl.multiply, nl.add, engine=nisa.vector_engine)
    nl.store(out, value=r)
    return out


@nki.jit
def cumulative(src, imm0, imm1, op0, op1, cmd, chained_cmd=None):
    """tensor_scalar_cumulative into an SBUF tile; with chained_cmd, a second call continues
    from the accumulator the first left."""
    n, m = src.shape
    out = nl.ndarray((n, m), dtype=nl.float32, buffer=nl.shared_hbm)
    s = nl.load(src)
    i0 = imm0 if isinstance(imm0, float) else nl.load(imm0)
    i1 = imm1 if imm1 is None or isinstance(imm1, float) else nl.load(imm1)
    d = nl.ndarray((n, m), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_scalar_cumulative(dst=d, src=s, op0=op0, op1=op1, imm0=i0, imm1=i1,
                                  reduce_cmd=cmd)
    if chained_cmd is not None:
        nisa.tensor_scalar_cumulative(dst=d, src=s, op0=op0, op1=op1, imm0=i0, imm1=i1,
                                      reduce_cmd=chained_cmd)
    nl.store(out, value=d)
    return out


@nki.jit
def cumulative_after_other_rows(src):
    """Two row blocks: the second call's reduce continues each partition's own register."""
    n, m = src.shape
    out = nl.ndarray((n, m), dtype=nl.float32, buffer=nl.shared_hbm)
    d = nl.ndarray((n, m), dtype=nl.float32, buffer=nl.sbuf)
    s = nl.load(src)
    half = m // 2
    nisa.tensor_scalar_cumulative(dst=d[:, 0:half], src=s[:, 0:half], op0=nl.multiply,
                                  op1=nl.add, imm0=2.0, reduce_cmd=nisa.reduce_cmd.reset_reduce)
    nisa.tensor_scalar_cumulative(dst=d[:, half:m], src=s[:, half:m], op0=nl.multiply,
                                  op1=nl.add, imm0=2.0, reduce_cmd=nisa.reduce_cmd.reduce)
    nl.store(out, value=d)
    return out


@nki.jit
def optional_start(src, start=None):
    """A running sum from an optional [P, 1] argument, chosen with `if start:` (the truth of the
    argument's handle, not of its values)."""
    n, m = src.shape
    out = nl.ndarray((n, m), dtype=nl.float32, buffer=nl.shared_hbm)
    s = nl.load(src)
    d = nl.ndarray((n, m), dtype=nl.float32, buffer=nl.sbuf)
    if start:
        nisa.tensor_scalar_cumulative(dst=d, src=s, op0=nl.add, op1=nl.add, imm0=0.0,
                                      imm1=nl.load(start), reduce_cmd=nisa.reduce_cmd.load_reduce)
    else:
        nisa.tensor_scalar_cumulative(dst=d, src=s, op0=nl.add, op1=nl.add, imm0=0.0)
    nl.store(out, value=d)
    return out


@nki.jit
def branch_on_values(src):
    s = nl.load(src)
    out = nl.ndarray(src.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    nl.store(out, value=nl.exp(s) if s else s)
    return out


@nki.jit
def cumulative_with(src, mode):
    n, m = src.shape
    out = nl.ndarray((n, m), dtype=nl.float32, buffer=nl.shared_hbm)
    s = nl.load(src)
    d = nl.ndarray((n, m), dtype=nl.float32, buffer=nl.sbuf)
    if mode == "idle":
        nisa.tensor_scalar_cumulative(dst=d, src=s, op0=nl.add, op1=nl.add, imm0=0.0,
                                      reduce_cmd=nisa.reduce_cmd.idle)
    elif mode == "divide":
        nisa.tensor_scalar_cumulative(dst=d, src=s, op0=nl.add, op1=nl.divide, imm0=0.0)
    elif mode == "load_without_imm1":
        nisa.tensor_scalar_cumulative(dst=d, src=s, op0=nl.add, op1=nl.add, imm0=0.0,
                                      reduce_cmd=nisa.reduce_cmd.load_reduce)
    elif mode == "bf16_imm0":
        i0 = nl.copy(s[:, 0:1], dtype=nl.bfloat16)
        nisa.tensor_scalar_cumulative(dst=d, src=s, op0=nl.add, op1=nl.add, imm0=i0)
    elif mode == "name":
        nisa.tensor_scalar_cumulative(dst=d, src=s, op0=nl.add, op1=nl.add, imm0=0.0,
                                      name="scan")
    else:
        nl.store(out, value=nisa.activation(nl.exp, s, reduce_cmd=nisa.reduce_cmd.load_reduce))
        return out
    nl.store(out, value=d)
    return out


class TensorTensorScan(unittest.TestCase):
    def setUp(self):
        self.rng = np.random.default_rng(44)

    def test_linear_recurrence_chained_through_a_column(self):
        a = self.rng.uniform(0.5, 1.0, (128, 256)).astype(np.float32)
        b = self.rng.uniform(-1.0, 1.0, (128, 256)).astype(np.float32)
        got = linear_recurrence(a, b)
        want = golden_tt_scan(a, b, 0.0, np.multiply, np.add)
        np.testing.assert_array_equal(got, want)  # the same fp32 operations in the same order

    def test_reversed_operands_and_a_column_initial_value(self):
        a = self.rng.uniform(-2.0, 2.0, (64, 40)).astype(np.float32)
        b = self.rng.uniform(-2.0, 2.0, (64, 40)).astype(np.float32)
        init = self.rng.uniform(-1.0, 1.0, (64, 1)).astype(np.float32)
        got = reversed_scan(a, b, init)
        want = golden_tt_scan(a, b, init, np.maximum, np.subtract, True, True)
        np.testing.assert_array_equal(np.asarray(got, dtype=np.float32), to_bf16(want))

    def test_the_running_value_is_fp32_not_the_rounded_output(self):
        # From 1.0, + 2^-9 per step: a bf16 running value would stay at 1.0 (the increment is a
        # quarter of a bf16 ulp there); the fp32 one reaches 1 + 64 * 2^-9 = 1.125.
        a = np.full((32, 64), 2.0 ** -9, dtype=np.float32)
        b = np.zeros((32, 64), dtype=np.float32)
        got = np.asarray(bf16_scan(a, b), dtype=np.float32)
        np.testing.assert_array_equal(got, to_bf16(golden_tt_scan(a, b, 1.0, np.add, np.add)))
        self.assertEqual(got[0, -1], np.float32(1.125))

    def test_refusals_name_the_argument_at_the_kernel_line(self):
        a = np.ones((128, 16), dtype=np.float32)
        for mode, words in (("bitwise", "op0=bitwise_and"),
                            ("both_psum", "cannot both be in PSUM"),
                            ("wide_initial", "initial= must have one element per partition"),
                            ("engine", "unknown keyword argument 'engine'")):
            with self.subTest(mode=mode):
                with self.assertRaises(KernelNotTraced) as caught:
                    scan_with(a, a, mode)
                self.assertIn("scans_test.py:", str(caught.exception))
                self.assertIn(words, str(caught.exception))


class TensorScalarCumulative(unittest.TestCase):
    def setUp(self):
        self.rng = np.random.default_rng(4)
        self.src = self.rng.uniform(-1.0, 1.0, (128, 48)).astype(np.float32)

    def check(self, got, want):
        np.testing.assert_array_equal(np.asarray(got), want)

    def test_reset_reduce_starts_from_each_operators_identity(self):
        for op1, np_op in ((nl.add, np.add), (nl.subtract, np.subtract),
                           (nl.multiply, np.multiply), (nl.maximum, np.maximum),
                           (nl.minimum, np.minimum)):
            with self.subTest(op1=np_op.__name__):
                start = {np.add: 0.0, np.subtract: 0.0, np.multiply: 1.0,
                         np.maximum: -np.inf, np.minimum: np.inf}[np_op]
                got = cumulative(self.src, 0.5, None, nl.multiply, op1,
                                 nisa.reduce_cmd.reset_reduce)
                self.check(got, golden_cumulative(self.src, np.multiply, 0.5, np_op, start))

    def test_column_imm0_and_load_reduce_from_a_column(self):
        imm0 = self.rng.uniform(-1.0, 1.0, (128, 1)).astype(np.float32)
        imm1 = self.rng.uniform(-1.0, 1.0, (128, 1)).astype(np.float32)
        got = cumulative(self.src, imm0, imm1, nl.subtract, nl.add, nisa.reduce_cmd.load_reduce)
        self.check(got, golden_cumulative(self.src, np.subtract, imm0, np.add, imm1))

    def test_reduce_continues_the_previous_instructions_register(self):
        first = golden_cumulative(self.src, np.add, 0.25, np.add, 3.0)
        got = cumulative(self.src, 0.25, 3.0, nl.add, nl.add, nisa.reduce_cmd.load_reduce,
                         nisa.reduce_cmd.reduce)
        self.check(got, golden_cumulative(self.src, np.add, 0.25, np.add, first[:, -1]))
        # imm1 is read by load_reduce only: a reset_reduce then reduce chain ignores it.
        first = golden_cumulative(self.src, np.add, 0.25, np.add, 0.0)
        got = cumulative(self.src, 0.25, 3.0, nl.add, nl.add, nisa.reduce_cmd.reset_reduce,
                         nisa.reduce_cmd.reduce)
        self.check(got, golden_cumulative(self.src, np.add, 0.25, np.add, first[:, -1]))

    def test_reduce_across_column_blocks_of_one_tile(self):
        got = cumulative_after_other_rows(self.src)
        self.check(got, golden_cumulative(self.src, np.multiply, 2.0, np.add, 0.0))

    def test_an_optional_argument_is_tested_by_its_handle_a_tile_is_not(self):
        start = self.rng.uniform(-1.0, 1.0, (128, 1)).astype(np.float32)
        self.check(optional_start(self.src, start),
                   golden_cumulative(self.src, np.add, 0.0, np.add, start))
        self.check(optional_start(self.src), golden_cumulative(self.src, np.add, 0.0, np.add, 0.0))
        with self.assertRaises(KernelNotTraced) as caught:
            branch_on_values(self.src)
        self.assertIn("no truth value", str(caught.exception))

    def test_refusals_name_the_argument_at_the_kernel_line(self):
        for mode, words in (("idle", "reduce_cmd='idle' is not modelled"),
                            ("divide", "op1=divide"),
                            ("load_without_imm1", "imm1 is missing"),
                            ("bf16_imm0", "imm0= must be float32"),
                            ("name", "unknown keyword argument 'name'"),
                            ("activation", "reduce_cmd='load_reduce' is not modelled")):
            with self.subTest(mode=mode):
                with self.assertRaises(KernelNotTraced) as caught:
                    cumulative_with(self.src, mode)
                self.assertIn("scans_test.py:", str(caught.exception))
                self.assertIn(words, str(caught.exception))


if __name__ == "__main__":
    unittest.main()

"""nisa.tensor_partition_reduce, nisa.select_reduce, nisa.sequence_bounds and nisa.range_select
under the simulator: ncverify's own kernels, each compared with NumPy values computed here from
the pages' descriptions, the accumulator carried between calls, the dynamic checks the pages
imply, and every argument either exercised or refused at the kernel's line. Run by
`python3 -m ncverify_nki.run` (ctest label `conformance`)."""

import unittest

import numpy as np

import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl
from ncverify_nki.simulate import DynamicCheckFailure, KernelNotTraced

FP32_MIN = np.finfo(np.float32).min


def to_bf16(x):
    """float32 -> the nearest bfloat16 (ties to even), held in float32 (finite values; the
    largest ones round to inf)."""
    bits = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    bits = ((bits + (((bits >> 16) & 1) + 0x7FFF)) & 0xFFFF0000).astype(np.uint32)
    return bits.view(np.float32)


# --- tensor_partition_reduce -------------------------------------------------------------------

@nki.jit
def column_sums(x):
    """Sum and max over the partitions of a [P, 4, 8] tile, and the or of int32 flags."""
    p, a, b = x.shape
    sums = nl.ndarray((1, a, b), dtype=nl.float32, buffer=nl.shared_hbm)
    maxes = nl.ndarray((1, a, b), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.load(x)
    nl.store(sums, value=nisa.tensor_partition_reduce(np.add, t))
    nl.store(maxes, value=nisa.tensor_partition_reduce(nl.maximum, t))
    return sums, maxes


@nki.jit
def any_flag(flags):
    p, n = flags.shape
    out = nl.ndarray((1, n), dtype=nl.int32, buffer=nl.shared_hbm)
    nl.store(out, value=nisa.tensor_partition_reduce(np.bitwise_or, nl.load(flags)))
    return out


@nki.jit
def partition_reduce_with(x, mode):
    out = nl.ndarray((1, x.shape[1]), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.load(x)
    if mode == "multiply":
        r = nisa.tensor_partition_reduce(np.multiply, t)
    elif mode == "bitwise_float":
        r = nisa.tensor_partition_reduce(np.bitwise_and, t)
    else:  # psum
        ps = nl.ndarray(t.shape, dtype=nl.float32, buffer=nl.psum)
        ps[...] = nl.copy(t)
        r = nisa.tensor_partition_reduce(np.add, ps)
    nl.store(out, value=r)
    return out


class TensorPartitionReduce(unittest.TestCase):
    def test_sum_and_max_over_partitions(self):
        x = np.random.default_rng(1).uniform(-4.0, 4.0, (128, 4, 8)).astype(np.float32)
        sums, maxes = column_sums(x)
        # The sum's order over partitions is not documented: compared within the bound of any
        # order of 128 fp32 additions (gamma_127 times the sum of magnitudes).
        bound = 127 * 2.0 ** -24 / (1 - 127 * 2.0 ** -24) * np.abs(x).sum(axis=0, keepdims=True)
        exact = x.astype(np.float64).sum(axis=0, keepdims=True)
        self.assertTrue(np.all(np.abs(sums - exact) <= bound))
        np.testing.assert_array_equal(maxes, x.max(axis=0, keepdims=True))

    def test_bitwise_or_of_integer_flags(self):
        flags = np.zeros((64, 16), dtype=np.int32)
        for col in range(16):
            flags[(col * 5) % 64, col] = 1 << (col % 7)
        flags[3, 2] |= 8
        np.testing.assert_array_equal(any_flag(flags), np.bitwise_or.reduce(flags, axis=0)[None])

    def test_refusals_name_the_argument_at_the_kernel_line(self):
        x = np.ones((32, 8), dtype=np.float32)
        for mode, words in (("multiply", "op=multiply"),
                            ("bitwise_float", "works on integer tiles"),
                            ("psum", "cannot read PSUM")):
            with self.subTest(mode=mode):
                with self.assertRaises(KernelNotTraced) as caught:
                    partition_reduce_with(x, mode)
                self.assertIn("selects_test.py:", str(caught.exception))
                self.assertIn(words, str(caught.exception))


# --- select_reduce -----------------------------------------------------------------------------

@nki.jit
def masked_max(pred, x, fill, reverse):
    """Select per element, the row max of the selection in two calls (reset_reduce, then reduce
    over the second half into reduce_res); the selection is written as bfloat16."""
    p, n = x.shape
    out = nl.ndarray((p, n), dtype=nl.bfloat16, buffer=nl.shared_hbm)
    mx = nl.ndarray((p, 1), dtype=nl.float32, buffer=nl.shared_hbm)
    tp, tx, tf = nl.load(pred), nl.load(x), nl.load(fill)
    d = nl.ndarray((p, n), dtype=nl.bfloat16, buffer=nl.sbuf)
    r = nl.ndarray((p, 1), dtype=nl.float32, buffer=nl.sbuf)
    h = n // 2
    nisa.select_reduce(dst=d[:, 0:h], predicate=tp[:, 0:h], on_true=tx[:, 0:h], on_false=tf,
                       reduce_cmd=nisa.reduce_cmd.reset_reduce, reverse_pred=reverse)
    nisa.select_reduce(dst=d[:, h:n], predicate=tp[:, h:n], on_true=tx[:, h:n], on_false=tf,
                       reduce_cmd=nisa.reduce_cmd.reduce, reduce_res=r, reduce_op=nl.max,
                       reverse_pred=reverse)
    nl.store(out, value=d)
    nl.store(mx, value=r)
    return out, mx


@nki.jit
def select_with(pred, x, mode):
    p, n = x.shape
    out = nl.ndarray((p, n), dtype=nl.float32, buffer=nl.shared_hbm)
    tp, tx = nl.load(pred), nl.load(x)
    d = nl.ndarray((p, n), dtype=nl.float32, buffer=nl.sbuf)
    r = nl.ndarray((p, 1), dtype=nl.float32, buffer=nl.sbuf)
    if mode == "idle_then_reduce":
        nisa.select_reduce(dst=d, predicate=tp, on_true=tx, on_false=0.0)
        nisa.select_reduce(dst=d, predicate=tp, on_true=tx, on_false=0.0,
                           reduce_cmd=nisa.reduce_cmd.reduce, reduce_res=r)
    elif mode == "reduce_res_idle":
        nisa.select_reduce(dst=d, predicate=tp, on_true=tx, on_false=0.0, reduce_res=r)
    elif mode == "reduce_op":
        nisa.select_reduce(dst=d, predicate=tp, on_true=tx, on_false=0.0, reduce_op=np.add,
                           reduce_cmd=nisa.reduce_cmd.reset_reduce, reduce_res=r)
    elif mode == "reset":
        nisa.select_reduce(dst=d, predicate=tp, on_true=tx, on_false=0.0,
                           reduce_cmd=nisa.reduce_cmd.reset)
    elif mode == "float_predicate":
        nisa.select_reduce(dst=d, predicate=tx, on_true=tx, on_false=0.0)
    elif mode == "wide_on_false":
        nisa.select_reduce(dst=d, predicate=tp, on_true=tx, on_false=tx)
    else:  # dtype
        nisa.select_reduce(dst=d, predicate=tp, on_true=tx, on_false=0.0, dtype=nl.bfloat16)
    nl.store(out, value=d)
    return out


class SelectReduce(unittest.TestCase):
    def setUp(self):
        rng = np.random.default_rng(7)
        self.pred = rng.integers(0, 2, (128, 96)).astype(np.uint8)
        self.x = rng.uniform(-100.0, 100.0, (128, 96)).astype(np.float32)
        self.fill = rng.uniform(-100.0, 100.0, (128, 1)).astype(np.float32)

    def test_selection_and_its_row_max_across_two_calls(self):
        for reverse in (False, True):
            with self.subTest(reverse=reverse):
                out, mx = masked_max(self.pred, self.x, self.fill, reverse)
                keep = (self.pred != 0) != reverse
                want = np.where(keep, self.x, self.fill)
                np.testing.assert_array_equal(np.asarray(out, dtype=np.float32), to_bf16(want))
                # The max is taken over the fp32 values, before the bf16 conversion.
                np.testing.assert_array_equal(mx, want.max(axis=1, keepdims=True))

    def test_reduce_after_an_idle_call_is_a_dynamic_check(self):
        with self.assertRaises(DynamicCheckFailure) as caught:
            select_with(self.pred, self.x, "idle_then_reduce")
        self.assertIn("left undefined", str(caught.exception))

    def test_refusals_name_the_argument_at_the_kernel_line(self):
        for mode, words in (("reduce_res_idle", "reduce_cmd=idle does not reduce"),
                            ("reduce_op", "reduce_op=add is not modelled"),
                            ("reset", "reduce_cmd='reset' is not modelled"),
                            ("float_predicate", "8- or 16-bit integer"),
                            ("wide_on_false", "on_false= must have one element per partition"),
                            ("dtype", "dtype=")):
            with self.subTest(mode=mode):
                with self.assertRaises(KernelNotTraced) as caught:
                    select_with(self.pred, self.x, mode)
                self.assertIn("selects_test.py:", str(caught.exception))
                self.assertIn(words, str(caught.exception))


# --- sequence_bounds ---------------------------------------------------------------------------

@nki.jit
def bounds_of(ids, out_dtype):
    n = ids.shape[1]
    out = nl.ndarray((1, 2, n), dtype=out_dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nisa.sequence_bounds(segment_ids=nl.load(ids), dtype=out_dtype))
    return out


@nki.jit
def bounds_with(ids, mode):
    n = ids.shape[1]
    out = nl.ndarray((1, 2, n), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.load(ids)
    if mode == "partitions":
        wide = nl.ndarray((2, n), dtype=nl.float32, buffer=nl.sbuf)
        wide[0:1, :] = nl.copy(t)
        wide[1:2, :] = nl.copy(t)
        r = nisa.sequence_bounds(segment_ids=wide)
    else:  # dtype
        r = nisa.sequence_bounds(segment_ids=t, dtype=nl.bfloat16)
    nl.store(out, value=r)
    return out


def golden_bounds(ids):
    """Each element's [start, end) of its run of equal ids; padding (id 0) gets (n, -1)."""
    n = len(ids)
    start, end = np.zeros(n), np.zeros(n)
    for i in range(n):
        if ids[i] == 0:
            start[i], end[i] = n, -1
            continue
        lo = i
        while lo > 0 and ids[lo - 1] == ids[i]:
            lo -= 1
        hi = i + 1
        while hi < n and ids[hi] == ids[i]:
            hi += 1
        start[i], end[i] = lo, hi
    return np.stack([start, end])[None]


class SequenceBounds(unittest.TestCase):
    def test_runs_of_ids_and_padding(self):
        ids = np.array([[4, 4, 0, 0, 7, 2, 2, 2, 0, 9, 9, 1, 1, 1, 1, 0]], dtype=np.float32)
        for out_dtype, np_dtype in ((nl.float32, np.float32), (nl.int32, np.int32)):
            with self.subTest(dtype=np_dtype.__name__):
                got = bounds_of(ids, out_dtype)
                self.assertEqual(got.dtype, np_dtype)
                np.testing.assert_array_equal(got, golden_bounds(ids[0]).astype(np_dtype))
        ints = np.array([[3, 3, 3, 0, 5, 5]], dtype=np.int32)
        np.testing.assert_array_equal(bounds_of(ints, nl.int32),
                                      golden_bounds(ints[0]).astype(np.int32))

    def test_an_id_that_is_not_a_non_negative_integer_is_a_dynamic_check(self):
        for bad in (-2.0, 0.5):
            with self.subTest(bad=bad):
                ids = np.array([[1, 1, bad, 2]], dtype=np.float32)
                with self.assertRaises(DynamicCheckFailure) as caught:
                    bounds_of(ids, nl.float32)
                self.assertIn("non-negative integer ids", str(caught.exception))

    def test_refusals_name_the_argument_at_the_kernel_line(self):
        ids = np.ones((1, 8), dtype=np.float32)
        for mode, words in (("partitions", "partition dimension must be 1"),
                            ("dtype", "dtype is bf16")):
            with self.subTest(mode=mode):
                with self.assertRaises(KernelNotTraced) as caught:
                    bounds_with(ids, mode)
                self.assertIn("selects_test.py:", str(caught.exception))
                self.assertIn(words, str(caught.exception))


# --- range_select ------------------------------------------------------------------------------

@nki.jit(platform_target="trn2")
def band_max(x, lo, hi, start, out_dtype):
    """Keep the columns whose index + start lies in [lo, hi) per row; the row max of the kept
    values, continued over two calls (the second one's start follows the first's columns)."""
    p, n = x.shape
    out = nl.ndarray((p, n), dtype=out_dtype, buffer=nl.shared_hbm)
    mx = nl.ndarray((p, 1), dtype=nl.float32, buffer=nl.shared_hbm)
    tx, tl, th = nl.load(x), nl.load(lo), nl.load(hi)
    r = nl.ndarray((p, 1), dtype=nl.float32, buffer=nl.sbuf)
    d = nl.ndarray((p, n), dtype=out_dtype, buffer=nl.sbuf)
    h = n // 2
    d[:, 0:h] = nisa.range_select(on_true_tile=tx[:, 0:h], comp_op0=np.greater_equal,
                                  comp_op1=np.less, bound0=tl, bound1=th,
                                  reduce_cmd=nisa.reduce_cmd.reset_reduce, range_start=start,
                                  dtype=out_dtype)
    d[:, h:n] = nisa.range_select(on_true_tile=tx[:, h:n], comp_op0=nl.greater_equal,
                                  comp_op1=nl.less, bound0=tl, bound1=th,
                                  reduce_cmd=nisa.reduce_cmd.reduce, reduce_res=r,
                                  range_start=start + h, dtype=out_dtype)
    nl.store(out, value=d)
    nl.store(mx, value=r)
    return out, mx


@nki.jit
def range_on_trn1(x, lo):
    out = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    t, tl = nl.load(x), nl.load(lo)
    nl.store(out, value=nisa.range_select(on_true_tile=t, comp_op0=np.equal, comp_op1=np.equal,
                                          bound0=tl, bound1=tl))
    return out


@nki.jit(platform_target="trn2")
def range_with(x, lo, mode):
    out = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    t, tl = nl.load(x), nl.load(lo)
    kw = dict(on_true_tile=t, comp_op0=np.greater_equal, comp_op1=np.less_equal, bound0=tl,
              bound1=tl)
    if mode == "not_equal":
        kw["comp_op1"] = np.not_equal
    elif mode == "fill":
        kw["on_false_value"] = 0.0
    elif mode == "reduce_op":
        kw["reduce_op"] = np.min
    elif mode == "load_reduce":
        kw["reduce_cmd"] = nisa.reduce_cmd.load_reduce
    else:  # far
        kw["range_start"] = 2 ** 24
    nl.store(out, value=nisa.range_select(**kw))
    return out


class RangeSelect(unittest.TestCase):
    def setUp(self):
        rng = np.random.default_rng(3)
        self.x = rng.uniform(-10.0, 10.0, (128, 96)).astype(np.float32)
        self.lo = rng.integers(0, 60, (128, 1)).astype(np.float32)
        self.hi = self.lo + rng.integers(0, 40, (128, 1)).astype(np.float32)

    def golden(self, start):
        idx = (start + np.arange(self.x.shape[1], dtype=np.float32))[None, :]
        keep = (idx >= self.lo) & (idx < self.hi)
        return np.where(keep, self.x, FP32_MIN).astype(np.float32)

    def test_band_and_row_max_in_fp32_and_bf16(self):
        want = self.golden(20)
        for out_dtype in (nl.float32, nl.bfloat16):
            with self.subTest(dtype=str(out_dtype)):
                out, mx = band_max(self.x, self.lo, self.hi, 20, out_dtype)
                got = np.asarray(out, dtype=np.float32)
                if out_dtype is nl.float32:
                    np.testing.assert_array_equal(got, want)
                else:
                    # fp32's lowest value becomes -inf in bf16, as the page says.
                    self.assertTrue(np.all(np.isneginf(got[want == FP32_MIN])))
                    np.testing.assert_array_equal(got[want != FP32_MIN],
                                                  to_bf16(want[want != FP32_MIN]))
                # The accumulator keeps fp32: an empty row's max is fp32's lowest value.
                np.testing.assert_array_equal(mx, want.max(axis=1, keepdims=True))

    def test_needs_neuroncore_v3(self):
        with self.assertRaises(KernelNotTraced) as caught:
            range_on_trn1(self.x, self.lo)
        self.assertIn("NeuronCore-v3", str(caught.exception))

    def test_an_index_beyond_2_to_the_24_is_a_dynamic_check(self):
        with self.assertRaises(DynamicCheckFailure) as caught:
            range_with(self.x, self.lo, "far")
        self.assertIn("2^24", str(caught.exception))

    def test_refusals_name_the_argument_at_the_kernel_line(self):
        for mode, words in (("not_equal", "comp_op1=not_equal"),
                            ("fill", "on_false_value=0.0 is not modelled"),
                            ("reduce_op", "only max is supported"),
                            ("load_reduce", "reduce_cmd='load_reduce' is not modelled")):
            with self.subTest(mode=mode):
                with self.assertRaises(KernelNotTraced) as caught:
                    range_with(self.x, self.lo, mode)
                self.assertIn("selects_test.py:", str(caught.exception))
                self.assertIn(words, str(caught.exception))


if __name__ == "__main__":
    unittest.main()

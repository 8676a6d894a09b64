"""Today's `nki.isa` (NKI 0.6, destination-first) under the simulator: the scans
(tensor_tensor_scan, tensor_scalar_cumulative), the statistics (bn_stats, bn_aggr), the reduction
across partitions (tensor_partition_reduce), the selections (select_reduce, range_select) and
sequence_bounds. ncverify's own kernels, compared with NumPy values computed here from the 0.6
pages, and every argument exercised or refused at the kernel's line. Run by
`python3 -m ncverify_nki.run` (ctest label `conformance`)."""

import unittest

import numpy as np

import nki
import nki.isa as nisa
import nki.language as nl
from newapi_tiles import on_chip, to_hbm
from targets import default, on
from ncverify_nki.simulate import DynamicCheckFailure, KernelNotTraced

# Written for trn1 unless a kernel names its generation (targets.py).
default("trn1")

FP32_MIN = np.finfo(np.float32).min




def refused(test, kernel, args, words):
    with test.assertRaises(KernelNotTraced) as caught:
        kernel(*args)
    test.assertIn("newapi_scans_selects_test.py:", str(caught.exception))
    test.assertIn(words, str(caught.exception))


# --- scans -------------------------------------------------------------------------------------

def golden_tt_scan(a, b, init, op0, op1):
    acc = np.broadcast_to(np.asarray(init, np.float32).reshape(-1), (a.shape[0],)).copy()
    out = np.zeros(a.shape, np.float32)
    for i in range(a.shape[1]):
        acc = op1(op0(a[:, i], acc), b[:, i]).astype(np.float32)
        out[:, i] = acc
    return out


@nki.jit
def scans(a, b, init, mode):
    ta, tb, ti = on_chip(a), on_chip(b), on_chip(init)
    r = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.sbuf)
    if mode == "tt_scan":
        nisa.tensor_tensor_scan(r, ta, tb, ti, nl.multiply, nl.add)
    elif mode == "tt_scan_reversed":
        nisa.tensor_tensor_scan(dst=r, data0=ta, data1=tb, initial=0.0, op0=nl.subtract,
                                op1=nl.subtract, reverse0=True, reverse1=True, name="s")
    elif mode == "cumulative":
        nisa.tensor_scalar_cumulative(r, ta, nl.multiply, nl.add, 2.0)
    elif mode == "cumulative_load":
        nisa.tensor_scalar_cumulative(r, ta, nl.add, nl.maximum, 0.0, ti,
                                      nisa.reduce_cmd.load_reduce, name="c")
    elif mode == "tt_scan_both_psum":
        p = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.psum)
        nisa.tensor_copy(p, ta)
        nisa.tensor_tensor_scan(r, p, p, 0.0, nl.add, nl.add)
    elif mode == "cumulative_idle":
        nisa.tensor_scalar_cumulative(r, ta, nl.add, nl.add, 0.0,
                                      reduce_cmd=nisa.reduce_cmd.idle)
    else:  # dst in HBM
        out = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.shared_hbm)
        nisa.tensor_tensor_scan(out, ta, tb, 0.0, nl.add, nl.add)
        return out
    return to_hbm(r)


class Scans(unittest.TestCase):
    def setUp(self):
        rng = np.random.default_rng(1)
        self.a = rng.uniform(0.5, 1, (64, 24)).astype(np.float32)
        self.b = rng.uniform(-1, 1, (64, 24)).astype(np.float32)
        self.i = rng.uniform(-1, 1, (64, 1)).astype(np.float32)

    def test_tensor_tensor_scan(self):
        np.testing.assert_array_equal(scans(self.a, self.b, self.i, "tt_scan"),
                                      golden_tt_scan(self.a, self.b, self.i, np.multiply, np.add))
        want = golden_tt_scan(self.a, self.b, 0.0, lambda x, acc: acc - x,
                              lambda x, b: b - x)
        np.testing.assert_array_equal(scans(self.a, self.b, self.i, "tt_scan_reversed"), want)

    def test_tensor_scalar_cumulative(self):
        np.testing.assert_array_equal(scans(self.a, self.b, self.i, "cumulative"),
                                      np.cumsum(self.a * np.float32(2), axis=1,
                                                dtype=np.float32))
        want = np.maximum.accumulate(np.concatenate([self.i, self.a], axis=1), axis=1)[:, 1:]
        np.testing.assert_array_equal(scans(self.a, self.b, self.i, "cumulative_load"), want)

    def test_refusals(self):
        for mode, words in (("tt_scan_both_psum", "cannot both be in PSUM"),
                            ("cumulative_idle", "reduce_cmd='idle' is not modelled"),
                            ("hbm_dst", "dst is in HBM")):
            with self.subTest(mode=mode):
                refused(self, scans, (self.a, self.b, self.i, mode), words)


# --- bn_stats / bn_aggr, tensor_partition_reduce -------------------------------------------------

@nki.jit
def stats(x, mode):
    t = on_chip(x)
    p, n = x.shape
    if mode == "bn":
        half = n // 2
        st = nl.ndarray((p, 12), dtype=nl.float32, buffer=nl.sbuf)
        nisa.bn_stats(st[:, 0:6], t[:, 0:half])
        nisa.bn_stats(dst=st[:, 6:12], data=t[:, half:n], name="second")
        mv = nl.ndarray((p, 2), dtype=nl.float32, buffer=nl.sbuf)
        nisa.bn_aggr(mv, st)
        return to_hbm(st), to_hbm(mv)
    if mode == "wide_stats":
        st = nl.ndarray((p, 6), dtype=nl.float32, buffer=nl.sbuf)
        nisa.bn_stats(st, t)
    else:  # narrow dst
        st = nl.ndarray((p, 4), dtype=nl.float32, buffer=nl.sbuf)
        nisa.bn_stats(st, t[:, 0:8])
    return to_hbm(st), to_hbm(st)


@nki.jit
def partition_reduce(x, flags, mode):
    t = on_chip(x)
    p, n = x.shape
    r = nl.ndarray((1, n), dtype=nl.float32, buffer=nl.sbuf)
    if mode == "add":
        nisa.tensor_partition_reduce(r, nl.add, t)
    elif mode == "max":
        nisa.tensor_partition_reduce(dst=r, op=nl.maximum, data=t, name="m")
    elif mode == "or":
        f = on_chip(flags)
        r = nl.ndarray((1, n), dtype=nl.int32, buffer=nl.sbuf)
        nisa.tensor_partition_reduce(r, nl.bitwise_or, f)
    elif mode == "average":
        nisa.tensor_partition_reduce(r, "average", t)
    elif mode == "psum":
        ps = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.psum)
        nisa.tensor_copy(ps, t)
        nisa.tensor_partition_reduce(r, nl.add, ps)
    else:  # two partitions out
        r = nl.ndarray((2, n), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_partition_reduce(r, nl.add, t)
    return to_hbm(r)


class Statistics(unittest.TestCase):
    def setUp(self):
        rng = np.random.default_rng(2)
        self.x = rng.uniform(-2, 2, (32, 64)).astype(np.float32)
        self.flags = rng.integers(0, 16, (32, 64)).astype(np.int32)

    def test_bn_stats_then_bn_aggr(self):
        st, mv = stats(self.x, "bn")
        for k, part in enumerate((self.x[:, :32], self.x[:, 32:])):
            for j, sl in enumerate((part[:, 0::2], part[:, 1::2])):
                got = st[:, 6 * k + 3 * j:6 * k + 3 * j + 3]
                np.testing.assert_array_equal(got[:, 0], np.float32(sl.shape[1]))
                np.testing.assert_allclose(got[:, 1], sl.mean(axis=1), rtol=1e-5, atol=1e-6)
                np.testing.assert_allclose(got[:, 2], sl.var(axis=1) * sl.shape[1], rtol=1e-4)
        np.testing.assert_allclose(mv[:, 0], self.x.mean(axis=1), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(mv[:, 1], self.x.var(axis=1), rtol=1e-4)

    def test_bn_refusals(self):
        wide = np.zeros((8, 600), np.float32)
        refused(self, stats, (wide, "wide_stats"), "the page allows at most 512")
        refused(self, stats, (self.x, "narrow"), "dst holds 4 elements per partition")

    def test_partition_reduce(self):
        ints = np.round(self.x * 8).astype(np.float32)  # exact sums in any order
        np.testing.assert_array_equal(partition_reduce(ints, self.flags, "add"),
                                      ints.sum(axis=0, keepdims=True))
        np.testing.assert_array_equal(partition_reduce(self.x, self.flags, "max"),
                                      self.x.max(axis=0, keepdims=True))
        np.testing.assert_array_equal(partition_reduce(self.x, self.flags, "or"),
                                      np.bitwise_or.reduce(self.flags, axis=0, keepdims=True))

    def test_partition_reduce_refusals(self):
        for mode, words in (("average", "op='average' is not modelled"),
                            ("psum", "the GpSimd engine reads SBUF only"),
                            ("two", "dst has 2 partitions")):
            with self.subTest(mode=mode):
                refused(self, partition_reduce, (self.x, self.flags, mode), words)


# --- select_reduce, range_select, sequence_bounds ----------------------------------------------

@nki.jit
def selects(x, sel, col, mode):
    t, s, c = on_chip(x), on_chip(sel), on_chip(col)
    p, n = x.shape
    pred = nl.ndarray((p, n), dtype=nl.uint8, buffer=nl.sbuf)
    nisa.tensor_scalar(pred, s, nl.greater, 0.0)
    r = nl.ndarray((p, n), dtype=nl.float32, buffer=nl.sbuf)
    rr = nl.ndarray((p, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.memset(rr, 0.0)
    if mode == "scalar":
        nisa.select_reduce(r, pred, t, -5.0)
    elif mode == "column_reversed_max":
        nisa.select_reduce(dst=r, predicate=pred, on_true=t, on_false=c, reduce_res=rr,
                           reduce_cmd=nisa.reduce_cmd.reset_reduce, reverse_pred=True, name="s")
    elif mode == "chained":
        half = n // 2
        # The first call keeps its max in the accumulator (reduce_res=None, NKI 0.6).
        nisa.select_reduce(r[:, 0:half], pred[:, 0:half], t[:, 0:half], c,
                           reduce_cmd=nisa.reduce_cmd.reset_reduce)
        nisa.select_reduce(r[:, half:n], pred[:, half:n], t[:, half:n], c, reduce_res=rr,
                           reduce_cmd=nisa.reduce_cmd.reduce)
    elif mode == "after_tensor_scalar_reduce":
        # The accumulator is shared: this reduce would continue the tensor_scalar_reduce's sum.
        nisa.tensor_scalar_reduce(r, t, nl.add, 0.0, nl.add, rr)
        nisa.select_reduce(r, pred, t, c, reduce_res=rr, reduce_cmd=nisa.reduce_cmd.reduce)
    elif mode == "sum":
        nisa.select_reduce(r, pred, t, 0.0, reduce_res=rr, reduce_op=nl.add,
                           reduce_cmd=nisa.reduce_cmd.reset_reduce)
    else:  # idle with reduce_res
        nisa.select_reduce(r, pred, t, 0.0, reduce_res=rr)
    return to_hbm(r), to_hbm(rr)


def range_kernel(x, lo, hi, mode):
    t, b0, b1 = on_chip(x), on_chip(lo), on_chip(hi)
    p, n = x.shape
    r = nl.ndarray((p, n), dtype=nl.float32, buffer=nl.sbuf)
    rr = nl.ndarray((p, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.memset(rr, 0.0)
    if mode == "default":
        nisa.range_select(r, t, nl.greater_equal, nl.less, b0, b1, reduce_res=rr)
    elif mode == "library_min":  # nki-library's spelling of FP32_MIN, a double
        nisa.range_select(r, t, nl.greater_equal, nl.less, b0, b1, reduce_res=rr,
                          on_false_value=-3.4028235e38)
    elif mode == "start":
        nisa.range_select(dst=r, on_true_tile=t, comp_op0=nl.greater, comp_op1=nl.less_equal,
                          bound0=b0, bound1=b1, reduce_cmd=nisa.reduce_cmd.idle, range_start=8,
                          name="r")
    else:  # on_false_value
        nisa.range_select(r, t, nl.greater_equal, nl.less, b0, b1, on_false_value=0.0)
    return to_hbm(r), to_hbm(rr)


range_trn2 = on("trn2")(range_kernel)
range_trn1 = nki.jit(range_kernel)


@nki.jit
def bounds(ids, mode):
    s = on_chip(ids)
    n = ids.shape[1]
    if mode == "flat":
        r = nl.ndarray((1, 2 * n), dtype=nl.int32, buffer=nl.sbuf)
        nisa.sequence_bounds(r, s)
    elif mode == "three":
        r = nl.ndarray((1, 2, n), dtype=nl.int32, buffer=nl.sbuf)
        nisa.sequence_bounds(dst=r, segment_ids=s, name="b")
    else:  # short
        r = nl.ndarray((1, n), dtype=nl.int32, buffer=nl.sbuf)
        nisa.sequence_bounds(r, s)
    return to_hbm(r)


def golden_bounds(ids):
    n = len(ids)
    start, end = np.full(n, n), np.full(n, -1)
    for i, s in enumerate(ids):
        if s == 0:
            continue
        j = i
        while j > 0 and ids[j - 1] == s:
            j -= 1
        k = i
        while k + 1 < n and ids[k + 1] == s:
            k += 1
        start[i], end[i] = j, k + 1
    return np.concatenate([start, end]).astype(np.int32)


class Selections(unittest.TestCase):
    def setUp(self):
        rng = np.random.default_rng(5)
        self.x = rng.uniform(-4, 4, (64, 32)).astype(np.float32)
        self.sel = rng.uniform(-1, 1, (64, 32)).astype(np.float32)
        self.c = rng.uniform(-4, 4, (64, 1)).astype(np.float32)

    def test_select_reduce(self):
        on = self.sel > 0
        r, _ = selects(self.x, self.sel, self.c, "scalar")
        np.testing.assert_array_equal(r, np.where(on, self.x, np.float32(-5)))
        r, rr = selects(self.x, self.sel, self.c, "column_reversed_max")
        want = np.where(on, self.c, self.x)
        np.testing.assert_array_equal(r, want)
        np.testing.assert_array_equal(rr, want.max(axis=1, keepdims=True))

    def test_select_reduce_continues_the_accumulator_a_call_kept(self):
        r, rr = selects(self.x, self.sel, self.c, "chained")
        want = np.where(self.sel > 0, self.x, self.c)
        np.testing.assert_array_equal(r, want)
        np.testing.assert_array_equal(rr, want.max(axis=1, keepdims=True))

    def test_a_reduce_after_tensor_scalar_reduce_stops_the_run(self):
        with self.assertRaises(DynamicCheckFailure) as caught:
            selects(self.x, self.sel, self.c, "after_tensor_scalar_reduce")
        self.assertIn("holds a tensor_scalar_reduce's reduction", str(caught.exception))

    def test_select_reduce_refusals(self):
        refused(self, selects, (self.x, self.sel, self.c, "sum"),
                "reduce_op=add is not modelled")
        refused(self, selects, (self.x, self.sel, self.c, "idle"),
                "reduce_cmd=idle does not reduce")

    def test_range_select(self):
        lo = np.full((64, 1), 4, np.float32)
        hi = np.arange(64, dtype=np.float32).reshape(64, 1) % 32
        idx = np.arange(32, dtype=np.float32)[None, :]
        r, rr = range_trn2(self.x, lo, hi, "default")  # reduce_cmd defaults to reset_reduce
        want = np.where((idx >= lo) & (idx < hi), self.x, FP32_MIN)
        np.testing.assert_array_equal(r, want)
        np.testing.assert_array_equal(rr, want.max(axis=1, keepdims=True))
        r2, rr2 = range_trn2(self.x, lo, hi, "library_min")
        np.testing.assert_array_equal(r2, r)
        np.testing.assert_array_equal(rr2, rr)
        r, _ = range_trn2(self.x, lo, hi, "start")
        want = np.where((idx + 8 > lo) & (idx + 8 <= hi), self.x, FP32_MIN)
        np.testing.assert_array_equal(r, want)

    def test_range_select_refusals(self):
        lo = hi = np.zeros((64, 1), np.float32)
        refused(self, range_trn1, (self.x, lo, hi, "default"), "NeuronCore-v3 and newer")
        refused(self, range_trn2, (self.x, lo, hi, "on_false"),
                "on_false_value=0.0 is not modelled")

    def test_sequence_bounds(self):
        ids = np.array([[1, 1, 2, 2, 2, 0, 3, 0, 4, 4]], np.int32)
        want = golden_bounds(ids[0])
        np.testing.assert_array_equal(bounds(ids, "flat")[0], want)
        np.testing.assert_array_equal(bounds(ids, "three").reshape(-1), want)
        refused(self, bounds, (ids, "short"), "holds 2 x 10")


if __name__ == "__main__":
    unittest.main()

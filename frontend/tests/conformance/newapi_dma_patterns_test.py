"""The new API's DMA, pattern and register calls (`import nki`, NKI 0.2-0.6) under the simulator:
nisa.dma_copy (no PSUM since NKI 0.3.0, dge_mode/engine/priority per generation), nisa.dma_transpose
(exact dst shape since NKI 0.4.0), nisa.dma_compute (a sum on the DMA engines), nisa.iota and
nisa.affine_select with an access pattern, the register calls the model refuses, and a kernel's
outputs in nl.shared_hbm (NKI 0.3.0). ncverify's
own kernels; the expected arrays are computed here with NumPy. Run by
`python3 -m ncverify_nki.run` (ctest label `conformance`)."""

import unittest

import numpy as np

import nki
import nki.isa as nisa
import nki.language as nl
from ncverify_nki.simulate import KernelNotTraced
from targets import default, on

# Written for trn1 unless a kernel names its generation (targets.py).
default("trn1")

HERE = "newapi_dma_patterns_test.py:"


def _out(t, dtype=None):
    out = nl.ndarray(t.shape, dtype=dtype or t.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=t)
    return out


@nki.jit
def copy_cast(a):
    """HBM fp32 -> SBUF bf16 -> HBM fp32: the DMA casts through fp32."""
    t = nl.ndarray(a.shape, dtype=nl.bfloat16, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a, dge_mode=nisa.dge_mode.swdge, oob_mode=nisa.oob_mode.error)
    return _out(t, nl.float32)


@nki.jit
def copy_raw_int_modes(a):
    """NKI 0.2's raw integers (nki-library d2ad3a5's `dge_mode=3`): the enum members of those
    values (reference: dge_mode none = 3, swdge = 1; oob_mode error = 0)."""
    t = nl.ndarray(a.shape, dtype=nl.bfloat16, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a, dge_mode=1, oob_mode=0)
    u = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=u, src=t, dge_mode=3)
    return _out(u)


@on("trn2")
def copy_hwdge_trn2(a):
    t = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a, dge_mode=nisa.dge_mode.hwdge, engine=nisa.engine.sync)
    return _out(t)


@nki.jit
def copy_refused(a, case):
    P, F = a.shape
    t = nl.ndarray((P, F), dtype=a.dtype, buffer=nl.sbuf)
    ps = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.psum)
    if case == "from_psum":
        nisa.memset(ps, 0.0)
        nisa.dma_copy(dst=t, src=ps)
    elif case == "to_psum":
        nisa.dma_copy(dst=ps, src=a)
    elif case == "hwdge_trn1":
        nisa.dma_copy(dst=t, src=a, dge_mode=nisa.dge_mode.hwdge)
    elif case == "engine_without_hwdge":
        nisa.dma_copy(dst=t, src=a, engine=nisa.engine.sync)
    elif case == "engine_vector":
        nisa.dma_copy(dst=t, src=a, engine=nisa.engine.vector)
    elif case == "priority_trn1":
        nisa.dma_copy(dst=t, src=a, priority=1)
    elif case == "raw_int_hwdge_trn1":
        nisa.dma_copy(dst=t, src=a, dge_mode=2)  # NKI 0.2's hwdge (the enum's value 2)
    elif case == "raw_int_no_member":
        nisa.dma_copy(dst=t, src=a, dge_mode=4)
    elif case == "raw_int_skip_direct":
        nisa.dma_copy(dst=t, src=a, oob_mode=1)  # NKI 0.2's oob_mode.skip
    elif case == "count":
        nisa.dma_copy(dst=t[:, 0:F // 2], src=a)
    elif case == "skip_direct":
        nisa.dma_copy(dst=t, src=a, oob_mode=nisa.oob_mode.skip)
    elif case == "unknown_mode":
        nisa.dma_copy(dst=t, src=a, dge_mode="fast")
    elif case == "priority_value":
        nisa.dma_copy(dst=t, src=a, priority=7)
    return _out(t)


@on("trn2")
def copy_refused_trn2(a, case):
    t = nl.ndarray(a.shape, dtype=nl.bfloat16, buffer=nl.sbuf)
    if case == "hwdge_dtypes":
        nisa.dma_copy(dst=t, src=a, dge_mode=nisa.dge_mode.hwdge)
    return _out(t, nl.float32)


@on("trn3")
def copy_priority_trn3(a):
    t = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a, priority=0)
    return _out(t)


@nki.jit
def transpose_2d(a):
    """[m, n] in HBM -> [n, m] in SBUF."""
    m, n = a.shape
    t = nl.ndarray((n, m), dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_transpose(t, a)
    return _out(t)


@nki.jit
def transpose_3d_sbuf(a):
    """[x, y, z] in SBUF -> [z, y, x] (axes (2, 1, 0)) in SBUF."""
    x, y, z = a.shape
    s = nl.ndarray((x, y, z), dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=s, src=a)
    t = nl.ndarray((z, y, x), dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_transpose(dst=t, src=s, axes=(2, 1, 0))
    return _out(t)


@nki.jit
def transpose_4d(a):
    """[w, x, y, z] in HBM -> [z, x, y, w] (axes (3, 1, 2, 0)) in SBUF."""
    w, x, y, z = a.shape
    t = nl.ndarray((z, x, y, w), dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_transpose(t, a, axes=(3, 1, 2, 0))
    return _out(t)


@nki.jit
def transpose_ap_4d(a, p, n):
    """a[:p, :n] through 4-D access patterns with unit pairs ([p, 1, 1, n] -> [n, 1, 1, p]) into
    a zeroed [128, 64] tile, as nki-library's attention_cte does for its last partial tile (with
    n = 1 the source is a [p, 1] column: one axis of more than one element)."""
    rows, cols = a.shape
    s = nl.ndarray((rows, cols), dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=s, src=a)
    t = nl.ndarray((128, 64), dtype=a.dtype, buffer=nl.sbuf)
    nisa.memset(t, 0.0)
    nisa.dma_transpose(dst=t.ap([[64, n], [1, 1], [128, 1], [1, p]], offset=0),
                       src=s.ap([[cols, p], [1, 1], [128, 1], [1, n]], offset=0))
    return _out(t)


@nki.jit
def transpose_refused(a, case):
    m, n = a.shape
    t = nl.ndarray((n, m), dtype=a.dtype, buffer=nl.sbuf)
    if case == "shape":
        short = nl.ndarray((n, m // 2), dtype=a.dtype, buffer=nl.sbuf)
        nisa.dma_transpose(short, a)
    elif case == "dtype":
        t16 = nl.ndarray((n, m), dtype=nl.bfloat16, buffer=nl.sbuf)
        nisa.dma_transpose(t16, a)
    elif case == "axes":
        nisa.dma_transpose(t, a, axes=(0, 1))
    elif case == "swdge":
        nisa.dma_transpose(t, a, dge_mode=nisa.dge_mode.swdge)
    elif case == "hwdge_trn1":
        nisa.dma_transpose(t, a, dge_mode=nisa.dge_mode.hwdge)
    elif case == "skip":
        nisa.dma_transpose(t, a, oob_mode=nisa.oob_mode.skip)
    elif case == "from_psum":
        ps = nl.ndarray((m, n), dtype=a.dtype, buffer=nl.psum)
        nisa.memset(ps, 0.0)
        nisa.dma_transpose(t, ps)
    elif case == "rank_5":
        s5 = nl.ndarray((2, 2, 2, 2, 2), dtype=a.dtype, buffer=nl.sbuf)
        nisa.memset(s5, 0.0)
        d5 = nl.ndarray((2, 2, 2, 2, 2), dtype=a.dtype, buffer=nl.sbuf)
        nisa.dma_transpose(d5, s5)
    elif case == "to_hbm":
        h = nl.ndarray((n, m), dtype=a.dtype, buffer=nl.shared_hbm)
        nisa.dma_transpose(h, a)
        return h
    return _out(t)


@nki.jit
def compute_sum(a, b, c):
    """dst = a + b + c in fp32 on the DMA engines (HBM sources, SBUF dst)."""
    t = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_compute(t, [a, b, c], nl.add, scales=[1.0, 1.0, 1.0])
    return _out(t)


@nki.jit
def compute_rmw_bf16(a, b):
    """The read-modify-write form: dst = dst + src, dst bf16 (one rounding of the fp32 sum)."""
    t = nl.ndarray(a.shape, dtype=nl.bfloat16, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    nisa.dma_compute(dst=t, srcs=[t, b], reduce_op=nl.add)
    return _out(t, nl.float32)


@nki.jit
def compute_bf16_three(a, b, c):
    """dst bf16 = a + b + c: the fp32 sum rounded once (through an fp32 staging tile)."""
    t = nl.ndarray(a.shape, dtype=nl.bfloat16, buffer=nl.sbuf)
    nisa.dma_compute(t, [a, b, c], nl.add)
    return _out(t, nl.float32)


@nki.jit
def compute_halves(a):
    """dst = its own left half + right half: a source in dst's tensor, apart from dst."""
    P, F = a.shape
    t = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    nisa.dma_compute(t[:, 0:F // 2], [t[:, F // 2:F], a[:, 0:F // 2]], nl.add)
    return _out(t)


@nki.jit
def compute_refused(a, b, case):
    t = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.sbuf)
    if case == "multiply":
        nisa.dma_compute(t, [a, b], nl.multiply)
    elif case == "scales":
        nisa.dma_compute(t, [a, b], nl.add, scales=[1.0, 2.0])
    elif case == "non_unique":
        nisa.dma_compute(t, [a, b], nl.add, unique_indices=False)
    elif case == "bf16_three_hbm":
        h = nl.ndarray(a.shape, dtype=nl.bfloat16, buffer=nl.shared_hbm)
        nisa.dma_compute(h, [a, b, a], nl.add)
        return h
    elif case == "skip":
        nisa.dma_compute(t, [a, b], nl.add, oob_mode=nisa.oob_mode.skip)
    elif case == "empty":
        nisa.dma_compute(t, [], nl.add)
    elif case == "psum_source":
        ps = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.psum)
        nisa.memset(ps, 0.0)
        nisa.dma_compute(t, [a, ps], nl.add)
    elif case == "scales_count":
        nisa.dma_compute(t, [a, b], nl.add, scales=[1.0])
    elif case == "part_of_dst":
        nisa.dma_copy(dst=t, src=a)
        nisa.dma_compute(t[:, 0:16], [t[:, 8:24], b[:, 0:16]], nl.add)
    elif case == "dst_twice":
        nisa.dma_copy(dst=t, src=a)
        nisa.dma_compute(t, [t, t], nl.add)
    return _out(t)


@nki.jit
def iota_forms(a, form):
    """iota with a pattern; `form` picks dst's shape and the pattern."""
    if form == "two_dims":  # [32, 64]: value = 3 + 100 p + 8 (f // 8) + f % 8
        t = nl.ndarray((32, 64), dtype=nl.float32, buffer=nl.sbuf)
        nisa.iota(t, [[8, 8], [1, 8]], offset=3, channel_multiplier=100)
    elif form == "flat_over_3d":  # [4, 4, 6], one pattern dim over both free dims
        t = nl.ndarray((4, 4, 6), dtype=nl.int32, buffer=nl.sbuf)
        nisa.iota(t, [[1, 24]], channel_multiplier=-1)
    elif form == "per_dim":  # [8, 3, 4] with pattern [[2, 3], [5, 4]]: 2 i + 5 j
        t = nl.ndarray((8, 3, 4), dtype=nl.int32, buffer=nl.sbuf)
        nisa.iota(t, [[2, 3], [5, 4]])
    elif form == "contiguous_merge":  # [8, 12] with [[4, 3], [1, 4]]: affine, one step 1
        t = nl.ndarray((8, 12), dtype=nl.int32, buffer=nl.sbuf)
        nisa.iota(t, [[4, 3], [1, 4]], 7, 12)
    return _out(t)


@nki.jit
def iota_refused(a, case):
    t = nl.ndarray((8, 12), dtype=nl.int32, buffer=nl.sbuf)
    if case == "count":
        nisa.iota(t, [[1, 10]])
    elif case == "five_dims":
        nisa.iota(t, [[1, 1], [1, 1], [1, 1], [1, 3], [1, 4]])
    elif case == "psum":
        ps = nl.ndarray((8, 12), dtype=nl.float32, buffer=nl.psum)
        nisa.iota(ps, [[1, 12]])
    elif case == "not_affine":  # 2 (f // 4) + 5 (f % 4) in dst's second free dim of 12
        # (one free dim of 12 is split into the pattern's dims, differential nki_iota_split;
        # with two free dims it is not)
        t3 = nl.ndarray((8, 2, 12), dtype=nl.int32, buffer=nl.sbuf)
        nisa.iota(t3, [[1, 2], [2, 3], [5, 4]])
        return _out(t3)
    elif case == "no_refinement":
        t2 = nl.ndarray((8, 4, 3), dtype=nl.int32, buffer=nl.sbuf)
        nisa.iota(t2, [[1, 6], [10, 2]])
        return _out(t2)
    elif case == "float_step":
        nisa.iota(t, [[1.5, 12]])
    elif case == "zero_num":
        nisa.iota(t, [[1, 0], [1, 12]])
    elif case == "bool_offset":
        nisa.iota(t, [[1, 12]], offset=True)
    return _out(t)


@nki.jit
def select_causal(a, cmp):
    """out[p, f] = a[p, f] where cmp(p - f, 0), else -9 (a causal mask when cmp is >=)."""
    P, F = a.shape
    t = nl.ndarray((P, F), dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    r = nl.ndarray((P, F), dtype=a.dtype, buffer=nl.sbuf)
    nisa.affine_select(r, [[-1, F]], 1, t, -9.0, cmp_op=cmp)
    return _out(r)


@nki.jit
def select_identity(a):
    """The nki-library idiom: an identity matrix from a memset and affine_select(equal)."""
    n = a.shape[0]
    ident = nl.ndarray((n, n), dtype=nl.float32, buffer=nl.sbuf)
    nisa.memset(dst=ident, value=1.0)
    nisa.affine_select(dst=ident[...], pattern=[[1, n]], channel_multiplier=-1,
                       cmp_op=nl.equal, on_true_tile=ident[nl.ds(0, n), nl.ds(0, n)],
                       on_false_value=0.0, offset=0)
    return _out(ident)


@nki.jit
def select_refused(a, case):
    P, F = a.shape
    t = nl.ndarray((P, F), dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    r = nl.ndarray((P, F), dtype=a.dtype, buffer=nl.sbuf)
    if case == "old_order":
        nisa.affine_select(r, [[-1, F]], 0, 1, t, -9.0)
    elif case == "on_true_psum":
        ps = nl.ndarray((P, F), dtype=nl.float32, buffer=nl.psum)
        nisa.memset(ps, 0.0)
        nisa.affine_select(r, [[-1, F]], 1, ps, -9.0)
    elif case == "not_a_comparison":
        nisa.affine_select(r, [[-1, F]], 1, t, -9.0, cmp_op=nl.add)
    elif case == "tile_false_value":
        nisa.affine_select(r, [[-1, F]], 1, t, t)
    return _out(r)


@nki.jit
def registers(a, case):
    t = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
    if case == "alloc":
        nisa.register_alloc(0)
    elif case == "move":
        nisa.register_move(None, 1)
    elif case == "load":
        nisa.register_load(None, t)
    elif case == "store":
        nisa.register_store(t, None)
    return _out(t)


@nki.jit
def returns_private_hbm(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.hbm)
    nisa.dma_copy(dst=out, src=a)
    return out


@nki.jit
def returns_shared_hbm(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=a)
    return out


def bf16(x):
    """float32 -> the nearest bfloat16 (ties to even), as float32 (finite values)."""
    bits = np.asarray(x, dtype=np.float32).view(np.uint32)
    bits = (bits + (((bits >> 16) & 1) + 0x7FFF)) & 0xFFFF0000
    return bits.astype(np.uint32).view(np.float32)


def refused(test, kernel, args, cases):
    for case, words in cases.items():
        with test.subTest(case=case):
            with test.assertRaises(KernelNotTraced) as caught:
                kernel(*args, case)
            test.assertIn(HERE, str(caught.exception))
            test.assertIn(words, str(caught.exception))


class DmaCopyTest(unittest.TestCase):
    def setUp(self):
        self.a = np.random.default_rng(1).standard_normal((32, 48)).astype(np.float32)

    def test_the_dtype_changes_through_fp32(self):
        np.testing.assert_array_equal(copy_cast(self.a), bf16(self.a))

    def test_nki_0_2_raw_integer_modes(self):
        np.testing.assert_array_equal(copy_raw_int_modes(self.a), bf16(self.a))

    def test_hardware_dge_on_trn2_with_a_sequencer(self):
        np.testing.assert_array_equal(copy_hwdge_trn2(self.a), self.a)

    def test_refusals(self):
        refused(self, copy_refused, (self.a,), {
            "from_psum": "src is in PSUM",
            "to_psum": "dst is in PSUM",
            "hwdge_trn1": "hardware DGE needs NeuronCore-v3",
            "engine_without_hwdge": "valid only with dge_mode=nisa.dge_mode.hwdge",
            "engine_vector": "engine= takes nisa.engine.sync or nisa.engine.scalar",
            "priority_trn1": "priority= needs NeuronCore-v4",
            "raw_int_hwdge_trn1": "hardware DGE needs NeuronCore-v3",
            "raw_int_no_member": "dge_mode=4: no member of nisa.dge_mode has that value",
            "raw_int_skip_direct": "skipping concerns the run-time indices",
            "count": "elements",
            "skip_direct": "skipping concerns the run-time indices",
            "unknown_mode": "dge_mode= takes a member of nisa.dge_mode",
            "priority_value": "priority= takes 0, 1, 2 or 3, not 7",
        })
        refused(self, copy_refused_trn2, (self.a,),
                {"hwdge_dtypes": "needs src and dst of one dtype"})
        with self.assertRaises(KernelNotTraced) as caught:
            copy_priority_trn3(self.a)
        self.assertIn("priority=0 is not modelled", str(caught.exception))


class OutputsTest(unittest.TestCase):
    def test_outputs_are_shared_hbm(self):
        a = np.arange(12, dtype=np.float32).reshape(3, 4)
        np.testing.assert_array_equal(returns_shared_hbm(a), a)
        with self.assertRaises(KernelNotTraced) as caught:
            returns_private_hbm(a)
        self.assertIn(HERE, str(caught.exception))
        self.assertIn("a kernel's outputs are nl.shared_hbm tensors", str(caught.exception))


class DmaTransposeTest(unittest.TestCase):
    def test_2d_and_4d_from_hbm_and_3d_within_sbuf(self):
        rng = np.random.default_rng(2)
        a = rng.standard_normal((24, 40)).astype(np.float32)
        np.testing.assert_array_equal(transpose_2d(a), a.T)
        b = rng.standard_normal((8, 5, 6)).astype(np.float32)
        np.testing.assert_array_equal(transpose_3d_sbuf(b), b.transpose(2, 1, 0))
        c = rng.standard_normal((3, 4, 5, 6)).astype(np.float32)
        np.testing.assert_array_equal(transpose_4d(c), c.transpose(3, 1, 2, 0))
        d = rng.standard_normal((4, 32)).astype(np.float32)
        for p, n in ((2, 8), (1, 8), (4, 1)):
            want = np.zeros((128, 64), dtype=np.float32)
            want[:n, :p] = d[:p, :n].T
            np.testing.assert_array_equal(transpose_ap_4d(d, p, n), want, err_msg="%d %d" % (p, n))

    def test_refusals(self):
        a = np.zeros((24, 40), dtype=np.float32)
        refused(self, transpose_refused, (a,), {
            "shape": "the shapes, rank included, must match exactly",
            "dtype": "src.dtype (fp32) must equal dst.dtype (bf16)",
            "axes": "transposes with axes (1, 0) only",
            "swdge": "a direct transpose takes dge_mode unknown or hwdge",
            "hwdge_trn1": "needs NeuronCore-v3",
            "skip": "oob_mode=skip is valid only for an indirect source",
            "to_hbm": "the transpose writes SBUF",
            "from_psum": "src is in PSUM; the transposing DMA reads HBM or SBUF",
            "rank_5": "src has rank 5; the transposes are of 2-, 3- and 4-D tiles",
        })


class DmaComputeTest(unittest.TestCase):
    def test_sum_of_three_sources_in_fp32(self):
        rng = np.random.default_rng(3)
        a, b, c = (rng.standard_normal((16, 32)).astype(np.float32) for _ in range(3))
        np.testing.assert_array_equal(compute_sum(a, b, c), (a + b) + c)

    def test_read_modify_write_rounds_the_sum_once(self):
        rng = np.random.default_rng(4)
        a = rng.uniform(-4, 4, (16, 32)).astype(np.float32)
        b = rng.uniform(-1e-2, 1e-2, (16, 32)).astype(np.float32)
        np.testing.assert_array_equal(compute_rmw_bf16(a, b), bf16(bf16(a) + b))

    def test_a_source_apart_from_dst_in_its_tensor(self):
        a = np.random.default_rng(6).standard_normal((8, 32)).astype(np.float32)
        want = a.copy()
        want[:, 0:16] = a[:, 16:32] + a[:, 0:16]
        np.testing.assert_array_equal(compute_halves(a), want)

    def test_a_bf16_sum_of_three_is_rounded_once(self):
        rng = np.random.default_rng(5)
        a, b, c = (rng.uniform(-1, 1, (16, 32)).astype(np.float32) for _ in range(3))
        want = bf16((a + b) + c)
        np.testing.assert_array_equal(compute_bf16_three(a, b, c), want)
        self.assertFalse(np.array_equal(want, bf16(bf16(bf16(a) + b) + c)))  # not step by step

    def test_refusals(self):
        a = np.zeros((16, 32), dtype=np.float32)
        refused(self, compute_refused, (a, a), {
            "multiply": "reduce_op must be nl.add",
            "scales": "every scale must be 1.0",
            "non_unique": "unique_indices=False is not modelled",
            "bf16_three_hbm": "the fp32 staging tile that avoids it is an SBUF tile",
            "skip": "oob_mode='skip' is not modelled",
            "empty": "srcs= takes a list of 1 to 16 tensors",
            "psum_source": "srcs[1] is in PSUM",
            "scales_count": "scales= takes one number per source (2)",
            "part_of_dst": "srcs[0]='a view overlapping dst' is not modelled",
            "dst_twice": "srcs='dst twice' is not modelled",
        })


class IotaTest(unittest.TestCase):
    def test_patterns_over_dst_dims(self):
        a = np.zeros((1, 1), dtype=np.float32)
        p32, f64 = np.arange(32)[:, None], np.arange(64)[None, :]
        np.testing.assert_array_equal(iota_forms(a, "two_dims"),
                                      3 + 100 * p32 + 8 * (f64 // 8) + f64 % 8)
        p4 = np.arange(4)[:, None]
        np.testing.assert_array_equal(iota_forms(a, "flat_over_3d"),
                                      (np.arange(24)[None, :] - p4).reshape(4, 4, 6))
        f12 = np.arange(12)[None, :]
        i3, j4 = np.arange(3)[:, None], np.arange(4)[None, :]
        np.testing.assert_array_equal(iota_forms(a, "per_dim"),
                                      np.broadcast_to(2 * i3 + 5 * j4, (8, 3, 4)))
        p8 = np.arange(8)[:, None]
        np.testing.assert_array_equal(iota_forms(a, "contiguous_merge"), 7 + 12 * p8 + f12)

    def test_refusals(self):
        refused(self, iota_refused, (np.zeros((1, 1), dtype=np.float32),), {
            "count": "the pattern has 10 elements, dst 12 per partition",
            "five_dims": "pattern= takes 1 to 4 [step, num] pairs",
            "psum": "dst is in PSUM; this call writes SBUF",
            "not_affine": "is not affine in dst's free index 2",
            "no_refinement": "(no common refinement)",
            "float_step": "a pattern step must be a compile-time integer",
            "zero_num": "a pattern num must be positive, not 0",
            "bool_offset": "offset= takes an integer, not True",
        })


class AffineSelectTest(unittest.TestCase):
    def test_comparisons(self):
        a = np.random.default_rng(5).standard_normal((32, 40)).astype(np.float32)
        d = np.arange(32)[:, None] - np.arange(40)[None, :]
        for cmp, f in ((nl.greater_equal, np.greater_equal), (nl.equal, np.equal),
                       (nl.less, np.less), (nl.not_equal, np.not_equal)):
            with self.subTest(cmp=cmp):
                np.testing.assert_array_equal(select_causal(a, cmp), np.where(f(d, 0), a, -9.0))

    def test_identity_idiom(self):
        np.testing.assert_array_equal(select_identity(np.zeros((48, 1), np.float32)),
                                      np.eye(48, dtype=np.float32))

    def test_refusals(self):
        refused(self, select_refused, (np.zeros((16, 16), dtype=np.float32),), {
            "old_order": "the NKI 0.2.0 order",
            "on_true_psum": "on_true_tile is in PSUM; it must be in SBUF",
            "not_a_comparison": "cmp_op must be a comparison",
            "tile_false_value": "on_false_value must be a number",
        })


class RegisterTest(unittest.TestCase):
    def test_every_register_call_is_refused(self):
        refused(self, registers, (np.zeros((4, 4), dtype=np.float32),), {
            "alloc": "nisa.register_alloc: x=0 is not modelled",
            "move": "nisa.register_move: dst=None is not modelled",
            "load": "nisa.register_load: dst=None is not modelled",
            "store": "nisa.register_store: src=None is not modelled",
        })


if __name__ == "__main__":
    unittest.main()

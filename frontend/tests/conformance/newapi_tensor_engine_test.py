"""The new API's Tensor-engine calls (`import nki`, NKI 0.2-0.6) under the simulator:
nisa.nc_matmul's accumulate=None|True|False (the first matmul writing a PSUM location
overwrites, later ones add; False overwrites; True adds), its dst dtype per generation, PE tiling
and the refused modes; nisa.nc_transpose's dtype rule per generation and its engine chosen by
dst's buffer. ncverify's own kernels; the expected arrays are computed here with NumPy. Run by
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


def _tiles(a, b, k):
    """The k-th 128-row slices of a and b in SBUF."""
    M, N = a.shape[1], b.shape[1]
    at = nl.ndarray((128, M), dtype=a.dtype, buffer=nl.sbuf)
    bt = nl.ndarray((128, N), dtype=b.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=at, src=a[k * 128:(k + 1) * 128, :])
    nisa.dma_copy(dst=bt, src=b[k * 128:(k + 1) * 128, :])
    return at, bt


def _store(acc, dtype=nl.float32):
    out = nl.ndarray(acc.shape, dtype=dtype, buffer=nl.shared_hbm)
    res = nl.ndarray(acc.shape, dtype=dtype, buffer=nl.sbuf)
    nisa.tensor_copy(res, acc)
    nisa.dma_copy(dst=out, src=res)
    return out


@nki.jit
def matmul_modes(a, b, mode):
    """a [K, M], b [K, N], K a multiple of 128: one nc_matmul per 128 rows of K into one PSUM
    tile, the accumulate flag as `mode` says."""
    K, M = a.shape
    N = b.shape[1]
    acc = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.psum)
    if mode == "unrolled_none":
        for k in range(K // 128):
            at, bt = _tiles(a, b, k)
            nisa.nc_matmul(acc, at, bt)
        return _store(acc)
    if mode == "false_then_true":
        at, bt = _tiles(a, b, 0)
        nisa.nc_matmul(acc, at, bt, accumulate=False)
        for k in nl.affine_range(1, K // 128):
            at, bt = _tiles(a, b, k)
            nisa.nc_matmul(acc, at, bt, accumulate=True)
        return _store(acc)
    for k in nl.affine_range(K // 128):
        at, bt = _tiles(a, b, k)
        if mode == "none":
            nisa.nc_matmul(acc, at, bt)
        elif mode == "false":
            nisa.nc_matmul(dst=acc, stationary=at, moving=bt, accumulate=False)
        elif mode == "k_positive":
            nisa.nc_matmul(acc, at, bt, accumulate=(k > 0))
        elif mode == "restart_at_2":
            nisa.nc_matmul(acc, at, bt, accumulate=(k != 2) & (k > 0))
    return _store(acc)


@nki.jit
def matmul_across_loop_nests(a, b, case):
    """accumulate=None into 16 column blocks of one PSUM tile over loops too long to unroll at
    once (16 iterations): "two_nests" writes every block in one loop and again in a second
    loop (the second adds: 2x the product); "outer_revisits" writes them in a loop inside an
    outer loop of 16 that does not pick the block (every outer iteration after the first adds:
    16x)."""
    M, N = a.shape[1], b.shape[1]
    w = N // 16
    at = nl.ndarray((128, M), dtype=a.dtype, buffer=nl.sbuf)
    bt = nl.ndarray((128, N), dtype=b.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=at, src=a)
    nisa.dma_copy(dst=bt, src=b)
    acc = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.psum)
    if case == "two_nests":
        for j in nl.affine_range(16):
            nisa.nc_matmul(acc[:, nl.ds(j * w, w)], at, bt[:, nl.ds(j * w, w)])
        for j in nl.affine_range(16):
            nisa.nc_matmul(acc[:, nl.ds(j * w, w)], at, bt[:, nl.ds(j * w, w)])
    else:
        for r in nl.affine_range(16):
            for j in nl.affine_range(16):
                nisa.nc_matmul(acc[:, nl.ds(j * w, w)], at, bt[:, nl.ds(j * w, w)])
    return _store(acc)


@nki.jit
def matmul_per_block(a, b):
    """Two PSUM blocks acc[:, 0], acc[:, 1] each accumulated over its own k-loop (accumulate=None):
    each block's first matmul overwrites it."""
    K, M = a.shape
    N = b.shape[1]
    acc = nl.ndarray((M, 2, N), dtype=nl.float32, buffer=nl.psum)
    out = nl.ndarray((2, M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    for j in nl.affine_range(2):
        for k in nl.affine_range(K // 256):
            at, bt = _tiles(a, b, j * (K // 256) + k)
            nisa.nc_matmul(acc[:, j, :], at, bt)
        res = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_copy(res, acc[:, j, :])
        nisa.dma_copy(dst=out[j], src=res)
    return out


@nki.jit
def matmul_regions(a, b, case):
    """accumulate=None per PSUM location across matmuls of different regions of one tile:
    a region inside what earlier matmuls wrote adds, a disjoint one overwrites, one that is
    partly written is refused."""
    M, N = a.shape[1], b.shape[1]
    acc = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.psum)
    at, bt = _tiles(a, b, 0)
    if case == "inside":
        nisa.nc_matmul(acc, at, bt)
        nisa.nc_matmul(acc[:, 0:16], at, bt[:, 0:16])
    elif case == "union":
        nisa.nc_matmul(acc[:, 0:16], at, bt[:, 0:16])
        nisa.nc_matmul(acc[:, 16:N], at, bt[:, 16:N])
        nisa.nc_matmul(acc, at, bt)
    elif case == "partial":
        nisa.nc_matmul(acc[:, 0:16], at, bt[:, 0:16])
        nisa.nc_matmul(acc[:, 8:24], at, bt[:, 8:24])
    return _store(acc)


@on("trn3")
def matmul_bf16_dst_trn3(a, b):
    """NeuronCore-v4 writes a bf16 PSUM destination."""
    M, N = a.shape[1], b.shape[1]
    acc = nl.ndarray((M, N), dtype=nl.bfloat16, buffer=nl.psum)
    at, bt = _tiles(a, b, 0)
    nisa.nc_matmul(acc, at, bt)
    return _store(acc)


@on("trn3")
def matmul_onto_memset_trn3(a, b):
    """NeuronCore-v4: a matmul with accumulate=None adds to a location a memset wrote."""
    M, N = a.shape[1], b.shape[1]
    acc = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.psum)
    nisa.memset(acc, 2.0)
    at, bt = _tiles(a, b, 0)
    nisa.nc_matmul(acc, at, bt)
    return _store(acc)


@nki.jit
def matmul_hints(a, b):
    """is_transpose on NeuronCore-v2 labels the instruction for the profiler, PE tiling places
    it in part of the array, the onezero hints change speed: the product is the same."""
    M, N = a.shape[1], b.shape[1]
    acc = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.psum)
    at, bt = _tiles(a, b, 0)
    nisa.nc_matmul(acc, at, bt, is_transpose=True, is_moving_onezero=True,
                   tile_position=(0, 64), tile_size=(128, 64))
    return _store(acc)


@nki.jit
def matmul_refused(a, b, case):
    M, N = a.shape[1], b.shape[1]
    acc = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.psum)
    at, bt = _tiles(a, b, 0)
    if case == "true_first":
        nisa.nc_matmul(acc, at, bt, accumulate=True)
    elif case == "true_after_nl_zeros":
        z = nl.zeros((M, N), dtype=nl.float32, buffer=nl.psum)
        nisa.nc_matmul(z, at, bt, accumulate=True)
    elif case == "none_onto_memset":
        nisa.memset(acc, 0.0)
        nisa.nc_matmul(acc, at, bt)
    elif case == "bad_flag":
        nisa.nc_matmul(acc, at, bt, accumulate=1)
    elif case == "double_row":
        nisa.nc_matmul(acc, at, bt, perf_mode=nisa.matmul_perf_mode.double_row)
    elif case == "perf_mode_int":
        nisa.nc_matmul(acc, at, bt, perf_mode=1)
    elif case == "perf_mode_unknown":
        nisa.nc_matmul(acc, at, bt, perf_mode="fast")
    elif case == "hint_not_bool":
        nisa.nc_matmul(acc, at, bt, is_transpose="yes")
    elif case == "int_dst":
        acci = nl.ndarray((M, N), dtype=nl.int32, buffer=nl.psum)
        nisa.nc_matmul(acci, at, bt)
    elif case == "true_onto_copy":
        sb = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.sbuf)
        nisa.memset(sb, 1.0)
        nisa.tensor_copy(acc, sb)
        nisa.nc_matmul(acc, at, bt, accumulate=True)
    elif case == "bf16_dst":
        acc16 = nl.ndarray((M, N), dtype=nl.bfloat16, buffer=nl.psum)
        nisa.nc_matmul(acc16, at, bt)
    elif case == "sbuf_dst":
        s = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.sbuf)
        nisa.nc_matmul(s, at, bt)
    elif case == "tile_size_32":
        nisa.nc_matmul(acc, at, bt, tile_position=(0, 0), tile_size=(128, 32))
    elif case == "tile_position_only":
        nisa.nc_matmul(acc, at, bt, tile_position=(0, 0))
    elif case == "tile_position_off_grid":
        nisa.nc_matmul(acc, at, bt, tile_position=(0, 32), tile_size=(128, 64))
    elif case == "residue_split":
        # 16 iterations stay a symbolic loop (a short one is unrolled: "alternating_short")
        for k in nl.affine_range(16):
            nisa.nc_matmul(acc, at, bt, accumulate=(k % 2 == 1))
    elif case == "alternating_short":
        for k in nl.affine_range(4):
            nisa.nc_matmul(acc, at, bt, accumulate=(k % 2 == 1))
    return _store(acc)


@nki.jit
def matmul_wide_moving(a, b):
    M = a.shape[1]
    acc = nl.ndarray((M, 1024), dtype=nl.float32, buffer=nl.psum)
    at = nl.ndarray((128, M), dtype=a.dtype, buffer=nl.sbuf)
    bt = nl.ndarray((128, 1024), dtype=b.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=at, src=a[0:128, :])
    nisa.dma_copy(dst=bt, src=b[0:128, :])
    nisa.nc_matmul(acc, at, bt)
    return _store(acc)


@on("trn2")
def matmul_is_transpose_trn2(a, b):
    M, N = a.shape[1], b.shape[1]
    acc = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.psum)
    at, bt = _tiles(a, b, 0)
    nisa.nc_matmul(acc, at, bt, is_transpose=True)
    return _store(acc)


def _transposer(gen, dst_dtype, buffer, engine=nisa.engine.unknown):
    @on(gen)
    def transpose(a):
        P, F = a.shape
        t = nl.ndarray((P, F), dtype=nl.bfloat16, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a)
        d = nl.ndarray((F, P), dtype=dst_dtype, buffer=buffer)
        nisa.nc_transpose(d, t, engine=engine)
        return _store(d, dst_dtype)

    return transpose


@on("trn2")
def transpose_dtype_refused(a, dtype):
    """data of `dtype` through the Tensor engine (dst in PSUM, the same dtype)."""
    P, F = a.shape
    t = nl.ndarray((P, F), dtype=dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    d = nl.ndarray((F, P), dtype=dtype, buffer=nl.psum)
    nisa.nc_transpose(d, t)
    return _store(d, nl.float32)


@nki.jit
def transpose_refused(a, case):
    P, F = a.shape
    if case == "hbm_data":
        d = nl.ndarray((F, P), dtype=a.dtype, buffer=nl.sbuf)
        nisa.nc_transpose(d, a)
    elif case == "dst_shape":
        t = nl.ndarray((P, F), dtype=a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a)
        d = nl.ndarray((P, F), dtype=a.dtype, buffer=nl.sbuf)
        nisa.nc_transpose(d, t)
    return _store(d, a.dtype)


@nki.jit
def matmul_shapes_refused(a, case):
    """Operands whose shapes the page's "Tile size" rules out."""
    st = nl.ndarray((128, 128), dtype=a.dtype, buffer=nl.sbuf)
    mv = nl.ndarray((64, 32), dtype=a.dtype, buffer=nl.sbuf)
    nisa.memset(st, 1.0)
    nisa.memset(mv, 1.0)
    acc = nl.ndarray((128, 32), dtype=nl.float32, buffer=nl.psum)
    if case == "partitions":
        nisa.nc_matmul(acc, st, mv)
    elif case == "tile_too_small":
        nisa.nc_matmul(acc, st[0:64, :], mv, tile_position=(0, 0), tile_size=(64, 64))
    elif case == "dst_shape":
        nisa.nc_matmul(acc[0:64, :], st[0:64, :], mv)
    elif case == "stationary_wide":
        wide = nl.ndarray((64, 256), dtype=a.dtype, buffer=nl.sbuf)
        nisa.memset(wide, 1.0)
        nisa.nc_matmul(acc, wide, mv)
    elif case == "psum_operand":
        ps = nl.ndarray((64, 32), dtype=nl.float32, buffer=nl.psum)
        nisa.memset(ps, 1.0)
        nisa.nc_matmul(acc, st[0:64, :], ps)
    return _store(acc)


@on("trn2")
def transpose_by_version(a):
    """The dst dtype a portable kernel picks: fp32 on NeuronCore-v2, the input's from v3."""
    P, F = a.shape
    t = nl.ndarray((P, F), dtype=nl.bfloat16, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    dt = nl.float32 if nisa.get_nc_version() < nisa.nc_version.gen3 else nl.bfloat16
    d = nl.ndarray((F, P), dtype=dt, buffer=nl.psum)
    nisa.nc_transpose(d, t)
    return _store(d, dt)


def bf16(x):
    """float32 -> the nearest bfloat16 (ties to even), as float32 (finite values)."""
    bits = np.asarray(x, dtype=np.float32).view(np.uint32)
    bits = (bits + (((bits >> 16) & 1) + 0x7FFF)) & 0xFFFF0000
    return bits.astype(np.uint32).view(np.float32)


def operands(seed, k=512, m=64, n=48):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((k, m)).astype(np.float32),
            rng.standard_normal((k, n)).astype(np.float32))


def partial(a, b, ks):
    """The fp32 products of the 128-row slices ks, summed (in float64: the comparison allows
    fp32 accumulation's rounding)."""
    return sum(a[k * 128:(k + 1) * 128].astype(np.float64).T @
               b[k * 128:(k + 1) * 128].astype(np.float64) for k in ks)


class AccumulateTest(unittest.TestCase):
    def check(self, got, want):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)

    def test_none_over_a_k_loop_is_the_sum(self):
        a, b = operands(1)
        for mode in ("none", "unrolled_none", "k_positive", "false_then_true"):
            with self.subTest(mode=mode):
                self.check(matmul_modes(a, b, mode), partial(a, b, range(4)))

    def test_false_in_every_iteration_keeps_only_the_last_product(self):
        a, b = operands(2)
        got = matmul_modes(a, b, "false")
        self.check(got, partial(a, b, [3]))
        self.assertGreater(np.abs(got - partial(a, b, range(4))).max(), 1.0)

    def test_a_flag_that_turns_false_again_restarts_the_accumulation(self):
        a, b = operands(3)
        self.check(matmul_modes(a, b, "restart_at_2"), partial(a, b, [2, 3]))

    def test_each_block_first_write_overwrites_it(self):
        a, b = operands(4)
        got = matmul_per_block(a, b)
        self.check(got[0], partial(a, b, [0, 1]))
        self.check(got[1], partial(a, b, [2, 3]))

    def test_none_per_location_across_regions(self):
        a, b = operands(11, k=128)
        p = partial(a, b, [0])
        want = p.copy()
        want[:, 0:16] *= 2
        self.check(matmul_regions(a, b, "inside"), want)
        self.check(matmul_regions(a, b, "union"), 2 * p)
        with self.assertRaises(KernelNotTraced) as caught:
            matmul_regions(a, b, "partial")
        self.assertIn("newapi_tensor_engine_test.py:", str(caught.exception))
        self.assertIn("is partly a region of 'acc' an earlier matmul wrote", str(caught.exception))

    def test_none_per_location_across_symbolic_loop_nests(self):
        # The accumulation groups of a loop traced once would overwrite at the second nest and
        # at every outer iteration (1x the product, a silent mistrace found in review): the
        # loops are unrolled so that each location's first write is known.
        a, b = operands(13, k=128, n=128)
        p = partial(a, b, [0])
        self.check(matmul_across_loop_nests(a, b, "two_nests"), 2 * p)
        self.check(matmul_across_loop_nests(a, b, "outer_revisits"), 16 * p)

    def test_bf16_destination_on_trn3_rounds_the_product(self):
        a, b = operands(5, k=128)
        want = bf16((a.T @ b).astype(np.float32))
        np.testing.assert_allclose(matmul_bf16_dst_trn3(a, b), want, rtol=1e-2, atol=1e-2)

    def test_none_adds_to_a_memset_on_trn3(self):
        a, b = operands(6, k=128)
        self.check(matmul_onto_memset_trn3(a, b), 2.0 + partial(a, b, [0]))

    def test_a_flag_of_a_short_loop_is_decided_per_iteration(self):
        # 4 iterations with known bounds are unrolled (frontend/README.md "Loops of the new
        # API"): overwrite, add, overwrite, add
        a, b = operands(12, k=128)
        self.check(matmul_refused(a, b, "alternating_short"), 2 * partial(a, b, [0]))

    def test_hints_and_pe_tiling_keep_the_product(self):
        a, b = operands(7, k=128)
        self.check(matmul_hints(a, b), partial(a, b, [0]))


class MatmulRefusalTest(unittest.TestCase):
    CASES = {
        "true_first": "uninitialised PSUM location is undefined",
        "true_after_nl_zeros": "only nl.zeros has written",
        "none_onto_memset": "undefined on hardware",
        "bad_flag": "accumulate= takes None, True or False",
        "double_row": "perf_mode='double_row' is not modelled",
        "perf_mode_int": "a raw integer is not a mode",
        "perf_mode_unknown": "perf_mode= takes nisa.matmul_perf_mode.none or .double_row",
        "hint_not_bool": "is_transpose= takes True or False",
        "int_dst": "dst is int32; the Tensor engine writes fp32 PSUM",
        "true_onto_copy": "accumulate=True, but 'acc' was written by an instruction other",
        "bf16_dst": "needs NeuronCore-v4",
        "sbuf_dst": "dst is in SBUF; this call writes PSUM",
        "tile_size_32": "column 32",
        "tile_position_only": "must both be set",
        "tile_position_off_grid": "a start is a multiple of the tile size",
        "residue_split": "residue classes",
    }

    def test_each_is_refused_at_the_kernel_line(self):
        a, b = operands(8, k=128)
        for case, words in self.CASES.items():
            with self.subTest(case=case):
                with self.assertRaises(KernelNotTraced) as caught:
                    matmul_refused(a, b, case)
                self.assertIn("newapi_tensor_engine_test.py:", str(caught.exception))
                self.assertIn(words, str(caught.exception))

    def test_shapes(self):
        a = np.zeros((1, 1), dtype=np.float32)
        for case, words in (("partitions", "stationary has 128 partitions, moving 64"),
                            ("tile_too_small", "tile_size columns (free size) 64 is smaller"),
                            ("dst_shape", "differ in partitions or elements per partition"),
                            ("psum_operand", "moving is in PSUM; the Tensor engine reads SBUF"),
                            ("stationary_wide", "stationary's free size is 256; at most 128")):
            with self.subTest(case=case):
                with self.assertRaises(KernelNotTraced) as caught:
                    matmul_shapes_refused(a, case)
                self.assertIn("newapi_tensor_engine_test.py:", str(caught.exception))
                self.assertIn(words, str(caught.exception))

    def test_moving_wider_than_a_psum_bank_before_v4(self):
        a, b = operands(9, k=128, n=1024)
        with self.assertRaises(KernelNotTraced) as caught:
            matmul_wide_moving(a, b)
        self.assertIn("at most 512 on NeuronCore-v2", str(caught.exception))

    def test_is_transpose_from_v3_is_the_transpose_mode(self):
        a, b = operands(10, k=128)
        with self.assertRaises(KernelNotTraced) as caught:
            matmul_is_transpose_trn2(a, b)
        self.assertIn("is_transpose=True is not modelled", str(caught.exception))


class TransposeTest(unittest.TestCase):
    def setUp(self):
        rng = np.random.default_rng(20)
        self.a = bf16(rng.standard_normal((64, 96)).astype(np.float32))
        self.small = bf16(rng.standard_normal((32, 16)).astype(np.float32))

    def test_tensor_engine_per_generation(self):
        # v2: a matmul with an identity into fp32 PSUM; v3+: the transpose mode keeps bf16
        for gen, dt in (("trn1", nl.float32), ("trn2", nl.bfloat16), ("trn3", nl.bfloat16)):
            with self.subTest(gen=gen):
                got = _transposer(gen, dt, nl.psum)(self.a)
                np.testing.assert_array_equal(np.asarray(got, dtype=np.float32), self.a.T)
        np.testing.assert_array_equal(np.asarray(transpose_by_version(self.a), np.float32),
                                      self.a.T)

    def test_vector_engine_when_dst_is_in_sbuf(self):
        got = _transposer("trn1", nl.bfloat16, nl.sbuf)(self.small)
        np.testing.assert_array_equal(got, self.small.T)

    def test_refusals(self):
        cases = [
            (_transposer("trn1", nl.bfloat16, nl.psum), self.a,
             "on NeuronCore-v2 the Tensor engine's transpose is a matmul and writes fp32"),
            (_transposer("trn2", nl.float32, nl.psum), self.a, "must equal data.dtype"),
            (_transposer("trn1", nl.bfloat16, nl.sbuf), self.a, "transposes up to 32x32"),
            (_transposer("trn1", nl.float32, nl.sbuf), self.small, "must equal data.dtype"),
            (_transposer("trn1", nl.float32, nl.sbuf, nisa.engine.tensor), self.small,
             "the Tensor engine reads SBUF and writes PSUM"),
            (_transposer("trn1", nl.float32, nl.psum, nisa.engine.gpsimd), self.small,
             "is not one the call runs on"),
        ]
        cases += [
            (lambda x: transpose_dtype_refused(x, nl.int32), self.small,
             "the model's Tensor-engine transpose is a float matmul"),
            (lambda x: transpose_dtype_refused(x, nl.float8_e4m3), self.small,
             "writes fp8 as 16-bit PSUM elements"),
        ]
        cases += [
            (lambda x: transpose_refused(x, "hbm_data"), self.small,
             "data is in HBM; a transpose reads SBUF or PSUM"),
            (lambda x: transpose_refused(x, "dst_shape"), self.small,
             "dst (32, 16) is not data (32, 16) transposed"),
        ]
        for kernel, arr, words in cases:
            with self.subTest(words=words):
                with self.assertRaises(KernelNotTraced) as caught:
                    kernel(arr)
                self.assertIn("newapi_tensor_engine_test.py:", str(caught.exception))
                self.assertIn(words, str(caught.exception))


if __name__ == "__main__":
    unittest.main()

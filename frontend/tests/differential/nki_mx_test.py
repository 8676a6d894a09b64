"""Differential cases, new dialect: the MX calls of NeuronCore-v4, nisa.quantize_mx and
nisa.nc_matmul_mx, on small kernels of this file, against NumPy implementations of the documented
semantics written here (not the model's code):
- packed x4 elements: four fp8 values in 32 bits (byte q = value q) or four fp4 e2m1 values in
  16 bits (nibble q = value q) (MX deep dive nki/deep-dives/mxfp-matmul.rst, "Data Tensor"; the
  byte order is the one NumPy's little-endian `view(np.uint32)` of four fp8 bytes gives);
- a group is 8 partitions x one packed element; its scale byte b means 2^(b - 127), 0xFF NaN
  (OCP MX v1.0, E8M0) and sits in row (k // 32) * 32 + (k // 8) % 4 of the scale tile (deep dive,
  "Scale Tensor");
- quantize_mx: X = 2^(floor(log2 max|v|) - (Emax - 1)), Emax 8 (e4m3fn) / 15 (e5m2), 2^-127 for
  an all-zero group; dst = round-to-nearest-even(v / X) (the rounding is the model's choice: the
  docstring names none);
- nc_matmul_mx: dst[m, n] = sum over k, q of S[k, m, q] X_s[k, m] V[k, n, q] X_v[k, n].
Run by `python3 -m ncverify_nki.run` (ctest label `frontend`)."""

import unittest

import numpy as np

import nki
import nki.isa as nisa
import nki.language as nl
from diffharness import run_case
from mx_reference import (_fp4_table, _fp8_table, golden_matmul, golden_quantize,
                          scale_row)
from targets import default, on

default("trn1")

_KINDS = {"e4m3fn": nl.float8_e4m3fn_x4, "e5m2": nl.float8_e5m2_x4, "e2m1": nl.float4_e2m1fn_x4}


# ------------------------------------------------------------------ the kernel

@on("trn3")
def mx_kernel(st_words, st_scale, src, st_kind, mv_kind):
    """quantize_mx of src (bf16 in SBUF), then nc_matmul_mx of the stationary words (viewed as
    st_kind) with it, once whole and once as K/32 row tiles accumulated with explicit flags."""
    K, M = st_words.shape
    N = src.shape[1] // 4
    st_x4 = st_words.ap(dtype=st_kind, pattern=[[M, K], [1, M]], offset=0)
    st = nl.ndarray((K, M), dtype=st_kind, buffer=nl.sbuf)
    nisa.dma_copy(dst=st, src=st_x4)
    ss = nl.ndarray((K, M), dtype=nl.uint8, buffer=nl.sbuf)
    nisa.dma_copy(dst=ss, src=st_scale)
    x32 = nl.ndarray((K, 4 * N), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=x32, src=src)
    x = nl.ndarray((K, 4 * N), dtype=nl.bfloat16, buffer=nl.sbuf)
    nisa.tensor_copy(dst=x, src=x32)
    q = nl.ndarray((K, N), dtype=mv_kind, buffer=nl.sbuf)
    qs = nl.ndarray((K, N), dtype=nl.uint8, buffer=nl.sbuf)
    nisa.memset(dst=qs, value=0)  # quantize_mx writes 4 rows per quadrant; the copy out reads all
    nisa.quantize_mx(dst=q, src=x, dst_scale=qs, name="quantize")
    whole = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul_mx(dst=whole, stationary=st, moving=q, stationary_scale=ss, moving_scale=qs,
                      name="whole")
    tiled = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.psum)
    for t in range(K // 32):
        rows = slice(32 * t, 32 * t + 32)
        nisa.nc_matmul_mx(dst=tiled, stationary=st[rows, :], moving=q[rows, :],
                          stationary_scale=ss[rows, :], moving_scale=qs[rows, :],
                          tile_position=(32 * t, 0), tile_size=(32, 128), accumulate=t > 0)
    outs = []
    for ps in (whole, tiled):
        sb = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_copy(dst=sb, src=ps)
        o = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=o, src=sb)
        outs.append(o)
    oq = nl.ndarray((K, N), dtype=mv_kind, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=oq, src=q)
    oqs = nl.ndarray((K, N), dtype=nl.uint8, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=oqs, src=qs)
    return outs[0], outs[1], oq, oqs


def _random_words(c, shape, kind):
    """Packed words whose every value is a finite code of `kind`."""
    bits = 4 if kind == "e2m1" else 8
    table = _fp4_table() if kind == "e2m1" else _fp8_table(kind)
    finite = np.array([v for v in range(1 << bits) if np.isfinite(table[v])], dtype=np.uint64)
    codes = finite[c.rng.integers(0, len(finite), size=shape + (4,))]
    words = sum(codes[..., q] << np.uint64(bits * q) for q in range(4))
    return words.astype(np.uint16 if kind == "e2m1" else np.uint32)


class Mx(unittest.TestCase):
    def test_quantize_and_matmul(self):
        """quantize_mx's data words and scale bytes bit for bit; nc_matmul_mx within the fp32
        accumulation bound (4K terms, 4K * 2^-24 of the sum of |terms|), whole and as 32-row
        tiles accumulated with explicit flags."""
        def body(c):
            K = int(c.rng.choice([32, 64, 96, 128]))
            M = 2 * int(c.rng.integers(1, 17))
            N = int(c.rng.integers(1, 17))
            st_kind = str(c.rng.choice(["e4m3fn", "e5m2", "e2m1"]))
            mv_kind = str(c.rng.choice(["e4m3fn", "e5m2"]))
            st = _random_words(c, (K, M), st_kind)
            st_scale = c.ints((K, M), 118, 134, dtype=np.uint8)
            # bf16 values whose groups span magnitudes 2^-12 .. 2^12, one all-zero group
            x = c.bf16_values((K, 4 * N), -1.0, 1.0).astype(np.float64)
            e = c.rng.integers(-12, 13, size=(K // 8, N))
            x *= 2.0 ** np.repeat(np.repeat(e, 8, axis=0), 4, axis=1)
            x[0:8, 0:4] = 0.0
            whole, tiled, q, qs = mx_kernel(st, st_scale, x.astype(np.float32), _KINDS[st_kind],
                                            _KINDS[mv_kind])
            want_q, want_s = golden_quantize(x, mv_kind)
            c.check("quantize_mx data (%s)" % mv_kind, q, want_q)
            rows = [scale_row(8 * g) for g in range(K // 8)]
            c.check("quantize_mx scales", qs[rows], want_s)
            want, mag = golden_matmul(st, st_kind, st_scale, want_q, mv_kind, qs)
            bound = 4 * K * 2.0 ** -24 * mag
            for what, got in (("nc_matmul_mx", whole), ("nc_matmul_mx row tiles", tiled)):
                c.check("%s (%s x %s)" % (what, st_kind, mv_kind), got, want,
                        atol=float(bound.max()) + 1e-30)
        run_case("nkc_mx", body)


@on("trn3")
def mx_small_kernel(src, mode):
    """One quantize_mx (and a matmul of its output) on [32, 4F] bf16, with a defect per mode."""
    P, F4 = src.shape
    x32 = nl.ndarray((P, F4), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=x32, src=src)
    x = nl.ndarray((P, F4), dtype=nl.bfloat16, buffer=nl.sbuf)
    nisa.tensor_copy(dst=x, src=x32)
    kind = nl.float4_e2m1fn_x4 if mode == "fp4_dst" else nl.float8_e4m3fn_x4
    q = nl.ndarray((P, F4 // 4), dtype=kind, buffer=nl.sbuf)
    qs = nl.ndarray((P // 8 if mode != "short_scale" else 2, F4 // 4), dtype=nl.uint8,
                    buffer=nl.sbuf)
    nisa.quantize_mx(dst=q, src=x, dst_scale=qs)
    ps = nl.ndarray((F4 // 4, F4 // 4), dtype=nl.float32, buffer=nl.psum)
    if mode == "loop_none":
        for _ in nl.affine_range(2):
            nisa.nc_matmul_mx(dst=ps, stationary=q, moving=q, stationary_scale=qs,
                              moving_scale=qs)
    else:
        nisa.nc_matmul_mx(dst=ps, stationary=q, moving=q, stationary_scale=qs, moving_scale=qs)
    sb = nl.ndarray(ps.shape, dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=sb, src=ps)
    o = nl.ndarray(ps.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=o, src=sb)
    return o


mx_small_kernel_trn2 = on("trn2")(mx_small_kernel.__wrapped__ if hasattr(
    mx_small_kernel, "__wrapped__") else mx_small_kernel)


class MxRefusals(unittest.TestCase):
    """What the documentation does not define or forbids is refused, each saying why."""

    def _fails(self, kernel, x, mode, words):
        from ncverify_nki.simulate import SimulationError

        with self.assertRaises(SimulationError) as e:
            kernel(x, mode)
        self.assertIn(words, str(e.exception))

    def test_refusals(self):
        x = np.linspace(-1, 1, 32 * 8, dtype=np.float32).reshape(32, 8)
        once = mx_small_kernel(x, "ok")
        self.assertEqual(once.shape, (2, 2))
        # accumulate=None in a loop the trace unrolls: the first product overwrites, the second
        # adds (the docstring's auto-detection, PSUM location by location)
        np.testing.assert_array_equal(mx_small_kernel(x, "loop_none"), 2 * once)
        self._fails(mx_small_kernel, x, "fp4_dst", "quantize_mx writes float8_e4m3fn_x4 or")
        self._fails(mx_small_kernel, x, "short_scale", "dst_scale has 2 rows")
        self._fails(mx_small_kernel_trn2, x, "ok", "exists on NeuronCore-v4 and newer only")
        nan = x.copy()
        nan[3, 5] = np.nan
        self._fails(mx_small_kernel, nan, "ok", "is NaN; the page does not define the scale")
        tiny = np.full((32, 8), 2.0 ** -125, np.float32)
        self._fails(mx_small_kernel, tiny, "ok", "is below E8M0's 2^-127")


class MxImport(unittest.TestCase):
    def test_param_dtype_and_packed_input(self):
        """`ncverify import -p kind=float8_e5m2_x4`: a positional parameter given by --param;
        .ap(dtype=) of an unread uint32 input declares it fp8_e5m2_x4; uint16 words cannot be
        fp8 x4 (4 bytes) and are refused."""
        import os
        import subprocess

        here = os.path.dirname(os.path.abspath(__file__))
        cmd = [os.environ["NCVERIFY"], "import", os.path.join(here, "mx_param_kernel.py") +
               ":mx_param_kernel", "--gen", "trn3", "-p", "kind=float8_e5m2_x4"]
        done = subprocess.run(cmd + ["--input", "words=uint32[32,4]"], capture_output=True,
                              text=True)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn("input words : hbm fp8_e5m2_x4 [32, 4]", done.stdout)
        bad = subprocess.run(cmd + ["--input", "words=uint16[32,4]"], capture_output=True,
                             text=True)
        self.assertEqual(bad.returncode, 2)
        self.assertIn("no reinterpretation of a tensor's bytes", bad.stderr)


if __name__ == "__main__":
    unittest.main()

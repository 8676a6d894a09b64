"""NumPy reference of the documented MX semantics (NKI 0.6 docstrings of nki.isa.quantize_mx and
nki.isa.nc_matmul_mx; MX deep dive nki/deep-dives/mxfp-matmul.rst; OCP Microscaling Formats v1.0),
written for the tests from the documentation, not from the model's code: fp8/fp4 decoding, x4
unpacking, the quadrant scale layout, the 2x block scale of quantize_mx with round-to-nearest-even
(the rounding is the model's choice: the docstring names none) and the MX product. Used by
nki_mx_test.py and by hand to check `ncverify run` of the nki-samples MX tutorial."""

import numpy as np

_EMAX = {"e4m3fn": 8, "e5m2": 15}


def _fp8_table(kind):
    """Value of every fp8 code: e4m3fn (bias 7, no Inf, S.1111.111 NaN) or e5m2 (bias 15,
    IEEE-like)."""
    out = np.empty(256)
    for b in range(256):
        sign = -1.0 if b & 0x80 else 1.0
        if kind == "e4m3fn":
            e, m = (b >> 3) & 0xF, b & 7
            if e == 15 and m == 7:
                out[b] = np.nan
            elif e == 0:
                out[b] = sign * m / 8 * 2.0 ** -6
            else:
                out[b] = sign * (1 + m / 8) * 2.0 ** (e - 7)
        else:
            e, m = (b >> 2) & 0x1F, b & 3
            if e == 31:
                out[b] = sign * np.inf if m == 0 else np.nan
            elif e == 0:
                out[b] = sign * m / 4 * 2.0 ** -14
            else:
                out[b] = sign * (1 + m / 4) * 2.0 ** (e - 15)
    return out


def _fp4_table():
    out = np.empty(16)
    for n in range(16):
        sign = -1.0 if n & 8 else 1.0
        e, m = (n >> 1) & 3, n & 1
        out[n] = sign * (m * 0.5 if e == 0 else (1 + m / 2) * 2.0 ** (e - 1))
    return out


def unpack(words, kind):
    """[rows, F] packed words -> [rows, F, 4] values (float64)."""
    w = words.astype(np.uint64)
    if kind == "e2m1":
        codes = np.stack([(w >> (4 * q)) & 0xF for q in range(4)], axis=-1)
        return _fp4_table()[codes]
    codes = np.stack([(w >> (8 * q)) & 0xFF for q in range(4)], axis=-1)
    return _fp8_table(kind)[codes]


def scale_row(k):
    return (k // 32) * 32 + (k // 8) % 4


def scale_values(scale, rows, cols):
    """The scale of data row k, column c: 2^(b - 127), NaN for 0xFF."""
    b = scale[[scale_row(k) for k in range(rows)], :cols].astype(np.float64)
    return np.where(b == 255, np.nan, 2.0 ** (b - 127))


def golden_matmul(st, st_kind, st_scale, mv, mv_kind, mv_scale):
    """The exact product (float64) and the sum of |terms| (for the fp32 accumulation bound)."""
    K, M = st.shape
    N = mv.shape[1]
    a = unpack(st, st_kind) * scale_values(st_scale, K, M)[:, :, None]
    b = unpack(mv, mv_kind) * scale_values(mv_scale, K, N)[:, :, None]
    return np.einsum("kmq,knq->mn", a, b), np.einsum("kmq,knq->mn", np.abs(a), np.abs(b))


def _rne_fp8(values, kind):
    """Round-to-nearest-even fp8 codes of finite values within range (no saturation needed:
    the 2x block scale keeps |v / X| < 2^Emax)."""
    table = _fp8_table(kind)
    pos = np.array([b for b in range(128) if np.isfinite(table[b])])
    mags = table[pos]
    order = np.argsort(mags)
    pos, mags = pos[order], mags[order]
    a = np.abs(values)
    i = np.clip(np.searchsorted(mags, a), 1, len(mags) - 1)
    lo, hi = mags[i - 1], mags[i]
    pick_hi = (a - lo > hi - a) | ((a - lo == hi - a) & (pos[i] % 2 == 0))
    code = np.where(pick_hi, pos[i], pos[i - 1])
    return (code | np.where(np.signbit(values), 0x80, 0)).astype(np.uint64)


def golden_quantize(x, kind):
    """x [P, 4F] (bf16 values as float64) -> (packed words [P, F] uint32, scale bytes [P/8, F])."""
    P, F4 = x.shape
    F = F4 // 4
    groups = x.reshape(P // 8, 8, F, 4)
    amax = np.abs(groups).max(axis=(1, 3))
    _, ex = np.frexp(amax)  # amax = m * 2^ex, m in [0.5, 1): floor(log2 amax) = ex - 1
    s = np.where(amax == 0, -127, ex - 1 - (_EMAX[kind] - 1))
    scaled = groups / (2.0 ** s)[:, None, :, None]
    codes = _rne_fp8(scaled.reshape(P, F, 4), kind)
    words = sum(codes[:, :, q] << np.uint64(8 * q) for q in range(4)).astype(np.uint32)
    return words, (s + 127).astype(np.uint8)



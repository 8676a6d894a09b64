// Tensor engine matmul, tensor-engine transpose (an identity matmul) and vector transpose.
//
// Matmul contract (semantics.h): for each (m, n): acc = +0.0f; for k = 0..K-1:
// acc = fma(st[k][m], mv[k][n], acc); then dst = accumulate ? fl(dst_old + acc) : acc, encoded
// to dst's dtype. Model choice on top of it: a NaN acc is written as the default NaN
// 0x7fc00000 (the PE array's NaN payloads are not modelled, and a SIMD FMA chain's payload
// depends on operand order), before the optional accumulate add.
//
// Fast path: decode stationary and moving once into dense fp32 arrays (row by row through the
// fast row decoders), run the register-blocked FMA microkernel (matmul_fma.cpp; 6 rows of M x
// 16 columns of N in ymm accumulators, k innermost and in order 0..K-1, so every element's chain
// is exactly the contract's) or the portable std::fma loop (same bits: fma rounds once), then
// NaN-canonicalise, add dst_old if accumulating, and encode row by row.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "model/semantics_internal.h"

namespace ncv {

using namespace sem;

namespace sem {

bool matmul_fma_supported() {
#if defined(__x86_64__) || defined(__i386__)
  static const bool ok = __builtin_cpu_supports("fma") && __builtin_cpu_supports("avx2");
  return ok;
#else
  return false;
#endif
}

// Per (m, n) the k loop runs 0..K-1 in order; the n loop inside only interleaves independent
// chains. std::fma is exactly rounded, so this matches the FMA microkernel bit for bit.
void matmul_f32_portable(const float* a, const float* b, float* c, int64_t k, int64_t m,
                         int64_t n) {
  std::fill(c, c + m * n, 0.0f);
  for (int64_t i = 0; i < m; ++i) {
    float* cr = c + i * n;
    for (int64_t kk = 0; kk < k; ++kk) {
      const float av = a[kk * m + i];
      const float* br = b + kk * n;
      for (int64_t j = 0; j < n; ++j) cr[j] = std::fma(av, br[j], cr[j]);
    }
    for (int64_t j = 0; j < n; ++j) {
      if (is_nan(cr[j])) cr[j] = default_nan();
    }
  }
}

}  // namespace sem

namespace {

void decode_matrix(const View& v, std::vector<float>& out) {
  const int64_t n = v.free_elems();
  out.resize(static_cast<size_t>(std::max<int64_t>(v.rows, 0) * n));
  const RowShape s = row_shape(v);
  for (int64_t r = 0; r < v.rows; ++r) decode_row(v, s, r, out.data() + r * n);
}

void matmul_reference(const View& dst, const View& st, const View& mv, bool accumulate) {
  const int64_t k = st.rows, m = st.free_elems(), n = mv.free_elems();
  std::vector<float> acc(static_cast<size_t>(m * n));
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      float a = 0.0f;
      for (int64_t kk = 0; kk < k; ++kk) {
        a = std::fma(decode_to_float(st.dtype, ref_load(st, kk, i)),
                     decode_to_float(mv.dtype, ref_load(mv, kk, j)), a);
      }
      acc[i * n + j] = a;
    }
  }
  ref_write_all(dst, [&](int64_t i, int64_t j) {
    float a = is_nan(acc[i * n + j]) ? default_nan() : acc[i * n + j];
    if (accumulate) a = f_add(decode_to_float(dst.dtype, ref_load(dst, i, j)), a);
    return encode_from_float(dst.dtype, a);
  });
}

void matmul_fast(const View& dst, const View& st, const View& mv, bool accumulate) {
  const int64_t k = st.rows, m = st.free_elems(), n = mv.free_elems();
  thread_local std::vector<float> a, b, c, old;
  decode_matrix(st, a);
  decode_matrix(mv, b);
  c.resize(static_cast<size_t>(m * n));
  if (!(matmul_fma_supported() && matmul_f32_fma(a.data(), b.data(), c.data(), k, m, n))) {
    matmul_f32_portable(a.data(), b.data(), c.data(), k, m, n);
  }
  // dst_old is read completely before any write (dst rows could alias each other).
  if (accumulate) decode_matrix(dst, old);
  const RowShape ds = row_shape(dst);
  std::vector<uint32_t> scratch(n);
  for (int64_t i = 0; i < std::min(dst.rows, m); ++i) {
    float* ci = c.data() + i * n;
    if (accumulate) {
      const float* oi = old.data() + i * n;
      for (int64_t j = 0; j < n; ++j) ci[j] = f_add(oi[j], ci[j]);
    }
    encode_row(dst, ds, i, ci, scratch.data());
  }
}

// src [P, F] is the stationary operand and the P x P fp32 identity the moving one, exactly as
// the hardware does it, so the result follows the matmul contract: -0 becomes +0 (+0 + -0), and
// a NaN or Inf in src[k][f] poisons all of dst row f (x * 0 = NaN joins every output chain).
void transpose_tensor_reference(const View& dst, const View& src) {
  const int64_t p = std::max<int64_t>(src.rows, 0);
  std::vector<float> identity(static_cast<size_t>(p * p), 0.0f);
  for (int64_t i = 0; i < p; ++i) identity[i * p + i] = 1.0f;
  View id;
  id.base = reinterpret_cast<uint8_t*>(identity.data());
  id.dtype = DType::fp32;
  id.rows = p;
  id.row_stride = p * 4;
  id.free_rank = 1;
  id.sizes[0] = p;
  id.strides[0] = 4;
  matmul_reference(dst, src, id, /*accumulate=*/false);
}

// The identity matmul's result without its P^3 multiply-adds. Chain for dst[m][n]: acc = +0;
// for k: acc = fma(src[k][m], k == n, acc). A finite x contributes x * 0 = +-0 for k != n, which
// leaves acc unchanged (+0 + -0 = +0), and acc + x = x + 0 at k == n. A non-finite x at k != n
// contributes NaN. Hence: NaN if column m has a non-finite value at another row or src[n][m] is
// NaN; +-Inf if src[n][m] is the column's only non-finite value and is +-Inf; else src[n][m] + 0
// (-0 -> +0). NaN is written as the default NaN, as matmul_fast writes it.
void transpose_tensor_fast(const View& dst, const View& src) {
  const int64_t p = std::max<int64_t>(src.rows, 0), f = src.free_elems();
  thread_local std::vector<float> a, c;
  thread_local std::vector<int32_t> nonfinite;
  decode_matrix(src, a);
  nonfinite.assign(static_cast<size_t>(f), 0);
  for (int64_t k = 0; k < p; ++k) {
    const float* row = a.data() + k * f;
    for (int64_t m = 0; m < f; ++m) nonfinite[m] += !std::isfinite(row[m]);
  }
  c.resize(static_cast<size_t>(f * p));
  for (int64_t m = 0; m < f; ++m) {
    float* out = c.data() + m * p;
    if (nonfinite[m] == 0) {
      for (int64_t n = 0; n < p; ++n) out[n] = a[n * f + m] + 0.0f;
      continue;
    }
    for (int64_t n = 0; n < p; ++n) {
      const float x = a[n * f + m];
      const int32_t others = nonfinite[m] - !std::isfinite(x);
      out[n] = others > 0 || is_nan(x) ? default_nan() : x + 0.0f;
    }
  }
  const RowShape ds = row_shape(dst);
  std::vector<uint32_t> scratch(static_cast<size_t>(p));
  for (int64_t m = 0; m < std::min(dst.rows, f); ++m)
    encode_row(dst, ds, m, c.data() + m * p, scratch.data());
}

}  // namespace

void exec_matmul(ExecMode mode, const View& dst, const View& stationary, const View& moving,
                 bool accumulate) {
  if (mode == ExecMode::reference) {
    matmul_reference(dst, stationary, moving, accumulate);
  } else {
    matmul_fast(dst, stationary, moving, accumulate);
  }
}

void exec_transpose_tensor(ExecMode mode, const View& dst, const View& src) {
  if (mode == ExecMode::reference) {
    transpose_tensor_reference(dst, src);
  } else {
    transpose_tensor_fast(dst, src);
  }
}

// dst[f, p] = src[p, f], bits moved unchanged (through fp32 only if the dtypes differ, which the
// interpreter never asks for).
void exec_transpose_vector(ExecMode mode, const View& dst, const View& src) {
  const bool same = dst.dtype == src.dtype;
  auto convert = [&](uint32_t bits) {
    return same ? bits : encode_from_float(dst.dtype, decode_to_float(src.dtype, bits));
  };
  if (mode == ExecMode::reference) {
    ref_write_all(dst, [&](int64_t f, int64_t p) { return convert(ref_load(src, p, f)); });
    return;
  }
  const int64_t p = std::max<int64_t>(src.rows, 0), f = src.free_elems();
  std::vector<uint32_t> all(static_cast<size_t>(p * f));
  const RowShape ss = row_shape(src);
  for (int64_t r = 0; r < p; ++r) load_row_bits(src, ss, r, all.data() + r * f);
  RowWriter w(dst, true);  // src was read completely
  std::vector<uint32_t> bits(p);
  for (int64_t i = 0; i < std::min(dst.rows, f); ++i) {
    for (int64_t j = 0; j < p; ++j) bits[j] = convert(all[j * f + i]);
    w.emit(i, bits.data());
  }
  w.finish();
}

}  // namespace ncv

// Tensor engine matmul, tensor-engine transpose (an identity matmul) and vector transpose.
//
// Matmul contract (semantics.h): for each (m, n): acc = +0.0f; for k = 0..K-1:
// acc = fma(st[k][m], mv[k][n], acc); then dst = accumulate ? fl(dst_old + acc) : acc, encoded
// to dst's dtype. Model choice on top of it: a NaN acc is written as the default NaN
// 0x7fc00000 (the PE array's NaN payloads are not modelled, and a SIMD FMA chain's payload
// depends on operand order), before the optional accumulate add.
//
// Fast path: decode stationary and moving row by row into the packed panels of the best vector
// microkernel this CPU runs (matmul_kernel_impl.h: AVX-512 8 x 32 or AVX2 6 x 16 register
// blocks, k innermost and in order 0..K-1, so every element's chain is exactly the contract's),
// or into dense arrays for the portable std::fma loop (same bits: fma rounds once), then
// NaN-canonicalise, add dst_old if accumulating, and encode row by row.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "model/semantics/internal.h"

namespace ncv {
inline namespace semantics {

// Defined in matmul_avx512.cpp / matmul_fma.cpp; false when built without that ISA.
bool matmul_packed_avx512(const float* apack, const float* bpack, float* c, int64_t k, int64_t m,
                          int64_t n);
bool matmul_packed_avx2(const float* apack, const float* bpack, float* c, int64_t k, int64_t m,
                        int64_t n);

const std::vector<const MatmulKernel*>& matmul_kernels() {
  static const std::vector<const MatmulKernel*> kernels = [] {
    static const MatmulKernel avx512{"avx512", 8, 32, matmul_packed_avx512};
    static const MatmulKernel avx2{"avx2_fma", 6, 16, matmul_packed_avx2};
    std::vector<const MatmulKernel*> v;
#if defined(__x86_64__) || defined(__i386__)
    // A kernel is listed only if the CPU has its ISA and the file was built with it (a 1x1x1
    // product reports whether the build has it).
    auto built = [](const MatmulKernel& kern) {
      float a[8] = {}, b[32] = {}, c = 0.0f;
      return kern.run(a, b, &c, 1, 1, 1);
    };
    if (__builtin_cpu_supports("avx512f") && built(avx512)) v.push_back(&avx512);
    if (__builtin_cpu_supports("fma") && __builtin_cpu_supports("avx2") && built(avx2)) {
      v.push_back(&avx2);
    }
#endif
    return v;
  }();
  return kernels;
}

namespace {

// Row kk (len floats) into its place in panels of W columns: panel p holds [k][W]. W is a
// template parameter so that a full panel's copy is a fixed-size move, not a library call.
template <int64_t W>
void pack_row_w(const float* row, int64_t len, int64_t kk, int64_t k, float* pack) {
  int64_t p = 0;
  for (; (p + 1) * W <= len; ++p) std::memcpy(pack + (p * k + kk) * W, row + p * W, W * 4);
  if (p * W < len) std::copy(row + p * W, row + len, pack + (p * k + kk) * W);
}

void pack_row(const float* row, int64_t len, int64_t kk, int64_t k, int64_t width, float* pack) {
  switch (width) {
    case 6:
      return pack_row_w<6>(row, len, kk, k, pack);
    case 8:
      return pack_row_w<8>(row, len, kk, k, pack);
    case 16:
      return pack_row_w<16>(row, len, kk, k, pack);
    case 32:
      return pack_row_w<32>(row, len, kk, k, pack);
    default:
      for (int64_t p = 0; p * width < len; ++p) {
        const int64_t cols = std::min(width, len - p * width);
        std::copy(row + p * width, row + p * width + cols, pack + (p * k + kk) * width);
      }
  }
}

}  // namespace

void pack_matmul_a(const MatmulKernel& kern, const float* a, float* apack, int64_t k, int64_t m) {
  std::fill(apack, apack + (m + kern.mr - 1) / kern.mr * k * kern.mr, 0.0f);
  for (int64_t kk = 0; kk < k; ++kk) pack_row(a + kk * m, m, kk, k, kern.mr, apack);
}

void pack_matmul_b(const MatmulKernel& kern, const float* b, float* bpack, int64_t k, int64_t n) {
  std::fill(bpack, bpack + (n + kern.nr - 1) / kern.nr * k * kern.nr, 0.0f);
  for (int64_t kk = 0; kk < k; ++kk) pack_row(b + kk * n, n, kk, k, kern.nr, bpack);
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

// Stationary and moving are decoded row by row straight into the kernel's panels (or into dense
// arrays for the portable loop); then dst = c (+ dst_old), encoded row by row.
void matmul_fast(const View& dst, const View& st, const View& mv, bool accumulate) {
  const int64_t k = st.rows, m = st.free_elems(), n = mv.free_elems();
  thread_local std::vector<float> a, b, c, old, row;
  c.resize(static_cast<size_t>(m * n));
  const auto& kernels = matmul_kernels();
  if (kernels.empty()) {
    decode_matrix(st, a);
    decode_matrix(mv, b);
    matmul_f32_portable(a.data(), b.data(), c.data(), k, m, n);
  } else {
    const MatmulKernel& kern = *kernels.front();
    const int64_t mr = kern.mr, nr = kern.nr, mb = (m + mr - 1) / mr, nb = (n + nr - 1) / nr;
    // Only a partial last panel has padding, which must be +0.
    a.resize(static_cast<size_t>(mb * k * mr));
    b.resize(static_cast<size_t>(nb * k * nr));
    if (m % mr != 0) std::fill(a.end() - k * mr, a.end(), 0.0f);
    if (n % nr != 0) std::fill(b.end() - k * nr, b.end(), 0.0f);
    row.resize(static_cast<size_t>(std::max(m, n)));
    const RowShape ss = row_shape(st), ms = row_shape(mv);
    for (int64_t kk = 0; kk < k; ++kk) {
      decode_row(st, ss, kk, row.data());
      pack_row(row.data(), m, kk, k, mr, a.data());
      decode_row(mv, ms, kk, row.data());
      pack_row(row.data(), n, kk, k, nr, b.data());
    }
    kern.run(a.data(), b.data(), c.data(), k, m, n);
  }
  // dst_old is read completely before any write (dst rows could alias each other).
  if (accumulate) decode_matrix(dst, old);
  const RowShape ds = row_shape(dst);
  std::vector<uint32_t> scratch(n);
  std::vector<float> scratch_f(accumulate ? n : 0);
  for (int64_t i = 0; i < std::min(dst.rows, m); ++i) {
    float* ci = c.data() + i * n;
    if (accumulate) {
      // Plain adds (they vectorise) equal f_add unless a NaN comes out; then the rule decides.
      const float* oi = old.data() + i * n;
      float* sum = scratch_f.data();
      for (int64_t j = 0; j < n; ++j) sum[j] = oi[j] + ci[j];
      if (any_nan(sum, n)) {
        for (int64_t j = 0; j < n; ++j) sum[j] = f_add(oi[j], ci[j]);
      }
      ci = sum;
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
    for (int64_t m = 0; m < f; ++m) {  // exponent all ones = Inf or NaN (bits: vectorises)
      uint32_t u;
      std::memcpy(&u, row + m, 4);
      nonfinite[m] += static_cast<int32_t>((u & 0x7f800000u) == 0x7f800000u);
    }
  }
  c.resize(static_cast<size_t>(f * p));
  // c = a^T + 0 in 16 x 16 blocks (both sides stay in L1), then the columns with a non-finite
  // value are redone by the rule.
  constexpr int64_t kB = 16;
  for (int64_t n0 = 0; n0 < p; n0 += kB) {
    for (int64_t m0 = 0; m0 < f; m0 += kB) {
      const int64_t n1 = std::min(p, n0 + kB), m1 = std::min(f, m0 + kB);
      for (int64_t n = n0; n < n1; ++n) {
        for (int64_t m = m0; m < m1; ++m) c[m * p + n] = a[n * f + m] + 0.0f;
      }
    }
  }
  for (int64_t m = 0; m < f; ++m) {
    if (nonfinite[m] == 0) continue;
    float* out = c.data() + m * p;
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

}  // namespace semantics
}  // namespace ncv

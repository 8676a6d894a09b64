// MX (microscaling) instructions: nc_matmul_mx and quantize_mx (NeuronCore-v4).
//
// Sources (aws-neuron-sdk nki/api/nki/isa/__init__.py docstrings; deep dive
// nki/deep-dives/mxfp-matmul.rst; OCP Microscaling Formats v1.0):
// - a scaling group is 8 partitions x 4 values (one packed element): 32 values, one E8M0 scale
//   byte, value 2^(b - 127), 0xFF NaN (OCP 5.4.1);
// - nc_matmul_mx contracts over the partitions and the 4 values inside each packed element;
// - quantize_mx's block scale is X = 2^(floor(log2 amax) - (Emax - 1)), Emax 8 (e4m3fn) or 15
//   (e5m2); X = 2^-127 for an all-zero group; dst = cast(src / X).
// Model choices where the pages are silent (model/README.md "MX"):
// - nc_matmul_mx dequantizes each operand to fp32 (value * 2^(scale - 127), rounded once to
//   fp32, as the NumPy golden of the nki-samples MX tutorial does) and accumulates like
//   nc_matmul (fma chain, k outer, the 4 packed values inner, NaN written as 0x7fc00000);
// - quantize_mx rounds to nearest even (the model's fp8 encoding). With the 2x block scale
//   |src / X| < 2^Emax, so nothing saturates; a group holding NaN or Inf, or one whose scale
//   would fall below 2^-127, is not defined by the page: the run stops (undefined_result).
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "model/semantics/internal.h"

namespace ncv {
inline namespace semantics {

namespace {

constexpr int kPacked = 4;  // values per packed element

float dequantized(const View& data, const View& scale, int64_t k, int64_t col, int q) {
  const uint32_t bits = load_bits(data.dtype, data.at(k, col));
  const float v = mx_packed_value(data.dtype, bits, q);
  const uint8_t b = static_cast<uint8_t>(load_bits(DType::uint8, scale.at(mx_scale_row(k), col)));
  if (b == 0xff) return std::numeric_limits<float>::quiet_NaN();
  // v has at most 3 significand bits: the product is exact in double, rounded once to fp32.
  return static_cast<float>(std::ldexp(static_cast<double>(v), static_cast<int>(b) - 127));
}

int emax_of(DType packed) {
  return packed == DType::fp8_e5m2_x4 ? 15 : 8;
}

DType element_of(DType packed) {
  return packed == DType::fp8_e5m2_x4 ? DType::fp8_e5m2 : DType::fp8_e4m3fn;
}

}  // namespace

void exec_matmul_mx(const View& dst, const View& stationary, const View& moving,
                    const View& stationary_scale, const View& moving_scale, bool accumulate) {
  const int64_t K = stationary.rows, M = stationary.free_elems(), N = moving.free_elems();
  // Dequantized operands, [K * 4][M] and [K * 4][N], row kk = 4k + q.
  std::vector<float> a(static_cast<size_t>(K * kPacked * M));
  std::vector<float> b(static_cast<size_t>(K * kPacked * N));
  for (int64_t k = 0; k < K; ++k) {
    for (int q = 0; q < kPacked; ++q) {
      for (int64_t m = 0; m < M; ++m) {
        a[static_cast<size_t>((k * kPacked + q) * M + m)] =
            dequantized(stationary, stationary_scale, k, m, q);
      }
      for (int64_t n = 0; n < N; ++n) {
        b[static_cast<size_t>((k * kPacked + q) * N + n)] =
            dequantized(moving, moving_scale, k, n, q);
      }
    }
  }
  for (int64_t m = 0; m < M; ++m) {
    for (int64_t n = 0; n < N; ++n) {
      float acc = 0.0f;
      for (int64_t kk = 0; kk < K * kPacked; ++kk) {
        acc = std::fma(a[static_cast<size_t>(kk * M + m)], b[static_cast<size_t>(kk * N + n)], acc);
      }
      if (std::isnan(acc)) acc = std::bit_cast<float>(0x7fc00000u);
      uint8_t* p = dst.at(m, n);
      if (accumulate) acc = f_add(decode_to_float(dst.dtype, load_bits(dst.dtype, p)), acc);
      store_bits(dst.dtype, p, encode_from_float(dst.dtype, acc));
    }
  }
}

std::string exec_quantize_mx(const View& dst, const View& src, const View& dst_scale) {
  const int64_t P = src.rows, F = dst.free_elems();
  const int emax = emax_of(dst.dtype);
  const DType elem = element_of(dst.dtype);
  auto value = [&](int64_t p, int64_t f, int q) {
    return decode_to_float(src.dtype, load_bits(src.dtype, src.at(p, f * kPacked + q)));
  };
  // Scale exponent of each group, checked for every group before anything is written.
  std::vector<int> scale_exp(static_cast<size_t>((P / kMxGroupPartitions) * F));
  for (int64_t g = 0; g < P / kMxGroupPartitions; ++g) {
    for (int64_t f = 0; f < F; ++f) {
      float amax = 0.0f;
      for (int64_t r = 0; r < kMxGroupPartitions; ++r) {
        for (int q = 0; q < kPacked; ++q) {
          const float v = value(g * kMxGroupPartitions + r, f, q);
          if (!std::isfinite(v)) {
            return "quantize_mx: source row " + std::to_string(g * kMxGroupPartitions + r) +
                   ", element " + std::to_string(f * kPacked + q) + " is " +
                   (std::isnan(v) ? "NaN" : "Inf") +
                   "; the page does not define the scale of a group holding it";
          }
          amax = std::max(amax, std::fabs(v));
        }
      }
      int s = -127;  // all-zero group: X = 2^-127 (the page)
      if (amax > 0.0f) {
        s = std::ilogb(amax) - (emax - 1);
        if (s < -127) {
          return "quantize_mx: the group of rows " + std::to_string(g * kMxGroupPartitions) + ".." +
                 std::to_string(g * kMxGroupPartitions + 7) + ", column " + std::to_string(f) +
                 " has max |value| " + std::to_string(amax) + ", whose scale 2^" +
                 std::to_string(s) +
                 " is below E8M0's 2^-127; the page does not say what the hardware writes";
        }
      }
      scale_exp[static_cast<size_t>(g * F + f)] = s;
    }
  }
  for (int64_t p = 0; p < P; ++p) {
    const int64_t g = p / kMxGroupPartitions;
    for (int64_t f = 0; f < F; ++f) {
      const int s = scale_exp[static_cast<size_t>(g * F + f)];
      uint32_t packed = 0;
      for (int q = 0; q < kPacked; ++q) {
        // |v / X| < 2^Emax: exact in fp32 above fp8's range; far below it only values that
        // round to zero in fp8 anyway lose bits.
        const float scaled = std::ldexp(value(p, f, q), -s);
        packed |= (encode_from_float(elem, scaled) & 0xffu) << (8 * q);
      }
      store_bits(dst.dtype, dst.at(p, f), packed);
      if (p % kMxGroupPartitions == 0) {
        store_bits(DType::uint8, dst_scale.at(mx_scale_row(p), f), static_cast<uint32_t>(s + 127));
      }
    }
  }
  return {};
}

}  // namespace semantics
}  // namespace ncv

// Row decoding/encoding and the aliasing analysis behind the fast paths
// (model/semantics/internal.h).
//
// Decoding must equal decode_to_float element by element. The 8- and 16-bit types decode
// through tables built FROM decode_to_float (equal by construction), except bf16, which decodes
// and encodes with dtype_bf16.h's inline converters, the ones dtype.cpp itself uses (they
// vectorise). fp32 decodes and encodes as the bit identity, which dtype.cpp documents and which
// is probed once (if the probe failed, every element would go through decode_to_float /
// encode_from_float). Other encodes call encode_from_float.
#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <vector>

#include "model/numerics/bf16_rows.h"
#include "model/numerics/dtype_bf16.h"
#include "model/semantics/internal.h"

namespace ncv {
inline namespace semantics {
namespace {

constexpr bool kLittle = std::endian::native == std::endian::little;

inline uint32_t ld16(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8);
}
inline uint32_t ld32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  if constexpr (std::endian::native == std::endian::big) {
    v = (v >> 24) | ((v >> 8) & 0xff00u) | ((v << 8) & 0xff0000u) | (v << 24);
  }
  return v;
}
inline void st16(uint8_t* p, uint32_t v) {
  p[0] = static_cast<uint8_t>(v);
  p[1] = static_cast<uint8_t>(v >> 8);
}
inline void st32(uint8_t* p, uint32_t v) {
  if constexpr (std::endian::native == std::endian::big) {
    v = (v >> 24) | ((v >> 8) & 0xff00u) | ((v << 8) & 0xff0000u) | (v << 24);
  }
  std::memcpy(p, &v, 4);
}

bool probe_fp32_identity() {
  static constexpr uint32_t kProbes[] = {0x00000000u, 0x80000000u, 0x00000001u, 0x807fffffu,
                                         0x3f800000u, 0x7f7fffffu, 0x7f800000u, 0xff800000u,
                                         0x7f800001u, 0xffbfffffu, 0x7fc00000u, 0xffc12345u};
  for (uint32_t b : kProbes) {
    if (to_bits(decode_to_float(DType::fp32, b)) != b) return false;
    if (encode_from_float(DType::fp32, from_bits(b)) != b) return false;
  }
  return true;
}
bool fp32_identity() {
  static const bool ok = probe_fp32_identity();
  return ok;
}

inline float bf16_decode_inline(uint32_t h) {
  return from_bits(bf16_decode_bits(h));
}

std::vector<float> make_table(DType t, uint32_t n) {
  std::vector<float> tab(n);
  for (uint32_t b = 0; b < n; ++b) tab[b] = decode_to_float(t, b);
  return tab;
}

// Decode table of an 8- or 16-bit dtype, nullptr for 32-bit dtypes.
const float* decode_table(DType t) {
  switch (t) {
    case DType::fp8_e4m3: {
      static const std::vector<float> tab = make_table(t, 256);
      return tab.data();
    }
    case DType::fp8_e4m3fn: {
      static const std::vector<float> tab = make_table(t, 256);
      return tab.data();
    }
    case DType::fp8_e5m2: {
      static const std::vector<float> tab = make_table(t, 256);
      return tab.data();
    }
    case DType::uint8: {
      static const std::vector<float> tab = make_table(t, 256);
      return tab.data();
    }
    case DType::bf16: {
      static const std::vector<float> tab = make_table(t, 65536);
      return tab.data();
    }
    case DType::fp16: {
      static const std::vector<float> tab = make_table(t, 65536);
      return tab.data();
    }
    case DType::uint16: {
      static const std::vector<float> tab = make_table(t, 65536);
      return tab.data();
    }
    default:
      return nullptr;
  }
}

struct Extent {
  uintptr_t lo = 0, hi = 0;  // [lo, hi)
  bool empty = true;
};

// Byte span [lo, hi) of one row relative to the row's element (0, ..., 0).
void row_span(const View& v, int64_t& lo, int64_t& hi) {
  lo = 0;
  hi = static_cast<int64_t>(dtype_size(v.dtype));
  for (int d = 0; d < v.free_rank; ++d) {
    const int64_t reach = (v.sizes[d] - 1) * v.strides[d];
    if (reach < 0)
      lo += reach;
    else
      hi += reach;
  }
}

Extent extent(const View& v) {
  Extent e;
  if (v.rows <= 0) return e;
  for (int d = 0; d < v.free_rank; ++d) {
    if (v.sizes[d] <= 0) return e;
  }
  int64_t lo = 0, hi = 0;
  row_span(v, lo, hi);
  int64_t first = 0, last = 0;
  if (v.row_offsets != nullptr) {
    first = last = v.row_offsets[0];
    for (int64_t r = 1; r < v.rows; ++r) {
      const int64_t s = r * v.row_stride + v.row_offsets[r];
      first = std::min(first, s);
      last = std::max(last, s);
    }
  } else {
    first = std::min<int64_t>(0, (v.rows - 1) * v.row_stride);
    last = std::max<int64_t>(0, (v.rows - 1) * v.row_stride);
  }
  const auto base = reinterpret_cast<uintptr_t>(v.base);
  e.lo = base + static_cast<uintptr_t>(first + lo);
  e.hi = base + static_cast<uintptr_t>(last + hi);
  e.empty = false;
  return e;
}

}  // namespace

RowShape row_shape(const View& v) {
  RowShape s;
  int k = 0;
  for (int d = 0; d < v.free_rank; ++d) {
    if (v.sizes[d] <= 0) {
      s.empty = true;
      s.rank = 1;
      return s;
    }
    if (v.sizes[d] == 1) continue;
    if (k > 0 && s.strides[k - 1] == v.sizes[d] * v.strides[d]) {
      // The previous dim steps over exactly one run of this dim: merge them.
      s.sizes[k - 1] *= v.sizes[d];
      s.strides[k - 1] = v.strides[d];
      continue;
    }
    s.sizes[k] = v.sizes[d];
    s.strides[k] = v.strides[d];
    ++k;
  }
  if (k == 0) {
    s.sizes[0] = 1;
    s.strides[0] = 0;
    k = 1;
  }
  s.rank = k;
  return s;
}

void load_row_bits(const View& v, const RowShape& s, int64_t r, uint32_t* out) {
  prefetch_row(v, s, r + kPrefetchRows, false);
  switch (dtype_size(v.dtype)) {
    case 1:
      for_each_run(v, s, r, [&](const uint8_t* p, int64_t n, int64_t st) {
        for (int64_t i = 0; i < n; ++i) *out++ = p[i * st];
      });
      return;
    case 2:
      for_each_run(v, s, r, [&](const uint8_t* p, int64_t n, int64_t st) {
        if (st == 2 && kLittle) {
          for (int64_t i = 0; i < n; ++i) {
            uint16_t h;
            std::memcpy(&h, p + 2 * i, 2);
            out[i] = h;
          }
          out += n;
          return;
        }
        for (int64_t i = 0; i < n; ++i) *out++ = ld16(p + i * st);
      });
      return;
    default:
      for_each_run(v, s, r, [&](const uint8_t* p, int64_t n, int64_t st) {
        if (st == 4 && kLittle) {
          std::memcpy(out, p, static_cast<size_t>(n) * 4);
          out += n;
          return;
        }
        for (int64_t i = 0; i < n; ++i) *out++ = ld32(p + i * st);
      });
      return;
  }
}

void store_row_bits(const View& v, const RowShape& s, int64_t r, const uint32_t* in) {
  prefetch_row(v, s, r + kPrefetchRows, true);
  switch (dtype_size(v.dtype)) {
    case 1:
      for_each_run(v, s, r, [&](uint8_t* p, int64_t n, int64_t st) {
        for (int64_t i = 0; i < n; ++i) p[i * st] = static_cast<uint8_t>(*in++);
      });
      return;
    case 2:
      for_each_run(v, s, r, [&](uint8_t* p, int64_t n, int64_t st) {
        if (st == 2 && kLittle) {
          for (int64_t i = 0; i < n; ++i) {
            const auto h = static_cast<uint16_t>(in[i]);
            std::memcpy(p + 2 * i, &h, 2);
          }
          in += n;
          return;
        }
        for (int64_t i = 0; i < n; ++i) st16(p + i * st, *in++);
      });
      return;
    default:
      for_each_run(v, s, r, [&](uint8_t* p, int64_t n, int64_t st) {
        if (st == 4 && kLittle) {
          std::memcpy(p, in, static_cast<size_t>(n) * 4);
          in += n;
          return;
        }
        for (int64_t i = 0; i < n; ++i) st32(p + i * st, *in++);
      });
      return;
  }
}

void decode_row(const View& v, const RowShape& s, int64_t r, float* out) {
  prefetch_row(v, s, r + kPrefetchRows, false);
  const DType t = v.dtype;
  if (t == DType::fp32 && fp32_identity()) {
    for_each_run(v, s, r, [&](const uint8_t* p, int64_t n, int64_t st) {
      if (st == 4 && kLittle) {
        std::memcpy(out, p, static_cast<size_t>(n) * 4);
        out += n;
        return;
      }
      for (int64_t i = 0; i < n; ++i) *out++ = from_bits(ld32(p + i * st));
    });
    return;
  }
  if (t == DType::bf16) {
    for_each_run(v, s, r, [&](const uint8_t* p, int64_t n, int64_t st) {
      if (st == 2 && kLittle) {
        bf16_decode_run(p, out, n);
        out += n;
        return;
      }
      for (int64_t i = 0; i < n; ++i) *out++ = bf16_decode_inline(ld16(p + i * st));
    });
    return;
  }
  if (const float* tab = decode_table(t)) {
    if (dtype_size(t) == 1) {
      for_each_run(v, s, r, [&](const uint8_t* p, int64_t n, int64_t st) {
        for (int64_t i = 0; i < n; ++i) *out++ = tab[p[i * st]];
      });
    } else {
      for_each_run(v, s, r, [&](const uint8_t* p, int64_t n, int64_t st) {
        for (int64_t i = 0; i < n; ++i) *out++ = tab[ld16(p + i * st)];
      });
    }
    return;
  }
  for_each_run(v, s, r, [&](const uint8_t* p, int64_t n, int64_t st) {
    for (int64_t i = 0; i < n; ++i) *out++ = decode_to_float(t, ld32(p + i * st));
  });
}

void encode_floats(DType t, const float* in, uint32_t* out, int64_t n) {
  if (t == DType::fp32 && fp32_identity()) {
    std::memcpy(out, in, static_cast<size_t>(n) * 4);
    return;
  }
  if (t == DType::bf16) {
    for (int64_t i = 0; i < n; ++i) out[i] = bf16_encode_bits(to_bits(in[i]));
    return;
  }
  for (int64_t i = 0; i < n; ++i) out[i] = encode_from_float(t, in[i]);
}

void decode_bits(DType t, const uint32_t* in, float* out, int64_t n) {
  if (t == DType::fp32 && fp32_identity()) {
    std::memcpy(out, in, static_cast<size_t>(n) * 4);
    return;
  }
  if (const float* tab = decode_table(t)) {
    const uint32_t mask = dtype_size(t) == 1 ? 0xffu : 0xffffu;
    for (int64_t i = 0; i < n; ++i) out[i] = tab[in[i] & mask];
    return;
  }
  for (int64_t i = 0; i < n; ++i) out[i] = decode_to_float(t, in[i]);
}

void encode_row(const View& v, const RowShape& s, int64_t r, const float* in, uint32_t* scratch) {
  prefetch_row(v, s, r + kPrefetchRows, true);
  if (v.dtype == DType::fp32 && fp32_identity()) {
    for_each_run(v, s, r, [&](uint8_t* p, int64_t n, int64_t st) {
      if (st == 4 && kLittle) {
        std::memcpy(p, in, static_cast<size_t>(n) * 4);
        in += n;
        return;
      }
      for (int64_t i = 0; i < n; ++i) st32(p + i * st, to_bits(*in++));
    });
    return;
  }
  if (v.dtype == DType::bf16) {
    for_each_run(v, s, r, [&](uint8_t* p, int64_t n, int64_t st) {
      if (st == 2 && kLittle) {
        bf16_encode_run(in, p, n);
      } else {
        for (int64_t i = 0; i < n; ++i) st16(p + i * st, bf16_encode_bits(to_bits(in[i])));
      }
      in += n;
    });
    return;
  }
  const int64_t n = v.free_elems();
  encode_floats(v.dtype, in, scratch, n);
  store_row_bits(v, s, r, scratch);
}

bool rows_independent(const View& dst, const View& input) {
  const Extent ed = extent(dst), ei = extent(input);
  if (ed.empty || ei.empty || ed.hi <= ei.lo || ei.hi <= ed.lo) return true;  // disjoint
  if (dst.rows != input.rows) return false;
  if (dst.rows == 1) return true;  // the single row is read completely before it is written
  // Same row layout with rows that do not overlap each other: dst row r only touches input
  // row r, which was read just before.
  if (dst.row_offsets != nullptr || input.row_offsets != nullptr) return false;
  // Equal positive row strides S (two buffers of one partition-major memory array): dst row r
  // meets input row r + k exactly for the integers k in the open interval
  // ((delta + lo_d - hi_i) / S, (delta + hi_d - lo_i) / S), delta = dst base - input base.
  // Streaming is safe when no k >= 1 (an input row not read yet) is in it.
  const int64_t stride = dst.row_stride;
  if (stride <= 0 || input.row_stride != stride) return false;
  int64_t lo_d = 0, hi_d = 0, lo_i = 0, hi_i = 0;
  row_span(dst, lo_d, hi_d);
  row_span(input, lo_i, hi_i);
  const int64_t delta = static_cast<int64_t>(reinterpret_cast<uintptr_t>(dst.base) -
                                             reinterpret_cast<uintptr_t>(input.base));
  const int64_t below = delta + lo_d - hi_i, above = delta + hi_d - lo_i;
  // The smallest k >= 1 with k * S > below.
  const int64_t floor_div = below >= 0 ? below / stride : -((-below + stride - 1) / stride);
  const int64_t k = std::max<int64_t>(1, floor_div + 1);
  return k >= dst.rows || k * stride >= above;
}

RowWriter::RowWriter(const View& dst, bool stream)
    : dst_(dst), shape_(row_shape(dst)), stream_(stream), n_(dst.free_elems()) {
  if (!stream_) staged_.resize(static_cast<size_t>(std::max<int64_t>(dst.rows, 0) * n_));
}

void RowWriter::emit(int64_t r, const uint32_t* bits) {
  if (stream_) {
    store_row_bits(dst_, shape_, r, bits);
  } else {
    std::copy(bits, bits + n_, staged_.begin() + r * n_);
  }
}

void RowWriter::emit_floats(int64_t r, const float* values) {
  scratch_.resize(static_cast<size_t>(n_));
  if (stream_) {
    encode_row(dst_, shape_, r, values, scratch_.data());
  } else {
    encode_floats(dst_.dtype, values, scratch_.data(), n_);
    emit(r, scratch_.data());
  }
}

void RowWriter::finish() {
  if (stream_) return;
  for (int64_t r = 0; r < dst_.rows; ++r) store_row_bits(dst_, shape_, r, staged_.data() + r * n_);
}

}  // namespace semantics
}  // namespace ncv

// fuzz_dtype (fuzz/README.md): fp32 values from fuzzer bytes through every conversion the model
// has, compared bit for bit with an exact reference (support/dtype_reference.h).
//
// Paths checked, for every DType: encode_from_float, decode_to_float, quantize, store_bits /
// load_bits; for bf16 additionally the run conversions (bf16_encode_run / bf16_decode_run and
// every loop build this CPU has, bf16_rows.h), on the whole batch of values at an unaligned
// offset so the vector bodies and their tails both run.
//
// Input: a sequence of records, each a kind byte and a payload, decoded into up to kMaxValues
// fp32 values. Besides raw bit patterns, records aim at the places rounding goes wrong: exact
// midpoints between two neighbouring values of a format (and one fp32 ulp either side), and
// integer + 0.5 ties, which random bit patterns almost never hit.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "fuzz/support/byte_reader.h"
#include "fuzz/support/dtype_reference.h"
#include "fuzz/support/fuzz_check.h"
#include "model/numerics/bf16_rows.h"
#include "model/numerics/dtype.h"

namespace {

using ncv::DType;
namespace ref = ncv::fuzz::dtype_ref;

constexpr const char* kTarget = "fuzz_dtype";
constexpr size_t kMaxValues = 256;

constexpr DType kNarrowFloats[] = {DType::bf16, DType::fp16, DType::fp8_e4m3, DType::fp8_e4m3fn,
                                   DType::fp8_e5m2};

std::string hex(uint32_t v) {
  char b[16];
  std::snprintf(b, sizeof b, "0x%08x", v);
  return b;
}

uint32_t low_bytes(DType t, uint32_t bits) {
  const size_t n = ncv::dtype_size(t);
  return n == 4 ? bits : bits & ((1u << (8 * n)) - 1u);
}

std::string what(const char* path, DType t, uint32_t in, uint32_t got, uint32_t want) {
  return std::string(path) + "(" + std::string(ncv::dtype_name(t)) + ", " + hex(in) + "): model " +
         hex(got) + ", reference " + hex(want);
}

// Adds one fp32 ulp step (delta in {-1, 0, 1}) to a finite positive value, staying finite.
float nudge(float x, int delta) {
  const uint32_t b = std::bit_cast<uint32_t>(x);
  if (delta < 0 && b == 0) return x;
  if (delta > 0 && b >= 0x7f7fffffu) return x;
  return std::bit_cast<float>(b + static_cast<uint32_t>(delta));
}

float decode_value(ncv::fuzz::ByteReader& r) {
  switch (r.byte() % 3) {
    case 0:  // a raw bit pattern
      return r.f32_bits();
    case 1: {  // the midpoint between two neighbouring values of a narrow float format, +-1 ulp
      const ref::Format f = ref::format_of(kNarrowFloats[r.pick(std::size(kNarrowFloats))]);
      const uint32_t top = ref::max_pattern(f);
      const auto lo = static_cast<uint32_t>(r.in_range(0, top));
      // Above the max: the overflow threshold max + ulp/2 (exact in fp32 for every format).
      const double hi_mag = lo < top ? ref::magnitude(f, lo + 1)
                                     : 2 * ref::magnitude(f, top) - ref::magnitude(f, top - 1);
      const auto mid = static_cast<float>((ref::magnitude(f, lo) + hi_mag) / 2);
      const int delta = static_cast<int>(r.pick(3)) - 1;
      const float v = nudge(mid, delta);
      return r.flag() ? -v : v;
    }
    default: {  // n + 0.5 for an integer n (ties of the integer conversions), +-1 ulp
      const auto n = static_cast<double>(r.in_range(-(int64_t{1} << 33), int64_t{1} << 33));
      const auto v = static_cast<float>(n + 0.5);  // rounds for |n| >= 2^23: still a useful value
      return nudge(std::fabs(v), static_cast<int>(r.pick(3)) - 1) * (v < 0 ? -1.0f : 1.0f);
    }
  }
}

void check_scalar(float x) {
  const uint32_t xb = std::bit_cast<uint32_t>(x);
  for (DType t : ncv::kAllDTypes) {
    const uint32_t want = ref::encode(t, x);
    const uint32_t got = low_bytes(t, ncv::encode_from_float(t, x));
    NCV_FUZZ_CHECK(got == want, kTarget, what("encode_from_float", t, xb, got, want));

    const uint32_t back = std::bit_cast<uint32_t>(ncv::decode_to_float(t, want));
    const uint32_t want_back = ref::decode(t, want);
    NCV_FUZZ_CHECK(back == want_back, kTarget, what("decode_to_float", t, want, back, want_back));

    const uint32_t q = std::bit_cast<uint32_t>(ncv::quantize(t, x));
    NCV_FUZZ_CHECK(q == want_back, kTarget, what("quantize", t, xb, q, want_back));

    // The raw bits of x as a pattern of t (decoding patterns no encoder produces: NaN payloads,
    // non-canonical NaNs, fp8 Inf patterns, integers above 2^24).
    const uint32_t raw = low_bytes(t, xb);
    const uint32_t dec = std::bit_cast<uint32_t>(ncv::decode_to_float(t, raw));
    const uint32_t want_dec = ref::decode(t, raw);
    NCV_FUZZ_CHECK(dec == want_dec, kTarget, what("decode_to_float", t, raw, dec, want_dec));

    uint8_t buf[6] = {0xa5, 0xa5, 0xa5, 0xa5, 0xa5, 0xa5};
    ncv::store_bits(t, buf + 1, raw);
    const uint32_t loaded = ncv::load_bits(t, buf + 1);
    NCV_FUZZ_CHECK(loaded == raw, kTarget, what("load_bits(store_bits)", t, raw, loaded, raw));
    NCV_FUZZ_CHECK(buf[0] == 0xa5 && buf[1 + ncv::dtype_size(t)] == 0xa5, kTarget,
                   "store_bits(" + std::string(ncv::dtype_name(t)) + ") wrote outside its element");
  }
}

// The bf16 run conversions on the whole batch, at byte offset `offset` of the bf16 buffer.
void check_bf16_runs(const std::vector<float>& xs, size_t offset) {
  const auto n = static_cast<int64_t>(xs.size());
  std::vector<uint8_t> bytes(2 * xs.size() + offset);
  std::vector<float> decoded(xs.size());

  auto check = [&](const char* name) {
    for (size_t i = 0; i < xs.size(); ++i) {
      const uint32_t want = ref::encode(DType::bf16, xs[i]);
      const uint32_t got = bytes[offset + 2 * i] | (uint32_t{bytes[offset + 2 * i + 1]} << 8);
      NCV_FUZZ_CHECK(
          got == want, kTarget,
          std::string(name) + " encode run [" + std::to_string(i) +
              "]: " + what("bf16_encode", DType::bf16, std::bit_cast<uint32_t>(xs[i]), got, want));
    }
  };
  auto check_decoded = [&](const char* name) {
    for (size_t i = 0; i < xs.size(); ++i) {
      const uint32_t pat = bytes[offset + 2 * i] | (uint32_t{bytes[offset + 2 * i + 1]} << 8);
      const uint32_t want = ref::decode(DType::bf16, pat);
      const uint32_t got = std::bit_cast<uint32_t>(decoded[i]);
      NCV_FUZZ_CHECK(got == want, kTarget,
                     std::string(name) + " decode run [" + std::to_string(i) +
                         "]: " + what("bf16_decode", DType::bf16, pat, got, want));
    }
  };

  ncv::bf16_encode_run(xs.data(), bytes.data() + offset, n);
  check("bf16_encode_run");
  ncv::bf16_decode_run(bytes.data() + offset, decoded.data(), n);
  check_decoded("bf16_decode_run");

  for (const ncv::detail::Bf16Loops& loops : ncv::detail::bf16_row_loops()) {
    std::fill(bytes.begin(), bytes.end(), uint8_t{0x5a});
    loops.encode(xs.data(), bytes.data() + offset, n);
    check(loops.name);
    // Decode the raw fp32 bits' high halves too: NaN payloads the encoder never writes.
    for (size_t i = 0; i < xs.size(); ++i) {
      const uint32_t b = std::bit_cast<uint32_t>(xs[i]);
      bytes[offset + 2 * i] = static_cast<uint8_t>(b >> 16);
      bytes[offset + 2 * i + 1] = static_cast<uint8_t>(b >> 24);
    }
    loops.decode(bytes.data() + offset, decoded.data(), n);
    check_decoded(loops.name);
    for (size_t k = 0; k < offset; ++k) {
      NCV_FUZZ_CHECK(bytes[k] == 0x5a, kTarget,
                     std::string(loops.name) + " encode run wrote before its start");
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ncv::fuzz::ByteReader r(data, size);
  const size_t offset = r.pick(2);  // odd offsets: unaligned bf16 runs
  std::vector<float> xs;
  while (!r.empty() && xs.size() < kMaxValues) xs.push_back(decode_value(r));
  for (float x : xs) check_scalar(x);
  check_bf16_runs(xs, offset);
  return 0;
}

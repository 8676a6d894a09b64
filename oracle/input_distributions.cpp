#include "oracle/input_distributions.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "oracle/bug_exposing_inputs.h"
#include "oracle/precision_contract.h"

namespace ncv::oracle {

const std::vector<Distribution>& all_distributions() {
  static const std::vector<Distribution> all = {
      Distribution::uniform,         Distribution::uniform_positive,
      Distribution::normal,          Distribution::large_logits,
      Distribution::constant_keys,   Distribution::spike,
      Distribution::v_offset,        Distribution::bit_patterns,
      Distribution::tiny_and_zero,   Distribution::peaked,
      Distribution::overflow_logits, Distribution::rowmax_across_tiles,
      Distribution::masked_dominant, Distribution::signed_values,
      Distribution::stale_cache};
  return all;
}

const std::vector<Distribution>& gate_distributions() {
  static const std::vector<Distribution> gate = {
      Distribution::peaked,          Distribution::overflow_logits,
      Distribution::large_logits,    Distribution::rowmax_across_tiles,
      Distribution::masked_dominant, Distribution::signed_values,
      Distribution::uniform,         Distribution::normal,
      Distribution::constant_keys,   Distribution::spike,
      Distribution::v_offset,        Distribution::bit_patterns,
      Distribution::tiny_and_zero,   Distribution::stale_cache,
      Distribution::uniform_positive};
  return gate;
}

int64_t rowmax_target_tile(const AttentionSpec& spec, int64_t b, int64_t i) {
  return detail::rowmax_target(spec, b, i);
}

const char* distribution_name(Distribution d) {
  switch (d) {
    case Distribution::uniform:
      return "uniform";
    case Distribution::uniform_positive:
      return "uniform_positive";
    case Distribution::normal:
      return "normal";
    case Distribution::large_logits:
      return "large_logits";
    case Distribution::constant_keys:
      return "constant_keys";
    case Distribution::spike:
      return "spike";
    case Distribution::v_offset:
      return "v_offset";
    case Distribution::bit_patterns:
      return "bit_patterns";
    case Distribution::tiny_and_zero:
      return "tiny_and_zero";
    case Distribution::peaked:
      return "peaked";
    case Distribution::overflow_logits:
      return "overflow_logits";
    case Distribution::rowmax_across_tiles:
      return "rowmax_across_tiles";
    case Distribution::masked_dominant:
      return "masked_dominant";
    case Distribution::signed_values:
      return "signed_values";
    case Distribution::stale_cache:
      return "stale_cache";
  }
  return "?";
}

namespace {

double to_input(DType t, double x) {
  return static_cast<double>(quantize(t, static_cast<float>(x)));
}

// A random finite value of dtype t with |x| in about [2^-8, 2^4]: random mantissa bits.
double random_bits(DType t, std::mt19937_64& rng) {
  const double mant = 1.0 + std::ldexp(static_cast<double>(rng() & 0xFFFFFF), -24);
  const int exp = static_cast<int>(rng() % 13) - 8;
  return to_input(t, (rng() & 1 ? -1.0 : 1.0) * std::ldexp(mant, exp));
}

}  // namespace

AttentionInputs generate_inputs(const AttentionSpec& s, Distribution d, uint64_t seed) {
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(d));
  std::uniform_real_distribution<double> U(-1.0, 1.0), U01(0.0, 1.0);
  std::normal_distribution<double> N(0.0, 1.0);
  const DType t = s.input_dtype;
  AttentionInputs in;
  in.q.resize(static_cast<size_t>(s.q_elements()));
  in.k.resize(static_cast<size_t>(s.kv_elements()));
  in.v.resize(static_cast<size_t>(s.kv_elements()));
  auto fill = [&](std::vector<double>& x, auto&& draw) {
    for (double& e : x) e = to_input(t, draw());
  };
  const double sd = std::sqrt(static_cast<double>(s.d_head));
  switch (d) {
    case Distribution::uniform:
    case Distribution::constant_keys:
    case Distribution::spike:
      fill(in.q, [&] { return U(rng); });
      fill(in.k, [&] { return U(rng); });
      fill(in.v, [&] { return U(rng); });
      break;
    case Distribution::uniform_positive:
      fill(in.q, [&] { return U01(rng); });
      fill(in.k, [&] { return U01(rng); });
      fill(in.v, [&] { return U01(rng); });
      break;
    case Distribution::normal:
      fill(in.q, [&] { return N(rng); });
      fill(in.k, [&] { return N(rng); });
      fill(in.v, [&] { return N(rng); });
      break;
    case Distribution::large_logits: {
      // |s| = |scale| sigma^2 |q.k| ~ |scale| sigma^2 sqrt(d) |N(0,1)|: typical 30, tails ~100.
      const double sigma = std::sqrt(30.0 / (std::fabs(s.scale) * sd));
      fill(in.q, [&] { return sigma * N(rng); });
      fill(in.k, [&] { return sigma * N(rng); });
      fill(in.v, [&] { return N(rng); });
      break;
    }
    case Distribution::v_offset:
      fill(in.q, [&] { return N(rng); });
      fill(in.k, [&] { return N(rng); });
      fill(in.v, [&] { return 100.0 + 0.01 * N(rng); });
      break;
    case Distribution::bit_patterns:
      fill(in.q, [&] { return random_bits(t, rng); });
      fill(in.k, [&] { return random_bits(t, rng); });
      fill(in.v, [&] { return random_bits(t, rng); });
      break;
    case Distribution::tiny_and_zero: {
      const double tiny = 2 * subnormal_half_spacing(t);  // the smallest subnormal
      auto draw = [&] {
        switch (rng() % 4) {
          case 0:
            return -0.0;
          case 1:
            return tiny * static_cast<double>(1 + rng() % 64) * (rng() & 1 ? -1 : 1);
          default:
            return N(rng);
        }
      };
      fill(in.q, draw);
      fill(in.k, draw);
      fill(in.v, draw);
      break;
    }
    case Distribution::peaked:
      detail::make_peaked(s, rng, in);
      break;
    case Distribution::overflow_logits:
      detail::make_overflow_logits(s, rng, in);
      break;
    case Distribution::rowmax_across_tiles:
      detail::make_rowmax_across_tiles(s, rng, in);
      break;
    case Distribution::masked_dominant:
      detail::make_masked_dominant(s, rng, in);
      break;
    case Distribution::signed_values:
      detail::make_signed(s, rng, in);
      break;
    case Distribution::stale_cache:
      detail::make_stale_cache(s, rng, in);
      break;
  }
  const int64_t d_head = s.d_head, rows = s.kv_elements() / d_head;
  if (d == Distribution::constant_keys) {
    for (int64_t r = 1; r < rows; ++r) {
      for (int64_t c = 0; c < d_head; ++c) {
        in.k[static_cast<size_t>(r * d_head + c)] = in.k[static_cast<size_t>(c)];
      }
    }
  }
  if (d == Distribution::spike) {
    // Key j of each (batch, kv head) is a multiple of query j's direction (same batch, first
    // head of the group), so query row j puts most of its weight on key j.
    const int64_t n = std::min(s.seqlen_q, s.seqlen_kv);
    for (int64_t b = 0; b < s.batch; ++b) {
      for (int64_t g = 0; g < s.kv_heads; ++g) {
        for (int64_t j = 0; j < n; ++j) {
          const int64_t h = g * s.group_size();
          for (int64_t c = 0; c < d_head; ++c) {
            const double qv = in.q[static_cast<size_t>(s.q_index(b, h, j, c))];
            in.k[static_cast<size_t>(s.kv_index(b, g, j, c))] =
                to_input(t, 8.0 * qv / (std::fabs(s.scale) * sd));
          }
        }
      }
    }
  }
  return in;
}

}  // namespace ncv::oracle

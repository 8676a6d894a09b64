#include "oracle/bug_exposing_inputs.h"

#include <algorithm>
#include <cmath>

#include "oracle/input_distributions.h"
#include "oracle/precision_contract.h"

namespace ncv::oracle::detail {

namespace {

// Rounded to the input dtype and clamped to its finite range (fp16 and the fp8 types would
// otherwise turn the large structured coordinates into inf).
double to_input(DType t, double x) {
  const double m = dtype_max_finite(t);
  return static_cast<double>(quantize(t, static_cast<float>(std::clamp(x, -m, m))));
}

// The power of two nearest to x > 0: the structured coordinates are small integers times it,
// so they are exact in every float dtype whose range holds them.
double pow2_near(double x) {
  return std::ldexp(1.0, static_cast<int>(std::lround(std::log2(x))));
}

double sign_of(double x) {
  return x < 0 ? -1.0 : 1.0;
}

// Visible keys of query i as [first, last] (inclusive), or nullopt when none is visible.
std::optional<std::pair<int64_t, int64_t>> visible_span(const AttentionSpec& s, int64_t b,
                                                        int64_t i) {
  if (const auto r = s.visible_range(b, i)) {
    if (r->first >= r->second) return std::nullopt;
    return std::make_pair(r->first, r->second - 1);
  }
  int64_t lo = -1, hi = -1;
  for (int64_t j = 0; j < s.seqlen_kv; ++j) {
    if (s.visible(b, i, j)) {
      if (lo < 0) lo = j;
      hi = j;
    }
  }
  if (lo < 0) return std::nullopt;
  return std::make_pair(lo, hi);
}

// Calls f(b, h, i, row pointer) for each query row and g(b, g, j, row pointer) for each logical
// key row (the paged cache's unused blocks keep what fill_noise put there).
template <typename F>
void each_q_row(const AttentionSpec& s, AttentionInputs& in, F&& f) {
  for (int64_t b = 0; b < s.batch; ++b)
    for (int64_t h = 0; h < s.heads; ++h)
      for (int64_t i = 0; i < s.seqlen_q; ++i) f(b, h, i, &in.q[size_t(s.q_index(b, h, i, 0))]);
}
template <typename F>
void each_k_row(const AttentionSpec& s, AttentionInputs& in, F&& f) {
  for (int64_t b = 0; b < s.batch; ++b)
    for (int64_t g = 0; g < s.kv_heads; ++g)
      for (int64_t j = 0; j < s.seqlen_kv; ++j) f(b, g, j, &in.k[size_t(s.kv_index(b, g, j, 0))]);
}

void fill_noise(std::vector<double>& x, DType t, double sigma, std::mt19937_64& rng) {
  std::normal_distribution<double> N(0.0, 1.0);
  for (double& e : x) e = to_input(t, sigma * N(rng));
}

// Noise with standard deviation sigma in coordinates [from, d) of a row.
void row_noise(double* row, int64_t from, int64_t d, DType t, double sigma, std::mt19937_64& rng) {
  std::normal_distribution<double> N(0.0, 1.0);
  for (int64_t c = from; c < d; ++c) row[c] = to_input(t, sigma * N(rng));
}

// Per-coordinate sigma for which the scaled dot product of two noise rows of n coordinates has
// standard deviation `logit_sd`.
double noise_sigma(const AttentionSpec& s, int64_t n, double logit_sd) {
  return n <= 0 ? 0.0 : std::sqrt(logit_sd / (std::fabs(s.scale) * std::sqrt(double(n))));
}

}  // namespace

void make_peaked(const AttentionSpec& s, std::mt19937_64& rng, AttentionInputs& in) {
  // Rank one and coherent: q_i = a_i u, k_j = b_j u with u a +-1 sign vector, so every term of
  // q_i.k_j has the sign of a_i b_j and s_ij = scale d a_i b_j exactly (random signs would give
  // a rounding bound of sum |q_c k_c|, sqrt(d) times the spread). a_i > 0 and b_j <= 0: each
  // row's logits fall from ~0 with a spread of ~8, so the softmax weight sits on the few keys
  // with b_j near 0 while the keys' absolute logits (which the bound charges) stay small. V
  // carries b_j too (v_j = b_j / sigma w + noise, w a sign vector): a changed logit scale moves
  // every row's output one way instead of averaging out over random values.
  const DType t = s.input_dtype;
  const int64_t d = s.d_head;
  const double sigma = std::sqrt(8.0 / (std::fabs(s.scale) * double(d)));
  std::normal_distribution<double> N(0.0, 1.0);
  std::uniform_real_distribution<double> U(0.75, 1.25);
  std::vector<double> u(static_cast<size_t>(d)), w(static_cast<size_t>(d));
  for (double& e : u) e = rng() & 1 ? -1.0 : 1.0;
  for (double& e : w) e = rng() & 1 ? -1.0 : 1.0;
  fill_noise(in.k, t, sigma, rng);
  fill_noise(in.v, t, 1.0, rng);
  const double a_sign = sign_of(s.scale);
  each_q_row(s, in, [&](int64_t, int64_t, int64_t, double* row) {
    const double a = a_sign * U(rng) * sigma;
    for (int64_t c = 0; c < d; ++c) row[c] = to_input(t, a * u[static_cast<size_t>(c)]);
  });
  for (int64_t b = 0; b < s.batch; ++b) {
    for (int64_t g = 0; g < s.kv_heads; ++g) {
      for (int64_t j = 0; j < s.seqlen_kv; ++j) {
        const double bj = -std::fabs(N(rng));
        double* krow = &in.k[static_cast<size_t>(s.kv_index(b, g, j, 0))];
        double* vrow = &in.v[static_cast<size_t>(s.kv_index(b, g, j, 0))];
        for (int64_t c = 0; c < d; ++c) {
          krow[c] = to_input(t, bj * sigma * u[static_cast<size_t>(c)]);
          vrow[c] = to_input(t, bj * w[static_cast<size_t>(c)] + 0.25 * N(rng));
        }
      }
    }
  }
}

void make_overflow_logits(const AttentionSpec& s, std::mt19937_64& rng, AttentionInputs& in) {
  // Every logit is 160 (q[0] = A, k[0] = B, scale A B = 160) plus noise of std ~10 from the other
  // coordinates, so each row's max, even a row with one visible key, is far above 88.7: exp of
  // it overflows fp32 (and bf16) unless the max is subtracted. With d_head = 1 the one
  // coordinate carries the shift times (1 + 5% noise).
  const DType t = s.input_dtype;
  const int64_t d = s.d_head;
  const double target = 160.0 / std::fabs(s.scale);
  const double A = pow2_near(std::sqrt(target)) * sign_of(s.scale), B = target / std::fabs(A);
  const double sigma = noise_sigma(s, d - 1, 10.0);
  std::normal_distribution<double> N(0.0, 1.0);
  fill_noise(in.k, t, sigma, rng);
  auto shifted = [&](double* row, double base) {
    if (d == 1) {
      row[0] = to_input(t, base * (1.0 + 0.05 * N(rng)));
    } else {
      row[0] = to_input(t, base);
      row_noise(row, 1, d, t, sigma, rng);
    }
  };
  each_q_row(s, in, [&](int64_t, int64_t, int64_t, double* row) { shifted(row, A); });
  each_k_row(s, in, [&](int64_t, int64_t, int64_t, double* row) { shifted(row, B); });
  fill_noise(in.v, t, 1.0, rng);
}

int64_t rowmax_target(const AttentionSpec& s, int64_t b, int64_t i) {
  const auto span = visible_span(s, b, i);
  if (!span) return -1;
  const int64_t first = span->first / kKeyTile, last = span->second / kKeyTile;
  const int64_t tiles = (s.seqlen_kv + kKeyTile - 1) / kKeyTile;
  if (s.d_head >= tiles) return first + i % (last - first + 1);
  return i % 2 == 0 ? last : first;
}

void make_rowmax_across_tiles(const AttentionSpec& s, std::mt19937_64& rng, AttentionInputs& in) {
  // Scaled logits: 128 for the keys of the row's target tile, 0 elsewhere, plus noise of std ~1
  // from the spare coordinates (which picks the max inside the tile). With d_head >= tiles the
  // tile is coded one-hot (k_j[tile of j] = 1, q_i[target] = A); otherwise k_j[0] = tile of j and
  // q_i[0] = +-A puts the max in the last (even rows) or first (odd rows) visible tile, 128 per
  // tile above its neighbour. Either way every other tile's max is >= ~100 below the row max.
  const DType t = s.input_dtype;
  const int64_t d = s.d_head, tiles = (s.seqlen_kv + kKeyTile - 1) / kKeyTile;
  const bool one_hot = d >= tiles;
  const int64_t code_dims = one_hot ? tiles : 1;
  const double A = pow2_near(128.0 / std::fabs(s.scale)) * sign_of(s.scale);
  const double sigma = noise_sigma(s, d - code_dims, 1.0);
  fill_noise(in.k, t, sigma, rng);
  each_q_row(s, in, [&](int64_t b, int64_t, int64_t i, double* row) {
    const int64_t target = rowmax_target(s, b, i);
    for (int64_t c = 0; c < code_dims; ++c) row[c] = 0.0;
    if (target >= 0 && one_hot) row[target] = to_input(t, A);
    if (target >= 0 && !one_hot) row[0] = to_input(t, i % 2 == 0 ? A : -A);
    row_noise(row, code_dims, d, t, sigma, rng);
  });
  each_k_row(s, in, [&](int64_t, int64_t, int64_t j, double* row) {
    const int64_t tile = j / kKeyTile;
    for (int64_t c = 0; c < code_dims; ++c) row[c] = 0.0;
    row[one_hot ? tile : 0] = to_input(t, one_hot ? 1.0 : double(tile));
    row_noise(row, code_dims, d, t, sigma, rng);
  });
  fill_noise(in.v, t, 1.0, rng);
}

void make_masked_dominant(const AttentionSpec& s, std::mt19937_64& rng, AttentionInputs& in) {
  // Scaled logits s_ij = g (j - p_i) - 40 with p_i the last visible key of row i: every visible
  // key at or below -40 (the last one at -40), every key after p_i (the masked future of a causal
  // row) higher, the last key highest. The slope g (a power of two near 64 / seqlen_kv) keeps the
  // logits within ~[-104, 24]: a wider span makes the a-priori bound of the cancelling terms
  // infinite. With d_head >= 5 the coordinates code key index j exactly as 64 hi + lo (hi, lo <
  // 64: exact in bf16 up to 4096 keys) and the offset separately (scale A = g, scale O = -40):
  //   q_i = (A, A, -A hi(p_i), -A lo(p_i), O),  k_j = (64 hi(j), lo(j), 64, 1, 1).
  // d_head 2 to 4: one coordinate of up to 128 levels (keys in the same level tie); d_head 1:
  // every logit -40 (a flat row that a mask fill above -40 still dominates).
  const DType t = s.input_dtype;
  const int64_t d = s.d_head;
  const double sg = sign_of(s.scale), as = std::fabs(s.scale);
  const int64_t levels = d >= 5 ? s.seqlen_kv : std::min<int64_t>(s.seqlen_kv, 128);
  auto level = [&](int64_t j) { return j * levels / s.seqlen_kv; };
  const double A = sg * pow2_near(pow2_near(64.0 / double(levels)) / as);
  const double O = -40.0 * sg / as;
  const int64_t code_dims = d >= 5 ? 5 : std::min<int64_t>(d, 3);
  const double sigma = 1.0 / 16;  // spare coordinates: logit noise ~0.01
  fill_noise(in.k, t, sigma, rng);
  each_q_row(s, in, [&](int64_t b, int64_t, int64_t i, double* row) {
    const auto span = visible_span(s, b, i);
    const int64_t p = span ? span->second : 0;
    if (d >= 5) {
      row[0] = row[1] = to_input(t, A);
      row[2] = to_input(t, -A * double(p / 64));
      row[3] = to_input(t, -A * double(p % 64));
      row[4] = to_input(t, O);
    } else if (d >= 2) {
      row[0] = to_input(t, A);
      row[1] = to_input(t, -A * double(level(p)) + (d == 2 ? O : 0.0));
      if (d >= 3) row[2] = to_input(t, O);
    } else {
      row[0] = to_input(t, O);
    }
    row_noise(row, code_dims, d, t, sigma, rng);
  });
  each_k_row(s, in, [&](int64_t, int64_t, int64_t j, double* row) {
    if (d >= 5) {
      row[0] = to_input(t, 64.0 * double(j / 64));
      row[1] = to_input(t, double(j % 64));
      row[2] = to_input(t, 64.0);
      row[3] = row[4] = 1.0;
    } else if (d >= 2) {
      row[0] = to_input(t, double(level(j)));
      row[1] = 1.0;
      if (d >= 3) row[2] = 1.0;
    } else {
      row[0] = 1.0;
    }
    row_noise(row, code_dims, d, t, sigma, rng);
  });
  fill_noise(in.v, t, 1.0, rng);
}

void make_signed(const AttentionSpec& s, std::mt19937_64& rng, AttentionInputs& in) {
  const DType t = s.input_dtype;
  const int64_t d = s.d_head;
  std::normal_distribution<double> N(0.0, 1.0);
  std::uniform_real_distribution<double> U(0.5, 1.5);
  for (std::vector<double>* x : {&in.q, &in.k, &in.v}) {
    std::vector<double> mean(static_cast<size_t>(d));
    for (double& m : mean) m = (rng() & 1 ? -1.0 : 1.0) * U(rng);
    for (size_t e = 0; e < x->size(); ++e) {
      (*x)[e] = to_input(t, mean[e % size_t(d)] + 0.5 * N(rng));
    }
  }
}

void make_stale_cache(const AttentionSpec& s, std::mt19937_64& rng, AttentionInputs& in) {
  // A key is stale when no query of its batch sees it: under a kv_cache mask the cached slots
  // outside every query's range (the entries past a decode position, still in HBM), under other
  // masks any key all queries mask. Scaled logits: visible keys noise with std ~1 around 0,
  // stale key j at 64 + 2 (j mod 16) (distinct, far above), from q_i[0] = A and
  // k_j[0] = logit / (A scale); stale values +-(32 + 4 (j mod 8)) with alternating signs,
  // visible values N(0, 1). A kernel that lets any stale key into a row (a position off by one,
  // a stale score left in a tile) returns that key's value there.
  const DType t = s.input_dtype;
  const int64_t d = s.d_head;
  const double as = std::fabs(s.scale);
  const double A = sign_of(s.scale) * pow2_near(std::sqrt(64.0 / as));
  const double sigma = noise_sigma(s, d - 1, 1.0);
  const int64_t cached = s.mask.kind == MaskKind::kv_cache ? s.seqlen_kv - s.seqlen_q : s.seqlen_kv;
  std::vector<uint8_t> stale(static_cast<size_t>(s.batch * s.seqlen_kv), 0);
  for (int64_t b = 0; b < s.batch; ++b) {
    for (int64_t j = 0; j < cached; ++j) {
      bool seen = false;
      for (int64_t i = 0; i < s.seqlen_q && !seen; ++i) seen = s.visible(b, i, j);
      stale[size_t(b * s.seqlen_kv + j)] = seen ? 0 : 1;
    }
  }
  each_q_row(s, in, [&](int64_t, int64_t, int64_t, double* row) {
    row[0] = to_input(t, A);
    row_noise(row, 1, d, t, sigma, rng);
  });
  each_k_row(s, in, [&](int64_t b, int64_t, int64_t j, double* row) {
    const bool st = stale[size_t(b * s.seqlen_kv + j)] != 0;
    row[0] = st ? to_input(t, (64.0 + 2.0 * double(j % 16)) / (A * as)) : 0.0;
    row_noise(row, 1, d, t, sigma, rng);
  });
  std::normal_distribution<double> N(0.0, 1.0);
  for (int64_t b = 0; b < s.batch; ++b) {
    for (int64_t g = 0; g < s.kv_heads; ++g) {
      for (int64_t j = 0; j < s.seqlen_kv; ++j) {
        double* row = &in.v[size_t(s.kv_index(b, g, j, 0))];
        const bool st = stale[size_t(b * s.seqlen_kv + j)] != 0;
        for (int64_t c = 0; c < d; ++c) {
          row[c] = to_input(t, st ? (c % 2 ? -1.0 : 1.0) * (32.0 + 4.0 * double(j % 8)) : N(rng));
        }
      }
    }
  }
}

}  // namespace ncv::oracle::detail

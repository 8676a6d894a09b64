// Properties that hold for every attention spec, checked on the exact oracle over the spec
// generators (properties/spec_gen.h): every mask kind with fully masked rows, GQA, seqlen_q !=
// seqlen_kv and block-KV tables. They pin down the meaning of the spec the kernels are held to.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <cmath>

#include "oracle/exact_oracle.h"
#include "properties/spec_gen.h"
#include "properties/values.h"

namespace ncv::props {
namespace {

std::string describe(const oracle::AttentionSpec& s) {
  return "batch=" + std::to_string(s.batch) + " heads=" + std::to_string(s.heads) +
         " kv_heads=" + std::to_string(s.kv_heads) + " seqlen_q=" + std::to_string(s.seqlen_q) +
         " seqlen_kv=" + std::to_string(s.seqlen_kv) + " d_head=" + std::to_string(s.d_head) +
         " mask=" + std::to_string(static_cast<int>(s.mask.kind)) +
         (s.block_kv ? " block_size=" + std::to_string(s.block_kv->block_size) : "") +
         (s.bias.empty() ? "" : " bias");
}

const std::vector<ValueKind> kFinite = {ValueKind::uniform,      ValueKind::normal,
                                        ValueKind::large_logits, ValueKind::constant_rows,
                                        ValueKind::spike,        ValueKind::bf16_bits};

// For each output element: the visible V values of its column, via f(x, b, h, i, c, values).
template <class F>
void for_each_visible(const oracle::AttentionSpec& s, const oracle::AttentionInputs& in, F&& f) {
  std::vector<int64_t> keys;
  std::vector<double> col;
  size_t x = 0;
  for (int64_t b = 0; b < s.batch; ++b) {
    for (int64_t h = 0; h < s.heads; ++h) {
      for (int64_t i = 0; i < s.seqlen_q; ++i) {
        s.visible_keys(b, i, keys);
        for (int64_t c = 0; c < s.d_head; ++c, ++x) {
          col.clear();
          for (int64_t j : keys) {
            col.push_back(in.v[static_cast<size_t>(s.kv_index(b, s.kv_head_of(h), j, c))]);
          }
          f(x, col);
        }
      }
    }
  }
}

RC_GTEST_PROP(SpecProperties, OutputIsInTheConvexHullOfVisibleVAndMaskedRowsAreZero, ()) {
  const oracle::AttentionSpec s = *gen_attention_spec();
  const ValueRecipe r = *gen_value_recipe(kFinite);
  RC_LOG() << describe(s) << " values=" << r.str() << "\n";
  const oracle::AttentionInputs in = make_values(s, r);
  const oracle::OracleOutput o = oracle::exact_attention(s, in);
  for_each_visible(s, in, [&](size_t x, const std::vector<double>& col) {
    if (col.empty()) {
      RC_ASSERT(o.out[x] == 0.0);
      return;
    }
    const auto [lo, hi] = std::minmax_element(col.begin(), col.end());
    const double slack = 1e-12 * std::max(std::fabs(*lo), std::fabs(*hi));
    RC_ASSERT(o.out[x] >= *lo - slack);
    RC_ASSERT(o.out[x] <= *hi + slack);
  });
}

RC_GTEST_PROP(SpecProperties, ZeroQueryAveragesTheVisibleValues, ()) {
  oracle::AttentionSpec s = *gen_attention_spec();
  s.bias.clear();  // with q = 0 the scores are the bias: only without one is the row uniform
  RC_LOG() << describe(s) << "\n";
  const oracle::AttentionInputs in = make_values(s, {ValueKind::zero_q, 0, 3});
  const oracle::OracleOutput o = oracle::exact_attention(s, in);
  for_each_visible(s, in, [&](size_t x, const std::vector<double>& col) {
    double sum = 0, mag = 0;
    for (double v : col) sum += v, mag += std::fabs(v);
    const double mean = col.empty() ? 0.0 : sum / static_cast<double>(col.size());
    RC_ASSERT(std::fabs(o.out[x] - mean) <= 1e-13 * (mag + 1e-300));
  });
}

RC_GTEST_PROP(SpecProperties, PagedKvEqualsTheGatheredContiguousCache, ()) {
  oracle::AttentionSpec paged = *gen_attention_spec();
  if (!paged.block_kv) paged.block_kv = *gen_block_kv(paged);
  const ValueRecipe r = *gen_value_recipe(kFinite);
  RC_LOG() << describe(paged) << " values=" << r.str() << "\n";
  const oracle::AttentionInputs in = make_values(paged, r);
  // The same problem with K and V gathered into logical order and no table.
  oracle::AttentionSpec flat = paged;
  flat.block_kv.reset();
  oracle::AttentionInputs gathered = in;
  gathered.k.assign(static_cast<size_t>(flat.kv_elements()), 0.0);
  gathered.v.assign(gathered.k.size(), 0.0);
  for (int64_t b = 0; b < flat.batch; ++b) {
    for (int64_t g = 0; g < flat.kv_heads; ++g) {
      for (int64_t j = 0; j < flat.seqlen_kv; ++j) {
        for (int64_t c = 0; c < flat.d_head; ++c) {
          const size_t to = static_cast<size_t>(flat.kv_index(b, g, j, c));
          const size_t from = static_cast<size_t>(paged.kv_index(b, g, j, c));
          gathered.k[to] = in.k[from];
          gathered.v[to] = in.v[from];
        }
      }
    }
  }
  const oracle::OracleOutput a = oracle::exact_attention(paged, in);
  const oracle::OracleOutput b = oracle::exact_attention(flat, gathered);
  RC_ASSERT(a.out == b.out);
}

}  // namespace
}  // namespace ncv::props

#include "kernels/attention_tkg_draws.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>

namespace ncv::kernels::tkg {

int64_t swa_start(int64_t end, int64_t window, int64_t slots, bool block_cache) {
  const int64_t s = end - window + 1;
  if (block_cache) return std::max<int64_t>(0, s);
  return ((s % slots) + slots) % slots;  // Python's % (non-negative for slots > 0)
}

std::pair<int64_t, int64_t> cache_range_of_window(int64_t start, int64_t end, int64_t cached) {
  if (start <= end) return {std::min(start, cached), std::min(end, cached)};
  // Wrapping: [start, S) ∪ [0, end) with end < start.
  if (start >= cached) return {0, std::min(end, cached)};
  return {start, end};  // end < start < cached: the oracle's wrapping range
}

SwaPositions set_swa_mask(oracle::AttentionSpec& spec, const std::vector<int64_t>& base_pos,
                          int64_t window, bool block_cache) {
  if (static_cast<int64_t>(base_pos.size()) != spec.batch) {
    throw std::invalid_argument("set_swa_mask: one base position per batch expected");
  }
  if (window < 1) throw std::invalid_argument("set_swa_mask: the window must be >= 1");
  const int64_t cached = spec.seqlen_kv - spec.seqlen_q;
  spec.mask = oracle::Mask{};
  spec.mask.kind = oracle::MaskKind::kv_cache;
  SwaPositions k;
  for (int64_t b = 0; b < spec.batch; ++b) {
    for (int64_t i = 0; i < spec.seqlen_q; ++i) {
      const int64_t end = base_pos[static_cast<size_t>(b)] + i;
      const auto [lo, hi] =
          cache_range_of_window(swa_start(end, window, spec.seqlen_kv, block_cache), end, cached);
      spec.mask.cache_begin.push_back(lo);
      spec.mask.cache_end.push_back(hi);
    }
  }
  return swa_inputs_of(spec);
}

SwaPositions swa_inputs_of(const oracle::AttentionSpec& spec) {
  if (spec.mask.kind != oracle::MaskKind::kv_cache) {
    throw std::invalid_argument("swa_inputs_of: the spec's mask is not kv_cache");
  }
  return SwaPositions{spec.mask.cache_end, spec.mask.cache_begin};
}

namespace {

// Logical block L of batch b matters when a query of b sees one of its cached keys or when it
// holds an active slot.
bool block_matters(const oracle::AttentionSpec& s, int64_t b, int64_t L, int64_t bl) {
  const int64_t cached = s.seqlen_kv - s.seqlen_q;
  for (int64_t j = L * bl; j < (L + 1) * bl; ++j) {
    if (j >= cached) return true;
    for (int64_t i = 0; i < s.seqlen_q; ++i) {
      if (s.visible(b, i, j)) return true;
    }
  }
  return false;
}

}  // namespace

oracle::BlockKv draw_block_table(const oracle::AttentionSpec& spec, int64_t block_len,
                                 int64_t num_blocks, std::mt19937_64& rng) {
  if (block_len < 1 || spec.seqlen_kv % block_len != 0) {
    throw std::invalid_argument("draw_block_table: seqlen_kv " + std::to_string(spec.seqlen_kv) +
                                " is not a multiple of block_len " + std::to_string(block_len));
  }
  const int64_t per_batch = spec.seqlen_kv / block_len;
  std::vector<uint8_t> matters(static_cast<size_t>(spec.batch * per_batch));
  int64_t needed = 0;
  for (int64_t b = 0; b < spec.batch; ++b) {
    for (int64_t L = 0; L < per_batch; ++L) {
      const bool m = block_matters(spec, b, L, block_len);
      matters[static_cast<size_t>(b * per_batch + L)] = m;
      needed += m;
    }
  }
  if (needed > num_blocks) {
    throw std::invalid_argument("draw_block_table: " + std::to_string(needed) +
                                " distinct blocks needed, only " + std::to_string(num_blocks) +
                                " physical blocks");
  }
  std::vector<int64_t> perm(static_cast<size_t>(num_blocks));
  std::iota(perm.begin(), perm.end(), int64_t{0});
  std::shuffle(perm.begin(), perm.end(), rng);
  oracle::BlockKv bk;
  bk.block_size = block_len;
  bk.num_blocks = num_blocks;
  bk.table.assign(matters.size(), -1);
  std::vector<std::vector<int64_t>> owned(static_cast<size_t>(spec.batch));
  size_t next = 0;
  for (size_t e = 0; e < matters.size(); ++e) {
    if (!matters[e]) continue;
    bk.table[e] = perm[next++];
    owned[e / static_cast<size_t>(per_batch)].push_back(bk.table[e]);
  }
  // Stale entries: a block of another batch (as the source's test: entry 0), else a spare one,
  // else (every physical block taken by this batch) one of this batch's own.
  for (size_t e = 0; e < matters.size(); ++e) {
    if (matters[e]) continue;
    const size_t b = e / static_cast<size_t>(per_batch);
    std::vector<int64_t> others;
    for (size_t o = 0; o < owned.size(); ++o) {
      if (o != b) others.insert(others.end(), owned[o].begin(), owned[o].end());
    }
    if (others.empty()) {
      others.assign(perm.begin() + static_cast<std::ptrdiff_t>(next), perm.end());
    }
    if (others.empty()) others = owned[b];
    if (others.empty()) others.push_back(perm[0]);
    bk.table[e] = others[static_cast<size_t>(rng() % others.size())];
  }
  return bk;
}

std::vector<double> stale_active_rows(const oracle::AttentionSpec& spec,
                                      std::vector<double> physical) {
  if (!spec.block_kv) throw std::invalid_argument("stale_active_rows: the spec has no block_kv");
  if (static_cast<int64_t>(physical.size()) != spec.kv_elements()) {
    throw std::invalid_argument("stale_active_rows: the cache has " +
                                std::to_string(physical.size()) + " values, the spec " +
                                std::to_string(spec.kv_elements()));
  }
  const int64_t cached = spec.seqlen_kv - spec.seqlen_q;
  // A physical row can be the active slot of one batch only (draw_block_table gives blocks with
  // active slots to their batch alone); negate each row once.
  std::vector<uint8_t> done(static_cast<size_t>(spec.kv_elements() / spec.d_head));
  for (int64_t b = 0; b < spec.batch; ++b) {
    for (int64_t g = 0; g < spec.kv_heads; ++g) {
      for (int64_t j = cached; j < spec.seqlen_kv; ++j) {
        const int64_t at = spec.kv_index(b, g, j, 0);
        if (done[static_cast<size_t>(at / spec.d_head)]++) continue;
        for (int64_t c = 0; c < spec.d_head; ++c) {
          physical[static_cast<size_t>(at + c)] = -physical[static_cast<size_t>(at + c)];
        }
      }
    }
  }
  return physical;
}

}  // namespace ncv::kernels::tkg

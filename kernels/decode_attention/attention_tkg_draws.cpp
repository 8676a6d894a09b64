#include "kernels/decode_attention/attention_tkg_draws.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <stdexcept>
#include <string>

#include "kernels/decode_attention/gen_mask_tkg_swa.h"

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

void set_block_kv(oracle::AttentionSpec& spec, int64_t block_len, uint64_t seed) {
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + 0xB10Cull);
  spec.block_kv = draw_block_table(spec, block_len, kBlockCacheSlots / block_len, rng);
}

void draw_window_and_table(oracle::AttentionSpec& spec, uint64_t seed) {
  std::mt19937_64 rng(seed * 0xD1B54A32D192ED03ull + 0x5A7Eull);
  const bool block = spec.block_kv.has_value();
  if (spec.mask.kind == oracle::MaskKind::kv_cache && spec.mask.window > 0) {
    const int64_t S = spec.seqlen_kv;
    const auto u = [&](int64_t n) {
      return static_cast<int64_t>(rng() % static_cast<uint64_t>(n));
    };
    int64_t w = 0;
    switch (seed % 6) {
      case 0:
        w = 128;  // the source's SWA tests: 128, 256, 512 (test_attention_tkg.py 831–856)
        break;
      case 1:
        w = 256;
        break;
      case 2:
        w = 512;
        break;
      case 3:
        w = 1 + u(16);  // a few keys: most of the cache stale
        break;
      case 4:
        w = S + 1 + u(S);  // beyond the cache: every cached slot (flat: start wraps past end)
        break;
      default:
        w = 1 + u(S);
    }
    std::vector<int64_t> base(static_cast<size_t>(spec.batch));
    for (int64_t b = 0; b < spec.batch; ++b) {
      base[static_cast<size_t>(b)] = spec.mask.cache_end[static_cast<size_t>(b * spec.seqlen_q)];
    }
    set_swa_mask(spec, base, w, block);
    spec.mask.window = w;
  }
  if (block) {
    // a new table over the spec's physical blocks (set_block_kv's draw; a KV-cache --layout's
    // spec has its own cache size, check/kv_cache_layout.h)
    std::mt19937_64 table_rng(rng() * 0x9E3779B97F4A7C15ull + 0xB10Cull);
    spec.block_kv =
        draw_block_table(spec, spec.block_kv->block_size, spec.block_kv->num_blocks, table_rng);
  }
}

namespace {

HostTensor input_tensor(const Program& p, const ParamValues& params, const std::string& name,
                        int64_t elements) {
  const auto id = p.find_tensor(name);
  if (!id || p.tensor(*id).kind != TensorKind::Input) {
    throw std::invalid_argument("kernel " + p.name + " has no input tensor '" + name + "'");
  }
  HostTensor h(p.tensor(*id).dtype, concrete_shape(p, *id, params));
  if (h.num_elements() != elements) {
    throw std::invalid_argument("attention_tkg: input '" + name + "' has " +
                                std::to_string(h.num_elements()) + " elements, the spec needs " +
                                std::to_string(elements));
  }
  return h;
}

}  // namespace

void pack_block_cache(const Program& p, const ParamValues& params,
                      const oracle::AttentionSpec& spec, const oracle::AttentionInputs& in,
                      std::map<std::string, HostTensor>& packed) {
  if (!spec.block_kv) throw std::invalid_argument("attention_tkg: the spec has no block table");
  const struct {
    const char* name;
    const std::vector<double>& values;
  } caches[] = {{"k_prior", in.k}, {"v_prior", in.v}};
  for (const auto& c : caches) {
    HostTensor h = input_tensor(p, params, c.name, spec.kv_elements());
    const std::vector<double> stale = stale_active_rows(spec, c.values);
    for (int64_t e = 0; e < h.num_elements(); ++e) {
      h.set(e, static_cast<float>(stale[static_cast<size_t>(e)]));
    }
    packed[c.name] = std::move(h);
  }
  const auto& table = spec.block_kv->table;
  HostTensor t = input_tensor(p, params, "active_blocks_table", static_cast<int64_t>(table.size()));
  for (size_t e = 0; e < table.size(); ++e) {
    t.set(static_cast<int64_t>(e), static_cast<float>(table[e]));
  }
  packed["active_blocks_table"] = std::move(t);
}

void pack_window_positions(const Program& p, const ParamValues& params,
                           const oracle::AttentionSpec& spec,
                           std::map<std::string, HostTensor>& packed) {
  const SwaPositions w = swa_inputs_of(spec);
  const auto n = static_cast<int64_t>(w.end.size());
  HostTensor end = input_tensor(p, params, "rope_pos_ids", n);
  HostTensor start = input_tensor(p, params, "start_pos_ids", n);
  for (int64_t k = 0; k < n; ++k) {
    end.set(k, static_cast<float>(w.end[static_cast<size_t>(k)]));
    start.set(k, static_cast<float>(w.start[static_cast<size_t>(k)]));
  }
  packed["rope_pos_ids"] = std::move(end);
  packed["start_pos_ids"] = std::move(start);
}

int64_t block_mask_row_slot(int64_t row, int64_t tile_slots, int64_t block_len) {
  const int64_t region = row / tile_slots, r = row % tile_slots;
  return region * tile_slots + slot_of(SlotLayout::block, block_len, tile_slots / kSlotPartitions,
                                       0, r % kSlotPartitions, r / kSlotPartitions);
}

}  // namespace ncv::kernels::tkg

// AttentionSpec validation, mask semantics and indexing (oracle/README.md).
#include "oracle/attention_spec.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace ncv::oracle {

namespace {

// Upper limits that keep every index product far from int64 overflow and every allocation sane.
constexpr int64_t kMaxDim = int64_t{1} << 24;       // any single dimension
constexpr int64_t kMaxElements = int64_t{1} << 32;  // q, k, v, mask, position tables
constexpr int64_t kMaxPosition = int64_t{1} << 40;  // |position id|

std::string idx(const std::string& base, int64_t a, int64_t b) {
  return base + "[" + std::to_string(a) + "][" + std::to_string(b) + "]";
}

void check_dim(const char* name, int64_t v) {
  if (v < 1) throw SpecError(name, "must be >= 1, got " + std::to_string(v));
  if (v > kMaxDim) {
    throw SpecError(name, "must be <= " + std::to_string(kMaxDim) + ", got " + std::to_string(v));
  }
}

// a * b * ... without overflow (every factor is in [1, kMaxDim]); throws when above kMaxElements.
int64_t checked_product(const char* path, std::initializer_list<int64_t> factors) {
  int64_t p = 1;
  for (int64_t f : factors) {
    if (f != 0 && p > kMaxElements / f) {
      throw SpecError(path,
                      "tensor too large (more than " + std::to_string(kMaxElements) + " elements)");
    }
    p *= f;
  }
  return p;
}

void check_positions(const std::vector<int64_t>& pos, const std::string& path, int64_t rows,
                     int64_t cols) {
  if (static_cast<int64_t>(pos.size()) != rows * cols) {
    throw SpecError(path, "expected " + std::to_string(rows) + " x " + std::to_string(cols) +
                              " = " + std::to_string(rows * cols) + " entries, got " +
                              std::to_string(pos.size()));
  }
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      const int64_t p = pos[static_cast<size_t>(r * cols + c)];
      if (p > kMaxPosition || p < -kMaxPosition) {
        throw SpecError(idx(path, r, c),
                        "position " + std::to_string(p) + " out of range [-2^40, 2^40]");
      }
    }
  }
}

}  // namespace

void AttentionSpec::validate() const {
  check_dim("batch", batch);
  check_dim("heads", heads);
  check_dim("kv_heads", kv_heads);
  check_dim("seqlen_q", seqlen_q);
  check_dim("seqlen_kv", seqlen_kv);
  check_dim("d_head", d_head);
  if (heads % kv_heads != 0) {
    throw SpecError("kv_heads", "heads (" + std::to_string(heads) +
                                    ") is not a multiple of kv_heads (" + std::to_string(kv_heads) +
                                    ")");
  }
  checked_product("q", {batch, heads, seqlen_q, d_head});
  checked_product("k", {batch, kv_heads, seqlen_kv, d_head});
  checked_product("seqlen_kv", {batch, seqlen_q, seqlen_kv});
  if (!std::isfinite(scale)) throw SpecError("scale", "must be finite");
  if (!is_float(input_dtype)) throw SpecError("input_dtype", "must be a floating-point type");
  if (!is_float(output_dtype)) throw SpecError("output_dtype", "must be a floating-point type");

  switch (mask.kind) {
    case MaskKind::none:
    case MaskKind::causal:
      break;
    case MaskKind::sliding_window:
      if (mask.window < 1) {
        throw SpecError("mask.window", "must be >= 1, got " + std::to_string(mask.window));
      }
      if (mask.window > kMaxPosition) throw SpecError("mask.window", "must be <= 2^40");
      break;
    case MaskKind::explicit_mask:
      if (static_cast<int64_t>(mask.allowed.size()) != seqlen_q * seqlen_kv) {
        throw SpecError("mask.allowed",
                        "expected [seqlen_q][seqlen_kv] = " + std::to_string(seqlen_q) + " x " +
                            std::to_string(seqlen_kv) + " entries, got " +
                            std::to_string(mask.allowed.size()));
      }
      break;
    case MaskKind::position_ids:
      check_positions(mask.pos, "mask.pos", batch, seqlen_q);
      break;
    case MaskKind::kv_cache:
      validate_cache_ranges();
      break;
    default:
      throw SpecError("mask.kind", "unknown mask kind");
  }

  if (!sink.empty()) {
    if (static_cast<int64_t>(sink.size()) != heads) {
      throw SpecError("sink", "expected one logit per head (" + std::to_string(heads) + "), got " +
                                  std::to_string(sink.size()));
    }
    for (size_t h = 0; h < sink.size(); ++h) {
      if (!std::isfinite(sink[h])) {
        throw SpecError("sink[" + std::to_string(h) + "]", "must be finite");
      }
    }
  }

  if (!bias.empty()) {
    if (static_cast<int64_t>(bias.size()) != seqlen_q * seqlen_kv) {
      throw SpecError("bias", "expected [seqlen_q][seqlen_kv] = " + std::to_string(seqlen_q) +
                                  " x " + std::to_string(seqlen_kv) + " values, got " +
                                  std::to_string(bias.size()));
    }
    for (size_t x = 0; x < bias.size(); ++x) {
      if (!std::isfinite(bias[x])) {
        const auto kv = static_cast<size_t>(seqlen_kv);
        throw SpecError("bias[" + std::to_string(x / kv) + "][" + std::to_string(x % kv) + "]",
                        "must be finite");
      }
    }
  }

  if (rope) {
    if (d_head % 2 != 0) {
      throw SpecError("rope", "needs an even d_head, got " + std::to_string(d_head));
    }
    if (!std::isfinite(rope->theta) || rope->theta <= 0) {
      throw SpecError("rope.theta", "must be finite and > 0");
    }
    check_positions(rope->pos_q, "rope.pos_q", batch, seqlen_q);
    check_positions(rope->pos_k, "rope.pos_k", batch, seqlen_kv);
    if (!rope->inv_freq.empty()) {
      if (rope->inv_freq.size() != static_cast<size_t>(d_head / 2)) {
        throw SpecError("rope.inv_freq", "expected d_head / 2 = " + std::to_string(d_head / 2) +
                                             " values, got " +
                                             std::to_string(rope->inv_freq.size()));
      }
      for (size_t t = 0; t < rope->inv_freq.size(); ++t) {
        if (!std::isfinite(rope->inv_freq[t])) {
          throw SpecError("rope.inv_freq[" + std::to_string(t) + "]", "must be finite");
        }
      }
    }
    if (rope->rotated_from < 0 || rope->rotated_from > seqlen_kv) {
      throw SpecError("rope.rotated_from", "must be in [0, seqlen_kv]");
    }
  }

  if (block_kv) {
    const BlockKv& bk = *block_kv;
    check_dim("block_table.block_size", bk.block_size);
    check_dim("block_table.num_blocks", bk.num_blocks);
    if (seqlen_kv % bk.block_size != 0) {
      throw SpecError("block_table.block_size", "seqlen_kv (" + std::to_string(seqlen_kv) +
                                                    ") is not a multiple of block_size (" +
                                                    std::to_string(bk.block_size) + ")");
    }
    checked_product("k", {bk.num_blocks, kv_heads, bk.block_size, d_head});
    const int64_t per_batch = seqlen_kv / bk.block_size;
    if (static_cast<int64_t>(bk.table.size()) != batch * per_batch) {
      throw SpecError("block_table.table",
                      "expected [batch][seqlen_kv / block_size] = " + std::to_string(batch) +
                          " x " + std::to_string(per_batch) + " entries, got " +
                          std::to_string(bk.table.size()));
    }
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t t = 0; t < per_batch; ++t) {
        const int64_t e = bk.table[static_cast<size_t>(b * per_batch + t)];
        if (e < 0 || e >= bk.num_blocks) {
          throw SpecError(idx("block_table.table", b, t),
                          "block " + std::to_string(e) +
                              " not in [0, num_blocks = " + std::to_string(bk.num_blocks) + ")");
        }
      }
    }
  }
}

void AttentionSpec::validate_cache_ranges() const {
  if (seqlen_q > seqlen_kv) {
    throw SpecError("seqlen_q", "a kv_cache mask needs seqlen_q (" + std::to_string(seqlen_q) +
                                    ") active keys within seqlen_kv (" + std::to_string(seqlen_kv) +
                                    ")");
  }
  const int64_t cached = seqlen_kv - seqlen_q;
  for (const auto* field : {&mask.cache_begin, &mask.cache_end}) {
    const std::string path = field == &mask.cache_begin ? "mask.cache_begin" : "mask.cache_end";
    check_positions(*field, path, batch, seqlen_q);
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t i = 0; i < seqlen_q; ++i) {
        const int64_t v = (*field)[static_cast<size_t>(b * seqlen_q + i)];
        if (v < 0 || v > cached) {
          throw SpecError(idx(path, b, i), std::to_string(v) + " not in [0, cached keys = " +
                                               std::to_string(cached) + "]");
        }
      }
    }
  }
}

bool AttentionSpec::visible(int64_t b, int64_t i, int64_t j) const {
  // Bottom-right alignment: the last query sees the last key.
  const int64_t diag = i + seqlen_kv - seqlen_q;
  switch (mask.kind) {
    case MaskKind::none:
      return true;
    case MaskKind::causal:
      return j <= diag;
    case MaskKind::sliding_window:
      return j <= diag && j > diag - mask.window;
    case MaskKind::explicit_mask:
      return mask.allowed[static_cast<size_t>(i * seqlen_kv + j)] != 0;
    case MaskKind::position_ids:
      return j < mask.pos[static_cast<size_t>(b * seqlen_q + i)] + 1;
    case MaskKind::kv_cache: {
      const int64_t cached = seqlen_kv - seqlen_q;
      if (j >= cached) return j - cached <= i;
      const auto at = static_cast<size_t>(b * seqlen_q + i);
      const int64_t begin = mask.cache_begin[at], end = mask.cache_end[at];
      return begin <= end ? j >= begin && j < end : j >= begin || j < end;
    }
  }
  return false;
}

int64_t AttentionSpec::q_index(int64_t b, int64_t h, int64_t i, int64_t c) const {
  return ((b * heads + h) * seqlen_q + i) * d_head + c;
}

int64_t AttentionSpec::kv_index(int64_t b, int64_t kvh, int64_t j, int64_t c) const {
  if (block_kv) {
    const int64_t bs = block_kv->block_size;
    const int64_t per_batch = seqlen_kv / bs;
    const int64_t blk = block_kv->table[static_cast<size_t>(b * per_batch + j / bs)];
    return ((blk * kv_heads + kvh) * bs + j % bs) * d_head + c;
  }
  return ((b * kv_heads + kvh) * seqlen_kv + j) * d_head + c;
}

int64_t AttentionSpec::kv_elements() const {
  if (block_kv) return block_kv->num_blocks * kv_heads * block_kv->block_size * d_head;
  return batch * kv_heads * seqlen_kv * d_head;
}

std::optional<std::pair<int64_t, int64_t>> AttentionSpec::visible_range(int64_t b,
                                                                        int64_t i) const {
  const int64_t diag = i + seqlen_kv - seqlen_q;
  auto clamp = [&](int64_t lo, int64_t hi) {
    lo = std::clamp<int64_t>(lo, 0, seqlen_kv);
    return std::make_pair(lo, std::clamp<int64_t>(hi, lo, seqlen_kv));
  };
  switch (mask.kind) {
    case MaskKind::none:
      return std::make_pair(int64_t{0}, seqlen_kv);
    case MaskKind::causal:
      return clamp(0, diag + 1);
    case MaskKind::sliding_window:
      return clamp(diag - mask.window + 1, diag + 1);
    case MaskKind::position_ids:
      return clamp(0, mask.pos[static_cast<size_t>(b * seqlen_q + i)] + 1);
    case MaskKind::explicit_mask:
    case MaskKind::kv_cache:  // cached range and active keys need not be contiguous
      break;
  }
  return std::nullopt;
}

void AttentionSpec::visible_keys(int64_t b, int64_t i, std::vector<int64_t>& out) const {
  out.clear();
  if (const auto range = visible_range(b, i)) {
    for (int64_t j = range->first; j < range->second; ++j) out.push_back(j);
    return;
  }
  for (int64_t j = 0; j < seqlen_kv; ++j) {
    if (visible(b, i, j)) out.push_back(j);
  }
}

void validate_inputs(const AttentionSpec& spec, const AttentionInputs& in) {
  spec.validate();
  auto check = [](const char* name, size_t got, int64_t want) {
    if (static_cast<int64_t>(got) != want) {
      throw SpecError(name,
                      "expected " + std::to_string(want) + " values, got " + std::to_string(got));
    }
  };
  check("q", in.q.size(), spec.q_elements());
  check("k", in.k.size(), spec.kv_elements());
  check("v", in.v.size(), spec.kv_elements());
}

std::vector<double> rope_inverse_frequencies(const AttentionSpec& spec) {
  std::vector<double> f;
  if (!spec.rope) return f;
  if (!spec.rope->inv_freq.empty()) return spec.rope->inv_freq;
  const int64_t d = spec.d_head;
  for (int64_t t = 0; t < d / 2; ++t) {
    f.push_back(std::pow(spec.rope->theta, -2.0 * static_cast<double>(t) / static_cast<double>(d)));
  }
  return f;
}

bool rope_rotates_key(const AttentionSpec& spec, int64_t j) {
  return spec.rope && j >= spec.rope->rotated_from;
}

}  // namespace ncv::oracle

// Data movement by index and across partitions: local_gather, nc_stream_shuffle and
// gather_flattened (semantics.h). The values move bit for bit (gather_flattened converts through
// fp32 when the destination's dtype differs, as a copy does). These instructions address one
// element at a time by nature, so both ExecModes run the same per-element loop; every output is
// computed before the first store, so a destination that overlaps a source still sees the
// source's old values (the aliasing rule of semantics.h).
#include <algorithm>
#include <optional>
#include <vector>

#include "model/semantics/internal.h"
#include "model/semantics/semantics.h"

namespace ncv {
inline namespace semantics {

namespace {

int64_t index_at(const View& v, int64_t r, int64_t f) {
  return int_from_bits(v.dtype, ref_load(v, r, f));
}

// Stores out[r * n + f] (bits of dst's dtype) into dst, rows `keep` only (all when empty).
void store_all(const View& dst, const std::vector<uint32_t>& out,
               const std::vector<char>& keep = {}) {
  const int64_t n = dst.free_elems();
  for (int64_t r = 0; r < dst.rows; ++r) {
    if (!keep.empty() && !keep[static_cast<size_t>(r)]) continue;
    for (int64_t f = 0; f < n; ++f) store_bits(dst.dtype, dst.at(r, f), out[r * n + f]);
  }
}

}  // namespace

int64_t local_gather_indices(const View& index, int64_t valid_indices) {
  return valid_indices > 0 ? valid_indices : kLocalGatherGroup * index.free_elems();
}

std::optional<GatherMiss> exec_local_gather(ExecMode, const View& dst, const View& src,
                                            const View& index, int64_t elems_per_index,
                                            int64_t valid_indices) {
  const int64_t rows = std::max<int64_t>(src.rows, 0);
  const int64_t limit = src.free_elems();
  const int64_t n = local_gather_indices(index, valid_indices);
  const int64_t out_n = dst.free_elems();  // n * elems_per_index (checked by the interpreter)
  std::vector<int64_t> idx(static_cast<size_t>(n));
  std::vector<uint32_t> out(static_cast<size_t>(rows * out_n));
  for (int64_t g = 0; g * kLocalGatherGroup < rows; ++g) {
    const int64_t first = g * kLocalGatherGroup;
    // indices_1d: the group's index rows flattened partition-first (column-major over
    // [16, K]), the first n of them.
    for (int64_t j = 0; j < n; ++j) {
      const int64_t r = first + j % kLocalGatherGroup, f = j / kLocalGatherGroup;
      idx[j] = index_at(index, r, f);
      if (idx[j] < 0 || idx[j] + elems_per_index > limit) {
        return GatherMiss{r, f, idx[j], limit};
      }
    }
    for (int64_t r = first; r < first + kLocalGatherGroup && r < rows; ++r) {
      for (int64_t j = 0; j < n; ++j) {
        for (int64_t e = 0; e < elems_per_index; ++e) {
          out[r * out_n + j * elems_per_index + e] = ref_load(src, r, idx[j] + e);
        }
      }
    }
  }
  store_all(dst, out);
  return std::nullopt;
}

int64_t shuffle_source_row(const std::vector<int64_t>& mask, int64_t row) {
  const int64_t m = mask[static_cast<size_t>(row % kShuffleQuadrant)];
  if (m == kShuffleKeep) return -1;
  return row - row % kShuffleQuadrant + m;
}

void exec_stream_shuffle(ExecMode, const View& dst, const View& src,
                         const std::vector<int64_t>& mask) {
  const int64_t rows = std::max<int64_t>(dst.rows, 0);
  const int64_t n = dst.free_elems();
  std::vector<uint32_t> out(static_cast<size_t>(rows * n));
  std::vector<char> keep(static_cast<size_t>(rows), 0);
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t s = shuffle_source_row(mask, r);
    if (s < 0) continue;  // 255: this partition of dst is left as it is
    keep[static_cast<size_t>(r)] = 1;
    for (int64_t f = 0; f < n; ++f) out[r * n + f] = ref_load(src, s, f);
  }
  store_all(dst, out, keep);
}

std::optional<GatherMiss> exec_gather_flattened(ExecMode, const View& dst, const View& data,
                                                const View& indices) {
  const int64_t rows = std::max<int64_t>(dst.rows, 0);
  const int64_t n = dst.free_elems(), limit = data.free_elems();
  const bool same = dst.dtype == data.dtype;
  std::vector<uint32_t> out(static_cast<size_t>(rows * n));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < n; ++j) {
      const int64_t k = index_at(indices, r, j);
      if (k < 0 || k >= limit) return GatherMiss{r, j, k, limit};
      const uint32_t bits = ref_load(data, r, k);
      out[r * n + j] =
          same ? bits : encode_from_float(dst.dtype, decode_to_float(data.dtype, bits));
    }
  }
  store_all(dst, out);
  return std::nullopt;
}

}  // namespace semantics
}  // namespace ncv

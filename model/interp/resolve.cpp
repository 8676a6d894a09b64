// Access resolution: a symbolic Access to a concrete View and the physical region it covers, for
// one instance, with the bounds and indirect-range checks.
#include "model/interp/resolve.h"

#include <algorithm>
#include <array>
#include <cstring>

namespace ncv {
inline namespace interp {

namespace {

// Calls f(byte_offset, count, stride) for every innermost run of a view's elements, offsets
// relative to the view's memory array.
template <typename F>
void for_each_run(const Resolved& r, F&& f) {
  const View& v = r.view;
  int fr = v.free_rank;
  int64_t n = fr ? v.sizes[fr - 1] : 1;
  int64_t s = fr ? v.strides[fr - 1] : 0;
  int64_t outer = 1;
  for (int d = 0; d + 1 < fr; ++d) outer *= v.sizes[d];
  for (int64_t row = 0; row < v.rows; ++row) {
    if (!r.skipped.empty() && r.skipped[row]) continue;
    int64_t roff =
        r.base_offset + row * v.row_stride + (r.row_offsets.empty() ? 0 : r.row_offsets[row]);
    for (int64_t o = 0; o < outer; ++o) {
      int64_t off = roff, rem = o;
      for (int d = fr - 2; d >= 0; --d) {
        off += (rem % v.sizes[d]) * v.strides[d];
        rem /= v.sizes[d];
      }
      f(off, n, s);
    }
  }
}

// Sorts runs and joins overlapping or touching ones.
void normalize_runs(std::vector<ByteRun>& runs) {
  if (!std::is_sorted(runs.begin(), runs.end(),
                      [](const ByteRun& a, const ByteRun& b) { return a.begin < b.begin; })) {
    std::sort(runs.begin(), runs.end(),
              [](const ByteRun& a, const ByteRun& b) { return a.begin < b.begin; });
  }
  size_t out = 0;
  for (size_t k = 0; k < runs.size(); ++k) {
    if (out > 0 && runs[k].begin <= runs[out - 1].end) {
      runs[out - 1].end = std::max(runs[out - 1].end, runs[k].end);
    } else {
      runs[out++] = runs[k];
    }
  }
  runs.resize(out);
}

// The byte runs of a strided box: dims outermost first, each with a size and a byte stride
// (stride 0 = broadcast). Innermost dims whose stride equals the run so far join the run.
std::vector<ByteRun> box_runs(int64_t base, std::vector<std::pair<int64_t, int64_t>> dims,
                              int64_t dsize) {
  std::erase_if(dims, [](const auto& d) { return d.first <= 1 || d.second == 0; });
  int64_t run = dsize;
  size_t k = dims.size();
  while (k > 0 && dims[k - 1].second == run) {
    run *= dims[k - 1].first;
    --k;
  }
  int64_t count = 1;
  for (size_t i = 0; i < k; ++i) count *= dims[i].first;
  std::vector<ByteRun> runs;
  runs.reserve(static_cast<size_t>(count));
  std::vector<int64_t> idx(k, 0);
  int64_t off = base;
  for (int64_t c = 0; c < count; ++c) {
    runs.push_back({off, off + run});
    for (size_t i = k; i-- > 0;) {
      off += dims[i].second;
      if (++idx[i] < dims[i].first) break;
      off -= dims[i].second * dims[i].first;
      idx[i] = 0;
    }
  }
  normalize_runs(runs);
  return runs;
}

}  // namespace

// An access resolved for one instance: which core's memory (resolve_core), the index ranges of
// every dim with the bounds checks (resolve_dims), the view and its physical region
// (place_view), run-time offsets of an indirect dim (resolve_indirect), and the bytes it covers
// (byte_runs, value runs).
Resolved AccessResolver::resolve(int core, const Access& a, const char* role,
                                 ShadowTracker* shadows, uint32_t reader, bool oob_skip) {
  Resolved r;
  const Tensor& t = m_.p.tensor(a.tensor);
  r.tensor = &t;
  r.id = t.id;
  r.memory = t.memory;
  r.core = resolve_core(core, a, t, role);
  const DimRanges d = resolve_dims(core, a, t, role);
  place_view(r, a, d, role);
  if (a.indirect) resolve_indirect(r, core, a, d, role, shadows, reader, oob_skip);
  // Bytes per innermost contiguous run (DMA efficiency in the timing model).
  const int64_t dsize = static_cast<int64_t>(dtype_size(t.dtype));
  int64_t run = dsize;
  for (int k = r.view.free_rank - 1; k >= 0; --k) {
    if (r.view.strides[k] != run) break;
    run *= r.view.sizes[k];
  }
  r.contiguous_bytes = run;
  if (t.on_chip()) {
    r.scope_iteration = m_.cores[static_cast<size_t>(core)].scope_iteration.at(t.scope);
  }
  if (m_.compute_values) byte_runs(r, a, d);
  return r;
}

// The core whose memory the access names: the executing core, or a live peer (on_core).
int AccessResolver::resolve_core(int core, const Access& a, const Tensor& t, const char* role) {
  if (!a.core) return core;
  int64_t c = eval(*a.core, m_.cores[core].env);
  if (c < 0 || c >= m_.grid) {
    fail_check(CheckKind::out_of_bounds, std::string(role) + " '" + t.name + "' names core " +
                                             std::to_string(c) + "; the grid has " +
                                             std::to_string(m_.grid));
  }
  if (!m_.is_live(c, t.id)) {
    fail_check(CheckKind::out_of_bounds,
               std::string(role) + " '" + t.name + "' is not live on core " + std::to_string(c));
  }
  return static_cast<int>(c);
}

// Start, size and index range of every dim, each inside the tensor (an indirect dim is checked
// once its offsets are known).
AccessResolver::DimRanges AccessResolver::resolve_dims(int core, const Access& a, const Tensor& t,
                                                       const char* role) {
  const auto& shape = m_.shapes[a.tensor];
  const CoreState& cs = m_.cores[core];
  const size_t rank = a.dims.size();
  // Fixed arrays: validation caps an access at 1 + kMaxFreeDims dims, and resolve runs for every
  // operand of every instance.
  DimRanges r;
  if (rank > r.start.size()) {
    fail_check(CheckKind::shape_rule, std::string(role) + " '" + t.name + "' has " +
                                          std::to_string(rank) + " index dims, more than " +
                                          std::to_string(1 + kMaxFreeDims));
  }
  int ind_dim = a.indirect ? a.indirect->dim : -1;
  for (size_t d = 0; d < rank; ++d) {
    r.start[d] = eval(a.dims[d].start, cs.env);
    r.size[d] = eval(a.dims[d].size, cs.env);
    int64_t step = a.dims[d].step;
    if (!access_size_ok(IntOps{}, r.size[d])) {
      fail_check(Rule::access_size, std::string(role) + " '" + t.name + "' dim " +
                                        std::to_string(d) + " has size " +
                                        std::to_string(r.size[d]));
    }
    int64_t last;
    if (__builtin_mul_overflow(r.size[d] - 1, step, &last) ||
        __builtin_add_overflow(r.start[d], last, &last)) {
      fail_check(CheckKind::out_of_bounds, std::string(role) + " '" + t.name + "' dim " +
                                               std::to_string(d) + " index overflows");
    }
    r.lo[d] = r.start[d];
    r.hi[d] = last;
    if (static_cast<int>(d) != ind_dim && (r.lo[d] < 0 || r.hi[d] >= shape[d])) {
      fail_check(CheckKind::out_of_bounds,
                 std::string(role) + " '" + t.name + "' dim " + std::to_string(d) +
                     " reads indices " + std::to_string(r.lo[d]) + ".." + std::to_string(r.hi[d]) +
                     " of size " + std::to_string(shape[d]) + " (start " + a.dims[d].start.str() +
                     ", size " + a.dims[d].size.str() + ", step " + std::to_string(step) + ")");
    }
  }
  return r;
}

// The view (rows, free sizes and strides; view dim k is tensor dim perm[k]) and its physical
// place: on chip the placement's partition and the copy's byte offset, in HBM the tensor's bytes.
void AccessResolver::place_view(Resolved& r, const Access& a, const DimRanges& d,
                                const char* role) {
  const Tensor& t = *r.tensor;
  const auto& es = m_.estrides[a.tensor];
  const size_t rank = a.dims.size();
  const int64_t dsize = static_cast<int64_t>(dtype_size(t.dtype));
  auto tdim = [&](size_t k) { return a.perm.empty() ? static_cast<int>(k) : a.perm[k]; };
  // On chip, tensor dim 0 is the partition: consecutive indices are a partition apart. A DMA
  // may view it elsewhere than first (validate: moves_across_partitions).
  const int64_t mem_stride = !t.on_chip()               ? 0
                             : t.memory == Memory::SBUF ? m_.sbuf_stride
                                                        : m_.psum_stride;
  auto byte_stride = [&](int td) {
    return (t.on_chip() && td == 0 ? mem_stride : es[td] * dsize) * a.dims[td].step;
  };
  int64_t base = 0;
  if (t.on_chip()) {
    const BufferPlacement& bp = *m_.alloc.placements.at(t.id);
    int64_t part = eval(bp.partition, m_.cores[r.core].env) + d.start[0];
    int64_t coff = m_.copy_offset(r.core, bp, t);
    r.partition_begin = part;
    base = part * mem_stride + coff;
    int64_t bl = coff, bh = coff;
    for (size_t k = 1; k < rank; ++k) {
      base += d.start[k] * es[k] * dsize;
      bl += d.lo[k] * es[k] * dsize;
      bh += d.hi[k] * es[k] * dsize;
    }
    r.byte_begin = bl;
    r.byte_end = bh + dsize;
    r.partitions = d.size[0];
    r.view.rows = d.size[tdim(0)];
    r.view.row_stride = byte_stride(tdim(0));
    if (a.indirect && !indirect_dim_ok(true, a.indirect->dim)) {
      fail_check(Rule::indirect_not_partition,
                 std::string(role) + " '" + t.name +
                     "': indirect offsets on the partition dim are not supported");
    }
  } else {
    int64_t bl = 0, bh = 0;
    for (size_t k = 0; k < rank; ++k) {
      base += d.start[k] * es[k] * dsize;
      bl += d.lo[k] * es[k] * dsize;
      bh += d.hi[k] * es[k] * dsize;
    }
    r.byte_begin = bl;
    r.byte_end = bh + dsize;
    r.view.rows = d.size[tdim(0)];
    r.view.row_stride = byte_stride(tdim(0));
  }
  r.view.dtype = t.dtype;
  r.view.free_rank = static_cast<int>(rank) - 1;
  for (size_t k = 1; k < rank; ++k) {
    r.view.sizes[k - 1] = d.size[tdim(k)];
    r.view.strides[k - 1] = byte_stride(tdim(k));
  }
  r.base_offset = base;
}

// An indirect dim: its offsets column matches the view's rows; value runs read every offset,
// check it against the declared range and the tensor, and shift each row by it. The region
// covers what the offsets (trace-only: the declared range, clamped to the tensor) can reach.
void AccessResolver::resolve_indirect(Resolved& r, int core, const Access& a, const DimRanges& d,
                                      const char* role, ShadowTracker* shadows, uint32_t reader,
                                      bool oob_skip) {
  const Tensor& t = *r.tensor;
  const Indirect& ind = *a.indirect;
  const auto& shape = m_.shapes[a.tensor];
  const int64_t dsize = static_cast<int64_t>(dtype_size(t.dtype));
  Resolved off = resolve(core, *ind.offsets, "indirect offsets", shadows, reader);
  if (!column_ok(IntOps{}, off.view.rows, off.view.free_elems(), r.view.rows)) {
    fail_check(Rule::indirect_offsets_column,
               std::string(role) + " '" + t.name + "': indirect offsets view is [" +
                   std::to_string(off.view.rows) + ", " + std::to_string(off.view.free_elems()) +
                   "], needs [" + std::to_string(r.view.rows) + ", 1]");
  }
  const int64_t jstride = m_.estrides[a.tensor][ind.dim] * dsize;
  const int64_t lo = d.lo[ind.dim], hi = d.hi[ind.dim];
  int64_t omin = ind.lo, omax = ind.hi;
  if (m_.compute_values) {
    if (shadows) shadows->check_read(off, "indirect offsets", reader, true);
    auto& mem = m_.memory(off.core, off.memory);
    off.view.base = mem.data() + off.base_offset;
    omin = INT64_MAX;
    omax = INT64_MIN;
    r.row_offsets.resize(r.view.rows);
    for (int64_t row = 0; row < r.view.rows; ++row) {
      uint32_t bits = load_bits(off.view.dtype, off.view.row(row));
      int64_t v = off.view.dtype == DType::int32 ? static_cast<int64_t>(static_cast<int32_t>(bits))
                                                 : static_cast<int64_t>(bits);
      const bool outside = lo + v < 0 || hi + v >= shape[ind.dim];
      if (v < ind.lo || v > ind.hi) {
        fail_check(CheckKind::indirect_range,
                   std::string(role) + " '" + t.name + "': offset " + std::to_string(v) +
                       " at row " + std::to_string(row) + " is outside the declared range [" +
                       std::to_string(ind.lo) + ", " + std::to_string(ind.hi) + "]" +
                       (outside ? " (" + flat_element(a, d, v) + ")" : ""));
      }
      if (outside && oob_skip) {
        // oob_mode.skip: the row is not transferred; its offset stays 0 (never dereferenced)
        // and does not widen the region.
        if (r.skipped.empty()) r.skipped.assign(static_cast<size_t>(r.view.rows), 0);
        r.skipped[row] = 1;
        r.row_offsets[row] = 0;
        continue;
      }
      if (outside) {
        fail_check(CheckKind::out_of_bounds,
                   std::string(role) + " '" + t.name + "' dim " + std::to_string(ind.dim) +
                       " reads indices " + std::to_string(lo + v) + ".." + std::to_string(hi + v) +
                       " of size " + std::to_string(shape[ind.dim]) + " (indirect offset " +
                       std::to_string(v) + " at row " + std::to_string(row) + "; " +
                       flat_element(a, d, v) + ")");
      }
      r.row_offsets[row] = v * jstride;
      omin = std::min(omin, v);
      omax = std::max(omax, v);
    }
    if (omin > omax) omin = omax = 0;  // every row skipped
  }
  // Trace-only runs know only the declared range; they do not check indirect bounds, and the
  // region is clamped to the tensor so that absurd declared ranges cannot overflow.
  const int64_t fit_hi = shape[ind.dim] - 1 - hi;
  omin = std::min(std::max(omin, -lo), fit_hi);
  omax = std::max(std::min(omax, fit_hi), omin);
  r.byte_begin += omin * jstride;
  r.byte_end += omax * jstride;
  r.byte_begin = std::max<int64_t>(r.byte_begin, 0);
}

// The first element of a row that an indirect offset v sends outside the tensor, as a row-major
// index into the whole tensor: "flat element F of N" (the NKI simulator reports such an access as
// NumPy's "index F is out of bounds for axis 0 with size N"; ncverify_nki/simulate.py).
std::string AccessResolver::flat_element(const Access& a, const DimRanges& d, int64_t v) const {
  const auto& es = m_.estrides[a.tensor];
  const auto& shape = m_.shapes[a.tensor];
  int64_t flat = v * es[a.indirect->dim];
  for (size_t k = 0; k < a.dims.size(); ++k) flat += d.start[k] * es[k];
  return "flat element " + std::to_string(flat) + " of " + std::to_string(shape[0] * es[0]);
}

// Value runs: the bytes the access covers (on chip within each partition, from the copy's
// offset; in HBM within the tensor; an indirect row offset is added per row later), and the
// view's base pointer into the memory array, whose fill is applied there first.
void AccessResolver::byte_runs(Resolved& r, const Access& a, const DimRanges& d) {
  const Tensor& t = *r.tensor;
  const auto& es = m_.estrides[a.tensor];
  const size_t rank = a.dims.size();
  const int64_t dsize = static_cast<int64_t>(dtype_size(t.dtype));
  if (!(a.indirect && !t.on_chip())) {
    const size_t first = t.on_chip() ? 1 : 0;
    int64_t run_base = t.on_chip() ? m_.copy_offset(r.core, *m_.alloc.placements.at(t.id), t) : 0;
    std::vector<std::pair<int64_t, int64_t>> box;
    for (size_t k = first; k < rank; ++k) {
      run_base += d.start[k] * es[k] * dsize;
      box.emplace_back(d.size[k], es[k] * a.dims[k].step * dsize);
    }
    r.runs = box_runs(run_base, std::move(box), dsize);
  }
  if (t.on_chip()) {
    auto& mem = m_.memory(r.core, t.memory);
    mem.prepare(r.partition_begin, r.partitions, r.byte_begin, r.byte_end);
    r.view.base = mem.data() + r.base_offset;
  } else {
    r.view.base = m_.hbm[t.id].data() + r.base_offset;
  }
  if (!r.row_offsets.empty()) r.view.row_offsets = r.row_offsets.data();
  if (a.indirect && !t.on_chip()) {
    // Rows land at run-time offsets: collect the bytes element run by element run.
    collect_runs(r);
  }
}

void AccessResolver::skip_rows(Resolved& r, const std::vector<uint8_t>& skipped) {
  r.skipped = skipped;
  if (r.tensor->on_chip() || !m_.compute_values) return;  // on chip: the shadow checks skip rows
  // HBM: the covered bytes are those of the rows still transferred.
  r.runs.clear();
  collect_runs(r);
}

// The bytes an HBM access covers, element run by element run (rows at run-time offsets, some
// rows skipped), sorted and coalesced.
void AccessResolver::collect_runs(Resolved& r) {
  const int64_t dsize = static_cast<int64_t>(dtype_size(r.tensor->dtype));
  for_each_run(r, [&](int64_t off, int64_t n, int64_t s) {
    if (s == dsize) {
      r.runs.push_back({off, off + n * dsize});
    } else {
      for (int64_t j = 0; j < n; ++j) r.runs.push_back({off + j * s, off + j * s + dsize});
    }
  });
  normalize_runs(r.runs);
}

}  // namespace interp
}  // namespace ncv

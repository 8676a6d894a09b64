// Access resolution (symbolic Access -> concrete View + physical region, with bounds and
// indirect-range checks) and the shadow checks behind uninitialized and clobbered reads.
#include <algorithm>
#include <array>
#include <cstring>

#include "model/interpreter_impl.h"

namespace ncv::interp {

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

Resolved Interp::resolve(int core, const Access& a, const char* role) {
  Resolved r;
  const Tensor& t = p_.tensor(a.tensor);
  const auto& shape = shapes_[a.tensor];
  const auto& es = estrides_[a.tensor];
  const CoreState& cs = cores_[core];
  r.tensor = &t;
  r.id = t.id;
  r.memory = t.memory;
  r.core = core;
  if (a.core) {
    int64_t c = eval(*a.core, cs.env);
    if (c < 0 || c >= grid_) {
      fail(CheckKind::out_of_bounds, std::string(role) + " '" + t.name + "' names core " +
                                         std::to_string(c) + "; the grid has " +
                                         std::to_string(grid_));
    }
    r.core = static_cast<int>(c);
    if (!live_[static_cast<size_t>(r.core) * p_.tensors.size() + t.id]) {
      fail(CheckKind::out_of_bounds,
           std::string(role) + " '" + t.name + "' is not live on core " + std::to_string(c));
    }
  }
  const size_t rank = a.dims.size();
  const int64_t dsize = static_cast<int64_t>(dtype_size(t.dtype));
  // Fixed arrays: validation caps an access at 1 + kMaxFreeDims dims, and resolve runs for every
  // operand of every instance (four vectors here were a tenth of a small run's allocations).
  std::array<int64_t, 1 + kMaxFreeDims> start{}, size{}, lo{}, hi{};
  if (rank > start.size()) {
    fail(CheckKind::shape_rule, std::string(role) + " '" + t.name + "' has " +
                                    std::to_string(rank) + " index dims, more than " +
                                    std::to_string(1 + kMaxFreeDims));
  }
  int ind_dim = a.indirect ? a.indirect->dim : -1;
  for (size_t d = 0; d < rank; ++d) {
    start[d] = eval(a.dims[d].start, cs.env);
    size[d] = eval(a.dims[d].size, cs.env);
    int64_t step = a.dims[d].step;
    if (size[d] < 1) {
      fail(CheckKind::shape_rule, std::string(role) + " '" + t.name + "' dim " + std::to_string(d) +
                                      " has size " + std::to_string(size[d]));
    }
    int64_t last;
    if (__builtin_mul_overflow(size[d] - 1, step, &last) ||
        __builtin_add_overflow(start[d], last, &last)) {
      fail(CheckKind::out_of_bounds,
           std::string(role) + " '" + t.name + "' dim " + std::to_string(d) + " index overflows");
    }
    lo[d] = start[d];
    hi[d] = last;
    if (static_cast<int>(d) != ind_dim && (lo[d] < 0 || hi[d] >= shape[d])) {
      fail(CheckKind::out_of_bounds,
           std::string(role) + " '" + t.name + "' dim " + std::to_string(d) + " reads indices " +
               std::to_string(lo[d]) + ".." + std::to_string(hi[d]) + " of size " +
               std::to_string(shape[d]) + " (start " + a.dims[d].start.str() + ", size " +
               a.dims[d].size.str() + ", step " + std::to_string(step) + ")");
    }
  }
  // View: view dim k is tensor dim perm[k].
  auto tdim = [&](size_t k) { return a.perm.empty() ? static_cast<int>(k) : a.perm[k]; };
  int64_t mem_stride = 0, base = 0;
  if (t.on_chip()) {
    const BufferPlacement& bp = *alloc_.placements.at(t.id);
    mem_stride = t.memory == Memory::SBUF ? sbuf_stride_ : psum_stride_;
    int64_t part = eval(bp.partition, cores_[r.core].env) + start[0];
    int64_t coff = copy_offset(r.core, bp, t);
    r.partition_begin = part;
    base = part * mem_stride + coff;
    int64_t bl = coff, bh = coff;
    for (size_t d = 1; d < rank; ++d) {
      base += start[d] * es[d] * dsize;
      bl += lo[d] * es[d] * dsize;
      bh += hi[d] * es[d] * dsize;
    }
    r.byte_begin = bl;
    r.byte_end = bh + dsize;
    r.view.rows = size[0];
    r.view.row_stride = mem_stride;
    if (ind_dim == 0) {
      fail(CheckKind::shape_rule, std::string(role) + " '" + t.name +
                                      "': indirect offsets on the partition dim are not supported");
    }
  } else {
    int64_t bl = 0, bh = 0;
    for (size_t d = 0; d < rank; ++d) {
      base += start[d] * es[d] * dsize;
      bl += lo[d] * es[d] * dsize;
      bh += hi[d] * es[d] * dsize;
    }
    r.byte_begin = bl;
    r.byte_end = bh + dsize;
    int td0 = tdim(0);
    r.view.rows = size[td0];
    r.view.row_stride = es[td0] * a.dims[td0].step * dsize;
  }
  r.view.dtype = t.dtype;
  r.view.free_rank = static_cast<int>(rank) - 1;
  for (size_t k = 1; k < rank; ++k) {
    int td = tdim(k);
    r.view.sizes[k - 1] = size[td];
    r.view.strides[k - 1] = es[td] * a.dims[td].step * dsize;
  }
  if (a.indirect) {
    const Indirect& ind = *a.indirect;
    Resolved off = resolve(core, *ind.offsets, "indirect offsets");
    if (off.view.rows != r.view.rows || off.view.free_elems() != 1) {
      fail(CheckKind::shape_rule,
           std::string(role) + " '" + t.name + "': indirect offsets view is [" +
               std::to_string(off.view.rows) + ", " + std::to_string(off.view.free_elems()) +
               "], needs [" + std::to_string(r.view.rows) + ", 1]");
    }
    int64_t jstride = es[ind.dim] * dsize;
    int64_t omin = ind.lo, omax = ind.hi;
    if (opts_.compute_values) {
      check_read(off, "indirect offsets");
      auto& mem = off.memory == Memory::SBUF ? cores_[off.core].sbuf : cores_[off.core].psum;
      off.view.base = mem.data() + off.base_offset;
      omin = INT64_MAX;
      omax = INT64_MIN;
      r.row_offsets.resize(r.view.rows);
      for (int64_t row = 0; row < r.view.rows; ++row) {
        uint32_t bits = load_bits(off.view.dtype, off.view.row(row));
        int64_t v = off.view.dtype == DType::int32
                        ? static_cast<int64_t>(static_cast<int32_t>(bits))
                        : static_cast<int64_t>(bits);
        if (v < ind.lo || v > ind.hi) {
          fail(CheckKind::indirect_range,
               std::string(role) + " '" + t.name + "': offset " + std::to_string(v) + " at row " +
                   std::to_string(row) + " is outside the declared range [" +
                   std::to_string(ind.lo) + ", " + std::to_string(ind.hi) + "]");
        }
        if (lo[ind.dim] + v < 0 || hi[ind.dim] + v >= shape[ind.dim]) {
          fail(CheckKind::out_of_bounds,
               std::string(role) + " '" + t.name + "' dim " + std::to_string(ind.dim) +
                   " reads indices " + std::to_string(lo[ind.dim] + v) + ".." +
                   std::to_string(hi[ind.dim] + v) + " of size " + std::to_string(shape[ind.dim]) +
                   " (indirect offset " + std::to_string(v) + " at row " + std::to_string(row) +
                   ")");
        }
        r.row_offsets[row] = v * jstride;
        omin = std::min(omin, v);
        omax = std::max(omax, v);
      }
    }
    // Trace-only runs know only the declared range; they do not check indirect bounds, and the
    // region is clamped to the tensor so that absurd declared ranges cannot overflow.
    const int64_t fit_hi = shape[ind.dim] - 1 - hi[ind.dim];
    omin = std::min(std::max(omin, -lo[ind.dim]), fit_hi);
    omax = std::max(std::min(omax, fit_hi), omin);
    r.byte_begin += omin * jstride;
    r.byte_end += omax * jstride;
    r.byte_begin = std::max<int64_t>(r.byte_begin, 0);
  }
  r.base_offset = base;
  // Bytes per innermost contiguous run (DMA efficiency in the timing model).
  int64_t run = dsize;
  for (int k = r.view.free_rank - 1; k >= 0; --k) {
    if (r.view.strides[k] != run) break;
    run *= r.view.sizes[k];
  }
  r.contiguous_bytes = run;
  if (opts_.compute_values && !(a.indirect && !t.on_chip())) {
    // On chip: the bytes within each partition (dims after the partition dim, from the copy's
    // offset); HBM: the bytes within the tensor. An indirect row offset is added per row later.
    const size_t first = t.on_chip() ? 1 : 0;
    int64_t run_base = t.on_chip() ? copy_offset(r.core, *alloc_.placements.at(t.id), t) : 0;
    std::vector<std::pair<int64_t, int64_t>> box;
    for (size_t d = first; d < rank; ++d) {
      run_base += start[d] * es[d] * dsize;
      box.emplace_back(size[d], es[d] * a.dims[d].step * dsize);
    }
    r.runs = box_runs(run_base, std::move(box), dsize);
  }
  if (opts_.compute_values) {
    if (t.on_chip()) {
      auto& mem = t.memory == Memory::SBUF ? cores_[r.core].sbuf : cores_[r.core].psum;
      mem.prepare(r.partition_begin, r.view.rows, r.byte_begin, r.byte_end);
      r.view.base = mem.data() + base;
    } else {
      r.view.base = hbm_[t.id].bytes.data() + base;
    }
    if (!r.row_offsets.empty()) r.view.row_offsets = r.row_offsets.data();
    if (a.indirect && !t.on_chip()) {
      // Rows land at run-time offsets: collect the bytes element run by element run.
      for_each_run(r, [&](int64_t off, int64_t n, int64_t s) {
        if (s == dsize) {
          r.runs.push_back({off, off + n * dsize});
        } else {
          for (int64_t j = 0; j < n; ++j) r.runs.push_back({off + j * s, off + j * s + dsize});
        }
      });
      normalize_runs(r.runs);
    }
  }
  return r;
}

ShadowMap& Interp::shadow(const Resolved& r) {
  if (!r.tensor->on_chip()) return hbm_[r.id].shadow;
  return r.memory == Memory::SBUF ? cores_[r.core].sbuf_shadow : cores_[r.core].psum_shadow;
}

uint32_t Interp::stamp(const Resolved& r) const {
  return r.tensor->on_chip() ? cores_[r.core].stamp[r.id] : hbm_[r.id].stamp;
}

uint32_t Interp::new_lifetime(TensorId id) {
  if (lifetimes_.size() >= UINT32_MAX - 1) {
    throw InputError("kernel '" + p_.name + "' opens more than 2^32 buffer lifetimes");
  }
  lifetimes_.push_back(Lifetime{id, UINT32_MAX});
  return static_cast<uint32_t>(lifetimes_.size() - 1);
}

// A byte of the read was last written by stamp `found` (0 = never), not by the reader's own
// lifetime. It is a clobber when another buffer wrote it while the reader's lifetime was open,
// or when that other buffer's lifetime was still open when the reader's began (on hardware a new
// lifetime writes nothing, so those bytes still hold the other buffer's data); otherwise the
// reader never wrote it in this lifetime.
void Interp::fail_read(const Resolved& r, const char* role, int64_t partition, int64_t byte,
                       uint32_t found) {
  if (!r.tensor->on_chip()) {
    const int64_t dsize = static_cast<int64_t>(dtype_size(r.tensor->dtype));
    fail(CheckKind::uninitialized_read, std::string(role) + " reads HBM tensor '" + r.tensor->name +
                                            "' at flat element " + std::to_string(byte / dsize) +
                                            " before anything wrote it");
  }
  const uint32_t mine = stamp(r);
  const bool foreign = found != 0 && lifetimes_[found].tensor != r.id;
  const bool clobbered = foreign && (found > mine || lifetimes_[found].ended_after >= mine);
  std::string where = " at " + std::string(memory_name(r.memory)) + " partition " +
                      std::to_string(partition) + ", byte " + std::to_string(byte);
  if (!clobbered) {
    fail(CheckKind::uninitialized_read, std::string(role) + " reads '" + r.tensor->name + "'" +
                                            where + " before anything wrote it in this lifetime");
  }
  fail(CheckKind::clobbered_read, std::string(role) + " reads '" + r.tensor->name + "'" + where +
                                      ", but those bytes were last written by '" +
                                      p_.tensor(lifetimes_[found].tensor).name +
                                      "': the two buffers overlap while both are live");
}

// Calls f(p0, p1, runs) for the byte runs of `r` in partitions [p0, p1): once for the whole
// access, or once per row when indirect offsets shift each row.
template <class F>
void Interp::for_each_row_runs(const Resolved& r, F&& f) {
  const int64_t p0 = r.tensor->on_chip() ? r.partition_begin : 0;
  if (!r.tensor->on_chip() || r.row_offsets.empty()) {
    f(p0, r.tensor->on_chip() ? p0 + r.view.rows : 1, r.runs);
    return;
  }
  std::vector<ByteRun> shifted;
  for (int64_t row = 0; row < r.view.rows; ++row) {
    shifted = r.runs;
    for (ByteRun& b : shifted) b = {b.begin + r.row_offsets[row], b.end + r.row_offsets[row]};
    f(p0 + row, p0 + row + 1, shifted);
  }
}

ShadowMap& Interp::writer_map(const Resolved& r) {
  if (!r.tensor->on_chip()) return hbm_[r.id].writer;
  return r.memory == Memory::SBUF ? cores_[r.core].sbuf_writer : cores_[r.core].psum_writer;
}

void Interp::check_read(const Resolved& r, const char* role, bool carried) {
  if (!opts_.compute_values) return;
  const ShadowMap& map = shadow(r);
  const uint32_t want = stamp(r);
  for_each_row_runs(r, [&](int64_t p0, int64_t p1, const std::vector<ByteRun>& runs) {
    if (auto m = map.find_other(p0, p1, runs, want)) {
      fail_read(r, role, m->partition, m->byte, m->found);
    }
  });
  if (carried) check_carried(r, role);
}

// The reader runs in iteration serial `mine`; every byte it reads was last written in some
// iteration serial. Both serials name a chain of nested affine-loop iterations; if one loop
// instance appears in both chains with different iterations, the read depends on another
// iteration of a loop whose iterations may run in any order or overlap (facts §3 "Legacy
// loops": affine_range with a true dependency can give wrong numerics).
void Interp::check_carried(const Resolved& r, const char* role) {
  // The iteration of the core executing the instruction (r.core may be a peer whose memory it
  // names).
  const uint32_t mine = frames_[current_core_].back().serial;
  if (mine == 0) return;
  const ShadowMap& map = writer_map(r);
  std::vector<ShadowMap::Mismatch> others;
  for_each_row_runs(r, [&](int64_t p0, int64_t p1, const std::vector<ByteRun>& runs) {
    if (map.find_other(p0, p1, runs, mine)) map.others(p0, p1, runs, mine, others);
  });
  for (const ShadowMap::Mismatch& m : others) {
    for (uint32_t w = m.found; w != 0; w = iterations_[w].parent) {
      for (uint32_t c = mine; c != 0; c = iterations_[c].parent) {
        const AffineIteration &wi = iterations_[w], &ci = iterations_[c];
        if (wi.instance != ci.instance || wi.iteration == ci.iteration) continue;
        const std::string where = r.tensor->on_chip()
                                      ? std::string(memory_name(r.memory)) + " partition " +
                                            std::to_string(m.partition) + ", byte " +
                                            std::to_string(m.byte)
                                      : "byte " + std::to_string(m.byte);
        fail(CheckKind::carried_dependency,
             std::string(role) + " reads '" + r.tensor->name + "' at " + where +
                 ", written by iteration " + std::to_string(wi.iteration) + " of affine loop '" +
                 wi.loop->var + "' while running its iteration " + std::to_string(ci.iteration) +
                 ": affine iterations may run in any order or overlap, so this carried "
                 "dependency needs a sequential loop");
      }
    }
  }
}

void Interp::mark_written(const Resolved& r) {
  if (!opts_.compute_values) return;
  ShadowMap& map = shadow(r);
  ShadowMap& writers = writer_map(r);
  const uint32_t s = stamp(r), serial = frames_[current_core_].back().serial;
  for_each_row_runs(r, [&](int64_t p0, int64_t p1, const std::vector<ByteRun>& runs) {
    map.write(p0, p1, runs, s);
    writers.write(p0, p1, runs, serial);
  });
}

void Interp::check_partition_rule(const Resolved& r, const char* role) {
  if (!r.tensor->on_chip()) return;
  int64_t P = r.view.rows, s = r.partition_begin;
  // facts §2 "Partition constraints (all engines)".
  bool ok = P > 64 ? s == 0 : P > 32 ? (s == 0 || s == 64) : (s % 32 == 0 && s <= 96);
  if (P > hw_.partitions) ok = false;
  if (!ok) {
    fail(
        CheckKind::partition_rule,
        std::string(role) + " '" + r.tensor->name + "' spans " + std::to_string(P) +
            " partitions starting at partition " + std::to_string(s) +
            "; engines need start 0 for P > 64, 0 or 64 for P <= 64, a multiple of 32 for P <= 32");
  }
}

void Interp::check_free_limit(const Resolved& r, const char* role) {
  if (!r.tensor->on_chip()) return;
  int64_t limit = r.memory == Memory::SBUF ? hw_.free_max_sbuf_elems : hw_.free_max_psum_elems;
  if (r.view.free_elems() > limit) {
    fail(CheckKind::shape_rule, std::string(role) + " '" + r.tensor->name + "' has " +
                                    std::to_string(r.view.free_elems()) +
                                    " elements per partition; the limit for " +
                                    std::string(memory_name(r.memory)) + " operands is " +
                                    std::to_string(limit) + " (facts §2)");
  }
}

void Interp::check_psum_bank(const Resolved& r, const char* role) {
  if (r.memory != Memory::PSUM) return;
  int64_t bank = hw_.psum_bank_bytes;
  if (r.byte_begin / bank != (r.byte_end - 1) / bank) {
    fail(CheckKind::psum_bank, std::string(role) + " '" + r.tensor->name + "' covers PSUM bytes [" +
                                   std::to_string(r.byte_begin) + ", " +
                                   std::to_string(r.byte_end) + ") of each partition, crossing a " +
                                   std::to_string(bank) + "-byte bank boundary");
  }
}

}  // namespace ncv::interp

// Access resolution (symbolic Access -> concrete View + physical region, with bounds and
// indirect-range checks) and the shadow checks behind uninitialized and clobbered reads.
#include <algorithm>
#include <cstring>

#include "model/interpreter_impl.h"

namespace ncv::interp {

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
  std::vector<int64_t> start(rank), size(rank), lo(rank), hi(rank);
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
  if (opts_.compute_values) {
    if (t.on_chip()) {
      auto& mem = t.memory == Memory::SBUF ? cores_[r.core].sbuf : cores_[r.core].psum;
      r.view.base = mem.data() + base;
    } else {
      r.view.base = hbm_[t.id].bytes.data() + base;
    }
    if (!r.row_offsets.empty()) r.view.row_offsets = r.row_offsets.data();
  }
  return r;
}

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
}  // namespace

void Interp::check_read(const Resolved& r, const char* role) {
  if (!opts_.compute_values) return;
  const int64_t dsize = static_cast<int64_t>(dtype_size(r.tensor->dtype));
  if (!r.tensor->on_chip()) {
    const auto& w = hbm_[r.id].written;
    for_each_run(r, [&](int64_t off, int64_t n, int64_t s) {
      for (int64_t j = 0; j < n; ++j) {
        int64_t e = off + j * s;
        if (!w[e]) {
          fail(CheckKind::uninitialized_read,
               std::string(role) + " reads HBM tensor '" + r.tensor->name + "' at flat element " +
                   std::to_string(e / dsize) + " before anything wrote it");
        }
      }
    });
    return;
  }
  const auto& owner =
      r.memory == Memory::SBUF ? cores_[r.core].sbuf_owner : cores_[r.core].psum_owner;
  const int64_t stride = r.memory == Memory::SBUF ? sbuf_stride_ : psum_stride_;
  const uint16_t tag = static_cast<uint16_t>(r.id + 1);
  for_each_run(r, [&](int64_t off, int64_t n, int64_t s) {
    bool ok = true;
    if (s == dsize) {
      const uint16_t* p = owner.data() + off;
      for (int64_t j = 0; j < n * dsize; ++j) ok &= (p[j] == tag);
    } else {
      for (int64_t j = 0; j < n; ++j) {
        const uint16_t* p = owner.data() + off + j * s;
        for (int64_t b = 0; b < dsize; ++b) ok &= (p[b] == tag);
      }
    }
    if (ok) return;
    for (int64_t j = 0; j < n; ++j) {
      for (int64_t b = 0; b < dsize; ++b) {
        int64_t at = off + j * s + b;
        uint16_t o = owner[at];
        if (o == tag) continue;
        std::string where = " at " + std::string(memory_name(r.memory)) + " partition " +
                            std::to_string(at / stride) + ", byte " + std::to_string(at % stride);
        if (o == 0) {
          fail(CheckKind::uninitialized_read,
               std::string(role) + " reads '" + r.tensor->name + "'" + where +
                   " before anything wrote it in this lifetime (poisoned NaN)");
        }
        fail(CheckKind::clobbered_read, std::string(role) + " reads '" + r.tensor->name + "'" +
                                            where + ", but those bytes were last written by '" +
                                            p_.tensor(o - 1).name +
                                            "': the two buffers overlap while both are live");
      }
    }
  });
}

void Interp::mark_written(const Resolved& r) {
  if (!opts_.compute_values) return;
  const int64_t dsize = static_cast<int64_t>(dtype_size(r.tensor->dtype));
  if (!r.tensor->on_chip()) {
    auto& w = hbm_[r.id].written;
    for_each_run(r, [&](int64_t off, int64_t n, int64_t s) {
      for (int64_t j = 0; j < n; ++j) std::memset(w.data() + off + j * s, 1, dsize);
    });
    return;
  }
  auto& owner = r.memory == Memory::SBUF ? cores_[r.core].sbuf_owner : cores_[r.core].psum_owner;
  const uint16_t tag = static_cast<uint16_t>(r.id + 1);
  for_each_run(r, [&](int64_t off, int64_t n, int64_t s) {
    if (s == dsize) {
      std::fill_n(owner.data() + off, n * dsize, tag);
    } else {
      for (int64_t j = 0; j < n; ++j) std::fill_n(owner.data() + off + j * s, dsize, tag);
    }
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

// The ISA rules of one instruction instance (model/isa/rules.h) as the interpreter checks them:
// every compute operand's partitions and free size, PSUM banks, matching shapes, per-partition
// columns and affine patterns. The instruction-specific limits (matmul, transpose, reductions)
// are checked where each instruction executes (exec.cpp), from the same rules.
#include <array>

#include "model/interp/interp.h"

namespace ncv {
inline namespace interp {

namespace {

// Whether the affine pattern's values over dst's view fit int32, evaluated without overflow.
bool affine_pattern_fits(int64_t offset, int64_t cm, const Resolved& dst,
                         const std::vector<int64_t>& steps) {
  const WideOps o;
  std::array<long double, kMaxFreeDims> sizes{};
  for (int k = 0; k < dst.view.free_rank; ++k) sizes[k] = o.lit(dst.view.sizes[k]);
  const long double m =
      affine_pattern_magnitude(o, o.lit(offset), cm, o.lit(dst.view.rows), sizes.data(),
                               static_cast<size_t>(dst.view.free_rank), steps.data(), steps.size());
  return affine_pattern_ok(o, m);
}

}  // namespace

std::string shape_str(const Resolved& r) {
  return "[" + std::to_string(r.view.rows) + ", " + std::to_string(r.view.free_elems()) + "]";
}

// A compute engine's operand: resolved, on chip, within the partition and free-size rules, and
// (when read) initialized and owned by its reader.
Resolved Interpreter::compute_operand(int core, const Access& a, const char* role, bool is_read,
                                      bool carried) {
  Resolved r = resolve(core, a, role);
  if (r.memory == Memory::HBM) {
    fail(CheckKind::engine_rule,
         std::string(role) + " '" + r.tensor->name + "' is in HBM; compute engines read SBUF/PSUM");
  }
  check_partition_rule(r, role);
  check_free_limit(r, role);
  if (is_read) check_read(r, role, carried);
  return r;
}

void Interpreter::check_partition_rule(const Resolved& r, const char* role) {
  if (!r.tensor->on_chip()) return;
  if (!partition_start_ok(IntOps{}, r.partition_begin, r.view.rows, hw_)) {
    fail(
        Rule::partition_start,
        std::string(role) + " '" + r.tensor->name + "' spans " + std::to_string(r.view.rows) +
            " partitions starting at partition " + std::to_string(r.partition_begin) +
            "; engines need start 0 for P > 64, 0 or 64 for P <= 64, a multiple of 32 for P <= 32");
  }
}

namespace {
// Distinct elements per partition: the free dims a zero stride repeats (broadcasts) add none.
// The engines' free-size limit is a tile's (nl.tile_size.psum_fmax / sbuf_fmax: "maximum free
// dimension of a tile"), which a broadcast read of a smaller tile does not enlarge.
int64_t footprint_elems(const View& v) {
  int64_t n = 1;
  for (int d = 0; d < v.free_rank; ++d) n *= v.strides[d] == 0 ? 1 : v.sizes[d];
  return n;
}
}  // namespace

void Interpreter::check_free_limit(const Resolved& r, const char* role) {
  if (!r.tensor->on_chip()) return;
  const int64_t limit = free_size_limit(r.memory, hw_);
  // The tile's distinct elements: nki-library d2ad3a5's layernorm_tkg (a hardware test row,
  // lnc 2, B 128, S 5, H 3072) reads a [128, 320] PSUM mean broadcast 24 times (7680 reads).
  if (!within_limit(IntOps{}, footprint_elems(r.view), limit)) {
    fail(Rule::free_size, std::string(role) + " '" + r.tensor->name + "' has " +
                              std::to_string(footprint_elems(r.view)) +
                              " elements per partition; the limit for " +
                              std::string(memory_name(r.memory)) + " operands is " +
                              std::to_string(limit) + " (ARCH2)");
  }
}

void Interpreter::check_psum_bank(const Resolved& r, const char* role) {
  if (r.memory != Memory::PSUM) return;
  if (!psum_bank_ok(IntOps{}, r.byte_begin, r.byte_end, hw_)) {
    fail(Rule::psum_bank, std::string(role) + " '" + r.tensor->name + "' covers PSUM bytes [" +
                              std::to_string(r.byte_begin) + ", " + std::to_string(r.byte_end) +
                              ") of each partition, crossing a " +
                              std::to_string(hw_.psum_bank_bytes) + "-byte bank boundary");
  }
}

void Interpreter::same_shape(const Resolved& a, const Resolved& b, const char* what) {
  if (!shape_is(IntOps{}, a.view.rows, a.view.free_elems(), b.view.rows, b.view.free_elems())) {
    fail(Rule::same_shape, std::string(what) + ": '" + a.tensor->name + "' is " + shape_str(a) +
                               " but '" + b.tensor->name + "' is " + shape_str(b) +
                               " (partitions x elements per partition must match)");
  }
}

void Interpreter::column_shape(const Resolved& col, int64_t rows, const char* what) {
  if (!column_ok(IntOps{}, col.view.rows, col.view.free_elems(), rows)) {
    fail(Rule::column_operand, std::string(what) + " '" + col.tensor->name + "' is " +
                                   shape_str(col) + "; it must be a [" + std::to_string(rows) +
                                   ", 1] per-partition column");
  }
}

int64_t Interpreter::affine_pattern_offset(int core, const Expr& offset_expr,
                                           int64_t channel_multiplier,
                                           const std::vector<int64_t>& steps, const Resolved& dst,
                                           const char* op) {
  int64_t offset = eval(offset_expr, m_.cores[core].env);
  if (static_cast<int>(steps.size()) != dst.view.free_rank) {
    fail(CheckKind::shape_rule, std::string(op) + " has " + std::to_string(steps.size()) +
                                    " steps for a view with " + std::to_string(dst.view.free_rank) +
                                    " free dims");
  }
  if (!affine_pattern_fits(offset, channel_multiplier, dst, steps)) {
    fail(Rule::affine_pattern_int32, std::string(op) + " pattern values overflow int32");
  }
  return offset;
}

}  // namespace interp
}  // namespace ncv

// Generators for the instruction-level properties (properties 5 and 6, properties/README.md):
// element values with the hard cases RapidCheck's own generators never produce (NaN payloads,
// +-Inf, -0, subnormals, max finite, values that overflow narrow types), sizes biased to the ISA's
// edges, legal partition windows, and strided / permuted / broadcast views.
//
// The pick_* functions draw from RapidCheck (call them inside a property); they shrink. Element
// arrays are filled from a RapidCheck-drawn seed by a fixed SplitMix64 stream instead, so that
// thousands of elements cost no shrink tree and the reproduce string still covers them.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "model/ir/instruction.h"
#include "model/numerics/dtype.h"
#include "properties/instruction_case.h"
#include "properties/shrinking_choice.h"

namespace ncv::props::instr {

class SplitMix {
 public:
  explicit SplitMix(uint64_t seed) : state_(seed) {}
  uint64_t next();
  int64_t in(int64_t lo, int64_t hi);  // uniform in [lo, hi]
  bool chance(int percent);

 private:
  uint64_t state_;
};

enum class ValueMix : uint8_t {
  hard,        // specials, subnormals, extremes and ordinary values mixed
  ordinary,    // finite normal values of moderate size with full mantissas
  small_ints,  // integers in [-8, 8] (unsigned: [0, 16]): exact in every dtype and in sums
  wide_ints,   // integers of magnitude below 2^15 (unsigned: [0, 2^15)): sums and products of
               // two fit int32 and pass fp32's 2^24 (GpSimd's exact integer arithmetic)
  raw_bits,    // uniform bit patterns of the dtype
  predicates,  // mostly 0 and 1, some other integers
};
std::string_view value_mix_name(ValueMix m);

// n element bit patterns of dtype t.
std::vector<uint32_t> fill_values(DType t, int64_t n, ValueMix mix, uint64_t seed);

inline const std::vector<DType> kFloatDTypes = {
    DType::fp32, DType::bf16, DType::fp16, DType::fp8_e4m3, DType::fp8_e4m3fn, DType::fp8_e5m2};
inline const std::vector<DType> kIntDTypes = {DType::int32, DType::uint8, DType::uint16,
                                              DType::uint32};
inline const std::vector<DType> kAllDTypesList = {
    DType::fp32,     DType::bf16,  DType::fp16,  DType::fp8_e4m3, DType::fp8_e4m3fn,
    DType::fp8_e5m2, DType::int32, DType::uint8, DType::uint16,   DType::uint32};

// --- RapidCheck pickers ------------------------------------------------------------------------

// One of `values`, shrinking toward the first (RapidCheck's own element choices never shrink).
template <class T>
T pick_one(std::vector<T> values) {
  return *shrinking_choice(std::move(values));
}
uint64_t pick_seed();
ValueMix pick_value_mix(const std::vector<ValueMix>& allowed);
DType pick_dtype(const std::vector<DType>& allowed);
bool pick_bool(int percent_true);
int64_t pick_int(int64_t lo, int64_t hi);  // uniform in [lo, hi]
// A size in [lo, hi], one time in four an edge: lo, hi, or 1, 2, 31, 32, 33, 64, 65, 127, 128,
// 512 when they lie inside.
int64_t pick_size(int64_t lo, int64_t hi);
// A free shape of 1..max_rank dims with at most max_elems elements.
std::vector<int64_t> pick_free_shape(int64_t max_elems, int max_rank);
// An fp32 immediate: hard values (NaN, +-Inf, -0, subnormals, huge) or ordinary ones.
float pick_immediate(ValueMix mix);

// The engines' partition rule (ARCH2 partition constraints): start 0 for more than 64
// partitions, 0 or 64 for 33 to 64, a multiple of 32 up to 96 for 32 or fewer; never more than
// 128 partitions. Written here again on purpose, not taken from model/isa/rules.h: the
// instruction properties are a second opinion on the model, so they share none of its code.
bool partition_start_legal(int64_t rows, int64_t start);
int64_t pick_partition_start(int64_t rows);  // a legal start

struct ViewOptions {
  bool on_chip = true;     // view dim 0 is the partition dim: legal start, never strided
  bool broadcast = false;  // free dims may repeat one element (step 0): read operands only
  bool strided = true;     // free dims may have steps 2 and 3 and start past 0
  bool permute = true;     // free dims may be permuted
  // Bound on the buffer's elements per partition (e.g. one 2 KiB PSUM bank); 0 = none.
  int64_t max_row_elems = 0;
};

// A buffer (tensor) shape and a view into it whose view shape is [rows, free...].
struct PlacedView {
  std::vector<int64_t> shape;
  ViewSpec view;
};
PlacedView pick_view(int64_t rows, const std::vector<int64_t>& free, const ViewOptions& o);
// Another view of shape [rows, free...] inside an existing on-chip buffer of `shape` (legal
// partition start, steps 1 or 2, no permutation), or nothing when none fits.
std::optional<ViewSpec> pick_view_within(const std::vector<int64_t>& shape, int64_t rows,
                                         const std::vector<int64_t>& free);

}  // namespace ncv::props::instr

// Semantics of the top-8 family (ISA-OLD max8, nc_find_index8, nc_match_replace8), over resolved
// Views. Each partition (row) is independent; its free elements are flattened row-major and read
// as fp32 (the ISA: "converts them to fp32 internally"). One implementation serves both
// ExecModes: it is already the plain per-element loop.
#pragma once

#include <cstdint>
#include <optional>

#include "model/semantics/view.h"

namespace ncv {
inline namespace semantics {

// max8: dst[r, 0..7] = the 8 largest of src's row r, in descending order, converted to dst's
// dtype. The order is fp32's, with two choices the ISA leaves open made as max does
// (semantics.h): +0 above -0, and a NaN above every number (so a row with a NaN yields it first).
// src has at least 8 free elements (the interpreter checks Rule::top8_source_size first).
void exec_max8(const View& dst, const View& src);

// A value of `vals` that the data row does not hold: the ISA leaves the instruction's result
// undefined, so the interpreter stops there instead of making one up.
struct Top8Miss {
  int64_t row = 0;
  int k = 0;  // which of the 8 values
  float value = 0;
};

// nc_find_index8: dst[r, k] = the flat index of the first element of data's row r equal (in
// fp32, so -0 == +0 and a NaN matches nothing) to vals[r, k]. Writes nothing and returns the
// first miss (row-major) when some value is not in its row. successive (NKI 0.6): for k = 0..7
// the first equal element no earlier k took, and all ones (dst's dtype) when there is none; no
// miss is returned then.
std::optional<Top8Miss> exec_find_index8(const View& dst, const View& data, const View& vals,
                                         bool successive = false);

// nc_match_replace8, as the ISA's NumPy equivalent states it: for k = 0..7 in order, the first
// element of the row (as replaced so far, in fp32) equal to vals[r, k] becomes imm and its index
// goes to dst_idx[r, k] (when given); dst = the replaced row converted to dst's dtype. Reads
// every input before writing (dst may be data). Writes nothing and returns the first miss when a
// value is not found. reverse (NKI 0.6, the hardware's tie-break): k = 7..0 instead, so
// duplicate values pair the first occurrence with the highest k.
std::optional<Top8Miss> exec_match_replace8(const View& dst, const View& data, const View& vals,
                                            float imm, const View* dst_idx, bool reverse = false);

}  // namespace semantics
}  // namespace ncv

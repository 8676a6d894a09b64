// Fuzzer bytes -> a Program with concrete params, shared by fuzz_program and
// fuzz_timing. The first byte picks the mode:
//   - structured (most values): a Builder program decoded field by field — params with small
//     domains, tensors in every memory and dtype, nested loops, every instruction kind with
//     random access patterns and explicit placements. Shapes stay tiny (free sizes <= 8) so one
//     run takes microseconds; flags 0x40 (of 0xc0) size the first buffer instead to within a
//     few elements of its memory's capacity, so the peak rules are decided at their edge.
//     Starts and sizes are mostly in bounds so runs get past the first instruction, but not
//     always, so dynamic errors are exercised too.
//   - text (first byte kTextMode): a header line `name=value ...` of param values, then .nkir
//     text. This is how every registered kernel becomes a seed (fuzz/make_seeds.cpp).
// Bytes that decode to a statically illegal program (BuildError, ParseError) or to params
// outside the domain give nullopt: the target skips them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/interp/interpreter.h"
#include "model/ir/program.h"

namespace ncv::fuzz {

inline constexpr uint8_t kTextMode = 0xff;

struct DecodedCase {
  Program program;
  ParamValues params;
  uint64_t seed = 0;             // random_inputs seed
  bool prove = false;            // the bytes ask for the Z3 cross-check (structured mode only)
  const HwConfig* hw = nullptr;  // generation the run uses (trn1/2/3)
};

std::optional<DecodedCase> decode_case(const uint8_t* data, size_t size);

// The text-mode encoding of `nkir` at `params` (what make_seeds writes).
std::vector<uint8_t> encode_text_case(const std::string& nkir, const ParamValues& params);

}  // namespace ncv::fuzz

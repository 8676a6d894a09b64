// Minimal reproducers of model bugs that the instruction-level properties found
// (properties/tests/instruction_prop.cpp), kept as regression tests after the fix.
#include <gtest/gtest.h>

#include <bit>

#include "properties/instruction_check.h"

namespace ncv::props::instr {
namespace {

// Found by InstrDmaCopy.MovesAndCastsEveryElementAsDocumented (overlapping views of one HBM
// tensor). A dma_copy whose source and destination have different row counts goes through
// flat_copy (model/interp/exec.cpp), which copies element by element without staging: when
// the views overlap it reads elements it has already overwritten. semantics.h documents that an
// instruction reads all of its inputs before writing any output (the same-row-count path,
// exec_copy, does). Both execution modes share flat_copy, so only the independent expectation
// sees it. Fixed: flat_copy stages the source first.
TEST(InstrModelBug, OverlappingReshapingDmaReadsItsSourceBeforeWriting) {
  InstrCase c("dma_overlap");
  std::vector<uint32_t> values;
  for (int i = 0; i < 8; ++i) values.push_back(std::bit_cast<uint32_t>(static_cast<float>(i)));
  const TensorRef in = c.hbm_input(DType::fp32, {2, 4}, values);
  const TensorRef out = c.hbm_output(DType::fp32, {2, 4});
  c.b().dma_copy(out(), in());
  // out[1, 0:4] = out[0:2, 0:2] (row-major: out[0,0], out[0,1], out[1,0], out[1,1]).
  c.b().dma_copy(out({ds(1, 1), ds(0, 4)}), out({ds(0, 2), ds(0, 2)}));
  c.finish();
  Expected want{DType::fp32, {}};
  for (float v : {0.0f, 1.0f, 2.0f, 3.0f, 0.0f, 1.0f, 4.0f, 5.0f}) {
    want.bits.emplace_back(std::bit_cast<uint32_t>(v));
  }
  const BothRuns runs = run_fast_and_reference(c);
  EXPECT_FALSE(fast_reference_difference(runs.fast, runs.reference));
  const auto problem = expected_difference(runs.fast, c.name_of(out), want);
  EXPECT_FALSE(problem) << *problem;  // before the fix: element 6 was 0 (already overwritten)
}

}  // namespace
}  // namespace ncv::props::instr

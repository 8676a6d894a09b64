// The checks behind the instruction-level properties (properties 5 and 6, properties/README.md).
// Each returns a description of the first problem it finds, or nothing: the properties turn a
// description into a RapidCheck failure, and the mutant tests
// (properties/tests/instruction_mutant_test.cpp) feed them deliberately wrong runs and expectations
// to show that they do report.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/interp/interpreter.h"
#include "model/ir/builder.h"
#include "properties/instruction_case.h"

namespace ncv::props::instr {

struct BothRuns {
  RunResult fast;
  RunResult reference;  // ExecMode::reference: the per-element reference semantics
};
// `strict`: RunOptions::strict_reads, under which an activation input outside its function's
// range gets the default NaN with no reruns (model/interp/interpreter.h), the value the
// expectations give there.
BothRuns run_fast_and_reference(const InstrCase& c, bool strict = false);
RunResult run_case(const InstrCase& c, ExecMode mode = ExecMode::fast, bool strict = false);

// The fast path against the reference path: the same error (kind, instruction and detail) or
// none, the same outputs, every byte equal.
std::optional<std::string> fast_reference_difference(const RunResult& fast,
                                                     const RunResult& reference);

// A run's output against the independently computed expectation, bit for bit; elements with no
// expectation are skipped. Names the first differing element with both values.
std::optional<std::string> expected_difference(const RunResult& run, const std::string& output,
                                               const Expected& want);

// A run that must have been refused by a dynamic check: error of `kind`, raised by instruction
// `instruction` (-1: before any instruction, e.g. at buffer setup), whose message contains every
// one of `fragments`; a refused run returns no outputs.
std::optional<std::string> rejection_difference(const RunResult& run, CheckKind kind,
                                                int64_t instruction,
                                                const std::vector<std::string>& fragments);

// A program that Builder::finish must refuse: the BuildError's message contains every one of
// `fragments` and, when `instruction` is given, the error names that instruction.
std::optional<std::string> build_rejection_difference(InstrCase& c,
                                                      std::optional<uint32_t> instruction,
                                                      const std::vector<std::string>& fragments);

// "fp32 0x7fc00000 (nan)": an element's dtype, bits and value, for failure messages.
std::string describe_element(DType t, uint32_t bits);

}  // namespace ncv::props::instr

#include "properties/instruction_check.h"

#include <bit>
#include <cstdio>

#include "properties/instruction_exact.h"

namespace ncv::props::instr {

namespace {

std::string hex(uint32_t bits, DType t) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%0*x", static_cast<int>(2 * dtype_size(t)), bits);
  return buf;
}

std::string quoted(const std::vector<std::string>& fragments) {
  std::string s;
  for (const std::string& f : fragments) s += (s.empty() ? "\"" : ", \"") + f + "\"";
  return s;
}

bool contains_all(const std::string& message, const std::vector<std::string>& fragments) {
  for (const std::string& f : fragments) {
    if (message.find(f) == std::string::npos) return false;
  }
  return true;
}

std::string error_line(const std::optional<DynamicError>& e) {
  return e ? std::string(check_kind_name(e->kind)) + " at instruction " +
                 std::to_string(e->instruction) + ": " + e->detail
           : std::string("no error");
}

}  // namespace

std::string describe_element(DType t, uint32_t bits) {
  const uint32_t f = exact::to_f32(t, bits);
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(std::bit_cast<float>(f)));
  return std::string(dtype_name(t)) + " " + hex(bits, t) + " (" + buf + ")";
}

RunResult run_case(const InstrCase& c, ExecMode mode, bool strict) {
  RunOptions o;
  o.hw = c.hw();
  o.mode = mode;
  o.record_trace = false;
  o.strict_reads = strict;
  return run_program(c.program(), ParamValues(c.params().begin(), c.params().end()), c.inputs(), o);
}

BothRuns run_fast_and_reference(const InstrCase& c, bool strict) {
  return BothRuns{run_case(c, ExecMode::fast, strict), run_case(c, ExecMode::reference, strict)};
}

std::optional<std::string> fast_reference_difference(const RunResult& fast,
                                                     const RunResult& reference) {
  const std::string fe = error_line(fast.error), re = error_line(reference.error);
  if (fe != re) return "fast path: " + fe + "; reference path: " + re;
  if (fast.outputs.size() != reference.outputs.size()) {
    return "fast path wrote " + std::to_string(fast.outputs.size()) + " outputs, reference " +
           std::to_string(reference.outputs.size());
  }
  for (const auto& [name, f] : fast.outputs) {
    const auto it = reference.outputs.find(name);
    if (it == reference.outputs.end()) return "output '" + name + "' missing from the reference";
    const HostTensor& r = it->second;
    if (f.dtype != r.dtype || f.shape != r.shape || f.bytes.size() != r.bytes.size()) {
      return "output '" + name + "' has a different dtype or shape in the two paths";
    }
    for (int64_t i = 0; i < f.num_elements(); ++i) {
      if (f.bits(i) != r.bits(i)) {
        return "output '" + name + "' element " + std::to_string(i) + ": fast path " +
               describe_element(f.dtype, f.bits(i)) + ", reference path " +
               describe_element(r.dtype, r.bits(i));
      }
    }
  }
  return std::nullopt;
}

std::optional<std::string> expected_difference(const RunResult& run, const std::string& output,
                                               const Expected& want) {
  if (run.error) return "the run failed: " + run.error->message;
  const auto it = run.outputs.find(output);
  if (it == run.outputs.end()) return "no output '" + output + "'";
  const HostTensor& got = it->second;
  if (got.dtype != want.dtype) {
    return "output '" + output + "' is " + std::string(dtype_name(got.dtype)) + ", expected " +
           std::string(dtype_name(want.dtype));
  }
  if (got.num_elements() != static_cast<int64_t>(want.bits.size())) {
    return "output '" + output + "' has " + std::to_string(got.num_elements()) +
           " elements, expected " + std::to_string(want.bits.size());
  }
  for (size_t i = 0; i < want.bits.size(); ++i) {
    if (!want.bits[i]) continue;
    const uint32_t g = got.bits(static_cast<int64_t>(i));
    if (g != *want.bits[i]) {
      return "output '" + output + "' element " + std::to_string(i) + " is " +
             describe_element(got.dtype, g) + ", the documented semantics give " +
             describe_element(want.dtype, *want.bits[i]);
    }
  }
  return std::nullopt;
}

std::optional<std::string> rejection_difference(const RunResult& run, CheckKind kind,
                                                int64_t instruction,
                                                const std::vector<std::string>& fragments) {
  const std::string want = std::string(check_kind_name(kind)) + " at instruction " +
                           std::to_string(instruction) + " mentioning " + quoted(fragments);
  if (!run.error) return "the run was not refused (expected " + want + ")";
  const DynamicError& e = *run.error;
  if (e.kind != kind || e.instruction != instruction || !contains_all(e.message, fragments)) {
    return "expected " + want + ", got " + error_line(run.error) + "; message: " + e.message;
  }
  if (!run.outputs.empty()) return "a refused run returned outputs";
  return std::nullopt;
}

std::optional<std::string> build_rejection_difference(InstrCase& c,
                                                      std::optional<uint32_t> instruction,
                                                      const std::vector<std::string>& fragments) {
  const std::string want = "BuildError mentioning " + quoted(fragments) +
                           (instruction ? " on instruction #" + std::to_string(*instruction) : "");
  try {
    c.finish();
  } catch (const BuildError& e) {
    if (!contains_all(e.message, fragments) || (instruction && e.instruction != instruction)) {
      return "expected " + want + ", got: " + e.message;
    }
    return std::nullopt;
  }
  return "Builder::finish accepted the program (expected " + want + ")";
}

}  // namespace ncv::props::instr

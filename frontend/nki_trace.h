// The C++ side of the NKI front end: runs a user's unmodified NKI Python kernel through the
// Python tracer (frontend/python/ncverify_trace.py) with Debian's python3 and returns the
// program it records, as `.nkir` text. Nothing else in ncverify runs Python.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace ncv::frontend {

// Why a kernel did not trace. `input`: the kernel or its arguments are not something the front
// end can trace (an unsupported call, a bad flag, a missing file). `tamper`: the kernel reached
// past the NKI language (the tracer's check or sandbox refused it). `limit`: tracing exceeded a
// limit (time, memory, program size). For `adopt` the last two are verdicts about the candidate
// (reject); for every command all three are input errors (exit 2).
enum class FrontendErrorKind { input, tamper, limit };

// A kernel the front end could not trace, or a front end that could not run. The message is
// what the user sees: `FILE.py:LINE: what and why` for a problem in the kernel.
struct FrontendError : std::runtime_error {
  explicit FrontendError(const std::string& what,
                         FrontendErrorKind error_kind = FrontendErrorKind::input)
      : std::runtime_error(what), kind(error_kind) {}
  FrontendErrorKind kind = FrontendErrorKind::input;
};

struct TraceRequest {
  std::string target;                // FILE.py:FUNCTION
  std::vector<std::string> params;   // NAME=VALUE: keyword arguments and shape params (must exist)
  std::vector<std::string> options;  // NAME=VALUE: keyword arguments if the kernel has them
  std::vector<std::string> inputs;   // NAME=DTYPE or NAME=DTYPE[d0,d1,...]
  std::vector<std::string> shapes;   // NAME=a,b,...
  std::string grid;                  // launch grid: "N" or "bs" or "b,h" (empty: none)
  // The generation the kernel is traced for (trn1, trn2, trn3): nki.isa.get_nc_version() and the
  // calls that exist from one generation on follow it. Empty: the kernel's own
  // nki.jit(platform_target=), else trn1.
  std::string generation;
  int64_t memory_mib = 8192;  // the tracer's address space (--memory-budget-mib)
  int64_t max_program_bytes = int64_t{64} << 20;  // the traced program's size (--max-input-mib)
};

// True for `PATH.py:FUNCTION` (the path ends in .py, the function is an identifier).
bool is_python_target(std::string_view target);

// Traces the kernel in an isolated process (sandboxed_process.h); returns `.nkir` text (leading
// `#` lines say where it came from and with which arguments). Throws FrontendError. The
// interpreter is $NCVERIFY_PYTHON, else /usr/bin/python3, else python3 found on PATH; the run is
// killed after $NCVERIFY_FRONTEND_TIMEOUT_S seconds (an integer in [1, 86400], default 300; any
// other value is an error) and its program is capped at request.max_program_bytes.
std::string trace_nki(const TraceRequest& request);

// $NCVERIFY_FRONTEND_TIMEOUT_S, validated (FrontendError naming the variable otherwise).
int frontend_timeout_seconds();

// The leading `#` comment lines of a traced program (its provenance header).
std::vector<std::string> header_comments(std::string_view nkir);

}  // namespace ncv::frontend

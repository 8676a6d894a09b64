// The C++ side of the NKI front end: runs a user's unmodified NKI Python kernel through the
// Python tracer (frontend/python/ncverify_trace.py) with Debian's python3 and returns the
// program it records, as `.nkir` text. Nothing else in ncverify runs Python.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace ncv::frontend {

// A kernel the front end could not trace, or a front end that could not run. The message is
// what the user sees: `FILE.py:LINE: what and why` for a problem in the kernel.
struct FrontendError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct TraceRequest {
  std::string target;                // FILE.py:FUNCTION
  std::vector<std::string> params;   // NAME=VALUE: keyword arguments and shape params (must exist)
  std::vector<std::string> options;  // NAME=VALUE: keyword arguments if the kernel has them
  std::vector<std::string> inputs;   // NAME=DTYPE or NAME=DTYPE[d0,d1,...]
  std::vector<std::string> shapes;   // NAME=a,b,...
  std::string grid;                  // launch grid: "N" or "bs" or "b,h" (empty: none)
};

// True for `PATH.py:FUNCTION` (the path ends in .py, the function is an identifier).
bool is_python_target(std::string_view target);

// Traces the kernel; returns `.nkir` text (leading `#` lines say where it came from and with
// which arguments). Throws FrontendError. The interpreter is $NCVERIFY_PYTHON, else
// /usr/bin/python3, else python3 on PATH; the run is killed after $NCVERIFY_FRONTEND_TIMEOUT_S
// seconds (default 300) and its output is capped at 256 MiB.
std::string trace_nki(const TraceRequest& request);

// The leading `#` comment lines of a traced program (its provenance header).
std::vector<std::string> header_comments(std::string_view nkir);

}  // namespace ncv::frontend

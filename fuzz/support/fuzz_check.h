// An oracle failure inside a fuzz target: print what disagreed and abort, so libFuzzer records
// the input as a crash and the replay binary's ctest fails.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

namespace ncv::fuzz {

[[noreturn]] inline void oracle_failure(const char* target, const std::string& what) {
  std::fprintf(stderr, "%s: ORACLE FAILURE: %s\n", target, what.c_str());
  std::abort();
}

}  // namespace ncv::fuzz

// NCV_FUZZ_CHECK(cond, target, message-expression): aborts with the message when cond is false.
#define NCV_FUZZ_CHECK(cond, target, message)                    \
  do {                                                           \
    if (!(cond)) ::ncv::fuzz::oracle_failure(target, (message)); \
  } while (0)

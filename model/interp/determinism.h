// Determinism over schedules: the same program on the same inputs run under schedule seeds
// 0..N-1 (RunOptions::schedule_seed: the order of the SPMD cores within each lockstep step), and
// every run's outputs compared byte for byte with run 0's. nki-library's determinism check runs a
// kernel 10 times on hardware and compares the bytes (test/utils/determinism_checker.py); on the
// interpreter a rerun under the same schedule is identical by construction, so the runs differ in
// the one thing the model leaves free. A mismatch means that some core touches bytes another core
// writes in the same step (a cross-core race). What this cannot show: races the lockstep itself
// orders (a write in step k and a read in step k+1 on different cores: the lockstep is the model's
// synchronisation, sendrecv's on hardware), and, for a single-core program, anything beyond the
// interpreter being repeatable.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "model/interp/interpreter.h"

namespace ncv {
inline namespace interp {

// The first difference between run 0 and a later run.
struct ScheduleMismatch {
  int run = 0;                // the differing run; its schedule seed is `run`
  std::string output;         // the output tensor ("" when the runs differ in a dynamic error)
  int64_t element = -1;       // flat index of the first differing element
  std::string index;          // its coordinates, "[3, 17]"
  std::string value0, value;  // the element in run 0 and in `run`: "0.5 (bits 0x3f000000)"
  int64_t differing = 0;      // elements of `output` that differ
  std::string message;        // one line with all of the above
};

// Compares `other` (run `run`, schedule seed `run`) with `base` (run 0): their dynamic-check
// failures (one failed and the other not, or different failures), then every output byte for
// byte. nullopt: identical.
std::optional<ScheduleMismatch> compare_schedule_runs(const RunResult& base, const RunResult& other,
                                                      int run);

struct DeterminismResult {
  RunResult first;                           // run 0 (schedule seed 0)
  int runs = 0;                              // runs made (stops at the first mismatch)
  std::optional<ScheduleMismatch> mismatch;  // the first run that differs from run 0
};

// Runs p `runs` times (at least 1) with schedule seeds 0..runs-1 (options.schedule_seed is
// ignored) and compares each with run 0; stops at the first mismatch.
DeterminismResult run_schedules(const Program& p, const ParamValues& params,
                                const std::map<std::string, HostTensor>& inputs,
                                const RunOptions& options, int runs);

}  // namespace interp
}  // namespace ncv

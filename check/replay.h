// The command that re-runs one case of a check: every `ncverify check` flag that decides the
// case's verdict (the kernel and how it was built or traced, its layout and contract, the shape,
// the generation, the oracle, the determinism runs and run limits, the input set), each word
// quoted for a POSIX shell. `check`, `report`, `adopt` and the property suite print their replay
// lines through this one builder, so that a line never drops a flag one of them was given.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "check/check.h"
#include "check/explicit_positions.h"
#include "kernels/variant.h"

namespace ncv::kernels {

// `word` as one POSIX shell word: unchanged when it holds only characters no shell treats
// specially (letters, digits and _ @ % + = : , . / -), else in single quotes (a quote inside as
// '\''). An empty word is ''.
std::string shell_quote(const std::string& word);

// The words, each shell_quote'd, separated by single spaces.
std::string shell_join(const std::vector<std::string>& words);

// What a check was given, as a replay must give it again. Everything but the case's own shape,
// options and input set, which come with the case (check_replay_words).
struct CheckInvocation {
  std::string target;  // a registered kernel, a catalogue entry, FILE.nkir or FILE.py:FUNCTION
  std::string like;    // --like ("" none)
  // --layout and --contract ("" none) with the problem they state and --contract-option.
  std::string layout, contract;
  ExplicitProblem problem;
  std::vector<std::string> contract_options;
  // Every --param NAME=VALUE as given. A file's options and a traced kernel's keyword arguments
  // (use_causal_mask=true, cfg=AttnTKGConfig(...)) are only here: the replay repeats each one
  // whose name the case's params (and, with `rebuilds`, options) do not give.
  std::vector<std::string> assignments;
  // The target is built per option set (a registered kernel or catalogue entry: a sweep ranges
  // over its open options), so the case's options are given by name; a file's program is fixed.
  bool rebuilds = false;
  // An NKI kernel's --input, --shape and --grid.
  std::vector<std::string> inputs, shapes;
  std::string grid;
  std::string gen;  // --gen ("" none: the kernel's default generation)
  // The runs per case (--determinism-runs) and the kernel's own default: given when they differ.
  int determinism_runs = 1, default_determinism_runs = 1;
  // --memory-budget-mib and --max-steps when not their defaults (0: the default): a limit a run
  // hits is a model error, so a replay must have the same.
  int64_t memory_budget_mib = 0, max_steps = 0;
  bool apriori = false;  // --apriori: the a-priori bound joins the case bound (a smaller bound)
  // --oracle as given ("" by size). A case judged against the fast oracle replays with
  // `--oracle fast` whatever was given: the sweep and the property suite use the exact oracle up
  // to a smaller size than a pinned check does, and the two oracles give different bounds.
  std::string oracle;
};

// `ncverify check ...` for case `c`, run at `params` with `options` (the sweep's run, or the
// pinned check's own): the arguments after the program name, unquoted (for an exec-style
// runner), and the line as a shell reads it.
std::vector<std::string> check_replay_words(const CheckInvocation& inv, const Options& options,
                                            const ParamValues& params, const CaseResult& c);
std::string check_replay_line(const CheckInvocation& inv, const Options& options,
                              const ParamValues& params, const CaseResult& c);

// The problem's flags (--scale, --causal, --align, --window, --cp-degree, --cp-strided) as words,
// none for the default problem.
std::vector<std::string> problem_words(const ExplicitProblem& p);

}  // namespace ncv::kernels

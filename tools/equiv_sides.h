// The two sides of `equiv` and `adopt` from the command line: registered kernels stay
// registered (built per option combination), anything else is loaded once as a fixed program
// (tools/kernel_source.h) and pins the options it was built with.
#pragma once

#include <string>
#include <vector>

#include "equiv/equiv.h"
#include "tools/kernel_source.h"

namespace ncv::cli {

// The flags `equiv` and `adopt` share: the two kernels, --like, --param, --require and the NKI
// kernel flags.
struct EquivFlags {
  std::string original, rewrite, like, require;
  std::vector<std::string> params;
  NkiFlags nki;
  // Without --like, read a file side as a rewrite of the registered side (equiv: its options
  // then parse as that kernel's). adopt keeps --like explicit: it names the contract the
  // rewrite's own check runs under.
  bool like_registered_side = false;
  // --term-budget-mib: the memory the two programs' terms may take at one shape.
  int64_t term_budget_mib = equiv::EquivRequest{}.term_budget_mib;
  void add_options(CLI::App* cmd);
  // The request these flags describe (require parsed); throws UsageError.
  equiv::EquivRequest request() const;
};

// Throws UsageError on an unknown kernel, a bad file or a param outside the original's domain.
equiv::EquivRequest equiv_request(const std::string& original, const std::string& rewrite,
                                  const std::vector<std::string>& assignments,
                                  const std::string& like, const NkiFlags& nki,
                                  bool like_registered_side = false);

// The command that replays an equiv counterexample `c` of option set `o`: both kernels, --like
// and the NKI flags as given, the option set and the counterexample's shape by name, every other
// --param as given (a traced kernel's keyword arguments), the required level, the seed and the
// cases up to the counterexample's, the generation; each word shell-quoted.
std::string equiv_replay_line(const EquivFlags& flags, const equiv::EquivRequest& req,
                              const equiv::OptionOutcome& o, const equiv::Counterexample& c,
                              equiv::Level required, uint64_t seed, const std::string& gen);

// run_equiv with its input errors turned into UsageError (exit 2).
equiv::EquivResult run_equiv_or_usage(const equiv::EquivRequest& req);

}  // namespace ncv::cli

#include "check/replay.h"

#include <algorithm>
#include <set>
#include <sstream>

namespace ncv::kernels {

namespace {

bool plain(char ch) {
  const auto c = static_cast<unsigned char>(ch);
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         std::string("_@%+=:,./-").find(ch) != std::string::npos;
}

void add(std::vector<std::string>& w, const std::string& flag, const std::string& value) {
  w.push_back(flag);
  w.push_back(value);
}

std::string name_of(const std::string& assignment) {
  return assignment.substr(0, assignment.find('='));
}

}  // namespace

std::string shell_quote(const std::string& word) {
  bool safe = !word.empty();
  for (char c : word) safe = safe && plain(c);
  if (safe) return word;
  std::string q = "'";
  for (char c : word) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string shell_join(const std::vector<std::string>& words) {
  std::string s;
  for (const std::string& w : words) {
    if (!s.empty()) s += ' ';
    s += shell_quote(w);
  }
  return s;
}

std::vector<std::string> problem_words(const ExplicitProblem& p) {
  std::vector<std::string> w;
  if (p.scale != 1.0) {
    std::ostringstream scale;
    scale.precision(17);  // reads back as the same double
    scale << p.scale;
    add(w, "--scale", scale.str());
  }
  if (p.causal) w.push_back("--causal");
  if (p.align == Align::top_left) add(w, "--align", "top-left");
  if (p.window != 0) add(w, "--window", std::to_string(p.window));
  if (p.cp_degree != 0) add(w, "--cp-degree", std::to_string(p.cp_degree));
  if (p.cp_strided) w.push_back("--cp-strided");
  return w;
}

std::vector<std::string> check_replay_words(const CheckInvocation& inv, const Options& options,
                                            const ParamValues& params, const CaseResult& c) {
  std::vector<std::string> w = {"check", inv.target};
  if (!inv.like.empty()) add(w, "--like", inv.like);
  if (!inv.layout.empty()) {
    add(w, "--layout", inv.layout);
    add(w, "--contract", inv.contract);
    for (const std::string& p : problem_words(inv.problem)) w.push_back(p);
  }
  for (const std::string& o : inv.contract_options) add(w, "--contract-option", o);
  // The case's shape, then (for a target built per option set) its options; then whatever else
  // was given, verbatim: a file's options and a traced kernel's keyword arguments.
  std::set<std::string> given;
  for (const auto& [name, value] : params) {
    add(w, "--param", name + "=" + std::to_string(value));
    given.insert(name);
  }
  if (inv.rebuilds) {
    for (const auto& [name, value] : options) {
      add(w, "--param", name + "=" + value);
      given.insert(name);
    }
  }
  for (const std::string& a : inv.assignments) {
    if (given.insert(name_of(a)).second) add(w, "--param", a);
  }
  for (const std::string& i : inv.inputs) add(w, "--input", i);
  for (const std::string& s : inv.shapes) add(w, "--shape", s);
  if (!inv.grid.empty()) add(w, "--grid", inv.grid);
  if (!inv.gen.empty()) add(w, "--gen", inv.gen);
  if (std::max(inv.determinism_runs, 1) != std::max(inv.default_determinism_runs, 1)) {
    add(w, "--determinism-runs", std::to_string(std::max(inv.determinism_runs, 1)));
  }
  if (inv.memory_budget_mib > 0) {
    add(w, "--memory-budget-mib", std::to_string(inv.memory_budget_mib));
  }
  if (inv.max_steps > 0) add(w, "--max-steps", std::to_string(inv.max_steps));
  if (inv.apriori) w.push_back("--apriori");
  // A run error leaves no oracle to name; the oracle given (if any) is then repeated as is.
  if (!c.run_error && !c.exact_oracle) {
    add(w, "--oracle", "fast");
  } else if (!inv.oracle.empty()) {
    add(w, "--oracle", inv.oracle);
  }
  // The input set: a distribution and seed, or a property-suite recipe (normal:s=-3:seed=17).
  if (c.distribution.find(':') == std::string::npos) {
    add(w, "--dist", c.distribution);
    add(w, "--seed", std::to_string(c.seed));
  } else {
    add(w, "--values", c.distribution);
  }
  return w;
}

std::string check_replay_line(const CheckInvocation& inv, const Options& options,
                              const ParamValues& params, const CaseResult& c) {
  return "ncverify " + shell_join(check_replay_words(inv, options, params, c));
}

}  // namespace ncv::kernels

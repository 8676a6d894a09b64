// `ncverify prove KERNEL|FILE.nkir|--all [--gen trn1|trn2|trn3|all] [--timeout-ms N] [--json]`:
// the solver's obligations for every param in the kernel's declared domain and every loop
// iteration: well-formedness, index bounds, ISA rules, allocation, initialization of SBUF/PSUM
// reads. A registered kernel is proved for every combination of its build options; a
// bug-catalogue entry is one program. One line per obligation class with counts, then every
// obligation not proved; counterexamples are replayed on the interpreter. The output ends with
// one line saying what the verdicts cover and what they do not. Each program on each generation
// has --budget-s seconds: what is not decided by then is unknown (counted, never proved). Exit 0
// only when everything is proved, 1 otherwise, 2 on bad usage.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>

#include "solver/prove.h"
#include "tools/cli_common.h"
#include "tools/commands.h"
#include "tools/generations.h"
#include "tools/input_file.h"
#include "tools/kernel_source.h"
#include "tools/progress.h"
#include "tools/solver_programs.h"

namespace ncv::cli {

namespace {

struct ProveCommandOptions {
  std::string target;
  bool all = false;
  std::string gen;  // "": trn1, or the kernel's first generation when it does not run on trn1
  unsigned timeout_ms = 10'000;
  // Per program and generation. The per-query timeout bounds nothing on its own: a program's
  // obligations grow with its length (a 200,000-instruction straight-line file ran past 600 s).
  // 300 s is over 150 times the slowest registered program's proof (attention_cte_multi_section
  // on trn2, 1.7 s in `prove --all --json` on 2026-11-29).
  double budget_s = 300;
  bool json = false;
  std::vector<std::string> params;
  NkiFlags nki;
};

struct Counts {
  int proved = 0, counterexample = 0, unknown = 0, disagreements = 0;
  int out_of_budget = 0;  // of the unknown
  void add(const solver::Obligation& o) {
    (o.verdict == solver::Verdict::proved           ? proved
     : o.verdict == solver::Verdict::counterexample ? counterexample
                                                    : unknown)++;
    if (o.replay && o.replay->disagreement) ++disagreements;
    if (o.out_of_budget) ++out_of_budget;
  }
  bool all_proved() const { return counterexample == 0 && unknown == 0; }
  std::string str() const {
    std::string s = std::to_string(proved) + " proved, " + std::to_string(counterexample) +
                    " counterexample, " + std::to_string(unknown) + " unknown";
    if (out_of_budget > 0) s += " (" + std::to_string(out_of_budget) + " for lack of time)";
    if (disagreements > 0) {
      s += ", " + std::to_string(disagreements) + " SOLVER/INTERPRETER DISAGREEMENT(S)";
    }
    return s;
  }
  nlohmann::json json() const {
    return {{"proved", proved},
            {"counterexample", counterexample},
            {"unknown", unknown},
            {"out_of_budget", out_of_budget},
            {"disagreements", disagreements}};
  }
};

using ClassCounts = std::map<solver::ObligationClass, Counts>;

// What prove runs: each (generation, program) pair in generation order, and the (kernel,
// generation) pairs left out because the kernel does not run there (one entry per kernel, not
// per option program).
struct ProveJobs {
  std::vector<std::pair<const HwConfig*, const kernels::LabelledProgram*>> run;
  std::vector<std::pair<std::string, SkippedGeneration>> skipped;  // kernel name, why
  size_t generations = 0;    // named by --gen, skipped ones included
  size_t skipped_pairs = 0;  // (program, generation) pairs not proved
  void skip(const std::string& kernel, const SkippedGeneration& s) {
    ++skipped_pairs;
    for (const auto& [k, t] : skipped) {
      if (k == kernel && t.gen == s.gen) return;
    }
    skipped.emplace_back(kernel, s);
  }
};

ProveJobs prove_jobs(const ProveCommandOptions& opts,
                     const std::vector<kernels::LabelledProgram>& programs) {
  ProveJobs jobs;
  if (!opts.all) {
    // One kernel: a --gen it does not run on is refused, --gen all skips those.
    const kernels::Variant* v = programs.empty() ? nullptr : programs.front().variant;
    const GenerationPlan plan = generations_for(v, opts.gen, "");
    for (const HwConfig* hw : plan.run) {
      for (const kernels::LabelledProgram& lp : programs) jobs.run.emplace_back(hw, &lp);
    }
    for (const SkippedGeneration& s : plan.skipped) {
      for (size_t k = 0; k < programs.size(); ++k) jobs.skip(v ? v->name : opts.target, s);
    }
    jobs.generations = plan.run.size() + plan.skipped.size();
    return jobs;
  }
  if (opts.gen.empty()) {
    // --all without --gen: each kernel on its default generation.
    for (const kernels::LabelledProgram& lp : programs) {
      jobs.run.emplace_back(&generation_for(lp.variant, ""), &lp);
    }
    jobs.generations = 1;
    return jobs;
  }
  const std::vector<const HwConfig*> gens = named_generations(opts.gen, kDefaultGeneration);
  for (const HwConfig* hw : gens) {
    for (const kernels::LabelledProgram& lp : programs) {
      const std::string why = lp.variant ? kernels::generation_refusal(*lp.variant, hw->name) : "";
      if (why.empty()) {
        jobs.run.emplace_back(hw, &lp);
      } else {
        jobs.skip(lp.variant->name, SkippedGeneration{hw->name, why});
      }
    }
  }
  jobs.generations = gens.size();
  return jobs;
}

std::string seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f s", s);
  return buf;
}

int run_prove(const ProveCommandOptions& opts) {
  if (opts.all == !opts.target.empty()) {
    throw UsageError("prove needs exactly one of KERNEL, FILE.nkir or --all");
  }
  NkiFlags nki = opts.nki;
  nki.gen = opts.gen;  // a traced kernel is traced for the generation named (not for `all`)
  const std::vector<kernels::LabelledProgram> programs =
      opts.all ? all_solver_programs() : solver_programs(opts.target, {}, opts.params, nki);
  const ProveJobs jobs = prove_jobs(opts, programs);
  ClassCounts total;
  nlohmann::json jprograms = nlohmann::json::array();
  const auto t0 = std::chrono::steady_clock::now();
  Progress progress("prove", "programs", static_cast<int64_t>(jobs.run.size()));
  int64_t done = 0;
  for (const auto& [label, skip] : jobs.skipped) {
    if (!opts.json) std::cout << skip_line(label, skip) << "\n";
  }
  for (const auto& [hw, lpp] : jobs.run) {
    const kernels::LabelledProgram& lp = *lpp;
    solver::ProveOptions po;
    po.timeout_ms = opts.timeout_ms;
    po.hw = hw;
    const auto t = std::chrono::steady_clock::now();
    po.deadline = t + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                          std::chrono::duration<double>(opts.budget_s));
    progress.start(lp.label + " on " + hw->name);
    const std::vector<solver::Obligation> obligations = solver::prove_program(lp.program, po);
    progress.update(++done, lp.label + " on " + hw->name);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
    ClassCounts counts;
    nlohmann::json failures = nlohmann::json::array();
    int out_of_budget = 0;
    for (const solver::Obligation& o : obligations) {
      counts[o.cls].add(o);
      total[o.cls].add(o);
      // Those left undecided for lack of time are counted, not listed (they can be thousands);
      // what a class did not examine at all is one obligation, listed.
      if (o.out_of_budget && o.not_examined == 0) {
        ++out_of_budget;
      } else if (o.verdict != solver::Verdict::proved) {
        failures.push_back(o.describe());
      }
    }
    const bool budget_ran_out =
        std::any_of(obligations.begin(), obligations.end(),
                    [](const solver::Obligation& o) { return o.out_of_budget; });
    const std::string budget_note =
        "the budget of " + seconds(opts.budget_s) + " per program ran out (--budget-s raises it)" +
        (out_of_budget > 0 ? "; " + std::to_string(out_of_budget) +
                                 " obligation(s) begun but not decided are counted as unknown above"
                           : std::string());
    if (opts.json) {
      nlohmann::json j{{"program", lp.label}, {"gen", hw->name}, {"seconds", s}};
      for (solver::ObligationClass c : solver::kObligationClasses) {
        j[std::string(solver::obligation_class_name(c))] = counts[c].json();
      }
      j["not_proved"] = failures;
      if (budget_ran_out) j["out_of_budget"] = budget_note;
      jprograms.push_back(std::move(j));
      continue;
    }
    std::cout << "prove " << lp.label << " (" << hw->name << ", " << seconds(s) << ")\n";
    for (solver::ObligationClass c : solver::kObligationClasses) {
      std::cout << "  " << solver::obligation_class_name(c) << ": " << counts[c].str() << "\n";
    }
    for (const auto& f : failures) std::cout << "    " << f.get<std::string>() << "\n";
    if (budget_ran_out) std::cout << "    NOT PROVED for lack of time: " << budget_note << "\n";
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  bool pass = true;
  for (const auto& [c, n] : total) pass = pass && n.all_proved();
  if (opts.json) {
    nlohmann::json skipped = nlohmann::json::array();
    for (const auto& [label, skip] : jobs.skipped) {
      skipped.push_back({{"kernel", label}, {"gen", skip.gen}, {"reason", skip.reason}});
    }
    nlohmann::json j{{"programs", jprograms},
                     {"skipped", skipped},
                     {"pass", pass},
                     {"seconds", s},
                     {"coverage", solver::kProveCoverage}};
    for (const solver::NotCovered& n : solver::kNotCovered) {
      j["not_covered"].push_back({{"check", n.check}, {"why", n.why}});
    }
    for (solver::ObligationClass c : solver::kObligationClasses) {
      j["total"][std::string(solver::obligation_class_name(c))] = total[c].json();
    }
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << "total over " << programs.size() << " program(s) x " << jobs.generations
              << " generation(s)"
              << (jobs.skipped.empty()
                      ? ""
                      : " less " + std::to_string(jobs.skipped_pairs) + " skipped pair(s)")
              << ", " << seconds(s) << ":\n";
    for (solver::ObligationClass c : solver::kObligationClasses) {
      std::cout << "  " << solver::obligation_class_name(c) << ": " << total[c].str() << "\n";
    }
    std::cout << "not covered by prove (the interpreter checks them when the kernel runs):\n";
    for (const solver::NotCovered& n : solver::kNotCovered) {
      std::cout << "  - " << n.check << ": " << n.why << "\n";
    }
    std::cout << (pass ? "PROVED" : "NOT PROVED") << "\n";
    std::cout << solver::kProveCoverage << "\n";
  }
  return pass ? kExitOk : kExitVerificationFailure;
}

}  // namespace

void register_prove(CLI::App& app, Action& action) {
  auto opts = std::make_shared<ProveCommandOptions>();
  CLI::App* cmd = app.add_subcommand("prove",
                                     "Prove a kernel well-formed, its index bounds, ISA rules, "
                                     "SBUF/PSUM allocation and that it reads only SBUF/PSUM it "
                                     "wrote, for its whole param domain with Z3");
  cmd->add_option(
      "kernel", opts->target,
      "Registered kernel name (every option combination), a bug-catalogue entry, a .nkir "
      "file or an NKI kernel FILE.py:FUNCTION");
  cmd->add_option("-p,--param", opts->params,
                  "NKI kernels: NAME=VALUE keyword argument or fixed shape (a shape may also take "
                  "a domain LO..HI[/MULTIPLE]); repeat")
      ->expected(1)
      ->take_all();
  opts->nki.add_options(cmd);
  add_memory_budget_option(cmd);
  cmd->add_flag("--all", opts->all, "Every registered kernel, every option combination");
  cmd->add_option("--gen", opts->gen,
                  "Generation whose rules and capacity apply, or all (default trn1, or the "
                  "kernel's first generation when it does not run on trn1; --all: each kernel's)");
  cmd->add_option("--timeout-ms", opts->timeout_ms,
                  "Z3 time limit per obligation; beyond it the verdict is unknown")
      ->check(CLI::Range(1u, 3'600'000u))
      ->capture_default_str();
  cmd->add_option("--budget-s", opts->budget_s,
                  "Wall time for each program on each generation; what is not decided by then is "
                  "unknown (not proved)")
      ->check(seconds_in_range(0.001, 1e6))
      ->capture_default_str();
  cmd->add_flag("--json", opts->json, "Print one JSON object instead of text");
  cmd->callback([opts, &action] { action = [opts] { return run_prove(*opts); }; });
}

}  // namespace ncv::cli

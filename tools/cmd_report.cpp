// `ncverify report [--cases N] [--seqlen N] [--family F]... [--json]`: the main job (ci/report).
// Every registered kernel, with its default options and each mask its options offer (none,
// causal, a sliding window), is checked against the oracle at one shape (seqlen clamped into its
// domain, d_head 64 where allowed, one batch entry, a GQA group of 2 where the kernel has one, a
// window of a quarter of the sequence); one row per check. Then one row per rewrite link (a variant
// with `rewrites` set) and the same option sets: `equiv` against its predecessor at equiv's checked
// shapes, the level reached and whether it matches the registry's claim (a declared interface
// change is CHANGED, not a contradiction: equiv/link_status.h). Then every kernel's Z3
// obligations (bounds, ISA rules, allocation) over its whole domain for every option combination
// on trn1, with its trn1 capacity frontier in seqlen at d_head 64 (default options). A kernel
// that does not run on trn1 (kernels::Variant::generations) gets all of this on its first
// generation, and its rows say which. A kernel that declares determinism runs has each check case
// run under schedule seeds 0 and 1 (every pair of cores in both orders at every step; `ncverify
// check` runs the kernel's full count). Exit 0 when all pass, no link contradicts its claim and
// everything is proved, 1 otherwise.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "equiv/equiv.h"
#include "equiv/link_status.h"
#include "kernels/check.h"
#include "kernels/option_programs.h"
#include "kernels/registry.h"
#include "solver/frontier.h"
#include "solver/prove.h"
#include "tools/commands.h"
#include "tools/generations.h"

namespace ncv::cli {

namespace {

// The generation a kernel's rows run on: trn1, or its first when it does not run on trn1.
const HwConfig& report_generation(const kernels::Variant& v) {
  return *find_hw_config(kernels::default_generation(v, kDefaultGeneration));
}

// A note under a kernel's row when it runs elsewhere than trn1 ("" otherwise).
void print_generation_note(const kernels::Variant& v, const HwConfig& hw) {
  if (hw.name != kDefaultGeneration) {
    std::printf("  on %s: %s\n", hw.name.c_str(),
                kernels::generation_refusal(v, kDefaultGeneration).c_str());
  }
}

struct ReportOptions {
  int cases = 2;
  int64_t seqlen = 1024;
  bool json = false;
  std::vector<std::string> families;  // empty: every family
};

// The registered kernels the report covers: those of the listed families, or all.
std::vector<const kernels::Variant*> reported(const ReportOptions& opts) {
  std::vector<const kernels::Variant*> out;
  for (const kernels::Variant& v : kernels::registry()) {
    if (opts.families.empty() ||
        std::find(opts.families.begin(), opts.families.end(), v.family) != opts.families.end()) {
      out.push_back(&v);
    }
  }
  return out;
}

// The report shape: every param at its smallest legal value, seqlen near `seqlen`, d_head 64, a
// GQA group of 2 (q heads per kv head) where the kernel has one, a sliding window of a quarter
// of the sequence.
ParamValues report_params(const Program& p, int64_t seqlen) {
  ParamValues pv;
  for (const Param& prm : p.params) {
    const int64_t m = prm.multiple_of;
    int64_t want = prm.name == "seqlen"   ? seqlen
                   : prm.name == "d_head" ? 64
                   : prm.name == "group"  ? 2
                   : prm.name == "window" ? std::max<int64_t>(1, seqlen / 4)
                                          : prm.lo;
    want = std::clamp(want, prm.lo, prm.hi);
    pv[prm.name] = std::max((prm.lo + m - 1) / m * m, want / m * m);
  }
  return pv;
}

// The masks a kernel's options offer, each a check row: none, causal (use_causal_mask), a sliding
// window (sliding_window=on; its width is the `window` param), a logits bias alone and with the
// causal mask; training mode where offered.
struct ReportMask {
  std::string label;
  kernels::Options given;
};
std::vector<ReportMask> report_masks(const kernels::Variant& v) {
  std::vector<ReportMask> out;
  kernels::Options none;
  if (v.offers("sliding_window", "off")) none["sliding_window"] = "off";
  // attention_cte's causal_mask defaults to true: its "none" row turns it off.
  if (v.offers("causal_mask", "false")) none["causal_mask"] = "false";
  // A decode kernel's mask is its KV cache's (stale slots hidden, active tokens causal).
  out.push_back({v.offers("swa", "off") ? "cache" : "none", none});
  for (const char* option : {"use_causal_mask", "causal_mask"}) {
    if (!v.offers(option, "true")) continue;
    kernels::Options causal = none;
    causal[option] = "true";
    out.push_back({"causal", causal});
  }
  if (v.offers("sliding_window", "on")) out.push_back({"window", {{"sliding_window", "on"}}});
  // attention_tkg's sliding window needs the in-kernel mask; its sink and paged cache get rows
  // of their own (sinks: the extra softmax term; paged: the block-table loads).
  if (v.offers("swa", "on")) out.push_back({"window", {{"swa", "on"}, {"mask", "pos_id"}}});
  if (v.offers("sink", "on")) out.push_back({"sink", {{"sink", "on"}}});
  if (v.offers("block_len", "16")) {
    out.push_back({"paged", {{"block_len", "16"}, {"strided_mm1", "false"}}});
  }
  // An additive logits bias (flash_fwd logit_bias=true; check draws one per case), alone and
  // with the causal mask, whose diagonal tile it shares with the select.
  if (v.offers("logit_bias", "true")) {
    std::vector<ReportMask> biased;
    for (const ReportMask& m : out) {
      if (m.label == "window") continue;  // a kernel may refuse bias with a window (flash_fwd)
      ReportMask b = m;
      b.label = m.label == "none" ? "bias" : m.label + "+bias";
      b.given["logit_bias"] = "true";
      biased.push_back(std::move(b));
    }
    out.insert(out.end(), biased.begin(), biased.end());
  }
  // A kernel that can store its log-sum-exp (flash_fwd training=true) does, so that each row
  // checks the lse too (the output is computed the same way either way).
  if (v.offers("training", "true")) {
    for (ReportMask& m : out) m.given["training"] = "true";
  }
  // Rows whose combination the variant does not offer (Variant::excluded: the multi-section
  // attention_cte has no window) are left out.
  std::erase_if(out, [&](const ReportMask& m) {
    try {
      v.resolve(m.given);
      return false;
    } catch (const std::invalid_argument&) {
      return true;
    }
  });
  return out;
}

// The trn1 frontier in seqlen of the kernel's default-option program at d_head 64, other params
// at their least value: "6656" or "-" when the kernel has no seqlen.
std::string default_frontier(const kernels::Variant& v, const HwConfig& hw, nlohmann::json& row) {
  const Program p = v.build(v.resolve({}));
  const Param* seqlen = p.find_param("seqlen");
  if (seqlen == nullptr) return "-";
  solver::FrontierQuery q;
  q.fixed = report_params(p, seqlen->lo);
  q.fixed.erase("seqlen");
  q.search_hi = std::max<int64_t>(65536, seqlen->hi);
  q.hw = &hw;
  const solver::FrontierResult f = solver::capacity_frontier(p, q);
  using Status = solver::FrontierResult::Status;
  std::string text = f.status == Status::unknown        ? "unknown"
                     : f.status == Status::fits_nowhere ? "none"
                     : f.first_failing                  ? std::to_string(f.largest_fitting)
                                                        : ">=" + std::to_string(f.searched_hi);
  row["frontier_" + hw.name + "_seqlen"] = text;
  return text;
}

// Proves every option program of every kernel on trn1; returns whether all was proved.
bool report_proofs(const ReportOptions& opts, nlohmann::json& out) {
  const bool json = opts.json;
  if (!json) {
    std::printf("\n%-24s %8s %12s %8s %8s %8s %9s %10s\n", "kernel", "programs", "obligations",
                "proved", "counter", "unknown", "seconds", "frontier");
  }
  bool all = true;
  for (const kernels::Variant* vp : reported(opts)) {
    const kernels::Variant& v = *vp;
    const HwConfig& hw = report_generation(v);
    const auto t0 = std::chrono::steady_clock::now();
    const std::vector<kernels::LabelledProgram> programs = kernels::option_programs(v);
    int n = 0, proved = 0, cex = 0;
    solver::ProveOptions po;
    po.hw = &hw;
    for (const kernels::LabelledProgram& lp : programs) {
      for (const solver::Obligation& o : solver::prove_program(lp.program, po)) {
        ++n;
        proved += o.verdict == solver::Verdict::proved;
        cex += o.verdict == solver::Verdict::counterexample;
        if (o.verdict != solver::Verdict::proved && !json) {
          std::cout << "  " << lp.label << ": " << o.describe() << "\n";
        }
      }
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    all = all && proved == n;
    nlohmann::json row{{"kernel", v.name},      {"programs", programs.size()},
                       {"obligations", n},      {"proved", proved},
                       {"counterexample", cex}, {"unknown", n - proved - cex},
                       {"seconds", s},          {"gen", hw.name}};
    const std::string frontier = default_frontier(v, hw, row);
    out.push_back(row);
    if (!json) {
      std::printf("%-24s %8zu %12d %8d %8d %8d %9.2f %10s\n", v.name.c_str(), programs.size(), n,
                  proved, cex, n - proved - cex, s, frontier.c_str());
      print_generation_note(v, hw);
    }
  }
  if (!json) {
    std::printf(
        "\n%s: Z3 obligations (well-formedness, index bounds, ISA rules, SBUF/PSUM allocation) for "
        "every param "
        "in each kernel's domain and every option combination, trn1 (or the kernel's first "
        "generation, noted under its row); frontier = largest seqlen fitting that generation at "
        "d_head 64 where allowed, default options\n",
        all ? "PROVED" : "NOT PROVED");
  }
  return all;
}

// One row per rewrite link and report option set: `equiv` of the variant against the one it
// rewrites. Kept cheap: the options the check rows use and equiv's own small checked shapes
// (terms at the report's seqlen would cost minutes). A row fails only when it contradicts the
// registry: bit-exact claimed and not proved, or the contract level not holding (a rewrite that
// claims changed numerics and is bit-exact at these options is consistent: the claim covers
// every option). Returns whether no row fails.
bool report_links(const ReportOptions& opts, nlohmann::json& out) {
  if (!opts.json) {
    std::printf("\n%-24s %-22s %-6s %-18s %-17s %-9s %-9s %-5s %8s\n", "rewrite", "of", "mask",
                "claim", "level", "bit-exact", "contract", "match", "time");
  }
  bool all = true, any_refuted = false;
  for (const kernels::Variant* vp : reported(opts)) {
    const kernels::Variant& v = *vp;
    if (v.rewrites.empty()) continue;
    const kernels::Variant* pred = kernels::find_variant(v.rewrites);
    for (bool causal : {false, true}) {
      if (causal && !(v.offers("use_causal_mask", "true") && pred &&
                      pred->offers("use_causal_mask", "true"))) {
        continue;
      }
      const std::string claim = v.same_numerics_as_predecessor ? "bit-exact" : "changes numerics";
      nlohmann::json row{{"kernel", v.name}, {"rewrites", v.rewrites}, {"claim", claim}};
      if (pred == nullptr) {
        // A registry whose link names no variant contradicts itself.
        all = false;
        row["error"] = "no registered variant " + v.rewrites;
        row["pass"] = false;
        out.push_back(row);
        if (!opts.json) {
          std::printf("%-24s %-22s  no such variant  FAIL\n", v.name.c_str(), v.rewrites.c_str());
        }
        continue;
      }
      kernels::Options given;
      if (causal) given["use_causal_mask"] = "true";
      equiv::EquivRequest req;
      req.original = equiv::EquivSide{pred->name, pred, std::nullopt};
      req.rewrite = equiv::EquivSide{v.name, &v, std::nullopt};
      req.options = pred->resolve(given);
      req.run.record_trace = false;
      req.run.hw = &generation_for({pred, &v}, "");
      row["gen"] = req.run.hw->name;
      const auto t0 = std::chrono::steady_clock::now();
      const equiv::EquivResult r = equiv::run_equiv(req);
      const double ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      // One option set: pinned above.
      const equiv::OptionOutcome& o = r.outcomes.front();
      const equiv::LinkJudgement judged = equiv::judge_link(v, o);
      const bool contract = judged.contract_holds;
      const bool changed = judged.status == equiv::LinkStatus::changed;
      const bool pass = judged.status == equiv::LinkStatus::ok || changed;
      const bool refuted = judged.status == equiv::LinkStatus::fail;
      const char* status = equiv::link_status_name(judged.status);
      all = all && pass;
      any_refuted = any_refuted || refuted;
      row["options"] = o.options;
      row["level"] = judged.level;
      if (changed) row["interface_change"] = v.interface_change;
      row["bit_exact"] = equiv::verdict_name(o.bit_exact);
      row["real"] = equiv::verdict_name(o.real);
      row["numeric"] = equiv::numeric_verdict_name(o.numeric);
      row["contract_holds"] = contract;
      row["claim_matches"] = pass;
      row["pass"] = pass;
      row["status"] = status;
      row["ms"] = ms;
      row["equiv"] = r.to_json();
      out.push_back(row);
      if (!opts.json) {
        std::printf("%-24s %-22s %-6s %-18s %-17s %-9s %-9s %-5s %5.0f ms\n", v.name.c_str(),
                    v.rewrites.c_str(), causal ? "causal" : "none", claim.c_str(),
                    judged.level.c_str(), equiv::verdict_name(o.bit_exact),
                    contract ? "holds" : "no", status, ms);
        if (changed) {
          std::printf("  declared: %s\n  equiv:    %s\n", v.interface_change.c_str(),
                      o.interface_error.c_str());
        } else if (!pass) {
          std::cout << r.text();
        }
      }
    }
  }
  if (!opts.json) {
    std::printf(
        "\n%s: every rewrite link vs its predecessor (`ncverify equiv`, bounded: equiv's checked "
        "shapes, default options and the causal mask; FAIL = the claim contradicted (interfaces "
        "differ or a counterexample), CHANGED = the interfaces differ as the rewrite declares "
        "(nothing to compare), UNKNOWN = bit-exact claimed and not proved, or the contract level "
        "not established, without a contradiction)\n",
        all           ? "PASS"
        : any_refuted ? "FAIL"
                      : "UNKNOWN");
  }
  return all;
}

int run_report(const ReportOptions& opts) {
  nlohmann::json rows = nlohmann::json::array();
  bool all_pass = true;
  if (!opts.json) {
    std::printf("%-24s %-22s %-6s %-30s %-22s %10s  %-4s %11s\n", "kernel", "rewrites", "mask",
                "shape", "contract", "worst", "", "time");
  }
  for (const kernels::Variant* vp : reported(opts)) {
    const kernels::Variant& v = *vp;
    const HwConfig& hw = report_generation(v);
    for (const ReportMask& mask : report_masks(v)) {
      const kernels::Options o = v.resolve(mask.given);
      const Program p = v.build(o);
      const ParamValues params = report_params(p, opts.seqlen);
      kernels::CheckOptions co;
      // A heavy variant (one case costs most of a minute: kernels::heavy_check) runs its most
      // bug-exposing case only; its own test and `ncverify check` run more.
      co.cases = kernels::heavy_check(v) ? 1 : opts.cases;
      if (kernels::heavy_check(v)) co.distributions = kernels::heavy_check_distributions(v, o);
      co.run.record_trace = false;
      co.run.hw = &hw;
      // Seeds 0 and 1: every pair of cores in both orders at every step.
      co.determinism_runs = std::min(v.determinism_runs, 2);
      const auto t0 = std::chrono::steady_clock::now();
      const kernels::CheckResult r = kernels::check_kernel(v, p, o, params, co);
      const double ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      all_pass = all_pass && r.pass;
      nlohmann::json row = r.to_json();
      row["rewrites"] = v.rewrites;
      row["mask"] = mask.label;
      row["ms"] = ms;
      row["gen"] = hw.name;
      rows.push_back(row);
      if (!opts.json) {
        std::string shape;
        for (const auto& [name, value] : params) {
          shape += (shape.empty() ? "" : " ") + name + "=" + std::to_string(value);
        }
        std::printf("%-24s %-22s %-6s %-30s %-22s %10.3g  %-4s %8.0f ms\n", v.name.c_str(),
                    v.rewrites.empty() ? "-" : v.rewrites.c_str(), mask.label.c_str(),
                    shape.c_str(), r.contract.name.c_str(), r.worst_normalized,
                    r.pass ? "PASS" : "FAIL", ms);
        print_generation_note(v, hw);
        if (!r.pass) std::cout << r.summary();
      }
    }
  }
  if (!opts.json) {
    std::printf(
        "\n%s: every registered kernel vs the oracle under its precision contract (%d "
        "seeded cases each, 1 for kernels whose one case costs over %.0f s; worst = max |err| / "
        "bound, pass <= 1)\n",
        all_pass ? "PASS" : "FAIL", opts.cases, kernels::kHeavyCheckCaseSeconds);
  }
  nlohmann::json links = nlohmann::json::array();
  const bool links_ok = report_links(opts, links);
  nlohmann::json proofs = nlohmann::json::array();
  const bool proved = report_proofs(opts, proofs);
  const bool pass = all_pass && links_ok && proved;
  if (opts.json) {
    std::cout << nlohmann::json{{"checks", rows},
                                {"links", links},
                                {"proofs", proofs},
                                {"pass", pass}}
                     .dump(2)
              << "\n";
  }
  return pass ? kExitOk : kExitVerificationFailure;
}

}  // namespace

void register_report(CLI::App& app, Action& action) {
  auto opts = std::make_shared<ReportOptions>();
  CLI::App* cmd = app.add_subcommand(
      "report", "Check every registered kernel against the oracle and print one row per check");
  cmd->add_option("--cases", opts->cases, "Seeded input sets per check")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  cmd->add_option("--seqlen", opts->seqlen, "Sequence length (clamped into each kernel's domain)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20))
      ->capture_default_str();
  cmd->add_flag("--json", opts->json, "Print one JSON object instead of the table");
  cmd->add_option("--family", opts->families,
                  "Only the kernels of this family (repeatable; `ncverify list` shows families)")
      ->check([](const std::string& f) {
        for (const kernels::Variant& v : kernels::registry()) {
          if (v.family == f) return std::string();
        }
        return "no registered kernel has family '" + f + "'";
      });
  cmd->callback([opts, &action] { action = [opts] { return run_report(*opts); }; });
}

}  // namespace ncv::cli

// `ncverify report [--cases N] [--seqlen N] [--family F]... [--kernel K]... [--json] [--html DIR]`:
// the main job (ci/report). Every registered kernel, with its default options and each mask its
// options offer (none, causal, a sliding window), is checked against the oracle at one shape
// (seqlen clamped into its domain, d_head 64 where allowed, one batch entry, a GQA group of 2 where
// the kernel has one, a window of a quarter of the sequence); one row per check, with the kernel's
// modelled latency at that shape and options on the row's generation (a trace-only run on the
// timing model, as `ncverify bench`: tools/report_latency.h), for a rewrite its predecessor's
// latency and the speed-up, each case's normalized error and, per failing case, the `ncverify
// check` line that replays it (tools/report_rows.h). Then one row per rewrite link (a variant with
// `rewrites` set) and the same option sets: `equiv` against its predecessor at equiv's checked
// shapes, the level reached and whether it matches the registry's claim (a declared interface
// change is CHANGED, not a contradiction: equiv/link_status.h), and the latencies at the report
// shape. Then every kernel's Z3 obligations (bounds, ISA rules, allocation) over its whole domain
// for every option combination on trn1, with its trn1 capacity frontier in seqlen at d_head 64
// (default options). A kernel that does not run on trn1 (kernels::Variant::generations) gets all
// of this on its first generation, and its rows say which. A kernel that declares determinism
// runs has each check case run under schedule seeds 0 and 1 (every pair of cores in both orders
// at every step; `ncverify check` runs the kernel's full count).
// --html DIR also collects, per kernel and generation it runs on, the latency over a seqlen sweep
// and the SBUF/PSUM footprint over its domain (tools/report_sweeps.h), the capacity frontier on
// every generation, and one engine timeline with its Perfetto trace (tools/report_timeline.h),
// and writes DIR/report.json, DIR/traces/KERNEL-GEN.json.gz (gzip-compressed; a kernel over
// --timeline-max-instances at the report shape is traced at a smaller seqlen:
// tools/report_sweeps.h timeline_shape) and DIR/index.html (tools/report_html.h);
// other files in DIR are left alone; a DIR that is not a directory, or (without --force) one
// already holding index.html, report.json or one of those traces, is refused (exit 2).
// Every row, link, kernel's proofs, sweep and timeline is an independent job on a JobPool
// (tools/job_pool.h; --jobs, default one worker per core); the rows print in registry order
// whatever the worker count, then a `time:` line with the worker seconds of each section.
// Exit 0 when all checks pass, no link contradicts its claim and everything is proved, 1
// otherwise (the sweeps inform and never fail the report), 2 on bad usage or an unwritable DIR.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include "check/check.h"
#include "equiv/equiv.h"
#include "equiv/link_status.h"
#include "kernels/option_programs.h"
#include "kernels/registry.h"
#include "solver/prove.h"
#include "tools/commands.h"
#include "tools/generations.h"
#include "tools/job_pool.h"
#include "tools/output_file.h"
#include "tools/progress.h"
#include "tools/report_failures.h"
#include "tools/report_html.h"
#include "tools/report_latency.h"
#include "tools/report_rows.h"
#include "tools/report_sweeps.h"
#include "tools/report_timeline.h"

namespace ncv::cli {

namespace {

namespace fs = std::filesystem;

// The generation a kernel's rows run on: trn1, or its first when it does not run on trn1.
const HwConfig& report_generation(const kernels::Variant& v) {
  return *find_hw_config(kernels::default_generation(v, kDefaultGeneration));
}

// A note under a kernel's row when it runs elsewhere than trn1 ("" otherwise).
void print_generation_note(const kernels::Variant& v, const HwConfig& hw) {
  if (hw.name != kDefaultGeneration) {
    print_stdout("  on %s: %s\n", hw.name.c_str(),
                 kernels::generation_refusal(v, kDefaultGeneration).c_str());
  }
}

struct ReportOptions {
  int cases = 2;
  int64_t seqlen = 1024;
  bool json = false;
  std::vector<std::string> families;  // empty: every family
  std::vector<std::string> kernels;   // empty: every kernel (of those families)
  std::string html;                   // --html DIR ("": no page)
  bool force = false;                 // --force: replace the files an earlier report wrote
  int64_t sweep_max_seqlen = 8192;
  double frontier_timeout_s = 10;
  unsigned jobs = 0;  // --jobs: worker threads (0: one per core this process may use)
  int64_t timeline_max_instances = kTimelineMaxInstances;
};

// The registered kernels the report covers: those of the listed families (or all) that are
// among the listed kernels (or all), in registry order.
std::vector<const kernels::Variant*> reported(const ReportOptions& opts) {
  const auto listed = [](const std::vector<std::string>& list, const std::string& name) {
    return list.empty() || std::find(list.begin(), list.end(), name) != list.end();
  };
  std::vector<const kernels::Variant*> out;
  for (const kernels::Variant& v : kernels::registry()) {
    if (listed(opts.families, v.family) && listed(opts.kernels, v.name)) out.push_back(&v);
  }
  return out;
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

// One report run: the options, the latencies computed so far, the progress line and the workers
// that run its jobs. Each section queues its jobs (a check row, a link, a kernel's proofs, a
// sweep, a timeline: independent of each other) before any is printed, the long ones to start
// first (Priority), so the workers go from one section's jobs to the next's without waiting while
// the main thread prints each section's rows in registry order as they are done.
struct Report {
  Report(const ReportOptions& o, int64_t total)
      : opts(o), progress("report", "steps", total), pool(o.jobs) {}
  const ReportOptions& opts;
  LatencyCache latency;
  Progress progress;
  std::atomic<int64_t> done{0};
  // Called by a job when it is done (from its worker).
  void step(const std::string& what) { progress.update(++done, what); }
  // The worker seconds (wall and CPU) each section's jobs took, summed (`time:` line).
  std::mutex mu;
  std::map<std::string, double> work_s, cpu_s;
  void add_work(const std::string& section, size_t job) {
    const double s = pool.seconds(job), c = pool.cpu_seconds(job);
    const std::lock_guard<std::mutex> lock(mu);
    work_s[section] += s;
    cpu_s[section] += c;
  }
  // Last: destroyed first, so a job still running (when a row's error ends the report early)
  // finishes before what it uses goes. Each job holds its own result (a shared_ptr).
  JobPool pool;
};

bool html(const ReportOptions& opts) {
  return !opts.html.empty();
}

// The option requests of a rewrite's link rows: none, and the causal mask when both offer it.
std::vector<kernels::Options> link_option_sets(const kernels::Variant& v,
                                               const kernels::Variant* pred) {
  std::vector<kernels::Options> out{{}};
  if (v.offers("use_causal_mask", "true") && pred && pred->offers("use_causal_mask", "true")) {
    out.push_back({{"use_causal_mask", "true"}});
  }
  return out;
}

// Steps of the progress line: check rows, link rows, proof rows and, with --html, per kernel its
// sweeps on each generation and its timeline.
int64_t planned_steps(const ReportOptions& opts) {
  int64_t n = 0;
  for (const kernels::Variant* v : reported(opts)) {
    n += static_cast<int64_t>(report_masks(*v).size()) + 1;
    if (!v->rewrites.empty()) {
      n += static_cast<int64_t>(link_option_sets(*v, kernels::find_variant(v->rewrites)).size());
    }
    if (html(opts)) {
      for (std::string_view gen : hw_config_names()) {
        n += kernels::supports_generation(*v, gen) ? 1 : 0;
      }
      n += 1;
    }
  }
  return n;
}

std::string shape_text(const ParamValues& params) {
  std::string shape;
  for (const auto& [name, value] : params) {
    shape += (shape.empty() ? "" : " ") + name + "=" + std::to_string(value);
  }
  return shape;
}

// "152.3 us", or "-" without a number.
std::string latency_text(const Latency& l) {
  if (!l.us) return "-";
  char s[32];
  std::snprintf(s, sizeof s, "%.1f us", *l.us);
  return s;
}

// Lines under a row whose latency (or its predecessor's) is missing: why.
void print_latency_notes(const Latency& own, const PredecessorLatency& pred) {
  if (!own.us) print_stdout("  no latency: %s\n", own.error.c_str());
  if (!pred.name.empty() && !pred.latency.us) {
    print_stdout("  no latency of %s: %s\n", pred.name.c_str(), pred.latency.error.c_str());
  }
}

// One kernel's proof row: its obligations on its report generation and its frontiers.
struct ProofItem {
  const kernels::Variant* v = nullptr;
  const HwConfig* hw = nullptr;
  size_t programs = 0;
  int n = 0, proved = 0, cex = 0;
  std::vector<std::string> unproved;  // "  LABEL: obligation" per obligation not proved
  std::string frontier_text;
  nlohmann::json row;
};

// Proves every option program of v on its report generation, with the capacity frontier there
// (with --html: on every generation).
void prove_kernel(const ReportOptions& opts, ProofItem& item) {
  const kernels::Variant& v = *item.v;
  const HwConfig& hw = *item.hw;
  const auto timeout_ms = static_cast<unsigned>(opts.frontier_timeout_s * 1000);
  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<kernels::LabelledProgram> programs = kernels::option_programs(v);
  solver::ProveOptions po;
  po.hw = &hw;
  for (const kernels::LabelledProgram& lp : programs) {
    for (const solver::Obligation& o : solver::prove_program(lp.program, po)) {
      ++item.n;
      item.proved += o.verdict == solver::Verdict::proved;
      item.cex += o.verdict == solver::Verdict::counterexample;
      if (o.verdict != solver::Verdict::proved) {
        item.unproved.push_back("  " + lp.label + ": " + o.describe() + "\n");
      }
    }
  }
  item.programs = programs.size();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  nlohmann::json& row = item.row;
  row = {{"kernel", v.name},
         {"family", v.family},
         {"programs", programs.size()},
         {"obligations", item.n},
         {"proved", item.proved},
         {"counterexample", item.cex},
         {"unknown", item.n - item.proved - item.cex},
         {"seconds", s},
         {"gen", hw.name}};
  nlohmann::json unproved = nlohmann::json::array();
  for (const std::string& u : item.unproved) {
    // "  label: describe\n" as printed under the table: the row keeps the text alone
    const size_t b = u.find_first_not_of(' '), e = u.find_last_not_of('\n');
    unproved.push_back(b == std::string::npos ? u : u.substr(b, e - b + 1));
  }
  row["unproved"] = unproved;
  // The report generation's frontier first (the table's cell), then with --html the others.
  const auto f0 = std::chrono::steady_clock::now();
  const FrontierEntry own = frontier_entry(v, hw.name, timeout_ms);
  item.frontier_text = own.text;
  row["frontier_" + hw.name + "_seqlen"] = own.text;
  nlohmann::json frontiers = nlohmann::json::array({own.json});
  if (html(opts)) {
    for (std::string_view gen : hw_config_names()) {
      if (gen != hw.name) frontiers.push_back(frontier_entry(v, std::string(gen), timeout_ms).json);
    }
  }
  row["frontiers"] = frontiers;
  row["frontier_seconds"] =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - f0).count();
}

// A section's queued jobs: per row its result and the job that fills it.
template <class Item>
struct Queued {
  std::vector<std::shared_ptr<Item>> items;
  std::vector<size_t> jobs;
};

// How soon a job starts (JobPool::add): the long ones first, so that the short check rows fill
// the workers' last minutes instead of a long job running alone at the end. Long: a heavy
// variant's check row (kernels::heavy_check: one case costs most of a minute), then equiv links
// and proofs (tens of seconds for the larger kernels), against about a second per other row.
enum Priority : int { kShort = 0, kLong = 1, kHeavy = 2 };

// Queues a job filling `item` with `fill`; when done it counts one progress step named `what`.
template <class Item, class Fill>
void queue(Report& rep, Queued<Item>& q, std::shared_ptr<Item> item, std::string what,
           Priority priority, Fill fill) {
  q.items.push_back(item);
  q.jobs.push_back(rep.pool.add(
      [&rep, item, fill, what = std::move(what)] {
        fill(*item);
        rep.step(what);
      },
      priority));
}

Queued<ProofItem> queue_proofs(Report& rep) {
  Queued<ProofItem> q;
  for (const kernels::Variant* vp : reported(rep.opts)) {
    auto item = std::make_shared<ProofItem>();
    item->v = vp;
    item->hw = &report_generation(*vp);
    queue(rep, q, item, "prove " + vp->name, kLong,
          [&opts = rep.opts](ProofItem& it) { prove_kernel(opts, it); });
  }
  return q;
}

// Prints the proof rows in registry order as their jobs finish; returns whether all was proved.
bool report_proofs(Report& rep, Queued<ProofItem>& q, nlohmann::json& out) {
  const ReportOptions& opts = rep.opts;
  const bool json = opts.json;
  if (!json) {
    print_stdout("\n%-24s %8s %12s %8s %8s %8s %9s %10s\n", "kernel", "programs", "obligations",
                 "proved", "counter", "unknown", "seconds", "frontier");
  }
  bool all = true;
  for (size_t i = 0; i < q.items.size(); ++i) {
    rep.pool.wait(q.jobs[i]);
    rep.add_work("proofs", q.jobs[i]);
    const ProofItem& it = *q.items[i];
    all = all && it.proved == it.n;
    out.push_back(it.row);
    if (!json) {
      for (const std::string& line : it.unproved) std::cout << line;
      print_stdout("%-24s %8zu %12d %8d %8d %8d %9.2f %10s\n", it.v->name.c_str(), it.programs,
                   it.n, it.proved, it.cex, it.n - it.proved - it.cex,
                   it.row.at("seconds").get<double>(), it.frontier_text.c_str());
      print_generation_note(*it.v, *it.hw);
    }
  }
  if (!json) {
    print_stdout(
        "\n%s: Z3 obligations (well-formedness, index bounds, ISA rules, SBUF/PSUM allocation) for "
        "every param in each kernel's domain and every option combination, trn1 (or the kernel's "
        "first generation, noted under its row); frontier = largest seqlen fitting that "
        "generation at d_head 64 where allowed, default options (unknown: Z3 gave no answer "
        "within %.0f s per query)\n",
        all ? "PROVED" : "NOT PROVED", opts.frontier_timeout_s);
  }
  return all;
}

struct LinkItem {
  const kernels::Variant* v = nullptr;
  const kernels::Variant* pred = nullptr;  // null: the link names no registered variant
  kernels::Options given;
  nlohmann::json row;
  // Filled by link_row when pred is registered:
  std::optional<equiv::EquivResult> result;
  equiv::LinkJudgement judged;
  Latency own;
  PredecessorLatency before;
  double ms = 0;
  bool pass = false, refuted = false, changed = false;
};

std::string link_claim(const kernels::Variant& v) {
  return v.same_numerics_as_predecessor ? "bit-exact" : "changes numerics";
}

// `equiv` of the link's rewrite against its predecessor at its option set, and the latencies.
void link_row(const ReportOptions& opts, LatencyCache& cache, LinkItem& item) {
  const kernels::Variant& v = *item.v;
  nlohmann::json& row = item.row;
  row = {
      {"kernel", v.name}, {"family", v.family}, {"rewrites", v.rewrites}, {"claim", link_claim(v)}};
  if (item.pred == nullptr) {
    // A registry whose link names no variant contradicts itself.
    const std::string error = "no registered variant " + v.rewrites;
    row["error"] = error;
    row["pass"] = false;
    add_latency_fields(row, Latency{std::nullopt, error},
                       PredecessorLatency{v.rewrites, Latency{std::nullopt, error}});
    return;
  }
  const kernels::Variant* pred = item.pred;
  equiv::EquivRequest req;
  req.original = equiv::EquivSide{pred->name, pred, std::nullopt};
  req.rewrite = equiv::EquivSide{v.name, &v, std::nullopt};
  req.options = pred->resolve(item.given);
  req.run.record_trace = false;
  req.run.hw = &generation_for({pred, &v}, "");
  const HwConfig& hw = *req.run.hw;
  row["gen"] = hw.name;
  const auto t0 = std::chrono::steady_clock::now();
  item.result = equiv::run_equiv(req);
  item.ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  const equiv::EquivResult& r = *item.result;
  // One option set: pinned above.
  const equiv::OptionOutcome& o = r.outcomes.front();
  item.judged = equiv::judge_link(v, o);
  const equiv::LinkJudgement& judged = item.judged;
  item.changed = judged.status == equiv::LinkStatus::changed;
  item.pass = judged.status == equiv::LinkStatus::ok || item.changed;
  item.refuted = judged.status == equiv::LinkStatus::fail;
  row["options"] = o.options;
  row["level"] = judged.level;
  if (item.changed) row["interface_change"] = v.interface_change;
  row["bit_exact"] = equiv::verdict_name(o.bit_exact);
  row["real"] = equiv::verdict_name(o.real);
  row["numeric"] = equiv::numeric_verdict_name(o.numeric);
  row["contract_holds"] = judged.contract_holds;
  row["claim_matches"] = item.pass;
  row["pass"] = item.pass;
  row["status"] = equiv::link_status_name(judged.status);
  row["ms"] = item.ms;
  row["equiv"] = r.to_json();
  // The latencies at the report shape of this option set (the check rows' shape).
  const kernels::Options vo = v.resolve(item.given);
  const ParamValues params = report_params(v.build(vo), opts.seqlen);
  item.own = cache.get(v, vo, params, hw);
  item.before = predecessor_latency(v, item.given, params, hw, cache);
  row["latency_params"] = params;
  add_latency_fields(row, item.own, item.before);
}

Queued<LinkItem> queue_links(Report& rep) {
  Queued<LinkItem> q;
  for (const kernels::Variant* vp : reported(rep.opts)) {
    if (vp->rewrites.empty()) continue;
    const kernels::Variant* pred = kernels::find_variant(vp->rewrites);
    for (const kernels::Options& given : link_option_sets(*vp, pred)) {
      auto item = std::make_shared<LinkItem>();
      item->v = vp;
      item->pred = pred;
      item->given = given;
      queue(rep, q, item, "equiv " + vp->name + (given.empty() ? "" : " causal"), kLong,
            [&rep](LinkItem& it) { link_row(rep.opts, rep.latency, it); });
    }
  }
  return q;
}

// One row per rewrite link and report option set: `equiv` of the variant against the one it
// rewrites. Kept cheap: the options the check rows use and equiv's own small checked shapes
// (terms at the report's seqlen would cost minutes). A row fails only when it contradicts the
// registry: bit-exact claimed and not proved, or the contract level not holding (a rewrite that
// claims changed numerics and is bit-exact at these options is consistent: the claim covers
// every option). Beside it the latencies at the report shape of the option set. Prints the rows
// in order as their jobs finish; returns whether no row fails.
bool report_links(Report& rep, Queued<LinkItem>& q, nlohmann::json& out) {
  const ReportOptions& opts = rep.opts;
  if (!opts.json) {
    print_stdout("\n%-24s %-19s %-6s %-16s %-17s %-9s %-8s %-7s %10s %7s %8s\n", "rewrite", "of",
                 "mask", "claim", "level", "bit-exact", "contract", "match", "latency", "vs pred",
                 "time");
  }
  bool all = true, any_refuted = false;
  for (size_t i = 0; i < q.items.size(); ++i) {
    rep.pool.wait(q.jobs[i]);
    rep.add_work("links", q.jobs[i]);
    const LinkItem& it = *q.items[i];
    const kernels::Variant& v = *it.v;
    out.push_back(it.row);
    all = all && it.pass;
    any_refuted = any_refuted || it.refuted;
    if (opts.json) continue;
    if (it.pred == nullptr) {
      print_stdout("%-24s %-19s  no such variant  FAIL\n", v.name.c_str(), v.rewrites.c_str());
      continue;
    }
    const equiv::OptionOutcome& o = it.result->outcomes.front();
    print_stdout("%-24s %-19s %-6s %-16s %-17s %-9s %-8s %-7s %10s %7s %5.0f ms\n", v.name.c_str(),
                 v.rewrites.c_str(), it.given.empty() ? "none" : "causal", link_claim(v).c_str(),
                 it.judged.level.c_str(), equiv::verdict_name(o.bit_exact),
                 it.judged.contract_holds ? "holds" : "no",
                 equiv::link_status_name(it.judged.status), latency_text(it.own).c_str(),
                 speedup_text(it.own, it.before).c_str(), it.ms);
    print_latency_notes(it.own, it.before);
    if (it.changed) {
      print_stdout("  declared: %s\n  equiv:    %s\n", v.interface_change.c_str(),
                   o.interface_error.c_str());
    } else if (!it.pass) {
      std::cout << it.result->text();
    }
  }
  if (!opts.json) {
    print_stdout(
        "\n%s: every rewrite link vs its predecessor (`ncverify equiv`, bounded: equiv's checked "
        "shapes, or every shape where a link is the same program up to names, DMA queues, "
        "statement order, loop fusion or fission and peeled iterations, or its domain has at most "
        "four points; "
        "default options "
        "and the causal mask; FAIL = the claim contradicted (interfaces "
        "differ or a counterexample), CHANGED = the interfaces differ as the rewrite declares "
        "(nothing to compare), UNKNOWN = bit-exact claimed and not proved, or the contract level "
        "not established, without a contradiction); latency at the check rows' shape, vs pred = "
        "predecessor latency / this latency\n",
        all           ? "PASS"
        : any_refuted ? "FAIL"
                      : "UNKNOWN");
  }
  return all;
}

struct CheckItem {
  const kernels::Variant* v = nullptr;
  const HwConfig* hw = nullptr;
  ReportMask mask;
  bool first_of_kernel = false;
  Program program;
  CheckRowRequest req;
  CheckRow row;
};

// The check of one row: v with the mask's options at the report shape on its report generation.
void check_row(const ReportOptions& opts, LatencyCache& cache, CheckItem& item) {
  const kernels::Variant& v = *item.v;
  CheckRowRequest& req = item.req;
  req.target = v.name;
  req.variant = &v;
  req.given = item.mask.given;
  req.options = v.resolve(item.mask.given);
  item.program = v.build(req.options);
  req.program = &item.program;
  req.params = report_params(item.program, opts.seqlen);
  req.mask = item.mask.label;
  kernels::CheckOptions& co = req.check;
  // A heavy variant (one case costs most of a minute: kernels::heavy_check) runs its most
  // bug-exposing case only; its own test and `ncverify check` run more.
  co.cases = kernels::heavy_check(v) ? 1 : opts.cases;
  if (kernels::heavy_check(v))
    co.distributions = kernels::heavy_check_distributions(v, req.options);
  co.run.record_trace = false;
  co.run.hw = item.hw;
  // Seeds 0 and 1: every pair of cores in both orders at every step.
  co.determinism_runs = std::min(v.determinism_runs, 2);
  item.row = run_check_row(req, cache);
}

Queued<CheckItem> queue_checks(Report& rep) {
  Queued<CheckItem> q;
  for (const kernels::Variant* vp : reported(rep.opts)) {
    const HwConfig& hw = report_generation(*vp);
    const std::vector<ReportMask> masks = report_masks(*vp);
    for (const ReportMask& mask : masks) {
      auto item = std::make_shared<CheckItem>();
      item->v = vp;
      item->hw = &hw;
      item->mask = mask;
      item->first_of_kernel = &mask == &masks.front();
      queue(rep, q, item, "check " + vp->name + " " + mask.label,
            kernels::heavy_check(*vp) ? kHeavy : kShort,
            [&rep](CheckItem& it) { check_row(rep.opts, rep.latency, it); });
    }
  }
  return q;
}

// The check rows, printed in order as their jobs finish; returns whether every check passed.
bool report_checks(Report& rep, Queued<CheckItem>& q, nlohmann::json& rows) {
  const ReportOptions& opts = rep.opts;
  bool all_pass = true;
  bool any_fail = false;  // a row that failed, not only one left unknown (spills)
  if (!opts.json) {
    print_stdout("%-20s %-18s %-11s %-12s %6s  %-4s %9s %7s %6s  %s\n", "kernel", "rewrites",
                 "mask", "contract", "worst", "", "latency", "vs pred", "time", "shape");
  }
  for (size_t i = 0; i < q.items.size(); ++i) {
    rep.pool.wait(q.jobs[i]);
    rep.add_work("checks", q.jobs[i]);
    const CheckItem& it = *q.items[i];
    const kernels::Variant& v = *it.v;
    const CheckRow& row = it.row;
    const kernels::CheckResult& r = row.result;
    all_pass = all_pass && r.pass;
    any_fail = any_fail || (!r.pass && !r.unknown);
    rows.push_back(row.json);
    if (opts.json) continue;
    // The contract column names a borrowed contract; "=" is the kernel's own.
    const std::string contract = r.contract.name == v.name ? "=" : r.contract.name;
    print_stdout("%-20s %-18s %-11s %-12s %6.3g  %-4s %9s %7s %5.1fs  %s\n", v.name.c_str(),
                 v.rewrites.empty() ? "-" : v.rewrites.c_str(), it.mask.label.c_str(),
                 contract.c_str(), r.worst_normalized,
                 r.pass      ? "PASS"
                 : r.unknown ? "UNKN"
                             : "FAIL",
                 latency_text(row.latency).c_str(),
                 speedup_text(row.latency, row.predecessor).c_str(), row.ms / 1000,
                 shape_text(it.req.params).c_str());
    // Once per kernel: why it runs elsewhere than trn1.
    if (it.first_of_kernel) print_generation_note(v, *it.hw);
    print_latency_notes(row.latency, row.predecessor);
    if (!r.pass) {
      std::cout << r.summary();
      for (const auto& line : row.json.at("replay")) {
        std::cout << "  replay: " << line.get<std::string>() << "\n";
      }
    }
  }
  if (!opts.json) {
    print_stdout(
        "\n%s: every registered kernel vs the oracle under its precision contract (%d "
        "seeded cases each, 1 for kernels whose one case costs over %.0f s; contract = the "
        "precision contract checked against, = the kernel's own; worst = max |err| / "
        "bound, pass <= 1); latency = modelled on the row's generation at its shape and options "
        "(trace-only run on the timing model, as `ncverify bench`), vs pred = the predecessor's "
        "latency there / this one (>1: the rewrite is faster)\n",
        all_pass   ? "PASS"
        : any_fail ? "FAIL"
                   : "UNKNOWN",
        opts.cases, kernels::kHeavyCheckCaseSeconds);
  }
  return all_pass;
}

// The trace file of a kernel's timeline, relative to DIR.
std::string trace_file(const kernels::Variant& v) {
  return "traces/" + v.name + "-" + report_generation(v).name + ".json.gz";
}

// --html DIR: refuses a path that exists and is not a directory, and (without --force) a DIR
// already holding a file the report would write; creates DIR and DIR/traces. Called before any
// work, so a refusal costs nothing.
void prepare_html_dir(const ReportOptions& opts) {
  const std::string& dir = opts.html;
  if (!opts.force) {
    std::vector<std::string> ours{"index.html", "report.json"};
    for (const kernels::Variant* v : reported(opts)) ours.push_back(trace_file(*v));
    for (const std::string& name : ours) {
      std::error_code ec;
      if (fs::exists(fs::path(dir) / name, ec)) {
        throw UsageError("--html " + dir + ": " + (fs::path(dir) / name).string() +
                         " exists (an earlier report's?); --force replaces it");
      }
    }
  }
  std::error_code ec;
  const fs::file_status st = fs::status(dir, ec);
  if (fs::exists(st) && !fs::is_directory(st)) {
    throw UsageError("--html " + dir +
                     ": exists and is not a directory (the report writes index.html, report.json "
                     "and traces/ into a directory; give a new or an existing directory)");
  }
  fs::create_directories(fs::path(dir) / "traces", ec);
  if (ec) throw UsageError("--html " + dir + ": cannot create " + dir + "/traces: " + ec.message());
  // Writable now, not only after the whole report has run: a file of our own, removed again.
  const fs::path probe = fs::path(dir) / "traces" / (".ncverify-probe-" + std::to_string(getpid()));
  const bool written = static_cast<bool>(std::ofstream(probe) << "probe\n");
  fs::remove(probe, ec);
  if (!written) throw UsageError("--html " + dir + ": cannot write into " + dir + "/traces");
}

// One kernel's series on one generation it runs on (null: the kernel has no seqlen param).
struct SweepItem {
  const kernels::Variant* v = nullptr;
  const HwConfig* hw = nullptr;
  nlohmann::json latency, footprint;
};

// One kernel's timeline: default options, report shape and generation, and its trace file.
struct TimelineItem {
  const kernels::Variant* v = nullptr;
  nlohmann::json timeline;
};

void timeline_of(const ReportOptions& opts, TimelineItem& item) {
  const kernels::Variant& v = *item.v;
  const HwConfig& hw = report_generation(v);
  const kernels::Options o = v.resolve({});
  const Program p = v.build(o);
  // A very large kernel's timeline and trace at a smaller seqlen (the JSON says which).
  const TimelineShape shape = timeline_shape(p, hw, opts.seqlen, opts.timeline_max_instances);
  const std::string file = trace_file(v);
  const TimedRun run = timed_run(p, shape.params, hw);
  nlohmann::json& t = item.timeline;
  t = {{"family", v.family},
       {"kernel", v.name},
       {"gen", hw.name},
       {"params", shape.params},
       {"options", o}};
  if (shape.reduced_from) {
    t["report_params"] = *shape.reduced_from;
    t["shape_note"] = shape.note;
  }
  if (run.ok()) {
    t.update(timeline_json(p, run, fs::path(opts.html) / file));
    t["trace_file"] = file;
  } else {
    t["latency_us"] = nullptr;
    t["error"] = run.error;
    t["tracks"] = nlohmann::json::array();
    t["intervals"] = nlohmann::json::array();
    t["trace_file"] = nullptr;
  }
}

struct HtmlJobs {
  Queued<SweepItem> sweeps;
  Queued<TimelineItem> timelines;
};

HtmlJobs queue_html(Report& rep) {
  HtmlJobs q;
  SweepLimits limits;
  limits.max_seqlen = rep.opts.sweep_max_seqlen;
  for (const kernels::Variant* vp : reported(rep.opts)) {
    for (std::string_view name : hw_config_names()) {
      if (!kernels::supports_generation(*vp, name)) continue;
      auto item = std::make_shared<SweepItem>();
      item->v = vp;
      item->hw = find_hw_config(name);
      queue(rep, q.sweeps, item, "sweep " + vp->name + " on " + std::string(name), kShort,
            [&rep, limits](SweepItem& it) {
              it.latency = latency_series(*it.v, *it.hw, limits, rep.latency);
              it.footprint = footprint_series(*it.v, *it.hw);
            });
    }
    auto item = std::make_shared<TimelineItem>();
    item->v = vp;
    queue(rep, q.timelines, item, "timeline " + vp->name, kShort,
          [&opts = rep.opts](TimelineItem& it) { timeline_of(opts, it); });
  }
  return q;
}

// The [html] sections: per kernel the latency sweep and the footprint on each generation it runs
// on, and its timeline (default options, report shape and generation) with its trace file.
void collect_html(Report& rep, HtmlJobs& q, nlohmann::json& latency, nlohmann::json& footprint,
                  nlohmann::json& timelines) {
  const ReportOptions& opts = rep.opts;
  int64_t points = 0, skipped = 0;
  for (size_t i = 0; i < q.sweeps.items.size(); ++i) {
    rep.pool.wait(q.sweeps.jobs[i]);
    rep.add_work("sweeps", q.sweeps.jobs[i]);
    SweepItem& it = *q.sweeps.items[i];
    if (!it.latency.is_null()) {
      points += static_cast<int64_t>(it.latency["points"].size());
      skipped += static_cast<int64_t>(it.latency["skipped"].size());
      latency.push_back(std::move(it.latency));
    }
    if (!it.footprint.is_null()) footprint.push_back(std::move(it.footprint));
  }
  for (size_t i = 0; i < q.timelines.items.size(); ++i) {
    rep.pool.wait(q.timelines.jobs[i]);
    rep.add_work("timelines", q.timelines.jobs[i]);
    timelines.push_back(std::move(q.timelines.items[i]->timeline));
  }
  if (!opts.json) {
    print_stdout(
        "\nhtml: latency over seqlen (default options, up to %lld) for %zu kernel x generation "
        "pairs: %lld points, %lld skipped (reasons in report.json); footprint series %zu; "
        "timelines %zu\n",
        static_cast<long long>(opts.sweep_max_seqlen), latency.size(),
        static_cast<long long>(points), static_cast<long long>(skipped), footprint.size(),
        timelines.size());
  }
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char s[32];
  std::strftime(s, sizeof s, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return s;
}

// How the report was made, as a command line (options at their defaults left out).
std::string command_line(const ReportOptions& opts) {
  const ReportOptions defaults;
  std::string s = "ncverify report";
  if (opts.cases != defaults.cases) s += " --cases " + std::to_string(opts.cases);
  if (opts.seqlen != defaults.seqlen) s += " --seqlen " + std::to_string(opts.seqlen);
  for (const std::string& f : opts.families) s += " --family " + f;
  for (const std::string& k : opts.kernels) s += " --kernel " + k;
  if (opts.json) s += " --json";
  if (html(opts)) s += " --html " + opts.html;
  if (opts.sweep_max_seqlen != defaults.sweep_max_seqlen) {
    s += " --sweep-max-seqlen " + std::to_string(opts.sweep_max_seqlen);
  }
  if (opts.frontier_timeout_s != defaults.frontier_timeout_s) {
    char t[32];
    std::snprintf(t, sizeof t, "%g", opts.frontier_timeout_s);
    s += " --frontier-timeout-s " + std::string(t);
  }
  if (opts.timeline_max_instances != defaults.timeline_max_instances) {
    s += " --timeline-max-instances " + std::to_string(opts.timeline_max_instances);
  }
  if (opts.jobs != defaults.jobs) s += " --jobs " + std::to_string(opts.jobs);
  return s;
}

int run_report(const ReportOptions& opts) {
  if (reported(opts).empty()) {
    throw UsageError("report: no registered kernel is both in a --family and a --kernel given");
  }
  if (html(opts)) prepare_html_dir(opts);
  const auto t0 = std::chrono::steady_clock::now();
  Report rep(opts, planned_steps(opts));
  nlohmann::json report{{"generated", utc_now()}, {"command", command_line(opts)}};
  // Every section's jobs are queued first, in the order they are printed.
  Queued<CheckItem> check_jobs = queue_checks(rep);
  Queued<LinkItem> link_jobs = queue_links(rep);
  Queued<ProofItem> proof_jobs = queue_proofs(rep);
  HtmlJobs html_jobs;
  if (html(opts)) html_jobs = queue_html(rep);
  nlohmann::json rows = nlohmann::json::array();
  const bool all_pass = report_checks(rep, check_jobs, rows);
  nlohmann::json links = nlohmann::json::array();
  const bool links_ok = report_links(rep, link_jobs, links);
  nlohmann::json proofs = nlohmann::json::array();
  const bool proved = report_proofs(rep, proof_jobs, proofs);
  const bool pass = all_pass && links_ok && proved;
  report["pass"] = pass;
  report["checks"] = rows;
  report["links"] = links;
  report["proofs"] = proofs;
  report["failures"] = annotate_failures(report);
  if (html(opts)) {
    nlohmann::json latency = nlohmann::json::array(), footprint = nlohmann::json::array(),
                   timelines = nlohmann::json::array();
    collect_html(rep, html_jobs, latency, footprint, timelines);
    report["latency"] = latency;
    report["footprint"] = footprint;
    report["timelines"] = timelines;
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  report["timing"] = {{"wall_seconds", wall},
                      {"workers", rep.pool.threads()},
                      {"work_seconds", rep.work_s},
                      {"cpu_seconds", rep.cpu_s}};
  if (!opts.json) {
    std::string work;
    double sum = 0, cpu = 0;
    for (const auto& [section, sec] : rep.work_s) {
      char part[96];
      std::snprintf(part, sizeof part, "%s%s %.1f s (CPU %.1f s)", work.empty() ? "" : ", ",
                    section.c_str(), sec, rep.cpu_s[section]);
      work += part;
      sum += sec;
      cpu += rep.cpu_s[section];
    }
    print_stdout(
        "\ntime: %.1f s on %u workers; per section, the seconds its jobs took on the workers: %s; "
        "sum %.1f s (CPU %.1f s)\n",
        wall, rep.pool.threads(), work.c_str(), sum, cpu);
    // Last, so that a terminal shows what did not pass and how to replay it.
    print_stdout("%s", failures_text(report["failures"]).c_str());
  }
  rep.progress.finish(rep.done);
  if (opts.json) std::cout << report.dump(2) << "\n";
  if (html(opts)) {
    const fs::path dir(opts.html);
    write_output_file((dir / "report.json").string(), report.dump(1) + "\n", true, "--html");
    write_html_report(report, dir);
    const std::string line = "page: " + (dir / "index.html").string() + "\n";
    // Standard output carries the JSON object alone with --json.
    std::fputs(line.c_str(), opts.json ? stderr : stdout);
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
  cmd->add_option("--kernel", opts->kernels,
                  "Only this registered kernel (repeatable; with --family: those of the family)")
      ->check([](const std::string& k) {
        return kernels::find_variant(k) ? std::string()
                                        : "no registered kernel is called '" + k + "'";
      });
  cmd->add_option("--html", opts->html,
                  "Also write DIR/index.html, DIR/report.json and DIR/traces/ (latency and "
                  "footprint over seqlen, frontiers on every generation, engine timelines); "
                  "other files in DIR are kept; those it writes must not exist without --force");
  cmd->add_flag("--force", opts->force,
                "With --html: replace index.html, report.json and trace files an earlier report "
                "wrote in DIR");
  cmd->add_option("--sweep-max-seqlen", opts->sweep_max_seqlen,
                  "With --html: the largest seqlen of the latency sweep")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20))
      ->capture_default_str();
  cmd->add_option("--frontier-timeout-s", opts->frontier_timeout_s,
                  "Per Z3 query of a capacity frontier search (no answer in time: unknown)")
      ->check(seconds_in_range(0.1, 3600.0))
      ->capture_default_str();
  cmd->add_option("--timeline-max-instances", opts->timeline_max_instances,
                  "With --html: a kernel whose run at the report shape records more instruction "
                  "instances gets its timeline and trace at a smaller seqlen (the page says which)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40))
      ->capture_default_str();
  cmd->add_option("--jobs", opts->jobs,
                  "Worker threads running the report's rows, proofs and sweeps (0: one per core); "
                  "the output is the same for any count")
      ->check(CLI::Range(0u, 256u))
      ->capture_default_str();
  cmd->callback([opts, &action] { action = [opts] { return run_report(*opts); }; });
}

}  // namespace ncv::cli

// `ncverify check KERNEL|FILE.nkir [--like KERNEL] --param NAME=VALUE ... [--cases N]
// [--seed N] [--values RECIPE] [--json]`: runs the kernel on the model for N seeded input sets
// (cycling through the hard distributions) and compares each with the oracle under the kernel's
// precision contract. `--values` replays one input set of the property suite instead
// (properties/values.h: `normal:s=-3:seed=17`). A .nkir file's recorded build options (its
// `options` line) are its options; without the line they are --param's, and the output says so.
// Exit 0 when every case passes, 1 otherwise, 2 on bad usage.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>
#include <limits>
#include <memory>
#include <optional>
#include <sstream>

#include "check/check.h"
#include "check/check_sweep.h"
#include "check/explicit_layout.h"
#include "check/kv_cache_layout.h"
#include "check/replay.h"
#include "kernels/option_programs.h"
#include "kernels/registry.h"
#include "oracle/attention_spec.h"
#include "oracle/bias_values.h"
#include "properties/values.h"
#include "tools/commands.h"
#include "tools/generations.h"
#include "tools/kernel_source.h"
#include "tools/progress.h"
#include "workloads/workload.h"

namespace ncv::cli {

namespace {

struct CheckCommandOptions {
  // gen "": trn1, or the kernel's first generation when it does not run on trn1 (run_check
  // replaces it with the generation used).
  std::string target, like, gen, values, layout, contract;
  // Runs per case under schedule seeds 0..N-1 (model/interp/determinism.h); -1: the kernel's
  // Variant::determinism_runs (run_check replaces it with the number used).
  int determinism_runs = -1;
  // The problem of a --layout check (check/explicit_positions.h ExplicitProblem).
  double scale = 1.0;
  bool causal = false;
  std::string align;  // "" (bottom-right), bottom-right or top-left
  int64_t window = 0;
  int64_t cp_degree = 0;
  bool cp_strided = false;
  std::vector<std::string> params;
  // --contract-option NAME=VALUE: the --contract kernel's options, apart from --param
  // (kernel_source.h contract_options_given)
  std::vector<std::string> contract_options;
  int cases = 8;
  uint64_t seed = 1;
  double budget_s = 30;
  std::string dist;
  bool json = false;
  bool apriori = false;
  std::string oracle;  // --oracle: "" (by size), fast or exact
  RunLimits limits;
  NkiFlags nki;
};

// A --layout with KV-cache roles (check/kv_cache_layout.h), parsed before the kernel is loaded
// (a malformed one is refused without tracing); nullopt for any other layout.
std::optional<kernels::KvCacheLayout> kv_cache_layout(const CheckCommandOptions& opts) {
  if (!kernels::is_kv_cache_layout(opts.layout)) return std::nullopt;
  // A decode kernel against a KV cache: its mask is built from the cache's positions.
  if (opts.causal) throw UsageError("--causal: a KV-cache layout's mask is the cache's own");
  if (!opts.align.empty() || opts.window != 0 || opts.cp_degree != 0 || opts.cp_strided) {
    throw UsageError(
        "--align, --window and --cp-*: a KV-cache layout states its window and positions with "
        "its roles (window=, positions, starts)");
  }
  try {
    return kernels::parse_kv_cache_layout(opts.layout);
  } catch (const std::invalid_argument& e) {
    throw UsageError(std::string("--layout: ") + e.what());
  }
}

// Whether any of the problem's flags (--scale, --causal, --align, --window, --cp-*) is given.
bool problem_given(const CheckCommandOptions& o) {
  return o.causal || o.scale != 1.0 || !o.align.empty() || o.window != 0 || o.cp_degree != 0 ||
         o.cp_strided;
}

kernels::ExplicitProblem explicit_problem(const CheckCommandOptions& o) {
  kernels::ExplicitProblem p;
  p.scale = o.scale;
  p.causal = o.causal;
  if (o.align == "top-left") {
    p.align = kernels::Align::top_left;
  } else if (!o.align.empty() && o.align != "bottom-right") {
    throw UsageError("--align " + o.align + ": expected top-left or bottom-right");
  }
  p.window = o.window;
  p.cp_degree = o.cp_degree;
  p.cp_strided = o.cp_strided;
  return p;
}

// --layout/--contract (with the problem's flags): the kernel's own layout and a registered
// kernel's contract, the attention problem read off the program's shapes.
std::optional<kernels::Variant> explicit_variant(const CheckCommandOptions& opts,
                                                 const KernelSource& src) {
  if (opts.layout.empty()) return std::nullopt;
  if (const auto kv = kv_cache_layout(opts)) {
    return kernels::kv_cache_layout_variant(*src.variant, src.program, *kv, opts.scale);
  }
  kernels::ExplicitLayout layout;
  if (const kernels::Variant* named = kernels::find_variant(opts.layout)) {
    // The contract's kernel lends the layout of the options the target has (a layout can follow
    // an option: Variant::adapt_layout); another kernel lends its default one.
    layout.layout = named == src.variant ? named->layout_for(src.options) : named->layout;
  } else {
    try {
      layout = kernels::parse_explicit_layout(opts.layout);
    } catch (const std::invalid_argument& e) {
      throw UsageError(std::string("--layout: ") + e.what());
    }
  }
  return kernels::explicit_layout_variant(*src.variant, src.program, layout,
                                          explicit_problem(opts));
}

// What this check was given, as its replay lines give it again (check/replay.h). `given` is
// the command line as parsed, `opts` the same with the generation and determinism runs resolved.
kernels::CheckInvocation invocation(const CheckCommandOptions& given,
                                    const CheckCommandOptions& opts, const KernelSource& src,
                                    const kernels::Variant& variant) {
  kernels::CheckInvocation inv;
  inv.target = opts.target;
  inv.like = opts.like;
  inv.layout = opts.layout;
  inv.contract = opts.contract;
  if (!opts.layout.empty()) inv.problem = explicit_problem(opts);
  inv.contract_options = opts.contract_options;
  inv.assignments = opts.params;
  inv.rebuilds = static_cast<bool>(src.rebuild);
  inv.inputs = opts.nki.inputs;
  inv.shapes = opts.nki.shapes;
  inv.grid = opts.nki.grid;
  // The generation given, or the one used when it is not the default (a kernel for trn2 and
  // trn3 only): a traced kernel is traced for it either way.
  if (!given.gen.empty() || opts.gen != kDefaultGeneration) inv.gen = opts.gen;
  inv.determinism_runs = opts.determinism_runs;
  inv.default_determinism_runs = variant.determinism_runs;
  const RunLimits defaults;
  if (opts.limits.memory_budget_mib != defaults.memory_budget_mib) {
    inv.memory_budget_mib = opts.limits.memory_budget_mib;
  }
  if (opts.limits.max_steps != defaults.max_steps) inv.max_steps = opts.limits.max_steps;
  inv.apriori = opts.apriori;
  inv.oracle = opts.oracle;
  return inv;
}

// The header's note on the generation and the determinism runs ("" when trn1 and one run).
std::string run_note(const CheckCommandOptions& opts) {
  std::string s;
  if (opts.gen != kDefaultGeneration) s += "on " + opts.gen;
  if (opts.determinism_runs > 1) {
    s += std::string(s.empty() ? "" : ", ") + "each case run " +
         std::to_string(opts.determinism_runs) + " times under schedule seeds 0.." +
         std::to_string(opts.determinism_runs - 1) + " and compared byte for byte";
  }
  return s;
}

void print_worst(const kernels::CheckInvocation& inv, const kernels::Options& options,
                 const ParamValues& params, const kernels::CaseResult& c) {
  std::cout << "worst case: " << c.distribution << " seed=" << c.seed << " at "
            << format_params(params) << " ("
            << (c.unknown     ? "unknown, undefined result"
                : c.run_error ? "model error"
                              : c.comparison.one_line().substr(0, 4))
            << ", "
            << (c.run_error ? c.run_error->message
                            : "max|err|/bound " + format_ratio(c.comparison.max_normalized))
            << ")\n  replay: " << kernels::check_replay_line(inv, options, params, c) << "\n";
  if (c.nondeterministic)
    std::cout << "  nondeterministic: " << c.nondeterministic->message << "\n";
  if (!c.run_error && !c.pass && (!c.nondeterministic || !c.comparison.pass)) {
    std::cout << "  " << c.comparison.first_failure_line() << "\n";
  }
}

int run_sweep(const CheckCommandOptions& opts, const kernels::CheckInvocation& inv,
              const KernelSource& src, const kernels::Variant& variant,
              const kernels::CheckOptions& co) {
  std::vector<kernels::Options> option_sets;
  if (src.rebuild) {
    option_sets = kernels::resolved_combinations(*src.variant, src.pinned_options);
  } else {
    option_sets = {src.options};
  }
  kernels::SweepOptions so;
  so.budget_s = opts.budget_s;
  so.cases_per_shape = opts.cases;
  so.check = co;
  // The exact (multiprecision) oracle only at the smallest shapes; the fast oracle adds its own
  // bound elsewhere (unless --oracle says which).
  if (opts.oracle.empty()) so.check.exact_oracle_max_macs = std::min(co.exact_oracle_max_macs, 1e5);
  Progress progress("check", "shapes", 0);
  so.on_shape = [&progress](int done, int planned, const std::string& what) {
    progress.set_total(planned);
    progress.update(done, what);
  };
  const auto build = [&](const kernels::Options& o) {
    return src.rebuild ? src.rebuild(o) : src.program;
  };
  const kernels::SweepResult r = kernels::check_sweep(variant, option_sets, build, src.params, so);
  // The final line counts every shape run or skipped (the sweep plans the largest one last).
  const auto shapes = static_cast<int64_t>(r.runs.size() + r.skipped.size());
  progress.set_total(shapes);
  progress.finish(shapes);
  const kernels::SweepRun* wr = r.worst_run();
  const kernels::CaseResult* wc = r.worst_case();
  if (opts.json) {
    nlohmann::json j = r.to_json();
    j["source"] = src.label;
    j["gen"] = opts.gen;
    j["determinism_runs"] = std::max(opts.determinism_runs, 1);
    if (!opts.like.empty()) j["like"] = opts.like;
    if (src.like_contract) j["contract_used"] = src.like_contract->to_json();
    if (wr && wc)
      j["worst_case_replay"] = kernels::check_replay_line(inv, wr->options, wr->shape.params, *wc);
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << "check " << src.label << (opts.like.empty() ? "" : " like " + opts.like) << ": "
              << option_sets.size() << " option set(s), shapes chosen from the domain"
              << (src.params.empty() ? "" : " with " + format_params(src.params) + " pinned")
              << ", " << opts.cases << " cases per shape, budget " << opts.budget_s << " s\n";
    if (const std::string note = run_note(opts); !note.empty()) std::cout << note << "\n";
    if (const std::string note = options_origin_note(src); !note.empty()) {
      std::cout << note << "\n";
    }
    std::cout << r.summary();
    if (wr && wc) print_worst(inv, wr->options, wr->shape.params, *wc);
    // What the verdict covers: the runs listed, not the skipped ones.
    std::cout << src.label << ": " << r.verdict();
    if (!r.skipped.empty()) {
      std::cout << " (" << r.runs.size() << " shapes x option sets run; " << r.skipped.size()
                << " planned ones not run, listed as SKIP)";
    }
    std::cout << "\n";
    if (r.unknown) std::cout << "  unknown: " << *r.unknown << "\n";
  }
  return r.pass ? kExitOk : kExitVerificationFailure;
}

int run_check(const CheckCommandOptions& given) {
  CheckCommandOptions opts = given;
  opts.nki.gen = opts.gen;  // a traced kernel is traced for the generation it is checked on
  const bool explicit_layout = !opts.layout.empty() || !opts.contract.empty();
  if (explicit_layout && !opts.like.empty()) {
    throw UsageError(
        "--like borrows a kernel's layout, spec and contract; --layout/--contract "
        "give them: use one or the other");
  }
  if (explicit_layout && (opts.layout.empty() || opts.contract.empty())) {
    throw UsageError("--layout and --contract go together");
  }
  if (!explicit_layout && problem_given(opts)) {
    throw UsageError(
        "--scale, --causal, --align, --window and --cp-degree/--cp-strided describe the problem "
        "of a --layout check");
  }
  if (!explicit_layout && !opts.contract_options.empty()) {
    throw UsageError(
        "--contract-option gives the options of the --contract kernel (with --layout)");
  }
  kv_cache_layout(opts);  // a malformed KV-cache layout is refused before tracing
  const KernelSource src =
      load_kernel_source(opts.target, opts.params, explicit_layout ? opts.contract : opts.like,
                         opts.nki, explicit_layout ? LikeRole::contract_only : LikeRole::twin,
                         opts.contract_options.empty() ? nullptr : &opts.contract_options);
  if (src.variant == nullptr && workloads::find_workload(opts.target) != nullptr) {
    throw UsageError(opts.target +
                     " is a timing workload: it has no attention problem or precision contract "
                     "to check against (run, bench and dump take it)");
  }
  if (src.variant == nullptr) {
    throw UsageError(opts.target +
                     ": a .nkir file or an NKI kernel needs --like KERNEL (or --layout and "
                     "--contract) to say which tensors are q, k, v and out, the attention "
                     "problem and the precision contract");
  }
  std::optional<kernels::Variant> explicit_v;
  try {
    explicit_v = explicit_variant(opts, src);
  } catch (const std::invalid_argument& e) {
    throw UsageError(src.label + ": " + e.what());
  }
  const kernels::Variant& variant = explicit_v ? *explicit_v : *src.variant;
  kernels::CheckOptions co;
  co.cases = opts.cases;
  co.seed = opts.seed;
  co.run.hw = &generation_for(&variant, opts.gen);
  opts.gen = co.run.hw->name;
  if (opts.determinism_runs < 0) opts.determinism_runs = variant.determinism_runs;
  co.determinism_runs = opts.determinism_runs;
  co.apriori = opts.apriori;
  if (opts.oracle == "fast") co.exact_oracle_max_macs = 0;
  if (opts.oracle == "exact") co.exact_oracle_max_macs = std::numeric_limits<double>::infinity();
  co.fa_ratio = opts.json;  // the FA-style ratio is reported in the JSON only
  opts.limits.apply(co.run);
  co.run.record_trace = false;
  const kernels::CheckInvocation inv = invocation(given, opts, src, variant);
  std::optional<props::ValueRecipe> recipe;
  if (!opts.values.empty()) {
    std::string error;
    recipe = props::parse_value_recipe(opts.values, error);
    if (!recipe) throw UsageError("--values " + opts.values + ": " + error);
  }
  std::optional<oracle::Distribution> dist;
  if (!opts.dist.empty()) {
    for (oracle::Distribution d : oracle::all_distributions()) {
      if (opts.dist == oracle::distribution_name(d)) dist = d;
    }
    if (!dist) {
      std::string known;
      for (oracle::Distribution d : oracle::all_distributions()) {
        known += (known.empty() ? "" : ", ") + std::string(oracle::distribution_name(d));
      }
      throw UsageError("--dist " + opts.dist + ": no such distribution (" + known + ")");
    }
    co.distributions = {*dist};
    co.cases = 1;
  }
  // A file checked --like a registered kernel is a rewrite of it: it may round where any member of
  // that kernel's family rounds (the a-priori bound still applies to all).
  if (src.from_file && !opts.like.empty()) {
    co.also_accept = kernels::family_contracts(variant, src.options);
  }
  // The sweep: some shape param left open (and no single input set asked for).
  std::vector<std::string> open_params;
  for (const Param& p : src.program.params) {
    if (!src.params.count(p.name)) open_params.push_back(p.name);
  }
  const bool sweep = !open_params.empty() && !recipe && !dist;
  if (!open_params.empty() && !sweep) {
    throw UsageError(std::string(recipe ? "--values" : "--dist") +
                     " replays one input set at one shape: give every shape param with --param "
                     "(missing: " +
                     open_params.front() + ")");
  }
  try {
    if (sweep) return run_sweep(opts, inv, src, variant, co);
    kernels::CheckResult r;
    if (recipe) {
      co.cases = 1;  // one property-suite input set
      r = kernels::check_kernel_with(
          variant, src.program, src.options, src.params,
          [&](const oracle::AttentionSpec& base, int) {
            // The positions / sinks and the bias the property suite drew for this case
            // (kernel_properties.cpp spec_of), from the recipe's seed.
            std::optional<oracle::AttentionSpec> drawn;
            kernels::CaseDraws draws;
            if (variant.draw_case) {
              drawn = base;
              draws = variant.draw_case(*drawn, src.params, recipe->seed);
            }
            const oracle::AttentionSpec& spec = drawn ? *drawn : base;
            kernels::InputSet set{recipe->str(), recipe->seed, props::make_values(spec, *recipe),
                                  std::nullopt,  drawn,        std::move(draws)};
            if (!spec.bias.empty()) set.bias = oracle::generate_bias(spec, recipe->seed);
            return set;
          },
          co);
    } else {
      Progress progress("check", "cases", co.cases);
      const std::string shape = src.label + " " + format_params(src.params);
      progress.start(shape);
      co.on_case = [&progress, &shape](int done) {
        progress.update(done);
        progress.start(shape);
      };
      r = kernels::check_kernel(variant, src.program, src.options, src.params, co);
    }
    if (opts.json) {
      nlohmann::json j = r.to_json();
      j["source"] = src.label;
      j["gen"] = opts.gen;
      j["determinism_runs"] = std::max(opts.determinism_runs, 1);
      if (!opts.like.empty()) j["like"] = opts.like;
      // The options the contract is K's for, and where each came from (check/like_contract.h).
      if (src.like_contract) j["contract_used"] = src.like_contract->to_json();
      if (src.options_from != OptionsFrom::arguments) {
        // Whether the options (and so the spec and contract) are the ones the file was built for.
        j["options_from"] = src.options_from == OptionsFrom::file               ? "file"
                            : src.options_from == OptionsFrom::contract_options ? "contract_option"
                                                                                : "unchecked";
      }
      if (!opts.layout.empty()) {
        j["layout"] = opts.layout;
        j["contract_from"] = opts.contract;
        // the stated problem's flags (--scale, --causal, --align, --window, --cp-*)
        if (const auto f = kernels::problem_words(explicit_problem(opts)); !f.empty()) {
          j["problem"] = kernels::shell_join(f);
        }
      }
      if (const kernels::CaseResult* w = kernels::worst_case_of(r)) {
        j["worst_case_replay"] = kernels::check_replay_line(inv, r.options, r.params, *w);
      }
      std::cout << j.dump(2) << "\n";
    } else {
      std::cout << "check " << src.label << (opts.like.empty() ? "" : " like " + opts.like) << " "
                << format_params(src.params) << "\n";
      if (const std::string note = run_note(opts); !note.empty()) std::cout << note << "\n";
      if (const std::string note = options_origin_note(src); !note.empty()) {
        std::cout << note << "\n";
      }
      std::cout << r.summary();
      if (const kernels::CaseResult* w = kernels::worst_case_of(r)) {
        print_worst(inv, r.options, r.params, *w);
      }
    }
    return r.pass ? kExitOk : kExitVerificationFailure;
  } catch (const kernels::UnknownVerdict& e) {
    // Neither PASS nor FAIL: the outputs depend on random draws the model cannot reproduce.
    if (opts.json) {
      nlohmann::json j;
      j["kernel"] = src.label;
      j["pass"] = false;
      j["verdict"] = "unknown";
      j["reason"] = e.what();
      std::cout << j.dump(2) << "\n";
    } else {
      std::cout << "check " << src.label << " " << format_params(src.params) << "\n"
                << "UNKNOWN: " << e.what() << "\n";
    }
    return kExitVerificationFailure;
  } catch (const InputError& e) {
    throw UsageError(src.label + ": " + e.message);
  } catch (const std::invalid_argument& e) {
    throw UsageError(src.label + ": " + e.what());
  } catch (const oracle::SpecError& e) {
    // The attention problem these params describe is beyond the oracle (too large, ...).
    throw UsageError(src.label + " " + format_params(src.params) +
                     ": its attention spec: " + e.message);
  }
}

}  // namespace

void register_check(CLI::App& app, Action& action) {
  auto opts = std::make_shared<CheckCommandOptions>();
  CLI::App* cmd =
      app.add_subcommand("check", "Check a kernel against the oracle under its precision contract");
  cmd->add_option("kernel", opts->target,
                  "Registered kernel name, .nkir file or NKI kernel FILE.py:FUNCTION")
      ->required();
  opts->nki.add_options(cmd);
  cmd->add_option("--layout", opts->layout,
                  "For a .nkir file or an NKI kernel without --like: which axis each dim of q, k, "
                  "v and out is, e.g. \"q=d,s k=d,s v=d,s out=s,d\" (axes b h s d), or a "
                  "registered kernel's name for its layout. Optional roles: sink=AXES (input "
                  "'sink', one logit per head, drawn per case), k_prior=AXES v_prior=AXES "
                  "prior_len=INPUT (prefix caching: INPUT holds the used prior length, drawn per "
                  "case in [0, prior)), q_offset=INPUT (context parallelism: the first query's "
                  "position, with --cp-degree), key_min=INPUT key_max=INPUT (sequence packing: "
                  "each query's keys [min, max), drawn per case)");
  cmd->add_option("--contract", opts->contract,
                  "With --layout: the registered kernel whose precision contract applies (its "
                  "options among the --param)");
  cmd->add_option("--contract-option", opts->contract_options,
                  "With --contract: NAME=VALUE, an option of the contract's kernel (repeat; "
                  "then every one of its options is given here, none from its defaults, and "
                  "no --param is read as one: --param is the checked kernel's own)")
      ->expected(1)
      ->take_all();
  cmd->add_option("--scale", opts->scale, "With --layout: the softmax scale (default 1)");
  cmd->add_flag("--causal", opts->causal, "With --layout: a causal mask");
  cmd->add_option("--align", opts->align,
                  "With --layout: where the queries sit among the keys for --causal and "
                  "--window: bottom-right (default: the last query at the last key) or top-left "
                  "(query i at key i, as nki-library's attention_cte)");
  cmd->add_option("--window", opts->window,
                  "With --layout: a sliding window of W keys: a query at position p sees keys at "
                  "positions > p - W")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
  cmd->add_option("--cp-degree", opts->cp_degree,
                  "With --layout and a q_offset role: context parallelism over N ranks (the "
                  "offset drawn per case as rank * seqlen_q, or the rank with --cp-strided)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  cmd->add_flag("--cp-strided", opts->cp_strided,
                "With --cp-degree: the ranks' queries interleaved (query i at offset + i * N)");
  cmd->add_option("--like", opts->like,
                  "For a .nkir file or an NKI kernel: the registered kernel whose layout, spec and "
                  "contract apply (a file's `options` line gives the options; a --param that "
                  "contradicts it is an error; an option neither gives is derived from the "
                  "program's dtypes where they decide it, else the kernel's default, and the "
                  "output says which)");
  cmd->add_option("-p,--param", opts->params,
                  "NAME=VALUE: a param (integer) or a kernel option (e.g. use_causal_mask=true)")
      ->expected(1)
      ->take_all();
  cmd->add_option("--cases", opts->cases,
                  "Seeded input sets per shape (the bug-exposing distributions first)")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  add_seed_option(cmd, opts->seed, "Seed of the first input set");
  cmd->add_option("--budget-s", opts->budget_s,
                  "Without every shape param pinned: wall time for the shape sweep, kept to within "
                  "one case (shapes and option sets most likely to expose a bug first; what does "
                  "not fit is listed as SKIP; at least one case runs)")
      ->check(seconds_in_range(0.0, 1e6))
      ->capture_default_str();
  cmd->add_option("--dist", opts->dist,
                  "Replay one input set of a distribution (with --seed; the `replay:` line of a "
                  "check)");
  cmd->add_option("--values", opts->values,
                  "Replay one property-suite input set instead, e.g. normal:s=-3:seed=17 "
                  "(the `replay:` line of a failing property)");
  cmd->add_option("--gen", opts->gen,
                  "Hardware generation: trn1, trn2 or trn3 (default trn1, or the kernel's first "
                  "generation when it does not run on trn1)");
  cmd->add_option("--determinism-runs", opts->determinism_runs,
                  "Run each case N times under schedule seeds 0..N-1 (the SPMD cores' order "
                  "within each lockstep step) and require byte-identical outputs (default: the "
                  "kernel's own, 10 for attention_tkg as nki-library runs it, else 1)")
      ->check(CLI::Range(1, 1000));
  opts->limits.add_options(cmd);
  cmd->add_flag("--apriori", opts->apriori,
                "Also compute the a-priori error bound and report its ratio (apriori_ratio)");
  cmd->add_option("--oracle", opts->oracle,
                  "fast or exact: the oracle every case is compared with (default: the exact, "
                  "multiprecision one for small problems, the fast one with its own bound added "
                  "beyond; a replay line of a case judged against the fast one says --oracle fast)")
      ->check(CLI::IsMember({"fast", "exact"}));
  cmd->add_flag("--json", opts->json, "Print one JSON object instead of text");
  cmd->callback([cmd, opts, &action] {
    // A --values input set is one case with its own seed: --cases and --seed would be ignored.
    if (!opts->values.empty()) {
      for (const char* ignored : {"--cases", "--seed", "--dist"}) {
        if (cmd->count(ignored) != 0) {
          throw CLI::ValidationError(ignored,
                                     "does not apply with --values (one input set, "
                                     "seeded by its recipe)");
        }
      }
    }
    action = [opts] { return run_check(*opts); };
  });
}

}  // namespace ncv::cli

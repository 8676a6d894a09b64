// Building an EquivRequest from the command line's two kernel arguments (equiv_sides.h).
#include "tools/equiv_sides.h"

#include <CLI/CLI.hpp>
#include <set>

#include "check/replay.h"
#include "kernels/registry.h"
#include "oracle/attention_spec.h"
#include "tools/cli_common.h"

namespace ncv::cli {

namespace {

// A registered kernel's name: the side is built per option combination. Anything else: one
// fixed program, with the variant whose layout, spec and contract it borrows.
equiv::EquivSide make_side(const std::string& target, const std::vector<std::string>& assignments,
                           const std::string& like, const NkiFlags& nki,
                           kernels::Options& fixed_options, bool& fixed) {
  equiv::EquivSide s;
  s.label = target;
  if (const kernels::Variant* v = kernels::find_variant(target)) {
    s.variant = v;
    return s;
  }
  KernelSource src = load_kernel_source(target, assignments, like, nki);
  s.variant = src.variant;
  s.fixed = std::move(src.program);
  fixed_options = src.options;
  fixed = true;
  return s;
}

}  // namespace

equiv::EquivRequest equiv_request(const std::string& original, const std::string& rewrite,
                                  const std::vector<std::string>& assignments,
                                  const std::string& like, const NkiFlags& nki,
                                  bool like_registered_side) {
  equiv::EquivRequest req;
  kernels::Options fixed_o, fixed_r;
  bool is_fixed_o = false, is_fixed_r = false;
  // Without --like (equiv), a file side is read as a rewrite of the registered side it is
  // compared with: its `options` line and the --param options parse as that kernel's (a dump of
  // sd_attention with --param use_causal_mask=false is the same request with or without
  // --like sd_attention).
  auto like_for = [&](const std::string& side, const std::string& other) {
    if (!like.empty() || !like_registered_side || !is_file_target(side)) return like;
    return kernels::find_variant(other) ? other : std::string();
  };
  req.original =
      make_side(original, assignments, like_for(original, rewrite), nki, fixed_o, is_fixed_o);
  req.rewrite =
      make_side(rewrite, assignments, like_for(rewrite, original), nki, fixed_r, is_fixed_r);
  // Options and params given on the command line, split by the original's options.
  split_assignments(req.original.variant, assignments, req.options, req.params);
  // A fixed program was built with its options: the original is compared at those.
  if (is_fixed_r && req.original.registered()) {
    for (const auto& [k, v] : fixed_r) {
      if (req.original.variant->offers(k, v)) req.options[k] = v;
    }
  }
  if (is_fixed_o && req.original.variant && !req.original.registered()) {
    req.options = fixed_o;
  }
  return req;
}

void EquivFlags::add_options(CLI::App* cmd) {
  cmd->add_option("original", original,
                  "Registered kernel, bug-catalogue entry, .nkir file or FILE.py:FUNCTION")
      ->required();
  cmd->add_option("rewrite", rewrite, "The rewrite, in the same forms")->required();
  nki.add_options(cmd);
  cmd->add_option("--like", like,
                  "For a file side: the registered kernel whose layout, spec and contract apply "
                  "(a file's `options` line gives its options; equiv: by default the registered "
                  "side)");
  cmd->add_option("-p,--param", params,
                  "NAME=VALUE: pins a param (integer) or an option of the original")
      ->expected(1)
      ->take_all();
  cmd->add_option("--require", require,
                  "bit-exact, real or contract (default: bit-exact when the rewrite claims the "
                  "same numerics or is a file, contract otherwise)");
  cmd->add_option("--term-budget-mib", term_budget_mib,
                  "Memory the two programs' terms and their real forms may take at one shape, per "
                  "option set (beyond it the bit-exact and real layers are unknown there)")
      ->check(CLI::Range(int64_t{16}, int64_t{1} << 24))
      ->capture_default_str();
}

equiv::EquivRequest EquivFlags::request() const {
  equiv::EquivRequest req =
      equiv_request(original, rewrite, params, like, nki, like_registered_side);
  req.term_budget_mib = term_budget_mib;
  if (!require.empty()) {
    req.require = equiv::parse_level(require);
    if (!req.require)
      throw UsageError("--require " + require + ": one of bit-exact, real, contract");
  }
  return req;
}

std::string equiv_replay_line(const EquivFlags& flags, const equiv::EquivRequest& req,
                              const equiv::OptionOutcome& o, const equiv::Counterexample& c,
                              equiv::Level required, uint64_t seed, const std::string& gen) {
  std::vector<std::string> w = {"ncverify", "equiv", req.original.label, req.rewrite.label};
  std::set<std::string> named;
  if (!flags.like.empty()) w.insert(w.end(), {"--like", flags.like});
  for (const auto& [k, v] : o.options) {
    w.insert(w.end(), {"--param", k + "=" + v});
    named.insert(k);
  }
  for (const auto& [k, v] : c.params) {
    w.insert(w.end(), {"--param", k + "=" + std::to_string(v)});
    named.insert(k);
  }
  for (const std::string& a : flags.params) {
    if (named.insert(a.substr(0, a.find('='))).second) w.insert(w.end(), {"--param", a});
  }
  for (const std::string& i : flags.nki.inputs) w.insert(w.end(), {"--input", i});
  for (const std::string& i : flags.nki.shapes) w.insert(w.end(), {"--shape", i});
  if (!flags.nki.grid.empty()) w.insert(w.end(), {"--grid", flags.nki.grid});
  const uint64_t cases = c.seed >= seed ? c.seed - seed + 1 : 1;
  w.insert(w.end(), {"--require", equiv::level_name(required), "--seed", std::to_string(seed),
                     "--cases", std::to_string(cases), "--gen", gen});
  return kernels::shell_join(w);
}

equiv::EquivResult run_equiv_or_usage(const equiv::EquivRequest& req) {
  try {
    return equiv::run_equiv(req);
  } catch (const InputError& e) {
    throw UsageError(e.message);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  } catch (const oracle::SpecError& e) {
    throw UsageError("the attention spec: " + e.message);
  }
}

}  // namespace ncv::cli

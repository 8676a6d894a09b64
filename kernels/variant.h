// A registered kernel variant: how to build it, what it models, which attention problems it
// solves (its domain), how precisely (its precision contract), and how a problem's tensors map to
// its HBM tensors (its layout). See kernels/README.md.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/layout.h"
#include "model/interp/interpreter.h"
#include "model/ir/program.h"
#include "oracle/attention_spec.h"
#include "oracle/precision_contract.h"

namespace ncv::kernels {

// A build-time option, like an NKI kernel's Python keyword argument (use_causal_mask,
// mixed_precision, the input dtype): it selects instructions and dtypes, so it is fixed before
// the program exists. Shapes stay symbolic params of the Program.
struct OptionSpec {
  std::string name;
  std::vector<std::string> values;  // the allowed values, in the order `list` prints them
  std::string default_value;
  std::string help;
  // `value` as `values` spells it: an on/off option (values false and true) reads false, False,
  // 0, true, True and 1 as Python does (the NKI front end passes the same words to a traced
  // kernel's keyword argument), so `--param use_causal_mask=False` means the same with or
  // without --like. Any other value is returned unchanged.
  std::string canonical(const std::string& value) const;
};

// Option values by name; Variant::resolve fills in defaults and rejects unknown names/values.
using Options = std::map<std::string, std::string>;

struct Variant {
  std::string name;
  std::string family;    // e.g. "sd_attention"
  std::string models;    // the source it reproduces: repository, path, commit
  std::string summary;   // one sentence: what the kernel does and how
  std::string rewrites;  // the variant this one rewrites ("" for an original)
  // For rewrites: true when the rewrite claims the same numerics as its predecessor (outputs
  // bit-identical for every input); false when it changes rounding (a different contract).
  bool same_numerics_as_predecessor = false;
  // For rewrites that deliberately take or give different tensors, or cover a different domain,
  // than their predecessor (a longer sequence, a bf16 output): why, in words. `report` shows such
  // a link as CHANGED instead of FAIL; empty: the rewrite claims the predecessor's interface.
  std::string interface_change;
  std::vector<OptionSpec> options;
  // Option values the contract and the spec are stated for but the kernel is not built with:
  // `check --contract K --contract-option NAME=VALUE` accepts them for an outside kernel
  // (attention_cte's dtype=fp16: nki-library's attention_cte takes fp16 q, k, v and rounds as in
  // bf16 but for the output store; the registered kernel is built in bf16 and fp32 only). No
  // other command offers them.
  std::map<std::string, std::vector<std::string>> contract_only_values;
  // Domain restrictions the Program's params cannot state, in words (e.g. "scale fixed at 0.125").
  std::vector<std::string> notes;

  // The kernel for a complete set of options (Variant::resolve output). Throws BuildError.
  std::function<Program(const Options&)> build;
  // The rounding stages of the kernel for these options.
  std::function<oracle::PrecisionContract(const Options&)> contract;
  // The attention problem the kernel solves for these options and params (shapes, scale, mask,
  // dtypes). Throws std::invalid_argument when a param the spec needs is missing.
  std::function<oracle::AttentionSpec(const Options&, const ParamValues&)> spec;
  // Which HBM tensor holds q, k, v and the output, with which axis order, for the default
  // options; read it through layout_for(options).
  Layout layout;
  // For a kernel whose options change an HBM tensor's layout (attention_tkg's out_in_sb: the
  // test wrapper stores the output [d, B*H*s_a] as the kernel left it in SBUF, not
  // [B, H, d, s_a]): adjusts `layout` for a resolved option set. Unset: `layout` serves every
  // option set.
  std::function<void(const Options&, Layout&)> adapt_layout;
  // Why a complete combination of option values is not offered ("" when it is), for
  // combinations the source cannot run faithfully (flash_fwd: bf16 inputs without mixed
  // precision). Unset: every combination is offered. resolve() rejects such a combination and
  // option_combinations() leaves it out.
  std::function<std::string(const Options&)> excluded;
  // Per-case problem values the spec leaves to each check case (a decode kernel's cache
  // positions and sinks): check draws them from the case's seed before drawing the inputs, the
  // property suite from a drawn seed, into the spec of `params` (what spec() made for them).
  // Returns what the case drew beyond the spec (CaseDraws, kernels/layout.h: a --layout
  // problem's run-time inputs), which the caller hands to pack_inputs with that spec.
  // Deterministic in (spec, params, seed); keeps every shape. Unset: the spec's values serve
  // every case.
  std::function<CaseDraws(oracle::AttentionSpec&, const ParamValues& params, uint64_t seed)>
      draw_case;

  // Measured wall time (2-core machine) of one `check` case at the smallest shape of the domain,
  // set when the domain starts so large that running the interpreter there does not fit the
  // registry-wide tests (pipelined_attention: seqlen 16384 only). Those tests and the default
  // sweeps skip such a variant and say why (heavy_check_reason); its own test runs it. 0: cheap.
  double check_case_seconds = 0;

  // The hardware generations (HwConfig names: trn1, trn2, trn3) the kernel runs on, the first
  // being the one a command uses when --gen is not given and trn1 is not among them. Empty:
  // every generation. A kernel whose source needs what some generation lacks (attention_tkg:
  // dma_transpose and sendrecv exist on NeuronCore-v3+ only) lists the others; every command
  // refuses `--gen` naming another generation (exit 2, with generations_reason) and a command
  // over all generations (`--gen all`) skips the others and says why.
  std::vector<std::string> generations;
  // Why the kernel is restricted to `generations` (shown after "runs on trn2, trn3 only: ").
  std::string generations_reason;
  // How many runs each `check` case makes under schedule seeds 0..N-1 (model/interp/
  // determinism.h), compared byte for byte, when --determinism-runs is not given; 0 or 1: one
  // run. attention_tkg sets 10, as nki-library's tests run it (TKG_INFERENCE_ARGS).
  int determinism_runs = 0;

  // Options with defaults filled in; throws std::invalid_argument naming an unknown option, a
  // value outside OptionSpec::values or an excluded combination (with its reason).
  Options resolve(const Options& given) const;
  // Whether option `option` exists and may take `value`.
  bool offers(const std::string& option, const std::string& value) const;
  // The layout of the program built with resolved options `o`: `layout`, adjusted by
  // adapt_layout when set. Every packing of inputs and unpacking of outputs goes through it.
  Layout layout_for(const Options& o) const;
};

// Above this per-case cost a variant is too slow for the registry-wide tests and the default
// sweeps: they skip it and say why.
inline constexpr double kHeavyCheckCaseSeconds = 5.0;
inline bool heavy_check(const Variant& v) {
  return v.check_case_seconds > kHeavyCheckCaseSeconds;
}
// Why a heavy_check variant is skipped ("one check case takes ~N s at its smallest shape ..."),
// for GTEST_SKIP and the command line's SKIP rows.
std::string heavy_check_reason(const Variant& v);

// Whether v runs on generation `gen` (an HwConfig name).
bool supports_generation(const Variant& v, std::string_view gen);
// "trn2, trn3": the generations v runs on (every HwConfig name when it is not restricted).
std::string generations_text(const Variant& v);
// Why v does not run on `gen`: "attention_tkg runs on trn2, trn3 only: <generations_reason>"
// ("" when it does).
std::string generation_refusal(const Variant& v, std::string_view gen);
// The generation a command uses when --gen is not given: `fallback` when v runs on it, else v's
// first generation.
std::string default_generation(const Variant& v, std::string_view fallback = "trn1");

// Readers of a resolved option set; throw std::invalid_argument when the option is missing (or
// the dtype option names no dtype).
bool option_flag(const Options& o, const std::string& name);  // "true" / "false"
DType option_dtype(const Options& o);                         // the "dtype" option
// The value of param `name` (what a spec() reads); throws std::invalid_argument naming it when
// it is not given.
int64_t param_value(const ParamValues& params, const std::string& name);

}  // namespace ncv::kernels

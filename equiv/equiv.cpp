// run_equiv: the three levels of equiv.h for every option combination of the original, at the
// checked shapes. Per shape: both programs run once on the interpreter with a TermExecutor
// attached (one term store, so equal computations are the same term), the output terms are
// compared (bit-exact), then their real forms (real), then both programs run on the hard input
// distributions (counterexamples; the numeric layer against both contracts' bounds).
#include "equiv/equiv.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <exception>
#include <map>
#include <thread>
#include <unordered_map>

#include "check/check.h"
#include "equiv/exp_bound.h"
#include "equiv/frontier.h"
#include "equiv/real_form.h"
#include "equiv/shapes.h"
#include "equiv/structural.h"
#include "equiv/term_eval.h"
#include "equiv/term_executor.h"
#include "kernels/exercised.h"
#include "kernels/layout.h"
#include "model/ir/random_draws.h"
#include "oracle/input_distributions.h"

namespace ncv::equiv {

kernels::Options EquivSide::options_for(const kernels::Options& original) const {
  if (!registered()) return original;
  kernels::Options mine;
  for (const kernels::OptionSpec& o : variant->options) {
    auto it = original.find(o.name);
    if (it == original.end()) continue;
    if (!variant->offers(o.name, it->second)) {
      throw std::invalid_argument("'" + label + "' does not offer " + o.name + "=" + it->second);
    }
    mine[o.name] = it->second;
  }
  return variant->resolve(mine);
}

Program EquivSide::build(const kernels::Options& options) const {
  if (fixed) return *fixed;
  return variant->build(options_for(options));
}

namespace {

// A limit's message with "at this shape" naming the shape (an option set's verdict covers several).
std::string at_shape(std::string what, const ParamValues& params) {
  const std::string here = "at this shape";
  const size_t at = what.find(here);
  if (at != std::string::npos) {
    what.replace(at, here.size(),
                 params.empty() ? "at the program's one shape" : "at " + params_str(params));
  }
  return what;
}

using Clock = std::chrono::steady_clock;

// The distributions tried for counterexamples and the numeric layer, most revealing first.
const std::vector<oracle::Distribution>& case_distributions() {
  static const std::vector<oracle::Distribution> d = {
      oracle::Distribution::large_logits, oracle::Distribution::bit_patterns,
      oracle::Distribution::normal,       oracle::Distribution::tiny_and_zero,
      oracle::Distribution::spike,        oracle::Distribution::uniform_positive,
      oracle::Distribution::v_offset,     oracle::Distribution::constant_keys};
  return d;
}

struct InputCase {
  std::string label;
  uint64_t seed = 0;
  std::map<std::string, HostTensor> inputs;
  std::optional<oracle::AttentionSpec> spec;
  std::optional<oracle::AttentionInputs> values;
};

// Case n's inputs, packed for `program` through the original's layout when it has one, else the
// interpreter's seeded random inputs scaled by a power of two that grows with n.
InputCase make_case(const EquivSide& original, const kernels::Options& options,
                    const Program& program, const ParamValues& params, int n, uint64_t seed) {
  InputCase c;
  c.seed = seed + static_cast<uint64_t>(n);
  if (original.variant) {
    const auto& ds = case_distributions();
    const oracle::Distribution d = ds[static_cast<size_t>(n) % ds.size()];
    c.spec = original.variant->spec(options, params);
    c.values = oracle::generate_inputs(*c.spec, d, c.seed);
    c.label = oracle::distribution_name(d);
    c.inputs = kernels::pack_inputs(original.variant->layout_for(options), program, params, *c.spec,
                                    *c.values);
    return c;
  }
  c.inputs = random_inputs(program, params, c.seed);
  const float scale = std::ldexp(1.0f, 4 * (n % 4));
  for (auto& [name, h] : c.inputs) {
    if (!is_float(h.dtype)) continue;
    for (int64_t i = 0; i < h.num_elements(); ++i) {
      const float x = decode_to_float(h.dtype, h.bits(i)) * scale;
      store_bits(h.dtype, h.bytes.data() + i * dtype_size(h.dtype), encode_from_float(h.dtype, x));
    }
  }
  c.label = "uniform[-1,1) x " + std::to_string(static_cast<int64_t>(scale));
  return c;
}

RunResult run_on(const Program& p, const ParamValues& params, const InputCase& c,
                 const RunOptions& base, ValueObserver* observer = nullptr) {
  RunOptions o = base;
  o.observer = observer;
  o.record_trace = false;
  return run_program(p, params, c.inputs, o);
}

// The least memory the terms of one element a compute engine writes take: below the least
// measured (35 bytes: sd_attention step4 -> step5 at seqlen 1024; attn_fwd's links 64-83; the
// store's allocation plus its next doubling, as the budget counts it).
constexpr uint64_t kTermBytesPerComputedElement = 32;

// The elements the compute engines write in a run (a matmul its M x N outputs): nearly each is a
// new term when the terms are built, so they bound the terms' memory from below.
uint64_t compute_elements(const Trace& t) {
  uint64_t n = 0;
  for (const TraceEvent& e : t.events) {
    if (e.engine == Engine::Dma) continue;
    const int64_t rows = e.engine == Engine::Tensor ? e.stationary_cols : e.partitions;
    n += static_cast<uint64_t>(std::max<int64_t>(rows, 1) * std::max<int64_t>(e.free_elems, 0));
  }
  return n;
}

std::string tensor_signature(const Program& p, const ParamValues& params, TensorKind kind) {
  std::string s;
  for (const Tensor& t : p.tensors) {
    if (t.kind != kind) continue;
    s += t.name + ":" + std::string(dtype_name(t.dtype)) + "[";
    for (int64_t d : concrete_shape(p, t.id, params)) s += std::to_string(d) + ",";
    s += "] ";
  }
  return s;
}

std::vector<int64_t> unflatten(const std::vector<int64_t>& shape, int64_t flat) {
  std::vector<int64_t> idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = flat % shape[d];
    flat /= shape[d];
  }
  return idx;
}

bool same_value_bits(DType t, uint32_t a, uint32_t b) {
  if (a == b) return true;
  return is_float(t) && std::isnan(decode_to_float(t, a)) && std::isnan(decode_to_float(t, b));
}

// The canonical term under the side condition "values transposed on the Tensor engine are
// finite and not -0": transpose_pe(column, p) is then column[p] (the identity matmul adds only
// +0 products). Rebuilt bottom-up with the store's own constructors; memoized.
class FiniteTransposeCanon {
 public:
  // Which terms have a Tensor-engine transpose below them (kids precede parents, so one pass in
  // id order); the others are their own canonical form.
  explicit FiniteTransposeCanon(TermStore& ts) : ts_(ts), below_(ts.size(), false) {
    for (TermId t = 0; t < below_.size(); ++t) {
      bool b = ts.node(t).op == TermOp::transpose_pe;
      for (TermId k : ts.kids(t)) b = b || below_[k];
      below_[t] = b;
    }
  }
  TermId operator()(TermId t, int side) {
    if (t < below_.size() && !below_[t]) return t;
    // One memo per side: a rebuilt node takes the provenance of the side that rebuilds it.
    auto it = memo_[side].find(t);
    if (it != memo_[side].end()) return it->second;
    const TermNode n = ts_.node(t);
    std::vector<TermId> k(ts_.kids(t).begin(), ts_.kids(t).end());
    for (TermId& x : k) x = (*this)(x, side);
    ts_.set_context(side, ts_.provenance(side, t));
    TermId r = t;
    switch (n.op) {
      case TermOp::transpose_pe: {  // k = {the column's operands node, rebuilt}
        const auto col = ts_.kids(k.at(0));
        if (n.payload >= col.size()) throw std::logic_error("a transpose outside its column");
        r = col[n.payload];
        used_.push_back(ts_.provenance(side, t));
        break;
      }
      case TermOp::round:
        r = ts_.round(n.dtype, k[0]);
        break;
      case TermOp::alu:
        r = ts_.alu(static_cast<AluOp>(n.aux), k[0], k[1]);
        break;
      case TermOp::act:
        r = ts_.act(static_cast<ActFunc>(n.aux), k[0]);
        break;
      case TermOp::fma_chain:  // the lists are rebuilt (case operands) like any other kid
        r = ts_.fma_chain_of(k[0], k[1], k[2]);
        break;
      case TermOp::operands:
        r = ts_.operands(k);
        break;
      case TermOp::select:
        r = ts_.select(k[0], n.aux != 0, k[1], k[2], n.dtype);
        break;
      default:
        break;
    }
    memo_[side].emplace(t, r);
    return r;
  }
  const std::vector<uint32_t>& used() const { return used_; }

 private:
  TermStore& ts_;
  std::vector<bool> below_;
  std::unordered_map<TermId, TermId> memo_[2];
  std::vector<uint32_t> used_;
};

std::string label_of(const std::vector<std::string>& labels, uint32_t id) {
  return id < labels.size() ? labels[id] : "";
}

// The exp terms reachable from `roots`, by the rewrite instruction that made them.
void collect_exps(const TermStore& ts, const std::vector<TermId>& roots,
                  std::vector<TermId>& exps) {
  std::vector<bool> seen(ts.size(), false);
  std::vector<TermId> stack(roots.begin(), roots.end());
  while (!stack.empty()) {
    TermId t = stack.back();
    stack.pop_back();
    if (seen[t]) continue;
    seen[t] = true;
    const TermNode& n = ts.node(t);
    if (n.op == TermOp::act && static_cast<ActFunc>(n.aux) == ActFunc::exp) exps.push_back(t);
    for (TermId k : ts.kids(t)) stack.push_back(k);
  }
}

struct ShapeWork {
  const EquivRequest& req;
  const kernels::Options& options;
  const Program& orig;
  const Program& rew;
  const std::vector<std::string>& orig_labels;
  const std::vector<std::string>& rew_labels;
  OptionOutcome& out;
  // Accumulated over shapes.
  bool bit_all_equal = true, bit_unknown = false, real_all_equal = true, real_unknown = false;
  std::map<std::string, NumericsDifference> diffs;
  std::map<std::string, ExpObligation> exps;
  std::vector<std::string> assumptions;
  std::string budget_note;
};

void describe_difference(ShapeWork& w, const TermStore& ts, const TermDifference& d) {
  const uint32_t pa = ts.provenance(0, d.original), pb = ts.provenance(1, d.rewrite);
  NumericsDifference nd;
  nd.kind = d.kind;
  nd.original = ts.str(d.original, 3);
  nd.rewrite = ts.str(d.rewrite, 3);
  nd.original_at = label_of(w.orig_labels, pa);
  nd.rewrite_at = label_of(w.rew_labels, pb);
  const std::string key = nd.kind + "|" + std::to_string(pa) + "|" + std::to_string(pb);
  auto [it, fresh] = w.diffs.emplace(key, nd);
  it->second.elements++;
}

struct Terms {
  TermStore& ts;
  const TermExecutor& original;
  const TermExecutor& rewrite;
};

// Where the values of output element `flat` part for the inputs of case c: the first instruction
// on each side (or, where the values part at an element read, the instruction reading it).
void locate(const ShapeWork& w, const Terms& t, const InputCase& c, const std::string& output,
            int64_t flat, Counterexample& ce) {
  const std::vector<uint32_t> bits = evaluate_terms(t.ts, c.inputs);
  const TermId ta = t.original.outputs().at(output)[flat];
  const TermId tb = t.rewrite.outputs().at(output)[flat];
  const TermDifference d = first_value_difference(t.ts, bits, ta, tb);
  auto at = [&](int side, TermId leaf, TermId above, const std::vector<std::string>& labels) {
    const uint32_t p = t.ts.provenance(side, leaf);
    if (p != kNoInstruction) return label_of(labels, p);
    return t.ts.str(leaf, 1) + " read by " + label_of(labels, t.ts.provenance(side, above));
  };
  ce.original_at = at(0, d.original, d.original_above, w.orig_labels);
  ce.rewrite_at = at(1, d.rewrite, d.rewrite_above, w.rew_labels);
  ce.original_at_value = term_value(t.ts, bits, d.original);
  ce.rewrite_at_value = term_value(t.ts, bits, d.rewrite);
}

// Case 0's runs, when the caller has them already (check_shape runs case 0 first).
struct CaseRuns {
  RunResult original, rewrite;
};
void run_cases(ShapeWork& w, const ParamValues& params, const Terms* terms, int cases,
               const CaseRuns* first = nullptr);

// The finite sums of products (matmul accumulations) as atoms: flags for RealForms::set_opaque.
std::vector<uint8_t> finite_dot_products(const TermStore& ts) {
  std::vector<uint8_t> out = may_be_infinite(ts);
  for (TermId t = 0; t < out.size(); ++t) {
    out[t] = out[t] == 0 && ts.node(t).op == TermOp::fma_chain;
  }
  return out;
}

// Whether every pair has one real form when the terms both sides reach are read as atoms
// (RealForms::set_opaque): a proof of real equality. False when not shown (a difference there
// may be one the atoms hide, or the forms outgrew `max_bytes`), which proves nothing.
bool equal_over_shared_atoms(const TermStore& ts,
                             const std::vector<std::pair<TermId, TermId>>& pairs,
                             size_t max_bytes) {
  std::vector<TermId> a, b;
  for (auto [x, y] : pairs) a.push_back(x), b.push_back(y);
  const std::vector<uint8_t> shared = shared_subterms(ts, a, b);
  // Each pair's forms are wanted once: when the forms hold more than a quarter of what they may,
  // they are let go and built afresh for the pairs after (the shared atoms cost nothing to make
  // again; what the next pairs share with these, mostly a row's normalised probabilities, is
  // rebuilt once). The PV sums of every output at seqlen 1024 were 2 GB held to the end. At
  // most once per kRefreshPairs pairs: the per-term memo alone may pass a quarter of a small
  // budget, and a rebuild after every pair never ends.
  constexpr size_t kRefreshPairs = 4096;
  const size_t refresh = max_bytes / 4;
  try {
    std::optional<RealForms> rf;
    size_t since = 0;
    for (auto [x, y] : pairs) {
      if (rf && ++since > kRefreshPairs && rf->bytes() > refresh) rf.reset();
      if (!rf) {
        rf.emplace(ts, kRealFormMonomials, max_bytes);
        rf->set_opaque(shared);
        since = 0;
      }
      if (rf->form(x) != rf->form(y)) return false;
    }
    return true;
  } catch (const RealFormLimit&) {
    return false;
  }
}

// A run that stopped on a result the documentation leaves undefined (an int32 add on GpSimd that
// overflows): records it (OptionOutcome::undefined_result, every level unknown) and says so.
bool undefined(const RunResult& r, const char* side, OptionOutcome& out,
               const std::string& where = "") {
  if (!r.error || r.error->kind != CheckKind::undefined_result) return false;
  out.undefined_result = std::string(side) +
                         " reaches a result the documentation leaves undefined" + where + ": " +
                         r.error->message;
  out.bit_detail = out.real_detail = out.numeric_detail = out.undefined_result;
  return true;
}

void check_shape(ShapeWork& w, const ParamValues& params) {
  const EquivRequest& req = w.req;
  OptionOutcome& out = w.out;
  // Interface: the same kernel inputs and outputs at this shape.
  const std::string in_o = tensor_signature(w.orig, params, TensorKind::Input);
  const std::string in_r = tensor_signature(w.rew, params, TensorKind::Input);
  const std::string out_o = tensor_signature(w.orig, params, TensorKind::Output);
  const std::string out_r = tensor_signature(w.rew, params, TensorKind::Output);
  if (in_o != in_r || out_o != out_r) {
    out.interface_error = "at " +
                          [&] {
                            std::string s;
                            for (auto& [k, v] : params) s += k + "=" + std::to_string(v) + " ";
                            return s;
                          }() +
                          "the original takes " + in_o + "and gives " + out_o +
                          "; the rewrite takes " + in_r + "and gives " + out_r;
    return;
  }
  // Case 0 concretely first: a rewrite that fails where the original runs is refuted cheaply.
  const InputCase c0 = make_case(req.original, w.options, w.orig, params, 0, req.seed);
  uint64_t computed_elements = 0;  // by both programs' compute engines, in case 0's traces
  CaseRuns first;
  {
    RunOptions traced = req.run;
    traced.record_trace = true;
    first.original = run_program(w.orig, params, c0.inputs, traced);
    const RunResult& ro = first.original;
    if (undefined(ro, "the original", out)) return;
    if (ro.error) throw InputError("the original fails at this shape: " + ro.error->message);
    computed_elements += compute_elements(ro.trace);
    first.original.trace = {};
    first.rewrite = run_program(w.rew, params, c0.inputs, traced);
    const RunResult& rr = first.rewrite;
    if (undefined(rr, "the rewrite", out)) return;
    if (rr.error) {
      out.run_error = rr.error->message;
      return;
    }
    computed_elements += compute_elements(rr.trace);
    first.rewrite.trace = {};
  }
  // Terms of both programs, in one store (not again at a later, larger shape once a shape
  // outgrew the budget).
  if (!w.budget_note.empty() || !out.all_shapes.empty()) {  // no terms needed, or none fit
    run_cases(w, params, nullptr, req.cases, &first);
    return;
  }
  const size_t budget = static_cast<size_t>(req.term_budget_mib) << 20;
  // Terms that cannot fit are not built: nearly every element a compute engine writes is a new
  // term, and a term takes at least kTermBytesPerComputedElement of the budget (35-83 bytes
  // measured on the registered links at seqlen 512-1024: the node, its kids, its hash slot). At
  // attn_fwd's seqlen 4096 building them until the budget ran out took 18 s of a 33 s link.
  if (computed_elements > budget / kTermBytesPerComputedElement) {
    w.bit_unknown = w.real_unknown = true;
    w.budget_note = at_shape(
        "the terms of both programs would outgrow " + std::to_string(req.term_budget_mib) +
            " MiB at this shape (their compute engines write " + std::to_string(computed_elements) +
            " elements, at least " + std::to_string(kTermBytesPerComputedElement) +
            " bytes of terms each: not built)",
        params);
    run_cases(w, params, nullptr, req.cases, &first);
    return;
  }
  TermStore ts;
  std::optional<TermExecutor> eo_held, er_held;
  TermExecutor& eo = eo_held.emplace(ts, 0, budget);
  TermExecutor& er = er_held.emplace(ts, 1, budget);
  try {
    run_on(w.orig, params, c0, req.run, &eo);
    run_on(w.rew, params, c0, req.run, &er);
  } catch (const TermBudgetExceeded& e) {
    w.bit_unknown = w.real_unknown = true;
    w.budget_note = at_shape(e.what(), params);
    // The terms (up to the budget) are let go before the cases run, so that the two never
    // take memory at once.
    eo_held.reset();
    er_held.reset();
    ts = TermStore();
    run_cases(w, params, nullptr, req.cases, &first);
    return;
  }
  eo.release_element_map();  // the real forms below may use what they held
  er.release_element_map();
  ts.shrink_to_fit();
  FiniteTransposeCanon canon(ts);
  std::optional<RealForms> rf;
  std::vector<TermId> rew_roots, orig_roots;
  std::vector<std::pair<TermId, TermId>> differing;  // after the transpose rule
  for (const auto& [name, terms_o] : eo.outputs()) {
    const auto& terms_r = er.outputs().at(name);
    OutputRegion region{params, name, static_cast<int64_t>(terms_o.size()), 0, {}, {}};
    const auto id = w.orig.find_tensor(name);
    const std::vector<int64_t> shape = concrete_shape(w.orig, *id, params);
    for (size_t x = 0; x < terms_o.size(); ++x) {
      rew_roots.push_back(terms_r[x]);
      orig_roots.push_back(terms_o[x]);
      TermId a = terms_o[x], b = terms_r[x];
      if (a == b) continue;
      TermId ca = canon(a, 0), cb = canon(b, 1);
      if (ca == cb) continue;
      differing.emplace_back(ca, cb);
      const std::vector<int64_t> idx = unflatten(shape, static_cast<int64_t>(x));
      if (region.differing++ == 0) {
        region.box_first = region.box_last = idx;
      }
      for (size_t d = 0; d < idx.size(); ++d) {
        region.box_first[d] = std::min(region.box_first[d], idx[d]);
        region.box_last[d] = std::max(region.box_last[d], idx[d]);
      }
    }
    out.regions.push_back(std::move(region));
  }
  for (TermId t : rew_roots) {
    if (ts.node(t).op == TermOp::opaque) w.bit_unknown = true;
  }
  if (!canon.used().empty() && differing.empty()) {
    for (uint32_t id : canon.used()) {
      const std::string a = "values transposed on the Tensor engine are finite and not -0 (" +
                            label_of(id < w.orig_labels.size() ? w.orig_labels : w.rew_labels, id) +
                            ")";
      if (std::find(w.assumptions.begin(), w.assumptions.end(), a) == w.assumptions.end() &&
          w.assumptions.size() < 4) {
        w.assumptions.push_back(a);
      }
    }
  }
  if (!differing.empty()) w.bit_all_equal = false;
  // Real forms of the differing elements, and the numerics diff where they agree. They may take
  // what the terms leave of the budget.
  auto make_real_forms = [&] {
    rf.emplace(ts, kRealFormMonomials, budget - std::min(budget, ts.held_bytes()));
  };
  // First with the terms both programs share read as atoms: a rewrite that changes the softmax's
  // last steps then compares forms over the shared scores and exponentials, not the scores'
  // polynomials (at seqlen 1024 those were over 400 million monomials). A difference there may
  // be one the shared atoms hide (one side's atom is the other's computation), so it is
  // decided again on the whole forms below.
  const bool equal_over_shared =
      !differing.empty() &&
      equal_over_shared_atoms(ts, differing, budget - std::min(budget, ts.held_bytes()));
  try {
    if (!equal_over_shared) {
      make_real_forms();
      for (auto [a, b] : differing) {
        if (rf->form(a) != rf->form(b)) {
          if (w.real_all_equal) {
            w.out.real_detail = "real forms differ at an element: original " +
                                rf->str(rf->form(a), 160) + " vs rewrite " +
                                rf->str(rf->form(b), 160);
          }
          w.real_all_equal = false;
        }
      }
    }
  } catch (const RealFormLimit& e) {
    w.real_unknown = true;
    w.out.real_detail = at_shape(e.what(), params);
  }
  size_t walked = 0;
  for (auto [a, b] : differing) {
    if (++walked > 2000) break;  // the diff's element counts are then lower bounds
    for (const TermDifference& d : term_differences(ts, a, b)) describe_difference(w, ts, d);
  }
  // The overflow obligation: every exp the rewrite evaluates has a non-positive argument.
  std::vector<TermId> exps;
  collect_exps(ts, rew_roots, exps);
  NegatedMaxPattern by_terms(ts);
  // Then the real forms with the dot products read as atoms (a score's polynomial is not needed
  // to see `s - max(S)` with s in S, and at seqlen 1024 those polynomials outgrow the budget);
  // what that leaves, on the whole forms (once the atoms' forms are let go).
  std::vector<bool> shown(exps.size(), false);
  std::vector<std::string> not_checked(exps.size());
  {
    std::optional<RealForms> rf_dots;
    for (size_t i = 0; i < exps.size(); ++i) {
      const TermId arg = ts.kids(exps[i])[0];
      shown[i] = by_terms.nonpositive(arg);
      try {
        if (!shown[i] && !rf_dots) {
          rf_dots.emplace(ts, kRealFormMonomials, budget - std::min(budget, ts.held_bytes()));
          rf_dots->set_opaque(finite_dot_products(ts));
        }
        if (!shown[i]) shown[i] = rf_dots->exp_argument_nonpositive(arg);
      } catch (const RealFormLimit&) {  // the whole forms below say why
      }
    }
  }
  for (size_t i = 0; i < exps.size(); ++i) {
    try {
      if (!shown[i] && !rf) make_real_forms();
      if (!shown[i]) shown[i] = rf->exp_argument_nonpositive(ts.kids(exps[i])[0]);
    } catch (const RealFormLimit& ex) {
      not_checked[i] = at_shape(ex.what(), params);
    }
  }
  for (size_t i = 0; i < exps.size(); ++i) {
    const std::string at = label_of(w.rew_labels, ts.provenance(1, exps[i]));
    auto [it, fresh] = w.exps.emplace(at, ExpObligation{at, shown[i], not_checked[i]});
    if (!fresh) {
      it->second.discharged = it->second.discharged && shown[i];
      if (it->second.not_checked.empty()) it->second.not_checked = not_checked[i];
    }
  }
  Terms terms{ts, eo, er};
  run_cases(w, params, &terms, req.cases, &first);
}

// Concrete cases: counterexamples for the bit layer (located on the terms when there are any),
// the numeric layer against the bounds.
void run_cases(ShapeWork& w, const ParamValues& params, const Terms* terms, int cases,
               const CaseRuns* first) {
  const EquivRequest& req = w.req;
  OptionOutcome& out = w.out;
  for (int n = 0; n < cases; ++n) {
    const InputCase c = make_case(req.original, w.options, w.orig, params, n, req.seed);
    RunResult a = n == 0 && first ? first->original : run_on(w.orig, params, c, req.run);
    RunResult b = n == 0 && first ? first->rewrite : run_on(w.rew, params, c, req.run);
    if (a.error) continue;  // the original refuses these values: outside what it promises
    if (undefined(b, "the rewrite", out,
                  " (inputs " + c.label + ", seed " + std::to_string(c.seed) + ")")) {
      return;
    }
    if (b.error) {
      out.run_error =
          b.error->message + " (inputs " + c.label + ", seed " + std::to_string(c.seed) + ")";
      return;
    }
    out.numeric_cases++;
    // Bits: the first differing element.
    if (!out.bit_counterexample) {
      for (const auto& [name, ha] : a.outputs) {
        const HostTensor& hb = b.outputs.at(name);
        int64_t found = -1;
        for (int64_t i = 0; i < ha.num_elements() && found < 0; ++i) {
          if (!same_value_bits(ha.dtype, ha.bits(i), hb.bits(i))) found = i;
        }
        if (found < 0) continue;
        Counterexample ce;
        ce.params = params;
        ce.inputs = c.label;
        ce.seed = c.seed;
        ce.output = name;
        ce.index = unflatten(ha.shape, found);
        ce.original_bits = ha.bits(found);
        ce.rewrite_bits = hb.bits(found);
        ce.original_value = decode_to_float(ha.dtype, ce.original_bits);
        ce.rewrite_value = decode_to_float(hb.dtype, ce.rewrite_bits);
        if (terms) locate(w, *terms, c, name, found, ce);
        out.bit_counterexample = ce;
        break;
      }
    }
    // Numbers: within the two contracts' bounds (needs a layout, spec and contracts).
    if (!req.original.variant || !c.spec) continue;
    const kernels::Variant& vo = *req.original.variant;
    const kernels::Variant& vr = req.rewrite.variant ? *req.rewrite.variant : vo;
    const kernels::Options ro_opts = req.rewrite.options_for(w.options);
    const oracle::PrecisionContract co = vo.contract(w.options);
    oracle::PrecisionContract cr = vr.contract(ro_opts);
    cr.name = co.name;  // one contract under two names is one reference (a link that keeps it)
    const auto bo = kernels::oracle_reference(co, *c.spec, *c.values, 0);
    const auto br = cr == co ? bo : kernels::oracle_reference(cr, *c.spec, *c.values, 0);
    const std::vector<double> ya =
        kernels::unpack_output(vo.layout_for(w.options), *c.spec, a.outputs);
    const std::vector<double> yb = kernels::unpack_output(
        req.rewrite.registered() ? vr.layout_for(ro_opts) : vo.layout_for(w.options), *c.spec,
        b.outputs);
    for (size_t x = 0; x < ya.size(); ++x) {
      const double bound = bo.bound.bound[x] + br.bound.bound[x];
      const bool both_nan = std::isnan(ya[x]) && std::isnan(yb[x]);
      double ratio = 0;
      if (both_nan || ya[x] == yb[x]) {
        ratio = 0;
      } else if (!std::isfinite(ya[x]) || !std::isfinite(yb[x])) {
        ratio = INFINITY;
      } else {
        ratio = std::fabs(ya[x] - yb[x]) / bound;
        if (std::isnan(ratio)) ratio = INFINITY;
      }
      out.max_normalized = std::max(out.max_normalized, ratio);
      if (ratio > 1 && !out.numeric_counterexample) {
        Counterexample ce;
        ce.params = params;
        ce.inputs = c.label;
        ce.seed = c.seed;
        ce.output = "out";
        ce.index = unflatten({c.spec->batch, c.spec->heads, c.spec->seqlen_q, c.spec->d_head},
                             static_cast<int64_t>(x));
        ce.original_value = ya[x];
        ce.rewrite_value = yb[x];
        ce.bound = bound;
        out.numeric_counterexample = ce;
      }
    }
  }
}

}  // namespace

OptionOutcome check_options(const EquivRequest& req, const kernels::Options& options) {
  const auto t0 = Clock::now();
  OptionOutcome out;
  out.options = options;
  const Program orig = req.original.build(options);
  // A rewrite that does not offer one of the original's option values does not cover its domain.
  Program rew;
  try {
    rew = req.rewrite.build(options);
  } catch (const std::invalid_argument& e) {
    out.interface_error = e.what();
    return out;
  }
  const std::vector<std::string> lo = instruction_labels(orig), lr = instruction_labels(rew);
  const std::string gap = domain_gap(orig, rew);
  if (!gap.empty()) {
    out.interface_error = gap;
    return out;
  }
  // Outputs that depend on random draws (nl.rand, nisa.dropout) are the model's own generator's,
  // not the hardware's: no level can be proved or refuted on them.
  for (const Program* q : std::initializer_list<const Program*>{&orig, &rew}) {
    if (const std::optional<std::string> why = random_values_reason(*q)) {
      const std::string d = std::string(q == &orig ? "the original: " : "the rewrite: ") + *why;
      out.bit_detail = out.real_detail = out.numeric_detail = d;
      return out;  // every level stays unknown
    }
  }
  const Layer0Comparison layer0 = compare_layer0(orig, rew);
  out.all_shapes = layer0.domain.value_or("");
  out.layer0_difference = layer0.difference;
  out.shapes = checked_shapes(orig, req.params);
  const auto domain_points = whole_domain(orig, kWholeDomainPoints);
  out.whole_domain = domain_points && !domain_points->empty() && *domain_points == out.shapes;
  ShapeWork w{req, options, orig, rew, lo, lr, out};
  for (const ParamValues& params : out.shapes) {
    check_shape(w, params);
    if (!out.interface_error.empty() || !out.run_error.empty() || !out.undefined_result.empty()) {
      return out;
    }
  }
  out.tested_shape = tested_shape(orig, req.params);
  if (out.tested_shape &&
      std::find(out.shapes.begin(), out.shapes.end(), *out.tested_shape) == out.shapes.end()) {
    // The larger shape mainly runs the dynamic checks over more loop iterations: two cases.
    run_cases(w, *out.tested_shape, nullptr, std::min(req.cases, 2));
    if (!out.run_error.empty() || !out.undefined_result.empty()) return out;
  } else {
    out.tested_shape.reset();
  }
  // Bit-exact.
  std::string scope = "bounded: " + std::to_string(out.shapes.size()) + " shape(s)";
  if (out.whole_domain) {
    scope = "every shape of the domain (" + domain_words(orig) + ": all " +
            std::to_string(out.shapes.size()) + " point(s) checked)";
  }
  if (out.bit_counterexample) {
    out.bit_exact = Verdict::refuted;
    out.bit_detail = "counterexample replayed on the interpreter";
  } else if (!out.all_shapes.empty()) {
    out.bit_exact = Verdict::proved;
    out.bit_detail = "every shape of the domain (" + out.all_shapes +
                     "), every input value: the programs are one up to " +
                     std::string(kLayer0Differences);
  } else if (w.bit_all_equal && !w.bit_unknown) {
    out.bit_exact = Verdict::proved;
    out.bit_detail = scope + ", every input value";
    out.assumptions = w.assumptions;
  } else {
    out.bit_exact = Verdict::unknown;
    out.bit_detail = !w.budget_note.empty() ? w.budget_note
                     : w.bit_unknown        ? "a construct outside the term language (opaque term)"
                                     : "terms differ but no input among the cases tried shows it";
  }
  // Real.
  if (out.bit_exact == Verdict::proved) {
    out.real = Verdict::proved;
    out.real_detail = "follows from bit-exact";
  } else if (w.real_unknown) {
    out.real = Verdict::unknown;
    if (!w.budget_note.empty()) out.real_detail = w.budget_note;
  } else if (w.real_all_equal) {
    out.real = Verdict::proved;
    out.real_detail = scope + ", rounding erased, exp homomorphic, max uninterpreted";
  } else if (out.numeric_counterexample) {
    out.real = Verdict::refuted;
  } else {
    out.real = Verdict::unknown;
  }
  for (auto& [k, d] : w.diffs) out.numerics_diff.push_back(d);
  std::sort(out.numerics_diff.begin(), out.numerics_diff.end(),
            [](const NumericsDifference& a, const NumericsDifference& b) {
              return a.elements > b.elements;
            });
  if (out.numerics_diff.size() > 12) out.numerics_diff.resize(12);
  // not shown where the terms were not built
  out.overflow_ok = w.budget_note.empty() && out.all_shapes.empty();
  for (auto& [k, e] : w.exps) {
    out.overflow.push_back(e);
    out.overflow_ok = out.overflow_ok && e.discharged;
  }
  // Numeric.
  if (!req.original.variant) {
    out.numeric = Verdict::unknown;
    out.numeric_detail = "no precision contract: the original is not registered (use --like)";
  } else if (out.numeric_counterexample) {
    out.numeric = Verdict::refuted;
  } else if (out.numeric_cases > 0) {
    out.numeric = Verdict::proved;
    out.numeric_detail = "every tested case within the two contracts' bounds (tested, not proved)";
  }
  // The contract diff.
  if (req.original.variant && req.rewrite.registered()) {
    const nlohmann::json a = req.original.variant->contract(options).to_json();
    const nlohmann::json b =
        req.rewrite.variant->contract(req.rewrite.options_for(options)).to_json();
    for (auto it = a.begin(); it != a.end(); ++it) {
      if (it.key() == "name") continue;
      if (!b.contains(it.key()) || b[it.key()] != it.value()) {
        out.contract_diff.push_back({{"field", it.key()},
                                     {"original", it.value()},
                                     {"rewrite", b.value(it.key(), nlohmann::json())}});
      }
    }
  }
  out.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return out;
}

EquivResult run_equiv(const EquivRequest& req) {
  EquivResult r;
  r.original = req.original.label;
  r.rewrite = req.rewrite.label;
  if (req.require) {
    r.required = *req.require;
  } else if (req.rewrite.registered() && req.original.registered()) {
    r.required =
        req.rewrite.variant->same_numerics_as_predecessor ? Level::bit_exact : Level::contract;
  } else {
    r.required = Level::bit_exact;
  }
  const kernels::Variant* ov = req.original.registered() ? req.original.variant : nullptr;
  const std::vector<kernels::Options> combos = option_combinations(ov, req.options);
  // Option sets are independent: one worker per core (each has its own term store).
  r.outcomes.resize(combos.size());
  std::vector<std::exception_ptr> errors(combos.size());
  std::atomic<size_t> next{0}, finished{0};
  if (req.on_option_set) req.on_option_set(0, combos.size(), "");
  auto work = [&] {
    for (size_t i; (i = next++) < combos.size();) {
      try {
        r.outcomes[i] = check_options(req, combos[i]);
      } catch (...) {
        errors[i] = std::current_exception();
      }
      if (req.on_option_set) {
        std::string label;
        for (const auto& [k, v] : combos[i]) label += (label.empty() ? "" : " ") + k + "=" + v;
        req.on_option_set(++finished, combos.size(), label);
      }
    }
  };
  const size_t n =
      std::min<size_t>(combos.size(), std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> workers;
  for (size_t t = 1; t < n; ++t) workers.emplace_back(work);
  work();
  for (std::thread& t : workers) t.join();
  for (const std::exception_ptr& e : errors) {
    if (e) std::rethrow_exception(e);
  }
  kernels::note_exercised(r.original);
  kernels::note_exercised(r.rewrite);
  r.scope =
      "bounded: the checked shapes listed per option set, every input value (bit-exact, real); "
      "tested cases only (numeric); statements about the IR programs (scope ir_model)";
  const bool layer0 = std::all_of(r.outcomes.begin(), r.outcomes.end(),
                                  [](const auto& o) { return !o.all_shapes.empty(); });
  const bool whole = std::all_of(r.outcomes.begin(), r.outcomes.end(),
                                 [](const auto& o) { return o.whole_domain; });
  if (whole && !layer0 && !r.outcomes.empty()) {
    r.scope =
        "every shape of the domain, every input value (bit-exact, real: the domain's every point "
        "checked); tested cases only (numeric); statements about the IR programs (scope "
        "ir_model)";
  }
  if (layer0 && !r.outcomes.empty()) {
    r.scope =
        "every shape of the domain, every input value (bit-exact, real: the programs are "
        "one up to " +
        std::string(kLayer0Differences) +
        "); tested cases only (numeric); statements about the IR programs (scope ir_model)";
  }
  bool all = true, refuted = false;
  for (const OptionOutcome& o : r.outcomes) {
    const std::string status = o.status(r.required);
    all = all && status == "holds";
    refuted = refuted || status == "refuted";
  }
  r.verdict = all ? "holds" : refuted ? "refuted" : "unknown";
  r.exit_code = all ? 0 : 1;
  return r;
}

}  // namespace ncv::equiv

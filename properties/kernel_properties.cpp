#include "properties/kernel_properties.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>
#include <stdexcept>

#include "check/check.h"
#include "kernels/registry.h"
#include "model/hw/hw_config.h"
#include "model/interp/interpreter.h"
#include "oracle/bias_values.h"
#include "properties/shrinking_choice.h"

namespace ncv::props {

namespace {

// Problems up to this many multiply-adds are compared with the exact (multiprecision) oracle,
// larger ones with the fast oracle plus its certified bound: the exact oracle costs seconds at
// the budget's largest shapes, and a property makes hundreds of comparisons.
constexpr double kExactOracleMaxMacs = 2e5;

// What one run of a kernel on one input set gave.
struct Outcome {
  std::optional<DynamicError> error;
  std::vector<double> out;  // [B][H][Sq][d], unpacked by the layout
  std::map<std::string, HostTensor> raw;
};

// `schedule_seed`: the SPMD cores' order within each lockstep step (RunOptions::schedule_seed).
Outcome run_case(const KernelUnderTest& k, const KernelCase& c, const oracle::AttentionSpec& spec,
                 const oracle::AttentionInputs& in, uint64_t schedule_seed = 0) {
  const Program& p = k.program(c.options);
  RunOptions ro;
  ro.schedule_seed = schedule_seed;
  ro.hw = find_hw_config(kernels::default_generation(*k.variant));  // the kernel's own
  const kernels::Layout layout = k.variant->layout_for(c.options);
  RunResult r = run_program(p, c.params, kernels::pack_inputs(layout, p, c.params, spec, in), ro);
  Outcome o;
  if (r.error) {
    o.error = *r.error;
    return o;
  }
  o.out = kernels::unpack_output(layout, spec, r.outputs);
  o.raw = std::move(r.outputs);
  return o;
}

thread_local std::optional<KernelCase> t_last_failure;

[[noreturn]] void fail(const KernelUnderTest& k, const KernelCase& c, const std::string& what,
                       const kernels::CaseResult* judged = nullptr) {
  t_last_failure = c;
  RC_LOG() << "kernel: " << k.name << "\ncase: " << c.describe()
           << "\nreplay: " << check_command(k, c, judged) << "\n";
  RC_FAIL(k.name + ": " + what);
}

// The run, or a failure naming the model's dynamic error.
Outcome run_or_fail(const KernelUnderTest& k, const KernelCase& c,
                    const oracle::AttentionSpec& spec, const oracle::AttentionInputs& in,
                    const char* which, uint64_t schedule_seed = 0) {
  Outcome o = run_case(k, c, spec, in, schedule_seed);
  // A result the documentation leaves undefined is neither right nor wrong (check's unknown):
  // the case is discarded, and a property that discards too often gives up, which fails it.
  if (o.error && o.error->kind == CheckKind::undefined_result) {
    RC_DISCARD(k.name + ": " + which + " run reached an undefined result: " + o.error->message);
  }
  if (o.error) fail(k, c, std::string(which) + " run: " + o.error->message);
  return o;
}

// The suite packs a case from its spec alone (run_case): a variant whose draw_case returns
// run-time draws beyond the spec (kernels::CaseDraws: only a `check --layout` variant, never a
// registered kernel) would be packed without them, so it is refused rather than run wrong.
void require_no_draws(const kernels::Variant& v, const kernels::CaseDraws& draws) {
  if (draws.has_value()) {
    throw std::logic_error(v.name +
                           ": draw_case returns run-time draws beyond the spec, which the property "
                           "suite does not pack");
  }
}

oracle::AttentionSpec spec_of(const KernelUnderTest& k, const KernelCase& c) {
  oracle::AttentionSpec s = k.variant->spec(c.options, c.params);
  // Per-case problem values (a decode kernel's positions and sinks) from the value seed, as
  // `ncverify check --values` replays them.
  if (k.variant->draw_case)
    require_no_draws(*k.variant, k.variant->draw_case(s, c.params, c.values.seed));
  // A kernel that takes a logits bias gets one drawn from the case's value seed (as `ncverify
  // check --values` replays it), not the spec's fixed seed-0 bias.
  if (!s.bias.empty()) s.bias = oracle::generate_bias(s, c.values.seed);
  s.validate();
  return s;
}

std::string at(const oracle::AttentionSpec& s, size_t x) {
  const int64_t d = s.d_head, row = static_cast<int64_t>(x) / d;
  const int64_t i = row % s.seqlen_q, h = row / s.seqlen_q % s.heads,
                b = row / s.seqlen_q / s.heads;
  return "out[b=" + std::to_string(b) + ", h=" + std::to_string(h) + ", i=" + std::to_string(i) +
         ", c=" + std::to_string(static_cast<int64_t>(x) % d) + "]";
}

// Exact text of a double (hex float), for messages about bit-level differences.
std::string hex(double x) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%a", x);
  return buf;
}

bool same_bits(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) || std::memcmp(&a, &b, sizeof a) == 0;
}

// A random permutation of [0, n) from a seed (Fisher-Yates over splitmix64).
std::vector<int64_t> permutation(int64_t n, uint64_t seed) {
  std::vector<int64_t> p(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) p[static_cast<size_t>(i)] = i;
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  for (int64_t i = n - 1; i > 0; --i) {
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    std::swap(p[static_cast<size_t>(i)], p[static_cast<size_t>(z % static_cast<uint64_t>(i + 1))]);
  }
  return p;
}

// Key row j of every (batch, kv head) moved to position perm^-1: new row j = old row perm[j].
std::vector<double> permute_keys(const oracle::AttentionSpec& s, const std::vector<double>& x,
                                 const std::vector<int64_t>& perm) {
  std::vector<double> y(x.size());
  for (int64_t b = 0; b < s.batch; ++b) {
    for (int64_t g = 0; g < s.kv_heads; ++g) {
      for (int64_t j = 0; j < s.seqlen_kv; ++j) {
        for (int64_t c = 0; c < s.d_head; ++c) {
          y[static_cast<size_t>(s.kv_index(b, g, j, c))] =
              x[static_cast<size_t>(s.kv_index(b, g, perm[static_cast<size_t>(j)], c))];
        }
      }
    }
  }
  return y;
}

// Sum, min and max of V column c over the visible keys of every output row, from prefix
// statistics (masks here make the visible keys a range; a prefix [0, e) is O(1), any other range
// is summed directly). f(x, sum, min, max, count) per output element x.
template <class F>
void for_each_visible_column(const oracle::AttentionSpec& s, const std::vector<double>& v, F&& f) {
  const int64_t S = s.seqlen_kv, d = s.d_head;
  std::vector<double> psum(static_cast<size_t>(S)), pmin(psum.size()), pmax(psum.size());
  std::vector<int64_t> keys;
  for (int64_t b = 0; b < s.batch; ++b) {
    for (int64_t h = 0; h < s.heads; ++h) {
      const int64_t g = s.kv_head_of(h);
      for (int64_t c = 0; c < d; ++c) {
        auto val = [&](int64_t j) { return v[static_cast<size_t>(s.kv_index(b, g, j, c))]; };
        for (int64_t j = 0; j < S; ++j) {
          const double x = val(j);
          const size_t u = static_cast<size_t>(j);
          psum[u] = j ? psum[u - 1] + x : x;
          pmin[u] = j ? std::min(pmin[u - 1], x) : x;
          pmax[u] = j ? std::max(pmax[u - 1], x) : x;
        }
        for (int64_t i = 0; i < s.seqlen_q; ++i) {
          const size_t x = static_cast<size_t>(((b * s.heads + h) * s.seqlen_q + i) * d + c);
          const auto range = s.visible_range(b, i);
          if (range && range->first == 0 && range->second > 0) {
            const size_t e = static_cast<size_t>(range->second - 1);
            f(x, psum[e], pmin[e], pmax[e], range->second);
            continue;
          }
          s.visible_keys(b, i, keys);
          double sum = 0, lo = 0, hi = 0;  // a fully masked row's documented result is 0
          for (size_t n = 0; n < keys.size(); ++n) {
            const double y = val(keys[n]);
            sum += y;
            lo = n ? std::min(lo, y) : y;
            hi = n ? std::max(hi, y) : y;
          }
          f(x, sum, lo, hi, static_cast<int64_t>(keys.size()));
        }
      }
    }
  }
}

// The causal option's name: NKI samples' use_causal_mask, nki-library's causal_mask.
constexpr const char* kCausalOptions[] = {"use_causal_mask", "causal_mask"};

bool causal_fixed(const KernelUnderTest& k) {
  for (const char* name : kCausalOptions) {
    auto it = k.fixed.find(name);
    if (it != k.fixed.end() && it->second == "true") return true;
  }
  return false;
}

}  // namespace

void prop_matches_oracle(const KernelUnderTest& k, const Budget& b) {
  const KernelCase c = *gen_case(k, b);
  const oracle::AttentionSpec spec = spec_of(k, c);
  const oracle::AttentionInputs in = make_values(spec, c.values);
  kernels::CheckOptions opts;
  opts.exact_oracle_max_macs = kExactOracleMaxMacs;
  opts.run.hw = find_hw_config(kernels::default_generation(*k.variant));  // the kernel's own
  const kernels::CaseResult r =
      kernels::check_inputs(*k.variant, k.program(c.options), c.options, c.params, spec, in, {},
                            opts);  // (spec_of: no draws beyond the spec)
  // An undefined result is unknown, not a failure (run_or_fail).
  if (r.unknown) RC_DISCARD(k.name + ": " + *r.unknown);
  if (r.run_error) fail(k, c, "model error: " + r.run_error->message, &r);
  // check_inputs also compares the lse when the kernel stores one (flash_fwd training mode).
  if (!r.pass) {
    const bool lse_only = r.comparison.pass && r.lse && !r.lse->pass;
    fail(k, c,
         "outside the contract's bound: " +
             (lse_only ? "lse " + r.lse->one_line() : r.comparison.one_line()),
         &r);
  }
}

void prop_v_scaling_is_exact(const KernelUnderTest& k, const Budget& b) {
  // Exact only while no intermediate is subnormal: no subnormal inputs, and logits small enough
  // that no probability underflows into the subnormals (so no bit patterns, no large logits,
  // and uniform/normal magnitudes at most 1).
  KernelCase c = *gen_case(k, b,
                           {ValueKind::uniform, ValueKind::normal, ValueKind::constant_rows,
                            ValueKind::spike, ValueKind::zero_q});
  c.values.scale_log2 = std::min(c.values.scale_log2, 0);
  const int e = *shrinking_choice<int>({1, -1, 2, -2, 3, -3});
  const oracle::AttentionSpec spec = spec_of(k, c);
  const oracle::AttentionInputs in = make_values(spec, c.values);
  oracle::AttentionInputs scaled = in;
  for (double& v : scaled.v) v = std::ldexp(v, e);
  const Outcome a = run_or_fail(k, c, spec, in, "original");
  const Outcome s = run_or_fail(k, c, spec, scaled, "V-scaled");
  for (size_t x = 0; x < a.out.size(); ++x) {
    const double want = std::ldexp(a.out[x], e);
    if (!same_bits(s.out[x], want)) {
      fail(k, c,
           "V * 2^" + std::to_string(e) + " gave " + hex(s.out[x]) + " at " + at(spec, x) +
               ", not " + hex(want) + " (= 2^" + std::to_string(e) + " * " + hex(a.out[x]) + ")");
    }
  }
}

void prop_kv_permutation_invariant(const KernelUnderTest& k, const Budget& b) {
  if (causal_fixed(k)) RC_SUCCEED("causal kernel: key order matters");
  // Unmasked cases where the kernel has a mask option; kernels without one have no mask.
  kernels::Options unmasked;
  for (const char* name : kCausalOptions) {
    if (k.variant->offers(name, "false")) unmasked[name] = "false";
  }
  const KernelCase c = *gen_case(k, b, {}, unmasked);
  const oracle::AttentionSpec spec = spec_of(k, c);
  if (spec.mask.kind != oracle::MaskKind::none) RC_SUCCEED("masked: key order matters");
  const uint64_t seed = *rc::gen::inRange<uint64_t>(0, 1u << 20);
  const oracle::AttentionInputs in = make_values(spec, c.values);
  const std::vector<int64_t> perm = permutation(spec.seqlen_kv, seed);
  oracle::AttentionInputs moved = in;
  moved.k = permute_keys(spec, in.k, perm);
  moved.v = permute_keys(spec, in.v, perm);
  // The bias belongs to the keys: its columns move with them.
  oracle::AttentionSpec moved_spec = spec;
  for (int64_t i = 0; i < spec.seqlen_q && !spec.bias.empty(); ++i) {
    for (int64_t j = 0; j < spec.seqlen_kv; ++j) {
      moved_spec.bias[static_cast<size_t>(i * spec.seqlen_kv + j)] =
          spec.bias[static_cast<size_t>(i * spec.seqlen_kv + perm[static_cast<size_t>(j)])];
    }
  }
  const Outcome a = run_or_fail(k, c, spec, in, "original");
  const Outcome m = run_or_fail(k, c, moved_spec, moved, "permuted");
  const oracle::PrecisionContract ct = k.variant->contract(c.options);
  const kernels::OracleReference ra = kernels::oracle_reference(ct, spec, in, kExactOracleMaxMacs);
  const kernels::OracleReference rm =
      kernels::oracle_reference(ct, moved_spec, moved, kExactOracleMaxMacs);
  for (size_t x = 0; x < a.out.size(); ++x) {
    const double tol = ra.bound.bound[x] + rm.bound.bound[x];
    if (!(std::fabs(a.out[x] - m.out[x]) <= tol)) {
      fail(k, c,
           "permuting keys and values (seed " + std::to_string(seed) + ") moved " + at(spec, x) +
               " from " + std::to_string(a.out[x]) + " to " + std::to_string(m.out[x]) +
               ", more than the two bounds " + std::to_string(tol));
    }
  }
}

void prop_inside_convex_hull(const KernelUnderTest& k, const Budget& b) {
  const KernelCase c = *gen_case(k, b);
  const oracle::AttentionSpec spec = spec_of(k, c);
  const oracle::AttentionInputs in = make_values(spec, c.values);
  const Outcome o = run_or_fail(k, c, spec, in, "the");
  const kernels::OracleReference ref =
      kernels::oracle_reference(k.variant->contract(c.options), spec, in, kExactOracleMaxMacs);
  for_each_visible_column(spec, in.v, [&](size_t x, double, double lo, double hi, int64_t) {
    // A sink's share of the weight goes to no value: the hull then includes 0.
    if (!spec.sink.empty()) {
      lo = std::min(lo, 0.0);
      hi = std::max(hi, 0.0);
    }
    const double tol = ref.bound.bound[x];
    if (!(o.out[x] >= lo - tol && o.out[x] <= hi + tol)) {
      fail(k, c,
           at(spec, x) + " = " + std::to_string(o.out[x]) + " is outside the visible V column's [" +
               std::to_string(lo) + ", " + std::to_string(hi) + "] by more than the bound " +
               std::to_string(tol));
    }
  });
}

void prop_zero_q_gives_mean(const KernelUnderTest& k, const Budget& b) {
  const KernelCase c = *gen_case(k, b, {ValueKind::zero_q});
  oracle::AttentionSpec spec = spec_of(k, c);
  // Scores = the bias when q = 0: only a zero bias leaves every visible key the same weight.
  std::fill(spec.bias.begin(), spec.bias.end(), 0.0);
  const oracle::AttentionInputs in = make_values(spec, c.values);
  const Outcome o = run_or_fail(k, c, spec, in, "the");
  const kernels::OracleReference ref =
      kernels::oracle_reference(k.variant->contract(c.options), spec, in, kExactOracleMaxMacs);
  for_each_visible_column(spec, in.v, [&](size_t x, double sum, double, double, int64_t n) {
    // Every visible score is 0; a sink s_h adds exp(s_h) to the denominator only.
    const int64_t h = static_cast<int64_t>(x) / spec.d_head / spec.seqlen_q % spec.heads;
    const double sink_weight = spec.sink.empty() ? 0.0 : std::exp(spec.sink[size_t(h)]);
    const double denom = static_cast<double>(n) + sink_weight;
    const double mean = denom == 0 ? 0.0 : sum / denom;
    const double tol = ref.bound.bound[x];
    if (!(std::fabs(o.out[x] - mean) <= tol)) {
      fail(k, c,
           "with q = 0, " + at(spec, x) + " = " + std::to_string(o.out[x]) +
               " but the mean of its " + std::to_string(n) + " visible V rows" +
               (sink_weight > 0 ? " (with the sink's weight)" : "") + " is " +
               std::to_string(mean) + " (bound " + std::to_string(tol) + ")");
    }
  });
}

void prop_deterministic(const KernelUnderTest& k, const Budget& b) {
  Budget small = b;
  small.max_seqlen = std::min<int64_t>(b.max_seqlen, 256);
  const KernelCase c = *gen_case(k, small);
  const oracle::AttentionSpec spec = spec_of(k, c);
  const oracle::AttentionInputs in = make_values(spec, c.values);
  // Run n under schedule seed n (model/interp/determinism.h): the same schedule again would
  // be identical by construction; another order of the SPMD cores within a step is what
  // hardware may do.
  const Outcome first = run_or_fail(k, c, spec, in, "first");
  for (int n = 1; n < 10; ++n) {
    const Outcome again = run_or_fail(k, c, spec, in, "repeated", static_cast<uint64_t>(n));
    for (const auto& [name, t] : first.raw) {
      if (again.raw.at(name).bytes != t.bytes) {
        fail(k, c,
             "run " + std::to_string(n + 1) + " of 10 (schedule seed " + std::to_string(n) +
                 ") gave other bits in output '" + name + "' than run 1");
      }
    }
  }
}

void prop_matches_predecessor(const KernelUnderTest& k, const Budget& b) {
  // A catalogue entry is a rewrite of its base kernel that does not claim bit-identity.
  const kernels::Variant* pred = k.is_bug ? k.variant : kernels::find_variant(k.variant->rewrites);
  if (!pred) RC_SUCCEED("an original kernel: nothing to compare with");
  const bool bitwise = !k.is_bug && k.variant->same_numerics_as_predecessor;
  const KernelCase c = *gen_case(k, b);
  kernels::Options po;
  for (const kernels::OptionSpec& o : pred->options) {
    if (c.options.count(o.name)) po[o.name] = c.options.at(o.name);
  }
  po = pred->resolve(po);
  const oracle::AttentionSpec spec = spec_of(k, c);
  const oracle::AttentionInputs in = make_values(spec, c.values);
  const Outcome mine = run_or_fail(k, c, spec, in, "the rewrite's");
  KernelUnderTest pk = registered_kernel(pred->name);
  KernelCase pc = c;
  pc.options = po;
  oracle::AttentionSpec pspec = pred->spec(po, c.params);
  if (pred->draw_case) {  // the same case's positions
    require_no_draws(*pred, pred->draw_case(pspec, c.params, c.values.seed));
  }
  if (!pspec.bias.empty()) pspec.bias = spec.bias;  // the same case's bias
  const Outcome theirs = run_or_fail(pk, pc, pspec, in, "the predecessor's");
  const kernels::OracleReference rm =
      kernels::oracle_reference(k.variant->contract(c.options), spec, in, kExactOracleMaxMacs);
  const kernels::OracleReference rp =
      kernels::oracle_reference(pred->contract(po), spec, in, kExactOracleMaxMacs);
  for (size_t x = 0; x < mine.out.size(); ++x) {
    const bool ok =
        bitwise ? same_bits(mine.out[x], theirs.out[x])
                : std::fabs(mine.out[x] - theirs.out[x]) <= rm.bound.bound[x] + rp.bound.bound[x];
    if (!ok) {
      fail(k, c,
           std::string(bitwise ? "claims the numerics of '" : "differs from '") + pred->name +
               "' at " + at(spec, x) + ": " + hex(mine.out[x]) + " vs " + hex(theirs.out[x]) +
               (bitwise ? " (not bit-identical)" : " (more than the two contracts' bounds)"));
    }
  }
}

const KernelCase* last_failing_case() {
  return t_last_failure ? &*t_last_failure : nullptr;
}

const std::vector<KernelProperty>& kernel_properties() {
  static const std::vector<KernelProperty> all = {
      {"matches_oracle", prop_matches_oracle},
      {"v_scaling_is_exact", prop_v_scaling_is_exact},
      {"kv_permutation_invariant", prop_kv_permutation_invariant},
      {"inside_convex_hull", prop_inside_convex_hull},
      {"zero_q_gives_mean", prop_zero_q_gives_mean},
      {"deterministic", prop_deterministic},
      {"matches_predecessor", prop_matches_predecessor},
  };
  return all;
}

}  // namespace ncv::props

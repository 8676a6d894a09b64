#include "model/interp/determinism.h"

#include <cstdio>

#include "model/numerics/dtype.h"

namespace ncv {
inline namespace interp {

namespace {

std::string element_text(const HostTensor& t, int64_t i) {
  char buf[64];
  const uint32_t bits = t.bits(i);
  if (is_float(t.dtype)) {
    std::snprintf(buf, sizeof buf, "%.9g (bits 0x%0*x)", static_cast<double>(t.get(i)),
                  static_cast<int>(2 * dtype_size(t.dtype)), bits);
  } else {
    std::snprintf(buf, sizeof buf, "%lld (bits 0x%0*x)",
                  static_cast<long long>(static_cast<int32_t>(bits)),
                  static_cast<int>(2 * dtype_size(t.dtype)), bits);
  }
  return buf;
}

std::string coordinates(const std::vector<int64_t>& shape, int64_t flat) {
  std::vector<int64_t> idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = flat % shape[d];
    flat /= shape[d];
  }
  std::string s = "[";
  for (size_t d = 0; d < idx.size(); ++d) s += (d ? ", " : "") + std::to_string(idx[d]);
  return s + "]";
}

std::string run_name(int run) {
  return "run " + std::to_string(run) + " (schedule seed " + std::to_string(run) + ")";
}

}  // namespace

std::optional<ScheduleMismatch> compare_schedule_runs(const RunResult& base, const RunResult& other,
                                                      int run) {
  ScheduleMismatch m;
  m.run = run;
  if (base.error || other.error) {
    const std::string a = base.error ? base.error->message : "no dynamic-check failure";
    const std::string b = other.error ? other.error->message : "no dynamic-check failure";
    if (a == b) return std::nullopt;  // the same failure under both schedules
    m.message = run_name(run) + " ended differently from run 0: run 0: " + a + "; " +
                run_name(run) + ": " + b;
    return m;
  }
  for (const auto& [name, t0] : base.outputs) {
    const auto it = other.outputs.find(name);
    if (it == other.outputs.end() || it->second.shape != t0.shape || it->second.dtype != t0.dtype) {
      m.output = name;
      m.message = run_name(run) + ": output '" + name + "' is missing or has another shape";
      return m;
    }
    const HostTensor& t = it->second;
    if (t.bytes == t0.bytes) continue;
    const int64_t n = t0.num_elements();
    for (int64_t i = 0; i < n; ++i) {
      if (t.bits(i) == t0.bits(i)) continue;
      if (m.element < 0) {
        m.element = i;
        m.index = coordinates(t0.shape, i);
        m.value0 = element_text(t0, i);
        m.value = element_text(t, i);
      }
      ++m.differing;
    }
    m.output = name;
    m.message = run_name(run) + " differs from run 0 in output '" + name +
                "': " + std::to_string(m.differing) + " of " + std::to_string(n) +
                " element(s), first at " + m.index + " (flat " + std::to_string(m.element) +
                "): run 0 " + m.value0 + ", run " + std::to_string(run) + " " + m.value;
    return m;
  }
  return std::nullopt;
}

DeterminismResult run_schedules(const Program& p, const ParamValues& params,
                                const std::map<std::string, HostTensor>& inputs,
                                const RunOptions& options, int runs) {
  DeterminismResult r;
  RunOptions o = options;
  o.schedule_seed = 0;
  r.first = run_program(p, params, inputs, o);
  r.runs = 1;
  for (int k = 1; k < runs; ++k) {
    o.schedule_seed = static_cast<uint64_t>(k);
    const RunResult other = run_program(p, params, inputs, o);
    r.runs = k + 1;
    r.mismatch = compare_schedule_runs(r.first, other, k);
    if (r.mismatch) break;
  }
  return r;
}

}  // namespace interp
}  // namespace ncv

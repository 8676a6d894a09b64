#include "tools/frontier_params.h"

#include <algorithm>

#include "tools/cli_common.h"

namespace ncv::cli {

namespace {

std::string domain_text(const Param& prm) {
  return "[" + std::to_string(prm.lo) + ", " + std::to_string(prm.hi) + "]" +
         (prm.multiple_of > 1 ? " multiple_of " + std::to_string(prm.multiple_of) : "");
}

// How a fixed value was chosen, as the user would write it.
std::string chosen(const Param& prm, const ParamValues& given, int64_t v) {
  const std::string a = "--param " + prm.name + "=" + std::to_string(v);
  return given.count(prm.name) ? a : a + " (not given: its least declared value)";
}

// The fixed params an Expr uses, as chosen(); empty when it uses the searched param or the
// program id (the search itself decides those values).
std::string fixed_in(const Program& p, const Expr& e, const ParamValues& fixed,
                     const ParamValues& given) {
  std::string out;
  for (SymbolId s : e.symbols()) {
    const Param* prm = p.find_param(symbol_name(s));
    const auto it = fixed.find(symbol_name(s));
    if (prm == nullptr || it == fixed.end()) return {};
    out += (out.empty() ? "" : " and ") + chosen(*prm, given, it->second);
  }
  return out;
}

// What a dimension that must be at least 1 leaves of the params' domains.
std::string allowed(const Program& p, const Expr& dim) {
  if (dim.kind() == ExprKind::Var) {
    const Param& prm = *p.find_param(symbol_name(dim.symbol()));
    const int64_t lo = std::max<int64_t>(prm.lo, 1);
    if (lo > prm.hi) {
      return "no value of " + prm.name + " in its declared domain " + domain_text(prm) +
             " is a dimension >= 1";
    }
    Param positive = prm;
    positive.lo = lo;
    return "allowed: " + prm.name + " in " + domain_text(positive);
  }
  std::string out = "allowed: ";
  for (SymbolId s : dim.symbols()) {
    const Param& prm = *p.find_param(symbol_name(s));
    out += prm.name + " in " + domain_text(prm) + ", ";
  }
  return out + "with " + dim.str() + " >= 1";
}

}  // namespace

ParamValues frontier_fixed_params(const Program& p, const ParamValues& given,
                                  const std::string& vary) {
  const Param* varied = p.find_param(vary);
  if (varied == nullptr)
    throw UsageError("--vary " + vary + ": '" + p.name + "' has no such param");
  if (given.count(vary)) throw UsageError("--param " + vary + " is the param --vary searches");
  check_param_names(p, given, p.name);
  ParamValues out;
  for (const Param& prm : p.params) {
    if (prm.name == vary) continue;
    auto it = given.find(prm.name);
    const int64_t value = it == given.end() ? prm.lo : it->second;
    if (value < prm.lo || value > prm.hi || value % prm.multiple_of != 0) {
      throw UsageError("--param " + prm.name + "=" + std::to_string(value) +
                       " is outside its domain " + domain_text(prm));
    }
    out[prm.name] = value;
  }
  // The frontier answers for values of `vary` where the program runs; fixed params that give a
  // tensor no valid shape at all would make every answer vacuous.
  Env env;
  for (const auto& [name, v] : out) env.set(name, v);
  for (const Tensor& t : p.tensors) {
    for (size_t d = 0; d < t.shape.size(); ++d) {
      const Expr& dim = t.shape[d];
      const std::string params = fixed_in(p, dim, out, given);
      if (params.empty()) continue;  // a constant (the validator checks it) or searched
      const std::string what =
          "tensor '" + t.name + "' dimension " + std::to_string(d) + " (" + dim.str() + ")";
      int64_t v = 0;
      try {
        v = eval(dim, env);
      } catch (const EvalError& e) {
        throw UsageError(params + " makes " + what + " leave int64 (" + e.message + "); " +
                         allowed(p, dim));
      }
      if (v < 1) {
        throw UsageError(params + " gives " + what + " the value " + std::to_string(v) +
                         ", below 1: the program cannot run there, so there is no frontier; " +
                         allowed(p, dim));
      }
    }
  }
  // Each tensor's bytes where the search starts (the least multiple of the step at or above lo;
  // a tensor with a dimension below 1 there is the search's to report).
  const int64_t step = varied->multiple_of;
  const int64_t rem = ((varied->lo % step) + step) % step;
  int64_t first = varied->lo;
  if (rem != 0 && __builtin_add_overflow(varied->lo, step - rem, &first)) return out;
  env.set(vary, first);
  env.set(kProgramIdParam, 0);
  for (const Tensor& t : p.tensors) {
    int64_t bytes = static_cast<int64_t>(dtype_size(t.dtype));
    bool overflow = false, runs = true;
    for (const Expr& dim : t.shape) {
      int64_t v = 0;
      try {
        v = eval(dim, env);
      } catch (const EvalError&) {
        overflow = true;
        break;
      }
      if (v < 1) {
        runs = false;
        break;
      }
      overflow = overflow || __builtin_mul_overflow(bytes, v, &bytes);
    }
    if (!runs || !overflow) continue;
    std::string params;
    for (const Param& prm : p.params) {
      if (prm.name == vary || !out.count(prm.name)) continue;
      bool used = false;
      for (const Expr& dim : t.shape) {
        for (SymbolId s : dim.symbols()) used = used || symbol_name(s) == prm.name;
      }
      if (used) params += (params.empty() ? "" : " and ") + chosen(prm, given, out.at(prm.name));
    }
    if (params.empty()) continue;  // only the searched param: the search's to report
    throw UsageError(params + " makes the bytes of tensor '" + t.name +
                     "' leave int64 already at " + vary + "=" + std::to_string(first) +
                     ", where the search starts; choose smaller values within their domains");
  }
  return out;
}

}  // namespace ncv::cli

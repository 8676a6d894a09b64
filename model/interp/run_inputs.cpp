// Turning user-supplied params and inputs into a checked concrete run.
#include <random>

#include "model/interp/interpreter.h"

namespace ncv {
inline namespace interp {

void check_params(const Program& p, const ParamValues& params) {
  for (const auto& [name, value] : params) {
    if (!p.find_param(name)) {
      std::string known;
      for (const Param& prm : p.params) known += (known.empty() ? "" : ", ") + prm.name;
      throw InputError("unknown param '" + name + "' for kernel '" + p.name +
                       "' (its params: " + (known.empty() ? "none" : known) + ")");
    }
  }
  Env env;
  for (const Param& prm : p.params) {
    auto it = params.find(prm.name);
    if (it == params.end()) {
      throw InputError("param '" + prm.name + "' of kernel '" + p.name +
                       "' needs a value (domain [" + std::to_string(prm.lo) + ", " +
                       std::to_string(prm.hi) + "]" +
                       (prm.multiple_of > 1 ? ", multiple of " + std::to_string(prm.multiple_of)
                                            : std::string()) +
                       ")");
    }
    int64_t v = it->second;
    if (v < prm.lo || v > prm.hi || v % prm.multiple_of != 0) {
      throw InputError("param " + prm.name + "=" + std::to_string(v) +
                       " is outside the domain of '" + p.name + "': [" + std::to_string(prm.lo) +
                       ", " + std::to_string(prm.hi) + "]" +
                       (prm.multiple_of > 1 ? ", multiple of " + std::to_string(prm.multiple_of)
                                            : std::string()));
    }
    env.set(prm.name, v);
  }
  for (const Relation& r : p.relations) {
    bool ok = false;
    try {
      ok = r.holds(env);
    } catch (const EvalError& e) {
      throw InputError("relation `" + r.str() + "` of kernel '" + p.name +
                       "' cannot be evaluated: " + e.message);
    }
    if (!ok) {
      throw InputError("params violate the relation `" + r.str() + "` of kernel '" + p.name + "'");
    }
  }
}

DynamicError well_formed_error(const Program& p, const ParamValues& params, std::string detail) {
  DynamicError e;
  e.kind = CheckKind::well_formed;
  e.kernel = p.name;
  for (const auto& kv : params) e.params.emplace_back(kv.first, kv.second);
  e.detail = std::move(detail);
  e.build_message();
  return e;
}

namespace {

Env env_of(const ParamValues& params) {
  Env env;
  for (const auto& [name, value] : params) env.set(name, value);
  return env;
}

// A dimension below 1 or beyond int64 at params inside the domain is the kernel's defect (its
// shape arithmetic fails at a point it declares), not the user's: a well_formed check failure.
std::vector<int64_t> shape_in(const Program& p, TensorId t, const Env& env,
                              const ParamValues& params) {
  std::vector<int64_t> shape;
  shape.reserve(p.tensor(t).shape.size());
  for (const Expr& e : p.tensor(t).shape) {
    int64_t v = 0;
    try {
      v = eval(e, env);
    } catch (const EvalError& err) {
      throw well_formed_error(
          p, params, "shape of tensor '" + p.tensor(t).name + "': " + e.str() + ": " + err.message);
    }
    if (v < 1) {
      throw well_formed_error(p, params,
                              "tensor '" + p.tensor(t).name + "' gets a non-positive dimension " +
                                  e.str() + " = " + std::to_string(v));
    }
    shape.push_back(v);
  }
  return shape;
}

}  // namespace

std::vector<int64_t> concrete_shape(const Program& p, TensorId t, const ParamValues& params) {
  return shape_in(p, t, env_of(params), params);
}

std::vector<std::vector<int64_t>> concrete_shapes(const Program& p, const ParamValues& params) {
  // One environment for all tensors: building one per tensor was a large share of a small run's
  // allocations (bench/README.md, "Measurements behind the code").
  const Env env = env_of(params);
  std::vector<std::vector<int64_t>> shapes;
  shapes.reserve(p.tensors.size());
  for (const Tensor& t : p.tensors) shapes.push_back(shape_in(p, t.id, env, params));
  return shapes;
}

std::map<std::string, HostTensor> random_inputs(const Program& p, const ParamValues& params,
                                                uint64_t seed, int64_t budget) {
  std::map<std::string, HostTensor> out;
  // Refuse before allocating.
  if (const int64_t bytes = hbm_bytes(p, params); bytes > budget) {
    throw InputError("inputs of kernel '" + p.name + "' would take " + std::to_string(bytes >> 20) +
                     " MiB, over the " + std::to_string(budget >> 20) +
                     " MiB memory budget (--memory-budget-mib N raises it)");
  }
  std::mt19937_64 rng(seed);
  const std::vector<std::vector<int64_t>> shapes = concrete_shapes(p, params);
  for (const Tensor& t : p.tensors) {
    if (t.kind != TensorKind::Input) continue;
    HostTensor h(t.dtype, shapes[t.id]);
    int64_t n = h.num_elements();
    if (is_mx_packed(t.dtype)) {
      // MX packed data: each of the four values an independent uniform draw over the finite
      // encodings of its element type (fp8: 8 bits, fp4: 4 bits). NaN and Inf encodings (e4m3fn
      // S.1111.111, e5m2 S.11111.xx) are never drawn; a kernel handed them in a .npy gets NaN
      // and Inf through the instructions (model/semantics/README.md "MX").
      const int bits = t.dtype == DType::fp4_e2m1fn_x4 ? 4 : 8;
      auto finite = [&](uint32_t v) {
        if (t.dtype == DType::fp8_e4m3fn_x4) return (v & 0x7fu) != 0x7fu;
        if (t.dtype == DType::fp8_e5m2_x4) return (v & 0x7cu) != 0x7cu;
        return true;  // e2m1 has no NaN or Inf
      };
      for (int64_t i = 0; i < n; ++i) {
        uint32_t word = 0;
        for (int q = 0; q < 4; ++q) {
          uint32_t v = 0;
          do {
            v = static_cast<uint32_t>(rng() >> 56) & ((1u << bits) - 1u);
          } while (!finite(v));
          word |= v << (bits * q);
        }
        store_bits(t.dtype, h.bytes.data() + static_cast<size_t>(i) * dtype_size(t.dtype), word);
      }
    } else if (is_float(t.dtype)) {
      // Uniform on the 2^-23 grid of [-1, 1), from the top 24 bits of one draw: exact in
      // float, and far cheaper than uniform_real_distribution<float>, whose
      // generate_canonical computes two long-double logarithms per value in libstdc++
      // (bench/README.md, "Measurements behind the code").
      for (int64_t i = 0; i < n; ++i) {
        const auto grid = static_cast<int32_t>(rng() >> 40) - (int32_t{1} << 23);
        h.set(i, static_cast<float>(grid) * 0x1p-23f);
      }
    } else {
      int64_t lo = t.value_range ? t.value_range->lo : 0;
      int64_t hi = t.value_range ? t.value_range->hi : 15;
      std::uniform_int_distribution<int64_t> dist(lo, hi);
      for (int64_t i = 0; i < n; ++i) {
        store_bits(t.dtype, h.bytes.data() + static_cast<size_t>(i) * dtype_size(t.dtype),
                   static_cast<uint32_t>(dist(rng)));
      }
    }
    out.emplace(t.name, std::move(h));
  }
  return out;
}

}  // namespace interp
}  // namespace ncv

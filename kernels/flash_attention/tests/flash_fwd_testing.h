// What the flash_fwd test files share: the registered variant, a shape, a check at it.
#pragma once

#include <stdexcept>

#include "check/check.h"
#include "kernels/registry.h"

namespace ncv::kernels {

inline const Variant& flash() {
  const Variant* v = find_variant("flash_fwd");
  if (v == nullptr) throw std::logic_error("flash_fwd is not registered");
  return *v;
}

inline ParamValues flash_shape(int64_t seqlen, int64_t group = 1, int64_t d = 64, int64_t bs = 1,
                               int64_t kv_heads = 1) {
  return {{"bs", bs}, {"kv_heads", kv_heads}, {"group", group}, {"seqlen", seqlen}, {"d_head", d}};
}

// check of `program` (default: the kernel built for the options) at `pv`, seeded by the seqlen.
inline CheckResult flash_check(const Options& given, const ParamValues& pv,
                               const Program* program = nullptr, int cases = 2) {
  const Options o = flash().resolve(given);
  const Program p = program ? *program : flash().build(o);
  CheckOptions co;
  co.cases = cases;
  co.seed = static_cast<uint64_t>(pv.at("seqlen"));
  return check_kernel(flash(), p, o, pv, co);
}

}  // namespace ncv::kernels

#include "kernels/check_generation.h"

namespace ncv::kernels {

const HwConfig& check_generation(const Variant& v) {
  return *find_hw_config(default_generation(v));
}

bool in_registry_isa_and_frontier_tests(const Variant& v) {
  return v.family != "decode_attention";
}

}  // namespace ncv::kernels

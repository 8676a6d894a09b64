#include "kernels/check_generation.h"

namespace ncv::kernels {

const HwConfig& check_generation(const Variant& v) {
  return v.family == "decode_attention" ? hw_config_trn2() : hw_config_trn1();
}

bool in_registry_prove_tests(const Variant& v) {
  return v.family != "decode_attention";
}

}  // namespace ncv::kernels

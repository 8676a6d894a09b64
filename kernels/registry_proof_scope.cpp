#include "kernels/registry_proof_scope.h"

namespace ncv::kernels {

bool in_registry_isa_and_frontier_tests(const Variant& v) {
  return v.family != "decode_attention";
}

}  // namespace ncv::kernels

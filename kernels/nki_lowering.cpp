#include "kernels/nki_lowering.h"

#include "model/compiler/compiler_choices.h"
#include "model/hw/hw_config.h"

namespace ncv::kernels {

void nc_transpose_unpinned(Builder& b, const std::string& psum_name, Access dst, Access src, Expr p,
                           Expr f) {
  if (nc_transpose_engine(p, f) == Engine::Vector) {
    b.transpose(dst, src, Engine::Vector);
    return;
  }
  auto ps = b.psum(psum_name, DType::fp32, {f, p});
  b.transpose(ps(), src, Engine::Tensor);
  b.tensor_copy(dst, ps());
}

void identity_on_chip(Builder& b, Access dst) {
  b.memset(dst, 1.0f);
  // keep element [p, f] where p - f == 0, else 0
  b.affine_select(dst, dst, 0, 1, {-1}, CmpOp::eq, 0.0f);
}

int64_t psum_bank_bytes() {
  return hw_config_trn1().psum_bank_bytes;
}

}  // namespace ncv::kernels

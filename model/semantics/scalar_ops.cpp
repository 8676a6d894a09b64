// The scalar building blocks of semantics.h. Their definitions, with the model's NaN and
// integer-domain rules, live in model/semantics/internal.h so that the fast paths can inline them.
#include "model/semantics/internal.h"

namespace ncv {
inline namespace semantics {

float alu_apply(AluOp op, float a, float b) {
  return semantics::alu_float(op, a, b);
}

float reduction_identity(AluOp op) {
  return reduce_identity_float(op);
}

float act_apply(ActFunc f, float x) {
  return semantics::act_eval(f, x);
}

}  // namespace semantics
}  // namespace ncv

// The scalar building blocks of semantics.h. Their definitions, with the model's NaN and
// integer-domain rules, live in model/semantics/internal.h so that the fast paths can inline them.
#include <cmath>
#include <cstdio>
#include <string>

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

namespace {

// A bound as 2^k when it is a power of two, else its shortest round-trip decimal (sin's fl(pi)).
std::string bound_text(float v) {
  int e = 0;
  if (std::fabs(std::frexp(v, &e)) == 0.5f) {
    return std::string(v < 0 ? "-" : "") + "2^" + std::to_string(e - 1);
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(v));
  return buf;
}

}  // namespace

std::string act_range_text(ActFunc f) {
  const ActRangeBounds b = act_range(f);
  if (!b.ranged) return "";
  return bound_text(b.lo) + (b.magnitude ? " <= |x| <= " : " <= x <= ") + bound_text(b.hi);
}

bool act_in_documented_range(ActFunc f, float x) {
  return act_in_range(f, x);
}

}  // namespace semantics
}  // namespace ncv

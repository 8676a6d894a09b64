// The number domain of the ISA rules (model/isa/rules.h) over Z3 integer terms: the solver
// builds its ISA obligations from the same templates the interpreter evaluates on int64 values.
// mod and div are SMT-LIB's (Euclidean); the rules only compare mod with 0 and divide
// non-negative byte offsets, where they agree with the interpreter's C++ operators.
#pragma once

#include <z3++.h>

#include <cstdint>

namespace ncv::solver {

struct Z3Ops {
  using Int = z3::expr;
  using Bool = z3::expr;
  z3::context& ctx;

  Int lit(int64_t v) const { return ctx.int_val(v); }
  Bool ite(const Bool& c, const Bool& a, const Bool& b) const { return z3::ite(c, a, b); }
  Int mod(const Int& a, int64_t m) const { return z3::mod(a, ctx.int_val(m)); }
  Int div(const Int& a, int64_t d) const { return a / ctx.int_val(d); }
  Int abs(const Int& a) const { return z3::ite(a < 0, -a, a); }
};

}  // namespace ncv::solver

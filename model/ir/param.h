// Kernel parameters and the domain a kernel declares it supports.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/ir/expr.h"

namespace ncv {
inline namespace ir {

// A named integer with a range and a `multiple_of` step. The solver proves obligations over
// exactly this domain; property generators draw shapes from it.
struct Param {
  std::string name;
  int64_t lo = 1;
  int64_t hi = 1;
  int64_t multiple_of = 1;
  bool operator==(const Param&) const = default;
  Expr expr() const { return Expr::var(name); }
};

// An extra relation between params, e.g. `heads % kv_heads == 0` or `s_active <= seqlen`.
enum class RelationKind : uint8_t { LE, LT, EQ, NE, Divides };

struct Relation {
  RelationKind kind = RelationKind::LE;
  Expr lhs, rhs;  // lhs <= rhs / lhs < rhs / lhs == rhs / lhs != rhs / lhs divides rhs
  bool operator==(const Relation&) const = default;
  bool holds(const Env& env) const;
  std::string str() const;  // "a <= b", "a divides b"
};

}  // namespace ir
}  // namespace ncv

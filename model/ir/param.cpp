#include "model/ir/param.h"

namespace ncv {
inline namespace ir {

bool Relation::holds(const Env& env) const {
  int64_t a = eval(lhs, env), b = eval(rhs, env);
  switch (kind) {
    case RelationKind::LE:
      return a <= b;
    case RelationKind::LT:
      return a < b;
    case RelationKind::EQ:
      return a == b;
    case RelationKind::NE:
      return a != b;
    case RelationKind::Divides:
      return a != 0 && b % a == 0;
  }
  return false;
}

std::string Relation::str() const {
  const char* op = "<=";
  switch (kind) {
    case RelationKind::LE:
      op = "<=";
      break;
    case RelationKind::LT:
      op = "<";
      break;
    case RelationKind::EQ:
      op = "==";
      break;
    case RelationKind::NE:
      op = "!=";
      break;
    case RelationKind::Divides:
      op = "divides";
      break;
  }
  return lhs.str() + " " + op + " " + rhs.str();
}

}  // namespace ir
}  // namespace ncv

#include "equiv/exp_bound.h"

#include <algorithm>

namespace ncv::equiv {

namespace {
constexpr uint32_t kMinusOne = 0xbf800000u, kNegInf = 0xff800000u, kPosInf = 0x7f800000u;

bool is_alu(const TermStore& ts, TermId t, AluOp op) {
  const TermNode& n = ts.node(t);
  return n.op == TermOp::alu && static_cast<AluOp>(n.aux) == op;
}
}  // namespace

bool NegatedMaxPattern::is_const(TermId t, uint32_t bits) const {
  const TermNode& n = ts_.node(t);
  return n.op == TermOp::constant && n.dtype == DType::fp32 && n.payload == bits;
}

const std::vector<TermId>& NegatedMaxPattern::max_operands(TermId t) {
  if (auto it = memo_.find(t); it != memo_.end()) return it->second;
  // Depth-first over the max nodes only (a row max is a 512-deep left fold: no memo per level,
  // which would hold quadratically many operands).
  std::vector<TermId> out, stack{t};
  while (!stack.empty()) {
    const TermId x = stack.back();
    stack.pop_back();
    if (is_alu(ts_, x, AluOp::max)) {
      for (TermId k : ts_.kids(x)) stack.push_back(k);
    } else if (!is_const(x, kNegInf)) {
      out.push_back(x);
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return memo_.emplace(t, std::move(out)).first->second;
}

const std::vector<TermId>* NegatedMaxPattern::negated_max_operands(TermId n) {
  if (auto it = negated_memo_.find(n); it != negated_memo_.end()) {
    return it->second ? &*it->second : nullptr;
  }
  std::optional<std::vector<TermId>>& slot = negated_memo_[n];
  std::vector<TermId> out, stack{n};
  while (!stack.empty()) {
    const TermId x = stack.back();
    stack.pop_back();
    if (is_alu(ts_, x, AluOp::min)) {
      for (TermId k : ts_.kids(x)) stack.push_back(k);
      continue;
    }
    if (is_const(x, kPosInf)) continue;  // min's identity: -(-inf), no operand
    if (!is_alu(ts_, x, AluOp::multiply)) return nullptr;
    const auto k = ts_.kids(x);
    const TermId m = is_const(k[0], kMinusOne) ? k[1] : is_const(k[1], kMinusOne) ? k[0] : x;
    if (m == x) return nullptr;
    const std::vector<TermId>& ops = max_operands(m);
    out.insert(out.end(), ops.begin(), ops.end());
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  slot = std::move(out);
  return &*slot;
}

bool NegatedMaxPattern::nonpositive(TermId arg) {
  if (!is_alu(ts_, arg, AluOp::add)) return false;
  const auto k = ts_.kids(arg);
  for (int side = 0; side < 2; ++side) {
    const std::vector<TermId>* superset = negated_max_operands(k[1 - side]);
    if (superset == nullptr) continue;
    // A score against its row's max: one lookup, no operand list of its own.
    if (!is_alu(ts_, k[side], AluOp::max)) {
      if (std::binary_search(superset->begin(), superset->end(), k[side])) return true;
      continue;
    }
    const std::vector<TermId>& subset = max_operands(k[side]);
    if (!subset.empty() &&
        std::includes(superset->begin(), superset->end(), subset.begin(), subset.end())) {
      return true;
    }
  }
  return false;
}

}  // namespace ncv::equiv

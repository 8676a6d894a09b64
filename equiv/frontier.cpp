// The structural and value walks over two programs' terms (frontier.h).
#include "equiv/frontier.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <unordered_set>

#include "model/ir/printer.h"

namespace ncv::equiv {

std::vector<std::string> instruction_labels(const Program& p) {
  std::vector<std::string> out(p.num_instructions);
  for_each_stmt(p, [&](const std::vector<const Loop*>&, const Stmt& s) {
    if (auto* i = std::get_if<InstrStmt>(&s.node)) {
      std::string text = print_instruction(p, i->ins);
      if (text.size() > 110) text = text.substr(0, 107) + "...";
      if (i->id < out.size()) out[i->id] = "#" + std::to_string(i->id) + " " + text;
    }
  });
  return out;
}

namespace {

bool same_head(const TermStore& ts, TermId a, TermId b) {
  const TermNode &x = ts.node(a), &y = ts.node(b);
  if (x.op == TermOp::fma_chain && y.op == TermOp::fma_chain &&
      ts.fma_parts(a).a.size() != ts.fma_parts(b).a.size()) {
    return false;  // chains of different lengths
  }
  return x.op == y.op && x.aux == y.aux && x.dtype == y.dtype && x.payload == y.payload &&
         x.kid_count == y.kid_count;
}

// The (a_k, b_k) pairs of a chain as sorted id pairs, to tell a reordered sum from another one.
std::vector<std::pair<TermId, TermId>> chain_pairs(const TermStore& ts, TermId t) {
  const FmaParts f = ts.fma_parts(t);
  std::vector<std::pair<TermId, TermId>> v;
  for (size_t i = 0; i < f.a.size(); ++i) v.emplace_back(std::minmax(f.a[i], f.b[i]));
  std::sort(v.begin(), v.end());
  return v;
}

const char* head_kind(const TermStore& ts, TermId a, TermId b) {
  const TermNode &x = ts.node(a), &y = ts.node(b);
  if (x.op == TermOp::round && y.op == TermOp::round) return "dtype";
  if (x.op == TermOp::round || y.op == TermOp::round) return "rounding";
  if (x.op == TermOp::constant && y.op == TermOp::constant) return "constant";
  if (x.op == TermOp::input && y.op == TermOp::input) return "element read";
  if (x.op == TermOp::fma_chain && y.op == TermOp::fma_chain) {
    if (chain_pairs(ts, a) == chain_pairs(ts, b) && ts.fma_parts(a).init == ts.fma_parts(b).init) {
      return "accumulation order";
    }
    return "accumulation";
  }
  if (x.op == TermOp::fma_chain || y.op == TermOp::fma_chain) return "accumulation";
  if (x.op == TermOp::operands || y.op == TermOp::operands) return "accumulation";
  if (x.op == TermOp::transpose_pe || y.op == TermOp::transpose_pe) return "transpose";
  if (x.op == TermOp::opaque || y.op == TermOp::opaque) return "unsupported";
  return "operation";
}

// Equal values (terms of different dtypes hold one value in different bits; NaNs are equal).
bool same_value(const TermStore& ts, const std::vector<uint32_t>& bits, TermId a, TermId b) {
  const float x = decode_to_float(ts.dtype(a), bits[a]), y = decode_to_float(ts.dtype(b), bits[b]);
  return std::bit_cast<uint32_t>(x) == std::bit_cast<uint32_t>(y) ||
         (std::isnan(x) && std::isnan(y));
}

struct PairHash {
  size_t operator()(const std::pair<TermId, TermId>& p) const {
    return std::hash<uint64_t>()((uint64_t{p.first} << 32) | p.second);
  }
};

}  // namespace

std::vector<TermDifference> term_differences(const TermStore& ts, TermId a, TermId b,
                                             size_t limit) {
  std::vector<TermDifference> out;
  std::unordered_set<std::pair<TermId, TermId>, PairHash> seen;
  std::vector<std::pair<TermId, TermId>> stack = {{a, b}};
  while (!stack.empty() && out.size() < limit) {
    auto [x, y] = stack.back();
    stack.pop_back();
    if (x == y || !seen.insert({x, y}).second) continue;
    if (!same_head(ts, x, y)) {
      const char* kind = head_kind(ts, x, y);
      out.push_back({kind, x, y});
      // A rounding on one side only: the rest of the terms may part further down.
      const TermNode &nx = ts.node(x), &ny = ts.node(y);
      if (nx.op == TermOp::round && ny.op != TermOp::round) stack.push_back({ts.kids(x)[0], y});
      if (ny.op == TermOp::round && nx.op != TermOp::round) stack.push_back({x, ts.kids(y)[0]});
      if (nx.op == TermOp::round && ny.op == TermOp::round) {
        stack.push_back({ts.kids(x)[0], ts.kids(y)[0]});
      }
      continue;
    }
    if (ts.node(x).op == TermOp::fma_chain &&
        std::string(head_kind(ts, x, y)) == "accumulation order") {
      out.push_back({"accumulation order", x, y});
      continue;
    }
    auto kx = ts.kids(x), ky = ts.kids(y);
    // Commutative operands are sorted by id, so a changed operand may sit on the other side:
    // pair the operand that both share, then the other two.
    if (ts.node(x).op == TermOp::alu && kx.size() == 2 && kx[0] != ky[0] && kx[1] != ky[1]) {
      if (kx[0] == ky[1]) {
        stack.push_back({kx[1], ky[0]});
        continue;
      }
      if (kx[1] == ky[0]) {
        stack.push_back({kx[0], ky[1]});
        continue;
      }
    }
    for (size_t i = kx.size(); i-- > 0;) {
      if (kx[i] != ky[i]) stack.push_back({kx[i], ky[i]});
    }
  }
  return out;
}

TermDifference first_value_difference(const TermStore& ts, const std::vector<uint32_t>& bits,
                                      TermId a, TermId b) {
  TermId pa = a, pb = b;
  for (;;) {
    if (!same_head(ts, a, b)) return {head_kind(ts, a, b), a, b, pa, pb};
    auto ka = ts.kids(a), kb = ts.kids(b);
    bool descended = false;
    for (size_t i = 0; i < ka.size(); ++i) {
      // An operand list has no value: descend into any that differs.
      const bool list = ts.node(ka[i]).op == TermOp::operands;
      if (ka[i] != kb[i] && (list || !same_value(ts, bits, ka[i], kb[i]))) {
        pa = a;
        pb = b;
        a = ka[i];
        b = kb[i];
        descended = true;
        break;
      }
    }
    // Same heads, operands of equal value: the values part here (e.g. a reordered chain).
    if (!descended) return {head_kind(ts, a, b), a, b, pa, pb};
  }
}

}  // namespace ncv::equiv

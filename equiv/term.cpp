// The hash-consed term store (term.h): interning, the bit-preserving construction rules, constant
// folding with the model's own scalar code, provenance and the readable form of a term.
#include "equiv/term.h"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <stdexcept>

#include "model/semantics/semantics.h"

namespace ncv::equiv {

namespace {

// A table slot: the hash's low 32 bits (the probe start, and a tag that rejects almost every
// other node without touching it) above the node id; kSlotEmpty when free.
constexpr uint64_t kSlotEmpty = UINT64_MAX;

inline uint64_t mix(uint64_t h, uint64_t v) {
  // splitmix64-style finaliser folded into a running hash: cheap and well spread, so the open
  // addressing table below rarely probes more than once.
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  h ^= h >> 31;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  return h;
}

inline uint64_t lane(uint64_t acc, uint64_t word) {
  acc = (acc ^ word) * 0x9fb21c651e98df25ull;
  return (acc << 29) | (acc >> 35);
}

uint64_t hash_node(const TermNode& n, std::span<const TermId> kids) {
  uint64_t h = mix(0x243f6a8885a308d3ull, (static_cast<uint64_t>(n.op) << 16) |
                                              (static_cast<uint64_t>(n.aux) << 8) |
                                              static_cast<uint64_t>(n.dtype));
  h = mix(h, n.payload);
  h = mix(h, kids.size());
  // Long kid lists (fma chains, transpose columns) dominate interning: they are hashed two kids
  // per word in four independent lanes, so the multiplies overlap instead of forming one chain.
  const size_t count = kids.size();
  size_t i = 0;
  if (count >= 8) {
    uint64_t l[4] = {0x9e3779b97f4a7c15ull, 0xc2b2ae3d27d4eb4full, 0x165667b19e3779f9ull,
                     0x27d4eb2f165667c5ull};
    for (; i + 8 <= count; i += 8) {
      for (int j = 0; j < 4; ++j) {
        l[j] = lane(l[j], kids[i + 2 * j] | (static_cast<uint64_t>(kids[i + 2 * j + 1]) << 32));
      }
    }
    for (uint64_t v : l) h = mix(h, v);
  }
  for (; i < count; ++i) h = mix(h, kids[i]);
  return h;
}

// Integer dtypes whose every bit pattern survives decode -> fp32 -> encode (values exact in fp32,
// no saturation at the ends). int32 and uint32 are not: values above 2^24 round in fp32.
bool roundtrip_exact(DType t) {
  return is_float(t) || t == DType::uint8 || t == DType::uint16;
}

uint32_t mask_bits(DType t, uint32_t bits) {
  const size_t n = dtype_size(t);
  return n >= 4 ? bits : bits & ((1u << (8 * n)) - 1u);
}

std::string_view short_alu_name(AluOp op) {
  switch (op) {
    case AluOp::add:
      return "add";
    case AluOp::subtract:
      return "sub";
    case AluOp::multiply:
      return "mul";
    case AluOp::divide:
      return "div";
    case AluOp::max:
      return "max";
    case AluOp::min:
      return "min";
    default:
      return alu_op_name(op);
  }
}

bool commutative(AluOp op) {
  return op == AluOp::add || op == AluOp::multiply || op == AluOp::max || op == AluOp::min;
}

}  // namespace

TermStore::TermStore() {
  nodes_.reserve(1 << 16);
  kids_.reserve(1 << 18);
  table_.assign(1 << 16, kSlotEmpty);
}

uint32_t TermStore::input_slot(const std::string& tensor_name) {
  auto [it, inserted] =
      input_slots_.emplace(tensor_name, static_cast<uint32_t>(input_names_.size()));
  if (inserted) input_names_.push_back(tensor_name);
  return it->second;
}

void TermStore::grow_table() {
  std::vector<uint64_t> t(table_.size() * 2, kSlotEmpty);
  const uint64_t mask = t.size() - 1;
  for (uint64_t slot : table_) {
    if (slot == kSlotEmpty) continue;
    uint64_t i = (slot >> 32) & mask;
    while (t[i] != kSlotEmpty) i = (i + 1) & mask;
    t[i] = slot;
  }
  table_.swap(t);
}

TermId TermStore::intern(TermNode n, std::span<const TermId> kids) {
  const auto h = static_cast<uint32_t>(hash_node(n, kids));
  const uint64_t mask = table_.size() - 1;
  uint64_t i = h & mask;
  for (; table_[i] != kSlotEmpty; i = (i + 1) & mask) {
    if ((table_[i] >> 32) != h) continue;
    const auto c = static_cast<TermId>(table_[i]);
    const TermNode& o = nodes_[c];
    if (o.op != n.op || o.aux != n.aux || o.dtype != n.dtype || o.payload != n.payload ||
        o.kid_count != kids.size()) {
      continue;
    }
    if (std::equal(kids.begin(), kids.end(), kids_.begin() + o.kid_begin)) return mark(c);
  }
  if (nodes_.size() >= kEmpty) throw std::length_error("TermStore: too many terms");
  const auto id = static_cast<TermId>(nodes_.size());
  n.kid_begin = static_cast<uint32_t>(kids_.size());
  n.kid_count = static_cast<uint32_t>(kids.size());
  if (kids_.size() + kids.size() > UINT32_MAX) throw std::length_error("TermStore: kid pool full");
  kids_.insert(kids_.end(), kids.begin(), kids.end());
  nodes_.push_back(n);
  table_[i] = (static_cast<uint64_t>(h) << 32) | id;
  // Keep the load factor at most 1/2 so that probes stay short.
  if (2 * nodes_.size() > table_.size()) grow_table();
  return mark(id);
}

TermId TermStore::mark(TermId t) {
  // Inputs belong to no instruction; a constant to the first one that wrote it (a changed mask
  // fill value is then located at its affine_select).
  const TermOp op = nodes_[t].op;
  if (instruction_ == kNoInstruction || op == TermOp::input) return t;
  std::vector<uint32_t>& p = prov_[side_];
  if (t >= p.size()) p.resize(std::max<size_t>(t + 1, p.size() * 3 / 2 + 1024), kNoInstruction);
  if (p[t] == kNoInstruction) p[t] = instruction_;
  return t;
}

TermId TermStore::input(uint32_t slot, int64_t flat_index, DType dtype) {
  TermNode n;
  n.op = TermOp::input;
  n.dtype = dtype;
  n.payload = (static_cast<uint64_t>(slot) << 40) | static_cast<uint64_t>(flat_index);
  return intern(n, {});
}

TermId TermStore::constant(DType dtype, uint32_t bits) {
  TermNode n;
  n.op = TermOp::constant;
  n.dtype = dtype;
  n.payload = mask_bits(dtype, bits);
  return intern(n, {});
}

TermId TermStore::constant_f32(float v) {
  return constant(DType::fp32, std::bit_cast<uint32_t>(v));
}

float TermStore::constant_value(TermId t) const {
  return decode_to_float(nodes_[t].dtype, static_cast<uint32_t>(nodes_[t].payload));
}

TermId TermStore::round(DType dtype, TermId x) {
  const DType xt = nodes_[x].dtype;
  // encode(decode(b)) == b for these (term_rules_test checks every bit pattern, NaNs up to
  // payload); a float dtype's values are all exact in fp32, and consumers decode to fp32.
  if ((xt == dtype && roundtrip_exact(dtype)) || (dtype == DType::fp32 && is_float(xt))) {
    return mark(x);
  }
  if (nodes_[x].op == TermOp::constant) {
    return constant(dtype, encode_from_float(dtype, constant_value(x)));
  }
  TermNode n;
  n.op = TermOp::round;
  n.dtype = dtype;
  const TermId k[1] = {x};
  return intern(n, k);
}

TermId TermStore::alu(AluOp op, TermId a, TermId b) {
  if (nodes_[a].op == TermOp::constant && nodes_[b].op == TermOp::constant) {
    return constant_f32(alu_apply(op, constant_value(a), constant_value(b)));
  }
  // x * 1 and x + (-0) are x for every non-NaN x (a NaN comes out quieted: a payload bit), so an
  // activation's default scale and a zero bias vanish; term_rules_test checks both on every
  // special value.
  auto is_const = [&](TermId t, uint32_t bits) {
    return nodes_[t].op == TermOp::constant && nodes_[t].dtype == DType::fp32 &&
           nodes_[t].payload == bits;
  };
  auto is_float_term = [&](TermId t) { return is_float(nodes_[t].dtype); };
  if (op == AluOp::multiply) {
    if (is_const(b, 0x3f800000u) && is_float_term(a)) return mark(a);
    if (is_const(a, 0x3f800000u) && is_float_term(b)) return mark(b);
  }
  if (op == AluOp::add) {
    if (is_const(b, 0x80000000u) && is_float_term(a)) return mark(a);
    if (is_const(a, 0x80000000u) && is_float_term(b)) return mark(b);
  }
  // x - y is x + (-1 * y), and -1 * (-1 * y) is y, for every float x, y up to NaN payload (IEEE
  // 754 defines subtraction as the addition of the negated operand, and a negation is exact):
  // one form for a subtracted max and a max negated into an activation's bias. term_rules_test
  // checks both on every special value.
  const uint32_t minus_one = 0xbf800000u;
  constexpr TermId kNone = UINT32_MAX;
  if (op == AluOp::subtract && is_float_term(a) && is_float_term(b)) {
    return alu(AluOp::add, a, alu(AluOp::multiply, constant_f32(-1.0f), b));
  }
  if (op == AluOp::multiply) {
    const TermId y = is_const(a, minus_one) ? b : is_const(b, minus_one) ? a : kNone;
    if (y != kNone && nodes_[y].op == TermOp::alu &&
        static_cast<AluOp>(nodes_[y].aux) == AluOp::multiply) {
      const TermId k0 = kids_[nodes_[y].kid_begin], k1 = kids_[nodes_[y].kid_begin + 1];
      const TermId inner = is_const(k0, minus_one) ? k1 : is_const(k1, minus_one) ? k0 : kNone;
      if (inner != kNone && is_float_term(inner)) return mark(inner);
    }
  }
  // Commutative up to which NaN propagates (the first NaN operand); term_rules_test checks it.
  if (commutative(op) && b < a) std::swap(a, b);
  TermNode n;
  n.op = TermOp::alu;
  n.aux = static_cast<uint8_t>(op);
  n.dtype = DType::fp32;
  const TermId k[2] = {a, b};
  return intern(n, k);
}

TermId TermStore::act(ActFunc func, TermId x) {
  if (nodes_[x].op == TermOp::constant) return constant_f32(act_apply(func, constant_value(x)));
  TermNode n;
  n.op = TermOp::act;
  n.aux = static_cast<uint8_t>(func);
  n.dtype = DType::fp32;
  const TermId k[1] = {x};
  return intern(n, k);
}

TermId TermStore::fma_chain(TermId init, std::span<const std::pair<TermId, TermId>> pairs) {
  // The operand lists are built in reused scratch vectors (no allocation per chain in the
  // steady state); operands() copies a list into the pool only when it is new.
  scratch_a_.clear();
  scratch_b_.clear();
  for (auto [a, b] : pairs) {
    scratch_a_.push_back(a);
    scratch_b_.push_back(b);
  }
  return fma_chain_of(init, operands(scratch_a_), operands(scratch_b_));
}

TermId TermStore::fma_chain_of(TermId init, TermId a, TermId b) {
  if (nodes_[a].op != TermOp::operands || nodes_[b].op != TermOp::operands ||
      nodes_[a].kid_count != nodes_[b].kid_count) {
    throw std::logic_error("TermStore::fma_chain_of: two operand lists of one length");
  }
  // fma(a, b, acc) == fma(b, a, acc) up to NaN payload (the exact product commutes), so the two
  // lists may trade places as wholes: the one with the lower id first.
  if (b < a) std::swap(a, b);
  TermNode n;
  n.op = TermOp::fma_chain;
  n.dtype = DType::fp32;
  const TermId k[3] = {init, a, b};
  return intern(n, k);
}

TermId TermStore::operands(std::span<const TermId> list) {
  TermNode n;
  n.op = TermOp::operands;
  n.dtype = DType::fp32;
  return intern(n, list);
}

FmaParts TermStore::fma_parts(TermId chain) const {
  const auto k = kids(chain);
  return {k[0], kids(k[1]), kids(k[2])};
}

TermId TermStore::transpose_pe(std::span<const TermId> column, uint32_t p) {
  // The column once, as an operands node the column's P outputs share (not P copies of it).
  const TermId col = operands(column);
  TermNode n;
  n.op = TermOp::transpose_pe;
  n.dtype = DType::fp32;
  n.payload = p;
  return intern(n, std::span<const TermId>(&col, 1));
}

TermId TermStore::select(TermId pred, bool reverse, TermId on_true, TermId on_false, DType dtype) {
  TermNode n;
  n.op = TermOp::select;
  n.aux = reverse ? 1 : 0;
  n.dtype = dtype;
  const TermId k[3] = {pred, on_true, on_false};
  return intern(n, k);
}

TermId TermStore::opaque(const std::string& reason) {
  // One opaque node per call: two opaque values are never known to be equal.
  TermNode n;
  n.op = TermOp::opaque;
  n.dtype = DType::fp32;
  n.payload = reasons_.size();
  reasons_.push_back(reason);
  return intern(n, {});
}

std::string TermStore::str(TermId t, int depth) const {
  if (depth <= 0) return "…";
  const TermNode& n = nodes_[t];
  const auto ks = kids(t);
  auto sub = [&](TermId k) { return str(k, depth - 1); };
  char buf[64];
  switch (n.op) {
    case TermOp::input: {
      const uint64_t slot = n.payload >> 40, idx = n.payload & ((1ull << 40) - 1);
      const std::string name = slot < input_names_.size() ? input_names_[slot] : "?";
      return "in[" + name + "#" + std::to_string(idx) + "]";
    }
    case TermOp::constant: {
      std::snprintf(buf, sizeof buf, "%.9g", constant_value(t));
      std::string s = buf;
      if (n.dtype != DType::fp32) s += ":" + std::string(dtype_name(n.dtype));
      return s;
    }
    case TermOp::round:
      return "round(" + std::string(dtype_name(n.dtype)) + ", " + sub(ks[0]) + ")";
    case TermOp::alu:
      return std::string(short_alu_name(static_cast<AluOp>(n.aux))) + "(" + sub(ks[0]) + ", " +
             sub(ks[1]) + ")";
    case TermOp::act:
      return std::string(act_func_name(static_cast<ActFunc>(n.aux))) + "(" + sub(ks[0]) + ")";
    case TermOp::fma_chain: {
      const FmaParts f = fma_parts(t);
      const size_t pairs = f.a.size();
      std::string s = "dot" + std::to_string(pairs) + "(" + sub(f.init);
      for (size_t k = 0; k < pairs && k < 2; ++k) s += "; " + sub(f.a[k]) + "*" + sub(f.b[k]);
      if (pairs > 2) s += "; …";
      return s + ")";
    }
    case TermOp::operands: {
      std::string s = "list" + std::to_string(ks.size()) + "(";
      for (size_t k = 0; k < ks.size() && k < 2; ++k) s += (k ? ", " : "") + sub(ks[k]);
      if (ks.size() > 2) s += ", …";
      return s + ")";
    }
    case TermOp::transpose_pe: {
      const auto col = transpose_column(t);
      std::string s = "tpe" + std::to_string(n.payload) + "(";
      for (size_t k = 0; k < col.size() && k < 2; ++k) s += (k ? ", " : "") + sub(col[k]);
      if (col.size() > 2) s += ", …";
      return s + ")";
    }
    case TermOp::select:
      return std::string(n.aux ? "select!(" : "select(") + sub(ks[0]) + ", " + sub(ks[1]) + ", " +
             sub(ks[2]) + ")";
    case TermOp::opaque:
      return "opaque(\"" + reasons_.at(n.payload) + "\")";
  }
  return "?";
}

}  // namespace ncv::equiv

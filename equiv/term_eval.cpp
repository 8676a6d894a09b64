// Concrete evaluation of a term store (term_eval.h): each node's bits from its kids' bits with
// the model's scalar code, so that the self-check can hold terms to the interpreter bit for bit.
#include "equiv/term_eval.h"

#include <bit>
#include <cmath>

#include "model/semantics/semantics.h"

namespace ncv::equiv {

namespace {

// The model's default NaN (semantics.h): what a NaN matmul accumulator is written as, and what
// an undefined term evaluates to.
constexpr uint32_t kDefaultNaN = 0x7fc00000u;

uint32_t f32_bits(float v) {
  return std::bit_cast<uint32_t>(v);
}

// The PE array's chain result: a NaN accumulator is written as the default NaN (matmul.cpp).
uint32_t chain_bits(float acc) {
  return std::isnan(acc) ? kDefaultNaN : f32_bits(acc);
}

}  // namespace

float term_value(const TermStore& store, const std::vector<uint32_t>& bits, TermId t) {
  return decode_to_float(store.dtype(t), bits[t]);
}

std::vector<uint32_t> evaluate_terms(const TermStore& store,
                                     const std::map<std::string, HostTensor>& inputs,
                                     std::vector<bool>* undefined) {
  const size_t n = store.size();
  std::vector<uint32_t> bits(n, 0);
  std::vector<uint8_t> undef(n, 0);
  // Input tensors by slot (nullptr: not given).
  const auto& names = store.input_names();
  std::vector<const HostTensor*> by_slot(names.size(), nullptr);
  for (size_t s = 0; s < names.size(); ++s) {
    auto it = inputs.find(names[s]);
    if (it != inputs.end()) by_slot[s] = &it->second;
  }
  // Each term's fp32 value, decoded once (kids are read many times: chains, columns).
  std::vector<float> values(n, 0.0f);
  auto value = [&](TermId k) { return values[k]; };

  for (TermId t = 0; t < n; ++t) {
    const TermNode& nd = store.node(t);
    const auto ks = store.kids(t);
    bool u = false;
    for (TermId k : ks) u = u || undef[k] != 0;
    uint32_t b = 0;
    switch (nd.op) {
      case TermOp::input: {
        const uint64_t slot = nd.payload >> 40;
        const auto idx = static_cast<int64_t>(nd.payload & ((uint64_t{1} << 40) - 1));
        const HostTensor* h = slot < by_slot.size() ? by_slot[slot] : nullptr;
        if (h == nullptr || h->dtype != nd.dtype || idx >= h->num_elements()) {
          u = true;
          b = kDefaultNaN;
        } else {
          b = h->bits(idx);
        }
        break;
      }
      case TermOp::constant:
        b = static_cast<uint32_t>(nd.payload);
        break;
      case TermOp::round:
        b = encode_from_float(nd.dtype, value(ks[0]));
        break;
      case TermOp::alu:
        b = f32_bits(alu_apply(static_cast<AluOp>(nd.aux), value(ks[0]), value(ks[1])));
        break;
      case TermOp::act:
        b = f32_bits(act_apply(static_cast<ActFunc>(nd.aux), value(ks[0])));
        break;
      case TermOp::fma_chain: {
        const FmaParts f = store.fma_parts(t);
        float acc = value(f.init);
        for (size_t i = 0; i < f.a.size(); ++i) acc = std::fma(value(f.a[i]), value(f.b[i]), acc);
        b = chain_bits(acc);
        break;
      }
      case TermOp::operands:  // no value of its own; undefined when an operand is
        break;
      case TermOp::transpose_pe: {
        // The identity matmul's chain for output p: acc = +0; acc = fma(c_k, k == p, acc).
        float acc = 0.0f;
        const auto col = store.transpose_column(t);
        for (size_t k = 0; k < col.size(); ++k) {
          acc = std::fma(value(col[k]), k == nd.payload ? 1.0f : 0.0f, acc);
        }
        b = chain_bits(acc);
        break;
      }
      case TermOp::select: {
        // Selected where the predicate's value is nonzero (NaN included) xor reversed. A kid of
        // another dtype holds a value exact in this one (term.h round rule): re-encode it.
        const bool sel = (value(ks[0]) != 0.0f) != (nd.aux != 0);
        const TermId k = sel ? ks[1] : ks[2];
        u = undef[ks[0]] != 0 || undef[k] != 0;
        b = store.dtype(k) == nd.dtype ? bits[k] : encode_from_float(nd.dtype, value(k));
        break;
      }
      case TermOp::opaque:
        u = true;
        b = kDefaultNaN;
        break;
    }
    bits[t] = b;
    values[t] = decode_to_float(nd.dtype, b);
    undef[t] = u ? 1 : 0;
  }
  if (undefined != nullptr) undefined->assign(undef.begin(), undef.end());
  return bits;
}

}  // namespace ncv::equiv

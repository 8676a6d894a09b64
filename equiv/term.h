// Terms: what every element of a run computes, as a hash-consed DAG shared by the two programs an
// equivalence check compares. A term denotes a value of its dtype (bits); arithmetic decodes its
// operands to fp32 exactly as the interpreter does (model/semantics/README.md). Construction
// applies only rules that keep the bits (each validated in equiv/tests/term_rules_test.cpp), so
// equal TermIds mean the same bits for every input value, modulo NaN payloads (the model's "first
// NaN operand" rule makes a*b and b*a differ only in which NaN propagates).
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "model/ir/instruction.h"
#include "model/numerics/dtype.h"

namespace ncv::equiv {

using TermId = uint32_t;
inline constexpr uint32_t kNoInstruction = UINT32_MAX;

enum class TermOp : uint8_t {
  input,         // payload: (input slot << 40) | flat element index; dtype: the tensor's
  constant,      // payload: the bits in dtype
  round,         // kids {x}: encode(dtype, fp32 value of x)
  alu,           // aux: AluOp; kids {a, b}: alu_apply(op, a, b); fp32
  act,           // aux: ActFunc; kids {x}: act_apply(func, x); fp32 (x is the scaled, biased fp32)
  fma_chain,     // kids {init, A, B}, A and B operands nodes of one length (fma_parts):
                 // acc = init; acc = fma(A_k, B_k, acc); fp32
  transpose_pe,  // kids {C}, C the operands node of a source column c_0..c_{P-1} (shared by the
                 // column's P outputs); payload p: the Tensor-engine transpose's identity matmul
                 // for output p (acc = +0; acc = fma(c_k, k == p, acc)); fp32
  select,        // aux: 1 when reversed; kids {pred, on_true, on_false}; dtype of the result
  opaque,        // outside the term language; payload: index into the reasons; never proved
  operands,      // kids: a list of terms, no value of its own: one operand column of fma
                 // chains, interned once and shared by every chain that multiplies it (a score
                 // matrix's chains would otherwise copy each row and column once per element)
};

// An fma chain's parts: acc = init; acc = fma(a[k], b[k], acc) for k in order.
struct FmaParts {
  TermId init;
  std::span<const TermId> a, b;
};

struct TermNode {
  TermOp op = TermOp::constant;
  uint8_t aux = 0;
  DType dtype = DType::fp32;
  uint64_t payload = 0;
  uint32_t kid_begin = 0, kid_count = 0;  // into the store's kid pool
};

class TermStore {
 public:
  TermStore();

  // The slot of a kernel input tensor, by name: both programs' tensors of one name share a slot.
  uint32_t input_slot(const std::string& tensor_name);
  const std::vector<std::string>& input_names() const { return input_names_; }

  TermId input(uint32_t slot, int64_t flat_index, DType dtype);
  TermId constant(DType dtype, uint32_t bits);
  TermId constant_f32(float v);
  // encode(dtype, x): x itself when x's values already lie in dtype (same float, uint8 or uint16
  // dtype; or a float dtype into fp32), so copies through wider types vanish.
  TermId round(DType dtype, TermId x);
  TermId alu(AluOp op, TermId a, TermId b);  // add, multiply, max, min: operands sorted
  TermId act(ActFunc func, TermId x);
  // The chain over (a_k, b_k) pairs as given (its two operand lists interned here); the
  // executor's matmul builds each column's list once instead (fma_chain_of).
  TermId fma_chain(TermId init, std::span<const std::pair<TermId, TermId>> pairs);
  // The chain over two operand lists (operands nodes of one length), e.g. a matmul's stationary
  // column and moving column, each interned once per instruction.
  TermId fma_chain_of(TermId init, TermId a, TermId b);
  TermId operands(std::span<const TermId> list);
  FmaParts fma_parts(TermId chain) const;
  TermId transpose_pe(std::span<const TermId> column, uint32_t p);
  // The source column of a transpose_pe term (its operands node's list).
  std::span<const TermId> transpose_column(TermId t) const { return kids(kids(t)[0]); }
  TermId select(TermId pred, bool reverse, TermId on_true, TermId on_false, DType dtype);
  TermId opaque(const std::string& reason);

  const TermNode& node(TermId t) const { return nodes_[t]; }
  std::span<const TermId> kids(TermId t) const {
    return {kids_.data() + nodes_[t].kid_begin, nodes_[t].kid_count};
  }
  DType dtype(TermId t) const { return nodes_[t].dtype; }
  size_t size() const { return nodes_.size(); }
  // Bytes the store holds (nodes, provenance, kid pool, hash table), as allocated.
  size_t bytes() const {
    return nodes_.capacity() * sizeof(TermNode) +
           (prov_[0].capacity() + prov_[1].capacity()) * sizeof(uint32_t) +
           kids_.capacity() * sizeof(TermId) + table_.capacity() * sizeof(uint64_t);
  }
  // Gives back the arrays' unused capacity (once no more terms are made: the real forms may use
  // it). The copy takes no more than the last doubling did.
  void shrink_to_fit() {
    nodes_.shrink_to_fit();
    kids_.shrink_to_fit();
    for (auto& p : prov_) p.shrink_to_fit();
  }
  // The most one more term can add for a moment: a growing array holds its old and its new
  // storage at once (the node array, the kid pool or the hash table, doubling).
  size_t growth_bytes() const {
    return 2 * std::max({nodes_.capacity() * sizeof(TermNode), kids_.capacity() * sizeof(TermId),
                         table_.capacity() * sizeof(uint64_t)});
  }
  // What a term budget limits: the store and what its executors hold to run the two programs
  // (their element -> term maps), as each executor last reported (side 0 and 1).
  void set_executor_bytes(int side, size_t b) { executor_bytes_[side & 1] = b; }
  size_t held_bytes() const { return bytes() + executor_bytes_[0] + executor_bytes_[1]; }
  const std::string& opaque_reason(TermId t) const { return reasons_.at(nodes_[t].payload); }

  // Provenance per side (0: original, 1: rewrite): the first instruction of that side's program
  // that produced the term (kNoInstruction: not produced by that side, or an input).
  void set_context(int side, uint32_t instruction) {
    side_ = side;
    instruction_ = instruction;
  }
  uint32_t provenance(int side, TermId t) const {
    return t < prov_[side].size() ? prov_[side][t] : kNoInstruction;
  }

  // A short readable form, cut below `depth` levels ("…").
  std::string str(TermId t, int depth = 3) const;

 private:
  static constexpr TermId kEmpty = UINT32_MAX;
  TermId intern(TermNode n, std::span<const TermId> kids);
  TermId mark(TermId t);  // records provenance of a constructed (or found) term
  void grow_table();
  float constant_value(TermId t) const;
  std::vector<TermNode> nodes_;
  std::vector<TermId> kids_;
  // The hash index: open addressing (linear probing, load <= 1/2), each slot a node id tagged
  // with its hash, so that interning allocates nothing per node and a probe touches one slot.
  std::vector<uint64_t> table_;
  size_t executor_bytes_[2] = {0, 0};
  std::vector<TermId> scratch_a_, scratch_b_;  // fma_chain's operand lists under construction
  std::vector<std::string> input_names_;
  std::unordered_map<std::string, uint32_t> input_slots_;
  std::vector<std::string> reasons_;
  std::vector<uint32_t> prov_[2];
  int side_ = 0;
  uint32_t instruction_ = kNoInstruction;
};

}  // namespace ncv::equiv

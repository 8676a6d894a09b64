// The symbolic side of a run: a ValueObserver that builds, for every element the run writes, the
// term (term.h) of its value from the terms of the elements the instruction read, following each
// exec_* function of model/semantics exactly (operand order, rounding, reduction order).
// Elements are identified by address; an element read with a dtype other than the one it was
// written with, or an operation the term language lacks, becomes an opaque term (never proved).
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "equiv/term.h"
#include "model/interp/value_observer.h"

namespace ncv::equiv {

// Thrown out of a run (through the interpreter) when the shared store outgrows the budget: the
// symbolic layers are then unknown at that shape, never guessed.
struct TermBudgetExceeded : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class TermExecutor final : public ValueObserver {
 public:
  // `side`: 0 for the original program, 1 for the rewrite (term provenance). `budget_bytes`: the
  // most the shared store and the two executors' element maps may hold (checked before each
  // instruction instance).
  TermExecutor(TermStore& store, int side, size_t budget_bytes = SIZE_MAX)
      : ts_(store), side_(side), budget_(budget_bytes) {}

  // After the run: each output tensor's terms, row-major.
  const std::map<std::string, std::vector<TermId>>& outputs() const { return outputs_; }
  // After the run: lets go of the element -> term map (only the outputs' terms are read later).
  void release_element_map();

  void input(const Tensor& t, const uint8_t* base, int64_t elems) override;
  void instruction(const InstrStmt& s, int core) override;
  void copy(const View& dst, const View& src) override;
  void flat_copy(const View& dst, const View& src) override;
  void matmul(const View& dst, const View& stationary, const View& moving,
              bool accumulate) override;
  void transpose_tensor(const View& dst, const View& src) override;
  void transpose_vector(const View& dst, const View& src) override;
  void activation(const View& dst, const View& src, ActFunc func, const ScalarArg& scale,
                  const std::optional<ScalarArg>& bias, ReduceCmd cmd, const float* regs,
                  const std::optional<View>& reduce_res) override;
  void tensor_reduce(const View& dst, const View& src, AluOp op, int axes, bool negate) override;
  void tensor_scalar(const View& dst, const View& src, AluOp op0, const ScalarArg& a0,
                     bool reverse0, std::optional<AluOp> op1, const ScalarArg& a1,
                     bool reverse1) override;
  void tensor_tensor(const View& dst, const View& src0, const View& src1, AluOp op,
                     Engine engine) override;
  void tensor_scalar_reduce(const View& dst, const View& src, AluOp op0, const ScalarArg& a0,
                            bool reverse0, AluOp reduce_op, const View& reduce_res) override;
  void copy_predicated(const View& dst, const std::variant<float, View>& src, const View& predicate,
                       bool reverse) override;
  void affine_select(const View& dst, const View& on_true, int64_t offset,
                     int64_t channel_multiplier, const int64_t* steps, CmpOp cmp,
                     float on_false) override;
  void iota(const View& dst, int64_t offset, int64_t channel_multiplier,
            const int64_t* steps) override;
  void memset(const View& dst, float value) override;
  void reciprocal(const View& dst, const View& src) override;
  void tensor_tensor_scan(const View& dst, const View& src0, const View& src1,
                          const ScalarArg& initial, AluOp op0, AluOp op1, bool reverse0,
                          bool reverse1) override;
  void tensor_scalar_cumulative(const View& dst, const View& src, AluOp op0, const ScalarArg& imm0,
                                AluOp op1, ReduceCmd cmd, const std::optional<ScalarArg>& imm1,
                                const float* regs) override;
  void bn_stats(const View& dst, const View& src) override;
  void bn_aggr(const View& dst, const View& src) override;
  // A pure movement of elements between partitions: each moved element keeps its term.
  void stream_shuffle(const View& dst, const View& src, const std::vector<int64_t>& mask) override;
  void tensor_partition_reduce(const View& dst, const View& src, AluOp op) override;
  void select_reduce(const View& dst, const View& predicate, const View& on_true,
                     const ScalarArg& on_false, bool reverse_pred, ReduceCmd cmd, const float* regs,
                     const std::optional<View>& reduce_res) override;
  void range_select(const View& dst, const View& on_true, const View& bound0, const View& bound1,
                    CmpOp cmp0, CmpOp cmp1, int64_t range_start, float on_false, ReduceCmd cmd,
                    const float* regs, const std::optional<View>& reduce_res) override;
  // The top-8 family and random draws are outside the term language: opaque terms.
  void opaque(const View& dst, std::string_view what) override;
  void output(const Tensor& t, const uint8_t* base, int64_t elems) override;

 private:
  struct Slot {
    TermId term;
    DType dtype;
  };
  // The term of element (r, f) of v, or an opaque term when no instruction wrote it with v's
  // dtype.
  TermId read(const View& v, int64_t r, int64_t f);
  TermId read_at(const uint8_t* p, DType dtype);
  TermId scalar(const ScalarArg& a, int64_t r);
  // The term of an activation accumulator register (fp32; +0 until first written: the machine
  // starts with zeroed registers).
  TermId reg(const float* regs, int64_t r);
  // Element p now holds term t of dtype; entries it partly overlaps are dropped.
  void store(const uint8_t* p, DType dtype, TermId t);
  // Every dst element (row-major) from fn(r, f), all computed before the first store.
  template <class Fn>
  void write_all(const View& dst, Fn&& fn);
  // Every dst element becomes a fresh opaque term (an operation outside the term language).
  void write_opaque(const View& dst, const std::string& reason);
  // select_reduce / range_select: dst = round(select(...)) per element from `choose(r, f)` (an
  // fp32 term), the Vector registers following cmd with max (model/semantics/select_reduce.cpp).
  void store_registers(const float* regs, const std::vector<TermId>& acc, int64_t rows, bool update,
                       const std::optional<View>& reduce_res);
  template <class Choose>
  void select_max(const View& dst, ReduceCmd cmd, const float* regs,
                  const std::optional<View>& reduce_res, Choose&& choose);
  TermId converted(TermId t, DType from, DType to);  // a copy between dtypes

  TermStore& ts_;
  int side_;
  size_t budget_;
  std::unordered_map<const uint8_t*, Slot> mem_;
  std::map<std::string, std::vector<TermId>> outputs_;
  // Partial overlaps between stored elements are possible only once elements of two sizes, or a
  // misaligned one, have been stored; until then store() skips the neighbour lookups.
  unsigned sizes_seen_ = 0;
  bool misaligned_ = false;
  // Scratch reused across instructions (no allocation per instruction in the steady state).
  std::vector<TermId> buf_a_, buf_b_, out_;
  std::vector<TermId> pairs_col_;  // a matmul operand column under construction
};

}  // namespace ncv::equiv

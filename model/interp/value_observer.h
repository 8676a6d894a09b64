// A run's value observer: told about every value-computing step of a run, with the operands
// resolved to Views, just before the interpreter computes it (so an in-place operand still holds
// its old value). The equivalence checker (equiv/) builds a symbolic term per element from these
// calls; addresses identify elements (a View's pointers stay valid for the whole run).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "model/ir/program.h"
#include "model/semantics/semantics.h"

namespace ncv {
inline namespace interp {

struct ValueObserver {
  virtual ~ValueObserver() = default;
  // An input tensor after loading: `elems` elements of t.dtype, row-major from `base`.
  virtual void input(const Tensor& t, const uint8_t* base, int64_t elems) = 0;
  // The instruction instance about to execute.
  virtual void instruction(const InstrStmt& s, int core) = 0;
  // The calls below mirror model/semantics/semantics.h, one per exec_* function.
  virtual void copy(const View& dst, const View& src) = 0;
  // A DMA between views of equal element count but different rows: element k to element k in
  // row-major order.
  virtual void flat_copy(const View& dst, const View& src) = 0;
  virtual void matmul(const View& dst, const View& stationary, const View& moving,
                      bool accumulate) = 0;
  virtual void transpose_tensor(const View& dst, const View& src) = 0;
  virtual void transpose_vector(const View& dst, const View& src) = 0;
  // `regs` are the engine's accumulator registers of the source's partitions (one per row).
  virtual void activation(const View& dst, const View& src, ActFunc func, const ScalarArg& scale,
                          const std::optional<ScalarArg>& bias, ReduceCmd cmd, const float* regs,
                          const std::optional<View>& reduce_res) = 0;
  virtual void tensor_reduce(const View& dst, const View& src, AluOp op, int axes, bool negate) = 0;
  virtual void tensor_scalar(const View& dst, const View& src, AluOp op0, const ScalarArg& a0,
                             bool reverse0, std::optional<AluOp> op1, const ScalarArg& a1,
                             bool reverse1) = 0;
  // `engine`: the one it runs on (GpSimd computes some int32 arithmetic exactly,
  // tensor_tensor_native_int).
  virtual void tensor_tensor(const View& dst, const View& src0, const View& src1, AluOp op,
                             Engine engine) = 0;
  virtual void tensor_scalar_reduce(const View& dst, const View& src, AluOp op0,
                                    const ScalarArg& a0, bool reverse0, AluOp reduce_op,
                                    const View& reduce_res) = 0;
  virtual void copy_predicated(const View& dst, const std::variant<float, View>& src,
                               const View& predicate, bool reverse) = 0;
  virtual void affine_select(const View& dst, const View& on_true, int64_t offset,
                             int64_t channel_multiplier, const int64_t* steps, CmpOp cmp,
                             float on_false) = 0;
  virtual void iota(const View& dst, int64_t offset, int64_t channel_multiplier,
                    const int64_t* steps) = 0;
  virtual void memset(const View& dst, float value) = 0;
  virtual void tensor_tensor_scan(const View& dst, const View& src0, const View& src1,
                                  const ScalarArg& initial, AluOp op0, AluOp op1, bool reverse0,
                                  bool reverse1) = 0;
  // `regs`: the Vector engine's accumulator registers of the source's partitions.
  virtual void tensor_scalar_cumulative(const View& dst, const View& src, AluOp op0,
                                        const ScalarArg& imm0, AluOp op1, ReduceCmd cmd,
                                        const std::optional<ScalarArg>& imm1,
                                        const float* regs) = 0;
  virtual void bn_stats(const View& dst, const View& src) = 0;
  virtual void bn_aggr(const View& dst, const View& src) = 0;
  virtual void tensor_partition_reduce(const View& dst, const View& src, AluOp op) = 0;
  // `regs`: the Vector engine's accumulator registers of on_true's partitions.
  virtual void select_reduce(const View& dst, const View& predicate, const View& on_true,
                             const ScalarArg& on_false, bool reverse_pred, ReduceCmd cmd,
                             const float* regs, const std::optional<View>& reduce_res) = 0;
  virtual void range_select(const View& dst, const View& on_true, const View& bound0,
                            const View& bound1, CmpOp cmp0, CmpOp cmp1, int64_t range_start,
                            float on_false, ReduceCmd cmd, const float* regs,
                            const std::optional<View>& reduce_res) = 0;
  virtual void reciprocal(const View& dst, const View& src) = 0;
  // nc_stream_shuffle: dst row r takes src row shuffle_source_row(mask, r), or keeps its value.
  virtual void stream_shuffle(const View& dst, const View& src,
                              const std::vector<int64_t>& mask) = 0;
  // An instruction whose values the observer does not model (the top-8 family, random draws):
  // every element of dst gets a value the observer knows nothing about.
  virtual void opaque(const View& dst, std::string_view what) = 0;
  // An output tensor after a run without a dynamic error, before it is handed to the caller.
  virtual void output(const Tensor& t, const uint8_t* base, int64_t elems) = 0;
};

}  // namespace interp
}  // namespace ncv

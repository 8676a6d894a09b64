// Internal to the interpreter: the run of one Program (interpreter.cpp: setup, walking, access
// resolution, shadow checks; interpreter_ops.cpp: per-instruction rules and execution).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/interpreter_state.h"

namespace ncv::interp {

// Thrown inside the run and turned into RunResult::error.
struct CheckFailure {
  CheckKind kind;
  std::string detail;
};

class Interp {
 public:
  Interp(const Program& p, const ParamValues& params,
         const std::map<std::string, HostTensor>& inputs, const RunOptions& opts);
  RunResult run();

 private:
  // --- setup (interpreter.cpp)
  void setup_memory();
  void load_inputs(const std::map<std::string, HostTensor>& inputs);
  // --- walking: each core is positioned at its next instruction instance; cores step in
  // lockstep, one instance each in core order.
  struct Frame {
    const std::vector<Stmt>* body = nullptr;
    size_t next = 0;
    const Loop* loop = nullptr;  // null for the kernel body
    int64_t value = 0, stop = 0, iteration = 0;
    SymbolId var = 0;  // the loop variable, interned once per loop entry (interning locks)
    // Serial of the innermost affine-loop iteration in effect in this body (0: none), and, for
    // an affine loop's frame, its loop instance and the serial in effect around it.
    uint32_t serial = 0, instance = 0, outer_serial = 0;
  };
  // One iteration of one execution (instance) of an affine loop, with the iteration of the
  // enclosing affine loop it ran in: a write is tagged with it, and a read in a different
  // iteration of a loop instance that also encloses the write is a carried dependency.
  struct AffineIteration {
    uint32_t instance = 0;
    int64_t iteration = 0;
    uint32_t parent = 0;
    const Loop* loop = nullptr;
  };
  uint32_t new_iteration(uint32_t instance, int64_t iteration, uint32_t parent, const Loop* loop);
  const InstrStmt* advance(int core);
  void count_step();
  // --- scopes and lifetimes
  void enter_scope(int core, ScopeId scope, const std::vector<Stmt>& body);
  void exit_scope(int core, const std::vector<Stmt>& body);
  // --- access resolution and shadow checks
  Resolved resolve(int core, const Access& a, const char* role);
  // `carried`: whether the read must not see another iteration's write of an enclosing affine
  // loop (false for a matmul accumulating into PSUM, the one allowed carried dependency).
  void check_read(const Resolved& r, const char* role, bool carried = true);
  void check_carried(const Resolved& r, const char* role);
  template <class F>
  void for_each_row_runs(const Resolved& r, F&& f);
  void mark_written(const Resolved& r);
  [[noreturn]] void fail_read(const Resolved& r, const char* role, int64_t partition, int64_t byte,
                              uint32_t found);
  ShadowMap& shadow(const Resolved& r);
  ShadowMap& writer_map(const Resolved& r);
  uint32_t stamp(const Resolved& r) const;
  uint32_t new_lifetime(TensorId id);
  void check_partition_rule(const Resolved& r, const char* role);
  void check_free_limit(const Resolved& r, const char* role);
  void check_psum_bank(const Resolved& r, const char* role);
  int64_t copy_offset(int core, const BufferPlacement& bp, const Tensor& t);
  [[noreturn]] void fail(CheckKind k, std::string detail);
  // --- instructions (interpreter_ops.cpp)
  void execute(int core, const InstrStmt& s);
  void exec(int core, const DmaCopy& i);
  void exec(int core, const Matmul& i);
  void exec(int core, const Transpose& i);
  void exec(int core, const Activation& i);
  void exec(int core, const TensorReduce& i);
  void exec(int core, const TensorScalar& i);
  void exec(int core, const TensorTensor& i);
  void exec(int core, const TensorScalarReduce& i);
  void exec(int core, const TensorCopy& i);
  void exec(int core, const TensorCopyPredicated& i);
  void exec(int core, const AffineSelect& i);
  void exec(int core, const Iota& i);
  void exec(int core, const Memset& i);
  void exec(int core, const Reciprocal& i);
  // helpers for the ops
  Resolved compute_operand(int core, const Access& a, const char* role, bool is_read,
                           bool carried = true);
  std::optional<ScalarArg> scalar_operand(int core, const Operand& o, const Resolved& dst,
                                          const char* role);
  void same_shape(const Resolved& a, const Resolved& b, const char* what);
  void column_shape(const Resolved& col, int64_t rows, const char* what);
  // Evaluates an affine_select/iota offset and checks the pattern against dst's view.
  int64_t affine_pattern_offset(int core, const Expr& offset, int64_t channel_multiplier,
                                const std::vector<int64_t>& steps, const Resolved& dst,
                                const char* op);
  void record(int core, Engine engine, const std::vector<const Resolved*>& reads,
              const std::vector<const Resolved*>& writes, int64_t partitions, int64_t free_elems,
              int64_t aux, uint64_t bytes, DType in, DType out, int queue);

  const Program& p_;
  const ParamValues& params_;
  Env param_env_;  // params_ bound (run() builds it once after checking them)
  const std::map<std::string, HostTensor>& inputs_;
  RunOptions opts_;
  const HwConfig& hw_;
  Allocation alloc_;
  int64_t grid_ = 1;
  int64_t sbuf_stride_ = 0, psum_stride_ = 0;  // bytes per partition in the arrays
  std::vector<CoreState> cores_;
  std::vector<HbmState> hbm_;  // indexed by TensorId (empty for on-chip tensors)
  std::vector<std::vector<TensorId>> scope_buffers_;  // buffers declared in each scope
  std::vector<uint8_t> live_;                         // per core x tensor: buffer lifetime is open
  std::vector<Lifetime> lifetimes_;                   // indexed by stamp; [0] = never written
  std::vector<AffineIteration> iterations_;           // indexed by serial; [0] = none
  uint32_t loop_instances_ = 0;
  RunResult result_;
  // Context of the instance being executed, for error messages.
  const InstrStmt* current_ = nullptr;
  int current_core_ = 0;
  std::vector<std::vector<Frame>> frames_;      // per core
  std::vector<std::vector<int64_t>> shapes_;    // concrete shape per tensor
  std::vector<std::vector<int64_t>> estrides_;  // element strides per tensor dim
  int64_t steps_ = 0;
};

}  // namespace ncv::interp

// Internal to the interpreter: the Interpreter that runs one Program. It holds the run's state
// (machine.h) and three units of its own — access resolution (resolve.h), the shadow checks of
// value runs (shadow_checks.h), the trace (trace_recorder.h) — and does the rest in:
// interpreter.cpp (a run from params to RunResult: prepare, walk, check that outputs were written,
// turn a failure into a DynamicError), walk.cpp (stepping the lockstep cores through loops and
// scopes), operand_rules.cpp (the ISA rules of each instance, model/isa/rules.h), exec.cpp (each
// instruction's execution).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/interp/interpreter.h"
#include "model/interp/machine.h"
#include "model/interp/resolve.h"
#include "model/interp/resolved.h"
#include "model/interp/shadow_checks.h"
#include "model/interp/trace_recorder.h"
#include "model/ir/allocator.h"
#include "model/isa/rules.h"

namespace ncv {
inline namespace interp {

// "[rows, free elements]" of a resolved view, for messages.
std::string shape_str(const Resolved& r);

// What a value run does at a read of bytes the reader's lifetime did not write (run_program
// chooses): fail it (RunOptions::strict_reads), or go on, recording the first such read and
// leaving those bytes as they are, or filling them before the read with zeros or with a pattern
// mixed from their address (reruns that give the bytes other contents).
enum class ForeignReads { fail, record, fill_zeros, fill_mixed };

// What a value run does at an activation input outside its function's documented range
// (run_program chooses; semantics.h ActOutOfRange): write `substitute` there (by default the
// default NaN, act_apply's value), and with `record` keep the first such input in
// RunResult::undefined_activation. Strict runs neither record nor vary it.
struct ActivationRange {
  bool record = false;
  float substitute = ActOutOfRange{}.substitute;
};

class Interpreter final : ForeignReadSink {
 public:
  Interpreter(const Program& p, const ParamValues& params,
              const std::map<std::string, HostTensor>& inputs, const RunOptions& opts,
              ForeignReads foreign = ForeignReads::fail, ActivationRange act = {});
  RunResult run();

 private:
  // --- reads of bytes the reader's lifetime did not write, under ForeignReads other than fail
  void foreign_read(CheckKind kind, const std::string& detail) override;
  void foreign_bytes(const Resolved& r, const ShadowMap::Piece& piece) override;

  // --- a run (interpreter.cpp)
  void prepare();
  void setup_memory();
  void load_inputs();
  void walk();
  void check_outputs_written();
  DynamicError to_error(CheckKind kind, std::string detail) const;
  void collect_outputs();

  // --- walking (walk.cpp): each core is positioned at its next instruction instance; cores step
  // in lockstep, one instance each in core order.
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
  const InstrStmt* advance(int core);
  void count_step();
  void enter_scope(int core, ScopeId scope);
  void exit_scope(int core, const std::vector<Stmt>& body);
  // The affine-loop iteration the executing core is in (0: none).
  uint32_t current_serial() const { return frames_[current_core_].back().serial; }

  // --- the units an instance talks to: access resolution, the shadow checks (value runs)
  Resolved resolve(int core, const Access& a, const char* role, bool oob_skip = false) {
    return resolver_.resolve(core, a, role, shadows_ ? &*shadows_ : nullptr, current_serial(),
                             oob_skip);
  }
  void check_read(const Resolved& r, const char* role, bool carried = true) {
    if (shadows_) shadows_->check_read(r, role, current_serial(), carried);
  }
  void mark_written(const Resolved& r) {
    if (shadows_) shadows_->mark_written(r, current_serial());
  }

  // --- the ISA rules of one instance (operand_rules.cpp)
  Resolved compute_operand(int core, const Access& a, const char* role, bool is_read,
                           bool carried = true);
  void check_partition_rule(const Resolved& r, const char* role);
  void check_free_limit(const Resolved& r, const char* role);
  void check_psum_bank(const Resolved& r, const char* role);
  void same_shape(const Resolved& a, const Resolved& b, const char* what);
  void column_shape(const Resolved& col, int64_t rows, const char* what);
  // Evaluates an affine_select/iota offset and checks the pattern against dst's view.
  int64_t affine_pattern_offset(int core, const Expr& offset, int64_t channel_multiplier,
                                const std::vector<int64_t>& steps, const Resolved& dst,
                                const char* op);
  [[noreturn]] void fail(CheckKind k, std::string detail) { fail_check(k, std::move(detail)); }
  [[noreturn]] void fail(Rule r, std::string detail) { fail_check(r, std::move(detail)); }

  // --- instructions (exec.cpp)
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
  void exec(int core, const TensorTensorScan& i);
  void exec(int core, const TensorScalarCumulative& i);
  void exec(int core, const BnStats& i);
  void exec(int core, const BnAggr& i);
  // The gathers and the stream shuffle (exec_gather.cpp).
  void exec(int core, const LocalGather& i);
  void exec(int core, const StreamShuffle& i);
  void exec(int core, const GatherFlattened& i);
  // tensor_partition_reduce, select_reduce, sequence_bounds, range_select (exec_select.cpp).
  void exec(int core, const TensorPartitionReduce& i);
  void exec(int core, const SelectReduce& i);
  void exec(int core, const SequenceBounds& i);
  void exec(int core, const RangeSelect& i);
  // nc_matmul_mx and quantize_mx (exec_mx.cpp).
  void exec(int core, const MatmulMx& i);
  void exec(int core, const QuantizeMx& i);
  void mx_scale_shape(const Resolved& scale, int64_t data_rows, int64_t data_free,
                      const char* what);
  // The Vector accumulators' defined state (CoreState::vec_regs_undefined): `reduce` may not
  // continue an undefined register; a command that starts the register defines it, and an idle
  // select_reduce (`idle_clobbers`) leaves it undefined.
  void check_vec_regs_defined(int core, int64_t begin, int64_t rows, ReduceCmd cmd, const char* op);
  void set_vec_regs_state(int core, int64_t begin, int64_t rows, ReduceCmd cmd, bool idle_clobbers);
  // The top-8 family and the random draws (exec_top8.cpp).
  void exec(int core, const Max8& i);
  void exec(int core, const FindIndex8& i);
  void exec(int core, const MatchReplace8& i);
  void exec(int core, const Rand& i);
  void exec(int core, const Dropout& i);
  // The 8-value rule (Rule::top8_values) and the data size rule (Rule::top8_source_size).
  void top8_values_shape(const Resolved& r, int64_t rows, const char* what);
  void top8_source_size(const Resolved& r, int64_t min_free, const char* what);
  void record(int core, Engine engine, const std::vector<const Resolved*>& reads,
              const std::vector<const Resolved*>& writes, const EventSizes& sizes) {
    add_load(m_.cores[static_cast<size_t>(core)].load, engine, sizes.free_elems, hw_);
    if (!trace_.enabled()) return;
    loop_values_.clear();
    for (const Frame& f : frames_[static_cast<size_t>(core)]) {
      if (f.loop) loop_values_.push_back(f.value);
    }
    trace_.record(*current_, core, engine, loop_values_, reads, writes, sizes);
  }

  const Program& p_;
  const ParamValues& params_;
  Env param_env_;  // params_ bound (prepare() builds it once after checking them)
  const std::map<std::string, HostTensor>& inputs_;
  RunOptions opts_;
  const HwConfig& hw_;
  Machine m_;
  AccessResolver resolver_{m_};
  std::optional<ShadowTracker> shadows_;  // value runs only
  ForeignReads foreign_ = ForeignReads::fail;
  // Activation inputs outside their function's range: the substitute and the count over the run
  // (act_oor_), and whether the first is recorded (exec.cpp exec(Activation)).
  ActOutOfRange act_oor_;
  bool act_record_ = false;
  TraceRecorder trace_;
  std::vector<std::vector<TensorId>> scope_buffers_;  // buffers declared in each scope
  std::vector<ScopeId> instr_scope_;                  // innermost loop scope per instruction
  // Per instruction: some loop around it has bounds that mention the program id (a guard of a
  // kernel traced once per program, the source's `if prg_id == ...`); walk()'s rendezvous pairs
  // two such transfers that name each other.
  std::vector<bool> in_program_guard_;
  RunResult result_;
  // Per memory, its capacity when the live peak is over it under RunOptions::spills_allowed (0:
  // the peak fits): execute() then checks each instruction's own operands against it.
  int64_t sbuf_spill_capacity_ = 0, psum_spill_capacity_ = 0;
  void check_operands_fit(int core, const InstrStmt& s);
  // Context of the instance being executed, for error messages.
  const InstrStmt* current_ = nullptr;
  int current_core_ = 0;
  std::vector<std::vector<Frame>> frames_;  // per core
  std::vector<int64_t> loop_values_;        // record()'s scratch: the enclosing loops' values
  int64_t steps_ = 0;
};

}  // namespace interp
}  // namespace ncv

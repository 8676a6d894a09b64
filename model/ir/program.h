// A kernel: params and their domain, tensors, and a body of declarations, instructions and
// loops, all symbolic. Built once by the builder (or parsed from .nkir) and read
// by the interpreter, the timing model and the solver.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "model/ir/instruction.h"
#include "model/ir/param.h"
#include "model/ir/tensor.h"

namespace ncv {
inline namespace ir {

enum class LoopKind : uint8_t { affine, sequential };

struct Stmt;

// for var in [start, stop) by step. `affine`: no carried dependency, iterations may overlap in
// time (PSUM accumulation excepted); `sequential`: carried dependency.
struct Loop {
  std::string var;
  Expr start, stop;
  int64_t step = 1;
  LoopKind kind = LoopKind::affine;
  ScopeId scope = 0;  // buffers declared in the body live for one iteration of this loop
  std::vector<Stmt> body;
  bool operator==(const Loop&) const;
  Expr var_expr() const { return Expr::var(var); }
};

struct DeclStmt {  // declaration point of an on-chip buffer in its scope
  TensorId tensor = 0;
  bool operator==(const DeclStmt&) const = default;
};

// Where part of a program came from (a traced kernel's file and lines): carried with the program
// but not part of what it computes, so any two compare equal. A traced kernel then equals its
// registered twin, an edit that moves a call to another line does not change the program, and the
// owners keep their defaulted operator== whatever fields they gain.
template <class T>
struct Provenance {
  T value{};
  bool operator==(const Provenance&) const { return true; }
};

struct InstrStmt {
  uint32_t id = 0;  // program-order index, 0..Program::num_instructions-1
  Instruction ins;
  // The line of Program::source_file whose call emitted this instruction (traced NKI kernels,
  // `.nkir` `@line N`); 0 = unknown (kernels built in C++ leave it 0).
  Provenance<uint32_t> source_line;
  bool operator==(const InstrStmt&) const = default;
};

struct Stmt {
  std::variant<DeclStmt, InstrStmt, Loop> node;
  bool operator==(const Stmt&) const = default;
};

struct Program {
  std::string name;
  std::vector<Param> params;
  std::vector<Relation> relations;
  // SPMD: number of program instances (NeuronCores), each with its own SBUF/PSUM and sharing
  // HBM. The implicit param `program_id` (kProgramIdParam) is the instance index.
  Expr grid = Expr(1);
  std::vector<Tensor> tensors;  // indexed by TensorId
  std::vector<Stmt> body;
  uint32_t num_instructions = 0;
  uint32_t num_scopes = 1;  // scope 0 is the body
  // The build options (kernels::Options: name -> value) the program was made with, which the
  // `.nkir` `options` line records, so that a file checked `--like` a kernel borrows the spec and
  // contract of the options it was built for. Names are identifiers, values identifiers or
  // decimal numbers. Empty: not recorded (a program built in C++, a file without the line).
  std::map<std::string, std::string> build_options;
  // The kernel file the program was traced from (the `.nkir` `source "FILE"` line; the NKI
  // front end writes the basename), which InstrStmt::source_line counts lines of. Empty: none
  // (a program built in C++).
  Provenance<std::string> source_file;
  bool operator==(const Program&) const = default;

  const Tensor& tensor(TensorId id) const { return tensors.at(id); }
  std::optional<TensorId> find_tensor(std::string_view name) const;
  const Param* find_param(std::string_view name) const;
};

inline constexpr std::string_view kProgramIdParam = "program_id";

// The most program instances the model runs (the grid's upper limit): the interpreter keeps a
// core's state per instance, and a grid of 10^12 made every per-core loop of a run or a capacity
// check run for hours. A constant grid beyond it is an invalid program (validate_program); one
// that depends on params fails `well_formed` where it leaves [1, kMaxGrid].
inline constexpr int64_t kMaxGrid = 64;

// Calls f(loop_stack, stmt) for every statement in program order (depth first).
// loop_stack holds the enclosing loops, outermost first.
template <typename F>
void for_each_stmt(const std::vector<Stmt>& body, std::vector<const Loop*>& loops, F&& f) {
  for (const Stmt& s : body) {
    f(loops, s);
    if (auto* l = std::get_if<Loop>(&s.node)) {
      loops.push_back(l);
      for_each_stmt(l->body, loops, f);
      loops.pop_back();
    }
  }
}
template <typename F>
void for_each_stmt(const Program& p, F&& f) {
  std::vector<const Loop*> loops;
  for_each_stmt(p.body, loops, f);
}

}  // namespace ir
}  // namespace ncv

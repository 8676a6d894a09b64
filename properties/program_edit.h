// Editing a built Program in place, for the bug catalogue: find instructions by kind and by the
// tensors they access, find loops by variable name, then change what they do (an index
// expression, a loop bound, a flag, a placement, the position of a statement, a new buffer).
// Every finder throws std::logic_error naming what it looked for and did not find, so that an
// edit written against a kernel's structure fails loudly when that kernel changes instead of
// silently editing something else. finish_edit() renumbers ids and reruns the model's static
// validation, so an edited Program is as valid as a built one.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "model/ir/program.h"

namespace ncv::props {

// Where a statement sits: the body that holds it, its index there, and the loops that enclose it
// (outermost first). Valid until the statement tree is next changed (inserting or moving a
// statement invalidates every site: find again afterwards).
struct StmtSite {
  std::vector<Stmt>* body = nullptr;
  size_t index = 0;
  std::vector<Loop*> loops;

  Stmt& stmt() const { return (*body)[index]; }
  InstrStmt& instr() const;  // throws std::logic_error when the statement is not an instruction
  Loop& loop() const;        // throws std::logic_error when the statement is not a loop
  // The scope a buffer declared next to this statement belongs to (0: the kernel body).
  ScopeId scope() const { return loops.empty() ? 0 : loops.back()->scope; }
};

// Which instructions to match. Empty fields match anything.
struct InstrQuery {
  std::string op;              // text-form name: "matmul", "activation", "tensor_copy", ...
  std::string writes;          // name of a tensor the instruction writes
  std::string reads;           // name of a tensor the instruction reads
  std::string innermost_loop;  // variable of the innermost enclosing loop ("" = any)
  std::string describe() const;
};

// Every matching instruction, in program order (possibly none).
std::vector<StmtSite> find_instructions(Program& p, const InstrQuery& q);
// The one matching instruction; throws std::logic_error when there is none or more than one.
StmtSite find_instruction(Program& p, const InstrQuery& q);

// Every loop over `var` whose body (at any depth) holds an instruction matching `containing`.
std::vector<StmtSite> find_loops(Program& p, std::string_view var,
                                 const InstrQuery& containing = {});
// The one such loop; throws std::logic_error when there is none or more than one.
StmtSite find_loop(Program& p, std::string_view var, const InstrQuery& containing = {});
// Every loop of the program, in program order.
std::vector<StmtSite> all_loops(Program& p);

// The instruction at `site` as operation T (e.g. Matmul); throws std::logic_error naming the
// expected and the actual operation when it is another one.
template <typename T>
T& instruction_as(const StmtSite& site);

// The tensor called `name`; throws std::logic_error when there is none.
Tensor& find_tensor(Program& p, std::string_view name);
// The accesses of `ins` (written and read, each once) to the tensor called `name`; the one such
// access, throwing std::logic_error when there is none or more than one.
std::vector<Access*> accesses_to(const Program& p, Instruction& ins, std::string_view name);
Access& access_to(const Program& p, Instruction& ins, std::string_view name);

// The substitution of model/ir/expr.h's substitute in every start and size of an access; throws
// std::logic_error when the access does not mention `from` (the edit would change nothing).
void substitute(Access& a, const Expr& from, const Expr& to);

// The view of a whole tensor (every dimension from 0, full size, step 1).
Access whole(const Tensor& t);
// A statement holding `ins` (its id is assigned by finish_edit).
Stmt instruction_stmt(Instruction ins);

// Inserts `s` right before / after the statement at `anchor`.
void insert_before(const StmtSite& anchor, Stmt s);
void insert_after(const StmtSite& anchor, Stmt s);
// Moves the statement at `moved` to just before the one at `anchor`; both must sit in the same
// body (throws std::logic_error otherwise).
void move_before(const StmtSite& moved, const StmtSite& anchor);
// Declares a new on-chip buffer `t` (its name must be new) in the scope of `anchor`, right
// before it; returns its id (valid until finish_edit renumbers the tensors).
TensorId declare_buffer(Program& p, const StmtSite& anchor, Tensor t);

// Renumbers ids (as Builder::finish does) and runs the model's static validation. Throws
// std::logic_error carrying the validator's message when the edit broke a static rule: the
// catalogue's bugs must show at run time or in values, never as a build error.
Program finish_edit(Program p);

[[noreturn]] void throw_wrong_operation(const StmtSite& site, std::string_view expected);

template <typename T>
T& instruction_as(const StmtSite& site) {
  Instruction& ins = site.instr().ins;
  if (T* t = std::get_if<T>(&ins)) return *t;
  throw_wrong_operation(site, op_name(Instruction(T{})));
}

}  // namespace ncv::props

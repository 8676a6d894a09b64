#include "properties/program_edit.h"

#include <algorithm>
#include <stdexcept>

#include "model/ir/builder.h"
#include "model/ir/printer.h"

namespace ncv::props {

namespace {

bool accesses_tensor(const Program& p, const std::vector<const Access*>& accesses,
                     std::string_view name) {
  return std::any_of(accesses.begin(), accesses.end(),
                     [&](const Access* a) { return p.tensor(a->tensor).name == name; });
}

bool matches(const Program& p, const InstrQuery& q, const std::vector<Loop*>& loops,
             const Instruction& ins) {
  if (!q.op.empty() && op_name(ins) != q.op) return false;
  if (!q.writes.empty() && !accesses_tensor(p, written_accesses(ins), q.writes)) return false;
  if (!q.reads.empty() && !accesses_tensor(p, read_accesses(ins), q.reads)) return false;
  if (!q.innermost_loop.empty() && (loops.empty() || loops.back()->var != q.innermost_loop)) {
    return false;
  }
  return true;
}

// Calls f(site) for every statement under `body`, depth first in program order.
template <typename F>
void walk(std::vector<Stmt>& body, std::vector<Loop*>& loops, F&& f) {
  for (size_t k = 0; k < body.size(); ++k) {
    f(StmtSite{&body, k, loops});
    if (auto* l = std::get_if<Loop>(&body[k].node)) {
      loops.push_back(l);
      walk(l->body, loops, f);
      loops.pop_back();
    }
  }
}

bool contains_match(const Program& p, Loop& loop, std::vector<Loop*> loops, const InstrQuery& q) {
  bool found = false;
  loops.push_back(&loop);
  walk(loop.body, loops, [&](const StmtSite& s) {
    if (auto* i = std::get_if<InstrStmt>(&s.stmt().node))
      found = found || matches(p, q, s.loops, i->ins);
  });
  return found;
}

StmtSite the_one(std::vector<StmtSite> found, const std::string& what, const Program& p) {
  if (found.size() == 1) return found.front();
  throw std::logic_error("kernel '" + p.name + "': expected exactly one " + what + ", found " +
                         std::to_string(found.size()));
}

}  // namespace

InstrStmt& StmtSite::instr() const {
  if (auto* i = std::get_if<InstrStmt>(&stmt().node)) return *i;
  throw std::logic_error("program edit: the statement is not an instruction");
}

Loop& StmtSite::loop() const {
  if (auto* l = std::get_if<Loop>(&stmt().node)) return *l;
  throw std::logic_error("program edit: the statement is not a loop");
}

std::string InstrQuery::describe() const {
  std::string s = op.empty() ? "instruction" : op;
  if (!writes.empty()) s += " writing '" + writes + "'";
  if (!reads.empty()) s += " reading '" + reads + "'";
  if (!innermost_loop.empty()) s += " directly in the loop over '" + innermost_loop + "'";
  return s;
}

std::vector<StmtSite> find_instructions(Program& p, const InstrQuery& q) {
  std::vector<StmtSite> out;
  std::vector<Loop*> loops;
  walk(p.body, loops, [&](const StmtSite& s) {
    if (auto* i = std::get_if<InstrStmt>(&s.stmt().node); i && matches(p, q, s.loops, i->ins)) {
      out.push_back(s);
    }
  });
  return out;
}

StmtSite find_instruction(Program& p, const InstrQuery& q) {
  return the_one(find_instructions(p, q), q.describe(), p);
}

std::vector<StmtSite> find_loops(Program& p, std::string_view var, const InstrQuery& containing) {
  std::vector<StmtSite> out;
  std::vector<Loop*> loops;
  walk(p.body, loops, [&](const StmtSite& s) {
    if (auto* l = std::get_if<Loop>(&s.stmt().node);
        l && l->var == var && contains_match(p, *l, s.loops, containing)) {
      out.push_back(s);
    }
  });
  return out;
}

StmtSite find_loop(Program& p, std::string_view var, const InstrQuery& containing) {
  return the_one(find_loops(p, var, containing),
                 "loop over '" + std::string(var) + "' holding a " + containing.describe(), p);
}

std::vector<StmtSite> all_loops(Program& p) {
  std::vector<StmtSite> out;
  std::vector<Loop*> loops;
  walk(p.body, loops, [&](const StmtSite& s) {
    if (std::holds_alternative<Loop>(s.stmt().node)) out.push_back(s);
  });
  return out;
}

void throw_wrong_operation(const StmtSite& site, std::string_view expected) {
  throw std::logic_error("program edit: expected a " + std::string(expected) +
                         " instruction, found " + std::string(op_name(site.instr().ins)));
}

Tensor& find_tensor(Program& p, std::string_view name) {
  for (Tensor& t : p.tensors) {
    if (t.name == name) return t;
  }
  throw std::logic_error("kernel '" + p.name + "': no tensor '" + std::string(name) + "'");
}

std::vector<Access*> accesses_to(const Program& p, Instruction& ins, std::string_view name) {
  std::vector<Access*> out;
  auto collect = [&](const std::vector<const Access*>& accesses) {
    for (const Access* a : accesses) {
      // The pointers address members of `ins`, which the caller holds mutably.
      auto* m = const_cast<Access*>(a);
      if (p.tensor(a->tensor).name == name && std::find(out.begin(), out.end(), m) == out.end()) {
        out.push_back(m);
      }
    }
  };
  collect(written_accesses(ins));
  collect(read_accesses(ins));
  return out;
}

Access& access_to(const Program& p, Instruction& ins, std::string_view name) {
  std::vector<Access*> found = accesses_to(p, ins, name);
  if (found.size() == 1) return *found.front();
  throw std::logic_error("kernel '" + p.name + "': expected one access to '" + std::string(name) +
                         "' in `" + print_instruction(p, ins) + "`, found " +
                         std::to_string(found.size()));
}

void substitute(Access& a, const Expr& from, const Expr& to) {
  const Access before = a;
  for (AccessDim& d : a.dims) {
    d.start = substitute(d.start, from, to);
    d.size = substitute(d.size, from, to);
  }
  if (a == before) {
    throw std::logic_error("program edit: the access does not mention `" + from.str() + "`");
  }
}

Access whole(const Tensor& t) {
  Access a;
  a.tensor = t.id;
  for (const Expr& extent : t.shape) a.dims.push_back(AccessDim{Expr(0), extent, 1});
  return a;
}

Stmt instruction_stmt(Instruction ins) {
  return Stmt{InstrStmt{0, std::move(ins)}};
}

void insert_before(const StmtSite& anchor, Stmt s) {
  anchor.body->insert(anchor.body->begin() + static_cast<std::ptrdiff_t>(anchor.index),
                      std::move(s));
}

void insert_after(const StmtSite& anchor, Stmt s) {
  anchor.body->insert(anchor.body->begin() + static_cast<std::ptrdiff_t>(anchor.index + 1),
                      std::move(s));
}

void move_before(const StmtSite& moved, const StmtSite& anchor) {
  if (moved.body != anchor.body) {
    throw std::logic_error("program edit: move_before needs both statements in one body");
  }
  auto& body = *moved.body;
  const auto from = body.begin() + static_cast<std::ptrdiff_t>(moved.index);
  const auto to = body.begin() + static_cast<std::ptrdiff_t>(anchor.index);
  if (from > to) {
    std::rotate(to, from, from + 1);
  } else if (from < to) {
    std::rotate(from, from + 1, to);
  }
}

TensorId declare_buffer(Program& p, const StmtSite& anchor, Tensor t) {
  if (p.find_tensor(t.name)) {
    throw std::logic_error("kernel '" + p.name + "': a tensor '" + t.name + "' exists already");
  }
  t.id = static_cast<TensorId>(p.tensors.size());
  t.kind = TensorKind::Buffer;
  t.scope = anchor.scope();
  p.tensors.push_back(t);
  insert_before(anchor, Stmt{DeclStmt{t.id}});
  return t.id;
}

Program finish_edit(Program p) {
  canonicalize_ids(p);
  try {
    validate_program(p);
  } catch (const BuildError& e) {
    throw std::logic_error(std::string("program edit broke a static rule: ") + e.what());
  }
  return p;
}

}  // namespace ncv::props

#include "equiv/structural.h"

#include <variant>
#include <vector>

namespace ncv::equiv {

namespace {

using ir::Program;
using ir::Stmt;

// The body with every DMA queue set to 0.
void clear_queues(std::vector<Stmt>& body) {
  for (Stmt& s : body) {
    if (auto* l = std::get_if<ir::Loop>(&s.node)) {
      clear_queues(l->body);
    } else if (auto* i = std::get_if<ir::InstrStmt>(&s.node)) {
      if (auto* d = std::get_if<ir::DmaCopy>(&i->ins)) d->queue = 0;
    }
  }
}

// The tensors with the names of the kernel's own buffers (not its inputs and outputs, which
// the caller binds by name) cleared.
std::vector<ir::Tensor> unnamed_buffers(const Program& p) {
  std::vector<ir::Tensor> out = p.tensors;
  for (ir::Tensor& t : out) {
    if (t.kind != ir::TensorKind::Input && t.kind != ir::TensorKind::Output) t.name.clear();
  }
  return out;
}

std::string domain_words(const Program& p) {
  if (p.params.empty()) return "the program's one shape (it has no shape params)";
  std::string s;
  for (const ir::Param& q : p.params) {
    if (!s.empty()) s += ", ";
    s += q.name + " in [" + std::to_string(q.lo) + ", " + std::to_string(q.hi) + "]";
    if (q.multiple_of > 1) s += " multiple of " + std::to_string(q.multiple_of);
  }
  if (!p.relations.empty()) s += " (and the domain's relations)";
  return s;
}

}  // namespace

std::optional<std::string> same_program_up_to_names_and_queues(const Program& a, const Program& b) {
  if (!(a.params == b.params) || !(a.relations == b.relations) || !(a.grid == b.grid) ||
      a.num_scopes != b.num_scopes || a.num_instructions != b.num_instructions ||
      unnamed_buffers(a) != unnamed_buffers(b)) {
    return std::nullopt;
  }
  std::vector<Stmt> ba = a.body, bb = b.body;
  clear_queues(ba);
  clear_queues(bb);
  if (!(ba == bb)) return std::nullopt;
  return domain_words(a);
}

}  // namespace ncv::equiv

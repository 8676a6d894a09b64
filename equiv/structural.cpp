#include "equiv/structural.h"

#include <map>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <variant>
#include <vector>

#include "equiv/peel.h"
#include "equiv/reorder.h"
#include "equiv/shapes.h"
#include "model/ir/printer.h"
#include "model/nkir/parse.h"

namespace ncv::equiv {

namespace {

using ir::Program;
using ir::Stmt;

// Whether every operand of a tensor_tensor is a float tensor: then its engine does not change a
// value (model/semantics/elementwise.cpp: only integer operands take the GpSimd engine's native
// integer path).
bool float_operands(const Program& p, const ir::TensorTensor& t) {
  for (const ir::Access* a : {&t.dst, &t.src0, &t.src1}) {
    if (a->tensor >= p.tensors.size() || !is_float(p.tensors[a->tensor].dtype)) return false;
  }
  return true;
}

// The body with what no value depends on cleared: every DMA queue (the interpreter reads it only
// for the timing trace), and the engine pinned on a tensor_scalar, tensor_copy, memset,
// reciprocal or float tensor_tensor (one semantics function for every engine; an engine the
// generation lacks fails the run, which the concrete cases show). A transpose's engine stays: the
// Tensor engine's identity matmul turns -0 into +0.
void clear_queues(std::vector<Stmt>& body, const Program& p) {
  for (Stmt& s : body) {
    if (auto* l = std::get_if<ir::Loop>(&s.node)) {
      clear_queues(l->body, p);
    } else if (auto* i = std::get_if<ir::InstrStmt>(&s.node)) {
      if (auto* d = std::get_if<ir::DmaCopy>(&i->ins)) d->queue = 0;
      if (auto* x = std::get_if<ir::TensorScalar>(&i->ins)) x->engine.reset();
      if (auto* x = std::get_if<ir::TensorCopy>(&i->ins)) x->engine.reset();
      if (auto* x = std::get_if<ir::Memset>(&i->ins)) x->engine.reset();
      if (auto* x = std::get_if<ir::Reciprocal>(&i->ins)) x->engine.reset();
      if (auto* x = std::get_if<ir::TensorTensor>(&i->ins); x && float_operands(p, *x)) {
        x->engine.reset();
      }
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

// Whether b's params accept every value a's accept (a wider range, a coarser grid): the claim is
// for a's domain, where b is then defined too.
bool params_cover(const Program& a, const Program& b) {
  return domain_gap(a, b).empty();
}

bool same_up_to_names_and_queues(const Program& a, const Program& b) {
  if (!params_cover(a, b) || !(a.relations == b.relations) || !(a.grid == b.grid) ||
      a.num_scopes != b.num_scopes || a.num_instructions != b.num_instructions ||
      unnamed_buffers(a) != unnamed_buffers(b)) {
    return false;
  }
  std::vector<Stmt> ba = a.body, bb = b.body;
  clear_queues(ba, a);
  clear_queues(bb, b);
  return ba == bb;
}

// `p` with its loop variables renamed __lv0, __lv1, ... in the order their loops are printed: an
// alpha-renaming done on the program's text (a loop variable is an identifier of the loop's
// block, whose range is read outside it) and parsed back. nullopt where it is not certainly one:
// a name `__lv` already in the text, a loop variable named like a param or a tensor, or a text
// the parser refuses (a renamed token that was not the variable, e.g. an operator's name).
std::optional<Program> with_canonical_loop_variables(const Program& p) {
  const std::string text = ir::print_program(p);
  if (text.find("__lv") != std::string::npos) return std::nullopt;
  std::vector<std::string> taken;
  for (const ir::Param& q : p.params) taken.push_back(q.name);
  for (const ir::Tensor& t : p.tensors) taken.push_back(t.name);
  static const std::regex header(R"(^(\s*)for ([A-Za-z_][A-Za-z0-9_]*) in (.*)\{$)");
  std::vector<std::pair<std::string, std::string>> scopes;  // (variable, canonical), innermost last
  int next = 0;
  auto renamed = [&scopes](std::string line) {
    std::map<std::string, std::string> now;  // an inner loop's variable shadows an outer one's
    for (const auto& [from, to] : scopes) now[from] = to;
    for (const auto& [from, to] : now) {
      line = std::regex_replace(line, std::regex("\\b" + from + "\\b"), to);
    }
    return line;
  };
  std::istringstream in(text);
  std::string out, line;
  std::smatch m;
  while (std::getline(in, line)) {
    const size_t first = line.find_first_not_of(' ');
    if (std::regex_match(line, m, header)) {
      const std::string var = m[2].str(), canonical = "__lv" + std::to_string(next++);
      for (const std::string& t : taken) {
        if (t == var) return std::nullopt;
      }
      out += m[1].str() + "for " + canonical + " in " + renamed(m[3].str()) + "{\n";
      scopes.emplace_back(var, canonical);
    } else if (first != std::string::npos && line.substr(first) == "}") {
      if (scopes.empty()) return std::nullopt;
      scopes.pop_back();
      out += line + "\n";
    } else {
      out += renamed(line) + "\n";
    }
  }
  try {
    return parse_program(out, p.name + " (loop variables renamed)");
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// Equal up to names and queues as they are, or with canonical loop variables.
bool same_up_to_renaming(const Program& a, const Program& b) {
  if (same_up_to_names_and_queues(a, b)) return true;
  const std::optional<Program> ca = with_canonical_loop_variables(a);
  const std::optional<Program> cb = with_canonical_loop_variables(b);
  return ca && cb && same_up_to_names_and_queues(*ca, *cb);
}

// Why a and b, and their canonical forms ca and cb, are not one program (they are not).
std::string difference(const Program& a, const Program& b, const Program& ca, const Program& cb) {
  if (!params_cover(a, b) || !(a.relations == b.relations)) {
    return "the domains differ: original " + domain_words(a) + ", rewrite " + domain_words(b);
  }
  if (!(a.grid == b.grid)) return "the SPMD grids differ";
  const std::vector<ir::Tensor> ta = unnamed_buffers(a), tb = unnamed_buffers(b);
  if (ta.size() != tb.size()) {
    return "the programs declare " + std::to_string(ta.size()) + " and " +
           std::to_string(tb.size()) + " tensors";
  }
  for (size_t i = 0; i < ta.size(); ++i) {
    if (!(ta[i] == tb[i])) {
      return "tensor #" + std::to_string(i) + " differs (original '" + a.tensors[i].name +
             "', rewrite '" + b.tensors[i].name + "': kind, memory, dtype, shape or placement)";
    }
  }
  // The canonical programs' text, buffers named by id, compared line by line.
  auto canonical_lines = [](const Program& canonical) {
    Program c = canonical;
    if (std::optional<Program> r = with_canonical_loop_variables(c)) c = std::move(*r);
    for (ir::Tensor& t : c.tensors) {
      if (t.kind != ir::TensorKind::Input && t.kind != ir::TensorKind::Output) {
        t.name = "buf" + std::to_string(t.id);
      }
    }
    clear_queues(c.body, c);
    std::vector<std::string> lines;
    std::istringstream in(ir::print_program(c));
    for (std::string line; std::getline(in, line);) {
      const size_t first = line.find_first_not_of(' ');
      if (first == std::string::npos || line[first] == '#' || line.rfind("kernel ", 0) == 0 ||
          line.rfind("source ", 0) == 0) {
        continue;
      }
      line = line.substr(first);
      if (const size_t at = line.find(" @line "); at != std::string::npos) line.resize(at);
      lines.push_back(line);
    }
    return lines;
  };
  const std::vector<std::string> la = canonical_lines(ca), lb = canonical_lines(cb);
  for (size_t i = 0; i < std::max(la.size(), lb.size()); ++i) {
    const std::string x = i < la.size() ? la[i] : "(end)", y = i < lb.size() ? lb[i] : "(end)";
    if (x != y) {
      return "statement " + std::to_string(i + 1) + " of the canonical programs: original `" + x +
             "`, rewrite `" + y + "`";
    }
  }
  return "the programs differ in a way their text does not show";
}

}  // namespace

Layer0Comparison compare_layer0(const Program& a, const Program& b) {
  if (same_up_to_renaming(a, b)) return {domain_words(a), ""};
  // Peeled iterations folded back, commuting statements reordered and loops split as well: both
  // programs in canonical form.
  const Program ca = with_canonical_statement_order(without_peeled_iterations(a));
  const Program cb = with_canonical_statement_order(without_peeled_iterations(b));
  if (same_up_to_renaming(ca, cb)) return {domain_words(a), ""};
  return {std::nullopt, difference(a, b, ca, cb)};
}

std::optional<std::string> same_program_up_to_layer0(const Program& a, const Program& b) {
  return compare_layer0(a, b).domain;
}

std::string layer0_difference(const Program& a, const Program& b) {
  return compare_layer0(a, b).difference;
}

}  // namespace ncv::equiv

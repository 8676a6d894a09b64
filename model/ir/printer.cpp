// The .nkir printer (the parser is model/nkir/parser.cpp; the grammar is model/nkir/NKIR.md).
#include "model/ir/printer.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "model/ir/instruction_schema.h"

namespace ncv {
inline namespace ir {

std::string format_float(float f) {
  uint32_t bits = std::bit_cast<uint32_t>(f);
  if (std::isnan(f)) {
    if (bits == kCanonicalNaN) return "nan";
    if (bits == (kCanonicalNaN | kSignBit)) return "-nan";
    char buf[24];
    std::snprintf(buf, sizeof buf, "nan(0x%08x)", static_cast<unsigned>(bits));
    return buf;
  }
  if (std::isinf(f)) return f < 0 ? "-inf" : "inf";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, f);  // shortest exact round trip
  return std::string(buf, res.ptr);
}

namespace {

const Tensor* find(const Program& p, TensorId id) {
  return id < p.tensors.size() ? &p.tensors[id] : nullptr;
}

void print_access_to(std::string& out, const Program& p, const Access& a);

void print_expr(std::string& out, const Expr& e) {
  out += e.str();
}

void print_value(std::string& out, const Program& p, const Access& a) {
  print_access_to(out, p, a);
}
void print_value(std::string& out, const Program& p, const Operand& o) {
  if (auto* a = std::get_if<Access>(&o)) {
    print_access_to(out, p, *a);
  } else {
    out += format_float(std::get<Imm>(o).value);
  }
}
void print_value(std::string& out, const Program&, const Imm& v) {
  out += format_float(v.value);
}
void print_value(std::string& out, const Program&, bool v) {
  out += v ? "true" : "false";
}
void print_value(std::string& out, const Program&, int v) {
  out += std::to_string(v);
}
void print_value(std::string& out, const Program&, int64_t v) {
  out += std::to_string(v);
}
void print_value(std::string& out, const Program&, const Expr& e) {
  print_expr(out, e);
}
void print_value(std::string& out, const Program&, Engine v) {
  out += engine_name(v);
}
void print_value(std::string& out, const Program&, AluOp v) {
  out += alu_op_name(v);
}
void print_value(std::string& out, const Program&, ActFunc v) {
  out += act_func_name(v);
}
void print_value(std::string& out, const Program&, ReduceCmd v) {
  out += reduce_cmd_name(v);
}
void print_value(std::string& out, const Program&, CmpOp v) {
  out += cmp_op_name(v);
}
void print_value(std::string& out, const Program&, const std::vector<int64_t>& v) {
  out += '[';
  for (size_t k = 0; k < v.size(); ++k) {
    if (k) out += ", ";
    out += std::to_string(v[k]);
  }
  out += ']';
}
template <typename T>
void print_value(std::string& out, const Program& p, const std::optional<T>& v) {
  if (v) print_value(out, p, *v);
}

void print_access_to(std::string& out, const Program& p, const Access& a) {
  const Tensor* t = find(p, a.tensor);
  if (t) {
    out += t->name;
  } else {
    out += "?" + std::to_string(a.tensor);  // not a valid program; printed for diagnostics only
  }
  out += '[';
  for (size_t k = 0; k < a.dims.size(); ++k) {
    const AccessDim& d = a.dims[k];
    if (k) out += ", ";
    bool whole =
        t && k < t->shape.size() && d.start == Expr(0) && d.size == t->shape[k] && d.step == 1;
    if (whole) {
      out += ':';
      continue;
    }
    print_expr(out, d.start);
    if (d.size == Expr(1) && d.step == 1) continue;
    out += ":+";
    print_expr(out, d.size);
    if (d.step != 1) out += ":" + std::to_string(d.step);
  }
  out += ']';
  if (!a.perm.empty()) {
    out += ".perm(";
    for (size_t k = 0; k < a.perm.size(); ++k) {
      if (k) out += ", ";
      out += std::to_string(a.perm[k]);
    }
    out += ')';
  }
  if (a.core) {
    out += ".core(";
    print_expr(out, *a.core);
    out += ')';
  }
  if (a.indirect) {
    out += ".indirect(" + std::to_string(a.indirect->dim) + ", ";
    if (a.indirect->offsets) {
      print_access_to(out, p, *a.indirect->offsets);
    } else {
      out += '?';
    }
    out += ", " + std::to_string(a.indirect->lo) + ", " + std::to_string(a.indirect->hi) + ")";
  }
}

// Prints the arguments of one instruction as described by describe.
struct ArgPrinter {
  std::string& out;
  const Program& p;
  bool first = true;

  void separate() {
    out += first ? " " : ", ";
    first = false;
  }
  template <typename T>
  void pos(const char*, const T& v) {
    separate();
    print_value(out, p, v);
  }
  template <typename T>
  void req(const char* name, const T& v) {
    separate();
    out += name;
    out += '=';
    print_value(out, p, v);
  }
  template <typename T>
  void opt(const char* name, const T& v, const T& dflt) {
    if (!(v == dflt)) req(name, v);
  }
  template <typename T>
  void show(const char* name, const T& v, const T&) {
    req(name, v);
  }
};

void print_shape(std::string& out, const std::vector<Expr>& shape) {
  out += '[';
  for (size_t k = 0; k < shape.size(); ++k) {
    if (k) out += ", ";
    print_expr(out, shape[k]);
  }
  out += ']';
}

void print_tensor_decl(std::string& out, const Tensor& t) {
  out += tensor_kind_name(t.kind);
  out += ' ';
  out += t.name;
  out += " : ";
  out += memory_name(t.memory);
  out += ' ';
  out += dtype_name(t.dtype);
  out += ' ';
  print_shape(out, t.shape);
  if (!t.interface_shape.empty()) {
    out += " interface ";
    print_shape(out, t.interface_shape);
  }
  if (t.value_range) {
    out += " range [" + std::to_string(t.value_range->lo) + ", " +
           std::to_string(t.value_range->hi) + "]";
  }
  if (t.bufs != 1) out += " bufs " + std::to_string(t.bufs);
  if (t.placement) {
    out += " at (";
    print_expr(out, t.placement->partition);
    out += ", ";
    print_expr(out, t.placement->byte_offset);
    out += ')';
  }
}

// A `source` file name or an option value as a double-quoted string: `\\`, `\"` and `\xHH` for
// control bytes, so that any name prints on one line and reads back byte for byte.
std::string quoted(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20 || u == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// Whether an option value prints bare: one identifier or an optionally negative decimal (digits,
// an optional fraction and exponent), the forms the parser reads unquoted (NKIR.md, options-stmt).
// Every other value (`2-sprior`, `1/sqrt(128)`, the empty string) prints quoted.
bool bare_option_value(std::string_view v) {
  auto ident_start = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  };
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  if (!v.empty() && ident_start(v[0])) {
    return std::all_of(v.begin(), v.end(), [&](char c) { return ident_start(c) || digit(c); });
  }
  size_t i = v.starts_with('-') ? 1 : 0;
  auto digits = [&] {
    const size_t from = i;
    while (i < v.size() && digit(v[i])) ++i;
    return i > from;
  };
  if (!digits()) return false;
  if (i < v.size() && v[i] == '.') {
    ++i;
    if (!digits()) return false;
  }
  if (i < v.size() && (v[i] == 'e' || v[i] == 'E')) {
    ++i;
    if (i < v.size() && (v[i] == '+' || v[i] == '-')) ++i;
    if (!digits()) return false;
  }
  return i == v.size();
}

void print_body(std::string& out, const Program& p, const std::vector<Stmt>& body, int indent) {
  const std::string pad(static_cast<size_t>(indent) * 2, ' ');
  for (const Stmt& s : body) {
    out += pad;
    if (auto* d = std::get_if<DeclStmt>(&s.node)) {
      if (const Tensor* t = find(p, d->tensor)) {
        print_tensor_decl(out, *t);
      } else {
        out += "# declaration of unknown tensor " + std::to_string(d->tensor);
      }
    } else if (auto* i = std::get_if<InstrStmt>(&s.node)) {
      out += print_instruction(p, i->ins);
      if (i->source_line.value != 0) out += " @line " + std::to_string(i->source_line.value);
    } else if (auto* l = std::get_if<Loop>(&s.node)) {
      out += "for " + l->var + " in ";
      out += l->kind == LoopKind::affine ? "affine_range(" : "sequential_range(";
      if (!(l->start == Expr(0)) || l->step != 1) {
        print_expr(out, l->start);
        out += ", ";
      }
      print_expr(out, l->stop);
      if (l->step != 1) out += ", " + std::to_string(l->step);
      out += ") {\n";
      print_body(out, p, l->body, indent + 1);
      out += pad + "}";
    }
    out += '\n';
  }
}

}  // namespace

std::string print_access(const Program& p, const Access& a) {
  std::string out;
  print_access_to(out, p, a);
  return out;
}

std::string print_instruction(const Program& p, const Instruction& ins) {
  std::string out(op_name(ins));
  ArgPrinter printer{out, p};
  std::visit([&](const auto& i) { describe(i, printer); }, ins);
  return out;
}

std::string print_program(const Program& p) {
  std::string out = "kernel ";
  out += p.name;
  out += '\n';
  if (!p.build_options.empty()) {
    out += "options";
    for (const auto& [name, value] : p.build_options) {
      out += " " + name + "=" + (bare_option_value(value) ? value : quoted(value));
    }
    out += '\n';
  }
  if (!p.source_file.value.empty()) out += "source " + quoted(p.source_file.value) + "\n";
  for (const Param& prm : p.params) {
    out += "param " + prm.name + " in [" + std::to_string(prm.lo) + ", " + std::to_string(prm.hi) +
           "]";
    if (prm.multiple_of != 1) out += " multiple_of " + std::to_string(prm.multiple_of);
    out += '\n';
  }
  for (const Relation& r : p.relations) out += "require " + r.str() + "\n";
  if (!(p.grid == Expr(1))) out += "grid " + p.grid.str() + "\n";
  for (const Tensor& t : p.tensors) {
    if (t.kind == TensorKind::Buffer) continue;
    print_tensor_decl(out, t);
    out += '\n';
  }
  if (!p.body.empty()) {
    out += '\n';
    print_body(out, p, p.body, 0);
  }
  return out;
}

}  // namespace ir
}  // namespace ncv

#include "check/explicit_layout.h"

#include <map>
#include <sstream>
#include <stdexcept>

#include "model/interp/interpreter.h"

namespace ncv::kernels {

namespace {

Axis parse_axis(const std::string& s, const std::string& entry) {
  if (s == "b" || s == "batch") return Axis::batch;
  if (s == "h" || s == "head") return Axis::head;
  if (s == "s" || s == "seq") return Axis::seq;
  if (s == "d" || s == "dim") return Axis::dim;
  throw std::invalid_argument("layout entry '" + entry + "': axis '" + s +
                              "' is not one of b, h, s, d");
}

const Tensor& tensor_named(const Program& p, const std::string& name) {
  for (const Tensor& t : p.tensors) {
    if (t.name == name && t.memory == Memory::HBM) return t;
  }
  throw std::invalid_argument("the layout names '" + name + "', which is no HBM tensor of " +
                              p.name);
}

// Extent of `axis` in tensor `tl` (1 when the layout does not list it).
int64_t extent(const TensorLayout& tl, const std::vector<int64_t>& shape, Axis axis) {
  for (size_t k = 0; k < tl.axes.size() && k < shape.size(); ++k) {
    if (tl.axes[k] == axis) return shape[k];
  }
  return 1;
}

}  // namespace

Layout parse_layout(const std::string& text) {
  std::string norm = text;
  for (char& c : norm)
    if (c == ';') c = ' ';
  std::istringstream in(norm);
  std::map<std::string, TensorLayout> roles;
  std::string entry;
  while (in >> entry) {
    const auto eq = entry.find('=');
    if (eq == std::string::npos) {
      throw std::invalid_argument("layout entry '" + entry + "': expected ROLE=AXIS,AXIS,...");
    }
    const std::string role = entry.substr(0, eq);
    if (role != "q" && role != "k" && role != "v" && role != "out") {
      throw std::invalid_argument("layout entry '" + entry + "': role '" + role +
                                  "' is not q, k, v or out");
    }
    if (roles.count(role)) throw std::invalid_argument("layout gives '" + role + "' twice");
    TensorLayout tl{role, {}};
    std::istringstream axes(entry.substr(eq + 1));
    std::string a;
    while (std::getline(axes, a, ',')) tl.axes.push_back(parse_axis(a, entry));
    if (tl.axes.empty()) throw std::invalid_argument("layout entry '" + entry + "' has no axes");
    roles[role] = tl;
  }
  for (const char* r : {"q", "k", "v", "out"}) {
    if (!roles.count(r)) throw std::invalid_argument(std::string("layout misses '") + r + "'");
  }
  return Layout{roles["q"], roles["k"], roles["v"], roles["out"]};
}

Variant explicit_layout_variant(const Variant& contract_from, const Program& program,
                                const Layout& layout, double scale, bool causal) {
  Variant v = contract_from;
  v.name = program.name;
  v.layout = layout;
  v.adapt_layout = nullptr;  // the layout is the one given, whatever the options
  // Only the contract is lent: where the contract's kernel runs and how often its cases are
  // rerun are facts about that kernel, not about this program.
  v.generations.clear();
  v.generations_reason.clear();
  v.determinism_runs = 0;
  v.spec = [program, layout, scale, causal](const Options&, const ParamValues& params) {
    const auto shapes = concrete_shapes(program, params);
    auto shape_of = [&](const std::string& name) {
      return shapes.at(tensor_named(program, name).id);
    };
    const auto q = shape_of(layout.q.tensor), k = shape_of(layout.k.tensor);
    oracle::AttentionSpec s;
    s.batch = extent(layout.q, q, Axis::batch);
    s.heads = extent(layout.q, q, Axis::head);
    s.kv_heads = extent(layout.k, k, Axis::head);
    s.seqlen_q = extent(layout.q, q, Axis::seq);
    s.seqlen_kv = extent(layout.k, k, Axis::seq);
    s.d_head = extent(layout.q, q, Axis::dim);
    s.scale = scale;
    if (causal) s.mask.kind = oracle::MaskKind::causal;
    s.input_dtype = tensor_named(program, layout.q.tensor).dtype;
    s.output_dtype = tensor_named(program, layout.out.tensor).dtype;
    return s;
  };
  return v;
}

}  // namespace ncv::kernels

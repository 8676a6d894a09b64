#include "check/explicit_layout.h"

#include <any>
#include <map>
#include <random>
#include <set>
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
  // A sequence split into 128-row tiles (kernels/layout.h): the cached softmax statistics.
  if (s == "seq_tile") return Axis::seq_tile;
  if (s == "seq_part") return Axis::seq_part;
  throw std::invalid_argument("layout entry '" + entry + "': axis '" + s +
                              "' is not one of b, h, s, d, seq_tile, seq_part");
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

const std::set<std::string> kAxisRoles = {"q",       "k",       "v",       "out",      "sink",
                                          "k_prior", "v_prior", "neg_max", "recip_sum"};
// Roles whose tensor may be named apart from the role (ROLE:TENSOR=AXES): a kernel's outputs are
// named by the kernel (nki-library attention_cte's out_neg_max, out_sum_recip).
const std::set<std::string> kNamedRoles = {"neg_max", "recip_sum"};
const std::set<std::string> kInputRoles = {"prior_len", "q_offset", "key_min", "key_max"};

// Sink logits per head, drawn from the case's seed: quarter steps in [-4, 24], so that some
// exceed the row maxima of the check distributions' scores (a kernel that drops the sink fails).
void draw_sinks(oracle::AttentionSpec& s, std::mt19937_64& rng) {
  s.sink.clear();
  for (int64_t h = 0; h < s.heads; ++h) {
    s.sink.push_back(static_cast<double>(std::uniform_int_distribution<int>(-16, 96)(rng)) / 4);
  }
}

// Copies keys [first, first + count) of the spec's k or v (`values`, in kv_index order) into
// `dst` laid out as `t` (axes among b, h, s, d; seq extent `count`).
void pack_keys(const TensorLayout& t, const oracle::AttentionSpec& s,
               const std::vector<double>& values, int64_t first, int64_t count, HostTensor& dst) {
  if (dst.shape.size() != t.axes.size()) {
    throw std::invalid_argument("tensor '" + t.tensor + "' has rank " +
                                std::to_string(dst.shape.size()) + ", the layout lists " +
                                std::to_string(t.axes.size()) + " axes");
  }
  int64_t sb = 0, sh = 0, ss = 0, sd = 0, stride = 1;
  for (size_t x = t.axes.size(); x-- > 0;) {
    const Axis a = t.axes[x];
    const int64_t want = a == Axis::batch  ? s.batch
                         : a == Axis::head ? s.kv_heads
                         : a == Axis::seq  ? count
                                           : s.d_head;
    if (dst.shape[x] != want) {
      throw std::invalid_argument("tensor '" + t.tensor + "' dimension " + std::to_string(x) +
                                  " (" + axis_name(a) + ") is " + std::to_string(dst.shape[x]) +
                                  ", the spec needs " + std::to_string(want));
    }
    (a == Axis::batch ? sb : a == Axis::head ? sh : a == Axis::seq ? ss : sd) = stride;
    stride *= dst.shape[x];
  }
  for (int64_t b = 0; b < s.batch; ++b) {
    for (int64_t h = 0; h < s.kv_heads; ++h) {
      for (int64_t j = 0; j < count; ++j) {
        for (int64_t c = 0; c < s.d_head; ++c) {
          dst.set(b * sb + h * sh + j * ss + c * sd,
                  static_cast<float>(values[static_cast<size_t>(s.kv_index(b, h, first + j, c))]));
        }
      }
    }
  }
}

void require_input(const Program& p, const std::string& name) {
  const auto id = p.find_tensor(name);
  if (!id || p.tensor(*id).kind != TensorKind::Input) {
    throw std::invalid_argument("the layout names '" + name + "', which is no input of " + p.name);
  }
}

HostTensor input_tensor(const Program& p, const ParamValues& params, const std::string& name) {
  const auto id = p.find_tensor(name);
  if (!id || p.tensor(*id).kind != TensorKind::Input) {
    throw std::invalid_argument("kernel " + p.name + " has no input tensor '" + name + "'");
  }
  return HostTensor(p.tensor(*id).dtype, concrete_shape(p, *id, params));
}

// A run-time input holding `values` (one per element, in order; a single value fills it).
void fill_input(const Program& p, const ParamValues& params, const std::string& name,
                const std::vector<int64_t>& values, std::map<std::string, HostTensor>& packed) {
  HostTensor h = input_tensor(p, params, name);
  if (values.size() != 1 && static_cast<int64_t>(values.size()) != h.num_elements()) {
    throw std::invalid_argument("kernel input '" + name + "' has " +
                                std::to_string(h.num_elements()) + " elements, the problem " +
                                std::to_string(values.size()) + " values for it");
  }
  for (int64_t e = 0; e < h.num_elements(); ++e) {
    h.set(e, static_cast<float>(values[values.size() == 1 ? 0 : static_cast<size_t>(e)]));
  }
  packed[name] = std::move(h);
}

}  // namespace

ExplicitLayout parse_explicit_layout(const std::string& text) {
  std::string norm = text;
  for (char& c : norm)
    if (c == ';') c = ' ';
  std::istringstream in(norm);
  std::map<std::string, TensorLayout> roles;
  std::map<std::string, std::string> inputs;
  std::string entry;
  while (in >> entry) {
    const auto eq = entry.find('=');
    if (eq == std::string::npos) {
      throw std::invalid_argument("layout entry '" + entry + "': expected ROLE=AXIS,AXIS,...");
    }
    std::string role = entry.substr(0, eq), tensor;
    const std::string value = entry.substr(eq + 1);
    if (const auto colon = role.find(':'); colon != std::string::npos) {
      tensor = role.substr(colon + 1);
      role = role.substr(0, colon);
      if (!kNamedRoles.count(role) || tensor.empty()) {
        throw std::invalid_argument("layout entry '" + entry +
                                    "': only neg_max and recip_sum name their tensor "
                                    "(ROLE:TENSOR=AXES)");
      }
    }
    if (!kAxisRoles.count(role) && !kInputRoles.count(role)) {
      throw std::invalid_argument("layout entry '" + entry + "': role '" + role +
                                  "' is not q, k, v, out, sink, k_prior, v_prior, neg_max, "
                                  "recip_sum, prior_len, q_offset, key_min or key_max");
    }
    if (roles.count(role) || inputs.count(role)) {
      throw std::invalid_argument("layout gives '" + role + "' twice");
    }
    if (kInputRoles.count(role)) {
      if (value.empty()) {
        throw std::invalid_argument("layout entry '" + entry + "' names no kernel input");
      }
      inputs[role] = value;
      continue;
    }
    TensorLayout tl{tensor.empty() ? role : tensor, {}};
    std::istringstream axes(value);
    std::string a;
    while (std::getline(axes, a, ',')) tl.axes.push_back(parse_axis(a, entry));
    if (tl.axes.empty()) throw std::invalid_argument("layout entry '" + entry + "' has no axes");
    roles[role] = tl;
  }
  for (const char* r : {"q", "k", "v", "out"}) {
    if (!roles.count(r)) throw std::invalid_argument(std::string("layout misses '") + r + "'");
  }
  ExplicitLayout el;
  el.layout = Layout{roles["q"], roles["k"], roles["v"], roles["out"]};
  if (roles.count("sink")) el.layout.sink = roles["sink"];
  if (roles.count("neg_max")) el.layout.neg_max = roles["neg_max"];
  if (roles.count("recip_sum")) el.layout.recip_sum = roles["recip_sum"];
  const int prior_roles =
      static_cast<int>(roles.count("k_prior") + roles.count("v_prior") + inputs.count("prior_len"));
  if (prior_roles != 0 && prior_roles != 3) {
    throw std::invalid_argument(
        "prefix caching needs the three roles k_prior, v_prior and prior_len");
  }
  if (prior_roles == 3) {
    el.k_prior = roles["k_prior"];
    el.v_prior = roles["v_prior"];
    el.prior_len = inputs["prior_len"];
  }
  if (inputs.count("key_min") != inputs.count("key_max")) {
    throw std::invalid_argument("sequence packing needs both key_min and key_max");
  }
  if (inputs.count("q_offset")) el.q_offset = inputs["q_offset"];
  if (inputs.count("key_min")) {
    el.key_min = inputs["key_min"];
    el.key_max = inputs["key_max"];
  }
  return el;
}

Layout parse_layout(const std::string& text) {
  const ExplicitLayout el = parse_explicit_layout(text);
  if (el.layout.sink || el.k_prior || !el.q_offset.empty() || !el.key_min.empty() ||
      el.layout.neg_max || el.layout.recip_sum) {
    throw std::invalid_argument("layout '" + text + "': only q, k, v and out are expected here");
  }
  return el.layout;
}

Variant explicit_layout_variant(const Variant& contract_from, const Program& program,
                                const ExplicitLayout& el, const ExplicitProblem& problem) {
  Variant v = contract_from;
  v.name = program.name;
  v.layout = el.layout;
  v.adapt_layout = nullptr;  // the layout is the one given, whatever the options
  // Only the contract is lent: where the contract's kernel runs, how often its cases are rerun
  // and what they draw are facts about that kernel, not about this program.
  v.generations.clear();
  v.generations_reason.clear();
  v.determinism_runs = 0;
  v.draw_case = nullptr;
  // The roles' tensors exist (a clear error before any case runs).
  for (const TensorLayout* t : {&el.layout.q, &el.layout.k, &el.layout.v, &el.layout.out}) {
    tensor_named(program, t->tensor);
  }
  // The cached statistics are outputs the kernel writes (a name the program lacks would leave
  // them unchecked without a word).
  for (const auto* t : {&el.layout.neg_max, &el.layout.recip_sum}) {
    if (*t && tensor_named(program, (*t)->tensor).kind != TensorKind::Output) {
      throw std::invalid_argument("the layout names '" + (*t)->tensor +
                                  "', which is no output of " + program.name);
    }
  }
  for (const std::string* in : {&el.prior_len, &el.q_offset, &el.key_min, &el.key_max}) {
    if (!in->empty()) require_input(program, *in);
  }
  if (el.k_prior) {
    require_input(program, el.k_prior->tensor);
    require_input(program, el.v_prior->tensor);
  }
  const bool has_prior = el.k_prior.has_value();
  const auto geometry = [program, el, has_prior](const ParamValues& params) {
    const auto shapes = concrete_shapes(program, params);
    auto shape_of = [&](const std::string& name) {
      return shapes.at(tensor_named(program, name).id);
    };
    PositionsGeometry g;
    g.seqlen_q = extent(el.layout.q, shape_of(el.layout.q.tensor), Axis::seq);
    g.seqlen_active = extent(el.layout.k, shape_of(el.layout.k.tensor), Axis::seq);
    if (has_prior) g.prior = extent(*el.k_prior, shape_of(el.k_prior->tensor), Axis::seq);
    g.q_offset = !el.q_offset.empty();
    g.key_bounds = !el.key_min.empty();
    return g;
  };
  validate_positions(problem, PositionsGeometry{1, 1, has_prior ? 1 : 0, !el.q_offset.empty(),
                                                !el.key_min.empty()});
  // Sinks when the program takes them (a registered kernel's layout may name a sink input that
  // this program does not have).
  const auto sink_id = el.layout.sink ? program.find_tensor(el.layout.sink->tensor) : std::nullopt;
  const bool has_sink = sink_id && program.tensor(*sink_id).kind == TensorKind::Input;
  const bool run_time = has_prior || !el.q_offset.empty() || !el.key_min.empty();
  // One case's problem: its run-time values (and sinks) from `seed`, the mask they make; returns
  // the run-time values, which the case's packing reads (CaseDraws).
  const auto draw = [problem, has_sink](oracle::AttentionSpec& s, const PositionsGeometry& g,
                                        uint64_t seed) {
    std::mt19937_64 rng(seed ^ 0x6c61796f75743435ull);
    if (has_sink) draw_sinks(s, rng);
    const PositionsDraw d = draw_positions(problem, g, rng);
    set_positions_mask(problem, g, d, s);
    return d;
  };
  v.spec = [program, el, problem, geometry, draw](const Options&, const ParamValues& params) {
    const auto shapes = concrete_shapes(program, params);
    auto shape_of = [&](const std::string& name) {
      return shapes.at(tensor_named(program, name).id);
    };
    const auto q = shape_of(el.layout.q.tensor), k = shape_of(el.layout.k.tensor);
    const PositionsGeometry g = geometry(params);
    validate_positions(problem, g);
    oracle::AttentionSpec s;
    s.batch = extent(el.layout.q, q, Axis::batch);
    s.heads = extent(el.layout.q, q, Axis::head);
    s.kv_heads = extent(el.layout.k, k, Axis::head);
    s.d_head = extent(el.layout.q, q, Axis::dim);
    s.scale = problem.scale;
    s.input_dtype = tensor_named(program, el.layout.q.tensor).dtype;
    s.output_dtype = tensor_named(program, el.layout.out.tensor).dtype;
    if (g.prior > 0) {
      // The prior slots and the active keys are one key sequence to the oracle, prior first;
      // as a paged cache of one-key blocks in order, which the packing splits back into the
      // kernel's k_prior / k and v_prior / v.
      const int64_t keys = g.prior + g.seqlen_active;
      oracle::BlockKv bk;
      bk.block_size = 1;
      bk.num_blocks = s.batch * keys;
      for (int64_t e = 0; e < bk.num_blocks; ++e) bk.table.push_back(e);
      s.block_kv = bk;
    }
    draw(s, g, 0);  // the spec's own values; each case draws its own
    return s;
  };
  if (has_sink || run_time) {
    // The split of the keys into prior and active comes from the case's params (the spec's
    // seqlen_kv holds their sum only); the run-time values go back with the case (CaseDraws).
    v.draw_case = [draw, geometry, run_time](oracle::AttentionSpec& s, const ParamValues& params,
                                             uint64_t seed) -> CaseDraws {
      const PositionsDraw d = draw(s, geometry(params), seed);
      return run_time ? CaseDraws(d) : CaseDraws();
    };
  }
  if (run_time) {
    const auto previous = el.layout.pack_extra;
    v.layout.pack_extra = [el, geometry, previous](
                              const Program& p, const ParamValues& params,
                              const oracle::AttentionSpec& s, const oracle::AttentionInputs& in,
                              const CaseDraws& draws, std::map<std::string, HostTensor>& packed) {
      if (previous) previous(p, params, s, in, draws, packed);
      const PositionsGeometry g = geometry(params);
      // This case's own run-time values, as its draw_case returned them with its spec.
      const PositionsDraw* drawn = std::any_cast<PositionsDraw>(&draws);
      if (drawn == nullptr) {
        throw std::invalid_argument(
            "--layout: the case's run-time inputs (prior length, q offset, key bounds) were not "
            "drawn: pack_inputs needs what Variant::draw_case returned for the case");
      }
      const PositionsDraw& d = *drawn;
      if (g.prior > 0) {
        const struct {
          const TensorLayout& t;
          const std::vector<double>& values;
          int64_t first, count;
        } parts[] = {{*el.k_prior, in.k, 0, g.prior},
                     {*el.v_prior, in.v, 0, g.prior},
                     {el.layout.k, in.k, g.prior, g.seqlen_active},
                     {el.layout.v, in.v, g.prior, g.seqlen_active}};
        for (const auto& part : parts) {
          HostTensor h = input_tensor(p, params, part.t.tensor);
          pack_keys(part.t, s, part.values, part.first, part.count, h);
          packed[part.t.tensor] = std::move(h);
        }
        fill_input(p, params, el.prior_len, {d.prior_len}, packed);
      }
      if (!el.q_offset.empty()) fill_input(p, params, el.q_offset, {d.q_offset}, packed);
      if (!el.key_min.empty()) {
        fill_input(p, params, el.key_min, d.key_min, packed);
        fill_input(p, params, el.key_max, d.key_max, packed);
      }
    };
  }
  return v;
}

}  // namespace ncv::kernels

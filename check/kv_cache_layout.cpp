#include "check/kv_cache_layout.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>

#include "kernels/decode_attention/attention_tkg_draws.h"
#include "kernels/decode_attention/gen_mask_tkg_swa.h"
#include "model/interp/interpreter.h"
#include "model/interp/npy.h"

namespace ncv::kernels {

namespace {

// The cache slots a kernel must never use (the active slots, which the kernel takes from
// k_active / v_active, and the slots past the S it reads): values no kernel reading them can hide,
// exact in bf16, fp16, fp32 and fp8_e4m3 (as the registered attention_tkg's packing).
constexpr float kStaleKey = 96.0f;
constexpr float kStaleValue = -224.0f;

// Extent classes: the problem's sizes an axis letter stands for in a role.
enum class Size : uint8_t { B, H, KVH, A, D, S, F, N, L, T, R, one };

const char* size_name(Size z) {
  switch (z) {
    case Size::B:
      return "batch (b)";
    case Size::H:
      return "query heads (h)";
    case Size::KVH:
      return "KV heads (h of k_*/v_*)";
    case Size::A:
      return "active tokens (s / a)";
    case Size::D:
      return "head dim (d)";
    case Size::S:
      return "slots read (c of the mask)";
    case Size::F:
      return "cache slots (c of k_prior / v_prior)";
    case Size::N:
      return "cache blocks (n of k_prior / v_prior)";
    case Size::L:
      return "block length (l of k_prior / v_prior)";
    case Size::T:
      return "table entries per batch (t of table)";
    case Size::R:
      return "RoPE pairs (r: d / 2)";
    case Size::one:
      return "1";
  }
  return "?";
}

struct RoleRule {
  const char* name;
  const char* axes;      // the letters the role may list ('1' always)
  const char* required;  // the letters it must list when their extent is above 1
  bool optional;
};

const RoleRule kRules[] = {
    {"q", "bhsd", "bhsd", false},        {"k_active", "bhsd", "bhsd", false},
    {"v_active", "bhsd", "bhsd", false}, {"k_prior", "bhcdnl", "hd", false},
    {"v_prior", "bhcdnl", "hd", false},  {"mask", "cabhs", "bhs", false},
    {"out", "bhsd", "bhsd", false},      {"sink", "h", "h", true},
    {"positions", "bs", "bs", true},     {"starts", "bs", "bs", true},
    {"table", "bt", "bt", true},         {"inv_freqs", "r", "r", true},
};

const RoleRule* rule_of(const std::string& role) {
  for (const RoleRule& r : kRules) {
    if (role == r.name) return &r;
  }
  return nullptr;
}

bool kv_role(const std::string& role) {
  return role[0] == 'k' || role[0] == 'v';
}

Size size_of(const std::string& role, char axis) {
  switch (axis) {
    case 'b':
      return Size::B;
    case 'h':
      return kv_role(role) ? Size::KVH : Size::H;
    case 's':
    case 'a':
      return Size::A;
    case 'd':
      return Size::D;
    case 'c':
      return role == "mask" ? Size::S : Size::F;
    case 'n':
      return Size::N;
    case 'l':
      return Size::L;
    case 't':
      return Size::T;
    case 'r':
      return Size::R;
    default:
      return Size::one;
  }
}

char parse_axis(const std::string& s, const std::string& entry) {
  static const std::map<std::string, char> names = {
      {"b", 'b'},   {"batch", 'b'},  {"h", 'h'},    {"head", 'h'},  {"s", 's'},
      {"seq", 's'}, {"d", 'd'},      {"dim", 'd'},  {"c", 'c'},     {"cache", 'c'},
      {"a", 'a'},   {"active", 'a'}, {"n", 'n'},    {"block", 'n'}, {"l", 'l'},
      {"t", 't'},   {"r", 'r'},      {"pair", 'r'}, {"1", '1'}};
  const auto it = names.find(s);
  if (it == names.end()) {
    throw std::invalid_argument(
        "layout entry '" + entry + "': axis '" + s +
        "' is not one of b, h, s, d, c (cache slot), a (active key), n (cache block), "
        "l (slot in a block), t (table entry), r (RoPE pair), 1");
  }
  return it->second;
}

using Extents = std::map<Size, int64_t>;

const std::vector<int64_t>& shape_of(const std::map<std::string, std::vector<int64_t>>& shapes,
                                     const std::string& tensor) {
  return shapes.at(tensor);
}

// The problem's sizes from the program's shapes: single-axis dimensions give theirs, flattened
// ones the one size they leave unknown; sizes no role lists are 1. Then every dimension must be
// the product of its axes' sizes.
Extents solve_extents(const KvCacheLayout& l,
                      const std::map<std::string, std::vector<int64_t>>& shapes) {
  Extents known{{Size::one, 1}};
  if (l.slots > 0) known[Size::S] = l.slots;
  std::set<Size> listed;
  for (bool progress = true; progress;) {
    progress = false;
    for (const auto& [role, r] : l.roles) {
      const auto& shape = shape_of(shapes, r.tensor);
      for (size_t x = 0; x < r.dims.size(); ++x) {
        // r is d / 2, set from d below: its dimensions do not determine a size
        if (std::count(r.dims[x].begin(), r.dims[x].end(), 'r') > 0) continue;
        int64_t product = 1;
        std::vector<Size> unknown;
        for (char a : r.dims[x]) {
          const Size z = size_of(role, a);
          listed.insert(z);
          if (known.count(z)) {
            product *= known[z];
          } else if (std::find(unknown.begin(), unknown.end(), z) == unknown.end()) {
            unknown.push_back(z);
          }
        }
        if (unknown.size() == 1 && product > 0 && shape[x] % product == 0) {
          known[unknown[0]] = shape[x] / product;
          progress = true;
        }
      }
    }
  }
  bool pairs = false;  // a role lists r
  for (const auto& [role, r] : l.roles) {
    for (const auto& dim : r.dims) pairs = pairs || std::count(dim.begin(), dim.end(), 'r') > 0;
  }
  if (pairs && known.count(Size::D)) {
    if (known[Size::D] % 2 != 0) {
      throw std::invalid_argument("RoPE rotates pairs of the head dim: d (" +
                                  std::to_string(known[Size::D]) + ") is odd");
    }
    known[Size::R] = known[Size::D] / 2;
  }
  for (Size z : {Size::B, Size::H, Size::KVH, Size::A, Size::D, Size::S, Size::F, Size::N, Size::L,
                 Size::T, Size::R}) {
    if (!known.count(z)) {
      if (listed.count(z)) {
        throw std::invalid_argument(std::string("the layout does not determine the ") +
                                    size_name(z) + " from the program's shapes");
      }
      if (z == Size::S) {
        throw std::invalid_argument(
            "the layout gives no slot count: a mask with a c axis, or slots=N");
      }
      known[z] = 1;
    }
  }
  for (const auto& [role, r] : l.roles) {
    const auto& shape = shape_of(shapes, r.tensor);
    for (size_t x = 0; x < r.dims.size(); ++x) {
      int64_t product = 1;
      for (char a : r.dims[x]) product *= known.at(size_of(role, a));
      if (product != shape[x]) {
        throw std::invalid_argument("tensor '" + r.tensor + "' (" + role + ") dimension " +
                                    std::to_string(x) + " is " + std::to_string(shape[x]) +
                                    ", its axes' sizes multiply to " + std::to_string(product));
      }
    }
    const RoleRule& rule = *rule_of(role);
    // the cache roles hold b and c (a flat cache) or n and l (blocks through the table)
    const bool cache_role = role == "k_prior" || role == "v_prior";
    const char* required = cache_role ? (l.roles.count("table") ? "hdnl" : "bhcd") : rule.required;
    for (const char* a = required; *a; ++a) {
      bool has = false;
      for (const auto& dim : r.dims) has = has || std::count(dim.begin(), dim.end(), *a) > 0;
      const int64_t n = known.at(size_of(role, *a));
      if (!has && n != 1) {
        throw std::invalid_argument("tensor '" + r.tensor + "' (" + role + ") has no '" +
                                    std::string(1, *a) + "' axis but the " +
                                    size_name(size_of(role, *a)) + " is " + std::to_string(n));
      }
    }
  }
  return known;
}

// An element's coordinates in the decode problem.
struct Coord {
  int64_t b = 0, h = 0, s = 0, d = 0, c = 0, a = 0, n = 0, l = 0, t = 0, r = 0;
  int64_t& at(char axis) {
    switch (axis) {
      case 'n':
        return n;
      case 'l':
        return l;
      case 't':
        return t;
      case 'r':
        return r;
      case 'b':
        return b;
      case 'h':
        return h;
      case 's':
        return s;
      case 'd':
        return d;
      case 'c':
        return c;
      default:
        return a;  // 'a'; '1' never varies
    }
  }
};

// Calls fn(coord, flat index) for every element of `role`'s tensor: the row-major order over its
// axes (outermost first) is the row-major order of its flattened dimensions.
template <typename Fn>
void for_each_element(const std::string& role, const KvRole& r, const Extents& e, Fn fn) {
  std::vector<char> axes;
  for (const auto& dim : r.dims) axes.insert(axes.end(), dim.begin(), dim.end());
  std::vector<int64_t> n(axes.size()), i(axes.size(), 0);
  int64_t total = 1;
  for (size_t k = 0; k < axes.size(); ++k) total *= n[k] = e.at(size_of(role, axes[k]));
  for (int64_t flat = 0; flat < total; ++flat) {
    Coord c;
    for (size_t k = 0; k < axes.size(); ++k) {
      if (axes[k] != '1') c.at(axes[k]) = i[k];
    }
    fn(c, flat);
    for (size_t k = axes.size(); k-- > 0;) {
      if (++i[k] < n[k]) break;
      i[k] = 0;
    }
  }
}

HostTensor input_of(const Program& p, const ParamValues& params, const KvRole& r) {
  const auto id = p.find_tensor(r.tensor);
  if (!id || p.tensor(*id).kind != TensorKind::Input) {
    throw std::invalid_argument("kernel " + p.name + " has no input tensor '" + r.tensor + "'");
  }
  return HostTensor(p.tensor(*id).dtype, concrete_shape(p, *id, params));
}

std::map<std::string, std::vector<int64_t>> role_shapes(const Program& p, const ParamValues& params,
                                                        const KvCacheLayout& l) {
  std::map<std::string, std::vector<int64_t>> out;
  for (const auto& [role, r] : l.roles) {
    const auto id = p.find_tensor(r.tensor);
    if (!id || p.tensor(*id).memory != Memory::HBM) {
      throw std::invalid_argument("the layout names '" + r.tensor + "' (" + role +
                                  "), which is no HBM tensor of " + p.name);
    }
    const TensorKind want = role == "out" ? TensorKind::Output : TensorKind::Input;
    if (p.tensor(*id).kind != want) {
      throw std::invalid_argument("'" + r.tensor + "' (" + role + ") is not an " +
                                  (role == "out" ? "output" : "input") + " of " + p.name);
    }
    // the kernel's own shape (a tensor the program declares with refined dims holds the same
    // bytes in the same order, so the packing's flat indices are the same)
    out[r.tensor] = interface_shape(p, *id, params);
    if (out[r.tensor].size() != r.dims.size()) {
      throw std::invalid_argument("tensor '" + r.tensor + "' (" + role + ") has rank " +
                                  std::to_string(out[r.tensor].size()) + ", the layout lists " +
                                  std::to_string(r.dims.size()) + " dimensions");
    }
  }
  return out;
}

DType dtype_of(const Program& p, const std::string& tensor) {
  return p.tensor(*p.find_tensor(tensor)).dtype;
}

// The positions the kernel is given (what pack writes to the positions role), per (b, i): with a
// window each query's window end (build_swa_positions), else P_b for every active token (the
// test's broadcast of pos_id). The RoPE positions are these: the kernel rotates by them.
std::vector<int64_t> packed_positions(const KvCacheLayout& l, const oracle::AttentionSpec& s) {
  const int64_t A = s.seqlen_q;
  if (l.roles.count("starts")) return tkg::swa_inputs_of(s).end;
  std::vector<int64_t> pos(size_t(s.batch * A));
  for (int64_t b = 0; b < s.batch; ++b) {
    for (int64_t i = 0; i < A; ++i) pos[size_t(b * A + i)] = s.mask.cache_end[size_t(b * A)];
  }
  return pos;
}

// RoPE as nki-library's attention_tkg fuses it (attention_tkg_torch.py _attention_tkg_fwd_ref,
// _gen_rope_coeff, _apply_rope): q and k_active rotated rotate-half (pair t is (x[t],
// x[t + d/2]), cat((freqs, freqs)) and rotate_half = cat(-x2, x1)) by rope_pos_ids[b][i] *
// inv_freqs[t]; the cached keys not (the cache holds them as written). Keeps the spec's inv_freq.
void set_rope(const KvCacheLayout& l, oracle::AttentionSpec& s) {
  if (!l.roles.count("inv_freqs")) return;
  if (!s.rope) throw std::logic_error("set_rope: the spec has no RoPE");
  const int64_t A = s.seqlen_q, S = s.seqlen_kv, C = S - A;
  const std::vector<int64_t> pos = packed_positions(l, s);
  s.rope->pos_q = pos;
  s.rope->pos_k.assign(size_t(s.batch * S), 0);
  for (int64_t b = 0; b < s.batch; ++b) {
    for (int64_t a = 0; a < A; ++a) s.rope->pos_k[size_t(b * S + C + a)] = pos[size_t(b * A + a)];
  }
  s.rope->rotated_from = C;
}

// The nki-library test's position of batch b (test_attention_tkg.py: (3b + 3 (S // 4)) mod
// (S - A), the same for every active token): the spec's until a case draws its own.
int64_t test_position(int64_t b, int64_t S, int64_t A) {
  return (3 * b + S / 4 * 3) % (S - A);
}

// The slot of mask row `row` under block_mask=R (nki-library's build_full_attention_mask with
// block_len, gen_mask_tkg_torch.py: the slots reshaped [folds, 128, R], the last two swapped, so
// row fold·128·R + r·128 + p holds slot fold·128·R + p·R + r; 128 partitions, P_MAX there).
int64_t block_mask_slot(int64_t row, int64_t R) {
  const int64_t fold = row / (tkg::kSlotPartitions * R), in = row % (tkg::kSlotPartitions * R);
  const int64_t r = in / tkg::kSlotPartitions, p = in % tkg::kSlotPartitions;
  return fold * tkg::kSlotPartitions * R + p * R + r;
}

void pack(const KvCacheLayout& l, const Program& p, const ParamValues& params,
          const oracle::AttentionSpec& s, const oracle::AttentionInputs& in,
          std::map<std::string, HostTensor>& packed) {
  if (s.mask.kind != oracle::MaskKind::kv_cache) {
    throw std::invalid_argument("a KV-cache layout needs a kv_cache spec");
  }
  const Extents e = solve_extents(l, role_shapes(p, params, l));
  const int64_t A = s.seqlen_q, S = s.seqlen_kv, C = S - A;
  const auto fill = [&](const std::string& role, auto value) {
    const KvRole& r = l.roles.at(role);
    HostTensor h = input_of(p, params, r);
    for_each_element(role, r, e, [&](const Coord& c, int64_t flat) { h.set(flat, value(c)); });
    packed[r.tensor] = std::move(h);
  };
  const auto q = [&](const Coord& c) {
    return static_cast<float>(in.q[size_t(s.q_index(c.b, c.h, c.s, c.d))]);
  };
  fill("q", q);
  fill("k_active", [&](const Coord& c) {
    return static_cast<float>(in.k[size_t(s.kv_index(c.b, c.h, C + c.s, c.d))]);
  });
  fill("v_active", [&](const Coord& c) {
    return static_cast<float>(in.v[size_t(s.kv_index(c.b, c.h, C + c.s, c.d))]);
  });
  if (s.block_kv) {
    // The physical blocks as the oracle reads them through the table (in.k / in.v are the
    // physical cache [N][KVH][L][d]), the active slots' rows stale; the table as drawn.
    const int64_t L = s.block_kv->block_size, T = S / L;
    const auto physical = [&](const std::vector<double>& values, float stale) {
      std::vector<double> out = values;
      for (int64_t b = 0; b < s.batch; ++b) {
        for (int64_t g = 0; g < s.kv_heads; ++g) {
          for (int64_t j = C; j < S; ++j) {
            const auto at = size_t(s.kv_index(b, g, j, 0));
            std::fill(out.begin() + ptrdiff_t(at), out.begin() + ptrdiff_t(at) + s.d_head, stale);
          }
        }
      }
      return out;
    };
    const std::vector<double> k = physical(in.k, kStaleKey), v = physical(in.v, kStaleValue);
    const auto row = [&](const Coord& c) {
      return size_t(((c.n * s.kv_heads + c.h) * L + c.l) * s.d_head + c.d);
    };
    fill("k_prior", [&](const Coord& c) { return static_cast<float>(k[row(c)]); });
    fill("v_prior", [&](const Coord& c) { return static_cast<float>(v[row(c)]); });
    fill("table", [&](const Coord& c) {
      return static_cast<float>(s.block_kv->table[size_t(c.b * T + c.t)]);
    });
  } else {
    fill("k_prior", [&](const Coord& c) {
      return c.c < C ? static_cast<float>(in.k[size_t(s.kv_index(c.b, c.h, c.c, c.d))]) : kStaleKey;
    });
    fill("v_prior", [&](const Coord& c) {
      return c.c < C ? static_cast<float>(in.v[size_t(s.kv_index(c.b, c.h, c.c, c.d))])
                     : kStaleValue;
    });
  }
  bool slot_mask = false;
  for (const auto& dim : l.roles.at("mask").dims) {
    slot_mask = slot_mask || std::count(dim.begin(), dim.end(), 'c') > 0;
  }
  fill("mask", [&](const Coord& c) {
    // slot c of the S read (nki-library's build_full_attention_mask: the prior slots below the
    // position, the causal active tokens at the tail), or active key a (the active mask)
    const int64_t slot = l.block_mask > 0 ? block_mask_slot(c.c, l.block_mask) : c.c;
    return s.visible(c.b, c.s, slot_mask ? slot : C + c.a) ? 1.0f : 0.0f;
  });
  if (l.roles.count("positions")) {
    // pos_id of batch b for every active token (the test's broadcast of pos_id), or with a window
    // each query's window end (build_swa_positions), clamped into the cached slots as the
    // registered attention_tkg packs it (attention_tkg_draws.h swa_inputs_of)
    const std::vector<int64_t> pos = packed_positions(l, s);
    fill("positions",
         [&](const Coord& c) { return static_cast<float>(pos[size_t(c.b * A + c.s)]); });
  }
  if (l.roles.count("starts")) {
    const tkg::SwaPositions w = tkg::swa_inputs_of(s);
    fill("starts",
         [&](const Coord& c) { return static_cast<float>(w.start[size_t(c.b * A + c.s)]); });
  }
  if (l.roles.count("inv_freqs")) {
    if (!s.rope || s.rope->inv_freq.size() != size_t(s.d_head / 2)) {
      throw std::invalid_argument("the layout has inv_freqs; the spec has no RoPE frequencies");
    }
    fill("inv_freqs",
         [&](const Coord& c) { return static_cast<float>(s.rope->inv_freq[size_t(c.r)]); });
  }
  if (l.roles.count("sink")) {
    if (s.sink.size() != size_t(s.heads)) {
      throw std::invalid_argument("the layout has a sink; the spec has none");
    }
    fill("sink", [&](const Coord& c) { return static_cast<float>(s.sink[size_t(c.h)]); });
  }
}

Axis spec_axis(char a) {
  switch (a) {
    case 'b':
      return Axis::batch;
    case 'h':
      return Axis::head;
    case 's':
      return Axis::seq;
    default:
      return Axis::dim;
  }
}

}  // namespace

bool is_kv_cache_layout(const std::string& text) {
  std::string norm = text;
  std::replace(norm.begin(), norm.end(), ';', ' ');
  std::istringstream in(norm);
  std::string entry;
  while (in >> entry) {
    const std::string role = entry.substr(0, std::min(entry.find('='), entry.find(':')));
    if (role == "k_active") return true;  // required there; k_prior is also a cte role
  }
  return false;
}

KvCacheLayout parse_kv_cache_layout(const std::string& text) {
  std::string norm = text;
  std::replace(norm.begin(), norm.end(), ';', ' ');
  std::istringstream in(norm);
  KvCacheLayout l;
  std::string entry;
  while (in >> entry) {
    const auto eq = entry.find('=');
    if (eq == std::string::npos) {
      throw std::invalid_argument("layout entry '" + entry +
                                  "': expected ROLE[:TENSOR]=AXES,AXES,... or slots=N");
    }
    std::string role = entry.substr(0, eq), tensor;
    if (role == "rope_products") {
      const auto t = parse_dtype(entry.substr(eq + 1));
      if (!t || !is_float(*t)) {
        throw std::invalid_argument("layout entry '" + entry +
                                    "': rope_products is a float dtype (fp32, bf16, ...)");
      }
      l.rope_products = *t;
      continue;
    }
    if (role == "slots" || role == "window" || role == "block_mask") {
      int64_t& n = role == "slots" ? l.slots : role == "window" ? l.window : l.block_mask;
      try {
        size_t used = 0;
        n = std::stoll(entry.substr(eq + 1), &used);
        if (used != entry.size() - eq - 1 || n < 1) throw std::invalid_argument("");
      } catch (const std::exception&) {
        throw std::invalid_argument("layout entry '" + entry + "': " + role +
                                    " is a positive integer");
      }
      continue;
    }
    const auto colon = role.find(':');
    tensor = colon == std::string::npos ? role : role.substr(colon + 1);
    role = role.substr(0, colon);
    const RoleRule* rule = rule_of(role);
    if (rule == nullptr) {
      throw std::invalid_argument(
          "layout entry '" + entry + "': role '" + role +
          "' is not q, k_active, v_active, k_prior, v_prior, mask, out, sink, positions, "
          "starts, table or inv_freqs");
    }
    if (l.roles.count(role)) throw std::invalid_argument("layout gives '" + role + "' twice");
    KvRole r{tensor, {}};
    std::set<char> seen;
    std::istringstream dims(entry.substr(eq + 1));
    std::string dim;
    while (std::getline(dims, dim, ',')) {
      std::vector<char> axes;
      std::istringstream parts(dim);
      std::string part;
      while (std::getline(parts, part, '*')) {
        const char a = parse_axis(part, entry);
        if (a != '1' && std::string(rule->axes).find(a) == std::string::npos) {
          throw std::invalid_argument("layout entry '" + entry + "': " + role + " takes the axes " +
                                      rule->axes + " (and 1), not '" + part + "'");
        }
        if (a != '1' && !seen.insert(a).second) {
          throw std::invalid_argument("layout entry '" + entry + "' lists '" + part + "' twice");
        }
        axes.push_back(a);
      }
      if (axes.empty()) throw std::invalid_argument("layout entry '" + entry + "': empty dim");
      r.dims.push_back(axes);
    }
    if (r.dims.empty()) throw std::invalid_argument("layout entry '" + entry + "' has no axes");
    if (role == "mask" && seen.count('c') == seen.count('a')) {
      throw std::invalid_argument("layout entry '" + entry +
                                  "': the mask has a slot axis c (the whole mask) or an active "
                                  "key axis a (the active mask, with positions), one of them");
    }
    if (role == "out" && std::any_of(r.dims.begin(), r.dims.end(), [](const auto& d) {
          return std::count(d.begin(), d.end(), '1') > 0;
        })) {
      throw std::invalid_argument("layout entry '" + entry + "': out lists no '1' dimensions");
    }
    l.roles[role] = r;
  }
  for (const RoleRule& r : kRules) {
    if (!r.optional && !l.roles.count(r.name)) {
      throw std::invalid_argument(std::string("layout misses '") + r.name + "'");
    }
  }
  bool active_mask = false;
  for (const auto& dim : l.roles.at("mask").dims) {
    active_mask = active_mask || std::count(dim.begin(), dim.end(), 'a') > 0;
  }
  const bool rope = l.roles.count("inv_freqs") > 0;
  if (active_mask ? !l.roles.count("positions") : l.roles.count("positions") && !rope) {
    throw std::invalid_argument(
        "an active mask (axis a) goes with positions (the kernel builds the prior mask from "
        "them), a whole mask (axis c) without (unless inv_freqs: the RoPE positions)");
  }
  if (rope && !l.roles.count("positions")) {
    throw std::invalid_argument(
        "inv_freqs (RoPE in the kernel) goes with positions: the positions it rotates by");
  }
  if (l.rope_products && !rope) {
    throw std::invalid_argument("rope_products states how the kernel rotates: needs inv_freqs");
  }
  // A block cache: k_prior / v_prior list n and l (no b, no c) and the table maps each batch's
  // logical blocks to them; a flat cache lists no n, l and has no table.
  const bool blocks = l.roles.count("table") > 0;
  for (const char* role : {"k_prior", "v_prior"}) {
    std::set<char> axes;
    for (const auto& dim : l.roles.at(role).dims) axes.insert(dim.begin(), dim.end());
    const bool block_axes =
        axes.count('n') && axes.count('l') && !axes.count('b') && !axes.count('c');
    const bool flat_axes = !axes.count('n') && !axes.count('l');
    if (blocks ? !block_axes : !flat_axes) {
      throw std::invalid_argument(
          std::string(role) +
          (blocks ? ": with a table the cache lists n (cache block) and l (slot in a block), not "
                    "b or c"
                  : ": n and l (a block cache) go with a table role"));
    }
  }
  if (l.block_mask > 0 && (!blocks || active_mask)) {
    throw std::invalid_argument(
        "block_mask=R orders a whole mask's slots (axis c) as a block cache's kernel reads them: "
        "it goes with a table and a mask with axis c");
  }
  if ((l.window > 0) != (l.roles.count("starts") > 0)) {
    throw std::invalid_argument(
        "a sliding window (window=W) goes with starts (the window starts the kernel takes), and "
        "starts with a window");
  }
  return l;
}

Variant kv_cache_layout_variant(const Variant& contract_from, const Program& program,
                                const KvCacheLayout& layout, double scale) {
  if (!contract_from.draw_case) {
    throw std::invalid_argument(
        "a KV-cache layout draws each case's positions with the contract kernel's generator; " +
        contract_from.name + " has none (attention_tkg has)");
  }
  Variant v = contract_from;
  v.name = program.name;
  v.adapt_layout = nullptr;
  // Only the contract and the case generator are lent (explicit_layout.h).
  v.generations.clear();
  v.generations_reason.clear();
  v.determinism_runs = 0;
  std::vector<Axis> out_axes;
  for (const auto& dim : layout.roles.at("out").dims) {
    for (char a : dim) out_axes.push_back(spec_axis(a));
  }
  // q, k and v list no axes: pack_extra packs them (kernels/layout.h pack_inputs); out is read
  // through the layout, its flattened dimensions included.
  v.layout = Layout{{layout.roles.at("q").tensor, {}},
                    {layout.roles.at("k_prior").tensor, {}},
                    {layout.roles.at("v_prior").tensor, {}},
                    {layout.roles.at("out").tensor, out_axes}};
  // (The contract kernel's generator draws into the spec: no CaseDraws to read.)
  v.layout.pack_extra = [layout](const Program& p, const ParamValues& params,
                                 const oracle::AttentionSpec& s, const oracle::AttentionInputs& in,
                                 const CaseDraws&, std::map<std::string, HostTensor>& packed) {
    pack(layout, p, params, s, in, packed);
  };
  if (layout.roles.count("inv_freqs")) {
    // attention_tkg's fuse_rope stage (attention_tkg.py _perform_rope, _rope, _apply_rope):
    // cos/sin from an fp32 angle reduced by fp32(2 pi) (RopeAngle::fp32_reduced), the rotation
    // in fp32 with rotate_half(x) * sin kept in x's dtype (rope_products; unstated: q's dtype,
    // which bounds the fp32 case too), stored in q's / k's dtype (q_sb, k_active_sb: io_type),
    // then q scaled by 1 / sqrt(d) in place (activation copy, line 1567: q rounded before scale).
    const DType product = layout.rope_products ? *layout.rope_products
                                               : dtype_of(program, layout.roles.at("q").tensor);
    v.contract = [lent = v.contract, product](const Options& o) {
      oracle::PrecisionContract ct = lent(o);
      ct.name += "+fuse_rope";
      ct.scale_folded_into_q = true;
      ct.q_rounded_before_scale = true;
      ct.rope_angle = oracle::RopeAngle::fp32_reduced;
      ct.rope_product_dtype = product;
      return ct;
    };
    // Each case draws the frequencies as nki-library's test does (test_attention_tkg.py:
    // np.random.random((d // 2, 1)) fp32: U[0, 1)), after the lent generator's positions.
    v.draw_case = [lent = v.draw_case, layout](oracle::AttentionSpec& s, const ParamValues& params,
                                               uint64_t seed) {
      CaseDraws drawn = lent(s, params, seed);
      std::mt19937_64 rng(seed ^ 0x726f706537ULL);  // "rope7": apart from the lent draws
      for (double& f : s.rope->inv_freq) f = std::ldexp(double(rng() >> 40), -24);
      set_rope(layout, s);
      return drawn;
    };
  }
  v.spec = [program, layout, scale](const Options&, const ParamValues& params) {
    const Extents e = solve_extents(layout, role_shapes(program, params, layout));
    oracle::AttentionSpec s;
    s.batch = e.at(Size::B);
    s.heads = e.at(Size::H);
    s.kv_heads = e.at(Size::KVH);
    s.seqlen_q = e.at(Size::A);
    s.seqlen_kv = e.at(Size::S);
    s.d_head = e.at(Size::D);
    if (s.seqlen_kv <= s.seqlen_q) {
      throw std::invalid_argument("the kernel reads " + std::to_string(s.seqlen_kv) +
                                  " slots for " + std::to_string(s.seqlen_q) +
                                  " active tokens: no cached slot");
    }
    const bool blocks = layout.roles.count("table") > 0;
    if (blocks && e.at(Size::T) * e.at(Size::L) != s.seqlen_kv) {
      throw std::invalid_argument("the table's " + std::to_string(e.at(Size::T)) +
                                  " blocks per batch of " + std::to_string(e.at(Size::L)) +
                                  " slots do not cover the " + std::to_string(s.seqlen_kv) +
                                  " slots the kernel reads");
    }
    if (!blocks && e.at(Size::F) < s.seqlen_kv) {
      throw std::invalid_argument("the cache has " + std::to_string(e.at(Size::F)) +
                                  " slots, fewer than the " + std::to_string(s.seqlen_kv) +
                                  " the kernel reads");
    }
    if (layout.block_mask > 0 && s.seqlen_kv % (tkg::kSlotPartitions * layout.block_mask) != 0) {
      throw std::invalid_argument("block_mask=" + std::to_string(layout.block_mask) + ": the " +
                                  std::to_string(s.seqlen_kv) + " slots are no whole folds of " +
                                  std::to_string(tkg::kSlotPartitions) + " x " +
                                  std::to_string(layout.block_mask));
    }
    if (s.kv_heads < 1 || s.heads % s.kv_heads != 0) {
      throw std::invalid_argument("the query heads (" + std::to_string(s.heads) +
                                  ") are no multiple of the KV heads (" +
                                  std::to_string(s.kv_heads) + ")");
    }
    s.scale = scale;
    s.mask.kind = oracle::MaskKind::kv_cache;
    const size_t n = size_t(s.batch * s.seqlen_q);
    s.mask.cache_begin.assign(n, 0);
    s.mask.cache_end.assign(n, 0);
    for (int64_t b = 0; b < s.batch; ++b) {
      for (int64_t i = 0; i < s.seqlen_q; ++i) {
        s.mask.cache_end[size_t(b * s.seqlen_q + i)] = test_position(b, s.seqlen_kv, s.seqlen_q);
      }
    }
    if (layout.window > 0) {
      // build_swa_positions at the test's positions; the contract kernel's generator draws
      // another window per case when the spec records one (mask.window)
      std::vector<int64_t> pos(size_t(s.batch));
      for (int64_t b = 0; b < s.batch; ++b) {
        pos[size_t(b)] = test_position(b, s.seqlen_kv, s.seqlen_q);
      }
      tkg::set_swa_mask(s, pos, layout.window, blocks);
      s.mask.window = layout.window;
    }
    if (layout.roles.count("inv_freqs")) {
      // until a case draws its own: fp32 of 10000^(-2t/d), the frequencies of a model's RoPE
      s.rope.emplace();
      for (int64_t t = 0; t < s.d_head / 2; ++t) {
        s.rope->inv_freq.push_back(static_cast<float>(std::pow(10000.0, -2.0 * t / s.d_head)));
      }
      set_rope(layout, s);
    }
    if (layout.roles.count("sink")) {
      s.sink.assign(size_t(s.heads), 0.0);
      for (int64_t h = 0; h < s.heads; ++h) s.sink[size_t(h)] = 0.25 * double(h % 8);
    }
    if (blocks) {
      // a table for the test's positions; each case draws another (attention_tkg's draw_case,
      // attention_tkg_draws.h draw_window_and_table) over these N physical blocks
      std::mt19937_64 rng(0xB10Cu);
      s.block_kv = tkg::draw_block_table(s, e.at(Size::L), e.at(Size::N), rng);
    }
    s.input_dtype = dtype_of(program, layout.roles.at("k_prior").tensor);
    s.output_dtype = dtype_of(program, layout.roles.at("out").tensor);
    return s;
  };
  return v;
}

}  // namespace ncv::kernels

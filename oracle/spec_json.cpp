// SPEC.json parsing with a JSON path in every error, and OUT.json writing.
#include "oracle/spec_json.h"

#include <charconv>
#include <cmath>
#include <set>

namespace ncv::oracle {

namespace {

using nlohmann::json;

std::string at(const std::string& path, size_t i) {
  return path + "[" + std::to_string(i) + "]";
}
std::string member(const std::string& path, const char* name) {
  return path.empty() ? std::string(name) : path + "." + name;
}

const char* type_name(const json& j) {
  return j.type_name();
}

const json& require(const json& obj, const std::string& path, const char* name) {
  auto it = obj.find(name);
  if (it == obj.end()) throw SpecError(member(path, name), "missing required field");
  return *it;
}

void check_known(const json& obj, const std::string& path,
                 std::initializer_list<const char*> known) {
  const std::set<std::string> names(known.begin(), known.end());
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    if (names.count(it.key()) == 0)
      throw SpecError(member(path, it.key().c_str()), "unknown field");
  }
}

const json& require_object(const json& j, const std::string& path) {
  if (!j.is_object()) throw SpecError(path, std::string("expected an object, got ") + type_name(j));
  return j;
}

int64_t get_int(const json& j, const std::string& path) {
  if (j.is_number_unsigned()) {
    const auto v = j.get<uint64_t>();
    if (v > static_cast<uint64_t>(INT64_MAX)) throw SpecError(path, "integer out of range");
    return static_cast<int64_t>(v);
  }
  if (j.is_number_integer()) return j.get<int64_t>();
  throw SpecError(path, std::string("expected an integer, got ") + type_name(j));
}

// A finite number; with allow_special also the strings "nan", "inf", "+inf", "-inf".
double get_number(const json& j, const std::string& path, bool allow_special = false) {
  if (j.is_number()) {
    const double v = j.get<double>();
    if (!std::isfinite(v)) throw SpecError(path, "number out of the range of double");
    if (j.is_number_integer() || j.is_number_unsigned()) {
      // Integers above 2^53 would be rounded: refuse rather than change the value.
      const bool exact =
          j.is_number_unsigned()
              ? static_cast<uint64_t>(v) == j.get<uint64_t>() && v < 0x1p64
              : v >= -0x1p63 && v < 0x1p63 && static_cast<int64_t>(v) == j.get<int64_t>();
      if (!exact) throw SpecError(path, "integer not exactly representable as a double");
    }
    return v;
  }
  if (allow_special && j.is_string()) {
    const auto& s = j.get_ref<const std::string&>();
    if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
    if (s == "inf" || s == "+inf") return std::numeric_limits<double>::infinity();
    if (s == "-inf") return -std::numeric_limits<double>::infinity();
    throw SpecError(path, "expected a number or \"nan\", \"inf\", \"-inf\", got \"" + s + "\"");
  }
  throw SpecError(path, std::string("expected a number, got ") + type_name(j));
}

const json& require_array(const json& j, const std::string& path, int64_t size) {
  if (!j.is_array()) throw SpecError(path, std::string("expected an array, got ") + type_name(j));
  if (static_cast<int64_t>(j.size()) != size) {
    throw SpecError(
        path, "expected " + std::to_string(size) + " elements, got " + std::to_string(j.size()));
  }
  return j;
}

// Nested array of the given dims, flattened row-major through `leaf`.
template <typename Leaf>
void walk(const json& j, const std::string& path, const std::vector<int64_t>& dims, size_t level,
          const Leaf& leaf) {
  require_array(j, path, dims[level]);
  for (size_t i = 0; i < j.size(); ++i) {
    if (level + 1 == dims.size()) {
      leaf(j[i], at(path, i));
    } else {
      walk(j[i], at(path, i), dims, level + 1, leaf);
    }
  }
}

std::vector<int64_t> int_table(const json& j, const std::string& path, int64_t rows, int64_t cols) {
  std::vector<int64_t> out;
  walk(j, path, {rows, cols}, 0,
       [&](const json& x, const std::string& p) { out.push_back(get_int(x, p)); });
  return out;
}

std::vector<double> tensor(const json& doc, const char* name, const std::vector<int64_t>& dims,
                           std::optional<DType> dtype) {
  std::vector<double> out;  // no reserve: the sizes are only trusted once the arrays match them
  walk(require(doc, "", name), name, dims, 0, [&](const json& x, const std::string& p) {
    const double v = get_number(x, p, true);
    if (dtype && !std::isnan(v)) {
      const auto f = static_cast<float>(v);
      if (static_cast<double>(f) != v || static_cast<double>(quantize(*dtype, f)) != v) {
        throw SpecError(p, "value " + double_to_decimal(v) + " is not exactly representable in " +
                               std::string(dtype_name(*dtype)));
      }
    }
    out.push_back(v);
  });
  return out;
}

std::optional<DType> get_dtype(const json& doc, const char* name) {
  auto it = doc.find(name);
  if (it == doc.end()) return std::nullopt;
  if (!it->is_string())
    throw SpecError(name, std::string("expected a dtype name, got ") + type_name(*it));
  const auto t = parse_dtype(it->get_ref<const std::string&>());
  if (!t || !is_float(*t)) {
    throw SpecError(name, "unknown floating-point dtype \"" + it->get<std::string>() + "\"");
  }
  return t;
}

}  // namespace

std::string double_to_decimal(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, x);
  return std::string(buf, r.ptr);
}

SpecFile parse_spec_json(const json& doc) {
  require_object(doc, "<document>");
  check_known(
      doc, "",
      {"batch", "heads", "kv_heads", "seqlen_q", "seqlen_kv", "d_head", "scale", "mask", "sink",
       "bias", "rope", "block_table", "input_dtype", "output_dtype", "q", "k", "v"});
  SpecFile f;
  AttentionSpec& s = f.spec;
  s.batch = get_int(require(doc, "", "batch"), "batch");
  s.heads = get_int(require(doc, "", "heads"), "heads");
  s.kv_heads = get_int(require(doc, "", "kv_heads"), "kv_heads");
  s.seqlen_q = get_int(require(doc, "", "seqlen_q"), "seqlen_q");
  s.seqlen_kv = get_int(require(doc, "", "seqlen_kv"), "seqlen_kv");
  s.d_head = get_int(require(doc, "", "d_head"), "d_head");
  s.scale = get_number(require(doc, "", "scale"), "scale");
  const std::optional<DType> in_dtype = get_dtype(doc, "input_dtype");
  const std::optional<DType> out_dtype = get_dtype(doc, "output_dtype");
  if (in_dtype) s.input_dtype = *in_dtype;
  if (out_dtype) s.output_dtype = *out_dtype;
  s.validate();  // shapes first, so the arrays below are read against sane sizes

  if (auto it = doc.find("mask"); it != doc.end()) {
    const json& m = require_object(*it, "mask");
    const json& kind = require(m, "mask", "kind");
    if (!kind.is_string())
      throw SpecError("mask.kind", std::string("expected a string, got ") + type_name(kind));
    const std::string& k = kind.get_ref<const std::string&>();
    if (k == "none" || k == "causal") {
      check_known(m, "mask", {"kind"});
      s.mask.kind = k == "none" ? MaskKind::none : MaskKind::causal;
    } else if (k == "sliding_window") {
      check_known(m, "mask", {"kind", "window"});
      s.mask.kind = MaskKind::sliding_window;
      s.mask.window = get_int(require(m, "mask", "window"), "mask.window");
    } else if (k == "explicit") {
      check_known(m, "mask", {"kind", "allowed"});
      s.mask.kind = MaskKind::explicit_mask;
      walk(require(m, "mask", "allowed"), "mask.allowed", {s.seqlen_q, s.seqlen_kv}, 0,
           [&](const json& x, const std::string& p) {
             if (!x.is_boolean())
               throw SpecError(p, std::string("expected true or false, got ") + type_name(x));
             s.mask.allowed.push_back(x.get<bool>() ? 1 : 0);
           });
    } else if (k == "position_ids") {
      check_known(m, "mask", {"kind", "pos"});
      s.mask.kind = MaskKind::position_ids;
      s.mask.pos = int_table(require(m, "mask", "pos"), "mask.pos", s.batch, s.seqlen_q);
    } else if (k == "kv_cache") {
      check_known(m, "mask", {"kind", "cache_begin", "cache_end"});
      s.mask.kind = MaskKind::kv_cache;
      s.mask.cache_begin =
          int_table(require(m, "mask", "cache_begin"), "mask.cache_begin", s.batch, s.seqlen_q);
      s.mask.cache_end =
          int_table(require(m, "mask", "cache_end"), "mask.cache_end", s.batch, s.seqlen_q);
    } else {
      throw SpecError("mask.kind", "unknown mask kind \"" + k +
                                       "\" (known: none, causal, sliding_window, explicit, "
                                       "position_ids, kv_cache)");
    }
  }
  if (auto it = doc.find("sink"); it != doc.end()) {
    require_array(*it, "sink", s.heads);
    for (size_t h = 0; h < it->size(); ++h) s.sink.push_back(get_number((*it)[h], at("sink", h)));
  }
  if (auto it = doc.find("bias"); it != doc.end()) {  // [Sq][Skv], finite (validate below)
    walk(*it, "bias", {s.seqlen_q, s.seqlen_kv}, 0,
         [&](const json& x, const std::string& p) { s.bias.push_back(get_number(x, p)); });
  }
  if (auto it = doc.find("rope"); it != doc.end()) {
    const json& r = require_object(*it, "rope");
    check_known(r, "rope", {"theta", "pos_q", "pos_k", "inv_freq", "rotated_from"});
    Rope rope;
    if (auto t = r.find("theta"); t != r.end()) rope.theta = get_number(*t, "rope.theta");
    rope.pos_q = int_table(require(r, "rope", "pos_q"), "rope.pos_q", s.batch, s.seqlen_q);
    rope.pos_k = int_table(require(r, "rope", "pos_k"), "rope.pos_k", s.batch, s.seqlen_kv);
    if (auto fr = r.find("inv_freq"); fr != r.end()) {  // d_head / 2 values (validate below)
      if (!fr->is_array()) throw SpecError("rope.inv_freq", "must be an array");
      for (size_t t = 0; t < fr->size(); ++t) {
        rope.inv_freq.push_back(get_number((*fr)[t], at("rope.inv_freq", t)));
      }
    }
    if (auto rf = r.find("rotated_from"); rf != r.end()) {
      rope.rotated_from = get_int(*rf, "rope.rotated_from");
    }
    s.rope = rope;
  }
  if (auto it = doc.find("block_table"); it != doc.end()) {
    const json& b = require_object(*it, "block_table");
    check_known(b, "block_table", {"block_size", "num_blocks", "table"});
    BlockKv bk;
    bk.block_size = get_int(require(b, "block_table", "block_size"), "block_table.block_size");
    bk.num_blocks = get_int(require(b, "block_table", "num_blocks"), "block_table.num_blocks");
    s.block_kv = bk;
    try {  // block_size and num_blocks first; the (still empty) table is read next
      s.validate();
    } catch (const SpecError& e) {
      if (e.path != "block_table.table") throw;
    }
    s.block_kv->table = int_table(require(b, "block_table", "table"), "block_table.table", s.batch,
                                  s.seqlen_kv / bk.block_size);
  }
  s.validate();

  const std::vector<int64_t> q_dims = {s.batch, s.heads, s.seqlen_q, s.d_head};
  const std::vector<int64_t> kv_dims =
      s.block_kv ? std::vector<int64_t>{s.block_kv->num_blocks, s.kv_heads, s.block_kv->block_size,
                                        s.d_head}
                 : std::vector<int64_t>{s.batch, s.kv_heads, s.seqlen_kv, s.d_head};
  f.inputs.q = tensor(doc, "q", q_dims, in_dtype);
  f.inputs.k = tensor(doc, "k", kv_dims, in_dtype);
  f.inputs.v = tensor(doc, "v", kv_dims, in_dtype);
  return f;
}

SpecFile parse_spec_text(const std::string& text) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception& e) {  // syntax errors, numbers beyond double's range
    throw SpecError("<document>", std::string("not valid JSON: ") + e.what());
  }
  return parse_spec_json(doc);
}

json oracle_output_json(const AttentionSpec& s, const OracleOutput& o, bool fast) {
  json out = json::array();
  json lse = json::array();
  for (int64_t b = 0; b < s.batch; ++b) {
    json ob = json::array(), lb = json::array();
    for (int64_t h = 0; h < s.heads; ++h) {
      json oh = json::array(), lh = json::array();
      for (int64_t i = 0; i < s.seqlen_q; ++i) {
        json row = json::array();
        for (int64_t c = 0; c < s.d_head; ++c) {
          const auto x = static_cast<size_t>(s.q_index(b, h, i, c));
          row.push_back(!fast && x < o.out_decimal.size() ? o.out_decimal[x]
                                                          : double_to_decimal(o.out[x]));
        }
        oh.push_back(std::move(row));
        lh.push_back(
            double_to_decimal(o.lse[static_cast<size_t>((b * s.heads + h) * s.seqlen_q + i)]));
      }
      ob.push_back(std::move(oh));
      lb.push_back(std::move(lh));
    }
    out.push_back(std::move(ob));
    lse.push_back(std::move(lb));
  }
  json j;
  j["oracle"] = fast ? "fast" : "exact";
  // Exact: 36 significant digits of the 113-bit result. Fast: shortest round-trip decimal of
  // the double result (at most 17 digits); its error bound is fast_oracle_bound.
  j["significant_digits"] = fast ? 17 : 36;
  j["out"] = std::move(out);
  j["lse"] = std::move(lse);
  return j;
}

}  // namespace ncv::oracle

// How an equivalence result reads: the level names, the per-option verdicts, the text a person
// reads and the JSON a search loop consumes (equiv.h).
#include <cstdio>
#include <sstream>

#include "equiv/equiv.h"
#include "equiv/structural.h"

namespace ncv::equiv {

const char* level_name(Level l) {
  switch (l) {
    case Level::bit_exact:
      return "bit-exact";
    case Level::real:
      return "real";
    case Level::contract:
      return "contract";
  }
  return "?";
}

std::optional<Level> parse_level(const std::string& s) {
  for (Level l : {Level::bit_exact, Level::real, Level::contract}) {
    if (s == level_name(l)) return l;
  }
  return std::nullopt;
}

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::proved:
      return "proved";
    case Verdict::refuted:
      return "refuted";
    case Verdict::unknown:
      return "unknown";
  }
  return "?";
}

const char* numeric_verdict_name(Verdict v) {
  switch (v) {
    case Verdict::proved:
      return "pass";
    case Verdict::refuted:
      return "fail";
    case Verdict::unknown:
      return "not run";
  }
  return "?";
}

std::string options_text(const kernels::Options& o) {
  std::string s;
  for (const auto& [k, v] : o) s += (s.empty() ? "" : " ") + k + "=" + v;
  return s.empty() ? "(no options)" : s;
}

bool OptionOutcome::holds(Level l) const {
  if (!interface_error.empty() || !run_error.empty() || !undefined_result.empty()) return false;
  if (bit_exact == Verdict::proved) return true;
  if (l == Level::bit_exact) return false;
  const bool real_ok = real == Verdict::proved && overflow_ok;
  if (l == Level::real) return real_ok;
  return real_ok && numeric == Verdict::proved;
}

std::string OptionOutcome::status(Level l) const {
  if (holds(l)) return "holds";
  if (!interface_error.empty() || !run_error.empty()) return "refuted";
  if (!undefined_result.empty()) return "unknown";
  if (l == Level::bit_exact) return bit_exact == Verdict::refuted ? "refuted" : "unknown";
  if (real == Verdict::refuted || numeric == Verdict::refuted) return "refuted";
  return "unknown";
}

std::string OptionOutcome::unknown_reason(Level l) const {
  if (status(l) != "unknown") return "";
  if (!undefined_result.empty()) return "a run reached an undefined result: " + undefined_result;
  auto layer = [](const char* name, Verdict v, const std::string& detail) {
    return std::string(name) + " " + verdict_name(v) + (detail.empty() ? "" : ": " + detail);
  };
  if (l == Level::bit_exact) return layer("bit-exact", bit_exact, bit_detail);
  if (real != Verdict::proved) {
    return layer("real", real, real_detail.empty() ? "the canonical forms differ" : real_detail) +
           "; " + layer("bit-exact", bit_exact, bit_detail);
  }
  if (!overflow_ok) {
    for (const ExpObligation& e : overflow) {
      if (!e.discharged && e.not_checked.empty()) {
        return "the exp overflow obligation (argument <= 0) is not discharged at " + e.at;
      }
    }
    for (const ExpObligation& e : overflow) {
      if (!e.discharged) {
        return "the exp overflow obligation was not checked at " + e.at + ": " + e.not_checked;
      }
    }
    return "the exp overflow obligation was not checked: the terms were not built";
  }
  return "numeric " + std::string(numeric_verdict_name(numeric)) +
         (numeric_detail.empty() ? "" : ": " + numeric_detail);
}

std::string params_str(const ParamValues& p) {
  std::string s;
  for (const auto& [k, v] : p) s += (s.empty() ? "" : " ") + k + "=" + std::to_string(v);
  return s;
}

namespace {

std::string hex(uint32_t b) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", b);
  return buf;
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

nlohmann::json params_json(const ParamValues& p) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [k, v] : p) j[k] = v;
  return j;
}

}  // namespace

nlohmann::json Counterexample::to_json() const {
  nlohmann::json j = {{"params", params_json(params)},
                      {"inputs", inputs},
                      {"seed", seed},
                      {"output", output},
                      {"index", index},
                      {"original", original_value},
                      {"rewrite", rewrite_value},
                      {"replayed", true}};
  if (bound > 0) {
    j["bound"] = bound;
  } else {
    j["original_bits"] = hex(original_bits);
    j["rewrite_bits"] = hex(rewrite_bits);
    j["parts_at"] = {{"original", original_at},
                     {"rewrite", rewrite_at},
                     {"original_value", original_at_value},
                     {"rewrite_value", rewrite_at_value}};
  }
  return j;
}

nlohmann::json OptionOutcome::to_json() const {
  nlohmann::json shapes_j = nlohmann::json::array();
  for (const ParamValues& p : shapes) shapes_j.push_back(params_json(p));
  nlohmann::json j = {{"options", options}, {"shapes", shapes_j}, {"seconds", seconds}};
  j["tested_shape"] = tested_shape ? params_json(*tested_shape) : nlohmann::json(nullptr);
  if (!interface_error.empty()) {
    j["interface"] = {{"ok", false}, {"error", interface_error}};
    return j;
  }
  j["interface"] = {{"ok", true}};
  if (!run_error.empty()) {
    j["rewrite_run"] = {{"ok", false}, {"error", run_error}, {"replayed", true}};
    return j;
  }
  if (!undefined_result.empty()) {
    // neither side's values are known there: every level unknown
    j["undefined_result"] = undefined_result;
    return j;
  }
  const char* proof_scope = all_shapes.empty() && !whole_domain ? "bounded" : "all_shapes";
  j["bit_exact"] = {{"verdict", verdict_name(bit_exact)},
                    {"scope", proof_scope},
                    {"detail", bit_detail},
                    {"assumptions", assumptions}};
  if (!layer0_difference.empty()) j["layer0_difference"] = layer0_difference;
  if (bit_counterexample) j["bit_exact"]["counterexample"] = bit_counterexample->to_json();
  nlohmann::json regions_j = nlohmann::json::array();
  for (const OutputRegion& r : regions) {
    nlohmann::json x = {{"shape", params_json(r.shape)},
                        {"output", r.output},
                        {"elements", r.elements},
                        {"terms_differ", r.differing}};
    if (r.differing > 0) x["box"] = {{"first", r.box_first}, {"last", r.box_last}};
    regions_j.push_back(x);
  }
  j["regions"] = regions_j;
  j["real"] = {{"verdict", verdict_name(real)}, {"scope", proof_scope}, {"detail", real_detail}};
  nlohmann::json diff = nlohmann::json::array();
  for (const NumericsDifference& d : numerics_diff) {
    diff.push_back({{"kind", d.kind},
                    {"original", d.original},
                    {"rewrite", d.rewrite},
                    {"original_at", d.original_at},
                    {"rewrite_at", d.rewrite_at},
                    {"elements", d.elements}});
  }
  j["numerics_diff"] = diff;
  nlohmann::json ov = nlohmann::json::array();
  for (const ExpObligation& e : overflow)
    ov.push_back({{"at", e.at},
                  {"discharged", e.discharged},
                  {"not_checked", e.not_checked.empty() ? nlohmann::json(nullptr)
                                                        : nlohmann::json(e.not_checked)}});
  j["overflow"] = {{"ok", overflow_ok}, {"exp", ov}};
  j["numeric"] = {{"verdict", numeric_verdict_name(numeric)},
                  {"detail", numeric_detail},
                  {"cases", numeric_cases},
                  {"max_normalized", max_normalized}};
  if (numeric_counterexample) j["numeric"]["counterexample"] = numeric_counterexample->to_json();
  j["contract_diff"] = contract_diff;
  return j;
}

nlohmann::json EquivResult::to_json() const {
  nlohmann::json per = nlohmann::json::array();
  for (const OptionOutcome& o : outcomes) {
    nlohmann::json j = o.to_json();
    j["holds"] = o.holds(required);
    j["status"] = o.status(required);
    if (const std::string why = o.unknown_reason(required); !why.empty()) j["unknown_reason"] = why;
    per.push_back(j);
  }
  return {{"original", original}, {"rewrite", rewrite}, {"require", level_name(required)},
          {"scope", scope},       {"verdict", verdict}, {"exit", exit_code},
          {"per_options", per}};
}

std::string EquivResult::text() const {
  std::ostringstream s;
  s << "equiv " << original << " -> " << rewrite << "   (require " << level_name(required) << ")\n";
  for (const OptionOutcome& o : outcomes) {
    s << "\n"
      << options_text(o.options) << "   [" << o.status(required) << ", " << num(o.seconds)
      << " s]\n";
    if (const std::string why = o.unknown_reason(required); !why.empty()) {
      s << "  unknown        " << why << "\n";
    }
    s << "  shapes         ";
    for (size_t i = 0; i < o.shapes.size(); ++i) s << (i ? "; " : "") << params_str(o.shapes[i]);
    if (o.tested_shape) s << "; tested only: " << params_str(*o.tested_shape);
    s << "\n";
    if (!o.interface_error.empty()) {
      s << "  interface      FAILS  " << o.interface_error << "\n";
      continue;
    }
    if (!o.run_error.empty()) {
      s << "  rewrite run    FAILS where the original runs (replayed on the interpreter): "
        << o.run_error << "\n";
      continue;
    }
    if (!o.undefined_result.empty()) {
      s << "  runs           UNKNOWN (every level): " << o.undefined_result << "\n";
      continue;
    }
    for (const OutputRegion& r : o.regions) {
      s << "  terms          " << r.output << " at " << params_str(r.shape) << ": " << r.differing
        << " of " << r.elements << " elements differ";
      if (r.differing > 0) {
        s << " (indices ";
        for (size_t d = 0; d < r.box_first.size(); ++d) {
          s << (d ? ", " : "") << r.box_first[d] << ".." << r.box_last[d];
        }
        s << ")";
      }
      s << "\n";
    }
    s << "  bit-exact      " << verdict_name(o.bit_exact) << "  " << o.bit_detail << "\n";
    for (const std::string& a : o.assumptions) s << "                 assuming " << a << "\n";
    if (const auto& c = o.bit_counterexample) {
      s << "                 counterexample " << params_str(c->params) << ", inputs " << c->inputs
        << " seed " << c->seed << ": " << c->output << "[";
      for (size_t i = 0; i < c->index.size(); ++i) s << (i ? "," : "") << c->index[i];
      s << "] original " << num(c->original_value) << " (" << hex(c->original_bits)
        << ") vs rewrite " << num(c->rewrite_value) << " (" << hex(c->rewrite_bits) << ")\n";
      s << "                 values part at original " << c->original_at << " = "
        << num(c->original_at_value) << "\n";
      s << "                               rewrite  " << c->rewrite_at << " = "
        << num(c->rewrite_at_value) << "\n";
    }
    s << "  real           " << verdict_name(o.real) << "  " << o.real_detail << "\n";
    // A bounded proof says why it is not one for every shape.
    const bool proved = o.bit_exact == Verdict::proved || o.real == Verdict::proved;
    if (proved && o.all_shapes.empty() && !o.whole_domain && !o.layer0_difference.empty()) {
      s << "  every shape    not shown: the programs are not one up to " << kLayer0Differences
        << " (" << o.layer0_difference << ")\n";
    }
    if (!o.numerics_diff.empty()) s << "  numerics diff\n";
    for (const NumericsDifference& d : o.numerics_diff) {
      s << "    " << d.kind << " (in " << d.elements << " of the elements walked): " << d.original
        << "  vs  " << d.rewrite << "\n";
      if (!d.original_at.empty()) s << "      original " << d.original_at << "\n";
      if (!d.rewrite_at.empty()) s << "      rewrite  " << d.rewrite_at << "\n";
    }
    int open = 0, unchecked = 0;
    for (const ExpObligation& e : o.overflow) {
      open += e.discharged || !e.not_checked.empty() ? 0 : 1;
      unchecked += e.discharged || e.not_checked.empty() ? 0 : 1;
    }
    if (o.overflow.empty() && !o.overflow_ok) {
      // the terms were not built (the budget): the obligation was not looked at
      s << "  overflow       not checked  the terms were not built\n";
    } else if (!o.overflow_ok && open == 0 && unchecked > 0) {
      s << "  overflow       not checked  " << o.overflow.size() << " exp instruction(s), "
        << unchecked << " whose argument's real form was not built\n";
    } else if (!o.overflow_ok && open == 0) {
      // every exp looked at is discharged, but a shape's terms outgrew the budget
      s << "  overflow       not checked at every shape  " << o.overflow.size()
        << " exp instruction(s) discharged where the terms were built; the terms outgrew the "
           "budget at another shape\n";
    } else {
      s << "  overflow       " << (o.overflow_ok ? "ok" : "NOT DISCHARGED") << "  "
        << o.overflow.size() << " exp instruction(s), " << open << " without a max subtracted\n";
    }
    for (const ExpObligation& e : o.overflow) {
      if (e.discharged) continue;
      if (e.not_checked.empty()) {
        s << "                 exp may overflow: " << e.at << "\n";
      } else {
        s << "                 not checked: " << e.at << ": " << e.not_checked << "\n";
      }
    }
    s << "  numeric        " << numeric_verdict_name(o.numeric) << "  " << o.numeric_cases
      << " cases, max |diff| / (bound_O + bound_R) = " << num(o.max_normalized) << "  "
      << o.numeric_detail << "\n";
    if (const auto& c = o.numeric_counterexample) {
      s << "                 counterexample " << params_str(c->params) << ", inputs " << c->inputs
        << " seed " << c->seed << ": ";
      s << "out[";
      for (size_t i = 0; i < c->index.size(); ++i) s << (i ? "," : "") << c->index[i];
      s << "] original " << num(c->original_value) << " vs rewrite " << num(c->rewrite_value)
        << ", bound " << num(c->bound) << "\n";
    }
    for (const auto& d : o.contract_diff) {
      s << "  contract diff  " << d["field"].get<std::string>() << ": " << d["original"].dump()
        << " -> " << d["rewrite"].dump() << "\n";
    }
  }
  s << "\nscope: " << scope << "\n";
  s << "verdict: " << verdict << " (require " << level_name(required) << ")\n";
  return s.str();
}

}  // namespace ncv::equiv

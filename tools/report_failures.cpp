#include "tools/report_failures.h"

#include <vector>

#include "check/replay.h"

namespace ncv::cli {

namespace {

std::string text_of(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return "";
  return it->is_string() ? it->get<std::string>() : it->dump();
}

// A check row's reason: its unknown, else its first case that did not pass.
std::string check_reason(const nlohmann::json& row) {
  if (const std::string u = text_of(row, "unknown"); !u.empty()) return u;
  for (const nlohmann::json& c : row.value("cases", nlohmann::json::array())) {
    if (c.value("pass", false)) continue;
    return "case seed=" + text_of(c, "seed") + " " + text_of(c, "distribution") + ": " +
           text_of(c, "verdict_line");
  }
  return "the check did not pass";  // a row without cases (none ran)
}

// A link row's reason: its registry error, else its status against its claim and, from the
// equiv outcome, why it is not proved (or what refuted it).
std::string link_reason(const nlohmann::json& row) {
  if (const std::string e = text_of(row, "error"); !e.empty()) return e;
  std::string s = text_of(row, "status") + ": claim " + text_of(row, "claim") + ", level " +
                  text_of(row, "level");
  const nlohmann::json& per =
      row.value("equiv", nlohmann::json::object()).value("per_options", nlohmann::json::array());
  for (const nlohmann::json& o : per) {
    if (const std::string why = text_of(o, "unknown_reason"); !why.empty()) return s + "; " + why;
    if (text_of(o, "status") != "refuted") continue;
    for (const char* key : {"interface", "rewrite_run"}) {
      const std::string e = text_of(o.value(key, nlohmann::json::object()), "error");
      if (!e.empty()) return s + "; " + key + " fails: " + e;
    }
    for (const char* layer : {"bit_exact", "real", "numeric"}) {
      const nlohmann::json& l = o.value(layer, nlohmann::json::object());
      const std::string v = text_of(l, "verdict");  // numeric says "fail"
      if (v != "refuted" && v != "fail") continue;
      s += std::string("; ") + layer + " refuted";
      if (const std::string d = text_of(l, "detail"); !d.empty()) s += ": " + d;
      if (const auto c = l.find("counterexample"); c != l.end()) {
        s += " (" + text_of(*c, "output") + text_of(*c, "index") + ": original " +
             text_of(*c, "original") + " vs rewrite " + text_of(*c, "rewrite") + ", inputs " +
             text_of(*c, "inputs") + " seed " + text_of(*c, "seed") + ")";
      }
      return s;
    }
  }
  return s;
}

std::string link_replay(const nlohmann::json& row) {
  std::vector<std::string> w = {"ncverify", "equiv", text_of(row, "rewrites"),
                                text_of(row, "kernel")};
  // items() refers to the object it iterates: keep the copy value() returns alive
  const nlohmann::json options = row.value("options", nlohmann::json::object());
  for (const auto& [name, value] : options.items()) {
    w.push_back("--param");
    w.push_back(name + "=" + (value.is_string() ? value.get<std::string>() : value.dump()));
  }
  if (const std::string gen = text_of(row, "gen"); !gen.empty()) {
    w.push_back("--gen");
    w.push_back(gen);
  }
  return kernels::shell_join(w);
}

std::string proof_reason(const nlohmann::json& row) {
  std::string s = text_of(row, "counterexample") + " counterexample(s), " +
                  text_of(row, "unknown") + " unknown of " + text_of(row, "obligations") +
                  " obligations";
  for (const nlohmann::json& u : row.value("unproved", nlohmann::json::array())) {
    s += "; " + u.get<std::string>();
  }
  return s;
}

bool passed_proof(const nlohmann::json& row) {
  return row.value("counterexample", 0) == 0 && row.value("unknown", 0) == 0 &&
         row.value("pass", true);
}

}  // namespace

nlohmann::json annotate_failures(nlohmann::json& report) {
  nlohmann::json out = nlohmann::json::array();
  auto add = [&out](nlohmann::json& row, const char* kind, bool unknown, const std::string& why) {
    row["reason"] = why;
    const nlohmann::json& replay = row.value("replay", nlohmann::json::array());
    out.push_back({{"kind", kind},
                   {"kernel", text_of(row, "kernel")},
                   {"verdict", unknown ? "UNKNOWN" : "FAIL"},
                   {"reason", why},
                   {"replay", replay.empty() ? "" : replay.front().get<std::string>()}});
  };
  if (report.contains("checks")) {
    for (nlohmann::json& row : report["checks"]) {
      if (row.value("pass", false)) continue;
      add(row, "check", text_of(row, "verdict") == "unknown", check_reason(row));
    }
  }
  if (report.contains("links")) {
    for (nlohmann::json& row : report["links"]) {
      if (row.value("pass", false)) continue;
      if (!row.contains("error")) row["replay"] = nlohmann::json::array({link_replay(row)});
      add(row, "equiv", text_of(row, "status") == "UNKNOWN", link_reason(row));
    }
  }
  if (report.contains("proofs")) {
    for (nlohmann::json& row : report["proofs"]) {
      if (passed_proof(row)) continue;
      const std::vector<std::string> w = {"ncverify", "prove", text_of(row, "kernel"), "--gen",
                                          text_of(row, "gen")};
      row["replay"] = nlohmann::json::array({kernels::shell_join(w)});
      add(row, "prove", row.value("counterexample", 0) == 0, proof_reason(row));
    }
  }
  return out;
}

std::string failures_text(const nlohmann::json& failures) {
  if (failures.empty()) return "\nnot passed: none\n";
  std::string s = "\nnot passed: " + std::to_string(failures.size()) + "\n";
  for (const nlohmann::json& f : failures) {
    s += "  " + text_of(f, "verdict") + " " + text_of(f, "kind") + " " + text_of(f, "kernel") +
         ": " + text_of(f, "reason") + "\n";
    if (const std::string r = text_of(f, "replay"); !r.empty()) s += "    replay: " + r + "\n";
  }
  return s;
}

}  // namespace ncv::cli

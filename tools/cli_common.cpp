#include "tools/cli_common.h"

#include <CLI/CLI.hpp>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "tools/input_file.h"

namespace ncv::cli {

std::string repository_path(std::string_view relative) {
  return std::string(NCVERIFY_SOURCE_DIR) + "/" + std::string(relative);
}

namespace {

bool is_param_name(std::string_view s) {
  if (s.empty()) return false;
  auto alpha = [](char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; };
  if (!alpha(s[0])) return false;
  for (char c : s) {
    if (!alpha(c) && !(c >= '0' && c <= '9')) return false;
  }
  return true;
}

}  // namespace

ParamValues parse_param_assignments(const std::vector<std::string>& assignments) {
  ParamValues params;
  for (const std::string& a : assignments) {
    const auto eq = a.find('=');
    const std::string_view name = std::string_view(a).substr(0, eq);
    if (eq == std::string::npos || !is_param_name(name)) {
      throw UsageError("malformed --param '" + a + "': expected NAME=INTEGER");
    }
    const std::string_view digits = std::string_view(a).substr(eq + 1);
    int64_t value = 0;
    const char* first = digits.data();
    const char* last = digits.data() + digits.size();
    if (!digits.empty() && *first == '+') ++first;  // from_chars rejects a leading '+'
    const auto [end, ec] = std::from_chars(first, last, value);
    if (digits.empty() || ec != std::errc() || end != last) {
      throw UsageError("malformed --param '" + a + "': '" + std::string(digits) +
                       "' is not an integer (expected NAME=INTEGER)");
    }
    if (!params.emplace(std::string(name), value).second) {
      throw UsageError("--param '" + std::string(name) + "' given more than once");
    }
  }
  return params;
}

void check_param_names(const Program& p, const ParamValues& params, std::string_view file) {
  for (const auto& [name, value] : params) {
    if (p.find_param(name) != nullptr) continue;
    std::string declared;
    for (const Param& q : p.params) {
      declared += (declared.empty() ? "" : ", ") + q.name;
    }
    throw UsageError(std::string(file) + ": unknown param '" + name + "' for kernel '" + p.name +
                     "' (declared params: " + (declared.empty() ? "none" : declared) + ")");
  }
}

const HwConfig& hw_config_for(const std::string& gen) {
  if (const HwConfig* hw = find_hw_config(gen)) return *hw;
  std::string known;
  for (std::string_view n : hw_config_names()) {
    known += (known.empty() ? "" : ", ") + std::string(n);
  }
  throw UsageError("unknown --gen '" + gen + "' (known: " + known + ")");
}

void add_seed_option(CLI::App* cmd, uint64_t& seed, const std::string& description) {
  const CLI::Validator uint64_text(
      [](std::string& text) -> std::string {
        uint64_t v = 0;
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
        if (text.empty() || ec != std::errc() || end != text.data() + text.size()) {
          return "'" + text + "' is not an integer in [0, 18446744073709551615]";
        }
        return "";
      },
      "UINT64");
  cmd->add_option("--seed", seed, description)->check(uint64_text)->capture_default_str();
}

CLI::Validator seconds_in_range(double lo, double hi) {
  return CLI::Validator(
      [lo, hi](std::string& text) -> std::string {
        double v = 0;
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
        if (text.empty() || ec != std::errc() || end != text.data() + text.size() ||
            !std::isfinite(v) || v < lo || v > hi) {
          return "'" + text + "' is not a number of seconds in [" + format_ratio(lo) + ", " +
                 format_ratio(hi) + "]";
        }
        return "";
      },
      "SECONDS");
}

void RunLimits::add_options(CLI::App* cmd) {
  cmd->add_option("--memory-budget-mib", memory_budget_mib,
                  "Host memory a run may use (and the NKI tracer's address space); larger runs "
                  "are refused before allocating")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 30))
      ->each([](const std::string& v) { set_command_memory_mib(std::stoll(v)); })
      ->capture_default_str();
  cmd->add_option("--max-steps", max_steps,
                  "Loop iterations plus instruction instances a run may take; longer runs are "
                  "refused before they start")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 50))
      ->capture_default_str();
}

void RunLimits::apply(RunOptions& options) const {
  options.memory_budget_bytes = memory_budget_mib << 20;
  options.max_steps = max_steps;
}

uint64_t fnv1a64(const std::vector<uint8_t>& bytes) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (uint8_t b : bytes) {
    h ^= b;
    h *= 0x100000001b3ULL;
  }
  return h;
}

std::string hex64(uint64_t value) {
  char buf[19];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(value));
  return buf;
}

std::string format_float(float value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
  char buf[32];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);
  return ec == std::errc() ? std::string(buf, end) : std::string("?");
}

std::string format_ratio(double r) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3g", r);
  return b;
}

std::string format_params(const ParamValues& params) {
  std::string s;
  for (const auto& [name, value] : params) {
    s += (s.empty() ? "" : " ") + name + "=" + std::to_string(value);
  }
  return s;
}

}  // namespace ncv::cli

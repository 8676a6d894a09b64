// Every command of README.md's "The command line" block, run as a new user would: the block is
// parsed here (so a command added to the README is a new test, and fails until it has an
// expectation below), each line made runnable — optional [groups] kept unless they need a value
// the test cannot supply, `a|b` alternatives at their first, long budgets cut to 2 s, files the
// line names created in a scratch folder — then run, asserting its exit code and one line of its
// output. One test per README line (each well under 20 s).
#include <gtest/gtest.h>

#include <cctype>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "tools/tests/cli_test_support.h"

namespace ncv::cli_test {
namespace {

// The README's command lines (without the leading "ncverify "), in order.
std::vector<std::string> readme_commands() {
  std::ifstream in(NCV_SOURCE_DIR "/README.md");
  std::vector<std::string> out;
  std::string line;
  bool section = false, block = false;
  while (std::getline(in, line)) {
    if (line.rfind("## ", 0) == 0) section = line == "## The command line";
    if (!section) continue;
    if (line.rfind("```", 0) == 0) {
      if (block) break;
      block = true;
      continue;
    }
    if (block && line.rfind("ncverify", 0) == 0) {
      out.push_back(line.size() > 9 ? line.substr(9) : std::string());
    }
  }
  return out;
}

// A parsed README line: tokens and optional [groups] (nested), `...` repeat marks dropped.
struct Item {
  std::string token;
  std::vector<Item> group;
  bool is_group = false;
};

std::vector<Item> parse(const std::string& s, size_t& i) {
  std::vector<Item> items;
  while (i < s.size()) {
    const char c = s[i];
    if (c == ' ') {
      ++i;
    } else if (c == '#') {  // a comment to the end of the line
      i = s.size();
    } else if (c == '[') {
      ++i;
      Item g;
      g.is_group = true;
      g.group = parse(s, i);
      if (i < s.size() && s[i] == ']') ++i;
      while (i < s.size() && s[i] == '.') ++i;  // "[--family F]..."
      items.push_back(std::move(g));
    } else if (c == ']') {
      return items;  // the enclosing group's end
    } else if (c == '"') {
      const size_t end = s.find('"', i + 1);
      items.push_back({s.substr(i + 1, end - i - 1), {}, false});
      i = end + 1;
    } else {
      // A token may hold its own brackets (q=bf16[128,4096]); an unmatched ] ends a group.
      std::string t;
      int depth = 0;
      for (; i < s.size() && s[i] != ' '; ++i) {
        if (s[i] == '[') ++depth;
        if (s[i] == ']' && depth-- == 0) break;
        t += s[i];
      }
      items.push_back({t, {}, false});
    }
  }
  return items;
}

// Placeholders: N, NAME, K, DIR, SPEC.json, OUT.nkir, NAME=VALUE, FILE.py:FUNCTION ...
bool placeholder(const std::string& t) {
  static const std::regex re(R"(([A-Z][A-Z_]*(\.[a-z]+)?)|.*NAME=VALUE.*|FILE\.py:FUNCTION)");
  return std::regex_match(t, re);
}

// The scratch folder a line runs in, with the files it names.
struct Fixture {
  fs::path dir;
  std::string spec, out_json, out_nkir, data;
};

// Values for placeholders after a given flag; a group with any other placeholder is dropped.
std::optional<std::string> substitute(const std::string& flag, const std::string& placeholder,
                                      const Fixture& f) {
  const std::map<std::pair<std::string, std::string>, std::string> values = {
      {{"--cases", "N"}, "2"},
      {{"--seed", "N"}, "1"},
      {{"--seqlen", "N"}, "256"},
      {{"--kernel", "K"}, "sd_attention"},
      {{"--only", "NAME"}, "scale_applied_twice"},  // a cheap catalogue entry
      {{"--dist", "NAME"}, "peaked"},
      {{"--spec", "SPEC.json"}, f.spec},
      {{"--out", "OUT.json"}, f.out_json},
      {{"-o", "OUT.nkir"}, f.out_nkir},
      {{"--data", "DIR"}, f.data},
  };
  const auto it = values.find({flag, placeholder});
  if (it == values.end()) return std::nullopt;
  return it->second;
}

// Flags left out although they could run: --json (the text output is asserted), --seqlens
// (bench's line also pins --param seqlen, and the two are exclusive), and the flags that describe
// one particular kernel's tensors or problem (--input, --shape, --scale, --causal, --align,
// --window), which the fixture kernels do not share.
bool dropped(const std::string& flag) {
  for (const char* f : {"--json", "--seqlens", "--input", "--shape", "--scale", "--causal",
                        "--align", "--window"}) {
    if (flag == f) return true;
  }
  return false;
}

std::string first_alternative(const std::string& t) {
  return t.substr(0, t.find('|'));
}

// Whether `group` can be kept: no dropped flag, every placeholder substitutable.
bool keep(const Item& group, const Fixture& f) {
  if (group.group.empty() || group.group.front().is_group) return false;
  const std::string& flag = group.group.front().token;
  if (dropped(flag)) return false;
  std::string prev;
  for (const Item& it : group.group) {
    if (it.is_group) continue;
    const std::string t = first_alternative(it.token);
    if (placeholder(t) && !substitute(prev, t, f)) return false;
    prev = t;
  }
  return true;
}

void realise(const std::vector<Item>& items, const Fixture& f, std::vector<std::string>& args) {
  std::string prev;
  for (const Item& it : items) {
    if (it.is_group) {
      if (keep(it, f)) realise(it.group, f, args);
      continue;
    }
    std::string t = first_alternative(it.token);
    if (placeholder(t)) {
      const auto v = substitute(prev, t, f);
      if (!v) {
        ADD_FAILURE() << "no value for the placeholder " << t << " after " << prev;
        continue;
      }
      t = *v;
    }
    args.push_back(t);
    prev = t;
  }
}

std::string value_after(const std::vector<std::string>& args, const std::string& flag) {
  for (size_t i = 0; i + 1 < args.size(); ++i) {
    if (args[i] == flag) return args[i + 1];
  }
  return "";
}

// The README's example files: kernel.py (an NKI kernel in sd_attention's layout, or with
// --layout the transposed one-tile kernel the flag describes), a FILE.nkir the line checks
// --like a kernel (that kernel dumped with the line's options), the oracle spec, a small
// calibration data folder; model/ links to the repository's (model/examples/...).
Fixture make_fixture(const std::string& name, const std::vector<std::string>& args) {
  Fixture f;
  f.dir = temp_dir() / name;
  fs::remove_all(f.dir);
  fs::create_directories(f.dir);
  fs::create_directory_symlink(NCV_SOURCE_DIR "/model", f.dir / "model");
  const bool layout = std::find(args.begin(), args.end(), "--layout") != args.end();
  const std::string kernels = NCV_SOURCE_DIR "/frontend/tests/kernels/";
  std::ofstream(f.dir / "kernel.py")
      << read_file(kernels + (layout ? "small_attention.py" : "sd_attention_rendition.py"))
      << "\n\nmy_kernel = " << (layout ? "one_tile_attention" : "sd_attention") << "\n";
  f.spec = (f.dir / "spec.json").string();
  std::ofstream(f.spec) << R"({"batch": 1, "heads": 1, "kv_heads": 1, "seqlen_q": 2,
    "seqlen_kv": 3, "d_head": 2, "scale": 0.5, "mask": {"kind": "none"},
    "q": [[[[0.5, -1.25], [1.0, 2.0]]]], "k": [[[[1.0, 0.0], [0.5, 0.5], [-1.0, 2.0]]]],
    "v": [[[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]]]})";
  f.out_json = (f.dir / "out.json").string();
  f.out_nkir = (f.dir / "out.nkir").string();
  f.data = (f.dir / "data").string();
  fs::create_directories(f.data);
  std::ofstream(f.dir / "data" / "sd.json") << R"({
    "generation": "trn1", "params": {"seqlen": 256, "d_head": 64},
    "shape": {"use_causal_mask": false, "mixed_precision": true},
    "steps": [{"kernel": "sd_attention", "latency_ms": 0.05},
              {"kernel": "sd_attention_step5", "latency_ms": 0.04}]})";
  return f;
}

// Each README line's expected exit code and a piece of its output (standard output or error), by
// the longest matching prefix of the line as written.
struct Expectation {
  const char* prefix;
  int exit_code;
  const char* output;
};
const std::vector<Expectation>& expectations() {
  static const std::vector<Expectation> e = {
      {"--help", 0, "check"},
      {"list", 0, "gemm_autocomp_c0"},  // the line keeps --workloads
      {"check sd_attention [", 0, "sd_attention: PASS"},
      {"check sd_attention --param", 0, "sd_attention: PASS"},
      {"check rewrite.nkir", 0, ": PASS"},
      {"report", 0, "sd_attention"},
      {"run sd_attention", 0, "checksum"},
      {"run model/examples/tiled_matmul.nkir", 0, "checksum"},
      {"dump", 0, "kernel sd_attention_step5"},
      {"oracle", 0, "wrote"},  // the values go to --out
      {"bench sd_attention", 0, "critical path"},
      {"calibrate", 0, "sd.json"},
      {"bench gemm_autocomp_c0", 0, "critical path"},
      {"bugs [", 0, "properties caught 1/1"},
      {"bugs --gate", 0, "default check caught 1/1"},
      {"prove", 0, "PROVED"},
      {"frontier", 0, "fits up to seqlen="},
      // a catalogue entry replayed on the inputs that expose it: a verification failure
      {"check scale_applied_twice", 1, "FAIL"},
      {"import", 0, ""},  // it writes -o OUT.nkir (checked below)
      {"check kernel.py:my_kernel --like", 0, ": PASS"},
      {"check kernel.py:my_kernel --layout", 0, ": PASS"},
      // step5 changes rounding (not a same-numerics rewrite): --require's first alternative,
      // bit-exact, is refuted (exit 1), the contract level holds
      {"equiv sd_attention_step4", 1, "verdict: refuted (require bit-exact)"},
      {"equiv sd_attention rewrite.nkir", 0, "verdict: holds"},
      {"adopt", 0, "verdict: adopt"},
  };
  return e;
}

const Expectation* expectation_for(const std::string& line) {
  const Expectation* best = nullptr;
  for (const Expectation& e : expectations()) {
    const std::string p = e.prefix;
    if (line.rfind(p, 0) == 0 && (!best || p.size() > std::string(best->prefix).size())) best = &e;
  }
  return best;
}

class ReadmeCommand : public testing::TestWithParam<std::string> {};

TEST_P(ReadmeCommand, RunsAsDocumented) {
  const std::string line = GetParam();
  const Expectation* want = expectation_for(line);
  ASSERT_NE(want, nullptr) << "README command without an expectation in cli_readme_test.cpp: "
                           << line;
  size_t i = 0;
  const std::vector<Item> items = parse(line, i);
  // Two passes: the first names the files (kernel.py's flavour), the second realises the line.
  std::vector<std::string> plain;
  for (const Item& it : items) {
    if (!it.is_group) plain.push_back(it.token);
  }
  const std::string name = testing::UnitTest::GetInstance()->current_test_info()->name();
  std::string safe;
  for (char c : name) safe += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  const Fixture f = make_fixture(safe, plain);
  std::vector<std::string> args;
  realise(items, f, args);
  ASSERT_FALSE(args.empty());
  // A sweep (`check` without every shape pinned, `bugs --gate`) keeps a 2 s budget.
  const bool gate =
      args[0] == "bugs" && std::find(args.begin(), args.end(), "--gate") != args.end();
  const bool replay = std::find(args.begin(), args.end(), "--values") != args.end() ||
                      std::find(args.begin(), args.end(), "--dist") != args.end();
  if ((args[0] == "check" && !replay) || gate) {
    const auto b = std::find(args.begin(), args.end(), "--budget-s");
    if (b != args.end() && b + 1 != args.end()) {
      *(b + 1) = "2";
    } else {
      args.insert(args.end(), {"--budget-s", "2"});
    }
  }
  // A .nkir file the line checks --like a kernel: that kernel as `dump` writes it, built with
  // the line's options (--param NAME=VALUE whose value is not a number).
  const std::string like = value_after(args, "--like");
  for (const std::string& a : args) {
    if (like.empty() || a.size() < 5 || a.substr(a.size() - 5) != ".nkir") continue;
    if (fs::exists(f.dir / a)) continue;
    std::vector<std::string> dump = {"dump", like};
    for (size_t k = 0; k + 1 < args.size(); ++k) {
      const std::string& v = args[k + 1];
      const size_t eq = v.find('=');
      if (args[k] == "--param" && eq != std::string::npos &&
          !std::isdigit(static_cast<unsigned char>(v[eq + 1]))) {
        dump.insert(dump.end(), {"--param", v});
      }
    }
    const CliResult d = run_cli(dump, f.dir);
    ASSERT_EQ(d.exit_code, 0) << describe(d);
    std::ofstream(f.dir / a) << d.out;
  }
  std::string shown;
  for (const std::string& a : args) shown += " " + a;
  const CliResult r = run_cli(args, f.dir);
  EXPECT_EQ(r.exit_code, want->exit_code) << "ncverify" << shown << "\n" << describe(r);
  EXPECT_NE((r.out + r.err).find(want->output), std::string::npos)
      << "ncverify" << shown << "\nexpected in its output: " << want->output << "\n"
      << describe(r);
  // A file the line writes (-o, --out, --trace) is there afterwards.
  for (const char* flag : {"-o", "--out", "--trace"}) {
    const std::string path = value_after(args, flag);
    if (path.empty()) continue;
    const fs::path written = fs::path(path).is_absolute() ? fs::path(path) : f.dir / path;
    EXPECT_TRUE(fs::exists(written)) << flag << " " << path << " not written\n" << describe(r);
    if (fs::exists(written)) {
      EXPECT_GT(fs::file_size(written), 0u) << path;
    }
  }
}

std::string test_name(const testing::TestParamInfo<std::string>& info) {
  std::string s = "Line" + std::to_string(info.index) + "_";
  for (char c : info.param) {
    if (c == ' ' || c == '[') {
      if (s.back() != '_') s += '_';
    } else if (std::isalnum(static_cast<unsigned char>(c))) {
      s += c;
    }
    if (s.size() > 48) break;
  }
  return s;
}

INSTANTIATE_TEST_SUITE_P(Readme, ReadmeCommand, testing::ValuesIn(readme_commands()), test_name);

// The block is found and holds the commands the README documents (a parse that found nothing
// would pass vacuously).
TEST(ReadmeCommands, TheCommandBlockIsParsed) {
  const std::vector<std::string> lines = readme_commands();
  EXPECT_GE(lines.size(), 20u);
  for (const char* cmd : {"check", "bugs", "report", "prove", "equiv", "adopt", "import"}) {
    EXPECT_TRUE(std::any_of(lines.begin(), lines.end(), [&](const std::string& l) {
      return l.rfind(cmd, 0) == 0;
    })) << cmd;
  }
}

}  // namespace
}  // namespace ncv::cli_test

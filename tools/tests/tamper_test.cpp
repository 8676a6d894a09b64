// Candidates that try to forge their verdict (label hostile): each carries a wrong kernel (the
// front end's SD rendition with its softmax scale changed) and one attack on the tracer, the
// interpreter or the host. `adopt` must say reject with reason tamper (or trace-limit for the
// limits), `import` must exit 2 naming tampering, and nothing outside the candidate's scratch
// folder may change: not the binary, not the user's files.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tools/tests/cli_test_support.h"

namespace ncv::cli_test {
namespace {

const fs::path kKernels = NCV_FRONTEND_KERNELS_DIR;

// The payload: a kernel that computes the wrong thing (exp of 1.25 x the scores).
std::string wrong_kernel() {
  std::string src = read_file(kKernels / "sd_attention_rendition.py");
  const std::string exact = "bias=neg_max, scale=1.0)";
  const size_t at = src.find(exact);
  if (at == std::string::npos) return "";
  return src.replace(at, exact.size(), "bias=neg_max, scale=1.25)");
}

struct Attack {
  const char* name;
  const char* module_code;  // appended at module level
  const char* kernel_code;  // inserted as the kernel's first statement (4-space indent)
  const char* expect;       // in the refusal's text
  const char* verdict_kind = "tamper";
  const char* timeout_s = "2";  // NCVERIFY_FRONTEND_TIMEOUT_S
};

const char* const kKernelDef =
    "def sd_attention(q, k, v, use_causal_mask=False, "
    "mixed_precision=True):\n";

std::string with_attack(const Attack& a) {
  std::string src = wrong_kernel();
  const size_t def = src.find(kKernelDef);
  if (def == std::string::npos) return "";
  const size_t body = def + std::string(kKernelDef).size();
  std::string kernel_lines;
  for (std::string rest = a.kernel_code; !rest.empty();) {
    const size_t nl = rest.find('\n');
    kernel_lines += "    " + rest.substr(0, nl) + "\n";
    rest = nl == std::string::npos ? "" : rest.substr(nl + 1);
  }
  src.insert(body, kernel_lines);
  return src + "\n" + a.module_code + "\n";
}

// What an attack could reach: the binary and a file of the user's next to the kernel.
struct Snapshot {
  std::string binary, user_file;
  std::vector<std::string> folder;
};

Snapshot snapshot(const fs::path& folder) {
  Snapshot s;
  s.binary = read_file(NCVERIFY_BINARY);
  s.user_file = read_file(folder / "notes.txt");
  for (const auto& e : fs::directory_iterator(folder)) s.folder.push_back(e.path().string());
  std::sort(s.folder.begin(), s.folder.end());
  return s;
}

// 250 characters of a variable name (the program names each buffer after it).
#define NCV_X10 "xxxxxxxxxx"
#define NCV_X250                                                                                  \
  NCV_X10 NCV_X10 NCV_X10 NCV_X10 NCV_X10 NCV_X10 NCV_X10 NCV_X10 NCV_X10 NCV_X10 NCV_X10 NCV_X10 \
      NCV_X10 NCV_X10 NCV_X10 NCV_X10 NCV_X10 NCV_X10 NCV_X10 NCV_X10 NCV_X10 NCV_X10 NCV_X10     \
          NCV_X10 NCV_X10

const Attack kAttacks[] = {
    // The kernel language, checked before the file runs (kernel_language.py).
    // The host's modules are inert placeholders (a harness may import them); using one is not.
    {"call_os", "import os\nos.system('touch pwned')", "", "calls os.system"},
    {"sniff_sys_modules", "", "import sys\nif 'ncverify_nki' in sys.modules:\n    pass",
     "searches sys.modules"},
    {"os_from_import", "from os import remove\nremove('notes.txt')", "", "calls os.remove"},
    {"import_ctypes", "import ctypes", "", "imports ctypes"},
    {"import_gc", "", "import gc\ngc.get_objects()", "imports gc"},
    {"import_inspect", "import inspect", "", "imports inspect"},
    {"import_subprocess", "import subprocess", "", "imports subprocess"},
    {"import_socket", "import socket", "", "imports socket"},
    {"import_importlib", "import importlib", "", "imports importlib"},
    {"import_builtins", "import builtins", "", "imports builtins"},
    {"import_tracer", "", "import ncverify_nki.ops as ops", "imports ncverify_nki"},
    {"sniff_tracer",
     "try:\n    import ncverify_nki\n    SCALE = 1.0\nexcept ImportError:\n"
     "    SCALE = 1.25",
     "", "imports ncverify_nki"},
    {"dunder_import", "", "m = __import__('os')", "__import__"},
    {"eval", "", "x = eval('1 + 1')", "eval"},
    {"exec", "exec('import os')", "", "exec"},
    {"compile", "", "c = compile('1', 'f', 'eval')", "compile"},
    {"open_write", "", "open('../victim', 'w').write('x')", "open"},
    {"globals", "", "g = globals()", "globals"},
    {"vars", "", "g = vars(nl)", "vars"},
    {"setattr", "", "setattr(nisa, 'nc_matmul', None)", "setattr"},
    {"dynamic_getattr", "", "name = '_' + '_dict__'\nf = getattr(nisa, name)",
     "getattr(..., '__dict__')"},
    {"dunder_class", "", "c = nl.float32.__class__", "__class__"},
    {"subclasses", "", "s = ().__class__.__base__.__subclasses__()", "__subclasses__"},
    {"func_globals", "", "g = nl.matmul.__globals__", "__globals__"},
    {"builtins_name", "", "b = __builtins__", "__builtins__"},
    {"frame_walk", "def gen():\n    yield 1", "f = gen().gi_frame", "gi_frame"},
    {"frame_back", "def gen():\n    yield 1", "f = gen().gi_frame.f_back", "f_back"},
    {"format_attr", "", "s = '{0.__class__}'.format(q)", "format"},
    {"private_attr", "", "v = q._view", "_view"},
    {"match_private_attr", "", "match q:\n    case object(_view=v):\n        pass",
     "class pattern reads attribute _view"},
    {"module_attr_write", "", "nisa.nc_matmul = lambda **kw: None", "writes attribute"},
    {"module_attr_delete", "", "del nl.exp", "writes attribute"},
    {"tofile", "", "import numpy\nnumpy.zeros(3).tofile('../victim')", "tofile"},
    // The running kernel (sandbox.py): facades, sealed objects, the audit hook.
    {"alias_module_write", "", "m = nl\nm.exp = None", "read-only"},
    {"facade_internal", "", "t = getattr(nl, 'trace')", "outside the kernel language"},
    {"facade_from_import", "", "from neuronxcc.nki.language import rules", "outside the kernel"},
    {"numpy_save", "", "np.save('../victim.npy', np.zeros(3))", "outside the kernel"},
    {"numpy_lib", "", "st = np.lib", "outside the kernel"},
    {"dtype_rename", "", "nl.float32.name = 'bfloat16'", "writes attribute name"},
    {"dtype_alias_rename", "", "d = nl.float32\nd.name = 'bfloat16'", "sets attribute name"},
    {"class_alias_write", "", "p = nl.par_dim\np.size = 1", "sets attribute size"},
    {"type_of_tile", "", "T = type(q)", "type() of the front end"},
    {"unbound_method", "class Evil:\n    def poke(self):\n        self.mem = 'psum'",
     "Evil.poke(nl.sbuf)", "sets attribute mem"},
    {"update_wrapper", "import functools\nclass Box:\n    mem = 'psum'",
     "functools.update_wrapper(nl.sbuf, Box())", "sets attribute"},
    {"class_attr_write", "", "T = type(nl.sbuf)\nT.mem = 'psum'", "type() of the front end"},
    // Private names are the kernel's own objects' only (sandbox.kernel_private): not through a
    // method of its own class called on a stand-in's object, not an enum's.
    {"private_via_own_method", "class Evil:\n    def peek(self):\n        return self._view",
     "v = Evil.peek(q)", "reads _view of a Tile object"},
    {"enum_private", "import enum\nclass E(enum.Enum):\n    A = 1", "c = E._convert_",
     "reads _convert_"},
    {"caught_tamper", "", "try:\n    m = nl\n    m.exp = None\nexcept Exception:\n    pass",
     "read-only"},
    // A kernel's local module is held to the same language.
    {"local_module", "import helper_mod", "", "helper_mod.py:1"},
    // Limits: the candidate is rejected as untraceable, not adopted.
    {"spin", "", "while True:\n    pass", "longer than 1 s", "trace-limit", "1"},
    {"memory", "", "x = bytearray(1 << 34)", "out of memory", "trace-limit"},
    {"program_flood", "",
     // (a long name makes each line ~500 bytes: 2,500 of them pass 1 MiB in about a second)
     "for i in nl.static_range(2500):\n    tile_" NCV_X250 " = nl.zeros((128, 512), "
     "dtype=nl.float32)",
     "exceeds 1 MiB", "trace-limit", "15"},
};

class Tamper : public ::testing::TestWithParam<Attack> {};

TEST_P(Tamper, IsRejectedAndChangesNothing) {
  const Attack& a = GetParam();
  const fs::path folder = temp_dir() / (std::string("tamper_") + a.name);
  fs::remove_all(folder);
  fs::create_directories(folder);
  std::ofstream(folder / "cand.py") << with_attack(a);
  std::ofstream(folder / "notes.txt") << "the user's own file";
  std::ofstream(folder / "helper_mod.py") << "import gc\ngc.collect()\n";
  const Snapshot before = snapshot(folder);
  setenv("NCVERIFY_FRONTEND_TIMEOUT_S", a.timeout_s, 1);
  const std::string target = (folder / "cand.py").string() + ":sd_attention";
  const std::vector<std::string> limits = {"--memory-budget-mib", "1024", "--max-input-mib", "1"};
  std::vector<std::string> adopt = {"adopt",        "sd_attention", target,       "--like",
                                    "sd_attention", "--param",      "seqlen=256", "--param",
                                    "d_head=64",    "--json"};
  adopt.insert(adopt.end(), limits.begin(), limits.end());
  const CliResult r = run_cli(adopt, folder);
  // (`import` of an over-limit kernel costs the limit again and shows nothing new: the limit
  // errors are FrontendErrors' and the hostile suite's)
  const bool limit = std::string(a.verdict_kind) == "trace-limit";
  std::vector<std::string> import = {"import", target};
  import.insert(import.end(), limits.begin(), limits.end());
  const CliResult imp = limit ? CliResult{2, "", r.out} : run_cli(import, folder);
  unsetenv("NCVERIFY_FRONTEND_TIMEOUT_S");

  ASSERT_EQ(r.exit_code, 1) << describe(r);
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("verdict"), "reject");
  EXPECT_EQ(j.at("reason_kind"), a.verdict_kind);
  const std::string reason = j.at("reason");
  EXPECT_NE(reason.find(a.expect), std::string::npos) << reason;
  EXPECT_EQ(imp.exit_code, 2) << describe(imp);
  EXPECT_NE(imp.err.find(a.expect), std::string::npos) << imp.err;
  const Snapshot after = snapshot(folder);
  EXPECT_EQ(after.binary, before.binary) << "the ncverify binary changed";
  EXPECT_EQ(after.user_file, before.user_file);
  EXPECT_EQ(after.folder, before.folder) << "files appeared or vanished next to the kernel";
}

INSTANTIATE_TEST_SUITE_P(Attacks, Tamper, ::testing::ValuesIn(kAttacks),
                         [](const ::testing::TestParamInfo<Attack>& i) { return i.param.name; });

// The control: without an attack the wrong kernel traces (so each refusal above is the attack's),
// and it traces as the wrong kernel it is.
TEST(TamperControl, TheWrongKernelAloneTracesAsWhatItComputes) {
  const fs::path folder = temp_dir() / "tamper_control";
  fs::create_directories(folder);
  std::ofstream(folder / "cand.py") << with_attack({"none", "", "", ""});
  const CliResult r = run_cli({"import", (folder / "cand.py").string() + ":sd_attention"}, folder);
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("scale=1.25"), std::string::npos) << r.out;
}

// Printing a correct program does not replace the traced one: what the kernel prints goes
// nowhere, the program comes from the trace.
TEST(TamperControl, PrintingAProgramDoesNotReplaceTheTrace) {
  const fs::path folder = temp_dir() / "tamper_print";
  fs::create_directories(folder);
  const CliResult good = run_cli({"dump", "sd_attention"});
  ASSERT_EQ(good.exit_code, 0);
  std::string forged = good.out;
  const std::string name = "kernel sd_attention";
  forged.replace(forged.find(name), name.size(), "kernel FORGED_MARK");
  for (size_t at = forged.find('"'); at != std::string::npos; at = forged.find('"', at + 2)) {
    forged.replace(at, 1, "\\\"");
  }
  std::string printing = "FORGED = \"\"\"" + forged + "\"\"\"\nprint(FORGED)\n";
  const Attack a{"print", printing.c_str(), "print(FORGED)", ""};
  std::ofstream(folder / "cand.py") << with_attack(a);
  const CliResult r = run_cli({"import", (folder / "cand.py").string() + ":sd_attention"}, folder);
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("scale=1.25"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("FORGED_MARK"), std::string::npos) << "the printed program won";
}

// A harness's use of the host at module level that changes nothing (nki-samples'
// attention_kernels.py sets an environment variable for the real compiler) still traces.
TEST(TamperControl, HarnessSettingsOfTheHostAreInert) {
  const fs::path folder = temp_dir() / "tamper_harness";
  fs::create_directories(folder);
  const Attack a{"harness",
                 "import os\nimport logging\nimport unittest\n"
                 "os.environ['NEURON_FRAMEWORK_DEBUG'] = '1'\nLEVEL = logging.INFO\n"
                 "class Harness(unittest.TestCase):\n    pass",
                 "", ""};
  std::ofstream(folder / "cand.py") << with_attack(a);
  const CliResult r = run_cli({"import", (folder / "cand.py").string() + ":sd_attention"}, folder);
  EXPECT_EQ(r.exit_code, 0) << describe(r);
}

// Every command that traces a kernel refuses a tampering one with exit 2 naming its line.
TEST(TamperControl, EveryTracingCommandExitsTwoNamingTheLine) {
  const fs::path folder = temp_dir() / "tamper_commands";
  fs::create_directories(folder);
  std::ofstream(folder / "cand.py") << with_attack({"gc", "", "import gc", ""});
  const std::string target = (folder / "cand.py").string() + ":sd_attention";
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"check", target, "--like", "sd_attention"},
        std::vector<std::string>{"equiv", "sd_attention", target, "--like", "sd_attention"},
        std::vector<std::string>{"prove", target}, std::vector<std::string>{"bench", target},
        std::vector<std::string>{"dump", target}}) {
    const CliResult r = run_cli(args, folder);
    EXPECT_EQ(r.exit_code, 2) << args[0] << "\n" << describe(r);
    EXPECT_NE(r.err.find("cand.py:57: tamper: imports gc"), std::string::npos) << r.err;
  }
}

// Parameters are data: a --param that is code is refused (exit 2) without running it.
TEST(TamperControl, ParamsAreDataNeverCode) {
  const fs::path folder = temp_dir() / "tamper_param";
  fs::create_directories(folder);
  std::ofstream(folder / "cand.py") << with_attack({"none", "", "", ""});
  const fs::path pwned = folder / "pwned";
  const CliResult r =
      run_cli({"import", (folder / "cand.py").string() + ":sd_attention", "--param",
               "use_causal_mask=__import__('os').system('touch " + pwned.string() + "')"},
              folder);
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_NE(r.err.find("is not a class the kernel's files define"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(pwned));
}

// The tracing time limit is validated like an option: a value that would silently disable it is
// refused.
TEST(TamperControl, ATimeLimitThatWouldDisableItselfIsRefused) {
  for (const char* bad : {"0", "-1", "5s", "99999999999", "", " 5"}) {
    setenv("NCVERIFY_FRONTEND_TIMEOUT_S", bad, 1);
    const CliResult r =
        run_cli({"import", (kKernels / "small_attention.py").string() + ":one_tile_attention"});
    unsetenv("NCVERIFY_FRONTEND_TIMEOUT_S");
    EXPECT_EQ(r.exit_code, 2) << bad << "\n" << describe(r);
    EXPECT_NE(r.err.find("NCVERIFY_FRONTEND_TIMEOUT_S"), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace ncv::cli_test

// nki-library's idioms (label frontend). Kernels that live in a package: the package's modules
// reached by absolute imports from its top-level package and by relative imports are checked
// against the kernel language like local modules and run; a package's __init__.py runs only when
// a name is taken from it; a module of the package outside the kernel language is refused
// (frontend/README.md "Kernels in a package"; kernels in frontend/tests/kernels/kernelpkg). An
// nl.NKIObject dataclass config as a kernel argument, its private method, the environment read
// when the module loads (frontend/tests/kernels/nkiobject_config.py).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tools/tests/cli_test_support.h"

namespace ncv::cli_test {
namespace {

const fs::path kPackage = fs::path(NCV_FRONTEND_KERNELS_DIR) / "kernelpkg";

std::string ops_kernel(const std::string& file, const std::string& function) {
  return (kPackage / "ops" / file).string() + ":" + function;
}

std::string checksum(const std::string& target) {
  const CliResult r = run_cli({"run", target, "--shape", "a=256,64", "--json"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  if (r.exit_code != 0) return "(run failed)";
  return nlohmann::json::parse(r.out)["outputs"][0]["checksum"].get<std::string>();
}

// The kernel's helpers come from its package (relative import two levels up, an absolute
// submodule import from a package whose __init__.py would be refused, `from . import`, a plain
// `import a.b.c`, a helper class's private names, a private constant imported by name): it runs
// bit-identically with its twin written without helpers, and its instructions name the kernel's
// own lines.
TEST(FrontendPackage, AKernelsHelpersComeFromItsPackage) {
  const CliResult r =
      run_cli({"import", ops_kernel("scaled_copy.py", "scaled_copy"), "--shape", "a=256,64"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("op0=multiply, operand0=2 @line 21"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("op0=add, operand0=1 @line 21"), std::string::npos) << r.out;
  EXPECT_EQ(checksum(ops_kernel("scaled_copy.py", "scaled_copy")),
            checksum(ops_kernel("scaled_copy.py", "scaled_copy_flat")));
}

struct PackageError {
  std::string file, function;
  std::string where;  // FILE.py:LINE the error names, relative to the package
  std::string why;
};

// A module of the package outside the kernel language (reached by a relative import), the
// package's own __init__.py when a name is taken from it, a relative import above the top-level
// package: each refused at its line with exit 2, before any line of the kernel runs.
TEST(FrontendPackage, AModuleOfThePackageIsHeldToTheKernelLanguage) {
  const std::vector<PackageError> cases = {
      {"tampering.py", "tampering", "util/evil.py:4: tamper: imports gc", "not modules that"},
      {"init_user.py", "init_user", "kernelpkg/__init__.py:9: tamper: imports importlib", ""},
      {"escape.py", "escape", "ops/escape.py:6: ", "goes above the top-level package kernelpkg"},
      // a private name of the package's own module is allowed (util/scale.py), a dunder is not
      {"dunder_user.py", "dunder_user", "util/dunder.py:2: tamper: imports __builtins__",
       "private to the module"},
  };
  for (const PackageError& c : cases) {
    SCOPED_TRACE(c.function);
    const CliResult r = run_cli({"import", ops_kernel(c.file, c.function), "--shape", "a=128,64"});
    EXPECT_EQ(r.exit_code, 2) << describe(r);
    EXPECT_NE(r.err.find(c.where), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(c.why), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("Traceback"), std::string::npos) << r.err;
  }
}

// The config is the kernel's argument (--param builds it from the kernel's own class) or its
// default; its private method is the kernel's own; reading os.environ at load is no tampering,
// and the environment the kernel sees is empty whatever the user's is (NCV_SCALE is not seen).
TEST(FrontendNkilibIdioms, AnNkiObjectConfigIsAKernelArgument) {
  const std::string target =
      (fs::path(NCV_FRONTEND_KERNELS_DIR) / "nkiobject_config.py").string() + ":scaled";
  setenv("NCV_SCALE", "5.0", 1);
  const CliResult given = run_cli({"import", target, "--input", "a=fp32[128,64]", "--param",
                                   "cfg=TileCfg(rows=128, scale=3.0)"});
  const CliResult dflt = run_cli({"import", target, "--input", "a=fp32[128,64]"});
  unsetenv("NCV_SCALE");
  ASSERT_EQ(given.exit_code, 0) << describe(given);
  EXPECT_NE(given.out.find("op0=multiply, operand0=3 @line 31"), std::string::npos) << given.out;
  ASSERT_EQ(dflt.exit_code, 0) << describe(dflt);
  EXPECT_NE(dflt.out.find("op0=multiply, operand0=2 @line 31"), std::string::npos) << dflt.out;
  // a field the class does not have is a usage error naming it
  const CliResult bad =
      run_cli({"import", target, "--input", "a=fp32[128,64]", "--param", "cfg=TileCfg(colums=3)"});
  EXPECT_EQ(bad.exit_code, 2) << describe(bad);
  EXPECT_NE(bad.err.find("colums"), std::string::npos) << bad.err;
}

// A @dataclass NKIObject whose fields are plain class attributes (nki-library's SectionParams)
// is built with them as keywords; an unnamed tensor (name=None, nki-library's SbufManager).
TEST(FrontendNkilibIdioms, PlainClassAttributesAreFields) {
  const std::string target =
      (fs::path(NCV_FRONTEND_KERNELS_DIR) / "nkiobject_config.py").string() + ":sectioned";
  const CliResult r = run_cli({"import", target, "--input", "a=fp32[128,64]"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("dma_copy t[:, :], a[64:+64, :] @line 47"), std::string::npos) << r.out;
}

// str() of a dtype is its NKI name (nki-library's allocator compares it with "float8_e4m3").
TEST(FrontendNkilibIdioms, ADtypeStringIsItsName) {
  const std::string target =
      (fs::path(NCV_FRONTEND_KERNELS_DIR) / "nkiobject_config.py").string() + ":dtype_names";
  const CliResult r = run_cli({"import", target, "--input", "a=fp32[128,64]"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
}

}  // namespace
}  // namespace ncv::cli_test

// Every program in model/examples parses, prints and re-parses to the identical Program, and
// runs clean on the interpreter with the params of its `# params:` header line.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "model/interp/interpreter.h"
#include "model/interp/tests/run_helpers.h"
#include "model/ir/printer.h"
#include "model/nkir/parse.h"

namespace ncv {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> example_files() {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(NCV_EXAMPLES_DIR)) {
    if (e.path().extension() == ".nkir") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

ParamValues header_params(const std::string& text) {
  ParamValues out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("# params:", 0) != 0) continue;
    std::istringstream words(line.substr(9));
    std::string kv;
    while (words >> kv) out[kv.substr(0, kv.find('='))] = std::stoll(kv.substr(kv.find('=') + 1));
  }
  return out;
}

TEST(Examples, EveryExampleRoundTripsAndRunsClean) {
  auto files = example_files();
  ASSERT_GE(files.size(), 2u);
  for (const fs::path& f : files) {
    SCOPED_TRACE(f.string());
    std::ifstream in(f);
    std::stringstream buf;
    buf << in.rdbuf();
    Program p = parse_program(buf.str(), f.string());
    std::string printed = print_program(p);
    EXPECT_EQ(parse_program(printed, "printed"), p);
    EXPECT_EQ(print_program(parse_program(printed, "printed")), printed);
    ParamValues params = header_params(buf.str());
    RunResult r = interptest::run_random(p, params);
    EXPECT_FALSE(r.error) << r.error->message;
    for (const auto& [name, out] : r.outputs) {
      for (int64_t k = 0; k < out.num_elements(); ++k) ASSERT_FALSE(std::isnan(out.get(k))) << name;
    }
  }
}

}  // namespace
}  // namespace ncv

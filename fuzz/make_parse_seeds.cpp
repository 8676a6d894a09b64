// Writes the seed corpus of fuzz_nkir_parse (corpus/fuzz_nkir_parse/): every registered kernel in
// every combination of its build options, printed as .nkir text with its `options` line, so the
// fuzzer starts from the full grammar the kernels use. model/examples/*.nkir are copied next to
// them by hand (they are already text). Usage: make_parse_seeds OUT_DIR
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "kernels/option_programs.h"
#include "kernels/registry.h"
#include "model/ir/printer.h"

namespace {

// "sd_attention use_causal_mask=true" -> "sd_attention_use_causal_mask_true".
std::string file_stem(const std::string& label) {
  std::string s;
  for (char c : label) s.push_back(std::isalnum(static_cast<unsigned char>(c)) ? c : '_');
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUT_DIR\n", argv[0]);
    return 2;
  }
  const std::filesystem::path out = argv[1];
  std::filesystem::create_directories(out);
  int n = 0;
  for (const ncv::kernels::Variant& v : ncv::kernels::registry()) {
    for (ncv::kernels::LabelledProgram& lp : ncv::kernels::option_programs(v)) {
      lp.program.build_options = lp.options;  // the `options` line, as `ncverify dump` writes it
      std::ofstream(out / (file_stem(lp.label) + ".nkir")) << ncv::print_program(lp.program);
      ++n;
    }
  }
  std::printf("wrote %d programs to %s\n", n, out.c_str());
  return 0;
}

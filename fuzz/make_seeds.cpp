// Writes the text-mode seeds of fuzz_program (fuzz/support/program_decoder.h): every registered
// kernel, every option combination (kernels/option_programs.h), at the smallest params of its
// domain, so the fuzzer starts from real kernels and each exec stays fast. Programs whose run at
// those params exceeds the fuzz target's step budget are skipped (the fuzzer would skip them).
//
//   fuzz_make_seeds OUT_DIR
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "fuzz/support/program_decoder.h"
#include "kernels/option_programs.h"
#include "kernels/registry.h"
#include "model/interp/interpreter.h"
#include "model/ir/printer.h"

namespace {

using namespace ncv;

// The smallest value of every param that satisfies the domain, raising params one at a time
// (by multiple_of) until the relations hold.
std::optional<ParamValues> smallest_params(const Program& p) {
  ParamValues v;
  for (const Param& prm : p.params) {
    int64_t x = (prm.lo + prm.multiple_of - 1) / prm.multiple_of * prm.multiple_of;
    v[prm.name] = x;
  }
  for (int round = 0; round < 64; ++round) {
    try {
      check_params(p, v);
      return v;
    } catch (const InputError&) {
    }
    bool raised = false;
    for (const Param& prm : p.params) {
      const int64_t next = v[prm.name] + prm.multiple_of;
      if (next > prm.hi) continue;
      ParamValues t = v;
      t[prm.name] = next;
      try {
        check_params(p, t);
        return t;
      } catch (const InputError&) {
      }
      if (!raised) {
        v[prm.name] = next;  // keep one raise and retry the rest
        raised = true;
      }
    }
    if (!raised) return std::nullopt;
  }
  return std::nullopt;
}

std::string file_name(const std::string& label) {
  std::string s = "kernel_";
  for (char ch : label) s += (std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_');
  return s + ".bin";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: fuzz_make_seeds OUT_DIR\n");
    return 2;
  }
  const std::filesystem::path out = argv[1];
  std::filesystem::create_directories(out);
  int written = 0;
  for (const kernels::Variant& v : kernels::registry()) {
    for (const kernels::LabelledProgram& lp : kernels::option_programs(v)) {
      std::optional<ParamValues> params = smallest_params(lp.program);
      if (!params) {
        std::fprintf(stderr, "skip %s: no params satisfy the domain\n", lp.label.c_str());
        continue;
      }
      RunOptions o;
      o.max_steps = 20'000;
      o.compute_values = false;
      try {
        run_program(lp.program, *params, random_inputs(lp.program, *params, 1), o);
      } catch (const InputError& e) {
        std::fprintf(stderr, "skip %s: %s\n", lp.label.c_str(), e.what());
        continue;
      }
      const std::vector<uint8_t> bytes = fuzz::encode_text_case(print_program(lp.program), *params);
      std::ofstream f(out / file_name(lp.label), std::ios::binary);
      f.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
      ++written;
    }
  }
  std::printf("wrote %d seeds to %s\n", written, out.c_str());
  return 0;
}

// The replay driver of every fuzz target outside libFuzzer (fuzz/CMakeLists.txt): runs each file
// of the given folders (or the given files) through LLVMFuzzerTestOneInput, in name order, so
// ctest replays the seed corpus and every regression with the same oracles the fuzzer uses. A
// failing oracle aborts (fuzz_check.h), which fails the test. A folder after `--optional` may be
// missing or empty; every other folder must hold at least one input, so a corpus that went
// missing does not pass as "nothing failed". `--every N` (before the folders) replays the 1st,
// (N+1)th, ... input of each required folder in name order (a seed corpus too slow to replay
// whole in the default test tier); an optional folder (the regressions) is always replayed whole.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int* argc, char*** argv);

namespace {

namespace fs = std::filesystem;

std::vector<fs::path> inputs_of(const fs::path& p) {
  std::vector<fs::path> out;
  if (fs::is_regular_file(p)) return {p};
  if (!fs::is_directory(p)) return out;
  for (const fs::directory_entry& e : fs::directory_iterator(p)) {
    if (e.is_regular_file()) out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
  bool optional = false;
  size_t total = 0, every = 1;
  for (int a = 1; a < argc; ++a) {
    const std::string arg = argv[a];
    if (arg == "--optional") {
      optional = true;
      continue;
    }
    if (arg == "--every") {
      const long n = a + 1 < argc ? std::strtol(argv[a + 1], nullptr, 10) : 0;
      if (n < 1) {
        std::fprintf(stderr, "replay: --every takes a positive count\n");
        return 2;
      }
      every = static_cast<size_t>(n);
      ++a;
      continue;
    }
    std::vector<fs::path> files = inputs_of(arg);
    if (files.empty() && !optional) {
      std::fprintf(stderr, "replay: %s holds no inputs (a missing or empty seed corpus)\n",
                   arg.c_str());
      return 2;
    }
    if (!optional && every > 1) {
      std::vector<fs::path> sampled;
      for (size_t i = 0; i < files.size(); i += every) sampled.push_back(files[i]);
      files = std::move(sampled);
    }
    for (const fs::path& f : files) {
      std::ifstream in(f, std::ios::binary);
      const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                                       std::istreambuf_iterator<char>());
      std::fprintf(stderr, "replay: %s (%zu bytes)\n", f.c_str(), bytes.size());
      const auto start = std::chrono::steady_clock::now();
      LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
      // The time per input finds the slow ones, which cap a fuzzer's executions per second.
      const std::chrono::duration<double, std::micro> took =
          std::chrono::steady_clock::now() - start;
      std::fprintf(stderr, "replay: %.0f us\n", took.count());
      ++total;
    }
    optional = false;
  }
  std::printf("replayed %zu input(s), no oracle failed\n", total);
  return 0;
}

// How long ncverify takes as an NKI simulator (target: tracing plus running a 4096-token
// attention kernel within 5 s): runs frontend/tests/simulate_bench/attention_4096.py, which
// calls the front end's rendition of the SD attention tutorial kernel on NumPy arrays as a test
// file does (trace at the arrays' shapes in Python, run on the interpreter by `ncverify run
// --inputs-from/--outputs-to`) and prints the trace time and the call's time; this program adds
// the wall time of the whole Python process (interpreter start, NumPy import, the float64
// reference it checks the output against). Measured and printed, never asserted.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

int main(int argc, char** argv) {
  const std::string seqlen = argc > 1 ? argv[1] : "4096";
  const std::string d_head = argc > 2 ? argv[2] : "64";
  const std::string command = std::string("PYTHONPATH='") + NCV_FRONTEND_PY_DIR + "' NCVERIFY='" +
                              NCV_NCVERIFY_BINARY + "' /usr/bin/python3 '" + NCV_SIMULATE_BENCH +
                              "' " + seqlen + " " + d_head;
  const auto start = std::chrono::steady_clock::now();
  const int status = std::system(command.c_str());
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("whole process (python3 start, numpy, trace, run, float64 reference): %.2f s\n",
              seconds);
  std::printf(
      "target: trace + run of a 4096-token attention kernel <= 5 s (the 'trace + run' "
      "figure above)\n");
  return status == 0 ? 0 : 1;
}

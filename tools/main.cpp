// `ncverify`: the suite's command line (tools/cli_app.h has the app and its exit-code contract).
#include <csignal>
#include <exception>
#include <iostream>

#include "tools/cli_app.h"
#include "tools/cli_common.h"

int main(int argc, char** argv) {
  // A closed pipe on standard output is an error to report (exit 2), not a silent SIGPIPE death.
  std::signal(SIGPIPE, SIG_IGN);
  try {
    return ncv::cli::run_ncverify(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "ncverify: internal error: " << e.what() << "\n";
  } catch (...) {
    std::cerr << "ncverify: internal error: unknown exception\n";
  }
  return ncv::cli::kExitUsage;
}

// The whole `ncverify` command line as one call (tools/cli_app.cpp): parses argv, runs the
// selected subcommand and returns its exit code (0 pass, 1 verification failure, 2 bad usage or
// input). Messages go to std::cerr, results to std::cout; no exception escapes.
#pragma once

namespace ncv::cli {

int run_ncverify(int argc, char** argv);

}  // namespace ncv::cli

// The `ncverify` app: the list of subcommands, argument parsing, and the exit-code contract:
// whatever a subcommand throws is caught here and mapped to 1 (a kernel failed a check) or 2 (bad
// usage or input), so no exception ever escapes and CI can trust the code. main() and the CLI
// fuzz target (fuzz/fuzz_cli.cpp) both call run_ncverify.
#include "tools/cli_app.h"

#include <CLI/CLI.hpp>
#include <exception>
#include <iostream>

#include "check/check.h"
#include "model/interp/dynamic_error.h"
#include "model/interp/interpreter.h"
#include "model/ir/builder.h"
#include "model/nkir/parse.h"
#include "tools/commands.h"
#include "tools/input_file.h"
#include "tools/output_file.h"
#include "tools/progress.h"

namespace ncv::cli {

namespace {

constexpr Registrar kCommands[] = {
    register_run,      register_dump,   register_oracle,    register_list,  register_check,
    register_report,   register_bench,  register_calibrate, register_bugs,  register_prove,
    register_frontier, register_import, register_equiv,     register_adopt,
};

// Runs the selected subcommand; every exception becomes its exit code and a message on stderr.
int run_action(const Action& action) {
  try {
    return action();
  } catch (const VerificationFailure& e) {
    std::cerr << "ncverify: " << e.message << "\n";
    return kExitVerificationFailure;
  } catch (const UsageError& e) {
    std::cerr << "ncverify: " << e.message << "\n";
  } catch (const ncv::ParseError& e) {
    std::cerr << "ncverify: " << e.message << "\n";
  } catch (const ncv::InputError& e) {
    std::cerr << "ncverify: bad input: " << e.message << "\n";
  } catch (const ncv::BuildError& e) {
    std::cerr << "ncverify: invalid program: " << e.message << "\n";
  } catch (const ncv::DynamicError& e) {
    std::cerr << "ncverify: dynamic check failed: " << e.message << "\n";
    return kExitVerificationFailure;
  } catch (const ncv::kernels::UnknownVerdict& e) {
    // A command whose verdict rests on random values (adopt's check of such a rewrite): not a
    // pass, and not bad usage either.
    std::cerr << "ncverify: verdict unknown: " << e.what() << "\n";
    return kExitVerificationFailure;
  } catch (const std::exception& e) {
    std::cerr << "ncverify: error: " << e.what() << "\n";
  }
  return kExitUsage;
}

}  // namespace

int run_ncverify(int argc, char** argv) {
  CLI::App app{
      "ncverify: a NeuronCore model and verifier for attention kernels.\n"
      "Exit codes: 0 pass, 1 verification failure, 2 usage or input error.",
      "ncverify"};
  app.require_subcommand(1);
  app.fallthrough();  // --max-input-mib and --quiet may follow the subcommand too
  add_input_limit_option(app);
  bool quiet = false;
  app.add_flag("--quiet,-q", quiet,
               "No progress lines on standard error (shown only when it is a terminal, for "
               "commands running past two seconds; NCVERIFY_PROGRESS=always|never|auto)");
  set_progress_quiet(false);  // a fresh app starts talking (the CLI fuzz target runs many)
  Action action;
  for (Registrar add : kCommands) add(app, action);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // CLI11 reports a misspelt subcommand as "A subcommand is required"; name it instead.
    std::string known;
    bool is_known = false;
    for (const CLI::App* sub : app.get_subcommands({})) {
      known += (known.empty() ? "" : ", ") + sub->get_name();
      is_known = is_known || (argc > 1 && sub->get_name() == argv[1]);
    }
    if (argc > 1 && argv[1][0] != '-' && !is_known) {
      std::cerr << "ncverify: unknown subcommand '" << argv[1] << "' (known: " << known
                << "; see ncverify --help)\n";
      return kExitUsage;
    }
    // --help is reported as a "parse error" with exit code 0.
    return app.exit(e) == 0 ? kExitOk : kExitUsage;
  }
  if (!action) {
    std::cerr << "ncverify: no subcommand selected (see ncverify --help)\n";
    return kExitUsage;
  }
  set_progress_quiet(quiet);
  int code = run_action([&action] {
    check_progress_environment();
    return action();
  });
  // Whatever the verdict, output that did not reach standard output is an error of its own.
  try {
    finish_standard_output();
  } catch (const UsageError& e) {
    std::cerr << "ncverify: " << e.message << "\n";
    return kExitUsage;
  }
  return code;
}

}  // namespace ncv::cli

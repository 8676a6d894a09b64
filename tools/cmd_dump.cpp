// `ncverify dump KERNEL|FILE.nkir [--param OPTION=VALUE ...]`: the canonical text form of a
// registered kernel (built with the given options) or of a parsed program.
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>

#include "model/ir/printer.h"
#include "tools/commands.h"
#include "tools/input_file.h"
#include "tools/kernel_source.h"

namespace ncv::cli {

namespace {

struct DumpOptions {
  std::string target;
  std::vector<std::string> options;
  NkiFlags nki;
};

int run_dump(const DumpOptions& opts) {
  std::cout << print_program(load_kernel_source(opts.target, opts.options, "", opts.nki).program);
  return kExitOk;
}

}  // namespace

void register_dump(CLI::App& app, Action& action) {
  auto opts = std::make_shared<DumpOptions>();
  CLI::App* cmd = app.add_subcommand(
      "dump", "Print a registered kernel or a .nkir program in canonical text form");
  cmd->add_option(
         "kernel", opts->target,
         "Registered kernel name, .nkir file (model/nkir/NKIR.md) or NKI kernel FILE.py:FUNCTION")
      ->required();
  cmd->add_option("-p,--param", opts->options,
                  "NAME=VALUE kernel option of a registered kernel (e.g. use_causal_mask=true)")
      ->expected(1)
      ->take_all();
  opts->nki.add_options(cmd);
  add_memory_budget_option(cmd);
  cmd->callback([opts, &action] { action = [opts] { return run_dump(*opts); }; });
}

}  // namespace ncv::cli

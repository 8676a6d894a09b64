// `ncverify dump FILE.nkir`: the canonical text form of a program (print(parse(text))).
// Later it will also take the name of a built-in kernel (DESIGN.md §2.7).
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>

#include "model/text_form.h"
#include "tools/commands.h"

namespace ncv::cli {

namespace {

struct DumpOptions {
  std::string file;
};

int run_dump(const DumpOptions& opts) {
  const std::string text = read_text_file(opts.file);
  const Program program = parse_program(text, opts.file);
  std::cout << print_program(program);
  return kExitOk;
}

}  // namespace

void register_dump(CLI::App& app, Action& action) {
  auto opts = std::make_shared<DumpOptions>();
  CLI::App* cmd = app.add_subcommand("dump", "Print a .nkir program in canonical text form");
  cmd->add_option("file", opts->file, "Program in the .nkir text form (model/NKIR.md)")->required();
  cmd->callback([opts, &action] { action = [opts] { return run_dump(*opts); }; });
}

}  // namespace ncv::cli

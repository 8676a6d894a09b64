// `ncverify import FILE.py:FUNCTION [--param NAME=VALUE ...] [--input ...] [--shape ...]
// [--grid ...] [--gen trn1|trn2|trn3] [-o OUT.nkir [--force]]`: traces an unmodified NKI kernel
// with the front end (frontend/) for one generation and prints or writes the program as `.nkir`,
// headed by comments that say where it came from and with which arguments.
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>

#include "frontend/nki_trace.h"
#include "model/ir/printer.h"
#include "tools/commands.h"
#include "tools/input_file.h"
#include "tools/kernel_source.h"
#include "tools/output_file.h"

namespace ncv::cli {

namespace {

struct ImportOptions {
  std::string target, out;
  std::vector<std::string> params;
  NkiFlags nki;
  bool force = false;
};

int run_import(const ImportOptions& opts) {
  if (!frontend::is_python_target(opts.target)) {
    throw UsageError("import takes an NKI kernel FILE.py:FUNCTION, got '" + opts.target + "'");
  }
  if (opts.nki.gen == "all") {
    throw UsageError("import traces for one generation: --gen takes trn1, trn2 or trn3");
  }
  if (!opts.out.empty()) refuse_existing_output(opts.out, opts.force, "-o");
  const KernelSource src = load_kernel_source(opts.target, opts.params, "", opts.nki);
  std::string text;
  for (const std::string& line : src.header) text += line + "\n";
  text += print_program(src.program);
  if (opts.out.empty()) {
    std::cout << text;
    finish_standard_output();
  } else {
    write_output_file(opts.out, text, opts.force, "-o");
  }
  return kExitOk;
}

}  // namespace

void register_import(CLI::App& app, Action& action) {
  auto opts = std::make_shared<ImportOptions>();
  CLI::App* cmd = app.add_subcommand(
      "import", "Trace an unmodified NKI Python kernel into a .nkir program (frontend/README.md)");
  cmd->add_option("kernel", opts->target, "FILE.py:FUNCTION")->required();
  cmd->add_option("-p,--param", opts->params,
                  "NAME=VALUE: a keyword argument of the kernel (use_causal_mask=true), a fixed "
                  "shape (seqlen=512) or a shape's domain (seqlen=128..4096/128); repeat")
      ->expected(1)
      ->take_all();
  opts->nki.add_options(cmd);
  cmd->add_option("--gen", opts->nki.gen,
                  "The generation to trace for: trn1, trn2 or trn3 (nki.isa.get_nc_version() "
                  "answers NeuronCore-v2, v3 or v4; default: the kernel's platform_target, else "
                  "trn1)");
  add_memory_budget_option(cmd);
  cmd->add_option("-o,--out", opts->out, "Write the program here instead of standard output");
  cmd->add_flag("--force", opts->force, "Replace an existing -o file");
  cmd->callback([opts, &action] { action = [opts] { return run_import(*opts); }; });
}

}  // namespace ncv::cli

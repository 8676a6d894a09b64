// `ncverify run FILE.nkir --param NAME=VALUE ...`: executes a program on the interpreter with
// seeded random inputs (or the .npy arrays of --inputs-from) and prints a fingerprint of each
// output (and writes it as .npy to --outputs-to), or the dynamic check that failed.
#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "model/interp/interpreter.h"
#include "model/interp/npy.h"
#include "model/ir/builder.h"
#include "tools/commands.h"
#include "tools/generations.h"
#include "tools/input_file.h"
#include "tools/kernel_source.h"
#include "tools/output_file.h"
#include "tools/output_summary.h"

namespace ncv::cli {

namespace {

struct RunCommandOptions {
  std::string file;
  std::vector<std::string> params;
  uint64_t seed = 0;
  std::string gen;  // "": trn1, or the kernel's first generation when it does not run on trn1
  bool json = false;
  bool reference = false;
  RunLimits limits;
  NkiFlags nki;
  std::string inputs_from;  // DIR: each input NAME read from DIR/NAME.npy instead of random
  std::string outputs_to;   // DIR: each output NAME written to DIR/NAME.npy
  bool force = false;       // replace existing DIR/NAME.npy files
  bool allow_unwritten_outputs = false;  // RunOptions::allow_unwritten_outputs
};

std::string npy_path(const std::string& dir, const std::string& name) {
  return dir + "/" + name + ".npy";
}

nlohmann::json error_json(const DynamicError& e) {
  nlohmann::json loops = nlohmann::json::object();
  for (const auto& [var, value] : e.loop_indices) loops[var] = value;
  nlohmann::json params = nlohmann::json::object();
  for (const auto& [name, value] : e.params) params[name] = value;
  nlohmann::json j = {{"kind", std::string(check_kind_name(e.kind))},
                      {"kernel", e.kernel},
                      {"instruction", e.instruction},
                      {"instruction_text", e.instruction_text},
                      {"core", e.core},
                      {"loop_indices", loops},
                      {"params", params},
                      {"detail", e.detail},
                      {"message", e.message}};
  // A traced NKI kernel's instruction knows the kernel-file line that made it (0: unknown).
  if (e.source_line != 0) {
    j["source"] = {{"file", e.source_file}, {"line", e.source_line}};
  }
  return j;
}

void print_text(const RunCommandOptions& opts, const Program& program, const ParamValues& params,
                const RunResult& result, const std::vector<OutputSummary>& outputs) {
  std::cout << "file: " << opts.file << "\n"
            << "kernel: " << program.name << "\n"
            << "params: " << format_params(params) << "\n"
            << "gen: " << opts.gen << "\n"
            << "mode: " << (opts.reference ? "reference" : "fast") << "\n"
            << "seed: " << opts.seed << "\n"
            << "instances: " << result.instances << "\n";
  for (const OutputSummary& s : outputs) std::cout << "output " << format_summary(s) << "\n";
  for (const auto& [name, n] : result.unwritten_output_elements) {
    std::cout << "unwritten: output '" << name << "' has " << n
              << " element(s) no instruction wrote (their bytes are 0xFF)\n";
  }
  if (result.error) {
    std::cout << "result: dynamic-check failure (" << check_kind_name(result.error->kind) << ")\n"
              << "error: " << result.error->message << "\n";
  } else {
    std::cout << "result: ok\n";
  }
  if (result.spill && !result.error) std::cout << "spill: " << result.spill->detail << "\n";
  if (result.unwritten_read && !result.error) {
    std::cout
        << "note: the kernel reads bytes it never wrote, and no output depends on them (reruns "
           "with other contents agree): "
        << result.unwritten_read->message << "\n";
  }
  if (result.undefined_activation && !result.error) {
    std::cout << "note: an activation input is outside its function's documented range, and no "
                 "output depends on the value the hardware gives there (reruns with other values "
                 "agree): "
              << result.undefined_activation->message << "\n";
  }
}

void print_json(const RunCommandOptions& opts, const Program& program, const ParamValues& params,
                const RunResult& result, const std::vector<OutputSummary>& outputs) {
  nlohmann::json j;
  j["file"] = opts.file;
  j["kernel"] = program.name;
  j["params"] = params;
  j["gen"] = opts.gen;
  j["mode"] = opts.reference ? "reference" : "fast";
  j["seed"] = opts.seed;
  j["instances"] = result.instances;
  j["outputs"] = nlohmann::json::array();
  for (const OutputSummary& s : outputs) j["outputs"].push_back(summary_json(s));
  j["unwritten_outputs"] = result.unwritten_output_elements;
  j["result"] = result.error ? "dynamic_check_failure" : "ok";
  j["error"] = result.error ? error_json(*result.error) : nlohmann::json(nullptr);
  j["spill"] = result.spill && !result.error ? error_json(*result.spill) : nlohmann::json(nullptr);
  j["unwritten_read"] = result.unwritten_read && !result.error ? error_json(*result.unwritten_read)
                                                               : nlohmann::json(nullptr);
  j["undefined_activation"] = result.undefined_activation && !result.error
                                  ? error_json(*result.undefined_activation)
                                  : nlohmann::json(nullptr);
  std::cout << j.dump(2) << "\n";
}

// Each output as DIR/NAME.npy (the folder made if missing; an existing file kept unless
// --force), in the kernel's own shape.
void write_npy_outputs(const RunCommandOptions& opts,
                       const std::map<std::string, HostTensor>& outputs) {
  std::error_code ec;
  std::filesystem::create_directories(opts.outputs_to, ec);
  if (ec) throw UsageError("--outputs-to " + opts.outputs_to + ": " + ec.message());
  for (const auto& [name, tensor] : outputs) {
    refuse_existing_output(npy_path(opts.outputs_to, name), opts.force, "--outputs-to");
  }
  for (const auto& [name, tensor] : outputs) {
    write_output_file(npy_path(opts.outputs_to, name), encode_npy(tensor), opts.force,
                      "--outputs-to");
  }
}

int run_run(const RunCommandOptions& given) {
  RunCommandOptions opts = given;
  opts.nki.gen = opts.gen;  // a traced kernel is traced for the generation it runs on
  if (!opts.gen.empty()) hw_config_for(opts.gen);  // an unknown name first
  const KernelSource src = load_kernel_source(opts.file, opts.params, "", opts.nki);
  const HwConfig& hw = generation_for(src.variant, opts.gen);
  opts.gen = hw.name;
  const Program& program = src.program;
  const ParamValues& params = src.params;

  RunResult result;
  try {
    check_params(program, params);
    RunOptions run_options;
    opts.limits.apply(run_options);
    const auto inputs =
        opts.inputs_from.empty()
            ? random_inputs(program, params, opts.seed, run_options.memory_budget_bytes)
            : npy_inputs(
                  program, params,
                  [&](const std::string& name) {
                    return read_binary_input_file(npy_path(opts.inputs_from, name),
                                                  run_options.memory_budget_bytes,
                                                  "--memory-budget-mib");
                  },
                  [&](const std::string& name) { return npy_path(opts.inputs_from, name); },
                  run_options.memory_budget_bytes);
    run_options.hw = &hw;
    run_options.mode = opts.reference ? ExecMode::reference : ExecMode::fast;
    run_options.record_trace = false;
    run_options.allow_unwritten_outputs = opts.allow_unwritten_outputs;
    // A kernel over capacity runs on hardware with the compiler's spills: the run computes its
    // values and says so (RunResult::spill) rather than failing.
    run_options.spills_allowed = true;
    result = run_program(program, params, inputs, run_options);
  } catch (const InputError& e) {
    throw UsageError(opts.file + ": " + e.message);
  } catch (const BuildError& e) {
    throw UsageError(opts.file + ": invalid program: " + e.message);
  } catch (const DynamicError& e) {
    // The interpreter reports failures in RunResult; accept a thrown one the same way.
    result.error = e;
  }

  std::vector<OutputSummary> outputs;
  if (!result.error) {
    // A tensor the program declares with refined dims is the kernel's own shape outside it.
    std::map<std::string, HostTensor> shaped;
    try {
      shaped = outputs_in_interface_shape(program, params, result.outputs);
    } catch (const InputError& e) {
      throw UsageError(opts.file + ": " + e.message);
    }
    for (const auto& [name, tensor] : shaped) outputs.push_back(summarize_output(name, tensor));
    if (!opts.outputs_to.empty()) write_npy_outputs(opts, shaped);
  }
  if (opts.json) {
    print_json(opts, program, params, result, outputs);
  } else {
    print_text(opts, program, params, result, outputs);
  }
  return result.error ? kExitVerificationFailure : kExitOk;
}

}  // namespace

void register_run(CLI::App& app, Action& action) {
  auto opts = std::make_shared<RunCommandOptions>();
  CLI::App* cmd =
      app.add_subcommand("run", "Run a .nkir program on the interpreter with seeded random inputs");
  cmd->add_option("kernel", opts->file,
                  "Registered kernel name, .nkir file or NKI kernel FILE.py:FUNCTION")
      ->required();
  cmd->add_option("-p,--param", opts->params,
                  "NAME=INTEGER param, or NAME=VALUE option of a registered kernel; repeat")
      ->expected(1)
      ->take_all();
  add_seed_option(cmd, opts->seed, "Seed of the random inputs");
  cmd->add_option("--gen", opts->gen,
                  "Hardware generation: trn1, trn2 or trn3 (default trn1, or the kernel's first "
                  "generation when it does not run on trn1)");
  opts->limits.add_options(cmd);
  opts->nki.add_options(cmd);
  cmd->add_option("--inputs-from", opts->inputs_from,
                  "Read each input NAME from DIR/NAME.npy instead of seeded random values "
                  "(bf16 as uint16 bits, fp8 as uint8 bits)");
  cmd->add_option("--outputs-to", opts->outputs_to,
                  "Write each output NAME to DIR/NAME.npy (bf16 as uint16 bits, fp8 as uint8)");
  cmd->add_flag("--force", opts->force, "Replace existing files of --outputs-to");
  cmd->add_flag("--allow-unwritten-outputs", opts->allow_unwritten_outputs,
                "Return outputs that the kernel wrote only in part (a simulator's choice; the "
                "unwritten elements are 0xFF bytes, counted in the report) instead of failing "
                "the output_not_written check");
  cmd->add_flag("--json", opts->json, "Print one JSON object instead of text");
  cmd->add_flag("--reference", opts->reference,
                "Use the slow per-element reference semantics instead of the fast paths");
  cmd->footer(
      "Exit codes: 0 the run passed every dynamic check, 1 a dynamic check failed, "
      "2 bad usage or bad input. Live buffers over SBUF/PSUM capacity are not a failure: the "
      "compiler would spill them, and a 'spill:' line (JSON \"spill\") says so.");
  cmd->callback([opts, &action] { action = [opts] { return run_run(*opts); }; });
}

}  // namespace ncv::cli

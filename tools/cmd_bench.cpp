// `ncverify bench KERNEL|FILE.nkir --param NAME=VALUE ... [--gen trn1|trn2|trn3] [--json]
// [--trace FILE.json] [--seqlens 512,1024,...] [--by-instruction]`: runs the kernel trace-only,
// schedules the trace on the timing model (model/timing/timing.h) and prints the latency, a
// profile summary with neuron-profile's field names and what bounds the kernel (the DMA time, the
// critical path, the dominating instructions: tools/bench_bounds.h; --by-instruction: every
// instruction). --seqlens repeats it for each value of the seqlen param (one row
// or JSON object per length). Exit 0; 1 when the run fails a dynamic check (as `run`); 2 on bad
// usage or input.
#include <CLI/CLI.hpp>
#include <iomanip>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "model/interp/interpreter.h"
#include "model/timing/calibration.h"
#include "model/timing/chrome_trace.h"
#include "model/timing/profile.h"
#include "tools/bench_bounds.h"
#include "tools/commands.h"
#include "tools/generations.h"
#include "tools/kernel_source.h"
#include "tools/memory_table.h"
#include "tools/output_file.h"
#include "tools/progress.h"

namespace ncv::cli {

namespace {

struct BenchCommandOptions {
  // gen "": trn1, or the kernel's first generation when it does not run on trn1.
  std::string target, gen, trace_file, seqlens;
  std::vector<std::string> params;
  bool json = false;
  bool force = false;
  bool by_instruction = false;
  RunLimits limits;
  int64_t max_trace_mib = 2048;
  NkiFlags nki;
};

// Host bytes one instruction instance costs a bench run: its trace event and regions, its
// schedule entry and (with --trace) its Perfetto JSON with its loop indices, rounded up.
constexpr int64_t kBytesPerInstance =
    static_cast<int64_t>(sizeof(TraceEvent) + 4 * sizeof(Region) + sizeof(TimedInstance)) + 500;

// Refuses a run whose trace would outgrow --max-trace-mib before it records anything.
void check_trace_size(const KernelSource& src, const ParamValues& params,
                      const BenchCommandOptions& opts) {
  const StepCount n = count_steps(src.program, params, opts.limits.max_steps);
  const int64_t limit = opts.max_trace_mib << 20;
  if (n.instances > limit / kBytesPerInstance) {
    throw UsageError(src.label + " " + format_params(params) + ": the trace of " +
                     std::to_string(n.instances) + "+ instruction instances would take more than " +
                     std::to_string(opts.max_trace_mib) + " MiB (--max-trace-mib N raises it)");
  }
}

struct BenchRow {
  ParamValues params;
  ProfileSummary profile;
  MemoryPeaks memory;  // what fills SBUF and PSUM at their peak: the headroom at this shape
  BenchBounds bounds;  // what bounds the kernel: critical path, DMA time, dominating instructions
};

BenchRow bench_once(const KernelSource& src, const ParamValues& params, const HwConfig& hw,
                    const CostTable& costs, const BenchCommandOptions& opts, bool with_trace) {
  RunOptions ro;
  ro.hw = &hw;
  ro.compute_values = false;
  opts.limits.apply(ro);
  RunResult r;
  try {
    check_params(src.program, params);
    check_trace_size(src, params, opts);
    r = run_program(src.program, params, {}, ro);
  } catch (const InputError& e) {
    throw UsageError(src.label + ": " + e.message);
  }
  if (r.error) {
    throw VerificationFailure(
        src.label + " " + format_params(params) +
        ": the trace-only run failed a dynamic check, so it has no latency: " + r.error->message);
  }
  const Schedule s = schedule_trace(src.program, r.trace, costs);
  if (with_trace) {
    std::ostringstream out;
    write_chrome_trace(out, src.program, r.trace, s);
    write_output_file(opts.trace_file, out.str(), opts.force, "--trace");
  }
  return BenchRow{params, summarize(src.program, r.trace, s, costs),
                  memory_peaks(src.program, hw, params),
                  bench_bounds(src.program, r.trace, s, costs)};
}

std::vector<int64_t> parse_seqlens(const std::string& text) {
  std::vector<int64_t> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    try {
      size_t used = 0;
      const long long v = std::stoll(item, &used);
      if (used != item.size() || v <= 0) throw std::invalid_argument(item);
      out.push_back(v);
    } catch (const std::exception&) {
      throw UsageError("--seqlens: '" + item + "' is not a positive integer (want e.g. 512,1024)");
    }
  }
  if (out.empty()) throw UsageError("--seqlens: no lengths given");
  return out;
}

nlohmann::json row_json(const BenchRow& row, const std::string& label, const std::string& gen,
                        bool by_instruction) {
  nlohmann::json j;
  j["kernel"] = label;
  j["gen"] = gen;
  j["params"] = row.params;
  j["latency_us"] = row.profile.latency_us();
  const CalibrationBand band = calibration_band(gen);
  j["calibration"] = {{"points", band.points},
                      {"median_abs_error_pct", band.median_abs_error_pct},
                      {"max_abs_error_pct", band.max_abs_error_pct}};
  for (const auto& [name, value] : row.profile.fields()) j[name] = value;
  add_bench_bounds_json(j, row.bounds, by_instruction);
  j["memory"] = memory_peaks_json(row.memory);
  return j;
}

void print_text(const BenchRow& row, const std::string& label, const std::string& gen,
                bool by_instruction) {
  std::cout << "bench " << label << " " << format_params(row.params) << " on " << gen << "\n"
            << "latency_us: " << std::fixed << std::setprecision(2) << row.profile.latency_us()
            << "\n"
            << "trust: " << trust_line(gen) << "\n";
  for (const auto& [name, value] : row.profile.fields()) {
    std::cout << "  " << std::left << std::setw(36) << name << std::right << std::setw(16)
              << std::setprecision(2) << value << "\n";
  }
  print_bench_bounds(std::cout, row.bounds, by_instruction);
  std::cout << "memory at the peak:\n";
  print_memory_peaks(std::cout, row.memory, "  ");
}

// The peak's share of the usable capacity: the headroom column of the --seqlens table.
double percent(const MemoryPeak& m) {
  return m.capacity > 0
             ? 100.0 * static_cast<double>(m.peak_bytes) / static_cast<double>(m.capacity)
             : 0.0;
}

int run_bench(const BenchCommandOptions& given) {
  BenchCommandOptions opts = given;
  opts.nki.gen = opts.gen;  // a traced kernel is traced for the generation it is benched on
  if (!opts.gen.empty()) hw_config_for(opts.gen);  // an unknown name first
  const KernelSource src = load_kernel_source(opts.target, opts.params, "", opts.nki);
  const HwConfig& hw = generation_for(src.variant, opts.gen);
  opts.gen = hw.name;
  const CostTable* costs = find_cost_table(opts.gen);
  if (costs == nullptr) throw UsageError("--gen: no cost table for '" + opts.gen + "'");
  if (!opts.trace_file.empty()) refuse_existing_output(opts.trace_file, opts.force, "--trace");
  if (opts.force && opts.trace_file.empty()) throw UsageError("--force applies to --trace only");
  std::vector<BenchRow> rows;
  if (opts.seqlens.empty()) {
    rows.push_back(bench_once(src, src.params, hw, *costs, opts, !opts.trace_file.empty()));
  } else {
    if (src.program.find_param("seqlen") == nullptr) {
      throw UsageError(src.label + " has no seqlen param for --seqlens");
    }
    if (src.params.count("seqlen") != 0) {
      throw UsageError("--param seqlen and --seqlens both set seqlen; give one of them");
    }
    if (!opts.trace_file.empty()) throw UsageError("--trace takes one run; drop --seqlens");
    const std::vector<int64_t> lens = parse_seqlens(opts.seqlens);
    Progress progress("bench", "seqlens", static_cast<int64_t>(lens.size()));
    for (int64_t len : lens) {
      ParamValues params = src.params;
      params["seqlen"] = len;
      progress.start("seqlen=" + std::to_string(len));
      rows.push_back(bench_once(src, params, hw, *costs, opts, false));
      progress.update(static_cast<int64_t>(rows.size()), "seqlen=" + std::to_string(len));
    }
  }
  if (opts.json) {
    if (opts.seqlens.empty()) {
      std::cout << row_json(rows.front(), src.label, opts.gen, opts.by_instruction).dump(2) << "\n";
    } else {
      nlohmann::json list = nlohmann::json::array();
      for (const BenchRow& row : rows)
        list.push_back(row_json(row, src.label, opts.gen, opts.by_instruction));
      std::cout << list.dump(2) << "\n";
    }
  } else if (opts.seqlens.empty()) {
    print_text(rows.front(), src.label, opts.gen, opts.by_instruction);
  } else {
    std::cout << "bench " << src.label << " on " << opts.gen << "\n"
              << "trust: " << trust_line(opts.gen) << "\n"
              << std::setw(8) << "seqlen" << std::setw(14) << "latency_us" << std::setw(12)
              << "tensor_%" << std::setw(12) << "vector_%" << std::setw(12) << "scalar_%"
              << std::setw(12) << "dma_count" << std::setw(10) << "mfu_%" << std::setw(10)
              << "sbuf_%" << std::setw(10) << "psum_%"
              << "  bound_by\n";
    for (const BenchRow& row : rows) {
      const ProfileSummary& p = row.profile;
      std::cout << std::fixed << std::setprecision(1) << std::setw(8) << row.params.at("seqlen")
                << std::setw(14) << p.latency_us() << std::setw(12) << p.tensor.active_time_percent
                << std::setw(12) << p.vector.active_time_percent << std::setw(12)
                << p.scalar.active_time_percent << std::setw(12) << p.dma_transfer_count
                << std::setw(10) << p.mfu_estimated_percent << std::setw(10)
                << percent(row.memory.sbuf) << std::setw(10) << percent(row.memory.psum) << "  "
                << row.bounds.bounded_by() << "\n";
    }
  }
  return kExitOk;
}

}  // namespace

void register_bench(CLI::App& app, Action& action) {
  auto opts = std::make_shared<BenchCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "bench", "Latency and profile summary of a kernel on the timing model (trace-only run)");
  cmd->add_option("kernel", opts->target,
                  "Registered kernel name, .nkir file or NKI kernel FILE.py:FUNCTION")
      ->required();
  opts->nki.add_options(cmd);
  cmd->add_option("-p,--param", opts->params,
                  "NAME=INTEGER param, or NAME=VALUE option of a registered kernel; repeat")
      ->expected(1)
      ->take_all();
  cmd->add_option("--gen", opts->gen,
                  "Hardware generation: trn1, trn2 or trn3 (default trn1, or the kernel's first "
                  "generation when it does not run on trn1)");
  cmd->add_option("--seqlens", opts->seqlens, "Comma-separated seqlen values, one row each");
  cmd->add_option("--trace", opts->trace_file,
                  "Write a Chrome/Perfetto trace JSON of the schedule to this file (a new file "
                  "unless --force)");
  cmd->add_flag("--force", opts->force, "Replace an existing --trace file");
  opts->limits.add_options(cmd);
  cmd->add_option("--max-trace-mib", opts->max_trace_mib,
                  "Host memory the trace of one run may take; larger runs are refused before "
                  "they start")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 30))
      ->capture_default_str();
  cmd->add_flag("--by-instruction", opts->by_instruction,
                "Also print every instruction that ran: its engine, busy time and share of the "
                "critical path");
  cmd->add_flag("--json", opts->json, "Print JSON (an object, or a list with --seqlens)");
  cmd->callback([opts, &action] { action = [opts] { return run_bench(*opts); }; });
}

}  // namespace ncv::cli

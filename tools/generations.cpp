#include "tools/generations.h"

#include "tools/cli_common.h"

namespace ncv::cli {

namespace {

// Why one of `kernels` does not run on `gen` ("" when all do).
std::string refusal(const std::vector<const kernels::Variant*>& kernels, std::string_view gen) {
  for (const kernels::Variant* v : kernels) {
    if (v == nullptr) continue;
    if (std::string why = kernels::generation_refusal(*v, gen); !why.empty()) return why;
  }
  return "";
}

}  // namespace

const HwConfig& generation_for(const std::vector<const kernels::Variant*>& kernels,
                               const std::string& gen) {
  if (gen.empty()) {
    // trn1 when every kernel runs on it, else the first generation (in HwConfig order) they all
    // run on.
    if (refusal(kernels, kDefaultGeneration).empty()) return hw_config_for(kDefaultGeneration);
    for (std::string_view name : hw_config_names()) {
      if (refusal(kernels, name).empty()) return *find_hw_config(name);
    }
    throw UsageError("no generation runs every kernel given: " +
                     refusal(kernels, kDefaultGeneration));
  }
  if (gen == "all") throw UsageError("--gen all: this command runs on one generation");
  const HwConfig& hw = hw_config_for(gen);
  if (const std::string why = refusal(kernels, gen); !why.empty()) {
    throw UsageError("--gen " + gen + ": " + why);
  }
  return hw;
}

const HwConfig& generation_for(const kernels::Variant* v, const std::string& gen) {
  return generation_for(std::vector<const kernels::Variant*>{v}, gen);
}

GenerationPlan generations_for(const std::vector<const kernels::Variant*>& kernels,
                               const std::string& gen, const std::string& default_gen) {
  GenerationPlan plan;
  if (gen != "all") {
    plan.run.push_back(&generation_for(kernels, gen.empty() ? default_gen : gen));
    return plan;
  }
  for (std::string_view name : hw_config_names()) {
    if (std::string why = refusal(kernels, name); !why.empty()) {
      plan.skipped.push_back({std::string(name), std::move(why)});
    } else {
      plan.run.push_back(find_hw_config(name));
    }
  }
  if (plan.run.empty()) {
    throw UsageError("--gen all: no generation runs every kernel given: " +
                     plan.skipped.front().reason);
  }
  return plan;
}

GenerationPlan generations_for(const kernels::Variant* v, const std::string& gen,
                               const std::string& default_gen) {
  return generations_for(std::vector<const kernels::Variant*>{v}, gen, default_gen);
}

std::vector<const HwConfig*> named_generations(const std::string& gen,
                                               const std::string& default_gen) {
  const std::string name = gen.empty() ? default_gen : gen;
  if (name != "all") return {&hw_config_for(name)};
  std::vector<const HwConfig*> out;
  for (std::string_view n : hw_config_names()) out.push_back(find_hw_config(n));
  return out;
}

std::string skip_line(const std::string& label, const SkippedGeneration& s) {
  return "SKIP " + label + " on " + s.gen + ": " + s.reason;
}

}  // namespace ncv::cli

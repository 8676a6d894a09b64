// Which hardware generation(s) a command runs a kernel on: `--gen` as given, checked against the
// generations the kernel runs on (kernels::Variant::generations). One kernel on one named
// generation it does not run on is bad usage (exit 2, with the kernel's reason); without --gen a
// command uses trn1, or the kernel's first generation when it does not run on trn1; a command
// over several generations (`--gen all`) or several kernels skips the pairs that do not run and
// says so (a SKIP line, a JSON `skipped` entry), never silently.
#pragma once

#include <string>
#include <vector>

#include "kernels/variant.h"
#include "model/hw/hw_config.h"

namespace ncv::cli {

// The generation a command uses when --gen is not given and the kernel runs on it.
inline constexpr const char* kDefaultGeneration = "trn1";

// One kernel (`v`; null: a program without a registered kernel, which any generation takes) on
// one generation: `gen` as given ("" when --gen was not given). Throws UsageError for an unknown
// name, for "all", and for a generation v does not run on.
const HwConfig& generation_for(const kernels::Variant* v, const std::string& gen);
// Several kernels that run together (equiv, adopt: a rewrite and its original): a generation all
// of them run on; without --gen trn1, else the first (trn1, trn2, trn3 order) they all run on.
const HwConfig& generation_for(const std::vector<const kernels::Variant*>& kernels,
                               const std::string& gen);

// A generation left out of a command over several, and why.
struct SkippedGeneration {
  std::string gen;
  std::string reason;
};

struct GenerationPlan {
  std::vector<const HwConfig*> run;
  std::vector<SkippedGeneration> skipped;
};

// One kernel over `gen` ("all", one name, or "" for `default_gen`): "all" runs every generation
// v runs on and skips the others; one name (or the default) is generation_for.
GenerationPlan generations_for(const kernels::Variant* v, const std::string& gen,
                               const std::string& default_gen);
GenerationPlan generations_for(const std::vector<const kernels::Variant*>& kernels,
                               const std::string& gen, const std::string& default_gen);

// Every generation `gen` names ("all" or one name; "" for `default_gen`), unchecked: commands
// over several kernels check each pair with kernels::generation_refusal.
std::vector<const HwConfig*> named_generations(const std::string& gen,
                                               const std::string& default_gen);

// "SKIP attention_tkg on trn1: attention_tkg runs on trn2, trn3 only: ..."
std::string skip_line(const std::string& label, const SkippedGeneration& s);

}  // namespace ncv::cli

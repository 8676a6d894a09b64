// The options a program checked `--like K` is judged under (a traced NKI kernel FILE.py:FUNCTION
// or a .nkir file borrowing registered kernel K's layout, spec and precision contract): which
// come from the user or the file, which follow from the program itself (the dtypes it stores),
// and which are K's defaults, each with where it came from. An option is never taken from K's
// defaults unsaid, nor where the default contradicts the program (README "Options of a kernel
// checked --like").
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kernels/variant.h"
#include "model/ir/program.h"

namespace ncv::kernels {

// Where one option value of a --like check came from.
enum class OptionSource {
  given,     // --param NAME=VALUE
  recorded,  // the .nkir file's `options` line (it was built with it)
  derived,   // the only value of K's that fits the program (the others contradict it)
  fixed,     // the only value K offers with the other options (Variant::excluded)
  defaulted  // K's default: not given, and the program fits more than one value
};
std::string_view option_source_name(OptionSource s);  // "given", ..., "default"

struct LikeOption {
  std::string name, value;
  OptionSource source = OptionSource::defaulted;
  std::string why;  // for the text and JSON: what decided the value
};

// The contract a --like check uses: K, its resolved options (in K's order) and each one's source.
struct LikeContract {
  std::string kernel;
  Options options;  // resolved (Variant::resolve)
  std::vector<LikeOption> each;
  // "contract sd_attention with dtype=fp32 ...\n  option dtype = fp32: derived: ...\n..."
  std::string text() const;
  // {"kernel", "options": {name: value}, "sources": [{"name", "value", "from", "why"}]}
  nlohmann::json to_json() const;
};

// What the program says about an option set of K: the reasons it contradicts the program (empty:
// it fits). Two facts are read off the program: (1) its HBM tensors K's layout names k and out
// (bound by name) hold the spec's input and output dtypes, and (2) every dtype other than fp32
// that K's contract rounds a stage to (the matmul operands, scores, max, exp, P, the sums and
// accumulations, the normalisation, the output) is the dtype of some tensor of the program: the
// model rounds only where a value is stored (model/ir/instruction.h: every instruction writes its
// result in its destination's dtype), so a program without a bf16 tensor never rounds to bf16.
// `params` give the spec its shape (a missing param is taken at its domain's lowest value).
std::vector<std::string> like_contradictions(const Variant& v, const Program& program,
                                             const Options& options, const ParamValues& params);

// The options a program checked --like `v` is judged under. `given` are --param's options of v,
// `recorded` the ones the .nkir file records (they agree where both name an option; the caller
// checks that). For every other option of v: the single value of v's offered option sets that
// fits the program (like_contradictions) is derived; when several fit, v's default is taken when
// it fits, and said so. Throws std::invalid_argument (a usage error) when a given value or every
// value of an option contradicts the program, or when v's default contradicts it and more than
// one other value fits: the message names the option, the default, what the program has and how
// to pass a value (`--param NAME=VALUE`). `label` names the program in messages.
LikeContract like_contract(const Variant& v, const Program& program, const Options& given,
                           const Options& recorded, const ParamValues& params,
                           const std::string& label);

}  // namespace ncv::kernels

// Where a subcommand's program comes from: the name of a registered kernel (built with the
// options given among the --param assignments) or a .nkir file (optionally `--like` a registered
// kernel, borrowing its layout adapter, spec and contract).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "check/like_contract.h"
#include "kernels/variant.h"
#include "model/interp/interpreter.h"
#include "model/ir/program.h"

namespace CLI {
class App;
}

namespace ncv::cli {

// The flags only an NKI Python kernel (FILE.py:FUNCTION, traced by frontend/) takes: each tensor
// argument's dtype and optional concrete shape, names for its dims, the launch grid.
struct NkiFlags {
  std::vector<std::string> inputs;  // --input NAME=DTYPE[d0,d1,...]
  std::vector<std::string> shapes;  // --shape NAME=a,b,...
  std::string grid;                 // --grid N | NAME | A,B
  // The generation the kernel is traced for: the command's --gen when it names one generation
  // ("" or "all": the --like kernel's default generation, else the kernel's platform_target,
  // else trn1). Set by the command, not a flag of its own.
  std::string gen;
  void add_options(CLI::App* cmd);
  bool empty() const { return inputs.empty() && shapes.empty() && grid.empty(); }
};

// What a file's --like kernel is to it. `twin` (check --like, equiv, adopt): the file is a
// rewrite of that kernel, so every build option the file records must be one the kernel offers.
// `contract_only` (check --layout ... --contract): the kernel lends its precision contract and
// nothing else, so recorded options it does not have (an NKI kernel's own keyword arguments,
// scale=0.125) are not checked against it; the ones it has still must agree.
enum class LikeRole { twin, contract_only };

// Where KernelSource::options came from.
enum class OptionsFrom {
  arguments,  // --param and the kernel's defaults: the program was built from them here
  file,       // a .nkir file's `options` line (--param may repeat a value, not contradict one)
  unchecked,  // a .nkir file without an `options` line: --param and the --like kernel's
              // defaults, and nothing says the program was built with them
  contract_options,  // check --contract K --contract-option ...: every option of K given there
};

struct KernelSource {
  std::string label;  // the kernel name or the file path, for messages
  Program program;
  ParamValues params;
  kernels::Options options;                   // resolved (defaults filled) when variant is set
  const kernels::Variant* variant = nullptr;  // the registered kernel, or the --like one
  bool from_file = false;
  // The options fixed by the user (--param), a catalogue entry or the file: a check sweep ranges
  // over the others.
  kernels::Options pinned_options;
  // Builds the target for other options (a registered kernel or catalogue entry); empty for a
  // file, whose options are those it was built with.
  std::function<Program(const kernels::Options&)> rebuild;
  OptionsFrom options_from = OptionsFrom::arguments;
  std::vector<std::string> header;  // provenance comments of a traced NKI kernel
  // A file (traced kernel or .nkir) checked --like a registered kernel (role twin): the options
  // it is judged under and where each came from (check/like_contract.h); `options` are these.
  std::optional<kernels::LikeContract> like_contract;
};

// Splits --param NAME=VALUE strings into `v`'s build options (v may be null: no options) and
// integer params. Throws UsageError for an option given twice or a param that is not
// NAME=INTEGER.
void split_assignments(const kernels::Variant* v, const std::vector<std::string>& assignments,
                       kernels::Options& options, ParamValues& params);

// check --contract K --contract-option NAME=VALUE ...: K's options given apart from the target's
// own --param. A traced kernel's keyword arguments may share an option's name with another
// meaning (attention_cte.py's `sink` is a tensor and `sliding_window` a number, attention_cte's
// options are on/off), so with --contract-option no --param and no option a .nkir file records is
// read as K's. Every option of K must be given (none is taken from K's defaults unseen), each with
// a value K offers; K's excluded combinations are not applied: they say which programs K is built
// and proved for, and here K only lends its contract. Throws UsageError.
kernels::Options contract_options_given(const kernels::Variant& v,
                                        const std::vector<std::string>& assignments);

// `target` is a registered kernel name, a bug-catalogue entry (properties/bug_catalogue.h: the
// base kernel's Program with the entry's edit, with the base kernel's metadata), a path to a
// .nkir file or an NKI kernel `FILE.py:FUNCTION` (traced by the front end: `assignments` then
// set its keyword arguments and fix its shape params, `nki` gives its inputs and grid).
// `assignments` are the NAME=VALUE strings of --param: names of the variant's options become
// options, the rest integer params. `like` (may be empty) names the registered kernel a file
// borrows from; a .nkir file's recorded build options (its `options` line) are then its options,
// and a --param that contradicts one is an error. Throws UsageError (unknown kernel and no such
// file, bad option, an option contradicting the file or one `like` does not offer, params not
// declared). `contract_options` (not null: check's --contract-option, role contract_only) are
// then the options, as contract_options_given reads them.
// Whether `target` names a file (a .nkir program or FILE.py:FUNCTION): not a registered kernel,
// a bug-catalogue entry or a timing workload, the names load_kernel_source tries first.
bool is_file_target(const std::string& target);

KernelSource load_kernel_source(const std::string& target,
                                const std::vector<std::string>& assignments,
                                const std::string& like = "", const NkiFlags& nki = {},
                                LikeRole role = LikeRole::twin,
                                const std::vector<std::string>* contract_options = nullptr);

// One line for a command's output on where a file's options came from ("" when they are simply
// the arguments): "options dtype=bf16 ... recorded by FILE" or that they are unchecked.
std::string options_origin_note(const KernelSource& src);

}  // namespace ncv::cli

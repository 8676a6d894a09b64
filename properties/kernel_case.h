// What the kernel properties run on: a kernel under test (a registered variant, or a broken copy
// from the bug catalogue that borrows its base variant's metadata) and one generated case of it
// (options, params from the declared domain with a bias to the edges, a value recipe).
#pragma once

#include <rapidcheck.h>

#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "check/check.h"
#include "kernels/variant.h"
#include "properties/bug_catalogue.h"
#include "properties/values.h"

namespace ncv::props {

struct KernelUnderTest {
  std::string name;                           // the registered name, or the bug's name
  const kernels::Variant* variant = nullptr;  // domain, options, spec, layout, contract
  kernels::Options fixed;                     // options not drawn by the generator
  bool is_bug = false;
  // The Program for a complete (resolved) option set; memoised per option set.
  const Program& program(const kernels::Options& resolved) const;

  std::function<Program(const kernels::Options&)> build;
  std::shared_ptr<std::map<kernels::Options, Program>> cache =
      std::make_shared<std::map<kernels::Options, Program>>();
};

// Throws std::invalid_argument for an unknown name.
KernelUnderTest registered_kernel(const std::string& name);
KernelUnderTest broken_kernel(const BugEntry& bug);

// How large a generated case may get: the domain maximum is used only up to these caps, so that
// the default run stays within the ctest budget (RC_PARAMS deepens the run count, not the size).
struct Budget {
  int64_t max_seqlen = 384;
  int64_t max_batch = 2;
  // GQA params (flash_fwd's group and kv_heads): two of each already tell an interleaved head
  // mapping from the grouped one.
  int64_t max_heads = 2;
  // A seqlen tile above max_seqlen but at most two_tiles_up_to keys (flash_fwd's 512-key large
  // tile) is drawn up to two tiles deep: at one tile the online softmax never rescales.
  // sd_attention_allocated's 1024-key tiles stay at one (a second costs seconds a case).
  int64_t two_tiles_up_to = 512;
};
// Budget{} with max_seqlen from NCV_PROPERTY_MAX_SEQLEN when set (`ci/test --deep` sets 1024).
Budget default_budget();

struct KernelCase {
  kernels::Options options;  // complete
  ParamValues params;
  ValueRecipe values;

  std::string describe()
      const;  // "seqlen=256 d_head=64 use_causal_mask=true values=normal:s=0:seed=3"
};

// How RapidCheck prints a drawn case in a counterexample (found by argument-dependent lookup).
void showValue(const KernelCase& c, std::ostream& os);

// The one-line `ncverify check` command that replays `c` on `k` (check/replay.h). `judged`: the
// case as the property compared it with the oracle, whose oracle (exact or fast) the line then
// names; null for a property that compares two runs (check's own oracle choice).
std::string check_command(const KernelUnderTest& k, const KernelCase& c,
                          const kernels::CaseResult* judged = nullptr);

// The edge-biased values a param takes (smallest first, so shrinking goes to the smallest
// shape): its minimum, minimum + one step, one 128-tile, one tile + one step, non-power-of-two
// tile multiples (3, 5 tiles), the capped maximum, and odd sizes in between; only legal values.
std::vector<int64_t> edge_values(const Param& p, const Budget& b);

// Options (the fixed ones, plus `override` entries, the others drawn with the default first)
// and params from the declared domain; values of the given kinds (all when empty).
rc::Gen<KernelCase> gen_case(const KernelUnderTest& k, const Budget& b = {},
                             std::vector<ValueKind> kinds = {},
                             const kernels::Options& override_options = {});

}  // namespace ncv::props

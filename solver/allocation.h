// Allocation obligations, for every param in the domain: the live
// on-chip buffers fit the generation's per-partition SBUF and PSUM capacity at every program
// point (the allocator's peaks, model/ir/allocator.h); every explicitly placed buffer lies inside
// the memory for every iteration and `bufs` copy; explicitly placed buffers never overlap
// another buffer while both are live; the `bufs` copies of a buffer are disjoint; every on-chip
// buffer spans at most the generation's partitions.
//
// The rules are the interpreter's (model/interp/interpreter.cpp): setup_memory checks the
// partitions of every on-chip buffer and the two peaks (evaluated for program_id 0); enter_scope
// checks each placement with the enclosing loops' variables bound and copy = scope iteration % bufs
// (the iteration count of the scope's own loop; a buffer of the kernel body always uses copy 0).
//
// Two buffers are live together when some pair of their live regions (model/ir/liveness.h, the
// compiler's allocation rules stated once) meets: the regions' bodies nest (or are the same) and
// their spans of use meet, a region nested in a loop statement of the other's body meeting it
// only when that loop statement lies in the span. A buffer that each iteration of a loop writes
// before it reads has its regions inside that loop, one iteration at a time. (Declared scope
// alone would flag sd_attention_allocated's PSUM bank reuse: qk_psum and local_tp_buf rotate
// over banks g*4 .. g*4+3, which hold attn_res_psum and sum_local_tp_buf of the same group, but
// those are first written after the loops that use the rotating tiles; and the FlashAttention
// tutorial's v9/v10 put qk and scores_psum_t in the same banks, each live within its own loop.)
// Regions in sibling bodies are never live together. The pair is checked for the copies in use
// at the same iteration of the loops both share, which is where the interpreter would see one
// clobber the other. The peaks are the allocator's requirement under the same rules.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "model/hw/hw_config.h"
#include "model/interp/interpreter.h"
#include "model/ir/allocator.h"
#include "model/ir/program.h"
#include "solver/obligation.h"

namespace ncv::solver {

// Every allocation obligation of `p` for the generation options.hw (class allocation,
// instruction -1). Counterexamples replay as capacity (peaks, placements outside the memory),
// partition_rule (too many partitions) or clobbered_read (overlapping placements: only a read
// after the other buffer's write shows it, so a replay that raises nothing is reported as not
// reproduced, not as a disagreement).
std::vector<Obligation> prove_allocation(const Program& p, const ProveOptions& options = {});

// The capacity rules (peaks within capacity, explicit placements inside the memory for every
// iteration and copy, buffers within the partitions) at concrete params, evaluated with plain
// integer arithmetic over the allocator's expressions and the loop iterations: the brute-force
// side of the frontier's cross-check. The values need not lie in p's declared domain (the
// frontier searches beyond it). nullopt when everything fits, else why not (a capacity bound with
// a side beyond int64 does not fit). Throws std::invalid_argument where the program cannot run:
// a tensor gets a dimension below 1, the grid leaves [1, kMaxGrid], or other arithmetic (the grid,
// loop bounds) leaves int64.
std::optional<std::string> capacity_violation(const Program& p, const HwConfig& hw,
                                              const ParamValues& values);

// One inequality of a capacity rule, lhs <= rhs, and what each side is (for the explanation).
struct CapacityBound {
  Expr lhs, rhs;
  std::string lhs_what, rhs_what;
};

// A capacity rule as integer inequalities over the params and the variables of `loops`: the
// obligations, the frontier and the brute force all read these, so the three check one rule.
struct CapacityRule {
  std::string rule;     // "SBUF capacity", "PSUM capacity", "buffer partitions <= 128", ...
  std::string subject;  // "live SBUF buffers at their peak", "buffer 'acc' (scope of loop i)"
  std::string tensor;   // empty for the peaks
  CheckKind replay = CheckKind::capacity;  // what the interpreter raises when it fails
  std::vector<const Loop*> loops;          // enclosing loops, outermost first (placements)
  bool core_zero = false;                  // setup_memory evaluates the peaks for core 0 only
  std::optional<Expr> copy;                // placements with bufs > 1: the copy in use
  std::vector<CapacityBound> bounds;       // the rule holds iff every lhs <= rhs
  // A peak of auto-placed buffers: beyond it the compiler's automatic allocation spills to the
  // next memory level and the kernel still runs (RunOptions::spills_allowed), so a
  // counterexample says "needs spills here", not "cannot run" (Obligation::spillable).
  bool spillable = false;
};

// The capacity rules of `p` (whose Loop pointers they keep) under allocation `a`: buffer
// partitions, the SBUF and PSUM peaks, then every explicit placement in declaration order.
std::vector<CapacityRule> capacity_rules(const Program& p, const Allocation& a, const HwConfig& hw);

// capacity_violation for many values of one program: the allocation and the rules are built
// once (`p` must outlive the checker).
class CapacityChecker {
 public:
  CapacityChecker(const Program& p, const HwConfig& hw);
  std::optional<std::string> violation(const ParamValues& values) const;

 private:
  const Program& p_;
  std::vector<CapacityRule> rules_;
};

// The bounds of `r` that fail, with numbers, given the value of an Expr at the failing point.
std::string describe_violation(const CapacityRule& r,
                               const std::function<int64_t(const Expr&)>& value);

}  // namespace ncv::solver

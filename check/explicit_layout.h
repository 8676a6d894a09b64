// Checking an outside kernel (a .nkir file or a traced NKI kernel) that no registered kernel
// shares a layout with: `check FILE --layout "q=d,s k=d,s v=d,s out=s,d" --contract KERNEL`.
// The layout says which axis each dim of q, k, v and out is (and which inputs hold sinks, a
// prior, run-time positions); the attention problem is read off the program's own HBM shapes
// under it and the ExplicitProblem (scale, mask); the precision contract is a registered kernel's.
#pragma once

#include <optional>
#include <string>

#include "check/explicit_positions.h"
#include "kernels/variant.h"
#include "model/ir/program.h"

namespace ncv::kernels {

// A --layout: the tensor roles of Layout plus the inputs of the problems ExplicitProblem states.
struct ExplicitLayout {
  Layout layout;  // q, k, v, out; sink when given
  // Prefix caching: k_prior and v_prior (axes as k's, seq = the prior slots) and the run-time
  // input holding how many of its slots are used (all three or none).
  std::optional<TensorLayout> k_prior, v_prior;
  std::string prior_len;
  // Context parallelism: the run-time input holding the first query's position.
  std::string q_offset;
  // Sequence packing: the run-time inputs holding each query's first visible key and the key
  // after its last one (one value per query, in query order; both or none).
  std::string key_min, key_max;
};

// "q=d,s k=d,s v=s,d out=s,d" (entries separated by spaces or ';', axes b|batch, h|head,
// s|seq, d|dim, outermost first; q, k, v, out once each): tensors named by their role. Optional
// roles: sink=AXES (a head axis and size-1 batch axes; tensor "sink"), k_prior=AXES and
// v_prior=AXES (tensors "k_prior", "v_prior") with prior_len=INPUT, q_offset=INPUT,
// key_min=INPUT with key_max=INPUT (INPUT: the kernel input's name); neg_max=AXES and
// recip_sum=AXES, or neg_max:TENSOR=AXES to name the output (the cached softmax statistics,
// Layout::neg_max / recip_sum; axes among b, h and seq_tile,seq_part or s). Throws
// std::invalid_argument naming the offending entry.
ExplicitLayout parse_explicit_layout(const std::string& text);
// parse_explicit_layout for q, k, v and out only.
Layout parse_layout(const std::string& text);

// A Variant for `program` under `layout`: contract (and options) of `contract_from`, spec from
// the program's HBM shapes at the given params (batch = q's b extent or 1, heads = q's h,
// kv_heads = k's h, seqlen_q = q's s, seqlen_kv = k_prior's s + k's s, d_head = q's d, input
// dtype q's, output dtype out's) and `problem`: its scale and the mask set_positions_mask
// states. Each check case draws the run-time values (Variant::draw_case: the prior length, the
// rank, the packed sequences; sink logits per head) and returns the run-time values with the
// case (CaseDraws, a PositionsDraw); the packing hands that case's own values to the kernel.
Variant explicit_layout_variant(const Variant& contract_from, const Program& program,
                                const ExplicitLayout& layout, const ExplicitProblem& problem);

}  // namespace ncv::kernels

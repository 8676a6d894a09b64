// Checking an outside kernel (a .nkir file or a traced NKI kernel) that no registered kernel
// shares a layout with: `check FILE --layout "q=d,s k=d,s v=d,s out=s,d" --contract KERNEL`.
// The layout says which axis each dim of q, k, v and out is; the attention problem is read off
// the program's own HBM shapes under it; the precision contract is a registered kernel's.
#pragma once

#include <string>

#include "kernels/variant.h"
#include "model/ir/program.h"

namespace ncv::kernels {

// "q=d,s k=d,s v=s,d out=s,d" (entries separated by spaces or ';', axes b|batch, h|head,
// s|seq, d|dim, outermost first; every role once): the layout with tensors named q, k, v, out.
// Throws std::invalid_argument naming the offending entry.
Layout parse_layout(const std::string& text);

// A Variant for `program` under `layout`: contract (and options) of `contract_from`, spec from
// the program's HBM shapes at the given params (batch = q's b extent or 1, heads = q's h,
// kv_heads = k's h, seqlen_q = q's s, seqlen_kv = k's s, d_head = q's d, input dtype q's,
// output dtype out's), softmax scale `scale`, causal mask when `causal`.
Variant explicit_layout_variant(const Variant& contract_from, const Program& program,
                                const Layout& layout, double scale, bool causal);

}  // namespace ncv::kernels

// tensor_partition_reduce: a reduction across partitions (GpSimd engine).
//
// The page (nki.isa.tensor_partition_reduce, SDK 2.26) names the operators (add, max, bitwise_or,
// bitwise_and) and nothing about the order in which the partitions are combined. The model
// reduces partitions 0..P-1 in order from the operator's identity, as every other reduction of
// the model (semantics.h): max and the bitwise operators give the same value in any order (max
// up to which NaN comes out), an fp32 add does not. So a value of this instruction's add is one
// of the orders the hardware may use: the oracle's bounds hold for every summation order
// (oracle/README.md, gamma_n), and the equivalence checker treats the add as opaque
// (equiv/term_executor.cpp) rather than prove anything from the model's order.
//
// One per-element path for both modes (as top8.cpp): every element is read before any is
// written.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "model/semantics/internal.h"

namespace ncv {
inline namespace semantics {

void exec_tensor_partition_reduce(ExecMode, const View& dst, const View& src, AluOp op) {
  const int64_t n = src.free_elems();
  const bool integer = is_bitwise(op);
  std::vector<uint32_t> out(static_cast<size_t>(std::max<int64_t>(n, 0)));
  for (int64_t f = 0; f < n; ++f) {
    Val acc = reduce_identity(op);
    for (int64_t p = 0; p < src.rows; ++p) {
      acc = reduce_step(op, acc, load_val(src.dtype, ref_load(src, p, f), integer));
    }
    out[static_cast<size_t>(f)] = encode_val(dst.dtype, acc);
  }
  for (int64_t f = 0; f < std::min(n, dst.free_elems()); ++f) {
    store_bits(dst.dtype, dst.at(0, f), out[static_cast<size_t>(f)]);
  }
}

}  // namespace semantics
}  // namespace ncv

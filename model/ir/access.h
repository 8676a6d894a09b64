// Access patterns: strided rectangular views of a tensor.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "model/ir/expr.h"
#include "model/ir/tensor.h"

namespace ncv {
inline namespace ir {

// One tensor dimension of a view: indices start, start + step, ..., start + (size-1)*step.
// step 0 repeats element `start` `size` times: that is how a [P,1] operand is broadcast along
// the free axis. The partition dimension of an on-chip tensor always has step 1.
struct AccessDim {
  Expr start;
  Expr size;
  int64_t step = 1;
  bool operator==(const AccessDim&) const = default;
};

struct Access;

// Indirect addressing: tensor dimension `dim` is additionally offset, for view row r (view dim 0),
// by the int32 value offsets[r, 0] read at run time from an on-chip tensor. This is how paged-KV
// kernels gather cache blocks through a block table. The offsets' declared range [lo, hi] is what
// the solver may assume; the interpreter checks every value read against it.
struct Indirect {
  std::shared_ptr<const Access> offsets;
  int dim = 0;
  int64_t lo = 0;
  int64_t hi = 0;
  bool operator==(const Indirect& o) const;
};

struct Access {
  TensorId tensor = 0;
  std::vector<AccessDim> dims;  // one per tensor dimension
  // View dim k is tensor dim perm[k]; empty means identity. Used for transposing DMA loads
  // (load_transpose2d). On-chip views keep the partition dim first (perm[0] == 0), except the
  // operands of a plain DMA (dma_transpose from SBUF moves data across partitions).
  std::vector<int> perm;
  // SPMD: the on-chip memory of another core (core-to-core transfer); absent = this core.
  std::optional<Expr> core;
  std::optional<Indirect> indirect;
  bool operator==(const Access&) const = default;

  size_t rank() const { return dims.size(); }
  int tensor_dim(size_t view_dim) const {
    return perm.empty() ? static_cast<int>(view_dim) : perm[view_dim];
  }
  // View shape in view-dim order.
  std::vector<Expr> view_shape() const;
};

}  // namespace ir
}  // namespace ncv

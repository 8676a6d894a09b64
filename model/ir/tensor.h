// Tensors: kernel inputs/outputs and scratch in HBM, and on-chip buffers in SBUF/PSUM.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/hw/memory.h"
#include "model/ir/expr.h"
#include "model/numerics/dtype.h"

namespace ncv {
inline namespace ir {

enum class TensorKind : uint8_t { Input, Output, Scratch, Buffer };

using TensorId = uint32_t;
// Scope 0 is the kernel body; every loop body is its own scope (Loop::scope).
using ScopeId = uint32_t;

// Explicit placement of an on-chip buffer, like NKI direct allocation (`address=(partition,
// byte_offset)` / `mod_alloc`). Both are Exprs over params and the variables of enclosing loops,
// so rotating placements such as `bank = j % 4` are expressible. Copy c of a buffer with
// bufs = k lives at byte_offset + c * (bytes per copy).
struct Placement {
  Expr partition;
  Expr byte_offset;
  bool operator==(const Placement&) const = default;
};

// A constant placement byte offset lies in [0, kPlacementByteLimit): 4 GiB per partition,
// 2^14 times the largest per-partition memory the model knows (trn3's 256 KiB SBUF,
// model/hw/hw_config.cpp). A larger or negative constant is no address on any generation but a
// typo or a wrapped computation, and 2^63 - 1 left int64 as soon as a buffer's bytes were added
// to it. validate_program refuses it (and a constant partition outside [0, kPartitions));
// offsets that depend on params or loops are checked where they are evaluated (capacity).
inline constexpr int64_t kPlacementByteLimit = int64_t{1} << 32;

// Declared value range of an integer tensor (kernel inputs such as block tables): random inputs
// are drawn from it, the interpreter checks inputs against it, the solver may assume it.
struct ValueRange {
  int64_t lo = 0;
  int64_t hi = 0;
  bool operator==(const ValueRange&) const = default;
};

struct Tensor {
  TensorId id = 0;
  std::string name;
  TensorKind kind = TensorKind::Buffer;
  Memory memory = Memory::SBUF;
  DType dtype = DType::fp32;
  // On-chip tensors: dim 0 is the partition dimension (<= 128). HBM tensors: row-major.
  std::vector<Expr> shape;
  ScopeId scope = 0;
  int64_t bufs = 1;  // rotating copies; iteration i of the scope's loop uses copy i mod bufs
  std::optional<Placement> placement;
  std::optional<ValueRange> value_range;
  // HBM inputs and outputs: the shape the kernel gave the tensor when the program declares it
  // with a finer factorisation of its dims (the NKI front end splits a dim that a view steps
  // through twice, frontend/python/ncverify_nki/newapi/refine.py): the same elements in the same
  // row-major order, so arrays are handed in and out in either shape (`ncverify run
  // --inputs-from/--outputs-to`). Empty: the kernel's shape is `shape`.
  std::vector<Expr> interface_shape;
  bool operator==(const Tensor&) const = default;

  bool on_chip() const { return memory != Memory::HBM; }
  // Bytes of one copy in one partition (on-chip) = prod(shape[1:]) * dtype size.
  Expr bytes_per_partition() const;
  // Total elements (HBM) = prod(shape).
  Expr num_elements() const;
};

std::string_view tensor_kind_name(TensorKind k);  // "input", "output", "scratch", "buffer"

}  // namespace ir
}  // namespace ncv

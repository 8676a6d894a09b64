// One-instruction test programs for the instruction-level properties (properties 5 and 6 of
// properties/README.md): HBM inputs loaded into on-chip buffers, the instruction under test on
// views of those buffers, and the views it writes stored to HBM outputs. The case also keeps every
// loaded element, so that a test can compute what the instruction must produce without asking the
// model how it resolved a view.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/hw/hw_config.h"
#include "model/interp/host_tensor.h"
#include "model/ir/builder.h"
#include "model/ir/program.h"

namespace ncv::props::instr {

// One tensor dimension of a view: indices start, start + step, ..., size of them (step 0 repeats
// element `start`, the IR's broadcast).
struct DimSlice {
  int64_t start = 0;
  int64_t size = 1;
  int64_t step = 1;
};

// A view as the test builds it: one slice per tensor dim, and an optional permutation (view dim
// k is tensor dim perm[k]; empty = identity).
struct ViewSpec {
  std::vector<DimSlice> dims;
  std::vector<int> perm;

  static ViewSpec whole(const std::vector<int64_t>& shape);
  int tensor_dim(size_t view_dim) const;
  int64_t rows() const;                     // size of view dim 0
  std::vector<int64_t> free_shape() const;  // sizes of view dims 1.., in view order
  int64_t free_elems() const;
  // Row-major flat index, in a tensor of `shape`, of every element of the view in the view's
  // row-major order. Computed here from the slices, independently of the interpreter.
  std::vector<int64_t> offsets(const std::vector<int64_t>& shape) const;
  std::string str() const;  // "[0:32, 4:20:2]^(0,2,1)"
};

// A block of elements (a view's contents): rows x prod(free), row-major, as dtype bit patterns.
struct Tile {
  DType dtype = DType::fp32;
  int64_t rows = 0;
  std::vector<int64_t> free;
  std::vector<uint32_t> bits;

  int64_t cols() const;
  uint32_t at(int64_t r, int64_t c) const { return bits[static_cast<size_t>(r * cols() + c)]; }
};

// What an output must hold, element by element in row-major order. An empty optional marks an
// element whose documented value comes from a host library function (exp, tanh, powf, ...): it is
// held to the reference path only.
struct Expected {
  DType dtype = DType::fp32;
  std::vector<std::optional<uint32_t>> bits;
};

class InstrCase {
 public:
  explicit InstrCase(const std::string& kernel, const HwConfig* hw = nullptr);

  Builder& b() { return b_; }
  const HwConfig* hw() const { return hw_; }

  // An HBM input holding `bits` (row-major).
  TensorRef hbm_input(DType t, std::vector<int64_t> shape, std::vector<uint32_t> bits);
  // An on-chip buffer filled with `bits` (row-major) from an HBM input: by DMA for SBUF, through
  // an SBUF staging buffer and a vector-engine copy for PSUM (DMA does not reach PSUM).
  TensorRef loaded(Memory m, DType t, std::vector<int64_t> shape, std::vector<uint32_t> bits);
  // An on-chip buffer nothing writes before the instruction under test.
  TensorRef fresh(Memory m, DType t, std::vector<int64_t> shape);

  Access at(const TensorRef& t, const ViewSpec& v) const;
  // The elements of a view of an HBM input or a loaded buffer as they were loaded.
  Tile initial(const TensorRef& t, const ViewSpec& v) const;
  DType dtype(const TensorRef& t) const;
  const std::vector<int64_t>& shape_of(const TensorRef& t) const;
  bool is_loaded(const TensorRef& t) const;

  // The id the next instruction will get (the instruction under test, when called just before
  // emitting it).
  uint32_t next_instruction() const { return b_.program().num_instructions; }

  // After the instruction under test: copies the view to a new HBM output [rows, free elements]
  // (from PSUM through an SBUF staging copy) and returns the output's name.
  std::string store(const TensorRef& t, const ViewSpec& v);
  // An HBM output the instruction under test writes itself (a DMA store).
  TensorRef hbm_output(DType t, std::vector<int64_t> shape);
  const std::string& name_of(const TensorRef& t) const;

  // Values of params the program declares with Builder::param (shapes that depend on them).
  void set_param(const std::string& name, int64_t value) { params_[name] = value; }
  const std::map<std::string, int64_t>& params() const { return params_; }

  // Builds the program (Builder::finish: may throw BuildError).
  void finish();
  const Program& program() const { return program_; }
  const std::map<std::string, HostTensor>& inputs() const { return inputs_; }
  // The program's text form, to reproduce a failure by hand.
  std::string text() const;

 private:
  struct Contents {
    std::string name;
    std::vector<int64_t> shape;
    DType dtype = DType::fp32;
    Memory memory = Memory::HBM;
    std::optional<std::vector<uint32_t>> bits;  // absent: not loaded
  };
  std::string fresh_name(const std::string& stem);

  Builder b_;
  const HwConfig* hw_;
  std::map<TensorId, Contents> contents_;
  std::map<std::string, HostTensor> inputs_;
  std::map<std::string, int64_t> params_;
  int names_ = 0;
  Program program_;
};

}  // namespace ncv::props::instr

#include "properties/instruction_case.h"

#include <stdexcept>

#include "model/ir/printer.h"

namespace ncv::props::instr {

ViewSpec ViewSpec::whole(const std::vector<int64_t>& shape) {
  ViewSpec v;
  for (int64_t n : shape) v.dims.push_back(DimSlice{0, n, 1});
  return v;
}

int ViewSpec::tensor_dim(size_t view_dim) const {
  return perm.empty() ? static_cast<int>(view_dim) : perm[view_dim];
}

int64_t ViewSpec::rows() const {
  return dims[static_cast<size_t>(tensor_dim(0))].size;
}

std::vector<int64_t> ViewSpec::free_shape() const {
  std::vector<int64_t> s;
  for (size_t k = 1; k < dims.size(); ++k)
    s.push_back(dims[static_cast<size_t>(tensor_dim(k))].size);
  return s;
}

int64_t ViewSpec::free_elems() const {
  int64_t n = 1;
  for (int64_t s : free_shape()) n *= s;
  return n;
}

std::vector<int64_t> ViewSpec::offsets(const std::vector<int64_t>& shape) const {
  const size_t rank = dims.size();
  if (shape.size() != rank) throw std::logic_error("ViewSpec::offsets: rank mismatch");
  std::vector<int64_t> stride(rank, 1);
  for (size_t d = rank - 1; d-- > 0;) stride[d] = stride[d + 1] * shape[d + 1];
  std::vector<int64_t> view_size(rank);
  int64_t total = 1;
  for (size_t k = 0; k < rank; ++k) {
    view_size[k] = dims[static_cast<size_t>(tensor_dim(k))].size;
    total *= view_size[k];
  }
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(total));
  std::vector<int64_t> idx(rank, 0);  // view index, odometer
  for (int64_t e = 0; e < total; ++e) {
    int64_t flat = 0;
    for (size_t k = 0; k < rank; ++k) {
      const auto d = static_cast<size_t>(tensor_dim(k));
      flat += (dims[d].start + idx[k] * dims[d].step) * stride[d];
    }
    out.push_back(flat);
    for (size_t k = rank; k-- > 0;) {
      if (++idx[k] < view_size[k]) break;
      idx[k] = 0;
    }
  }
  return out;
}

std::string ViewSpec::str() const {
  std::string s = "[";
  for (size_t d = 0; d < dims.size(); ++d) {
    const DimSlice& x = dims[d];
    s += (d ? ", " : "") + std::to_string(x.start) + ":" + std::to_string(x.size);
    if (x.step != 1) s += ":" + std::to_string(x.step);
  }
  s += "]";
  if (!perm.empty()) {
    s += "^(";
    for (size_t k = 0; k < perm.size(); ++k) s += (k ? "," : "") + std::to_string(perm[k]);
    s += ")";
  }
  return s;
}

int64_t Tile::cols() const {
  int64_t n = 1;
  for (int64_t f : free) n *= f;
  return n;
}

InstrCase::InstrCase(const std::string& kernel, const HwConfig* hw) : b_(kernel), hw_(hw) {}

std::string InstrCase::fresh_name(const std::string& stem) {
  return stem + std::to_string(names_++);
}

TensorRef InstrCase::hbm_input(DType t, std::vector<int64_t> shape, std::vector<uint32_t> bits) {
  HostTensor h(t, shape);
  if (static_cast<int64_t>(bits.size()) != h.num_elements()) {
    throw std::logic_error("InstrCase::hbm_input: element count does not match the shape");
  }
  for (size_t i = 0; i < bits.size(); ++i) {
    store_bits(t, h.bytes.data() + i * dtype_size(t), bits[i]);
  }
  const std::string name = fresh_name("in");
  std::vector<Expr> dims(shape.begin(), shape.end());
  TensorRef ref = b_.input(name, t, dims);
  inputs_.emplace(name, std::move(h));
  contents_[ref.id()] = Contents{name, std::move(shape), t, Memory::HBM, std::move(bits)};
  return ref;
}

TensorRef InstrCase::loaded(Memory m, DType t, std::vector<int64_t> shape,
                            std::vector<uint32_t> bits) {
  TensorRef in = hbm_input(t, shape, bits);
  TensorRef buf = fresh(m, t, shape);
  if (m == Memory::SBUF) {
    b_.dma_copy(buf(), in());
  } else {
    std::vector<Expr> dims(shape.begin(), shape.end());
    TensorRef stage = b_.sbuf(fresh_name("stage"), t, dims);
    b_.dma_copy(stage(), in());
    b_.tensor_copy(buf(), stage());
  }
  contents_[buf.id()].bits = std::move(bits);
  return buf;
}

TensorRef InstrCase::fresh(Memory m, DType t, std::vector<int64_t> shape) {
  std::vector<Expr> dims(shape.begin(), shape.end());
  const std::string name = fresh_name(m == Memory::SBUF ? "sb" : "ps");
  TensorRef ref = m == Memory::SBUF ? b_.sbuf(name, t, dims) : b_.psum(name, t, dims);
  contents_[ref.id()] = Contents{name, std::move(shape), t, m, std::nullopt};
  return ref;
}

Access InstrCase::at(const TensorRef& t, const ViewSpec& v) const {
  std::vector<Slice> slices;
  for (const DimSlice& d : v.dims) slices.push_back(ds(d.start, d.size, d.step));
  Access a = t(slices);
  a.perm = v.perm;
  return a;
}

DType InstrCase::dtype(const TensorRef& t) const {
  return contents_.at(t.id()).dtype;
}

const std::vector<int64_t>& InstrCase::shape_of(const TensorRef& t) const {
  return contents_.at(t.id()).shape;
}

bool InstrCase::is_loaded(const TensorRef& t) const {
  return contents_.at(t.id()).bits.has_value();
}

Tile InstrCase::initial(const TensorRef& t, const ViewSpec& v) const {
  const Contents& c = contents_.at(t.id());
  if (!c.bits) throw std::logic_error("InstrCase::initial: the tensor is not loaded");
  Tile tile{c.dtype, v.rows(), v.free_shape(), {}};
  for (int64_t off : v.offsets(c.shape)) tile.bits.push_back((*c.bits)[static_cast<size_t>(off)]);
  return tile;
}

std::string InstrCase::store(const TensorRef& t, const ViewSpec& v) {
  const Contents& c = contents_.at(t.id());
  const std::string name = fresh_name("out");
  TensorRef out = b_.output(name, c.dtype, {Expr(v.rows()), Expr(v.free_elems())});
  if (c.memory == Memory::PSUM) {
    TensorRef stage = b_.sbuf(fresh_name("stage"), c.dtype, {v.rows(), v.free_elems()});
    b_.tensor_copy(stage(), at(t, v));
    b_.dma_copy(out(), stage());
  } else {
    b_.dma_copy(out(), at(t, v));
  }
  return name;
}

TensorRef InstrCase::hbm_output(DType t, std::vector<int64_t> shape) {
  std::vector<Expr> dims(shape.begin(), shape.end());
  const std::string name = fresh_name("out");
  TensorRef ref = b_.output(name, t, dims);
  contents_[ref.id()] = Contents{name, std::move(shape), t, Memory::HBM, std::nullopt};
  return ref;
}

const std::string& InstrCase::name_of(const TensorRef& t) const {
  return contents_.at(t.id()).name;
}

void InstrCase::finish() {
  program_ = b_.finish();
}

std::string InstrCase::text() const {
  try {
    return print_program(program_.name.empty() ? b_.program() : program_);
  } catch (const std::exception& e) {
    return std::string("(unprintable program: ") + e.what() + ")";
  }
}

}  // namespace ncv::props::instr

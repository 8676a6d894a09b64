// The NumPy .npy format (version 1.0 written; 1.0, 2.0 and 3.0 read) for kernel inputs and
// outputs, so that a Python caller hands arrays to the interpreter and gets them back
// (`ncverify run --inputs-from/--outputs-to`, frontend/python/ncverify_nki/simulate.py). The
// format: the magic "\x93NUMPY", a version, a little-endian header length, a Python dict literal
// with 'descr', 'fortran_order' and 'shape', padded to 64 bytes, then the elements in C order.
//
// Each DType travels as its own NumPy type where NumPy has one (fp32 '<f4', fp16 '<f2', int32
// '<i4', uint8 '|u1', uint16 '<u2', uint32 '<u4'), and as its bit pattern where NumPy has none:
// bf16 as '<u2', the fp8 types as '|u1' (the caller knows the program's dtypes; ml_dtypes
// arrays are views of exactly these bits).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "model/interp/host_tensor.h"
#include "model/ir/program.h"

namespace ncv {
inline namespace interp {

// The .npy type string a tensor of `dtype` is written and read with ('<f4', '<u2', ...).
std::string npy_descr(DType dtype);

// The tensor as a .npy file image.
std::string encode_npy(const HostTensor& tensor);

// A .npy file image as a tensor of `dtype` and `shape`; throws InputError naming `label` (the
// file) when the image is not a .npy file, is Fortran-ordered, or its type or shape differ.
HostTensor decode_npy(std::string_view image, DType dtype, const std::vector<int64_t>& shape,
                      const std::string& label);

// The same with a second accepted shape (`alternative`, ignored when empty): an image of either
// shape decodes to a tensor of `shape`, the same elements in the same row-major order.
HostTensor decode_npy(std::string_view image, DType dtype, const std::vector<int64_t>& shape,
                      const std::vector<int64_t>& alternative, const std::string& label);

// The kernel's own shape of tensor `t` at `params`: its interface shape (Tensor::interface_shape,
// the shape the kernel gave a tensor the program declares with refined dims), or its declared
// shape when it has none. Throws InputError when a dim is not positive or the two shapes hold
// different numbers of elements at these params.
std::vector<int64_t> interface_shape(const Program& p, TensorId t,
                                     const std::map<std::string, int64_t>& params);

// Every input tensor of `p` at `params`, decoded from the .npy image `read(name)` returns for
// it (`label(name)` names it in errors): each must have the tensor's concrete shape or its
// interface shape (the kernel's own, same elements row-major) and its dtype's .npy type.
// Refuses (InputError) inputs whose bytes together exceed the budget before reading any.
using ParamValues = std::map<std::string, int64_t>;
std::map<std::string, HostTensor> npy_inputs(
    const Program& p, const ParamValues& params,
    const std::function<std::string(const std::string& name)>& read,
    const std::function<std::string(const std::string& name)>& label, int64_t memory_budget_bytes);

// Each of `outputs` (RunResult::outputs of `p` at `params`) in its kernel's own shape
// (interface_shape): the same bytes, reshaped, for a tensor declared with refined dims.
std::map<std::string, HostTensor> outputs_in_interface_shape(
    const Program& p, const ParamValues& params, std::map<std::string, HostTensor> outputs);

}  // namespace interp
}  // namespace ncv

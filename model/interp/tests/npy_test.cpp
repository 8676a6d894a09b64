// The .npy codec (model/interp/npy.h) that hands arrays between Python and the interpreter: what
// it writes NumPy reads (the header layout NumPy's format 1.0 specifies), what it reads is checked
// against the program's tensor (type, shape, order, size), and a program's inputs decode from
// images and run; a tensor declared with refined dims is handed in and out in the kernel's shape.
#include "model/interp/npy.h"

#include <gtest/gtest.h>

#include "model/interp/interpreter.h"
#include "model/nkir/parse.h"

namespace ncv {
namespace {

HostTensor counting(DType dt, std::vector<int64_t> shape) {
  HostTensor t(dt, std::move(shape));
  for (int64_t i = 0; i < t.num_elements(); ++i) t.set(i, static_cast<float>(i) * 0.5f);
  return t;
}

std::string error_of(std::string_view image, DType dt, const std::vector<int64_t>& shape) {
  try {
    decode_npy(image, dt, shape, "x.npy");
  } catch (const InputError& e) {
    return e.message;
  }
  return "";
}

TEST(Npy, HeaderIsNumpyFormatOnePaddedTo64Bytes) {
  const std::string image = encode_npy(counting(DType::fp32, {2, 3}));
  ASSERT_GE(image.size(), 10u);
  EXPECT_EQ(image.substr(0, 6), "\x93NUMPY");
  EXPECT_EQ(image[6], '\x01');
  EXPECT_EQ(image[7], '\x00');
  const size_t header_len = static_cast<uint8_t>(image[8]) | (static_cast<uint8_t>(image[9]) << 8);
  EXPECT_EQ((10 + header_len) % 64, 0u);
  const std::string header = image.substr(10, header_len);
  EXPECT_EQ(header.rfind("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 0), 0u);
  EXPECT_EQ(header.back(), '\n');
  EXPECT_EQ(image.size(), 10 + header_len + 2 * 3 * 4);
  // a 1-d shape is a one-element tuple
  const std::string one = encode_npy(counting(DType::int32, {5}));
  EXPECT_NE(one.find("'shape': (5,)"), std::string::npos);
}

TEST(Npy, EveryDTypeRoundTripsBitForBit) {
  for (DType dt : kAllDTypes) {
    const HostTensor t = counting(dt, {3, 4, 2});
    const HostTensor back = decode_npy(encode_npy(t), dt, {3, 4, 2}, "x.npy");
    EXPECT_EQ(back.bytes, t.bytes) << dtype_name(dt);
    EXPECT_EQ(back.shape, t.shape);
  }
  // bf16 and fp8 travel as their bit patterns
  EXPECT_EQ(npy_descr(DType::bf16), "<u2");
  EXPECT_EQ(npy_descr(DType::fp8_e5m2), "|u1");
}

TEST(Npy, WrongTypeShapeOrderOrSizeIsRefusedNamingTheFile) {
  const std::string image = encode_npy(counting(DType::fp32, {2, 3}));
  EXPECT_EQ(error_of(image, DType::fp32, {2, 3}), "");
  EXPECT_NE(error_of(image, DType::bf16, {2, 3})
                .find("x.npy: .npy element type '<f4', expected "
                      "'<u2'"),
            std::string::npos);
  EXPECT_NE(error_of(image, DType::fp32, {3, 2})
                .find("x.npy: .npy shape (2, 3), the program's "
                      "tensor is [3, 2]"),
            std::string::npos);
  std::string fortran = image;
  fortran.replace(fortran.find("False"), 5, "True ");
  EXPECT_NE(error_of(fortran, DType::fp32, {2, 3}).find("Fortran-ordered"), std::string::npos);
  EXPECT_NE(error_of(image.substr(0, image.size() - 1), DType::fp32, {2, 3}).find("holds 23 bytes"),
            std::string::npos);
  EXPECT_NE(error_of("not a numpy file", DType::fp32, {2, 3}).find("not a .npy file"),
            std::string::npos);
  EXPECT_NE(error_of(image.substr(0, 20), DType::fp32, {2, 3}).find("truncated"),
            std::string::npos);
}

TEST(Npy, ProgramInputsDecodeAndRun) {
  const Program p = parse_program(R"(kernel twice
input x : hbm fp32 [128, 4]
output y : hbm fp32 [128, 4]
buffer t : sbuf fp32 [128, 4]
dma_copy t[:, :], x[:, :]
tensor_scalar t[:, :], t[:, :], op0=multiply, operand0=2.0
dma_copy y[:, :], t[:, :]
)");
  const HostTensor x = counting(DType::fp32, {128, 4});
  std::vector<std::string> asked;
  const auto inputs = npy_inputs(
      p, {},
      [&](const std::string& name) {
        asked.push_back(name);
        return encode_npy(x);
      },
      [](const std::string& name) { return name + ".npy"; }, int64_t{1} << 30);
  EXPECT_EQ(asked, std::vector<std::string>{"x"});
  const RunResult r = run_program(p, {}, inputs);
  ASSERT_FALSE(r.error) << r.error->message;
  const HostTensor& y = r.outputs.at("y");
  for (int64_t i = 0; i < y.num_elements(); ++i) ASSERT_EQ(y.get(i), 2.0f * x.get(i)) << i;
  // an input over the budget is refused before any is read
  asked.clear();
  EXPECT_THROW(npy_inputs(
                   p, {},
                   [&](const std::string& name) {
                     asked.push_back(name);
                     return encode_npy(x);
                   },
                   [](const std::string& name) { return name; }, 16),
               InputError);
  EXPECT_TRUE(asked.empty());
}

// A tensor the program declares [p, 4, 16] that the kernel gave [p, 64] (Tensor::interface_shape,
// the same elements row-major): its .npy image is taken in either shape, a third shape is refused
// naming both, and outputs come back in the kernel's shape with their bytes unchanged.
TEST(Npy, RefinedTensorsTravelInTheKernelsShape) {
  const Program p = parse_program(R"(kernel k
param p in [1, 128]
input x : hbm fp32 [p, 4, 16] interface [p, 64]
output y : hbm fp32 [p, 4, 16] interface [p, 64]
buffer t : sbuf fp32 [p, 4, 16]
dma_copy t[:, :, :], x[:, :, :]
tensor_scalar t[:, :, :], t[:, :, :], op0=multiply, operand0=2.0
dma_copy y[:, :, :], t[:, :, :]
)");
  const ParamValues params = {{"p", 8}};
  EXPECT_EQ(interface_shape(p, 0, params), (std::vector<int64_t>{8, 64}));
  const auto label = [](const std::string& name) { return name + ".npy"; };
  for (const std::vector<int64_t>& shape : {std::vector<int64_t>{8, 64}, {8, 4, 16}}) {
    const HostTensor x = counting(DType::fp32, shape);
    const auto inputs = npy_inputs(
        p, params, [&](const std::string&) { return encode_npy(x); }, label, int64_t{1} << 30);
    EXPECT_EQ(inputs.at("x").shape, (std::vector<int64_t>{8, 4, 16})) << "the declared shape";
    EXPECT_EQ(inputs.at("x").bytes, x.bytes);
    const RunResult r = run_program(p, params, inputs);
    ASSERT_FALSE(r.error) << r.error->message;
    const auto out = outputs_in_interface_shape(p, params, r.outputs);
    const HostTensor& y = out.at("y");
    EXPECT_EQ(y.shape, (std::vector<int64_t>{8, 64}));
    EXPECT_EQ(y.bytes, r.outputs.at("y").bytes);
    for (int64_t i = 0; i < y.num_elements(); ++i) ASSERT_EQ(y.get(i), 2.0f * x.get(i)) << i;
    EXPECT_NE(encode_npy(y).find("'shape': (8, 64)"), std::string::npos);
  }
  try {
    npy_inputs(
        p, params,
        [&](const std::string&) {
          return encode_npy(counting(DType::fp32, {64, 8}));
        },
        label, int64_t{1} << 30);
    ADD_FAILURE() << "a (64, 8) image was taken";
  } catch (const InputError& e) {
    EXPECT_NE(e.message.find("x.npy: .npy shape (64, 8), the program's tensor is [8, 4, 16] "
                             "(the kernel's [8, 64], the same elements)"),
              std::string::npos)
        << e.message;
  }
  // An interface shape whose elements differ at these params (the validator compares constant
  // shapes only) is refused, naming the tensor.
  const Program q = parse_program(
      "kernel k\nparam p in [1, 128]\ninput x : hbm fp32 [p, 64] interface [64, 64]\n");
  EXPECT_NO_THROW(interface_shape(q, 0, {{"p", 64}}));
  try {
    interface_shape(q, 0, {{"p", 8}});
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(e.message.find("tensor 'x': interface shape [64, 64] does not hold the elements of "
                             "its declared shape [8, 64]"),
              std::string::npos)
        << e.message;
  }
}

}  // namespace
}  // namespace ncv

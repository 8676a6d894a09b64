// The .npy codec (model/interp/npy.h) that hands arrays between Python and the interpreter: what
// it writes NumPy reads (the header layout NumPy's format 1.0 specifies), what it reads is checked
// against the program's tensor (type, shape, order, size), and a program's inputs decode from
// images and run.
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

}  // namespace
}  // namespace ncv

#include "model/interp/npy.h"

#include <cstring>
#include <optional>

#include "model/interp/interpreter.h"

namespace ncv {
inline namespace interp {

namespace {

constexpr std::string_view kMagic = "\x93NUMPY";

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t k = 0; k < shape.size(); ++k) {
    if (k > 0) s += ", ";
    s += std::to_string(shape[k]);
  }
  if (shape.size() == 1) s += ",";
  return s + ")";
}

// The value text after `'key':` in the header dict (up to the matching close of a tuple, or the
// next comma / closing brace), or npos when the key is absent.
std::string_view header_value(std::string_view header, std::string_view key) {
  const std::string quoted1 = "'" + std::string(key) + "'";
  const std::string quoted2 = "\"" + std::string(key) + "\"";
  size_t at = header.find(quoted1);
  size_t len = quoted1.size();
  if (at == std::string_view::npos) {
    at = header.find(quoted2);
    len = quoted2.size();
  }
  if (at == std::string_view::npos) return {};
  size_t p = header.find(':', at + len);
  if (p == std::string_view::npos) return {};
  ++p;
  while (p < header.size() && header[p] == ' ') ++p;
  size_t end = p;
  if (p < header.size() && header[p] == '(') {
    end = header.find(')', p);
    if (end == std::string_view::npos) return {};
    ++end;
  } else if (p < header.size() && (header[p] == '\'' || header[p] == '"')) {
    end = header.find(header[p], p + 1);
    if (end == std::string_view::npos) return {};
    ++end;
  } else {
    while (end < header.size() && header[end] != ',' && header[end] != '}') ++end;
  }
  return header.substr(p, end - p);
}

std::vector<int64_t> parse_shape(std::string_view text, const std::string& label) {
  std::vector<int64_t> shape;
  if (text.size() < 2 || text.front() != '(' || text.back() != ')') {
    throw InputError(label + ": .npy header has no shape tuple");
  }
  size_t p = 1;
  while (p + 1 < text.size()) {
    while (p < text.size() && (text[p] == ' ' || text[p] == ',')) ++p;
    if (p + 1 >= text.size()) break;
    int64_t v = 0;
    size_t digits = 0;
    while (p < text.size() && text[p] >= '0' && text[p] <= '9') {
      if (v > (int64_t{1} << 50)) throw InputError(label + ": .npy shape dimension too large");
      v = v * 10 + (text[p] - '0');
      ++p;
      ++digits;
    }
    if (digits == 0)
      throw InputError(label + ": .npy shape " + std::string(text) + " is not a tuple of sizes");
    shape.push_back(v);
  }
  return shape;
}

std::string bracketed(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t k = 0; k < shape.size(); ++k) s += (k ? ", " : "") + std::to_string(shape[k]);
  return s + "]";
}

int64_t elements(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (__builtin_mul_overflow(n, d, &n)) return -1;
  }
  return n;
}

}  // namespace

std::vector<int64_t> interface_shape(const Program& p, TensorId t, const ParamValues& params) {
  const Tensor& tensor = p.tensor(t);
  const std::vector<int64_t> declared = concrete_shape(p, t, params);
  if (tensor.interface_shape.empty()) return declared;
  Env env;
  for (const auto& [name, value] : params) env.set(name, value);
  std::vector<int64_t> shape;
  for (const Expr& e : tensor.interface_shape) {
    int64_t v = 0;
    try {
      v = eval(e, env);
    } catch (const EvalError& err) {
      throw InputError("tensor '" + tensor.name + "': interface shape " + e.str() + ": " +
                       err.message);
    }
    if (v < 1) {
      throw InputError("tensor '" + tensor.name + "': interface shape dim " + e.str() + " = " +
                       std::to_string(v) + " is not positive");
    }
    shape.push_back(v);
  }
  if (elements(shape) != elements(declared)) {
    throw InputError("tensor '" + tensor.name + "': interface shape " + bracketed(shape) +
                     " does not hold the elements of its declared shape " + bracketed(declared));
  }
  return shape;
}

std::string npy_descr(DType dtype) {
  switch (dtype) {
    case DType::fp32:
      return "<f4";
    case DType::fp16:
      return "<f2";
    case DType::int32:
      return "<i4";
    case DType::uint32:
    case DType::fp8_e4m3fn_x4:  // MX packed: the raw 32-bit words (4 fp8 bytes, byte q = value q)
    case DType::fp8_e5m2_x4:
      return "<u4";
    case DType::uint16:
    case DType::bf16:
    case DType::fp4_e2m1fn_x4:  // MX packed: the raw 16-bit words (nibble q = value q)
      return "<u2";
    case DType::uint8:
    case DType::fp8_e4m3:
    case DType::fp8_e4m3fn:
    case DType::fp8_e5m2:
      return "|u1";
  }
  return "|u1";
}

std::string encode_npy(const HostTensor& tensor) {
  std::string header = "{'descr': '" + npy_descr(tensor.dtype) +
                       "', 'fortran_order': False, 'shape': " + shape_text(tensor.shape) + ", }";
  // magic (6) + version (2) + length (2) + header + '\n', a multiple of 64
  const size_t unpadded = kMagic.size() + 4 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  std::string out(kMagic);
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>((header.size() >> 8) & 0xff);
  out += header;
  out.append(reinterpret_cast<const char*>(tensor.bytes.data()), tensor.bytes.size());
  return out;
}

HostTensor decode_npy(std::string_view image, DType dtype, const std::vector<int64_t>& shape,
                      const std::string& label) {
  return decode_npy(image, dtype, shape, {}, label);
}

HostTensor decode_npy(std::string_view image, DType dtype, const std::vector<int64_t>& shape,
                      const std::vector<int64_t>& alternative, const std::string& label) {
  if (image.size() < 10 || image.substr(0, kMagic.size()) != kMagic) {
    throw InputError(label + ": not a .npy file (no \\x93NUMPY magic)");
  }
  const auto byte = [&](size_t k) { return static_cast<uint8_t>(image[k]); };
  const uint8_t major = byte(6);
  size_t header_len = 0;
  size_t start = 0;
  if (major == 1) {
    header_len = byte(8) | (size_t{byte(9)} << 8);
    start = 10;
  } else if (major == 2 || major == 3) {
    if (image.size() < 12) throw InputError(label + ": truncated .npy header");
    header_len =
        byte(8) | (size_t{byte(9)} << 8) | (size_t{byte(10)} << 16) | (size_t{byte(11)} << 24);
    start = 12;
  } else {
    throw InputError(label + ": .npy version " + std::to_string(major) + " is not 1, 2 or 3");
  }
  if (image.size() - start < header_len) throw InputError(label + ": truncated .npy header");
  const std::string_view header = image.substr(start, header_len);
  std::string_view descr = header_value(header, "descr");
  if (descr.size() >= 2) descr = descr.substr(1, descr.size() - 2);
  std::string want = npy_descr(dtype);
  std::string got(descr);
  if (got.size() == 3 && got[0] == '=') got[0] = want[0];  // native order (little-endian here)
  if (want[0] == '|' && got.size() == 3 && got[0] == '<') got[0] = '|';
  if (got != want) {
    throw InputError(label + ": .npy element type '" + std::string(descr) + "', expected '" + want +
                     "' for a " + std::string(dtype_name(dtype)) +
                     " tensor (bf16 and fp8 travel as their bit patterns)");
  }
  if (header_value(header, "fortran_order") != "False") {
    throw InputError(label + ": a Fortran-ordered .npy array; save it in C order");
  }
  const std::vector<int64_t> got_shape = parse_shape(header_value(header, "shape"), label);
  if (got_shape != shape && (alternative.empty() || got_shape != alternative)) {
    throw InputError(label + ": .npy shape " + std::string(header_value(header, "shape")) +
                     ", the program's tensor is " + bracketed(shape) +
                     (alternative.empty() || alternative == shape
                          ? std::string()
                          : " (the kernel's " + bracketed(alternative) + ", the same elements)"));
  }
  HostTensor t(dtype, shape);
  const std::string_view data = image.substr(start + header_len);
  if (data.size() != t.bytes.size()) {
    throw InputError(label + ": .npy data holds " + std::to_string(data.size()) +
                     " bytes, the shape needs " + std::to_string(t.bytes.size()));
  }
  if (!data.empty()) std::memcpy(t.bytes.data(), data.data(), data.size());
  return t;
}

std::map<std::string, HostTensor> npy_inputs(
    const Program& p, const ParamValues& params,
    const std::function<std::string(const std::string& name)>& read,
    const std::function<std::string(const std::string& name)>& label, int64_t memory_budget_bytes) {
  if (const int64_t bytes = hbm_bytes(p, params); bytes > memory_budget_bytes) {
    throw InputError("inputs of kernel '" + p.name + "' would take " + std::to_string(bytes >> 20) +
                     " MiB, over the " + std::to_string(memory_budget_bytes >> 20) +
                     " MiB memory budget (--memory-budget-mib N raises it)");
  }
  const std::vector<std::vector<int64_t>> shapes = concrete_shapes(p, params);
  std::map<std::string, HostTensor> out;
  for (const Tensor& t : p.tensors) {
    if (t.kind != TensorKind::Input) continue;
    out.emplace(t.name, decode_npy(read(t.name), t.dtype, shapes[t.id],
                                   interface_shape(p, t.id, params), label(t.name)));
  }
  return out;
}

std::map<std::string, HostTensor> outputs_in_interface_shape(
    const Program& p, const ParamValues& params, std::map<std::string, HostTensor> outputs) {
  for (auto& [name, tensor] : outputs) {
    const std::optional<TensorId> id = p.find_tensor(name);
    if (!id || p.tensor(*id).interface_shape.empty()) continue;
    tensor.shape = interface_shape(p, *id, params);
  }
  return outputs;
}

}  // namespace interp
}  // namespace ncv

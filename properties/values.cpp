#include "properties/values.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <numbers>

#include "model/numerics/dtype.h"
#include "oracle/precision_contract.h"
#include "properties/shrinking_choice.h"

namespace ncv::props {

namespace {

struct KindName {
  ValueKind kind;
  const char* name;
};
constexpr KindName kKinds[] = {
    {ValueKind::uniform, "uniform"},
    {ValueKind::normal, "normal"},
    {ValueKind::large_logits, "large_logits"},
    {ValueKind::constant_rows, "constant_rows"},
    {ValueKind::spike, "spike"},
    {ValueKind::bf16_bits, "bf16_bits"},
    {ValueKind::fp16_bits, "fp16_bits"},
    {ValueKind::fp8_e4m3_bits, "fp8_e4m3_bits"},
    {ValueKind::fp8_e5m2_bits, "fp8_e5m2_bits"},
    {ValueKind::subnormal_and_negzero, "subnormal_and_negzero"},
    {ValueKind::zero_q, "zero_q"},
};

// splitmix64: a small, well-mixed stream; the same bits on every host.
class Stream {
 public:
  explicit Stream(uint64_t seed) : s_(seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull) {}
  uint64_t bits() {
    uint64_t z = (s_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // [0, 1) with 53 random bits.
  double unit() { return static_cast<double>(bits() >> 11) * 0x1p-53; }
  double uniform() { return 2.0 * unit() - 1.0; }
  // Box-Muller; the (0, 1] variate keeps log() finite.
  double normal() {
    const double u1 = 1.0 - unit(), u2 = unit();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
  }

 private:
  uint64_t s_;
};

double to_input(DType t, double x) {
  return static_cast<double>(quantize(t, static_cast<float>(x)));
}

// A random bit pattern of `t`, decoded; non-finite values and magnitudes above 16 are redrawn so
// that scores stay finite (the point is odd mantissas and exponents, not overflow).
double pattern_of(DType t, Stream& rng) {
  const uint32_t mask = dtype_size(t) >= 4 ? 0xFFFFFFFFu : (1u << (8 * dtype_size(t))) - 1;
  for (int attempt = 0; attempt < 64; ++attempt) {
    const float x = decode_to_float(t, static_cast<uint32_t>(rng.bits()) & mask);
    if (std::isfinite(x) && std::fabs(x) <= 16.0f) return x;
  }
  return 0.0;
}

void fill(std::vector<double>& x, DType t, auto&& draw) {
  for (double& e : x) e = to_input(t, draw());
}

// Every key row (and V row) of each (batch, kv head) equal to the first one.
void make_rows_constant(const oracle::AttentionSpec& s, std::vector<double>& x) {
  for (int64_t b = 0; b < s.batch; ++b) {
    for (int64_t g = 0; g < s.kv_heads; ++g) {
      for (int64_t j = 1; j < s.seqlen_kv; ++j) {
        for (int64_t c = 0; c < s.d_head; ++c) {
          x[static_cast<size_t>(s.kv_index(b, g, j, c))] =
              x[static_cast<size_t>(s.kv_index(b, g, 0, c))];
        }
      }
    }
  }
}

// Key j of each (batch, kv head) is a multiple of query j's direction (first head of the group),
// so query row j puts almost all its weight on key j.
void make_spikes(const oracle::AttentionSpec& s, oracle::AttentionInputs& in) {
  const double sd = std::sqrt(static_cast<double>(s.d_head));
  for (int64_t b = 0; b < s.batch; ++b) {
    for (int64_t g = 0; g < s.kv_heads; ++g) {
      for (int64_t j = 0; j < std::min(s.seqlen_q, s.seqlen_kv); ++j) {
        for (int64_t c = 0; c < s.d_head; ++c) {
          const double qv = in.q[static_cast<size_t>(s.q_index(b, g * s.group_size(), j, c))];
          in.k[static_cast<size_t>(s.kv_index(b, g, j, c))] =
              to_input(s.input_dtype, 8.0 * qv / (std::fabs(s.scale) * sd));
        }
      }
    }
  }
}

}  // namespace

const std::vector<ValueKind>& all_value_kinds() {
  static const std::vector<ValueKind> all = [] {
    std::vector<ValueKind> v;
    for (const KindName& k : kKinds) v.push_back(k.kind);
    return v;
  }();
  return all;
}

const char* value_kind_name(ValueKind k) {
  for (const KindName& e : kKinds) {
    if (e.kind == k) return e.name;
  }
  return "?";
}

std::string ValueRecipe::str() const {
  return std::string(value_kind_name(kind)) + ":s=" + std::to_string(scale_log2) +
         ":seed=" + std::to_string(seed);
}

std::optional<ValueRecipe> parse_value_recipe(const std::string& text, std::string& error) {
  ValueRecipe r;
  const size_t c1 = text.find(':');
  const std::string name = text.substr(0, c1);
  bool known = false;
  for (const KindName& k : kKinds) {
    if (name == k.name) r.kind = k.kind, known = true;
  }
  if (!known) {
    error = "unknown value kind '" + name + "' (known:";
    for (const KindName& k : kKinds) error += std::string(" ") + k.name;
    error += ")";
    return std::nullopt;
  }
  size_t pos = c1;
  while (pos != std::string::npos) {
    const size_t next = text.find(':', pos + 1);
    const std::string field =
        text.substr(pos + 1, next == std::string::npos ? next : next - pos - 1);
    const size_t eq = field.find('=');
    const std::string key = field.substr(0, eq),
                      val = eq == std::string::npos ? "" : field.substr(eq + 1);
    char* end = nullptr;
    errno = 0;
    if (key == "s") {
      const long v = std::strtol(val.c_str(), &end, 10);
      if (val.empty() || *end || errno || v < -60 || v > 60) {
        error = "'s=" + val + "': the scale exponent must be an integer in [-60, 60]";
        return std::nullopt;
      }
      r.scale_log2 = static_cast<int>(v);
    } else if (key == "seed") {
      const unsigned long long v = std::strtoull(val.c_str(), &end, 10);
      if (val.empty() || *end || errno || val[0] == '-') {
        error = "'seed=" + val + "': the seed must be a non-negative integer";
        return std::nullopt;
      }
      r.seed = v;
    } else {
      error = "unknown field '" + field + "' (expected s=INT and seed=INT)";
      return std::nullopt;
    }
    pos = next;
  }
  return r;
}

oracle::AttentionInputs make_values(const oracle::AttentionSpec& s, const ValueRecipe& r) {
  Stream rng(r.seed * 131 + static_cast<uint64_t>(r.kind));
  const DType t = s.input_dtype;
  oracle::AttentionInputs in;
  in.q.resize(static_cast<size_t>(s.q_elements()));
  in.k.resize(static_cast<size_t>(s.kv_elements()));
  in.v.resize(static_cast<size_t>(s.kv_elements()));
  const double scale = std::ldexp(1.0, r.scale_log2);
  auto all3 = [&](auto&& draw) {
    fill(in.q, t, draw);
    fill(in.k, t, draw);
    fill(in.v, t, draw);
  };
  switch (r.kind) {
    case ValueKind::uniform:
      all3([&] { return scale * rng.uniform(); });
      break;
    case ValueKind::normal:
      all3([&] { return scale * rng.normal(); });
      break;
    case ValueKind::large_logits: {
      // |s| = |scale| sigma^2 |q.k| ~ |scale| sigma^2 sqrt(d) |N(0,1)|: typical 30, tails ~100.
      const double sigma = std::sqrt(30.0 / (std::fabs(s.scale) * std::sqrt(double(s.d_head))));
      fill(in.q, t, [&] { return sigma * rng.normal(); });
      fill(in.k, t, [&] { return sigma * rng.normal(); });
      fill(in.v, t, [&] { return rng.normal(); });
      break;
    }
    case ValueKind::constant_rows:
      all3([&] { return rng.uniform(); });
      make_rows_constant(s, in.k);
      make_rows_constant(s, in.v);
      break;
    case ValueKind::spike:
      all3([&] { return rng.uniform(); });
      make_spikes(s, in);
      break;
    case ValueKind::bf16_bits:
      all3([&] { return pattern_of(DType::bf16, rng); });
      break;
    case ValueKind::fp16_bits:
      all3([&] { return pattern_of(DType::fp16, rng); });
      break;
    case ValueKind::fp8_e4m3_bits:
      all3([&] { return pattern_of(DType::fp8_e4m3fn, rng); });
      break;
    case ValueKind::fp8_e5m2_bits:
      all3([&] { return pattern_of(DType::fp8_e5m2, rng); });
      break;
    case ValueKind::subnormal_and_negzero: {
      const double tiny = 2 * oracle::subnormal_half_spacing(t);  // the smallest subnormal
      all3([&] {
        switch (rng.bits() % 4) {
          case 0:
            return -0.0;
          case 1:
            return tiny * static_cast<double>(1 + rng.bits() % 64) * (rng.bits() & 1 ? -1 : 1);
          default:
            return rng.normal();
        }
      });
      break;
    }
    case ValueKind::zero_q:
      fill(in.q, t, [] { return 0.0; });
      fill(in.k, t, [&] { return rng.normal(); });
      fill(in.v, t, [&] { return rng.normal(); });
      break;
  }
  return in;
}

rc::Gen<ValueRecipe> gen_value_recipe(std::vector<ValueKind> kinds) {
  if (kinds.empty()) kinds = all_value_kinds();
  return rc::gen::exec([kinds] {
    ValueRecipe r;
    r.kind = *shrinking_choice(kinds);
    if (r.kind == ValueKind::uniform || r.kind == ValueKind::normal) {
      // Shrinks toward 2^0; magnitudes from 2^-12 to 2^3 keep softmax and PV finite.
      r.scale_log2 = *shrinking_choice<int>({0, -1, 1, -2, 2, 3, -4, -6, -8, -10, -12});
    }
    r.seed = *rc::gen::inRange<uint64_t>(0, 1u << 20);
    return r;
  });
}

}  // namespace ncv::props

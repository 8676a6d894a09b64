#include "oracle/bias_values.h"

#include <random>

namespace ncv::oracle {

std::vector<double> generate_bias(const AttentionSpec& spec, uint64_t seed) {
  // Its own stream (a different multiplier from generate_inputs'), so adding a bias to a case
  // leaves its q, k and v unchanged.
  std::mt19937_64 rng(seed * 0xD1B54A32D192ED03ull + 0xB1A5ull);
  std::normal_distribution<double> N(0.0, 1.0);
  std::uniform_real_distribution<double> U(0.0, 1.0);
  std::vector<double> bias(static_cast<size_t>(spec.seqlen_q * spec.seqlen_kv));
  for (double& b : bias) {
    double x = N(rng);
    switch (rng() % 32) {
      case 0:
        x += 10.0 + 10.0 * U(rng);
        break;
      case 1:
        x -= 20.0 + 20.0 * U(rng);
        break;
      default:
        break;
    }
    b = static_cast<double>(static_cast<float>(x));
  }
  return bias;
}

}  // namespace ncv::oracle

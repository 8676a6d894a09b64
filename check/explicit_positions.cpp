#include "check/explicit_positions.h"

#include <algorithm>
#include <stdexcept>

namespace ncv::kernels {

void validate_positions(const ExplicitProblem& p, const PositionsGeometry& g) {
  if (p.window < 0) throw std::invalid_argument("--window must be >= 1");
  if (p.cp_degree < 0) throw std::invalid_argument("--cp-degree must be >= 1");
  if (g.q_offset && p.cp_degree == 0) {
    throw std::invalid_argument(
        "the layout's q_offset (context parallelism) needs --cp-degree: the offset is drawn as a "
        "rank's");
  }
  if (!g.q_offset && (p.cp_degree > 0 || p.cp_strided)) {
    throw std::invalid_argument(
        "--cp-degree and --cp-strided need the layout's q_offset role (the kernel input holding "
        "the first query's position)");
  }
  if (g.q_offset && p.align != Align::top_left) {
    throw std::invalid_argument(
        "context parallelism places the queries from the run-time offset: give --align top-left");
  }
  if (g.key_bounds && g.prior > 0) {
    throw std::invalid_argument(
        "key bounds (sequence packing) with a prior (prefix caching): the source does not "
        "combine them");
  }
}

PositionsDraw draw_positions(const ExplicitProblem& p, const PositionsGeometry& g,
                             std::mt19937_64& rng) {
  PositionsDraw d;
  if (g.prior > 0) d.prior_len = std::uniform_int_distribution<int64_t>(0, g.prior - 1)(rng);
  if (g.q_offset) {
    const int64_t rank = std::uniform_int_distribution<int64_t>(0, p.cp_degree - 1)(rng);
    d.q_offset = p.cp_strided ? rank : rank * g.seqlen_q;
  }
  if (g.key_bounds) {
    const int64_t n =
        std::uniform_int_distribution<int64_t>(1, std::min<int64_t>(4, g.seqlen_q))(rng);
    std::vector<int64_t> cuts;
    while (static_cast<int64_t>(cuts.size()) < n - 1) {
      const int64_t c = std::uniform_int_distribution<int64_t>(1, g.seqlen_q - 1)(rng);
      if (std::find(cuts.begin(), cuts.end(), c) == cuts.end()) cuts.push_back(c);
    }
    std::sort(cuts.begin(), cuts.end());
    cuts.insert(cuts.begin(), 0);
    cuts.push_back(g.seqlen_q);
    for (size_t s = 0; s + 1 < cuts.size(); ++s) {
      for (int64_t i = cuts[s]; i < cuts[s + 1]; ++i) {
        d.key_min.push_back(std::min(cuts[s], g.seqlen_active));
        d.key_max.push_back(std::min(cuts[s + 1], g.seqlen_active));
      }
    }
  }
  return d;
}

void set_positions_mask(const ExplicitProblem& p, const PositionsGeometry& g,
                        const PositionsDraw& d, oracle::AttentionSpec& s) {
  const int64_t sq = g.seqlen_q, sa = g.seqlen_active, prior = g.prior;
  s.seqlen_q = sq;
  s.seqlen_kv = prior + sa;
  s.mask = oracle::Mask{};
  const bool run_time = prior > 0 || g.q_offset || g.key_bounds;
  const bool aligned = p.align == Align::bottom_right || sq == sa;
  if (!run_time && aligned && !p.causal && p.window == 0) return;  // no mask
  if (!run_time && aligned && p.causal) {
    s.mask.kind = p.window > 0 ? oracle::MaskKind::sliding_window : oracle::MaskKind::causal;
    s.mask.window = p.window;
    return;
  }
  s.mask.kind = oracle::MaskKind::explicit_mask;
  s.mask.allowed.assign(static_cast<size_t>(sq * (prior + sa)), 0);
  const int64_t stride = p.cp_strided ? p.cp_degree : 1;
  for (int64_t i = 0; i < sq; ++i) {
    const int64_t qpos = p.align == Align::bottom_right ? i + sa - sq : d.q_offset + i * stride;
    for (int64_t j = 0; j < prior + sa; ++j) {
      const bool is_prior = j < prior;
      if (is_prior && j >= d.prior_len) continue;  // an unused prior slot
      const int64_t kpos = is_prior ? j - d.prior_len : j - prior;
      if (p.causal && kpos > qpos) continue;
      if (p.window > 0 && qpos - kpos >= p.window) continue;
      if (g.key_bounds) {
        const auto at = static_cast<size_t>(i);
        if (kpos < d.key_min[at] || kpos >= d.key_max[at]) continue;
      }
      s.mask.allowed[static_cast<size_t>(i * (prior + sa) + j)] = 1;
    }
  }
}

}  // namespace ncv::kernels

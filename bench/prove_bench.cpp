// The solver's speed (bench/README.md), one run on one thread:
//   - the time to prove every obligation (well-formedness, bounds, ISA rules, allocation,
//     initialization) of every option program of every registered kernel for trn1, per kernel
//     and in total (target <= 20 s in total);
//   - the time to compute each kernel's capacity frontiers: every option program, d_head 64 and
//     128 where the domain has them, the other params at their least value, trn1/trn2/trn3,
//     seqlen searched up to 65536.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>

#include "kernels/option_programs.h"
#include "kernels/registry.h"
#include "solver/frontier.h"
#include "solver/prove.h"

namespace {

using clock_type = std::chrono::steady_clock;

double since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

}  // namespace

int main() {
  using namespace ncv;
  constexpr double kProveTarget = 20.0;  // seconds: the target of bench/README.md
  std::printf("%-24s %9s %12s %8s %8s %9s %11s %10s\n", "kernel", "programs", "obligations",
              "proved", "other", "prove_s", "frontiers", "frontier_s");
  double prove_total = 0, frontier_total = 0;
  bool all_proved = true;
  for (const kernels::Variant& v : kernels::registry()) {
    const std::vector<kernels::LabelledProgram> programs = kernels::option_programs(v);
    size_t obligations = 0, proved = 0;
    auto t0 = clock_type::now();
    for (const kernels::LabelledProgram& lp : programs) {
      for (const solver::Obligation& o : solver::prove_program(lp.program)) {
        ++obligations;
        proved += o.verdict == solver::Verdict::proved;
      }
    }
    const double prove_s = since(t0);
    prove_total += prove_s;
    all_proved = all_proved && proved == obligations;

    int frontiers = 0;
    t0 = clock_type::now();
    for (const kernels::LabelledProgram& lp : programs) {
      const Param* seqlen = lp.program.find_param("seqlen");
      const Param* d_head = lp.program.find_param("d_head");
      if (seqlen == nullptr) continue;
      for (int64_t d : {64, 128}) {
        if (d_head != nullptr && (d < d_head->lo || d > d_head->hi)) continue;
        solver::FrontierQuery q;
        for (const Param& prm : lp.program.params) {
          if (prm.name != "seqlen") q.fixed[prm.name] = prm.name == "d_head" ? d : prm.lo;
        }
        q.search_hi = std::max<int64_t>(65536, seqlen->hi);
        for (const HwConfig* hw : {&hw_config_trn1(), &hw_config_trn2(), &hw_config_trn3()}) {
          q.hw = hw;
          solver::capacity_frontier(lp.program, q);
          ++frontiers;
        }
      }
    }
    const double frontier_s = since(t0);
    frontier_total += frontier_s;
    std::printf("%-24s %9zu %12zu %8zu %8zu %9.2f %11d %10.2f\n", v.name.c_str(), programs.size(),
                obligations, proved, obligations - proved, prove_s, frontiers, frontier_s);
  }
  std::printf("\nprove every registered kernel (trn1): %.2f s  (target <= %.0f s: %s)%s\n",
              prove_total, kProveTarget, prove_total <= kProveTarget ? "met" : "NOT met",
              all_proved ? "" : "  [some obligations not proved]");
  std::printf("frontiers of every registered kernel: %.2f s\n", frontier_total);
  return 0;
}

#include "workloads/families.h"
#include "workloads/workload.h"

namespace ncv::workloads {

const std::vector<Workload>& registry() {
  static const std::vector<Workload> all = [] {
    std::vector<Workload> v = gemm_workloads();
    for (Workload& w : matmul_tutorial_workloads()) v.push_back(std::move(w));
    for (Workload& w : mamba_workloads()) v.push_back(std::move(w));
    for (Workload& w : mamba_tutorial_workloads()) v.push_back(std::move(w));
    for (Workload& w : anchor_workloads()) v.push_back(std::move(w));
    return v;
  }();
  return all;
}

const Workload* find_workload(const std::string& name) {
  for (const Workload& w : registry()) {
    if (w.name == name) return &w;
  }
  return nullptr;
}

}  // namespace ncv::workloads

// Single-instruction anchors: programs around one instruction whose duration a public profile
// shows, so that `ncverify calibrate` checks the engine cost formulas against a measured
// instruction as well as whole kernels. The point's measurement is the instruction's duration
// (calibration/latencies/ `measure`), not the program's latency, so the loads and the store
// around it only make its inputs real.
#include <string>

#include "model/ir/builder.h"
#include "workloads/families.h"

namespace ncv::workloads {
namespace {

// PERF-FIG17 (nki_perf_guide figure 17, trn1 profile): one Vector TENSOR_TENSOR add with both
// fp32 inputs in SBUF, 8192 elements per partition on 64 partitions ("channels=64").
Program build_vector_tensor_tensor_anchor() {
  Builder b("vector_tensor_tensor_anchor");
  Expr P = b.param("P", 1, 128);
  Expr N = b.param("N", 1, 16384);
  auto a = b.input("a", DType::fp32, {P, N});
  auto c = b.input("b", DType::fp32, {P, N});
  auto out = b.output("out", DType::fp32, {P, N});
  auto a_sb = b.sbuf("a_sb", DType::fp32, {P, N});
  auto b_sb = b.sbuf("b_sb", DType::fp32, {P, N});
  auto sum = b.sbuf("sum", DType::fp32, {P, N});
  b.dma_copy(a_sb(), a(), 0);
  b.dma_copy(b_sb(), c(), 1);
  b.tensor_tensor(sum(), a_sb(), b_sb(), AluOp::add, Engine::Vector);
  b.dma_copy(out(), sum(), 2);
  return b.finish();
}

}  // namespace

std::vector<Workload> anchor_workloads() {
  std::vector<Workload> v;
  v.push_back(
      Workload{"vector_tensor_tensor_anchor",
               "anchor",
               "aws-neuron/aws-neuron-sdk nki/deep-dives/nki_perf_guide.rst figure 17 "
               "(nki/img/nki_perf_guide/fig17.png) @81ce03ae",
               "one Vector tensor_tensor add, fp32, both inputs in SBUF: P partitions x N elements",
               {"P", "N"},
               {"the profile shows the instruction only; the loads and the store that give it real "
                "inputs are not part of the anchor's measurement"},
               [](const BuildOptions&) { return build_vector_tensor_tensor_anchor(); }});
  return v;
}

}  // namespace ncv::workloads

// pipelined_attention: the source's SBUF offsets and PSUM banks, the steady state's stage
// interleaving, the HBM read-after-write its merge relies on (in the timing model), and `check`
// at seqlen 16384 (the only shape the source runs at; one case costs tens of seconds, which is
// why the registry-wide tests skip it: Variant::check_case_seconds).
#include <gtest/gtest.h>

#include <cstdlib>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "check/check.h"
#include "kernels/families.h"
#include "kernels/flash_attention/pipelined_attention_common.h"
#include "kernels/registry.h"
#include "model/interp/interpreter.h"
#include "model/ir/builder.h"
#include "model/timing/cost_table.h"
#include "model/timing/timing.h"

namespace ncv::kernels {
namespace {

const Variant& pipelined() {
  const Variant* v = find_variant("pipelined_attention");
  EXPECT_NE(v, nullptr);
  return *v;
}

const Program& program() {
  static const Program p = pipelined().build(pipelined().resolve({}));
  return p;
}

int64_t placed_offset(const Program& p, const std::string& name) {
  const auto id = p.find_tensor(name);
  EXPECT_TRUE(id.has_value()) << name;
  const Tensor& t = p.tensor(*id);
  EXPECT_TRUE(t.placement.has_value()) << name;
  return eval(t.placement->byte_offset, Env{});
}

// research table (pipelined_attention.py lines 94-190 at num_grps = 128): the `sca` sequence.
TEST(PipelinedAttention, SbufOffsetsAreTheSourcesAllocationSequence) {
  const std::vector<std::pair<std::string, int64_t>> table = {
      {"identity_load", 0},
      {"zero_bias_tensor", 256},
      {"running_max", 260},
      {"running_sum", 772},
      {"div_25_sbuf", 1284},
      {"k_loaded", 1796},
      {"v_loaded", 18180},
      {"q_loaded", 34564},
      {"scaling_factor", 35076},
      {"temp_reduce14_sbuf", 35084},
      {"mhlo_mul_2", 35212},
      {"final_reduce_max", 100748},
      {"prev_runnning_max", 100756},
      {"final_reduce_sum_b", 100764},
      {"final_reduce_sum_b_collect", 100796},
      {"prev_running_sum", 100804},
      {"prev_output", 100812},
      {"mm2_sbuf_res", 101836},
      {"mm2_div_sbuf", 102860},
      {"exp6_sbuf", 103884},
      {"tp_sbuf", 120268},
      {"mm2_sbuf", 136652},
  };
  for (const auto& [name, offset] : table) {
    EXPECT_EQ(placed_offset(program(), name), offset) << name;
  }
  EXPECT_EQ(pipe_sbuf_offsets().end, 136140 + 3 * kPipeSeqlen / 32);
  // the decomposed scalar_tensor_tensor's fp32 product sits right after the source's end
  EXPECT_EQ(placed_offset(program(), "stt_product"), pipe_sbuf_offsets().end);
  // every SBUF buffer of the program is explicitly placed, in partition 0
  for (const Tensor& t : program().tensors) {
    if (t.memory != Memory::SBUF) continue;
    ASSERT_TRUE(t.placement.has_value()) << t.name;
    EXPECT_EQ(eval(t.placement->partition, Env{}), 0) << t.name;
  }
}

// psum.alloc callbacks (lines 25-37): mm1_psum_dot block (g, si, pi) in bank pi, tp_psum block
// (g, si, tp_grp) in bank tp_grp (the same banks 0-3), mm2_psum block (g, mm2i) in 4 + mm2i % 4.
TEST(PipelinedAttention, PsumBanksAreTheSources) {
  std::map<std::string, std::set<int64_t>> banks;  // name prefix -> banks over the block index
  for (const Tensor& t : program().tensors) {
    if (t.memory != Memory::PSUM) continue;
    ASSERT_TRUE(t.placement.has_value()) << t.name;
    const std::string prefix = t.name.substr(0, t.name.find('_', t.name.find("psum")));
    const Expr& off = t.placement->byte_offset;
    for (int64_t x = 0; x < 4; ++x) {  // pi, tp_grp, mm2i: 0..3
      Env env;
      for (const char* var : {"pi", "tp_grp", "si", "mm2i"}) env.set(var, x);
      const int64_t bytes = eval(off, env);
      EXPECT_EQ(bytes % 2048, 0) << t.name;
      const int64_t bank = bytes / 2048;
      // mm1: pi; tp: tp_grp; mm2: 4 + mm2i % 4 (mm2i = si in the fused stage)
      const int64_t want = prefix == "mm2_psum" ? 4 + x : x;
      EXPECT_EQ(bank, want) << t.name << " at block index " << x;
      banks[prefix].insert(bank);
    }
  }
  EXPECT_EQ(banks["mm1_psum"], (std::set<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(banks["tp_psum"], (std::set<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(banks["mm2_psum"], (std::set<int64_t>{4, 5, 6, 7}));
}

// The names of the tensors an instruction writes, in program order, inside the first steady-state
// loop (section 0): the stage sequence load_q(g+2), exp(g+1), fused_qkmax_and_pv(g), tp(g+1),
// write_back(g), update_max(g+2) (lines 306-312).
TEST(PipelinedAttention, SteadyStateInterleavesQkOfGroupGPlus2WithPvOfGroupG) {
  const Program& p = program();
  const Loop* steady = nullptr;
  for (const Stmt& s : p.body) {
    const auto* l = std::get_if<Loop>(&s.node);
    if (l && l->var == "grp_i" && steady == nullptr) steady = l;
  }
  ASSERT_NE(steady, nullptr);
  EXPECT_EQ(steady->kind, LoopKind::sequential);  // affine_range(precise_schedule=True)
  EXPECT_EQ(eval(steady->stop, Env{}), kPipeGroups - 2);
  std::vector<std::string> writes;        // every write in the loop, in order
  std::vector<std::string> fused_writes;  // the writes of fused_qkmax_and_pv's si loop
  std::vector<const Loop*> loops;
  for_each_stmt(steady->body, loops, [&](const std::vector<const Loop*>& ls, const Stmt& s) {
    const auto* ins = std::get_if<InstrStmt>(&s.node);
    if (!ins) return;
    const std::string name = p.tensor(written_accesses(ins->ins).front()->tensor).name;
    writes.push_back(name);
    if (!ls.empty() && ls.front()->var == "si" && std::any_of(ls.begin(), ls.end(), [](auto* l) {
          return l->var == "pi" || l->var == "mm2_t";
        })) {
      fused_writes.push_back(name.substr(0, name.find("psum") + 4));
    }
  });
  auto first = [&](const std::string& prefix) {
    for (size_t i = 0; i < writes.size(); ++i) {
      if (writes[i].rfind(prefix, 0) == 0) return static_cast<int64_t>(i);
    }
    return int64_t{-1};
  };
  // load_q, exp, fused (QK then PV), tp, write_back (store to o), update_max
  const std::vector<int64_t> order = {
      first("q_loaded"), first("exp6_sbuf"), first("mm1_psum"),        first("mm2_psum"),
      first("tp_psum"),  first("o"),         first("final_reduce_max")};
  for (size_t i = 0; i < order.size(); ++i) ASSERT_GE(order[i], 0) << i;
  for (size_t i = 1; i < order.size(); ++i) EXPECT_LT(order[i - 1], order[i]) << i;
  // Within each 2048-key chunk: the four QK matmuls of g + 2 (mm1_psum), then group g's 16 PV
  // matmuls (mm2_psum): one QK block, one PV block per chunk, as source lines 256-274.
  EXPECT_FALSE(fused_writes.empty());
  EXPECT_EQ(fused_writes.front(), "mm1_psum");
  bool seen_pv = false;
  for (const std::string& w : fused_writes) {
    if (w == "mm2_psum") seen_pv = true;
    EXPECT_FALSE(seen_pv && w == "mm1_psum") << "QK after PV within one chunk";
  }
  EXPECT_TRUE(seen_pv);
}

// A DMA that reads an HBM region waits for the DMA that wrote it, on another queue, even when
// nothing else orders them: the merge's nl.load(o) after section 0's nl.store(o) (lines 290, 293)
// depends on it. A read of another tensor does not wait.
TEST(PipelinedAttention, TimingOrdersAnHbmReadAfterTheWriteOfTheSameRegion) {
  Builder b("hbm_raw");
  auto x = b.input("x", DType::fp32, {128, 8192});
  auto o = b.output("o", DType::fp32, {256, 8192});
  auto a = b.sbuf("a", DType::fp32, {128, 8192});
  auto back = b.sbuf("back", DType::fp32, {128, 8192});
  auto other = b.sbuf("other", DType::fp32, {128, 8192});
  b.dma_copy(a(), x(), 0);
  b.dma_copy(o({ds(0, 128), all()}), a(), 1);
  b.dma_copy(other(), x(), 3);  // reads nothing the store writes: no dependency
  b.dma_copy(back(), o({ds(0, 128), all()}), 2);
  b.dma_copy(o({ds(128, 128), all()}), back(), 1);
  const Program p = b.finish();
  RunOptions ro;
  ro.compute_values = false;
  const RunResult r = run_program(p, {}, random_inputs(p, {}, 1), ro);
  ASSERT_FALSE(r.error.has_value()) << r.error->message;
  const Schedule s = schedule_trace(p, r.trace, cost_table_trn1());
  ASSERT_EQ(s.instances.size(), 5u);
  const TimedInstance &store = s.instances[1], &unrelated = s.instances[2], &load = s.instances[3];
  EXPECT_GE(load.start_ns, store.end_ns);
  // The load's dependency is the store (DMA bandwidth, shared by every queue, may bound its
  // start too); the read of x has none.
  EXPECT_EQ(load.waited_for, 1);
  EXPECT_EQ(unrelated.waited_for, -1);
}

// The merge's load of o rows 128g (section 1) starts after section 0's store of the same rows
// ends, for every group, on the scheduled trace of the whole kernel (trace only).
TEST(PipelinedAttention, SectionOneLoadsTheOutputAfterSectionZeroStoredIt) {
  const Program& p = program();
  const TensorId o = *p.find_tensor("o");
  const ParamValues params{{"bs", 1}, {"seqlen", kPipeSeqlen}};
  RunOptions ro;
  ro.compute_values = false;
  const RunResult r = run_program(p, params, random_inputs(p, params, 1), ro);
  ASSERT_FALSE(r.error.has_value()) << r.error->message;
  const Schedule s = schedule_trace(p, r.trace, cost_table_trn1());
  // The first store to each byte range of o is section 0's partial; every load of o reads one.
  std::map<uint64_t, double> stored_end;  // byte_begin -> end of its first store
  int loads = 0;
  for (size_t e = 0; e < r.trace.events.size(); ++e) {
    const TraceEvent& ev = r.trace.events[e];
    bool reads_o = false;
    for (uint32_t k = 0; k < ev.num_reads + ev.num_writes; ++k) {
      const Region& g = r.trace.regions[ev.region_begin + k];
      if (g.memory != Memory::HBM || g.tensor != o) continue;
      const bool write = k >= ev.num_reads;
      if (write) {
        stored_end.emplace(g.byte_begin, s.instances[e].end_ns);
      } else {
        reads_o = true;
        ASSERT_TRUE(stored_end.count(g.byte_begin))
            << "o read before any store, byte " << g.byte_begin;
        EXPECT_GE(s.instances[e].start_ns, stored_end[g.byte_begin]) << "byte " << g.byte_begin;
      }
    }
    loads += reads_o ? 1 : 0;
  }
  EXPECT_EQ(loads, kPipeGroups);  // one prev_output load per group
  EXPECT_GE(stored_end.size(), static_cast<size_t>(kPipeGroups));
}

// The only shape the source runs at, one case: the row max in section 1 for half the rows (a
// minute: the deep tier).
TEST(DeepPipelinedAttention, PassesCheckAtSeqlen16384) {
  const Variant& v = pipelined();
  const Options o = v.resolve({});
  CheckOptions co;
  co.cases = 1;
  co.distributions = heavy_check_distributions(v, o);  // rowmax_across_tiles: the max in section 1
  co.run.record_trace = false;
  const CheckResult r = check_kernel(v, program(), o, {{"bs", 1}, {"seqlen", kPipeSeqlen}}, co);
  EXPECT_TRUE(r.pass) << r.summary();
}

// The default tier's judge of the kernel: the same builder with its 8192-key sections scaled to
// 2048 (seqlen 4096, 1/16 of the work), checked with the distributions the deep test uses and
// with peaked (neighbouring groups with different row sums).
TEST(PipelinedAttention, PassesCheckScaledToTwoSectionsOf2048Keys) {
  const PipeShape shape{.section_len = 2048};
  const Variant v = pipelined_attention_scaled_variant(shape);
  const Options o = v.resolve({});
  const Program p = v.build(o);
  EXPECT_EQ(p.name, "pipelined_attention");
  CheckOptions co;
  co.cases = 2;
  co.distributions = heavy_check_distributions(v, o);
  co.distributions.push_back(oracle::Distribution::peaked);
  co.run.record_trace = false;
  const CheckResult r = check_kernel(v, p, o, {{"bs", 1}, {"seqlen", shape.seqlen()}}, co);
  EXPECT_TRUE(r.pass) << r.summary();
  EXPECT_EQ(r.cases.size(), 2u);
}

// Scaling keeps the source's structure: the allocation grows with the section as the `sca`
// expressions say, and a section length that is not a multiple of the 2048-key chunk is refused.
TEST(PipelinedAttention, ScaledShapeFollowsTheSourceExpressions) {
  EXPECT_EQ(pipe_sbuf_offsets(PipeShape{}).end, pipe_sbuf_offsets().end);
  const PipeShape small{.section_len = 2048};
  EXPECT_EQ(small.seqlen(), 4096);
  EXPECT_EQ(small.groups(), 32);
  EXPECT_EQ(pipe_sbuf_offsets(small).running_sum - pipe_sbuf_offsets(small).running_max,
            small.groups() * 4);
  EXPECT_THROW(build_pipelined_attention_scaled(PipeShape{.section_len = 1024}),
               std::invalid_argument);
  EXPECT_THROW(build_pipelined_attention_scaled(PipeShape{.section_len = 0}),
               std::invalid_argument);
}

}  // namespace
}  // namespace ncv::kernels

// flash_fwd (nki-samples reference/attention.py): structure (guards as loop bounds, GQA head
// mapping), check against the oracle at several shapes, masks and group sizes, and broken copies
// (window off by one, online rescale dropped) that must fail.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "kernels/flash_attention/flash_fwd_common.h"
#include "kernels/flash_attention/tests/flash_fwd_testing.h"
#include "model/interp/interpreter.h"
#include "model/ir/builder.h"

namespace ncv::kernels {
namespace {

void for_each_mut(std::vector<Stmt>& body, const std::function<void(Stmt&)>& f) {
  for (Stmt& s : body) {
    f(s);
    if (auto* l = std::get_if<Loop>(&s.node)) for_each_mut(l->body, f);
  }
}

TEST(FlashFwd, RegisteredWithSourceAndNotes) {
  const Variant& v = flash();
  EXPECT_EQ(v.family, "flash_attention");
  EXPECT_NE(v.models.find("reference/attention.py"), std::string::npos);
  EXPECT_NE(v.models.find("8370e11"), std::string::npos);
  EXPECT_GE(v.notes.size(), 8u);
  const Program p = v.build(v.resolve({}));
  ASSERT_NE(p.find_param("seqlen"), nullptr);
  EXPECT_EQ(p.find_param("seqlen")->multiple_of, 512);
  EXPECT_EQ(p.find_param("window"), nullptr);  // only with sliding_window=on
  const Program w = v.build(v.resolve({{"sliding_window", "on"}}));
  ASSERT_NE(w.find_param("window"), nullptr);
}

TEST(FlashFwd, NoMaskAndCausalPassAtSeveralSeqlens) {
  for (int64_t s : {512, 1024, 1536}) {
    for (const char* causal : {"false", "true"}) {
      const CheckResult r = flash_check({{"use_causal_mask", causal}}, flash_shape(s));
      EXPECT_TRUE(r.pass) << "seqlen=" << s << " causal=" << causal << "\n" << r.summary();
    }
  }
}

TEST(FlashFwd, OtherOptionSetsPass) {
  const std::vector<Options> sets = {
      {{"mixed_precision", "false"}, {"use_causal_mask", "true"}},
      {{"mixed_precision", "false"}, {"sliding_window", "on"}},
      {{"seq_tile_size", "1024"}},
      {{"seq_tile_size", "1024"}, {"use_causal_mask", "true"}},
      {{"seq_tile_size", "1024"}, {"sliding_window", "on"}},
  };
  for (const Options& o : sets) {
    ParamValues pv = flash_shape(o.count("seq_tile_size") ? 2048 : 1536, 1, 64);
    if (o.count("sliding_window")) pv["window"] = 700;
    const CheckResult r = flash_check(o, pv, nullptr, 1);
    EXPECT_TRUE(r.pass) << nlohmann::json(o).dump() << "\n" << r.summary();
  }
}

TEST(FlashFwd, SlidingWindowsPass) {
  for (int64_t s : {512, 1536}) {
    for (int64_t w : {int64_t{1}, int64_t{200}, s, s + 7}) {
      ParamValues pv = flash_shape(s);
      pv["window"] = w;
      const CheckResult r = flash_check({{"sliding_window", "on"}}, pv);
      EXPECT_TRUE(r.pass) << "seqlen=" << s << " window=" << w << "\n" << r.summary();
    }
  }
}

TEST(FlashFwd, GqaGroupsAndBatchPass) {
  for (int64_t g : {1, 2, 4, 8}) {
    const CheckResult r =
        flash_check({{"use_causal_mask", "true"}}, flash_shape(512, g, 32, 2, 2), nullptr, 1);
    EXPECT_TRUE(r.pass) << "group=" << g << "\n" << r.summary();
  }
}

// How often the instruction writing `tensor` with operation T runs (trace-only run).
template <typename T>
int64_t runs_of(const Options& given, const ParamValues& pv, const std::string& tensor) {
  const Options o = flash().resolve(given);
  Program p = flash().build(o);
  std::vector<uint32_t> ids;
  for_each_mut(p.body, [&](Stmt& s) {
    const auto* is = std::get_if<InstrStmt>(&s.node);
    const auto* ins = is ? std::get_if<T>(&is->ins) : nullptr;
    if (ins && p.tensors[ins->dst.tensor].name == tensor) ids.push_back(is->id);
  });
  if (ids.size() != 1) throw std::logic_error("expected one instruction writing " + tensor);
  RunOptions ro;
  ro.compute_values = false;
  const RunResult r = run_program(p, pv, random_inputs(p, pv, 1), ro);
  if (r.error) throw std::logic_error(r.error->message);
  int64_t n = 0;
  for (const TraceEvent& e : r.trace.events) n += e.instruction == ids[0] ? 1 : 0;
  return n;
}

// The source's guards as loop bounds, counted at seqlen 1024 (8 q tiles). L = 512: causal
// processes (i, j) iff i*128 >= j*512: 8 + 4 = 12 QK matmuls (16 without the mask). L = 1024:
// one large tile; q tiles 0-3 multiply the first 512 keys and zero the second, tiles 4-7
// multiply both: 12 matmuls, 4 zeroed tiles. A window of 1 at L = 512 skips (i, j = 0) for i >= 4
// and (i, j = 1) for i < 4: 8 matmuls.
TEST(FlashFwd, GuardsSkipExactlyTheSourcesTiles) {
  const ParamValues pv = flash_shape(1024, 1, 16);
  EXPECT_EQ(runs_of<Matmul>({}, pv, "qk_psum"), 16);
  EXPECT_EQ(runs_of<Matmul>({{"use_causal_mask", "true"}}, pv, "qk_psum"), 12);
  const Options l1024 = {{"use_causal_mask", "true"}, {"seq_tile_size", "1024"}};
  EXPECT_EQ(runs_of<Matmul>(l1024, pv, "qk_psum"), 12);
  EXPECT_EQ(runs_of<Memset>(l1024, pv, "qk_psum_zero"), 4);
  ParamValues w = pv;
  w["window"] = 1;
  EXPECT_EQ(runs_of<Matmul>({{"sliding_window", "on"}}, w, "qk_psum"), 8);
}

// The window predicate one key wider (k_pos > q_pos - w - 1) must fail: the key at distance w
// leaks in for every row that has one.
TEST(FlashFwd, WindowOffByOneFails) {
  const Options o = flash().resolve({{"sliding_window", "on"}});
  Program p = flash().build(o);
  int edited = 0;
  for_each_mut(p.body, [&](Stmt& s) {
    auto* is = std::get_if<InstrStmt>(&s.node);
    if (!is) return;
    if (auto* sel = std::get_if<AffineSelect>(&is->ins); sel && sel->channel_multiplier == -1) {
      sel->offset = sel->offset + 1;
      ++edited;
    }
  });
  ASSERT_EQ(edited, 1);
  ParamValues pv = flash_shape(512);
  pv["window"] = 64;
  const CheckResult r = flash_check(o, pv, &p);
  EXPECT_FALSE(r.pass) << r.summary();
}

// alpha = exp(m_prev - m) replaced by exp(m - m) = 1: the earlier large tiles keep their old
// max, which must fail as soon as a later tile raises the max (seqlen 1024, two tiles).
TEST(FlashFwd, MissingRescaleFails) {
  const Options o = flash().resolve({});
  Program p = flash().build(o);
  int edited = 0;
  for_each_mut(p.body, [&](Stmt& s) {
    auto* is = std::get_if<InstrStmt>(&s.node);
    if (!is) return;
    auto* act = std::get_if<Activation>(&is->ins);
    if (act && act->func == ActFunc::exp && act->bias && act->dst.tensor != act->src.tensor &&
        p.tensors[act->dst.tensor].name == "alpha") {
      act->bias = Operand{act->src};
      ++edited;
    }
  });
  ASSERT_EQ(edited, 1);
  const CheckResult r = flash_check(o, flash_shape(1024), &p);
  EXPECT_FALSE(r.pass) << r.summary();
}

}  // namespace
}  // namespace ncv::kernels

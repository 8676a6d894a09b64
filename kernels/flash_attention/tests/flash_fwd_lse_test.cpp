// flash_fwd in training mode (FlashConfig.training): the lse output [bs, h, 128, S/128] is
// unpacked row t*128 + p from [.., p, t], compared with the oracle's lse by check, passes at
// several shapes, masks and a GQA group, and a copy that stores the lse without the max fails
// through the lse comparison while its output still passes.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "kernels/flash_attention/tests/flash_fwd_testing.h"
#include "kernels/layout.h"
#include "model/ir/builder.h"

namespace ncv::kernels {
namespace {

TEST(FlashFwdLse, OnlyTrainingDeclaresTheLseOutput) {
  const Program inference = flash().build(flash().resolve({}));
  EXPECT_FALSE(inference.find_tensor("lse").has_value());
  const Program training = flash().build(flash().resolve({{"training", "true"}}));
  const auto id = training.find_tensor("lse");
  ASSERT_TRUE(id.has_value());
  EXPECT_EQ(training.tensor(*id).kind, TensorKind::Output);
  EXPECT_EQ(training.tensor(*id).dtype, DType::fp32);  // acc_type
  ASSERT_TRUE(flash().layout.lse.has_value());
}

// lse[b, h, p, t] holds row t*128 + p (attention.py: l_buffer [128, n_tile_q] stored whole).
TEST(FlashFwdLse, UnpacksPartitionMajorTiles) {
  oracle::AttentionSpec spec;
  spec.heads = 2;
  spec.seqlen_q = spec.seqlen_kv = 256;
  HostTensor h(DType::fp32, {1, 2, 128, 2});
  for (int64_t hh = 0; hh < 2; ++hh) {
    for (int64_t p = 0; p < 128; ++p) {
      for (int64_t t = 0; t < 2; ++t) {
        h.set((hh * 128 + p) * 2 + t, static_cast<float>(hh * 1000 + t * 128 + p));
      }
    }
  }
  const auto got = unpack_lse(flash().layout, spec, {{"lse", h}});
  ASSERT_TRUE(got.has_value());
  for (int64_t hh = 0; hh < 2; ++hh) {
    for (int64_t i = 0; i < 256; ++i) {
      EXPECT_EQ(got->values[static_cast<size_t>(hh * 256 + i)], hh * 1000 + i);
    }
  }
  EXPECT_FALSE(unpack_lse(flash().layout, spec, {}).has_value());  // inference: not stored
  spec.seqlen_q = spec.seqlen_kv = 200;                            // not whole 128-row tiles
  EXPECT_THROW(unpack_lse(flash().layout, spec, {{"lse", h}}), std::invalid_argument);
}

// Deep tier (three shapes); the default tier's sibling is CliReport.ChecksEveryMaskAKernelOffers
// (flash_fwd in training mode, the lse compared) and
// LseWithoutTheMaxFailsThroughTheLseComparisonOnly.
TEST(DeepFlashFwdLse, TrainingPassesWithLseComparedAtSeveralShapes) {
  for (int64_t s : {512, 1024, 1536}) {
    for (const char* causal : {"false", "true"}) {
      const CheckResult r =
          flash_check({{"training", "true"}, {"use_causal_mask", causal}}, flash_shape(s, 2));
      EXPECT_TRUE(r.pass) << "seqlen=" << s << " causal=" << causal << "\n" << r.summary();
      for (const CaseResult& c : r.cases) {
        ASSERT_TRUE(c.lse.has_value()) << "seqlen=" << s;
        EXPECT_EQ(c.lse->elements, 2 * s);
        EXPECT_GT(c.lse->max_abs_err, 0.0);  // a real comparison: fp32 values vs the oracle's
      }
      EXPECT_NE(r.summary().find("lse PASS"), std::string::npos);
      EXPECT_TRUE(r.to_json()["cases"][0].contains("lse_comparison"));
    }
  }
}

void for_each_body(std::vector<Stmt>& body, const std::function<void(std::vector<Stmt>&)>& f) {
  f(body);
  for (Stmt& s : body) {
    if (auto* l = std::get_if<Loop>(&s.node)) for_each_body(l->body, f);
  }
}

// After q tile i's output store, l_buffer[:, i] -= m_buffer[:, i1]: the stored lse is
// log(sum) without the max (a kernel that stores l - m); o was already written from the right l.
Program lse_without_max(const Options& o) {
  Program p = flash().build(o);
  const TensorId out = *p.find_tensor("o");
  int edited = 0;
  for_each_body(p.body, [&](std::vector<Stmt>& body) {
    const Activation* scale = nullptr;
    for (size_t x = 0; x < body.size(); ++x) {
      auto* is = std::get_if<InstrStmt>(&body[x].node);
      if (!is) continue;
      if (auto* a = std::get_if<Activation>(&is->ins); a && p.tensor(a->dst.tensor).name == "exp") {
        scale = a;
      }
      auto* dma = std::get_if<DmaCopy>(&is->ins);
      if (!dma || dma->dst.tensor != out || scale == nullptr) continue;
      TensorTensor sub{scale->src, scale->src, std::get<Access>(*scale->bias), AluOp::subtract};
      body.insert(body.begin() + static_cast<std::ptrdiff_t>(x) + 1, Stmt{InstrStmt{0, sub}});
      ++edited;
      return;
    }
  });
  if (edited != 1) throw std::logic_error("expected one output store after the exp");
  canonicalize_ids(p);
  return p;
}

// The first two distributions: `peaked` (every row's max near 0, so l - m is within the bound
// of l: the bug is invisible there) and `overflow_logits` (maxima near 160: the lse is off by
// them). The output passes on both.
TEST(FlashFwdLse, LseWithoutTheMaxFailsThroughTheLseComparisonOnly) {
  for (const char* causal : {"false", "true"}) {
    const Options o = flash().resolve({{"training", "true"}, {"use_causal_mask", causal}});
    const Program broken = lse_without_max(o);
    const CheckResult r = flash_check(o, flash_shape(1024, 2), &broken);
    EXPECT_FALSE(r.pass) << r.summary();
    ASSERT_EQ(r.cases.size(), 2u);
    for (const CaseResult& c : r.cases) {
      ASSERT_FALSE(c.run_error.has_value()) << c.run_error->message;
      EXPECT_TRUE(c.comparison.pass) << c.distribution;
      ASSERT_TRUE(c.lse.has_value());
    }
    EXPECT_EQ(r.cases[1].distribution, "overflow_logits");
    EXPECT_FALSE(r.cases[1].lse->pass) << r.summary();
    EXPECT_GT(r.cases[1].lse->max_abs_err, 100.0) << r.summary();
  }
}

}  // namespace
}  // namespace ncv::kernels

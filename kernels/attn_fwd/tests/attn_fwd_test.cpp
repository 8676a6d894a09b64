// The FlashAttention performance tutorial's chain (attn_fwd_v1 ... v11): every version passes
// `check` in bf16 at its smallest, a 1024 and a non-power-of-two shape (the registry test covers
// fp32); the direct allocation of v9/v10 sits at the source's offsets and banks; v10 and v11 run
// the software-pipelined schedule; the chain links each version to the one before.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "check/check.h"
#include "kernels/attn_fwd/attn_fwd_common.h"
#include "kernels/registry.h"
#include "model/ir/expr.h"

namespace ncv::kernels {
namespace {

const std::vector<std::string> kChain = {
    "attn_fwd_v1", "attn_fwd_v2", "attn_fwd_v3",  "attn_fwd_v4", "attn_fwd_v5",  "attn_fwd_v6",
    "attn_fwd_v7", "attn_fwd_v8", "attn_fwd_v8a", "attn_fwd_v9", "attn_fwd_v10", "attn_fwd_v11"};

const Variant& variant(const std::string& name) {
  const Variant* v = find_variant(name);
  if (v == nullptr) throw std::logic_error("not registered: " + name);
  return *v;
}

TEST(AttnFwd, ChainLinksEachVersionToThePreviousOne) {
  for (size_t i = 0; i < kChain.size(); ++i) {
    const Variant& v = variant(kChain[i]);
    EXPECT_EQ(v.family, "attn_fwd");
    EXPECT_EQ(v.rewrites, i == 0 ? "" : kChain[i - 1]) << v.name;
    EXPECT_NE(v.models.find("attention_kernels.py"), std::string::npos) << v.models;
  }
}

// Deep tier (every version at its shapes); the default tier's sibling is
// Registry/KernelBudget.DefaultCheckPassesWithinTheBudget/attn_fwd_v*: each version's default
// check.
TEST(DeepAttnFwd, EveryVersionPassesCheckInBf16) {
  for (const std::string& name : kChain) {
    const Variant& v = variant(name);
    const Options o = v.resolve({{"dtype", "bf16"}});
    const Program p = v.build(o);
    const Param* seq = p.find_param("seqlen");
    ASSERT_NE(seq, nullptr);
    std::vector<int64_t> shapes = {seq->lo};
    for (int64_t s : {int64_t{1024}, int64_t{1536}}) {  // 1536 = 3 x 512: not a power of two
      if (s <= seq->hi) shapes.push_back(s);
    }
    for (int64_t s : shapes) {
      CheckOptions co;
      co.cases = 1;
      co.seed = static_cast<uint64_t>(s);
      const CheckResult r = check_kernel(v, p, o, {{"seqlen", s}}, co);
      EXPECT_TRUE(r.pass) << name << " seqlen=" << s << "\n" << r.summary();
    }
  }
}

// The byte offset of `tensor`'s placement at seqlen s.
int64_t offset(const Program& p, const std::string& tensor, int64_t s) {
  const auto id = p.find_tensor(tensor);
  if (!id || !p.tensor(*id).placement) throw std::logic_error("no placement for " + tensor);
  Env env;
  env.set("seqlen", s);
  return eval(p.tensor(*id).placement->byte_offset, env);
}

// The source's SBufAllocator: consecutive offsets in declaration order; the last two buffers
// (attn_out, attn_out_sbuf, 512 bytes each) end at 128b + 1292 + 3Sb + 14S + 3S/128.
TEST(AttnFwd, DirectAllocationUsesTheSourcesOffsets) {
  for (const char* name : {"attn_fwd_v9", "attn_fwd_v10"}) {
    for (const char* dtype : {"fp32", "bf16"}) {
      const Variant& v = variant(name);
      const Program p = v.build(v.resolve({{"dtype", dtype}}));
      const int64_t b = std::string(dtype) == "fp32" ? 4 : 2;
      for (int64_t s : {int64_t{512}, int64_t{4096}}) {
        EXPECT_EQ(offset(p, "identity_load", s), 0);
        EXPECT_EQ(offset(p, "q_sbuf", s), 128 * b + 256);
        EXPECT_EQ(offset(p, "qk_sbuf", s), 128 * b + 256 + 3 * s * b + 2 * s);
        EXPECT_EQ(offset(p, "exp_row", s), 128 * b + 260 + 3 * s * b + 10 * s + s / 128);
        EXPECT_EQ(offset(p, "attn_out_sbuf", s) + 512,
                  128 * b + 1292 + 3 * s * b + 14 * s + 3 * s / 128)
            << name << " " << dtype << " seqlen=" << s;
      }
    }
  }
}

// psum.mod_alloc: v_psum_t block j in bank j % 8, qk and scores_psum_t in bank j % 7 (shared),
// attn_out_psum in bank 7; the compiler's allocation (v11) has no placements.
TEST(AttnFwd, PsumBanksFollowModAlloc) {
  const Program placed = variant("attn_fwd_v10").build(variant("attn_fwd_v10").resolve({}));
  int qk = 0, pv = 0;
  for (const Tensor& t : placed.tensors) {
    if (t.memory != Memory::PSUM) continue;
    ASSERT_TRUE(t.placement) << t.name;
    const std::string text = t.placement->byte_offset.str();
    if (t.name.rfind("qk", 0) == 0 || t.name.rfind("scores_psum_t", 0) == 0) {
      ++qk;
      // block j = 0 peeled from its loop (the fused stage's first PV matmul) is bank 0
      EXPECT_TRUE(text.find("% 7") != std::string::npos || text == "0") << t.name << ": " << text;
    } else if (t.name.rfind("attn_out_psum", 0) == 0) {
      ++pv;
      EXPECT_EQ(text, "14336") << t.name;
    } else {
      EXPECT_EQ(t.name, "v_psum_t");
      EXPECT_NE(text.find("% 8"), std::string::npos) << text;
    }
  }
  EXPECT_GT(qk, 0);
  EXPECT_GT(pv, 0);
  const Program automatic = variant("attn_fwd_v11").build(variant("attn_fwd_v11").resolve({}));
  for (const Tensor& t : automatic.tensors) EXPECT_FALSE(t.placement) << t.name;
}

// The steady state of v10 and v11 interleaves q tile i + 2's QK matmuls with q tile i's PV
// matmuls inside one loop over 512-key tiles, in a sequential loop over q tiles.
TEST(AttnFwd, PipelinedVersionsInterleaveQkAndPv) {
  for (const char* name : {"attn_fwd_v10", "attn_fwd_v11"}) {
    const Program p = variant(name).build(variant(name).resolve({}));
    bool interleaved = false;
    for (const Stmt& s : p.body) {
      const auto* q = std::get_if<Loop>(&s.node);
      if (!q || q->var != "i_tile_q") continue;
      EXPECT_EQ(q->kind, LoopKind::sequential) << name;
      for (const Stmt& inner : q->body) {
        const auto* kv = std::get_if<Loop>(&inner.node);
        if (!kv || kv->var != "i_tile_kv") continue;
        bool qk_matmul = false, pv_loop = false;
        for (const Stmt& b : kv->body) {
          if (const auto* ins = std::get_if<InstrStmt>(&b.node)) {
            qk_matmul = qk_matmul || std::holds_alternative<Matmul>(ins->ins);
          }
          if (const auto* l = std::get_if<Loop>(&b.node))
            pv_loop = pv_loop || l->var == "i_tile_kv_i";
        }
        interleaved = interleaved || (qk_matmul && pv_loop);
      }
    }
    EXPECT_TRUE(interleaved) << name;
  }
}

}  // namespace
}  // namespace ncv::kernels

// A KV-cache layout's block cache (check/kv_cache_layout.h, role `table`): what the packing hands a
// kernel, read back element by element against the spec: each logical slot's key in the physical
// block the table names, the active slots' rows stale, the table a permutation that changes per
// case, and under block_mask=R the mask row fold·128·R + r·128 + p holding slot fold·128·R + p·R
// + r (nki-library's build_full_attention_mask with block_len); block layouts that do not fit are
// refused. The program is declarations only: the packing reads its tensors' names, kinds and
// shapes.
#include <gtest/gtest.h>

#include <set>

#include "check/kv_cache_layout.h"
#include "kernels/registry.h"
#include "model/nkir/parse.h"

namespace ncv::kernels {
namespace {

// One batch, one head, one active token, d = 1; 128 blocks of L = 2 slots, a table of T = 128
// blocks: S = 256 slots, one fold of 128 x 2.
const char* const kProgram =
    "kernel blocks\n"
    "input q : hbm bf16 [1, 1]\n"
    "input k_active : hbm bf16 [1, 1]\n"
    "input v_active : hbm bf16 [1, 1]\n"
    "input k_prior : hbm bf16 [128, 2, 1]\n"
    "input v_prior : hbm bf16 [128, 2, 1]\n"
    "input table : hbm uint32 [1, 128]\n"
    "input mask : hbm uint8 [256, 1]\n"
    "output out : hbm bf16 [1, 1]\n";

const char* const kLayout =
    "q=s,d k_active=s,d v_active=s,d k_prior=n,l,d v_prior=n,l,d table=b,t mask=c,s out=s,d "
    "block_mask=2";

struct Packed {
  oracle::AttentionSpec spec;
  oracle::AttentionInputs in;
  std::map<std::string, HostTensor> tensors;
};

Packed pack_case(uint64_t seed) {
  const Program p = parse_program(kProgram);
  const Variant v = kv_cache_layout_variant(*find_variant("attention_tkg"), p,
                                            parse_kv_cache_layout(kLayout), 1.0);
  Packed r;
  r.spec = v.spec({}, {});
  const CaseDraws draws = v.draw_case(r.spec, {}, seed);
  // distinct exact values: physical row i holds i + 1 (k) and -(i + 1) (v)
  r.in.q.assign(1, 0.5);
  for (int64_t i = 0; i < r.spec.kv_elements(); ++i) {
    r.in.k.push_back(double(i + 1));
    r.in.v.push_back(-double(i + 1));
  }
  v.layout.pack_extra(p, {}, r.spec, r.in, draws, r.tensors);
  return r;
}

TEST(KvCacheBlocks, EachSlotsKeyIsInTheBlockTheTableNames) {
  for (uint64_t seed : {1, 2, 3, 4}) {
    const Packed r = pack_case(seed);
    ASSERT_TRUE(r.spec.block_kv.has_value());
    EXPECT_EQ(r.spec.block_kv->block_size, 2);
    EXPECT_EQ(r.spec.block_kv->num_blocks, 128);
    const HostTensor& table = r.tensors.at("table");
    const HostTensor& k = r.tensors.at("k_prior");
    const HostTensor& v = r.tensors.at("v_prior");
    const int64_t S = 256, C = S - 1;
    for (int64_t j = 0; j < S; ++j) {
      const auto blk = int64_t(table.get(j / 2));
      EXPECT_EQ(blk, r.spec.block_kv->table[size_t(j / 2)]);
      const double want_k = j < C ? r.in.k[size_t(r.spec.kv_index(0, 0, j, 0))] : 96.0;
      const double want_v = j < C ? r.in.v[size_t(r.spec.kv_index(0, 0, j, 0))] : -224.0;
      EXPECT_EQ(k.get(blk * 2 + j % 2), want_k) << "slot " << j << " seed " << seed;
      EXPECT_EQ(v.get(blk * 2 + j % 2), want_v) << "slot " << j << " seed " << seed;
    }
  }
}

TEST(KvCacheBlocks, TheTableIsAPermutationDrawnPerCase) {
  const Packed a = pack_case(2), b = pack_case(3);
  // seed 2 puts every cached slot in view (attention_tkg's generator: P_0 = C), so every block
  // matters and gets its own physical block
  EXPECT_EQ(a.spec.mask.cache_end[0], 255);
  std::set<int64_t> blocks(a.spec.block_kv->table.begin(), a.spec.block_kv->table.end());
  EXPECT_EQ(blocks.size(), 128u);
  int64_t in_place = 0;
  for (int64_t t = 0; t < 128; ++t) in_place += a.spec.block_kv->table[size_t(t)] == t;
  EXPECT_LT(in_place, 8);
  EXPECT_NE(a.spec.block_kv->table, b.spec.block_kv->table);
}

TEST(KvCacheBlocks, TheMaskRowsAreInTheFoldOrder) {
  for (uint64_t seed : {4, 8}) {
    const Packed r = pack_case(seed);
    const HostTensor& mask = r.tensors.at("mask");
    int64_t visible = 0;
    for (int64_t row = 0; row < 256; ++row) {
      const int64_t rr = row / 128, p = row % 128, slot = p * 2 + rr;
      EXPECT_EQ(mask.get(row), r.spec.visible(0, 0, slot) ? 1.0 : 0.0) << "row " << row;
      visible += r.spec.visible(0, 0, slot);
    }
    // a position inside the cache: the slot order and the fold order differ on visible rows
    EXPECT_GT(visible, 1) << "seed " << seed;
    EXPECT_LT(visible, 256) << "seed " << seed;
  }
}

TEST(KvCacheBlocks, ABlockLayoutThatDoesNotFitIsRefused) {
  const auto refused = [](const std::string& layout, const std::string& why) {
    try {
      const Variant v =
          kv_cache_layout_variant(*find_variant("attention_tkg"), parse_program(kProgram),
                                  parse_kv_cache_layout(layout), 1.0);
      v.spec({}, {});
      ADD_FAILURE() << layout << ": accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  };
  // a table with a flat cache, and blocks without a table
  refused("q=s,d k_active=s,d v_active=s,d k_prior=c,1,d v_prior=c,1,d table=b,t mask=c,s out=s,d",
          "with a table the cache lists n");
  refused("q=s,d k_active=s,d v_active=s,d k_prior=n,l,d v_prior=n,l,d mask=c,s out=s,d",
          "go with a table role");
  // the block mask order needs whole folds of 128 x R slots: 256 slots are one fold of R = 2
  refused(
      "q=s,d k_active=s,d v_active=s,d k_prior=n,l,d v_prior=n,l,d table=b,t mask=c,s out=s,d "
      "block_mask=4",
      "no whole folds");
  // and a whole mask (c): an active mask has no slot order
  refused(
      "q=s,d k_active=s,d v_active=s,d k_prior=n,l,d v_prior=n,l,d table=b,t mask=a,s "
      "positions=b,s slots=256 out=s,d block_mask=2",
      "goes with a table and a mask with axis c");
}

}  // namespace
}  // namespace ncv::kernels

#include "properties/spec_gen.h"

#include <algorithm>

#include "oracle/bias_values.h"
#include "properties/shrinking_choice.h"

namespace ncv::props {

rc::Gen<oracle::Mask> gen_mask(const oracle::AttentionSpec& shape) {
  return rc::gen::exec([shape] {
    oracle::Mask m;
    m.kind = *shrinking_choice<oracle::MaskKind>(
        {oracle::MaskKind::none, oracle::MaskKind::causal, oracle::MaskKind::sliding_window,
         oracle::MaskKind::explicit_mask, oracle::MaskKind::position_ids,
         oracle::MaskKind::kv_cache});
    if (m.kind == oracle::MaskKind::kv_cache && shape.seqlen_q > shape.seqlen_kv) {
      m.kind = oracle::MaskKind::causal;  // needs the active queries among the keys
    }
    switch (m.kind) {
      case oracle::MaskKind::none:
      case oracle::MaskKind::causal:
        break;
      case oracle::MaskKind::sliding_window:
        m.window = *rc::gen::inRange<int64_t>(1, shape.seqlen_kv + 1);
        break;
      case oracle::MaskKind::explicit_mask: {
        m.allowed = *rc::gen::container<std::vector<uint8_t>>(
            static_cast<size_t>(shape.seqlen_q * shape.seqlen_kv),
            rc::gen::map(rc::gen::inRange(0, 3), [](int x) { return uint8_t(x != 0); }));
        if (*rc::gen::inRange(0, 2) == 1) {  // a fully masked row: its result is defined as 0
          const int64_t dead = *rc::gen::inRange<int64_t>(0, shape.seqlen_q);
          std::fill_n(m.allowed.begin() + dead * shape.seqlen_kv, shape.seqlen_kv, uint8_t{0});
        }
        break;
      }
      case oracle::MaskKind::position_ids:
        // -1 sees nothing (a fully masked row), seqlen_kv sees everything.
        m.pos = *rc::gen::container<std::vector<int64_t>>(
            static_cast<size_t>(shape.batch * shape.seqlen_q),
            rc::gen::inRange<int64_t>(-1, shape.seqlen_kv + 1));
        break;
      case oracle::MaskKind::kv_cache: {
        // Any begin and end in [0, C]: empty ranges, whole caches and wrapped windows.
        const auto n = static_cast<size_t>(shape.batch * shape.seqlen_q);
        const auto edge = rc::gen::inRange<int64_t>(0, shape.seqlen_kv - shape.seqlen_q + 1);
        m.cache_begin = *rc::gen::container<std::vector<int64_t>>(n, edge);
        m.cache_end = *rc::gen::container<std::vector<int64_t>>(n, edge);
        break;
      }
    }
    return m;
  });
}

rc::Gen<oracle::BlockKv> gen_block_kv(const oracle::AttentionSpec& shape) {
  return rc::gen::exec([shape] {
    std::vector<int64_t> sizes;
    for (int64_t bs = shape.seqlen_kv; bs >= 1; --bs) {
      if (shape.seqlen_kv % bs == 0) sizes.push_back(bs);  // one block first: the simplest
    }
    oracle::BlockKv bk;
    bk.block_size = *shrinking_choice(sizes);
    const int64_t logical = shape.batch * (shape.seqlen_kv / bk.block_size);
    bk.num_blocks = logical + *rc::gen::inRange<int64_t>(0, 3);
    // A random injective table: a shuffle of the physical blocks (Fisher-Yates with drawn
    // indices, each shrinking to "no swap").
    std::vector<int64_t> phys(static_cast<size_t>(bk.num_blocks));
    for (size_t i = 0; i < phys.size(); ++i) phys[i] = static_cast<int64_t>(i);
    for (size_t i = phys.size(); i > 1; --i) {
      const size_t j = i - 1 - *rc::gen::inRange<size_t>(0, i);
      std::swap(phys[i - 1], phys[j]);
    }
    bk.table.assign(phys.begin(), phys.begin() + logical);
    return bk;
  });
}

rc::Gen<oracle::AttentionSpec> gen_attention_spec() {
  return rc::gen::exec([] {
    oracle::AttentionSpec s;
    s.batch = *rc::gen::inRange<int64_t>(1, 3);
    s.kv_heads = *rc::gen::inRange<int64_t>(1, 3);
    s.heads = s.kv_heads * *rc::gen::inRange<int64_t>(1, 4);  // GQA group of 1-3
    s.seqlen_q = *rc::gen::inRange<int64_t>(1, 41);
    s.seqlen_kv = *rc::gen::inRange<int64_t>(1, 41);
    s.d_head = *rc::gen::inRange<int64_t>(1, 17);
    s.scale = *shrinking_choice<double>({0.125, 0.25, 1.0, 0.5});
    s.input_dtype = *shrinking_choice<DType>({DType::fp32, DType::bf16, DType::fp16});
    s.mask = *gen_mask(s);
    if (*rc::gen::inRange(0, 3) == 2) s.block_kv = *gen_block_kv(s);
    // One spec in three carries a logits bias (flash_fwd's logit_bias), drawn as check draws it.
    if (*rc::gen::inRange(0, 3) == 2) {
      s.bias = oracle::generate_bias(s, *rc::gen::inRange<uint64_t>(0, 1u << 20));
    }
    s.validate();
    return s;
  });
}

}  // namespace ncv::props

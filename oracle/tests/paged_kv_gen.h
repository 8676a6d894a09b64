// A random paged-KV layout for a spec (shared by the oracle's test generators): a block size
// dividing seqlen_kv, a physical cache with up to two spare blocks, and a shuffled block table.
// Set it before sizing k and v (spec.kv_elements() depends on it).
#pragma once

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

#include "oracle/attention_spec.h"

namespace ncv::oracle {

inline BlockKv random_block_kv(const AttentionSpec& s, std::mt19937_64& rng) {
  std::vector<int64_t> divisors;
  for (int64_t bs = 1; bs <= s.seqlen_kv; ++bs) {
    if (s.seqlen_kv % bs == 0) divisors.push_back(bs);
  }
  BlockKv bk;
  bk.block_size = divisors[rng() % divisors.size()];
  const int64_t per_batch = s.seqlen_kv / bk.block_size;
  bk.num_blocks = s.batch * per_batch + static_cast<int64_t>(rng() % 3);
  std::vector<int64_t> perm(static_cast<size_t>(bk.num_blocks));
  std::iota(perm.begin(), perm.end(), int64_t{0});
  std::shuffle(perm.begin(), perm.end(), rng);
  bk.table.assign(perm.begin(), perm.begin() + s.batch * per_batch);
  return bk;
}

}  // namespace ncv::oracle

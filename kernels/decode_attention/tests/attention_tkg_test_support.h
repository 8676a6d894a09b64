// What the attention_tkg tests share: the registered variant and its shape in param order.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>

#include "kernels/registry.h"

namespace ncv::kernels::tkg_test {

inline const Variant& tkg() {
  const Variant* v = find_variant("attention_tkg");
  EXPECT_NE(v, nullptr);
  return *v;
}

// bs, q_head, s_active, seqlen (= curr_sprior), d_head.
inline ParamValues shape(int64_t bs, int64_t h, int64_t sa, int64_t s, int64_t d) {
  return {{"bs", bs}, {"q_head", h}, {"s_active", sa}, {"seqlen", s}, {"d_head", d}};
}

}  // namespace ncv::kernels::tkg_test

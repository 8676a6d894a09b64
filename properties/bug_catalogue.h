// The catalogue of deliberately broken kernels (properties/README.md "Power"): each entry edits the
// Program of a real registered kernel (not toy code) to plant one bug kernel authors and rewrite
// searches actually make. The property suite must catch every entry at its default budget
// (properties/tests/bug_catalogue_prop.cpp); `ncverify bugs` prints which of them the property
// suite and the allclose baseline catch.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "kernels/variant.h"
#include "model/ir/program.h"

namespace ncv::props {

struct BugEntry {
  std::string name;  // snake_case id, e.g. "causal_mask_off_by_one"
  std::string what;  // one sentence: what the edit does to which instruction or loop
  std::string base;  // the registered variant whose Program is edited and whose layout, spec,
                     // contract and domain the broken kernel keeps
  // Options fixed for the broken kernel (e.g. use_causal_mask=true); the rest are drawn like the
  // base variant's.
  kernels::Options options;
  // The edit: takes base.build(options) and returns the broken Program. Throws std::logic_error
  // when the pattern it edits is not found (the base kernel changed).
  std::function<Program(const Program&)> edit;
};

const std::vector<BugEntry>& bug_catalogue();
const BugEntry* find_bug(const std::string& name);

}  // namespace ncv::props

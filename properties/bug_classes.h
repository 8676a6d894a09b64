// The kind of mistake each bug-catalogue entry plants. A test that runs the whole catalogue
// through a costly gate lives in the deep test tier; its default-tier sibling runs one entry per
// class (README.md "Tests"), so every kind of bug still meets that gate on every change.
#pragma once

#include <string_view>
#include <vector>

#include "properties/bug_catalogue.h"

namespace ncv::props {

enum class BugClass {
  mask,          // a causal / window / cache mask that keeps or drops one key too many
  tiling,        // a loop over tiles or partitions that stops early or stores to the wrong tile
  indexing,      // a tensor read or written at the wrong index, head, batch or layout
  softmax,       // the softmax's arithmetic: scale, max, sum, reciprocal, lse, sink, bias
  online,        // an online softmax's rescale of earlier tiles or sections
  accumulation,  // PSUM accumulation flags and accumulator precision
  ordering,      // program order and buffers: dependencies, stale reads, shared slots, overlaps
};

std::string_view bug_class_name(BugClass c);
const std::vector<BugClass>& all_bug_classes();

// The class of a catalogue entry. Throws std::logic_error for an entry not in the table
// (bug_classes.cpp), so a new entry cannot go unclassified (properties/tests/bug_classes_test).
BugClass bug_class(const BugEntry& entry);

// One entry per class (in all_bug_classes() order), on a base kernel that is cheap to check and
// not heavy (kernels::heavy_check), so the default tier stays fast; bug_classes_test checks it.
std::vector<const BugEntry*> one_entry_per_class();

}  // namespace ncv::props

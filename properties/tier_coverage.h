// The default test tier's coverage guard (README.md "Tests"): every registered kernel and every
// bug-catalogue entry must be judged (a check case or an equivalence, kernels/exercised.h) by
// some default-tier test, so that moving a test to the deep tier never takes a kernel or an entry
// out of the tests run on every change.
#pragma once

#include <istream>
#include <set>
#include <string>
#include <vector>

namespace ncv::props {

struct CoverageGap {
  std::vector<std::string> kernels;  // registered kernels no line of the log names
  std::vector<std::string> entries;  // catalogue entries no line of the log names
  bool empty() const { return kernels.empty() && entries.empty(); }
};

// The names in a log written by note_exercised (one per line).
std::set<std::string> read_exercised(std::istream& log);

// What `exercised` lacks of the registry and the catalogue.
CoverageGap coverage_gap(const std::set<std::string>& exercised);

}  // namespace ncv::props

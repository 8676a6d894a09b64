#include "properties/tier_coverage.h"

#include "kernels/registry.h"
#include "properties/bug_catalogue.h"

namespace ncv::props {

std::set<std::string> read_exercised(std::istream& log) {
  std::set<std::string> names;
  for (std::string line; std::getline(log, line);) {
    if (!line.empty()) names.insert(line);
  }
  return names;
}

CoverageGap coverage_gap(const std::set<std::string>& exercised) {
  CoverageGap gap;
  for (const kernels::Variant& v : kernels::registry()) {
    if (exercised.count(v.name) == 0) gap.kernels.push_back(v.name);
  }
  for (const BugEntry& e : bug_catalogue()) {
    if (exercised.count(e.name) == 0) gap.entries.push_back(e.name);
  }
  return gap;
}

}  // namespace ncv::props

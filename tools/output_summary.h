// A short fingerprint of one kernel output, printed by `ncverify run` (and later by every
// command that runs kernels): enough to tell two runs apart and to spot NaNs at a glance.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model/interp/host_tensor.h"

namespace ncv::cli {

struct OutputSummary {
  std::string name;
  std::vector<int64_t> shape;
  DType dtype = DType::fp32;
  uint64_t checksum = 0;  // FNV-1a 64 of the output's bytes
  // Over the non-NaN elements read as fp32; NaN when every element is NaN (or there are none).
  float min = 0.0f, max = 0.0f;
  int64_t nan_count = 0;
};

OutputSummary summarize_output(const std::string& name, const HostTensor& t);

// "[256, 512]"
std::string format_shape(const std::vector<int64_t>& shape);
// One line: "C: shape=[256, 512] dtype=fp32 checksum=... min=... max=... nan=0"
std::string format_summary(const OutputSummary& s);
// Non-finite min/max become the strings "nan", "inf", "-inf" (JSON has no such numbers).
nlohmann::json summary_json(const OutputSummary& s);

}  // namespace ncv::cli

// The "what fills memory at the peak" table `frontier` and `bench` print (model/ir/memory_peak.h),
// as text and JSON, so both commands show it the same way.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "model/ir/memory_peak.h"

namespace ncv::cli {

// One block per memory: "<indent>SBUF peak P of C bytes per partition (x%, at loop i > j)" and
// a line per live buffer, largest first.
void print_memory_peaks(std::ostream& out, const MemoryPeaks& m, const std::string& indent);

// {"sbuf": {peak_bytes, capacity, fits, at_loops, live: [{name,
// bytes_per_partition, bytes_per_copy, copies, loop}], explicitly_placed: [same]}, "psum": {...}}
nlohmann::json memory_peaks_json(const MemoryPeaks& m);

}  // namespace ncv::cli

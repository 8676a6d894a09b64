// Writing what a command produces without losing anything the user has: an existing file is
// never replaced unless --force is given, a write goes to a temporary file in the same folder
// that is renamed over the target only when complete, and every failure (an unwritable folder,
// a full disk, a closed standard output) is a UsageError (exit 2) naming the path.
#pragma once

#include <string>

namespace ncv::cli {

// Refuses (UsageError) when `path` exists and `force` is false; `flag` names the option that
// gave the path ("--trace"). Call it before the work, so a refusal costs nothing.
void refuse_existing_output(const std::string& path, bool force, const std::string& flag);

// Writes `content` to `path` (checked as above, again at the end: another process may have
// created the file meanwhile).
void write_output_file(const std::string& path, const std::string& content, bool force,
                       const std::string& flag);

// Flushes standard output; throws UsageError when anything written to it was lost (closed,
// full disk, broken pipe).
void finish_standard_output();

}  // namespace ncv::cli

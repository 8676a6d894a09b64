#include "kernels/exercised.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <mutex>
#include <set>
#include <string>

namespace ncv::kernels {

void note_exercised(std::string_view name) {
  static const char* const path = std::getenv("NCV_EXERCISED_LOG");
  if (path == nullptr || *path == '\0') return;
  static std::mutex mutex;
  static std::set<std::string, std::less<>> written;
  const std::lock_guard<std::mutex> lock(mutex);
  if (written.count(name) != 0) return;
  written.emplace(name);
  // One write of one short line with O_APPEND: lines from the tests' concurrent processes do not
  // interleave. A failure is not reported here: the guard then finds the name missing.
  const std::string line = std::string(name) + "\n";
  const int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return;
  [[maybe_unused]] const ssize_t n = write(fd, line.data(), line.size());
  close(fd);
}

}  // namespace ncv::kernels

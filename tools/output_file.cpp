#include "tools/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "tools/cli_common.h"

namespace ncv::cli {

namespace {

bool exists(const std::string& path) {
  std::error_code ec;
  return std::filesystem::symlink_status(path, ec).type() != std::filesystem::file_type::not_found;
}

std::string system_error(const std::string& what, const std::string& path) {
  return what + " '" + path + "': " + std::strerror(errno);
}

// All of `content` to fd; false on any error (errno set).
bool write_all(int fd, const std::string& content) {
  size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

void refuse_existing_output(const std::string& path, bool force, const std::string& flag) {
  if (path.empty()) throw UsageError(flag + ": an empty path");
  if (!force && exists(path)) {
    throw UsageError(flag + ": '" + path + "' exists; ncverify never replaces a file unless " +
                     "--force is given");
  }
  // Even with --force only a regular file is replaced: renaming over a device or a directory
  // would destroy it.
  std::error_code ec;
  const auto type = std::filesystem::symlink_status(path, ec).type();
  if (type != std::filesystem::file_type::not_found &&
      type != std::filesystem::file_type::regular) {
    throw UsageError(flag + ": '" + path + "' is not a regular file; ncverify writes new or " +
                     "regular files only");
  }
}

void write_output_file(const std::string& path, const std::string& content, bool force,
                       const std::string& flag) {
  refuse_existing_output(path, force, flag);
  std::string tmp = path + ".ncverify-XXXXXX";
  const int fd = ::mkstemp(tmp.data());
  if (fd < 0) throw UsageError(flag + ": " + system_error("cannot write next to", path));
  const bool written = write_all(fd, content) && ::fsync(fd) == 0;
  int failure = errno;  // the first failure's reason: the write's, else the close's
  const bool closed = ::close(fd) == 0;
  if (written) failure = errno;
  if (!written || !closed) {
    ::unlink(tmp.c_str());
    errno = failure;
    throw UsageError(flag + ": " + system_error("cannot write", path));
  }
  // mkstemp creates 0600; give the file the mode a plain open() would (0666 minus the umask).
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::chmod(tmp.c_str(), 0666 & ~mask);
  // Without --force, link() refuses an existing target atomically (rename would replace it);
  // a file system without hard links falls back to rename after the check above.
  if (!force) {
    if (::link(tmp.c_str(), path.c_str()) == 0) {
      ::unlink(tmp.c_str());
      return;
    }
    const int err = errno;
    if (err != EPERM && err != ENOTSUP && err != EXDEV) {
      ::unlink(tmp.c_str());
      errno = err;
      if (err == EEXIST) {
        throw UsageError(flag + ": '" + path + "' appeared while writing; it was left as it is");
      }
      throw UsageError(flag + ": " + system_error("cannot write", path));
    }
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    errno = err;
    throw UsageError(flag + ": " + system_error("cannot write", path));
  }
}

void finish_standard_output() {
  std::cout.flush();
  if (!std::cout || std::fflush(stdout) != 0 || std::ferror(stdout)) {
    throw UsageError(
        "cannot write to standard output (closed, full or a broken pipe): "
        "the output is incomplete");
  }
}

}  // namespace ncv::cli

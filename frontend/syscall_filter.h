// The tracer's system-call filter (seccomp-BPF): what the Python process that runs a user's kernel
// may ask of the kernel of the OS. It may read files, map memory, write to the descriptors it
// was given and start threads; it may not open a file for writing or change the file system,
// start processes (fork, a second execve), open sockets, trace or signal other processes, or
// reach the kernel interfaces that bypass such a filter (io_uring, bpf, user namespaces).
// A forbidden call kills the process (SIGSYS), which the caller reports as tampering.
#pragma once

#include <linux/filter.h>

#include <cstddef>
#include <vector>

namespace ncv::frontend {

struct SyscallFilter {
  std::vector<sock_filter> code;  // empty on an architecture the filter does not know
  std::vector<size_t> pid_slots;  // instructions comparing with the process's own pid
};

// The filter for a process that will call execve(exec_path, ...) exactly once, with this very
// pointer as its first argument: that one execve is allowed, any other is forbidden (the new
// image cannot name the same address without code of its own). Built before fork (it
// allocates); the child then sets its pid (signals only to itself) and installs it.
SyscallFilter tracer_syscall_filter(const void* exec_path);

// Both async-signal-safe, for the child between fork and execve. install_syscall_filter sets
// PR_SET_NO_NEW_PRIVS and the filter; it returns 0 or an errno value.
void set_own_pid(SyscallFilter& filter, long pid);
int install_syscall_filter(const SyscallFilter& filter);

// Whether this machine's kernel takes a seccomp filter (probed once, in a child process). Where
// it does not (a kernel built without seccomp: ENOSYS or EINVAL), the tracer runs with its
// rlimits and its own checks only.
bool syscall_filter_available();

}  // namespace ncv::frontend

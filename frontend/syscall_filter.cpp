#include "frontend/syscall_filter.h"

#include <fcntl.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>

namespace ncv::frontend {

namespace {

#if defined(__x86_64__)
constexpr uint32_t kArch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
constexpr uint32_t kArch = AUDIT_ARCH_AARCH64;
#else
constexpr uint32_t kArch = 0;
#endif

constexpr uint32_t kKill = SECCOMP_RET_KILL_PROCESS;
constexpr uint32_t kAllow = SECCOMP_RET_ALLOW;
// clone3 passes its flags in memory the filter cannot read: answering ENOSYS makes glibc fall
// back to clone, whose flags it can (threads are allowed, new processes are not).
constexpr uint32_t kNoSys = SECCOMP_RET_ERRNO | ENOSYS;
constexpr uint32_t kWriteFlags = O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | O_APPEND;

sock_filter op(uint16_t code, uint32_t k) {
  return sock_filter{code, 0, 0, k};
}
sock_filter jump(uint16_t code, uint32_t k, uint8_t if_true, uint8_t if_false) {
  return sock_filter{code, if_true, if_false, k};
}
sock_filter ret(uint32_t verdict) {
  return op(BPF_RET | BPF_K, verdict);
}

uint32_t arg_low(int k) {
  return offsetof(seccomp_data, args) + 8 * k;
}
uint32_t arg_high(int k) {
  return arg_low(k) + 4;
}

// Calls with no use in tracing that change the file system, start or reach other processes,
// open the network or reach kernel interfaces that would bypass this filter.
constexpr long kForbidden[] = {
#ifdef SYS_fork
    SYS_fork,
#endif
#ifdef SYS_vfork
    SYS_vfork,
#endif
    SYS_execveat,
    SYS_ptrace,
    SYS_process_vm_readv,
    SYS_process_vm_writev,
    SYS_connect,
    SYS_bind,
    SYS_listen,
    SYS_accept,
    SYS_accept4,
#ifdef SYS_creat
    SYS_creat,
#endif
#ifdef SYS_rename
    SYS_rename,
#endif
    SYS_renameat,
    SYS_renameat2,
#ifdef SYS_unlink
    SYS_unlink,
#endif
    SYS_unlinkat,
#ifdef SYS_mkdir
    SYS_mkdir,
#endif
    SYS_mkdirat,
#ifdef SYS_rmdir
    SYS_rmdir,
#endif
#ifdef SYS_link
    SYS_link,
#endif
    SYS_linkat,
#ifdef SYS_symlink
    SYS_symlink,
#endif
    SYS_symlinkat,
#ifdef SYS_chmod
    SYS_chmod,
#endif
    SYS_fchmod,
    SYS_fchmodat,
#ifdef SYS_chown
    SYS_chown,
#endif
#ifdef SYS_lchown
    SYS_lchown,
#endif
    SYS_fchown,
    SYS_fchownat,
    SYS_truncate,
    SYS_ftruncate,
#ifdef SYS_mknod
    SYS_mknod,
#endif
    SYS_mknodat,
#ifdef SYS_utime
    SYS_utime,
#endif
#ifdef SYS_utimes
    SYS_utimes,
#endif
#ifdef SYS_futimesat
    SYS_futimesat,
#endif
    SYS_utimensat,
    SYS_setxattr,
    SYS_lsetxattr,
    SYS_fsetxattr,
    SYS_removexattr,
    SYS_lremovexattr,
    SYS_fremovexattr,
    SYS_mount,
    SYS_umount2,
    SYS_pivot_root,
    SYS_chroot,
    SYS_setns,
    SYS_unshare,
    SYS_bpf,
    SYS_perf_event_open,
    SYS_userfaultfd,
    SYS_io_uring_setup,
    SYS_io_uring_enter,
    SYS_io_uring_register,
    SYS_memfd_create,
    SYS_pidfd_open,
    SYS_pidfd_send_signal,
    SYS_pidfd_getfd,
    SYS_kexec_load,
    SYS_init_module,
    SYS_finit_module,
    SYS_delete_module,
    SYS_reboot,
    SYS_swapon,
    SYS_swapoff,
    SYS_sethostname,
    SYS_setdomainname,
    SYS_acct,
    SYS_keyctl,
    SYS_add_key,
    SYS_request_key,
    SYS_personality,
    SYS_name_to_handle_at,
    SYS_open_by_handle_at,
    SYS_fanotify_init,
    SYS_tkill,
    SYS_seccomp,
};

}  // namespace

SyscallFilter tracer_syscall_filter(const void* exec_path) {
  SyscallFilter f;
  if (kArch == 0) return f;
  auto& c = f.code;
  auto load_nr = [&] { c.push_back(op(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr))); };
  // Each test below is "if nr == X: <verdict block>", emitted as jeq X, 0, skip.
  auto on_nr = [&](long nr, const std::vector<sock_filter>& block) {
    c.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, static_cast<uint32_t>(nr), 0,
                     static_cast<uint8_t>(block.size())));
    c.insert(c.end(), block.begin(), block.end());
  };

  c.push_back(op(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)));
  c.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, kArch, 1, 0));
  c.push_back(ret(kKill));
  load_nr();
#if defined(__x86_64__)
  // The x32 ABI numbers its calls above 0x40000000 and would bypass the checks below.
  c.push_back(jump(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, 0, 1));
  c.push_back(ret(kKill));
#endif
  for (long nr : kForbidden) on_nr(nr, {ret(kKill)});
  on_nr(SYS_clone3, {ret(kNoSys)});
  // No sockets: refused rather than fatal, since the C library itself may try one (a user-name
  // lookup asks nscd over a Unix socket) and falls back when refused.
  on_nr(SYS_socket, {ret(SECCOMP_RET_ERRNO | EACCES)});
  on_nr(SYS_socketpair, {ret(SECCOMP_RET_ERRNO | EACCES)});
  // openat2 carries its flags in memory too; glibc and Python use openat.
  on_nr(SYS_openat2, {ret(kNoSys)});
  // clone: threads (CLONE_THREAD) only.
  on_nr(SYS_clone, {op(BPF_LD | BPF_W | BPF_ABS, arg_low(0)),
                    jump(BPF_JMP | BPF_JSET | BPF_K, CLONE_THREAD, 0, 1), ret(kAllow), ret(kKill)});
  // execve: only the one call with this very path pointer.
  const uint64_t p = reinterpret_cast<uintptr_t>(exec_path);
  on_nr(SYS_execve, {op(BPF_LD | BPF_W | BPF_ABS, arg_low(0)),
                     jump(BPF_JMP | BPF_JEQ | BPF_K, static_cast<uint32_t>(p), 0, 3),
                     op(BPF_LD | BPF_W | BPF_ABS, arg_high(0)),
                     jump(BPF_JMP | BPF_JEQ | BPF_K, static_cast<uint32_t>(p >> 32), 0, 1),
                     ret(kAllow), ret(kKill)});
  // open/openat: reading only.
#ifdef SYS_open
  on_nr(SYS_open, {op(BPF_LD | BPF_W | BPF_ABS, arg_low(1)),
                   jump(BPF_JMP | BPF_JSET | BPF_K, kWriteFlags, 0, 1), ret(kKill), ret(kAllow)});
#endif
  on_nr(SYS_openat, {op(BPF_LD | BPF_W | BPF_ABS, arg_low(2)),
                     jump(BPF_JMP | BPF_JSET | BPF_K, kWriteFlags, 0, 1), ret(kKill), ret(kAllow)});
  // Signals: to itself only (glibc's raise and abort use tgkill on the own pid).
  for (long nr : {static_cast<long>(SYS_kill), static_cast<long>(SYS_tgkill)}) {
    f.pid_slots.push_back(c.size() + 2);
    on_nr(nr, {op(BPF_LD | BPF_W | BPF_ABS, arg_low(0)), jump(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 1),
               ret(kAllow), ret(kKill)});
  }
  c.push_back(ret(kAllow));
  return f;
}

void set_own_pid(SyscallFilter& filter, long pid) {
  for (size_t slot : filter.pid_slots) filter.code[slot].k = static_cast<uint32_t>(pid);
}

int install_syscall_filter(const SyscallFilter& filter) {
  if (filter.code.empty()) return ENOSYS;
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return errno;
  sock_fprog prog{static_cast<unsigned short>(filter.code.size()),
                  const_cast<sock_filter*>(filter.code.data())};
  if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) != 0) return errno;
  return 0;
}

bool syscall_filter_available() {
  static const bool available = [] {
    const pid_t pid = fork();
    if (pid < 0) return false;
    if (pid == 0) {
      const sock_filter allow = ret(kAllow);
      sock_fprog prog{1, const_cast<sock_filter*>(&allow)};
      const bool ok = prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
                      prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) == 0;
      _exit(ok ? 0 : 1);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }();
  return available;
}

}  // namespace ncv::frontend

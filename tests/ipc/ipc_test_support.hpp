// Helpers of the ipc tests: forked children, CPU restriction, message counts per build.
#pragma once

#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <string>

#include "../support/child_processes.hpp"
#include "macrostep/ipc/shared_segment.hpp"

namespace macrostep::ipc::testing {

// Which sanitizer this program is built with: GCC defines __SANITIZE_*__, clang answers
// __has_feature.
#if defined(__has_feature)
#define MACROSTEP_IPC_TEST_HAS_FEATURE(x) __has_feature(x)
#else
#define MACROSTEP_IPC_TEST_HAS_FEATURE(x) 0
#endif
#if defined(__SANITIZE_THREAD__) || MACROSTEP_IPC_TEST_HAS_FEATURE(thread_sanitizer)
inline constexpr bool kThreadSanitizer = true;
#else
inline constexpr bool kThreadSanitizer = false;
#endif
#if defined(__SANITIZE_ADDRESS__) || MACROSTEP_IPC_TEST_HAS_FEATURE(address_sanitizer)
inline constexpr bool kAddressSanitizer = true;
#else
inline constexpr bool kAddressSanitizer = false;
#endif

// `release` messages normally, `tsan` under ThreadSanitizer (5-15x slower); the environment
// variable MACROSTEP_IPC_STRESS_MESSAGES overrides both.
inline std::uint64_t message_count(std::uint64_t release, std::uint64_t tsan) {
  if (const char* env = std::getenv("MACROSTEP_IPC_STRESS_MESSAGES")) {
    const auto n = std::strtoull(env, nullptr, 10);
    if (n > 0) return n;
  }
  return kThreadSanitizer ? tsan : release;
}

// Exit codes of a child: its body's return value, or one of these.
inline constexpr int kChildSegmentError = 90;  // + static_cast<int>(SegmentErrc)
inline constexpr int kChildException = 120;
inline constexpr int kChildNotOurs = -1000;  // wait_child: no such child (fork failed)

// Runs body() in a forked child and returns its pid. The child never returns into GoogleTest:
// it reports through its exit status (its body's destructors have run by then).
inline pid_t fork_child(const std::function<int()>& body) {
  std::fflush(nullptr);
  const pid_t pid = macrostep::testing::fork_tied();
  if (pid != 0) return pid;
  int rc = kChildException;
  try {
    rc = body();
  } catch (const SegmentError& e) {
    std::fprintf(stderr, "child %d: %s\n", static_cast<int>(getpid()), e.what());
    rc = kChildSegmentError + static_cast<int>(e.code());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "child %d: %s\n", static_cast<int>(getpid()), e.what());
  }
  std::fflush(nullptr);
  _exit(rc);
}

// The child's exit status, or -signal if it was killed.
inline int wait_child(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return kChildNotOurs;
  }
  if (WIFSIGNALED(status)) return -WTERMSIG(status);
  return WEXITSTATUS(status);
}

inline bool shm_name_exists(const std::string& name) {
  return access(("/dev/shm" + name).c_str(), F_OK) == 0;
}

// Restricts the calling thread (and children forked or threads started later) to the first
// `n` CPUs it may run on now; restores the previous mask on destruction.
class CpuRestriction {
 public:
  explicit CpuRestriction(int n) {
    sched_getaffinity(0, sizeof(previous_), &previous_);
    cpu_set_t set;
    CPU_ZERO(&set);
    int taken = 0;
    for (int cpu = 0; cpu < CPU_SETSIZE && taken < n; ++cpu) {
      if (CPU_ISSET(cpu, &previous_)) {
        CPU_SET(cpu, &set);
        ++taken;
      }
    }
    cpus_ = taken;
    sched_setaffinity(0, sizeof(set), &set);
  }
  ~CpuRestriction() { sched_setaffinity(0, sizeof(previous_), &previous_); }
  CpuRestriction(const CpuRestriction&) = delete;
  CpuRestriction& operator=(const CpuRestriction&) = delete;
  int cpus() const { return cpus_; }

 private:
  cpu_set_t previous_;
  int cpus_ = 0;
};

}  // namespace macrostep::ipc::testing

#include "macrostep/ipc/wait.hpp"

#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <ctime>

namespace macrostep::ipc {

std::size_t available_cpus() noexcept {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return 1;
  const int n = CPU_COUNT(&set);
  return n > 0 ? static_cast<std::size_t>(n) : 1;
}

WaitPolicy WaitPolicy::adaptive(std::size_t processes, std::size_t cpus,
                                std::uint32_t spins) noexcept {
  return processes > cpus ? sleeping() : spinning(spins);
}

namespace {

// The futex word is a std::atomic<uint32_t>, which is a plain uint32_t in memory (asserted in
// the header); the kernel only compares and queues on it.
std::uint32_t* futex_address(std::atomic<std::uint32_t>& word) noexcept {
  return reinterpret_cast<std::uint32_t*>(&word);
}

}  // namespace

void WaitWord::wake_sleepers() noexcept {
  // B of the protocol: a waiter that read seq before this bump cannot stay asleep (FUTEX_WAIT
  // compares the word); one that reads the bumped value also sees the notifier's store.
  seq_.fetch_add(1, std::memory_order_release);
  wake_calls_.fetch_add(1, std::memory_order_relaxed);
  // Shared futex (no FUTEX_PRIVATE_FLAG): the waiter may be another process.
  syscall(SYS_futex, futex_address(seq_), FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

bool WaitWord::sleep(std::uint32_t expected, const Deadline& deadline) noexcept {
  sleep_calls_.fetch_add(1, std::memory_order_relaxed);
  timespec abs{};
  const timespec* timeout = nullptr;
  if (deadline) {
    const auto ns =
        std::chrono::duration_cast<std::chrono::nanoseconds>(deadline->time_since_epoch()).count();
    if (ns <= 0) return false;
    abs.tv_sec = static_cast<time_t>(ns / 1'000'000'000);
    abs.tv_nsec = static_cast<long>(ns % 1'000'000'000);
    timeout = &abs;
  }
  // FUTEX_WAIT_BITSET takes an absolute CLOCK_MONOTONIC deadline, so repeated sleeps after
  // spurious wake-ups do not stretch the timeout.
  const long rc = syscall(SYS_futex, futex_address(seq_), FUTEX_WAIT_BITSET, expected, timeout,
                          nullptr, FUTEX_BITSET_MATCH_ANY);
  if (rc == 0) return true;
  if (errno == ETIMEDOUT) return false;
  // EAGAIN (seq changed before we slept) and EINTR (signal): the caller re-checks; a deadline
  // that has passed meanwhile is reported on the next sleep.
  if (deadline && WaitClock::now() >= *deadline) return false;
  return true;
}

bool WaitWord::yield() noexcept {
  const WaitClock::time_point before = WaitClock::now();
  sched_yield();
  return WaitClock::now() - before > WaitPolicy::kYieldGaveWay;
}

}  // namespace macrostep::ipc

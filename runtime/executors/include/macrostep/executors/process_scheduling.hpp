// How the operating system has scheduled a worker process, read from /proc: what tells a hung
// worker from one that the machine gives no CPU (an oversubscribed run: more busy processes than
// cores). The progress check (ProcessExecutor, hang_timeout) kills a worker whose model
// evaluations stand still; before it does, it asks whether the worker waited for a CPU instead.
//
// A worker is taken to wait for the machine when one of its threads is runnable ('R') or in an
// uninterruptible wait ('D': paging, disk) and the process got less than half of the window's
// wall time as CPU time. A stopped worker ('T'), one whose threads all sleep (a deadlock, a
// blocked read) and one that spins without evaluating (it gets its CPU) hang.
//
// Thread-safety: the functions are pure or read /proc only; any thread may call them.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>

namespace macrostep::executors {

// One look at a process.
struct SchedulingSample {
  std::chrono::nanoseconds cpu_time{0};  // user + system time of all its threads so far
  bool runnable = false;                 // one of its threads is 'R' or 'D'
};

// Worker pid's sample, or nullopt if /proc cannot be read for it (it has ended, no /proc).
std::optional<SchedulingSample> read_scheduling(pid_t pid);

// Whether a process that made no progress between two samples `window` apart waited for a
// CPU (the rule above) rather than hung.
bool waited_for_cpu(const SchedulingSample& before, const SchedulingSample& now,
                    std::chrono::nanoseconds window);

}  // namespace macrostep::executors

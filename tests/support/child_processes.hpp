// The child processes of a process, whether a process is gone, and the shared-memory segments a
// process left, read from /proc and /dev/shm (tests that kill a run's workers or its master).
#pragma once

#include <signal.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace macrostep::testing {

// fork(), but the child is killed (SIGKILL) when the forking thread's process ends: a test that
// fails or aborts before it reaps its child leaves no process behind that would hold the test's
// output open (ctest waits for it) or take a CPU from the tests after it. The setting survives
// exec; the app and its workers end with the child. Call it from the test's main thread.
inline pid_t fork_tied() {
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(126);  // the parent ended before the line above
  }
  return pid;
}

// The process ids whose parent is `parent`, ascending (a run spawns its workers in subsystem
// order). A process that ends while /proc is read is left out: its stat file reads as an error,
// which getline turns into a failed stream (an istreambuf_iterator would throw).
inline std::vector<pid_t> children_of(pid_t parent) {
  std::vector<pid_t> out;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", error)) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(entry.path() / "stat");
    std::string line;
    if (!std::getline(stat, line)) continue;
    const auto close = line.rfind(')');
    if (close == std::string::npos || close + 2 > line.size()) continue;
    std::istringstream rest(line.substr(close + 2));
    char state = 0;
    pid_t ppid = 0;
    if (rest >> state >> ppid && ppid == parent) out.push_back(std::stoi(name));
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Gone: no such process, or a zombie nobody has reaped yet.
inline bool process_gone(pid_t pid) {
  if (kill(pid, 0) != 0) return true;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return true;
  const auto close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'Z';
}

// Whether a shared-memory segment that process `pid` created (macrostep-UID-PID-...) exists.
inline bool segments_of_pid_exist(pid_t pid) {
  const std::string needle = "-" + std::to_string(pid) + "-";
  for (const auto& entry : std::filesystem::directory_iterator("/dev/shm")) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("macrostep-", 0) == 0 && name.find(needle) != std::string::npos) return true;
  }
  return false;
}

}  // namespace macrostep::testing

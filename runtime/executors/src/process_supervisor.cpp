// ProcessSupervisor (worker_supervisor.hpp; DESIGN.md contract 5).
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <thread>

#include "macrostep/executors/worker_supervisor.hpp"
#include "macrostep/ipc/proc_stat.hpp"

extern char** environ;

namespace macrostep::executors {

namespace {

using Clock = std::chrono::steady_clock;

// The descriptor number a worker finds the segment at.
constexpr int kSegmentFdInChild = 3;

std::string describe_status(int status) {
  if (WIFSIGNALED(status)) {
    return fmt::format("was killed by signal {} ({})", WTERMSIG(status),
                       strsignal(WTERMSIG(status)));
  }
  if (WIFEXITED(status)) return fmt::format("exited with status {}", WEXITSTATUS(status));
  return "stopped";
}

// Without a pidfd: gone if no such process exists or it is a zombie.
bool gone_without_pidfd(pid_t pid) {
  if (::kill(pid, 0) != 0 && errno == ESRCH) return true;
  const auto stat = ipc::read_proc_stat(pid);
  return !stat || stat->state == 'Z';
}

}  // namespace

ProcessSupervisor::ProcessSupervisor(std::string executable, std::size_t workers,
                                     std::string segment_name, int segment_fd,
                                     const std::vector<std::vector<std::size_t>>& groups)
    : executable_(std::move(executable)),
      slot_of_(workers, workers),
      started_(workers, false),
      segment_name_(std::move(segment_name)),
      segment_fd_(segment_fd) {
  for (const auto& group : groups) {
    if (group.empty()) continue;
    std::vector<std::size_t> members = group;
    std::sort(members.begin(), members.end());
    for (std::size_t i : members) {
      if (i >= workers || slot_of_[i] != workers) {
        throw std::invalid_argument(fmt::format(
            "ProcessSupervisor: worker {} is not one of {} or in two groups", i, workers));
      }
      slot_of_[i] = members_.size();
    }
    members_.push_back(std::move(members));
  }
  for (std::size_t i = 0; i < workers; ++i) {
    if (slot_of_[i] != workers) continue;
    slot_of_[i] = members_.size();
    members_.push_back({i});
  }
  procs_.resize(members_.size());
}

ProcessSupervisor::~ProcessSupervisor() {
  for (std::size_t i = 0; i < slot_of_.size(); ++i) kill(i);
}

void ProcessSupervisor::start(std::size_t i) {
  const std::size_t slot = slot_of_.at(i);
  Proc& p = procs_[slot];
  if (p.pid > 0 && !ended(i)) {
    if (started_[i]) {
      throw std::logic_error(fmt::format("subsystem {}: its worker still runs", i + 1));
    }
    started_[i] = true;  // a mate's start() has spawned the process that serves it
    return;
  }
  spawn(slot);
  for (std::size_t m : members_[slot]) started_[m] = m == i;
}

// Spawns the process of `slot`, serving every member of it.
void ProcessSupervisor::spawn(std::size_t slot) {
  const std::string& segment_name = segment_name_;
  const int segment_fd = segment_fd_;
  Proc& p = procs_[slot];
  const std::size_t i = members_[slot].front();
  close_pidfd(p);
  const std::string fd_text = std::to_string(kSegmentFdInChild);
  std::vector<std::string> args = {executable_,  "worker",       "--segment",
                                   segment_name, "--segment-fd", fd_text};
  for (std::size_t m : members_[slot]) {
    args.emplace_back("--index");
    args.push_back(std::to_string(m));
  }
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  // dup2 clears close-on-exec on the copy (and for segment_fd == 3 glibc clears it in place).
  posix_spawn_file_actions_adddup2(&actions, segment_fd, kSegmentFdInChild);
  // Nothing else of the master's reaches a worker, whether close-on-exec or not.
  posix_spawn_file_actions_addclosefrom_np(&actions, kSegmentFdInChild + 1);
  // Its own process group: a Ctrl-C, SIGTERM or SIGHUP to the master's group (a terminal's)
  // reaches the master alone, which stops the run after the current step and shuts the workers
  // down; a signal sent to one worker is that worker's (a SIGTERM ends it, reported as such).
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, executable_.c_str(), &actions, &attr, argv.data(), environ);
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    throw std::runtime_error(fmt::format("cannot start the worker of subsystem {} ({}): {}", i + 1,
                                         executable_, std::strerror(rc)));
  }
  p = Proc{};
  p.pid = pid;
  p.pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
}

std::optional<std::string> ProcessSupervisor::ended(std::size_t i) {
  Proc& p = procs_.at(slot_of_.at(i));
  if (p.ended) return p.how;
  if (p.pid <= 0) return std::string("was never started");
  bool gone = false;
  if (p.pidfd >= 0) {
    pollfd fd{p.pidfd, POLLIN, 0};
    gone = poll(&fd, 1, 0) > 0;  // a pidfd becomes readable when the process ends
  } else {
    gone = gone_without_pidfd(p.pid);
  }
  // A child is also reaped here (its status is ours); for others the pidfd alone decides.
  int status = 0;
  const pid_t r = waitpid(p.pid, &status, WNOHANG);
  if (r == p.pid) {
    p.how = describe_status(status);
  } else if (!gone) {
    return std::nullopt;
  } else {
    p.how = "has ended";
  }
  p.ended = true;
  close_pidfd(p);
  return p.how;
}

void ProcessSupervisor::kill(std::size_t i) noexcept {
  Proc& p = procs_[slot_of_[i]];
  if (p.pid <= 0 || p.ended) return;
  ::kill(p.pid, SIGKILL);
  int status = 0;
  if (waitpid(p.pid, &status, 0) == p.pid) {
    p.how = describe_status(status);
  } else {
    p.how = "was killed";
  }
  p.ended = true;
  close_pidfd(p);
}

void ProcessSupervisor::stop_all(std::chrono::milliseconds grace) noexcept {
  const auto deadline = Clock::now() + grace;
  for (;;) {
    bool all = true;
    for (std::size_t i = 0; i < slot_of_.size(); ++i) all = ended(i).has_value() && all;
    if (all || Clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  for (std::size_t i = 0; i < slot_of_.size(); ++i) kill(i);
}

void ProcessSupervisor::close_pidfd(Proc& p) noexcept {
  if (p.pidfd >= 0) close(p.pidfd);
  p.pidfd = -1;
}

}  // namespace macrostep::executors

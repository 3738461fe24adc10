// One line of /proc/PID/stat (or /proc/PID/task/TID/stat), the one reader of it in the project:
// a process's state, its CPU time and its start time, for telling a live process from a zombie
// or a reused pid (stale segments, a worker's liveness without a pidfd, an MPI agent on this
// host) and a hung worker from one that waits for a CPU (executors/process_scheduling.hpp).
//
// Thread-safety: the functions are pure or read /proc only; any thread may call them.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace macrostep::ipc {

struct ProcStat {
  char state = '?';             // field 3: R running, S sleeping, D disk, T stopped, Z zombie, ...
  std::uint64_t cpu_ticks = 0;  // fields 14 + 15: user + system time, clock ticks
  std::uint64_t start_ticks = 0;  // field 22: start time after boot, clock ticks
};

// The fields of one stat line. The command name in parentheses may hold spaces and parentheses;
// the fields after it start at the last ')'. nullopt for a line that does not have that form.
std::optional<ProcStat> parse_proc_stat(std::string_view line);

// The stat file at `path` (e.g. "/proc/812/task/813/stat"), or nullopt if it cannot be read (the
// process or thread has ended) or parsed.
std::optional<ProcStat> read_proc_stat_file(const std::string& path);

// /proc/PID/stat.
std::optional<ProcStat> read_proc_stat(pid_t pid);

}  // namespace macrostep::ipc

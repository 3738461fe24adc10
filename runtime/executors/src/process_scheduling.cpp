// Reading a worker's scheduling from /proc (process_scheduling.hpp).
#include "macrostep/executors/process_scheduling.hpp"

#include <unistd.h>

#include <filesystem>
#include <string>

#include "macrostep/ipc/proc_stat.hpp"

namespace macrostep::executors {

std::optional<SchedulingSample> read_scheduling(pid_t pid) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path("/proc") / std::to_string(pid);
  // The process line counts the CPU time of threads that have ended too; the task lines give
  // each live thread's state.
  const auto process = ipc::read_proc_stat(pid);
  if (!process) return std::nullopt;
  static const long ticks_per_second = sysconf(_SC_CLK_TCK);
  SchedulingSample sample;
  sample.cpu_time = std::chrono::nanoseconds(static_cast<long long>(
      static_cast<double>(process->cpu_ticks) * 1e9 / static_cast<double>(ticks_per_second)));
  const auto waits_for_cpu = [](char state) { return state == 'R' || state == 'D'; };
  std::error_code ec;
  for (const auto& task : fs::directory_iterator(dir / "task", ec)) {
    const auto stat = ipc::read_proc_stat_file((task.path() / "stat").string());
    if (stat && waits_for_cpu(stat->state)) {  // a thread that ended meanwhile reads nothing
      sample.runnable = true;
      break;
    }
  }
  if (ec) sample.runnable = waits_for_cpu(process->state);
  return sample;
}

bool waited_for_cpu(const SchedulingSample& before, const SchedulingSample& now,
                    std::chrono::nanoseconds window) {
  if (!now.runnable || window.count() <= 0) return false;
  const auto used = now.cpu_time - before.cpu_time;
  return 2 * used < window;
}

}  // namespace macrostep::executors

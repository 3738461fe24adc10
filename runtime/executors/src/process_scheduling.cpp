// Reading a worker's scheduling from /proc (process_scheduling.hpp).
#include "macrostep/executors/process_scheduling.hpp"

#include <unistd.h>

#include <charconv>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace macrostep::executors {

namespace {

// The whole of a small /proc file, or nullopt if it cannot be opened (the task has ended).
std::optional<std::string> slurp(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The next field of `rest` (separated by spaces, the line ending with a newline), consumed.
std::string_view next_field(std::string_view& rest) {
  constexpr std::string_view kSeparators = " \n";
  const auto begin = rest.find_first_not_of(kSeparators);
  if (begin == std::string_view::npos) {
    rest = {};
    return {};
  }
  rest.remove_prefix(begin);
  const auto end = rest.find_first_of(kSeparators);
  const std::string_view field = rest.substr(0, end);
  rest.remove_prefix(end == std::string_view::npos ? rest.size() : end);
  return field;
}

bool parse_ticks(std::string_view field, unsigned long long& out) {
  const auto [ptr, ec] = std::from_chars(field.data(), field.data() + field.size(), out);
  return ec == std::errc() && ptr == field.data() + field.size();
}

}  // namespace

std::optional<TaskStat> parse_task_stat(std::string_view line) {
  const auto close = line.rfind(')');
  if (close == std::string_view::npos || line.find('(') > close) return std::nullopt;
  std::string_view rest = line.substr(close + 1);
  // After the name: state (3), ppid, pgrp, session, tty_nr, tpgid, flags, minflt, cminflt,
  // majflt, cmajflt (13), utime (14), stime (15); proc(5).
  const std::string_view state = next_field(rest);
  if (state.size() != 1) return std::nullopt;
  for (int skipped = 4; skipped <= 13; ++skipped) {
    if (next_field(rest).empty()) return std::nullopt;
  }
  unsigned long long utime = 0, stime = 0;
  if (!parse_ticks(next_field(rest), utime) || !parse_ticks(next_field(rest), stime)) {
    return std::nullopt;
  }
  return TaskStat{state[0], utime + stime};
}

std::optional<SchedulingSample> read_scheduling(pid_t pid) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path("/proc") / std::to_string(pid);
  // The process line counts the CPU time of threads that have ended too; the task lines give
  // each live thread's state.
  const auto process_line = slurp(dir / "stat");
  if (!process_line) return std::nullopt;
  const auto process = parse_task_stat(*process_line);
  if (!process) return std::nullopt;
  SchedulingSample sample;
  static const long ticks_per_second = sysconf(_SC_CLK_TCK);
  sample.cpu_time = std::chrono::nanoseconds(static_cast<long long>(
      static_cast<double>(process->cpu_ticks) * 1e9 / static_cast<double>(ticks_per_second)));
  std::error_code ec;
  for (const auto& task : fs::directory_iterator(dir / "task", ec)) {
    const auto line = slurp(task.path() / "stat");
    if (!line) continue;  // the thread ended meanwhile
    const auto stat = parse_task_stat(*line);
    if (stat && (stat->state == 'R' || stat->state == 'D')) {
      sample.runnable = true;
      break;
    }
  }
  if (ec) sample.runnable = process->state == 'R' || process->state == 'D';
  return sample;
}

bool waited_for_cpu(const SchedulingSample& before, const SchedulingSample& now,
                    std::chrono::nanoseconds window) {
  if (!now.runnable || window.count() <= 0) return false;
  const auto used = now.cpu_time - before.cpu_time;
  return 2 * used < window;
}

}  // namespace macrostep::executors

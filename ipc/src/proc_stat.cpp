// Reading /proc/PID/stat (proc_stat.hpp).
#include "macrostep/ipc/proc_stat.hpp"

#include <charconv>
#include <fstream>
#include <iterator>

namespace macrostep::ipc {

namespace {

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

bool parse_number(std::string_view field, std::uint64_t& out) {
  const auto [ptr, ec] = std::from_chars(field.data(), field.data() + field.size(), out);
  return !field.empty() && ec == std::errc() && ptr == field.data() + field.size();
}

}  // namespace

std::optional<ProcStat> parse_proc_stat(std::string_view line) {
  const auto close = line.rfind(')');
  if (close == std::string_view::npos || line.find('(') > close) return std::nullopt;
  std::string_view rest = line.substr(close + 1);
  const std::string_view state = next_field(rest);  // field 3
  if (state.size() != 1) return std::nullopt;
  ProcStat stat;
  stat.state = state[0];
  std::uint64_t utime = 0, stime = 0;
  for (int field = 4; field <= 22; ++field) {
    const std::string_view value = next_field(rest);
    if (value.empty()) return std::nullopt;
    if ((field == 14 && !parse_number(value, utime)) ||
        (field == 15 && !parse_number(value, stime)) ||
        (field == 22 && !parse_number(value, stat.start_ticks))) {
      return std::nullopt;
    }
  }
  stat.cpu_ticks = utime + stime;
  return stat;
}

std::optional<ProcStat> read_proc_stat_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  const std::string line((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return parse_proc_stat(line);
}

std::optional<ProcStat> read_proc_stat(pid_t pid) {
  return read_proc_stat_file("/proc/" + std::to_string(pid) + "/stat");
}

}  // namespace macrostep::ipc

// A file's bytes as a string (results, written configurations, unpacked archives), for the test
// programs that compare files.
#pragma once

#include <cstddef>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace macrostep::testing {

// Empty when the file cannot be opened: the caller's comparison then fails and names it.
inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The number of '\n' in the file (0 when it cannot be opened). Tests poll a growing result with
// it while a run writes it: the test programs are compiled without optimisation, where a loop
// over the characters (std::count, an istreambuf_iterator) took a CPU's share from the run
// under test; memchr is the C library's, optimised.
inline std::size_t count_lines(const std::filesystem::path& path) {
  const std::string text = read_file(path);
  std::size_t lines = 0;
  for (const char* at = text.data();
       const void* nl = std::memchr(at, '\n', text.data() + text.size() - at); ++lines) {
    at = static_cast<const char*>(nl) + 1;
  }
  return lines;
}

}  // namespace macrostep::testing

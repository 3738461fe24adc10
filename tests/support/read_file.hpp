// A file's bytes as a string (results, written configurations, unpacked archives), for the test
// programs that compare files.
#pragma once

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

}  // namespace macrostep::testing

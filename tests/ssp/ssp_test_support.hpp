// Helpers of the SSP tests (test_ssp.cpp, test_ssp_refusals.cpp, test_ssp_fmu_checks.cpp): a
// private directory, the app run as a child process with its own $TMPDIR, files read and
// written, parameter sets.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "../support/shell_command.hpp"

namespace macrostep::ssp_testing {

namespace fs = std::filesystem;

// A new empty directory for one test, with an empty tmp/ inside that the app runs use as
// $TMPDIR (so that a test can check that they leave nothing there).
inline fs::path test_dir(const std::string& what) {
  const auto dir =
      fs::temp_directory_path() / ("macrostep-test-ssp-" + what + "-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "tmp");
  return dir;
}

inline std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void write_file(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

using AppRun = test::CommandRun;  // output: stdout and stderr

// `macrostep ARGS` run in `dir` with TMPDIR=dir/tmp.
inline AppRun macrostep(const fs::path& dir, const std::string& args) {
  return test::run_shell("cd '" + dir.string() + "' && TMPDIR='" + (dir / "tmp").string() + "' " +
                         MACROSTEP_BINARY + " " + args + " 2>&1");
}

// Whether the runs left anything in dir/tmp.
inline bool tmp_is_empty(const fs::path& dir) {
  return fs::is_empty(dir / "tmp");
}

// An ssv:Parameter element: `value` is its ssv:Real (or other type) element.
inline std::string parameter(const std::string& name, const std::string& value) {
  return "<ssv:Parameter name=\"" + name + "\">" + value + "</ssv:Parameter>";
}

// A parameter set ("p") of the given ssv:Parameter elements, as an .ssv file's text.
inline std::string parameter_set(const std::string& parameters) {
  return "<ssv:ParameterSet version=\"1.0\" name=\"p\" "
         "xmlns:ssv=\"http://ssp-standard.org/SSP1/SystemStructureParameterValues\">"
         "<ssv:Parameters>" +
         parameters + "</ssv:Parameters></ssv:ParameterSet>\n";
}

}  // namespace macrostep::ssp_testing

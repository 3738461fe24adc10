// Helpers of the FMU tests (test_fmu.cpp, test_fmu_events.cpp): the test FMUs by name, a
// temporary directory, the app run as a child process, a result CSV read back.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "../support/shell_command.hpp"
#include "macrostep/fmu/fmu.hpp"
#include "macrostep/library/model_description.hpp"

namespace macrostep::fmu_testing {

namespace fs = std::filesystem;

inline std::string fmu_file(const std::string& name) {
  return fs::path(FMU_DIR) / (name + ".fmu");
}

inline std::unique_ptr<model::Subsystem> load(const std::string& name,
                                              const std::string& parameters = "{}",
                                              std::vector<std::string> inputs = {},
                                              std::vector<std::string> outputs = {}) {
  return library::build_subsystem(
      fmu::FmuDescription{fmu_file(name), parameters, std::move(inputs), std::move(outputs), ""});
}

inline fs::path temp_dir(const std::string& what) {
  const auto dir =
      fs::temp_directory_path() / ("macrostep-test-fmu-" + what + "-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

using AppRun = test::CommandRun;

inline AppRun macrostep(const std::string& args) {
  return test::run_shell(std::string(MACROSTEP_BINARY) + " " + args + " 2>&1");
}

inline std::vector<std::vector<double>> read_csv(const fs::path& path,
                                                 std::string* header = nullptr) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  if (header != nullptr) *header = line;
  std::vector<std::vector<double>> rows;
  while (std::getline(in, line)) {
    std::vector<double> row;
    std::istringstream fields(line);
    for (std::string field; std::getline(fields, field, ',');) row.push_back(std::stod(field));
    rows.push_back(row);
  }
  return rows;
}

}  // namespace macrostep::fmu_testing

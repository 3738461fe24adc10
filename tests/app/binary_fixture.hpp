// Fixture of the end-to-end tests: every test gets its own empty directory and runs the built
// `macrostep` binary (MACROSTEP_BINARY, or the one app_binary.hpp names) in it, capturing exit
// status, stdout and stderr.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "../support/app_binary.hpp"
#include "../support/read_file.hpp"

namespace macrostep::testing {

// The small test chain of the app tests: 10 masses of the K-5.8-like element law with harmonic
// forcing, cut into 2 subsystems; each test appends its [simulation] and [cosim] sections.
inline const std::string kTestChainModel = R"([model]
masses = 10
seed = 3
mass = 1.0
x0 = {uniform = [-1.0e-3, 1.0e-3]}
v0 = {uniform = [-0.1, 0.1]}
[model.element]
c = 1.0e6
d = 10.0
C = 1.0e10
[[model.force]]
type = "harmonic"
all = true
amplitude = {uniform = [1.0e1, 1.0e2]}
omega = {uniform = [1.0e2, 1.0e3]}
[partition]
subsystems = 2
)";

// A softer 10-mass chain for co-simulations (METHODS.md §3.1): 1 kg masses, c = 1e6 N/m plus a
// cubic term, harmonic forcing; 20 ms (about seven periods of the fastest mode). Explicit
// Jacobi is stable at H = 1e-5 s here and the controlled exMD run needs about 160 macro steps,
// so every run takes milliseconds. The reference grid of 2e-5 s keeps the cubic interpolation
// of `compare` (reference to macro points) far below the co-simulation error.
inline const std::string kCosim = R"(description = "co-simulation test chain"
)" + kTestChainModel +
                                  R"([simulation]
end_time = 0.02
output_interval = 2.0e-5
[cosim]
estimator = "exMD"
rtol = 1.0e-4
threads = 1
)";

// The value of the line "NRMSE (2-norm over N variables): <value>" of `compare` (seed 000
// Eq. 5.2 over the variables with a varying reference); -1 if there is none.
inline double final_nrmse(const std::string& out) {
  const auto line = out.find("NRMSE (2-norm over ");
  if (line == std::string::npos) return -1.0;
  const auto colon = out.find("): ", line);
  if (colon == std::string::npos) return -1.0;
  return std::stod(out.substr(colon + 3));
}

struct Outcome {
  int status = -1;
  std::string out, err;
};

class BinaryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() /
           ("macrostep_test_" + std::string(info->test_suite_name()) + "_" +
            std::to_string(::getpid()) + "_" + info->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  void write_file(const std::string& name, const std::string& text) const {
    std::ofstream(path(name)) << text;
  }
  std::string read_file(const std::string& name) const {
    return macrostep::testing::read_file(path(name));
  }
  // The rows written so far to a result in the test directory (its '\n's).
  std::size_t lines(const std::string& name) const { return count_lines(path(name)); }

  // Runs `macrostep <args>` in the test directory (args are shell words), with the variable
  // assignments `env` ("NAME=value ...") in its environment.
  Outcome macrostep(const std::string& args, const std::string& env = "") const {
    const std::string cmd = "cd '" + dir_.string() + "' && " + env + " '" +
                            app_binary(MACROSTEP_BINARY) + "' " + args +
                            " > stdout.txt 2> stderr.txt";
    const int raw = std::system(cmd.c_str());
    Outcome o;
    o.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
    o.out = read_file("stdout.txt");
    o.err = read_file("stderr.txt");
    return o;
  }

  std::filesystem::path dir_;
};

}  // namespace macrostep::testing

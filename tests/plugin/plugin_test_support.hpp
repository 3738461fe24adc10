// What the plugin tests share: the loader's message for declaring_plugin built with some
// parameters, and a fixture that runs the `macrostep` binary on a configuration of two of its
// oscillators joined by a spring.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "macrostep/plugin/plugin.hpp"

namespace macrostep::plugin_testing {

inline const std::string kLibrary = std::filesystem::absolute(DECLARING_PLUGIN).string();

// The loader's message for a plugin built with `parameters`; "loaded" if it is accepted.
inline std::string load(const std::string& parameters, bool check_jacobians = true) {
  try {
    const auto s = plugin::build_plugin_subsystem({kLibrary, parameters, check_jacobians});
    return "loaded";
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
}

inline void expect_contains(const std::string& text, const std::string& part) {
  EXPECT_NE(text.find(part), std::string::npos) << "missing: " << part << "\nin: " << text;
}

struct AppRun {
  int status = -1;
  std::string out, err;
};

// Each test in a directory of its own, removed afterwards.
class PluginApp : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("macrostep-test-plugin-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  static std::string read(const std::filesystem::path& path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  AppRun macrostep(const std::string& args) const {
    const std::string command =
        "cd '" + dir_.string() + "' && '" MACROSTEP_BINARY "' " + args + " > out.txt 2> err.txt";
    const int status = std::system(command.c_str());
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, read(dir_ / "out.txt"),
            read(dir_ / "err.txt")};
  }

  // Two oscillators of the plugin joined by a spring; `left` are the left one's keys besides
  // name, model and library (its `parameters`, `check_jacobians`).
  void write_config(const std::string& left) const {
    std::ofstream(dir_ / "pair.toml")
        << "[[subsystem]]\nname = \"left\"\nmodel = \"plugin\"\nlibrary = \"" << kLibrary << "\"\n"
        << left << "\n"
        << "[[subsystem]]\nname = \"right\"\nmodel = \"plugin\"\nlibrary = \"" << kLibrary << "\"\n"
        << "[[connection]]\nname = \"spring\"\nlaw = \"spring_damper\"\n"
        << "from = [\"left.x\", \"left.v\", \"right.x\", \"right.v\"]\n"
        << "to = [\"left.force\", \"right.force\"]\nc = 400.0\nd = 1.0\n"
        << "[simulation]\nend_time = 0.05\noutput_interval = 1e-3\n";
  }

  std::filesystem::path dir_;
};

}  // namespace macrostep::plugin_testing

// What the plugin tests share: the loader's message for declaring_plugin built with some
// parameters, and the end-to-end fixture (app/binary_fixture.hpp) with a configuration of two of
// its oscillators joined by a spring.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "../app/binary_fixture.hpp"
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

using AppRun = testing::Outcome;

// The end-to-end fixture (a directory of its own, the binary's status, stdout and stderr) with the
// plugin's configuration.
class PluginApp : public testing::BinaryTest {
 protected:
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
};

}  // namespace macrostep::plugin_testing

// Users' models as plugins (subsystems/plugin, examples/duffing): loading and its
// refusals, the plugin's model against a closed-form solution, and two plugin subsystems
// co-simulated by the app with both executors (contract 1: the same bytes) and against the
// monolithic run of the same description.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "../support/read_file.hpp"
#include "../support/shell_command.hpp"
#include "macrostep/library/model_description.hpp"
#include "macrostep/plugin/plugin.hpp"

namespace macrostep {
namespace {

using macrostep::testing::read_file;

plugin::PluginDescription duffing(const std::string& parameters) {
  return {std::filesystem::absolute(DUFFING_PLUGIN).string(), parameters};
}

TEST(Plugin, BuildsTheSubsystemItDescribes) {
  const auto s = library::build_subsystem(
      duffing(R"({"mass": 2.0, "stiffness": 8.0, "x0": 0.1, "v0": -0.2})"));
  ASSERT_EQ(s->state_size(), 2u);
  ASSERT_EQ(s->input_size(), 1u);
  ASSERT_EQ(s->output_size(), 2u);
  EXPECT_EQ(s->input_name(0), "force");
  EXPECT_EQ(s->output_name(1), "v");
  EXPECT_EQ(s->output_unit(0), "m");  // what the plugin declares reaches the results
  EXPECT_EQ(s->output_unit(1), "m/s");
  std::vector<double> z(2), zp(2), r(2);
  const std::vector<double> u = {4.0};
  s->initial_state(u, z, zp);
  EXPECT_EQ(z[0], 0.1);
  EXPECT_EQ(z[1], -0.2);
  EXPECT_DOUBLE_EQ(zp[1], (-8.0 * 0.1 + 4.0) / 2.0);  // m v' = -k x + force
  s->residual(0.0, z, zp, u, r);
  EXPECT_EQ(r[0], 0.0);
  EXPECT_NEAR(r[1], 0.0, 1e-15);
  EXPECT_EQ(library::describe(duffing("{}")), "plugin " + duffing("{}").library);
}

TEST(Plugin, RefusalsNameTheLibraryAndTheReason) {
  const auto message = [](const plugin::PluginDescription& d) {
    try {
      (void)plugin::build_plugin_subsystem(d);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message(duffing(R"({"springiness": 1})")).find("unknown parameter \"springiness\""),
            std::string::npos);
  EXPECT_NE(message(duffing(R"({"mass": -1})")).find("refused its parameters: \"mass\" must be"),
            std::string::npos);
  EXPECT_NE(message({"/nonexistent/plugin.so", "{}"}).find("plugin /nonexistent/plugin.so: "),
            std::string::npos);
  EXPECT_NE(message({"relative.so", "{}"}).find("must be absolute"), std::string::npos);
  // A shared library that is not a plugin (no entry points).
  const std::string libc = "/lib/x86_64-linux-gnu/libm.so.6";
  if (std::filesystem::exists(libc)) {
    EXPECT_NE(message({libc, "{}"}).find("no macrostep_plugin_api_version"), std::string::npos);
  }
}

// ---- the app ----

using AppRun = test::CommandRun;

AppRun macrostep(const std::string& args) {
  return test::run_shell(std::string(MACROSTEP_BINARY) + " " + args + " 2>&1");
}

// Two Duffing oscillators (one forced) joined by a linear spring/damper.
std::filesystem::path write_config(const std::filesystem::path& dir, const std::string& library) {
  const auto path = dir / "pair.toml";
  std::ofstream(path) << "description = \"two Duffing oscillators from a plugin\"\n"
                      << "[[subsystem]]\nname = \"left\"\nmodel = \"plugin\"\nlibrary = \""
                      << library << "\"\n"
                      << "parameters = {mass = 1.0, stiffness = 100.0, cubic = 1.0e4, damping "
                         "= 0.5, amplitude = 20.0, omega = 7.0, x0 = 0.05}\n"
                      << "[[subsystem]]\nname = \"right\"\nmodel = \"plugin\"\nlibrary = \""
                      << library << "\"\n"
                      << "parameters = {mass = 0.5, stiffness = 50.0, cubic = 2.0e3, damping = "
                         "0.2, force_sign = -1}\n"
                      << "[[connection]]\nname = \"spring\"\nlaw = \"spring_damper\"\n"
                      << "from = [\"left.x\", \"left.v\", \"right.x\", \"right.v\"]\n"
                      << "to = [\"left.force\", \"right.force\"]\nc = 400.0\nd = 1.0\n"
                      << "[solver]\nrtol = 1e-8\n"
                      << "[simulation]\nend_time = 2.0\noutput_interval = 1e-2\n"
                      << "[cosim]\nrtol = 1e-5\n";
  return path;
}

std::filesystem::path temp_dir() {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("macrostep-test-plugin-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// `plugin`: the example with its analytic coupling Jacobians, or the same model relying on the
// finite-difference defaults (whose outputs the error estimators must recognise all the same).
void check_plugin_pair(const std::string& plugin) {
  const auto dir = temp_dir();
  // Relative to the configuration's directory, as a user would write it beside the library.
  std::filesystem::copy_file(plugin, dir / "duffing.so");
  const auto config = write_config(dir, "duffing.so").string();
  for (const char* executor : {"inprocess", "processes"}) {
    const AppRun r = macrostep("run " + config + " --executor " + executor + " --output " +
                               (dir / (std::string(executor) + ".csv")).string());
    ASSERT_EQ(r.status, 0) << r.output;
  }
  const std::string a = read_file(dir / "inprocess.csv");
  EXPECT_EQ(a.substr(0, a.find('\n')), "time,left.x,left.v,right.x,right.v,spring");
  EXPECT_GT(a.size(), 1000u);
  EXPECT_TRUE(a == read_file(dir / "processes.csv")) << "the executors' CSV files differ";
  // The monolithic run of the same description (one IDA over both plugins and the law):
  // the co-simulation at rtol 1e-5 agrees with it (NRMSE, seed 000 Eq. 5.1).
  const AppRun mono =
      macrostep("run " + config + " --monolithic --output " + (dir / "mono.csv").string());
  ASSERT_EQ(mono.status, 0) << mono.output;
  const AppRun cmp =
      macrostep("compare " + (dir / "inprocess.csv").string() + " " + (dir / "mono.csv").string());
  ASSERT_EQ(cmp.status, 0) << cmp.output;
  std::cout << cmp.output;
  std::istringstream lines(cmp.output);
  std::string line;
  int checked = 0;
  while (std::getline(lines, line)) {
    for (const char* column : {"  left.x ", "  right.x "}) {
      if (line.rfind(column, 0) == 0) {
        const double nrmse = std::stod(line.substr(line.find_last_of(' ') + 1));
        EXPECT_LT(nrmse, 1e-2) << line;
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, 2) << cmp.output;
  // The plugin's units, and the spring's derived from them.
  EXPECT_NE(cmp.output.find("  left.x    m     "), std::string::npos) << cmp.output;
  EXPECT_NE(cmp.output.find("  spring    N     "), std::string::npos) << cmp.output;
  std::filesystem::remove_all(dir);
}

TEST(PluginApp, CoSimulationOfPluginsIsTheSameInProcessesAndAgreesWithTheMonolithicRun) {
  check_plugin_pair(DUFFING_PLUGIN);
}

TEST(PluginApp, APluginWithoutCouplingJacobiansIsErrorControlledAlike) {
  check_plugin_pair(DUFFING_FD_PLUGIN);
}

TEST(PluginApp, AMissingLibraryOrRefusedParametersExitTwoWithTheLine) {
  const auto dir = temp_dir();
  const AppRun missing = macrostep("run " + write_config(dir, "nowhere.so").string());
  EXPECT_EQ(missing.status, 2) << missing.output;
  EXPECT_NE(missing.output.find("pair.toml:5: subsystem[1].library"), std::string::npos)
      << missing.output;
  EXPECT_NE(missing.output.find("no such file"), std::string::npos) << missing.output;
  std::filesystem::copy_file(DUFFING_PLUGIN, dir / "duffing.so");
  const auto config = write_config(dir, "duffing.so");
  std::string text = read_file(config);
  text.replace(text.find("cubic = 2.0e3"), 13, "cubic = \"x\"");
  std::ofstream(config) << text;
  const AppRun refused = macrostep("run " + config.string());
  EXPECT_EQ(refused.status, 2) << refused.output;
  EXPECT_NE(refused.output.find("pair.toml:"), std::string::npos) << refused.output;
  EXPECT_NE(refused.output.find("refused its parameters: \"cubic\" must be a number"),
            std::string::npos)
      << refused.output;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace macrostep

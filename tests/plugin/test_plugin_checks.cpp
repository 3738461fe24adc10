// What a plugin declares is checked when it is loaded (plugin_checks.hpp), and a plugin whose
// model returns NaN is named with the value and the time (the integrator's check): the real
// loader on a real plugin (declaring_plugin.cpp) whose parameters spoil one declaration each,
// and the `macrostep` binary on configurations that load it.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "macrostep/library/sources.hpp"
#include "macrostep/model/names.hpp"
#include "macrostep/plugin/plugin.hpp"
#include "macrostep/plugin/plugin_checks.hpp"
#include "plugin_test_support.hpp"

namespace macrostep {
namespace {

using plugin_testing::kLibrary;
using plugin_testing::load;

// The message must name the library and the defect.
void expect_refused(const std::string& parameters, const std::string& defect) {
  const std::string message = load(parameters);
  EXPECT_EQ(message, "plugin " + kLibrary + ": " + defect) << parameters;
}

TEST(PluginChecks, AValidPluginLoads) {
  EXPECT_EQ(load("{}"), "loaded");
  EXPECT_EQ(load(R"({"states": 5, "output_names": ["x", "v", "x2"]})"), "loaded");
}

TEST(PluginChecks, StateSizeIsLoadedAtTheLimitAndRefusedOnePast) {
  EXPECT_EQ(load(R"({"states": )" + std::to_string(plugin::kMaxStates) + "}"), "loaded");
  expect_refused(R"({"declared_states": )" + std::to_string(plugin::kMaxStates + 1) + "}",
                 "state_size() is 1000001, more than the limit of 1000000");
  // The hostile size: refused before anything is sized by it.
  expect_refused(R"({"declared_states": 1000000000})",
                 "state_size() is 1000000000, more than the limit of 1000000");
}

TEST(PluginChecks, InputAndOutputCountsHaveLimits) {
  std::string names = "[";
  for (std::size_t i = 0; i <= plugin::kMaxOutputs; ++i) {
    names += (i > 0 ? ", \"y" : "\"y") + std::to_string(i) + "\"";
  }
  names += "]";
  expect_refused(R"({"output_names": )" + names + "}",
                 "output_size() is 10001, more than the limit of 10000");
  expect_refused(R"({"input_names": )" + names + "}",
                 "input_size() is 10001, more than the limit of 10000");
}

TEST(PluginChecks, MalformedJacobianPatternsAreNamed) {
  expect_refused(R"({"column_start": [0, 4]})",
                 "the Jacobian pattern's column_start has 2 entries, not state_size() + 1 = 3");
  expect_refused(R"({"column_start": [1, 2, 4]})",
                 "the Jacobian pattern's column_start[0] is not 0");
  expect_refused(R"({"column_start": [0, 3, 2]})",
                 "the Jacobian pattern's column_start decreases at column 1 (2 after 3)");
  expect_refused(R"({"column_start": [0, 2, 3]})",
                 "the Jacobian pattern's column_start ends at 3, but row_index has 4 entries");
  expect_refused(R"({"row_index": [0, 2, 0, 1]})",
                 "the Jacobian pattern's row_index[1] (column 0) is 2, outside 0..1");
  expect_refused(R"({"row_index": [0, 1, -1, 1]})",
                 "the Jacobian pattern's row_index[2] (column 1) is -1, outside 0..1");
  expect_refused(R"({"row_index": [1, 0, 0, 1]})",
                 "the Jacobian pattern's rows of column 0 do not strictly increase (row_index[1] "
                 "= 0 after 1)");
  expect_refused(R"({"row_index": [0, 1, 1, 1]})",
                 "the Jacobian pattern's rows of column 1 do not strictly increase (row_index[3] "
                 "= 1 after 1)");
}

TEST(PluginChecks, StateRolesCouplingPatternsAndNamesAreChecked) {
  expect_refused(R"({"roles": 1})", "state_roles() has 1 entries for 2 states");
  expect_refused(R"({"output_pattern": [[0, 2], [0, 1]]})",
                 "output_jacobian_pattern() entry 1 is (2, 1), outside the 2 x 2 matrix");
  expect_refused(R"({"output_pattern": [[0, 1], [0]]})",
                 "output_jacobian_pattern() has 2 rows for 1 columns");
  expect_refused(R"({"output_pattern": [[1, 1], [0, 0]]})",
                 "output_jacobian_pattern() has entry (1, 0) twice");
  expect_refused(R"({"output_names": ["x", "x"]})",
                 "output_name(0) and output_name(1) are both \"x\"");
  expect_refused(R"({"output_names": ["x", ""]})", "output_name(1) is empty");
  expect_refused(R"({"input_names": ["for\nce"]})",
                 "input_name(0) is \"for\\nce\", with a control character at byte 3");
  // What the plugin's own code throws is named as the plugin's, a throw of anything too.
  expect_refused(R"({"throw": "names"})", "a declaration function threw: output_name failed");
  EXPECT_EQ(load(R"({"throw": "int"})"),
            "plugin " + kLibrary +
                " refused its parameters: the constructor threw an exception that is not a "
                "std::exception");
}

TEST(PluginChecks, MemoryEstimateIsAcceptedAtTheLimitAndRefusedOnePast) {
  const std::uint64_t states = plugin::kMaxStates;
  const std::uint64_t nonzeros =
      (plugin::kMaxSolverBytes - states * plugin::kBytesPerState) / plugin::kBytesPerNonzero;
  ASSERT_LE(plugin::solver_memory_estimate(states, nonzeros), plugin::kMaxSolverBytes);
  ASSERT_GT(plugin::solver_memory_estimate(states, nonzeros + 1), plugin::kMaxSolverBytes);
  EXPECT_NO_THROW(plugin::check_solver_memory(states, nonzeros, "p.so"));
  try {
    plugin::check_solver_memory(states, nonzeros + 1, "p.so");
    ADD_FAILURE() << "one nonzero past the memory limit was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()),
              "plugin p.so: its integrator would need about 4.00 GiB (1000000 states, " +
                  std::to_string(nonzeros + 1) +
                  " Jacobian nonzeros), more than the limit of 4 GiB per integrator");
  }
}

// y = 2·u without states (the library's stateless base), declared with or without feed-through.
class Doubler final : public library::StatelessSubsystem {
 public:
  explicit Doubler(bool feedthrough) : StatelessSubsystem(""), feedthrough_(feedthrough) {}
  std::size_t input_size() const override { return 1; }
  std::size_t output_size() const override { return 1; }
  bool has_feedthrough() const override { return feedthrough_; }
  bool output_feeds_through(std::size_t) const override { return feedthrough_; }
  std::string output_name(std::size_t) const override { return "y"; }
  std::string input_name(std::size_t) const override { return "u"; }
  void outputs(double, std::span<const double>, std::span<const double> u,
               std::span<double> y) const override {
    y[0] = 2.0 * u[0];
  }

 private:
  bool feedthrough_;
};

// A block without states whose outputs follow its inputs must say so: without feed-through its
// inputs could change nothing (a block that forgot has_feedthrough() wrote outputs off its own
// equation by 2e-2 without a word).
TEST(PluginChecks, AStatelessBlockWithInputsDeclaresFeedthrough) {
  EXPECT_NO_THROW(plugin::check_declarations(Doubler(true), "doubler.so"));
  try {
    plugin::check_declarations(Doubler(false), "doubler.so");
    ADD_FAILURE() << "a stateless block without feed-through loaded";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("plugin doubler.so: has inputs and outputs but no "
                                         "states, and has_feedthrough() is false"),
              std::string::npos)
        << e.what();
  }
}

// Names that models declare reach messages through model::quoted: one line, exactly what the
// name holds, and not more than a line's worth of it.
TEST(PluginChecks, QuotedNamesStayOnOneLine) {
  EXPECT_EQ(model::quoted("x_17"), "\"x_17\"");
  EXPECT_EQ(model::quoted("a\nb\tc\rd"), "\"a\\nb\\tc\\rd\"");
  EXPECT_EQ(model::quoted(std::string("e\x1b[0m\x7f\0", 7)), "\"e\\x1b[0m\\x7f\\x00\"");
  EXPECT_EQ(model::quoted("say \"hi\" \\ \u00e9"), "\"say \\\"hi\\\" \\\\ \u00e9\"");
  EXPECT_EQ(model::quoted(std::string(100, 'y')),
            "\"" + std::string(80, 'y') + "...\" (100 characters)");
  EXPECT_EQ(model::control_character("plain.name"), std::nullopt);
  EXPECT_EQ(model::control_character("ab\x7f"), 2u);
}

// ---- the app ----

using plugin_testing::AppRun;
class PluginChecksApp : public plugin_testing::PluginApp {};

// The residual turns NaN at t = 0.01: the run ends with the value, the state of its row, the
// time and the subsystem, in-process and in worker processes alike (before, IDA crept towards
// t = 0.01 for 500,000 micro steps and reported too much work).
TEST_F(PluginChecksApp, ANanResidualEndsTheRunNamingItInEveryExecutor) {
  write_config("parameters = {nan_from = 0.01}");
  for (const char* executor : {"inprocess", "processes"}) {
    const AppRun r = macrostep(std::string("run pair.toml --output r.csv --executor ") + executor);
    EXPECT_EQ(r.status, 1) << executor << ": " << r.err;
    EXPECT_NE(r.err.find("the model's residual r[1] (row of state \"v\") is nan at t = 0.01"),
              std::string::npos)
        << executor << ": " << r.err;
    EXPECT_NE(r.err.find("(subsystem 1 is \"left\": plugin "), std::string::npos)
        << executor << ": " << r.err;
    EXPECT_EQ(r.err.find("more than 500000 micro steps"), std::string::npos)
        << executor << ": " << r.err;
  }
  // The monolithic run integrates both oscillators in one IDA: the left one's rows come first.
  const AppRun mono = macrostep("run pair.toml --monolithic --output m.csv");
  EXPECT_EQ(mono.status, 1) << mono.err;
  EXPECT_NE(mono.err.find("the model's residual r[1] (row of state \"v\") is nan at t = 0.01"),
            std::string::npos)
      << mono.err;
}

// A refused declaration is a configuration error: exit 2 with the file and line, at once.
TEST_F(PluginChecksApp, ARefusedDeclarationIsAConfigurationError) {
  write_config("parameters = {declared_states = 1000000000}");
  const AppRun r = macrostep("run pair.toml --output r.csv");
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("pair.toml:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("plugin " + kLibrary +
                       ": state_size() is 1000000000, more than the limit of 1000000"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir_ / "r.csv"));
}

// An output name a CSV header cannot hold is refused before any file is written (it failed at
// the first row, leaving an empty CSV and metadata that said "running").
TEST_F(PluginChecksApp, AnOutputNameWithACommaIsRefusedBeforeAnyFile) {
  write_config(R"(parameters = {states = 3, output_names = ["x", "v", "s,2"]})");
  const AppRun r = macrostep("run pair.toml --executor inprocess --output r.csv");
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("invalid CSV column name"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir_ / "r.csv"));
  EXPECT_FALSE(std::filesystem::exists(dir_ / "r.json"));
}

}  // namespace
}  // namespace macrostep

// A plugin's initial point is checked when it is loaded (plugin_checks.hpp check_initial_point):
// its initial time, its initial state, and its analytic Jacobians against central differences
// (jacobian_check.hpp). The real loader on a real plugin (declaring_plugin.cpp) whose parameters
// spoil one Jacobian entry each, the `macrostep` binary on configurations that load it, and the
// checker over the built-in models as a second check of their Jacobians.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>

#include "macrostep/library/model_registry.hpp"
#include "macrostep/model/names.hpp"
#include "macrostep/plugin/jacobian_check.hpp"
#include "macrostep/plugin/plugin.hpp"
#include "plugin_test_support.hpp"

namespace macrostep {
namespace {

using plugin_testing::expect_contains;
using plugin_testing::kLibrary;
using plugin_testing::load;

TEST(JacobianCheck, ACorrectPluginLoads) {
  EXPECT_EQ(load("{}"), "loaded");
  EXPECT_EQ(load(R"({"states": 40})"), "loaded");
}

// Each wrong entry is named by its Jacobian, its row and column (by the model's names) and both
// values; before, every one of them loaded and ran (a wrong dF/dz took 300 times the micro steps).
TEST(JacobianCheck, EachWrongJacobianIsNamedWithTheEntryAndBothValues) {
  const std::string refused = "plugin " + kLibrary +
                              ": its analytic Jacobians disagree with central differences at the "
                              "initial state (t = 0, the inputs 0)";
  std::string m = load(R"({"wrong": "sign"})");
  expect_contains(m, refused);
  expect_contains(m,
                  "dF/dz (jacobian() at cj = 0): the entry (r[1] (the row of state \"v\"), state "
                  "\"x\") is -1 analytically but 1 by central differences (1 of 4 entries "
                  "differ)");
  expect_contains(m, "set check_jacobians = false");
  m = load(R"({"wrong": "cj"})");
  expect_contains(m,
                  "dF/dz' (the part of jacobian() proportional to cj): the entry (r[1] (the row "
                  "of state \"v\"), the derivative of state \"v\") is 3 analytically but 1 by "
                  "central differences");
  EXPECT_EQ(m.find("dF/dz (jacobian() at cj = 0)"), std::string::npos) << m;
  m = load(R"({"wrong": "output"})");
  expect_contains(m,
                  "dy/dz (output_jacobian()): the entry (output \"x\", state \"x\") is 2 "
                  "analytically but 1 by central differences (2 of 2 entries differ)");
  m = load(R"({"wrong": "input"})");
  expect_contains(m,
                  "dF/du (input_jacobian()): the entry (r[1] (the row of state \"v\"), input "
                  "\"force\") is 1 analytically but -1 by central differences");
}

// The residual of s2 depends on x outside the declared pattern: the columns x and s2 share a
// group of the differences, and the group is resolved column by column to name the entry.
TEST(JacobianCheck, AnEntryOutsideThePatternIsFoundThroughTheColumnGroups) {
  const std::string m = load(R"({"states": 6, "wrong": "outside"})");
  expect_contains(m,
                  "dF/dz (jacobian() at cj = 0): the entry (r[2] (the row of state \"s2\"), state "
                  "\"x\") is not in jacobian_pattern() but is 0.5 by central differences");
}

// A kink at the initial state: the analytic right derivative is fine, the central difference is
// not. The check refuses it; check_jacobians = false loads it.
TEST(JacobianCheck, TheCheckCanBeTurnedOffForAModelWhoseDifferencesAreWrong) {
  expect_contains(load(R"({"kink": true})"),
                  "the entry (r[1] (the row of state \"v\"), state \"x\") is 1 analytically but 0 "
                  "by central differences");
  EXPECT_EQ(load(R"({"kink": true})", false), "loaded");
}

TEST(JacobianCheck, TheInitialTimeAndAThrowingInitialStateAreNamed) {
  EXPECT_EQ(load(R"({"initial_time": 0.3})"),
            "plugin " + kLibrary +
                ": initial_time() is 0.3, but every run starts at t = 0 (the [simulation] interval "
                "is 0 .. end_time): return 0 from initial_time() and give the model's own time "
                "offset as a parameter");
  EXPECT_EQ(load(R"({"throw": "initial_state"})"),
            "plugin " + kLibrary +
                ": initial_state() threw at t = 0 with the inputs 0: no initial state for these "
                "parameters");
}

// The built-in models' Jacobians (each also has its own finite-difference test) pass the
// checker at their initial state with inputs 0 and 0.5: two implementations that agree.
TEST(JacobianCheck, TheBuiltInModelsPass) {
  std::size_t checked = 0;
  for (const std::string& name : library::model_names()) {
    const library::ModelEntry* entry = library::find_model(name);
    // The defaults; a required number 1 where its struct's default is not > 0 (a Jacobian
    // check needs no physical values), a required list two entries; one coupled input.
    library::ParameterValues values = library::default_values(*entry);
    for (const library::ParameterSpec& spec : entry->parameters) {
      if (!spec.required) continue;
      library::ParameterValue value = spec.default_value;
      if (const auto* x = std::get_if<double>(&value); x != nullptr && !(*x > 0.0)) value = 1.0;
      if (spec.type == library::ParameterType::kNumberList) value = std::vector<double>{1.0, -0.5};
      values.set(spec.name, value);
    }
    if (name == "oscillator_mass") values.set("force_input", true);
    std::unique_ptr<model::Subsystem> s;
    try {
      s = entry->build(values);
    } catch (const std::exception& e) {
      std::cout << name << " not checked: " << e.what() << "\n";
      continue;  // a required file, or a required value that the struct's default cannot take
    }
    for (const double u : {0.0, 0.5}) {
      plugin::JacobianPoint at{s->initial_time(), std::vector<double>(s->state_size()),
                               std::vector<double>(s->state_size()),
                               std::vector<double>(s->input_size(), u)};
      s->initial_state(at.u, at.z, at.zp);
      for (const auto& m : plugin::jacobian_mismatches(*s, at)) {
        ADD_FAILURE() << name << " at u = " << u << ": " << plugin::describe(*s, m);
      }
    }
    ++checked;
  }
  EXPECT_GE(checked, 10u) << "of " << library::model_names().size();
}

// ---- the app ----

using plugin_testing::AppRun;
class JacobianCheckApp : public plugin_testing::PluginApp {};

// A refusal at the initial point is a configuration error like a refused declaration: exit 2
// with the file, the line and the subsystem's name, before any file is written.
TEST_F(JacobianCheckApp, AWrongJacobianIsAConfigurationErrorNamingTheSubsystem) {
  write_config("parameters = {wrong = \"sign\"}");
  const AppRun r = macrostep("run pair.toml --output r.csv");
  EXPECT_EQ(r.status, 2) << r.err;
  expect_contains(r.err, "pair.toml:1: subsystem[1]: \"left\": plugin " + kLibrary +
                             ": its analytic Jacobians disagree");
  expect_contains(r.err,
                  "dF/dz (jacobian() at cj = 0): the entry (r[1] (the row of state \"v\"), "
                  "state \"x\") is -1 analytically but 1");
  EXPECT_FALSE(std::filesystem::exists(dir_ / "r.csv"));
  const AppRun mono = macrostep("run pair.toml --monolithic --output m.csv");
  EXPECT_EQ(mono.status, 2) << mono.err;
}

TEST_F(JacobianCheckApp, TheInitialTimeAndInitialStateFailuresNameTheSubsystem) {
  write_config("parameters = {initial_time = 0.3}");
  AppRun r = macrostep("run pair.toml --output r.csv");
  EXPECT_EQ(r.status, 2) << r.err;
  expect_contains(r.err, "subsystem[1]: \"left\": plugin " + kLibrary +
                             ": initial_time() is 0.3, but every run starts at t = 0");
  write_config("parameters = {throw = \"initial_state\"}");
  r = macrostep("run pair.toml --output r.csv");
  EXPECT_EQ(r.status, 2) << r.err;
  expect_contains(r.err, "subsystem[1]: \"left\": plugin " + kLibrary +
                             ": initial_state() threw at t = 0 with the inputs 0: no initial "
                             "state for these parameters");
}

// check_jacobians = false reaches the worker processes too (they load and check the plugin
// themselves): the kinked model runs in every executor.
TEST_F(JacobianCheckApp, CheckJacobiansFalseHoldsInEveryExecutor) {
  write_config("parameters = {kink = true}");
  EXPECT_EQ(macrostep("run pair.toml --output r.csv").status, 2);
  write_config("parameters = {kink = true}\ncheck_jacobians = false");
  for (const char* executor : {"inprocess", "processes"}) {
    const AppRun r = macrostep(std::string("run pair.toml --output r.csv --executor ") + executor);
    EXPECT_EQ(r.status, 0) << executor << ": " << r.err;
  }
  write_config("check_jacobians = 1");
  const AppRun r = macrostep("run pair.toml --output r.csv");
  EXPECT_EQ(r.status, 2);
  expect_contains(r.err, "check_jacobians");
  expect_contains(r.err, "must be a boolean");
}

}  // namespace
}  // namespace macrostep

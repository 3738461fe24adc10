// The units every built-in model declares for its outputs (model::Subsystem::output_unit): every
// model of the registry and the chain and drive-train segments. A model without a `unit`
// parameter names a unit for every output; a source or block takes the one its `unit` parameter
// declares. Positions and velocities that are states carry a length or angle and its rate.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "macrostep/library/chain.hpp"
#include "macrostep/library/chain_parameters.hpp"
#include "macrostep/library/drive_train.hpp"
#include "macrostep/library/model_registry.hpp"
#include "macrostep/model/subsystem_view.hpp"

namespace macrostep::library {
namespace {

// The built-in models of the registry: the test fails for one added without an entry here.
const std::map<std::string, std::map<std::string, std::string>> kExpected = {
    {"hydraulic_cylinder",
     {{"x", "m"},
      {"v", "m/s"},
      {"volume_a", "m^3"},
      {"flow_a", "m^3/s"},
      {"volume_b", "m^3"},
      {"flow_b", "m^3/s"}}},
    {"hydraulic_line", {{"volume", "m^3"}, {"flow", "m^3/s"}, {"chamber_pressure", "Pa"}}},
    {"belt_drive",
     {{"phi_1", "rad"},
      {"omega_1", "rad/s"},
      {"phi_2", "rad"},
      {"omega_2", "rad/s"},
      {"x_idler", "m"},
      {"v_idler", "m/s"},
      {"tension_tight", "N"},
      {"tension_slack", "N"}}},
    {"oscillator_mass", {{"x", "m"}, {"v", "m/s"}, {"force", "N"}}},
    {"dc_motor", {{"phi", "rad"}, {"omega", "rad/s"}, {"current", "A"}}},
    // The unit their `unit` parameter declares (checked below with "V").
    {"pid", {}},
    {"constant", {}},
    {"step", {}},
    {"ramp", {}},
    {"sine", {}},
    {"table", {}},
    {"gain", {}},
    {"sum", {}},
};

class Units : public ::testing::Test {
 protected:
  void SetUp() override {
    table_ = std::filesystem::temp_directory_path() /
             ("macrostep_units_table_" + std::to_string(::getpid()) + ".csv");
    std::ofstream(table_) << "time,value\n0,0\n1,1\n";
  }
  void TearDown() override { std::filesystem::remove(table_); }

  // The model's default values, with a plausible value for every required parameter.
  // The entry's defaults with every required parameter given; the oscillator mass with its held
  // element (it needs a coupling; with the element it has all three outputs).
  ParameterValues values_of(const ModelEntry& entry) const {
    ParameterValues v = default_values(entry);
    if (entry.name == "oscillator_mass") v.set("displacement_input", true);
    for (const ParameterSpec& p : entry.parameters) {
      if (!p.required) continue;
      if (p.type == ParameterType::kNumber) v.set(p.name, 1.0);
      if (p.type == ParameterType::kString) v.set(p.name, table_.string());
      if (p.type == ParameterType::kNumberList) v.set(p.name, std::vector<double>{1.0, -1.0});
    }
    return v;
  }

  std::filesystem::path table_;
};

bool has_unit_parameter(const ModelEntry& entry) {
  for (const ParameterSpec& p : entry.parameters) {
    if (p.name == "unit") return p.type == ParameterType::kString;
  }
  return false;
}

// Position states' outputs in m, rad or m^3 (a hydraulic line's delivered volume, the generalised
// displacement of the node analogy), velocity states' in m/s, rad/s or m^3/s.
void expect_state_outputs_consistent(const model::Subsystem& s, const std::string& model) {
  for (std::size_t o = 0; o < s.output_size(); ++o) {
    for (std::size_t j = 0; j < s.state_size(); ++j) {
      if (s.state_name(j) != s.output_name(o)) continue;
      const std::string unit = s.output_unit(o);
      if (s.state_roles()[j] == model::StateRole::kPosition) {
        EXPECT_TRUE(unit == "m" || unit == "rad" || unit == "m^3")
            << model << " " << s.output_name(o) << ": " << unit;
      } else if (s.state_roles()[j] == model::StateRole::kVelocity) {
        EXPECT_TRUE(unit == "m/s" || unit == "rad/s" || unit == "m^3/s")
            << model << " " << s.output_name(o) << ": " << unit;
      }
    }
  }
}

TEST_F(Units, EveryOutputOfEveryRegisteredModelHasOne) {
  std::set<std::string> seen;
  for (const std::string& name : model_names()) {
    SCOPED_TRACE(name);
    const ModelEntry* entry = find_model(name);
    ASSERT_NE(entry, nullptr);
    const auto expected = kExpected.find(name);
    ASSERT_NE(expected, kExpected.end()) << "a built-in model without expected units: " << name;
    seen.insert(name);
    ParameterValues values = values_of(*entry);
    if (has_unit_parameter(*entry)) {
      // Undeclared: "" (the model cannot know what its signal is); declared: that unit.
      const auto plain = entry->build(values);
      for (std::size_t o = 0; o < plain->output_size(); ++o) EXPECT_EQ(plain->output_unit(o), "");
      values.set("unit", std::string("V"));
      const auto declared = entry->build(values);
      ASSERT_GT(declared->output_size(), 0u);
      for (std::size_t o = 0; o < declared->output_size(); ++o) {
        EXPECT_EQ(declared->output_unit(o), "V") << declared->output_name(o);
      }
      continue;
    }
    const auto s = entry->build(values);
    ASSERT_EQ(s->output_size(), expected->second.size());
    for (std::size_t o = 0; o < s->output_size(); ++o) {
      const std::string output = s->output_name(o);
      ASSERT_TRUE(expected->second.contains(output)) << output;
      EXPECT_EQ(s->output_unit(o), expected->second.at(output)) << output;
    }
    expect_state_outputs_consistent(*s, name);
  }
  EXPECT_EQ(seen.size(), kExpected.size());  // every entry above is a registered model
}

// A chain of six unit masses at rest between seven equal elements.
ChainParameters six_masses() {
  ChainParameters chain;
  chain.mass.assign(6, 1.0);
  chain.element.assign(7, ElementLaw{1.0e3, 1.0, 0.0, 0.0, 3.0, 3.0});
  chain.forces.resize(6);
  chain.x0.assign(6, 0.0);
  chain.v0.assign(6, 0.0);
  return chain;
}

TEST_F(Units, ChainAndDriveTrainSegmentsHaveThem) {
  const ChainParameters chain = six_masses();
  const ChainSegment segment(chain, 2, 4);
  ASSERT_EQ(segment.output_size(), 4u);
  const std::vector<std::string> chain_units = {"m", "m", "m/s", "m/s"};
  for (std::size_t o = 0; o < 4; ++o) EXPECT_EQ(segment.output_unit(o), chain_units[o]);
  expect_state_outputs_consistent(segment, "chain segment");

  DriveTrainParameters train;
  train.inertia = {0.5, 1.0};
  train.shaft = {ElementLaw{1.0e3, 1.0, 0.0, 0.0, 3.0, 3.0}};
  train.load.resize(2);
  train.angle0 = {0.0, 0.0};
  train.speed0 = {0.0, 0.0};
  const DriveTrainSegment drive(train);
  ASSERT_EQ(drive.output_size(), 4u);
  const std::vector<std::string> drive_units = {"rad", "rad", "rad/s", "rad/s"};
  for (std::size_t o = 0; o < 4; ++o) EXPECT_EQ(drive.output_unit(o), drive_units[o]);
  expect_state_outputs_consistent(drive, "drive-train segment");
}

// A model with its state units hidden: model::state_units derives them from the outputs.
class UndeclaredStateUnits final : public model::SubsystemView {
 public:
  using SubsystemView::SubsystemView;
  std::string state_unit(std::size_t) const override { return ""; }
};

// Every state and output of `s` described; every state's unit declared (but `unitless`, the
// states whose unit the model cannot know); and where the derivation from the outputs finds a
// unit for a state, it is the declared one (the two are written independently).
void expect_declared(const model::Subsystem& s, const std::set<std::string>& unitless) {
  for (std::size_t o = 0; o < s.output_size(); ++o) {
    EXPECT_FALSE(s.output_description(o).empty()) << s.output_name(o);
  }
  const UndeclaredStateUnits hidden(s);
  const std::vector<std::string> derived = model::state_units(hidden);
  const std::vector<std::string> units = model::state_units(s);
  ASSERT_EQ(units.size(), s.state_size());
  for (std::size_t j = 0; j < s.state_size(); ++j) {
    const std::string name = s.state_name(j);
    EXPECT_FALSE(s.state_description(j).empty()) << name;
    EXPECT_EQ(units[j], s.state_unit(j)) << name << ": a declared unit is the one results use";
    EXPECT_EQ(s.state_unit(j).empty(), unitless.contains(name)) << name;
    if (!derived[j].empty()) {
      EXPECT_EQ(derived[j], s.state_unit(j)) << name;
    }
  }
}

TEST_F(Units, EveryModelDescribesItsVariablesAndDeclaresItsStatesUnits) {
  for (const std::string& name : model_names()) {
    SCOPED_TRACE(name);
    const ModelEntry* entry = find_model(name);
    ASSERT_NE(entry, nullptr);
    ParameterValues values = values_of(*entry);
    if (name == "pid") {
      values.set("kd", 1.0);
      values.set("derivative_filter_time", 0.01);
      values.set("output_lag", 0.01);
    }
    if (has_unit_parameter(*entry)) values.set("unit", std::string("V"));
    const auto s = entry->build(values);
    // A PID's derivative filter holds the control error, whose unit the controller cannot know.
    expect_declared(
        *s, name == "pid" ? std::set<std::string>{"derivative_filter"} : std::set<std::string>{});
    if (name == "pid") {
      ASSERT_EQ(s->state_size(), 3u);  // integral, filter, lag: all present
      EXPECT_EQ(s->state_unit(0), "V");
    }
  }
  const ChainParameters chain = six_masses();
  const ChainSegment segment(chain, 2, 5);
  expect_declared(segment, {});
  EXPECT_EQ(segment.state_description(2), "position of mass 4");
  EXPECT_EQ(segment.output_description(3), "velocity of mass 5");

  DriveTrainParameters train;
  train.inertia = {0.5, 1.0, 2.0};
  train.shaft = {ElementLaw{1.0e3, 1.0, 0.0, 0.0, 3.0, 3.0},
                 ElementLaw{1.0e3, 1.0, 0.0, 0.0, 3.0, 3.0}};
  train.load.resize(3);
  train.angle0 = {0.0, 0.0, 0.0};
  train.speed0 = {0.0, 0.0, 0.0};
  const DriveTrainSegment drive(train);
  expect_declared(drive, {});
  EXPECT_EQ(drive.output_description(1), "angle of inertia 3");
}

// A state and an output of one name are one quantity: a result column names what it holds,
// whether the run writes outputs or (--all-states) states, and `compare` matches columns by name.
// Every model, with each number parameter whose default is 1 set to 1.7 where the model takes it
// (a gear ratio, a mass), at a state away from its initial one.
TEST_F(Units, AStateAndAnOutputOfOneNameHoldOneValue) {
  for (const std::string& name : model_names()) {
    SCOPED_TRACE(name);
    const ModelEntry* entry = find_model(name);
    ASSERT_NE(entry, nullptr);
    ParameterValues values = values_of(*entry);
    for (const ParameterSpec& p : entry->parameters) {
      if (p.required || p.type != ParameterType::kNumber) continue;
      if (std::get<double>(p.default_value) != 1.0) continue;
      ParameterValues moved = values;
      moved.set(p.name, 1.7);
      try {
        (void)entry->build(moved);
        values = moved;
      } catch (const std::exception&) {
      }
    }
    const auto s = entry->build(values);
    std::vector<double> u(s->input_size(), 0.25), z(s->state_size()), zp(s->state_size());
    s->initial_state(u, z, zp);
    for (std::size_t j = 0; j < z.size(); ++j) z[j] += 0.1 * static_cast<double>(j + 1);
    std::vector<double> y(s->output_size());
    s->outputs(0.0, z, u, y);
    for (std::size_t o = 0; o < y.size(); ++o) {
      for (std::size_t j = 0; j < z.size(); ++j) {
        if (s->state_name(j) != s->output_name(o)) continue;
        EXPECT_DOUBLE_EQ(y[o], z[j]) << s->output_name(o) << ": " << s->output_description(o)
                                     << " against the state " << s->state_description(j);
      }
    }
  }
}

}  // namespace
}  // namespace macrostep::library

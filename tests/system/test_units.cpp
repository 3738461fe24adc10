// Units of the coupled system's variables: every built-in coupling law's variables from the units
// of what it reads (CouplingLaw::variable_units), the coupling variables of a built system
// (CoupledSystem::coupling_unit), the state units derived from a model's outputs for a model that
// does not declare them (model::state_units), and every law's descriptions of its variables.
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "macrostep/library/belt_drive.hpp"
#include "macrostep/library/chain.hpp"
#include "macrostep/library/oscillator_mass.hpp"
#include "macrostep/library/pid_controller.hpp"
#include "macrostep/model/subsystem_view.hpp"
#include "macrostep/system/coupled_system.hpp"
#include "macrostep/system/displacement_law.hpp"
#include "macrostep/system/hydraulic_node_law.hpp"
#include "macrostep/system/joint_constraint_law.hpp"
#include "macrostep/system/law_registry.hpp"
#include "macrostep/system/signal_law.hpp"
#include "macrostep/system/spring_damper_law.hpp"
#include "macrostep/system/system_description.hpp"

namespace macrostep::system {
namespace {

using Units = std::vector<std::string>;

struct LawCase {
  std::function<std::unique_ptr<CouplingLaw>()> make;
  Units reads;     // the units of the outputs it reads
  Units expected;  // of its variables
};

const library::ElementLaw kElement{1.0e3, 1.0, 0.0, 0.0, 3.0, 3.0};

std::unique_ptr<CouplingLaw> spring_damper() {
  return std::make_unique<SpringDamperLaw>("lambda", kElement, OutputRef{0, 0}, OutputRef{0, 1},
                                           OutputRef{1, 0}, OutputRef{1, 1});
}

std::unique_ptr<CouplingLaw> joint() {
  return std::make_unique<JointConstraintLaw>("joint.lambda", "joint.mu", OutputRef{0, 0},
                                              OutputRef{0, 1}, OutputRef{1, 0}, OutputRef{1, 1});
}

std::unique_ptr<CouplingLaw> node() {
  HydraulicNodeLaw::Parameters p;
  p.node_volume = 1e-5;
  p.initial_pressure = 1e5;
  p.constant_modulus = 1e9;
  return std::make_unique<HydraulicNodeLaw>("p", p, std::vector<OutputRef>{{0, 2}, {1, 2}});
}

// One case per built-in law (the test fails for a law added without one).
const std::map<std::string, std::vector<LawCase>>& law_cases() {
  static const std::map<std::string, std::vector<LawCase>> cases = {
      {"spring_damper",
       {{spring_damper, {"m", "m/s", "m", "m/s"}, {"N"}}, {spring_damper, {"", "", "", ""}, {""}}}},
      {"rotational_spring_damper", {{spring_damper, {"rad", "rad/s", "rad", "rad/s"}, {"N m"}}}},
      {"signal",
       {{[] {
           return std::make_unique<SignalLaw>("u", OutputRef{0, 0}, 2.0);
         },
         {"V"},
         {"V"}}}},
      {"displacement",
       {{[] {
           return std::make_unique<DisplacementLaw>("x~", "v~", OutputRef{0, 0}, OutputRef{0, 1});
         },
         {"m", "m/s"},
         {"m", "m/s"}}}},
      {"hydraulic_node", {{node, {"m^3", "m^3"}, {"Pa"}}}},
      {"joint", {{joint, {"m", "m/s", "m", "m/s"}, {"N", "m/s"}}}},
  };
  return cases;
}

TEST(Units, EveryBuiltInLawNamesItsVariablesUnits) {
  for (const std::string& name : law_names()) {
    SCOPED_TRACE(name);
    const auto it = law_cases().find(name);
    ASSERT_NE(it, law_cases().end()) << "a built-in law without a unit case: " << name;
    for (const LawCase& c : it->second) {
      const auto law = c.make();
      ASSERT_EQ(c.reads.size(), law->reads().size());
      const Units units = law->variable_units(c.reads);
      ASSERT_EQ(units.size(), law->write_count());
      EXPECT_EQ(units, c.expected);
    }
  }
}

TEST(Units, EveryBuiltInLawDescribesItsVariables) {
  for (const std::string& name : law_names()) {
    SCOPED_TRACE(name);
    const auto it = law_cases().find(name);
    ASSERT_NE(it, law_cases().end());
    const auto law = it->second.front().make();
    const Units descriptions = law->variable_descriptions();
    ASSERT_EQ(descriptions.size(), law->write_count());
    for (const std::string& d : descriptions) EXPECT_FALSE(d.empty());
  }
  // The signal names its gain and offset where they change the value.
  EXPECT_EQ(SignalLaw("u", OutputRef{0, 0}, 2.0, 0.5).variable_descriptions(),
            Units{"signal: 2·(source output) + 0.5"});
  EXPECT_EQ(SignalLaw("u", OutputRef{0, 0}).variable_descriptions(),
            Units{"signal: the source output"});
}

library::OscillatorMassParameters mass(bool force_input) {
  library::OscillatorMassParameters p;
  p.mass = 1.0;
  p.stiffness = 1.0e3;
  p.force_input = force_input;
  return p;
}

TEST(Units, CoupledSystemTakesTheLawsUnitsFromTheOutputsTheyRead) {
  // Two masses joined by a spring/damper on their positions and velocities; the second one
  // driven by a signal of its own velocity (a damper by hand).
  std::vector<std::unique_ptr<model::Subsystem>> subsystems;
  subsystems.push_back(std::make_unique<library::OscillatorMass>(mass(true)));
  subsystems.push_back(std::make_unique<library::OscillatorMass>(mass(true)));
  std::vector<std::unique_ptr<CouplingLaw>> laws;
  laws.push_back(spring_damper());
  laws.push_back(std::make_unique<SignalLaw>("f", OutputRef{1, 1}, -0.5));
  const CoupledSystem s(std::move(subsystems), std::move(laws), {{0}, {1}}, {});
  ASSERT_EQ(s.coupling_count(), 2u);
  EXPECT_EQ(s.coupling_unit(0), "N");
  EXPECT_EQ(s.coupling_unit(1), "m/s");  // its source's (a gain is not seen)
}

// A model as one that declares no state units (a plugin's that does not override state_unit).
class WithoutStateUnits final : public model::SubsystemView {
 public:
  using SubsystemView::SubsystemView;
  std::string state_unit(std::size_t) const override { return ""; }
};

TEST(Units, UndeclaredStatesTakeTheirOutputsUnitsOrThoseOfTheirRole) {
  // A chain segment's middle masses are no outputs: their role's unit.
  library::ChainParameters chain;
  chain.mass.assign(6, 1.0);
  chain.element.assign(7, kElement);
  chain.forces.resize(6);
  chain.x0.assign(6, 0.0);
  chain.v0.assign(6, 0.0);
  const library::ChainSegment segment(chain, 1, 5);
  const Units chain_units = model::state_units(WithoutStateUnits(segment));
  ASSERT_EQ(chain_units.size(), 8u);
  for (std::size_t j = 0; j < 8; ++j) {
    EXPECT_EQ(chain_units[j], j % 2 == 0 ? "m" : "m/s") << segment.state_name(j);
  }
  // The belt drive's positions are angles and a length: each by its output of the same name.
  library::BeltDriveParameters belt;
  belt.driver_inertia = belt.driven_inertia = 0.01;
  belt.driver_radius = belt.driven_radius = 0.05;
  belt.span_stiffness = 1.0e5;
  belt.idler_mass = 0.1;
  const library::BeltDrive drive(belt);
  EXPECT_EQ(model::state_units(WithoutStateUnits(drive)),
            (Units{"rad", "rad/s", "rad", "rad/s", "m", "m/s"}));
  // A controller's integral is no output and has no position or velocity role: "".
  library::PidParameters pid;
  pid.ki = 1.0;
  pid.unit = "V";
  pid.output_lag = 0.01;
  const library::PidController controller(pid);
  const Units pid_units = model::state_units(WithoutStateUnits(controller));
  ASSERT_EQ(pid_units.size(), controller.state_size());
  for (std::size_t j = 0; j < pid_units.size(); ++j) {
    EXPECT_EQ(pid_units[j], controller.state_name(j) == "command" ? "V" : "")
        << controller.state_name(j);
  }
}

}  // namespace
}  // namespace macrostep::system

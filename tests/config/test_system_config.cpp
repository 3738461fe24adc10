// [[subsystem]] / [[connection]] descriptions: what a valid file becomes (names,
// models, laws, which outputs are read and which inputs fed) and the CoupledSystem built from it.
// The rejected cases are in the bad-config corpus (tests/config/bad/system_*.toml).
#include <gtest/gtest.h>

#include <string>
#include <variant>
#include <vector>

#include "macrostep/config/run_config.hpp"
#include "macrostep/system/hydraulic_node_law.hpp"
#include "macrostep/system/signal_law.hpp"
#include "macrostep/system/spring_damper_law.hpp"
#include "macrostep/system/system_description.hpp"

namespace {

using namespace macrostep;

config::RunConfig drivetrain() {
  return config::load_config(std::string(MACROSTEP_SOURCE_DIR) + "/configs/drivetrain.toml");
}

TEST(SystemConfig, DrivetrainExampleBecomesItsDescription) {
  const config::RunConfig c = drivetrain();
  ASSERT_TRUE(c.system_description.has_value());
  const system::SystemDescription& d = *c.system_description;
  ASSERT_EQ(d.subsystems.size(), 3U);
  EXPECT_EQ(d.subsystems[0].name, "motor");
  EXPECT_EQ(d.subsystems[2].name, "pi");
  const auto& load = std::get<library::DriveTrainParameters>(d.subsystems[1].model);
  EXPECT_EQ(load.inertia, (std::vector<double>{0.02, 0.5}));
  EXPECT_FALSE(load.right_coupled);
  EXPECT_DOUBLE_EQ(load.load[1].step, -5.0);
  EXPECT_DOUBLE_EQ(
      std::get<library::RegisteredModel>(d.subsystems[2].model).values.number("output_lag"), 0.005);
  EXPECT_EQ(config::subsystem_count(c), 3U);
  EXPECT_NO_THROW(config::check_cosimulation(c));

  ASSERT_EQ(d.connections.size(), 3U);
  const system::DescribedConnection& shaft = d.connections[0];
  EXPECT_EQ(shaft.law, "rotational_spring_damper");
  EXPECT_DOUBLE_EQ(
      system::law_parameters<system::SpringDamperParameters>(*shaft.parameters, shaft.law)
          .element.c,
      500.0);
  // motor.phi_2 is output 1 of a drive train (phi_1, phi_n, omega_1, omega_n); load.phi_1 is 0.
  ASSERT_EQ(shaft.from.size(), 4U);
  EXPECT_EQ(shaft.from[0].subsystem, 0U);
  EXPECT_EQ(shaft.from[0].output, 1U);
  EXPECT_EQ(shaft.from[3].subsystem, 1U);
  EXPECT_EQ(shaft.from[3].output, 2U);
  ASSERT_EQ(shaft.to.size(), 1U);  // one variable, feeding two inputs
  ASSERT_EQ(shaft.to[0].size(), 2U);
  EXPECT_EQ(shaft.to[0][0].subsystem, 0U);  // motor.tau_right: its second input
  EXPECT_EQ(shaft.to[0][0].input, 1U);
  EXPECT_EQ(shaft.to[0][1].subsystem, 1U);  // load.tau_left
  EXPECT_EQ(shaft.to[0][1].input, 0U);
  EXPECT_DOUBLE_EQ(
      system::law_parameters<system::SignalParameters>(*d.connections[2].parameters, "signal").gain,
      -1.0);
}

TEST(SystemConfig, BuiltSystemWiresEveryInputAndMonitorsStateOutputs) {
  const system::CoupledSystem s = system::build_system(*drivetrain().system_description);
  ASSERT_EQ(s.coupling_count(), 3U);
  EXPECT_EQ(s.coupling_name(0), "shaft");
  EXPECT_EQ(s.coupling_name(2), "torque");
  // motor: [tau_left, tau_right] = [torque, shaft]; load: [tau_left] = [shaft]; pi: [speed].
  EXPECT_EQ(std::vector<std::size_t>(s.feed_channels(0).begin(), s.feed_channels(0).end()),
            (std::vector<std::size_t>{2, 0}));
  EXPECT_EQ(std::vector<std::size_t>(s.feed_channels(1).begin(), s.feed_channels(1).end()),
            (std::vector<std::size_t>{0}));
  EXPECT_EQ(std::vector<std::size_t>(s.feed_channels(2).begin(), s.feed_channels(2).end()),
            (std::vector<std::size_t>{1}));
  // The read outputs that are one state: positions, velocities, and pi.command, the controller's
  // output lag (a state of role other, whose derivative takes the input: watched as a velocity
  // is, METHODS §5.1).
  std::vector<std::string> names;
  for (const auto& m : s.monitored_outputs()) names.push_back(m.name);
  EXPECT_EQ(names, (std::vector<std::string>{"motor.phi_2", "motor.omega_2", "load.phi_1",
                                             "load.omega_1", "load.omega_2", "pi.command"}));
  EXPECT_EQ(s.monitored_outputs()[0].group, control::WeightGroup::kPosition);
  EXPECT_EQ(s.monitored_outputs()[1].group, control::WeightGroup::kVelocity);
  EXPECT_EQ(s.monitored_outputs()[5].group, control::WeightGroup::kVelocity);
}

// The other laws: a hydraulic node shared by two cylinders (pressure-dependent bulk modulus), a
// closed chamber each, a spring/damper from one rod to the other, and a displacement law that
// feeds a controller's measured value and setpoint.
TEST(SystemConfig, HydraulicSpringAndDisplacementLaws) {
  const std::string text = R"(
[[subsystem]]
name = "c1"
model = "hydraulic_cylinder"
mass = 5.0
area_a = 1e-3
area_b = 5e-4

[[subsystem]]
name = "c2"
model = "hydraulic_cylinder"
mass = 8.0
area_a = 2e-3
area_b = 1e-3
rod_coupled = false

[[subsystem]]
name = "ctl"
model = "pid"
kp = 1.0
output_lag = 0.1
setpoint_input = true

[[connection]]
name = "line"
law = "hydraulic_node"
from = ["c1.volume_a", "c2.volume_a"]
to = ["c1.pressure_a", "c2.pressure_a"]
volume = 1e-3
initial_pressure = 1e6
bulk_modulus = "pressure_dependent"
modulus_a = 1.6e9
modulus_b = 0.5
modulus_c = -2.0

[[connection]]
name = "b1"
law = "hydraulic_node"
from = "c1.volume_b"
to = "c1.pressure_b"
volume = 1e-3
initial_pressure = 1e6
modulus = 1e9

[[connection]]
name = "b2"
law = "hydraulic_node"
from = ["c2.volume_b"]
to = "c2.pressure_b"
volume = 1e-3
initial_pressure = 1e6
modulus = 1e9

[[connection]]
name = "rod"
law = "spring_damper"
from = ["c1.x", "c1.v", "c2.x", "c2.v"]
to = "c1.rod_force"
c = 1e4

[[connection]]
name = "probe"
law = "displacement"
from = ["c2.x", "c2.v"]
to = {position = "ctl.measured", velocity = ["ctl.setpoint"]}

[[connection]]
name = "unused_command"
law = "signal"
from = "ctl.command"
to = []

[simulation]
end_time = 0.1
output_interval = 0.01
)";
  // A connection must feed at least one input.
  try {
    config::parse_config(text, "laws.toml");
    FAIL() << "a connection feeding nothing was accepted";
  } catch (const config::ConfigError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("laws.toml:", 0), 0U);
    EXPECT_NE(std::string(e.what()).find("connection[6].to: must name at least one input"),
              std::string::npos)
        << e.what();
  }
  // Without it the controller's output is read by nothing, which is allowed: it is coupled
  // through its inputs.
  const std::string valid = text.substr(0, text.find("[[connection]]\nname = \"unused_command\"")) +
                            text.substr(text.find("[simulation]"));
  const config::RunConfig c = config::parse_config(valid, "laws.toml");
  const system::SystemDescription& d = *c.system_description;
  ASSERT_EQ(d.connections.size(), 5U);
  const auto& node = system::law_parameters<system::HydraulicNodeConnection>(
                         *d.connections[0].parameters, "hydraulic_node")
                         .node;
  EXPECT_EQ(node.model, system::HydraulicNodeLaw::Model::kPressureDependent);
  EXPECT_DOUBLE_EQ(node.pressure_dependent.c, -2.0);
  EXPECT_EQ(d.connections[0].from.size(), 2U);
  EXPECT_EQ(system::coupling_names(d.connections[4]),
            (std::vector<std::string>{"probe.position", "probe.velocity"}));
  const system::CoupledSystem s = system::build_system(d);
  EXPECT_EQ(s.coupling_count(), 6U);  // line, b1, b2, rod, probe.position, probe.velocity
  EXPECT_EQ(s.coupling_name(5), "probe.velocity");
  // The initial pressure of the shared node is p0 (volumes at V_i⁰ = 0).
  EXPECT_DOUBLE_EQ(s.initial_couplings()[0], 1e6);
}

// Solver keys in a [[subsystem]]: they replace [solver]'s for that subsystem only; a
// key it does not give keeps [solver]'s, and an atol neither gives follows the subsystem's rtol.
TEST(SystemConfig, SubsystemSolverKeysOverrideTheSolverTable) {
  std::string text = drivetrain().text;
  const std::string anchor = "name = \"load\"\nmodel = \"drive_train\"\n";
  ASSERT_NE(text.find(anchor), std::string::npos);
  text.insert(text.find(anchor) + anchor.size(),
              "rtol = 1e-5\nlinear_solver = \"dense\"\nmax_order = 3\n");
  text.replace(text.find("[solver]\nrtol = 1e-8\n"), std::string("[solver]\nrtol = 1e-8\n").size(),
               "[solver]\nrtol = 1e-8\natol_vel = 2e-7\n");
  const config::RunConfig c = config::parse_config(text, "own.toml");
  ASSERT_EQ(c.subsystem_solvers.size(), 3U);
  EXPECT_TRUE(c.subsystem_solvers[0].empty());
  EXPECT_TRUE(c.subsystem_solvers[2].empty());
  const config::SolverOverride& own = c.subsystem_solvers[1];
  EXPECT_EQ(own.rtol, 1e-5);
  EXPECT_EQ(own.linear_solver, ida::LinearSolver::kDense);
  EXPECT_EQ(own.max_order, 3);
  EXPECT_FALSE(own.atol_pos.has_value());
  const config::SolverConfig load = config::with_override(c.solver, own);
  EXPECT_EQ(load.rtol, 1e-5);
  EXPECT_DOUBLE_EQ(load.effective_atol_pos(), 1e-8);  // follows the subsystem's rtol
  EXPECT_EQ(load.effective_atol_vel(), 2e-7);         // [solver]'s, given there
  EXPECT_EQ(load.max_steps, c.solver.max_steps);
  EXPECT_EQ(c.solver.rtol, 1e-8);  // [solver] itself unchanged
  EXPECT_EQ(c.solver.linear_solver, ida::LinearSolver::kKlu);
  // A chain has none.
  EXPECT_TRUE(config::load_config(std::string(MACROSTEP_SOURCE_DIR) + "/configs/demo.toml")
                  .subsystem_solvers.empty());
}

}  // namespace

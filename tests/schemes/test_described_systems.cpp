// Co-simulation of systems described with [[subsystem]] / [[connection]] against the
// monolithic run of the same description (system::MonolithicSystem, METHODS.md §1.1 Eq. 2.4):
//  - a branched system: one drive-train segment coupled to three others (a motor segment and a
//    load segment through shafts, a PI controller through its measured speed);
//  - a closed loop: three drive-train segments in a ring of shafts.
// With a fixed macro step H and kappa = 1 the explicit Jacobi scheme is globally O(H^(kappa+1)) =
// O(H^2) (seed 000 §3, METHODS §3.1), so halving H must divide the error by about 4.
// The whole `macrostep run` path (columns, files) is checked on configs/drivetrain.toml.
#include <gtest/gtest.h>

#include <unistd.h>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "macrostep/config/run_config.hpp"
#include "macrostep/executors/in_process_executor.hpp"
#include "macrostep/ida/integrator.hpp"
#include "macrostep/run/cosimulation.hpp"
#include "macrostep/run/monolithic.hpp"
#include "macrostep/schemes/implicit.hpp"
#include "macrostep/system/monolithic_system.hpp"
#include "macrostep/system/system_description.hpp"
#include "verification_support.hpp"

namespace {

using namespace macrostep;

// Run settings shared by both systems (the [simulation] table is required but unused here).
constexpr const char* kCommon = R"(
[simulation]
end_time = 0.05
output_interval = 1e-3
)";

// A hub segment between a motor and a load segment; a PI controller measures the hub's speed and
// drives the motor (gain -1: a left end takes -tau_left).
constexpr const char* kBranched = R"(
[[subsystem]]
name = "motor"
model = "drive_train"
inertia = [0.02, 0.01]
shaft = [{c = 800.0, d = 0.2}]
speed0 = [2.0, 2.0]

[[subsystem]]
name = "hub"
model = "drive_train"
inertia = [0.01, 0.015]
shaft = [{c = 600.0, d = 0.1}]
speed0 = [2.0, 2.0]

[[subsystem]]
name = "load"
model = "drive_train"
inertia = [0.03]
right_coupled = false
bearing_damping = [0.05]
load = [{inertia = 1, step = -1.0, step_time = 0.01, step_width = 0.005}]
speed0 = [2.0]

[[subsystem]]
name = "pi"
model = "pid"
kp = 0.5
ki = 5.0
setpoint = 3.0
output_lag = 0.01

[[connection]]
name = "shaft_in"
law = "rotational_spring_damper"
from = ["motor.phi_2", "motor.omega_2", "hub.phi_1", "hub.omega_1"]
to = ["motor.tau_right", "hub.tau_left"]
c = 400.0
d = 0.1

[[connection]]
name = "shaft_out"
law = "rotational_spring_damper"
from = ["hub.phi_2", "hub.omega_2", "load.phi_1", "load.omega_1"]
to = ["hub.tau_right", "load.tau_left"]
c = 500.0
d = 0.1

[[connection]]
name = "speed"
law = "signal"
from = "hub.omega_2"
to = "pi.measured"

[[connection]]
name = "torque"
law = "signal"
from = "pi.command"
to = "motor.tau_left"
gain = -1.0
)";

// Three segments joined into a ring by three shafts (a closed loop of couplings).
constexpr const char* kRing = R"(
[[subsystem]]
name = "a"
model = "drive_train"
inertia = [0.02, 0.01]
shaft = [{c = 700.0, d = 0.1}]
speed0 = [3.0, 3.0]
load = [{inertia = 1, constant = 0.5}]

[[subsystem]]
name = "b"
model = "drive_train"
inertia = [0.015, 0.02]
shaft = [{c = 500.0, d = 0.1}]
bearing_damping = [0.02, 0.0]

[[subsystem]]
name = "c"
model = "drive_train"
inertia = [0.01, 0.025]
shaft = [{c = 900.0, d = 0.1}]
angle0 = [0.01, 0.0]
load = [{inertia = 2, step = -0.5, step_time = 0.02, step_width = 0.005}]

[[connection]]
name = "ab"
law = "rotational_spring_damper"
from = ["a.phi_2", "a.omega_2", "b.phi_1", "b.omega_1"]
to = ["a.tau_right", "b.tau_left"]
c = 400.0
d = 0.05

[[connection]]
name = "bc"
law = "rotational_spring_damper"
from = ["b.phi_2", "b.omega_2", "c.phi_1", "c.omega_1"]
to = ["b.tau_right", "c.tau_left"]
c = 450.0
d = 0.05

[[connection]]
name = "ca"
law = "rotational_spring_damper"
from = ["c.phi_2", "c.omega_2", "a.phi_1", "a.omega_1"]
to = ["c.tau_right", "a.tau_left"]
c = 350.0
d = 0.05
)";

constexpr double kEnd = 0.04;

ida::IntegratorOptions tight() {
  ida::IntegratorOptions o;
  o.rtol = 1e-11;
  o.atol_pos = 1e-14;
  o.atol_vel = 1e-11;
  return o;
}

system::SystemDescription describe(const char* text, const char* name) {
  const config::RunConfig c = config::parse_config(std::string(text) + kCommon, name);
  EXPECT_TRUE(c.system_description.has_value());
  return *c.system_description;
}

// Every subsystem state at kEnd of the monolithic run, in MonolithicSystem order.
std::vector<double> monolithic_state(const system::CoupledSystem& sys) {
  const system::MonolithicSystem whole(sys);
  ida::Integrator integrator(whole, tight());
  integrator.advance_to(kEnd);
  std::vector<double> z(whole.state_size()), zp(z.size());
  integrator.state(z, zp);
  z.resize(whole.coupling_offset());  // the subsystems' states, without the coupling unknowns
  return z;
}

// Largest state difference at kEnd of a fixed-H, kappa = 1 co-simulation against `reference`,
// relative to the largest reference state.
double cosim_error(const system::CoupledSystem& sys, const std::vector<double>& reference, double h,
                   bool implicit) {
  schemes::SchemeOptions o;
  o.control.mode = control::StepSizeMode::kFixed;
  o.control.t_end = kEnd;
  o.control.h = h;
  o.control.kappa_fixed = 1;
  o.control.estimator = control::Estimator::kNone;
  if (implicit) {
    o.corrector = corrector::CorrectorOptions{};
    // The corrector's convergence weights: tight, so that the corrector error stays below the
    // coupling error being measured.
    o.control.tolerances.rtol = 1e-9;
    o.control.tolerances.atol_pos = 1e-12;
    o.control.tolerances.atol_vel = 1e-9;
    o.control.tolerances.atol_u = 1e-9;
  }
  executors::InProcessOptions eo;
  eo.solver = tight();
  eo.rollback = schemes::needs_rollback(o);
  eo.threads = 1;
  executors::InProcessExecutor ex(sys, sys.initial_couplings(), eo);
  const auto scheme = schemes::make_scheme(o);
  schemes::SchemeResult result;
  double reached = 0.0;
  schemes::run_scheme(
      sys, ex, *scheme, o, [&](const schemes::AcceptedPoint& p) { reached = p.time; },
      [](const schemes::StepRecord&) {}, result);
  EXPECT_NEAR(reached, kEnd, 1e-12);
  const std::vector<double> z = verification::chain_state(sys, ex);  // subsystem blocks in order
  EXPECT_EQ(z.size(), reference.size());
  double diff = 0.0, scale = 0.0;
  for (std::size_t i = 0; i < z.size(); ++i) {
    diff = std::max(diff, std::abs(z[i] - reference[i]));
    scale = std::max(scale, std::abs(reference[i]));
  }
  return diff / scale;
}

// The errors at H, H/2, H/4 and the observed order (log-log slope).
void expect_second_order(const char* text, const char* name, double h) {
  const system::CoupledSystem sys = system::build_system(describe(text, name));
  const std::vector<double> reference = monolithic_state(sys);
  std::vector<double> hs, errors;
  for (double step : {h, h / 2, h / 4}) {
    hs.push_back(step);
    errors.push_back(cosim_error(sys, reference, step, false));
  }
  const double order = verification::loglog_slope(hs, errors);
  EXPECT_GT(order, 1.7) << name << ": errors " << errors[0] << ", " << errors[1] << ", "
                        << errors[2];
  EXPECT_LT(order, 2.4) << name << ": errors " << errors[0] << ", " << errors[1] << ", "
                        << errors[2];
  EXPECT_LT(errors.back(), 1e-3) << name;  // and small: the two runs describe one system
}

TEST(DescribedSystems, BranchedSystemConvergesToItsMonolithicRunAtSecondOrder) {
  expect_second_order(kBranched, "branched.toml", 1e-3);
}

TEST(DescribedSystems, RingConvergesToItsMonolithicRunAtSecondOrder) {
  // Stiffer shafts relative to the inertias than the branched system: a smaller H reaches the
  // asymptotic range.
  expect_second_order(kRing, "ring.toml", 2.5e-4);
}

// The implicit scheme (Newton corrector with the fd interface Jacobian, METHODS §4.1-4.3) runs on
// a described system: on the ring, whose couplings are stiff shafts, it is closer to the
// monolithic run than the explicit scheme at the same H and kappa, and its error also falls
// with H^2 (kappa = 1).
TEST(DescribedSystems, ImplicitSchemeRunsTheRing) {
  const system::CoupledSystem sys = system::build_system(describe(kRing, "ring.toml"));
  const std::vector<double> reference = monolithic_state(sys);
  const double explicit_error = cosim_error(sys, reference, 5e-4, false);
  const double implicit_error = cosim_error(sys, reference, 5e-4, true);
  const double implicit_half = cosim_error(sys, reference, 2.5e-4, true);
  EXPECT_LT(implicit_error, 0.5 * explicit_error);
  EXPECT_GT(implicit_error / implicit_half, 3.0);
  EXPECT_LT(implicit_error / implicit_half, 5.5);
}

// `macrostep run` and `macrostep run --monolithic` of configs/drivetrain.toml: the same columns
// (every output as <subsystem>.<output>, then the coupling variables named after their
// connections) and final values close to each other.
TEST(DescribedSystems, DrivetrainExampleRunsAndMatchesItsMonolithicRun) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("macrostep_drivetrain_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const config::RunConfig c =
      config::load_config(std::string(MACROSTEP_SOURCE_DIR) + "/configs/drivetrain.toml");
  run::CosimOptions co;
  co.output_file = (dir / "cosim.csv").string();
  co.stop_time = 0.7;                              // past the load step at 0.5 s
  co.executor = config::ExecutorKind::kInProcess;  // this test binary is no worker executable
  co.progress = run::MonolithicOptions::Progress::kNever;
  const run::CosimResult cosim = run::run_cosimulation(c, co);
  run::MonolithicOptions mo;
  mo.output_file = (dir / "mono.csv").string();
  mo.stop_time = cosim.final_time;
  mo.progress = run::MonolithicOptions::Progress::kNever;
  const run::MonolithicResult mono = run::run_monolithic(c, mo);
  std::filesystem::remove_all(dir);

  EXPECT_EQ(cosim.columns, mono.columns);
  ASSERT_EQ(cosim.coupling_count, 3U);
  const std::vector<std::string> couplings(cosim.columns.end() - 3, cosim.columns.end());
  EXPECT_EQ(couplings, (std::vector<std::string>{"shaft", "speed", "torque"}));
  EXPECT_EQ(cosim.columns.front(), "motor.phi_1");
  ASSERT_EQ(cosim.final_values.size(), mono.final_values.size());
  EXPECT_NEAR(cosim.final_time, 0.7, 1e-12);
  for (std::size_t j = 0; j < cosim.columns.size(); ++j) {
    EXPECT_NEAR(cosim.final_values[j], mono.final_values[j],
                1e-2 * (1.0 + std::abs(mono.final_values[j])))
        << cosim.columns[j];
  }
}

}  // namespace

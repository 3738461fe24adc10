// Co-Simulation FMUs as subsystems (subsystems/fmu): a step of the FMU is its own solver's and
// rolls back from its saved state, FMI 3 steps as FMI 2, an FMU that cannot save its state goes
// forward only, and the two-mass oscillator as two Co-Simulation FMUs agrees with the Model
// Exchange pair (test_fmu.cpp) in both executors.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "../support/read_file.hpp"
#include "fmu_test_support.hpp"
#include "macrostep/fmu/fmu.hpp"
#include "macrostep/ida/integrator.hpp"

namespace macrostep {
namespace {

using macrostep::testing::read_file;
using namespace fmu_testing;

namespace fs = std::filesystem;

// The oscillator as a Co-Simulation FMU (Runge-Kutta inside) under a constant force F, from rest
// without damping: x = F/c (1 - cos ωt), to Runge-Kutta's error; restored, the same bits.
TEST(FmuCoSimulation, AStepOfTheFmuIsItsOwnSolversAndRollsBack) {
  const auto fmu = load("oscillator_cs", R"({"m": 2.0, "c": 50.0})");
  EXPECT_EQ(fmu->state_size(), 0u);
  ASSERT_NE(fmu->events(), nullptr);
  EXPECT_TRUE(fmu->events()->advances_itself());
  struct Force final : model::InputFunction {
    void evaluate(double, std::span<double> u) const override { u[0] = 3.0; }
  } force;
  ida::Integrator integrator(*fmu, ida::IntegratorOptions{}, &force);
  const double omega = 5.0;
  std::unique_ptr<ida::WorkspaceSnapshot> at_half;
  std::vector<double> y(2), y_half(2);
  for (int k = 1; k <= 40; ++k) {
    const double t = 0.025 * k;
    EXPECT_EQ(integrator.advance_to(t).steps, 1);
    integrator.outputs(y);
    EXPECT_NEAR(y[0], 3.0 / 50.0 * (1.0 - std::cos(omega * t)), 1e-10) << "t = " << t;
    EXPECT_NEAR(y[1], 3.0 / 50.0 * omega * std::sin(omega * t), 1e-9) << "t = " << t;
    if (k == 20) at_half = integrator.make_snapshot();
  }
  const std::vector<double> end = y;
  integrator.restore(*at_half);
  for (int k = 21; k <= 40; ++k) integrator.advance_to(0.025 * k);
  integrator.outputs(y);
  EXPECT_EQ(y, end) << "the FMU's state rolls back with the workspace";
}

// FMI 3 has no input derivatives: its step holds the input constant. Under a constant force the
// FMI 3 FMU is the FMI 2 one bit for bit.
TEST(FmuCoSimulation, TheFmi3FmuStepsAsTheFmi2One) {
  struct Force final : model::InputFunction {
    void evaluate(double, std::span<double> u) const override { u[0] = 3.0; }
  } force;
  std::vector<std::vector<double>> outputs[2];
  const char* names[2] = {"oscillator_cs", "oscillator3_cs"};
  for (int version = 0; version < 2; ++version) {
    const auto fmu = load(names[version], R"({"m": 2.0, "c": 50.0})");
    ida::Integrator integrator(*fmu, ida::IntegratorOptions{}, &force);
    for (int k = 1; k <= 20; ++k) {
      integrator.advance_to(0.05 * k);
      std::vector<double> y(2);
      integrator.outputs(y);
      outputs[version].push_back(y);
    }
  }
  EXPECT_EQ(outputs[0], outputs[1]);
  EXPECT_NEAR(outputs[1].back()[0], 3.0 / 50.0 * (1.0 - std::cos(5.0)), 1e-10);
}

TEST(FmuCoSimulation, WithoutItsStateAsBytesTheFmuStepsForwardOnly) {
  const auto live = load("oscillator_cs_no_state", R"({"m": 2.0, "c": 50.0})");
  ASSERT_NE(live->events(), nullptr);
  EXPECT_FALSE(live->events()->restorable());
  const auto saved = load("oscillator_cs", R"({"m": 2.0, "c": 50.0})");
  struct Force final : model::InputFunction {
    void evaluate(double, std::span<double> u) const override { u[0] = 3.0; }
  } force;
  ida::Integrator a(*live, ida::IntegratorOptions{}, &force),
      b(*saved, ida::IntegratorOptions{}, &force);
  for (int k = 1; k <= 10; ++k) {
    a.advance_to(0.05 * k);
    b.advance_to(0.05 * k);
  }
  std::vector<double> ya(2), yb(2);
  a.outputs(ya);
  b.outputs(yb);
  EXPECT_EQ(ya, yb) << "the same steps, with and without saving the state";
  // An interface the FMU does not have, asked for by the configuration.
  EXPECT_NE(refusal({fmu_file("oscillator"), "{}", {}, {}, "co-simulation"})
                .find("interface = \"co-simulation\": the FMU has no <CoSimulation> interface"),
            std::string::npos);
  EXPECT_NE(refusal({fmu_file("oscillator_cs"), "{}", {}, {}, "model-exchange"})
                .find("the FMU has no <ModelExchange> interface"),
            std::string::npos);
  const fs::path dir = temp_dir("interface");
  const auto config = write_fmu_pair(dir, "");
  std::string text = read_file(config);
  text.replace(text.find("parameters = {m = 1.0"), 0, "interface = \"bogus\"\n");
  std::ofstream(config) << text;
  const AppRun r = macrostep("run " + config.string());
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("must be \"model-exchange\" or \"co-simulation\" (got \"bogus\")"),
            std::string::npos)
      << r.output;
  fs::remove_all(dir);
}

// The two-mass oscillator as two Co-Simulation FMUs: the Model Exchange pair's results (the
// inputs are held with their slope over each step instead of the whole polynomial), the same
// bytes in both executors, with step-size control (rejected steps redone from the saved FMU
// state) and with the implicit scheme.
TEST(FmuCoSimulation, TwoMassOscillatorAsCoSimulationFmusAgreesWithTheModelExchangeOnes) {
  const fs::path dir = temp_dir("cs");
  const std::string fixed = "[cosim]\nestimator = \"none\"\nstep_size = 1e-3\norder = 2\n";
  for (const std::string fmu : {"oscillator", "oscillator_cs"}) {
    const auto config = write_fmu_pair(dir, fixed, "", fmu);
    const AppRun r =
        macrostep("run " + config.string() + " --output " + (dir / (fmu + "-fixed.csv")).string());
    ASSERT_EQ(r.status, 0) << r.output;
  }
  const double difference =
      largest_relative_difference(dir / "oscillator_cs-fixed.csv", dir / "oscillator-fixed.csv");
  std::cout << "explicit, H = 1e-3: largest difference Co-Simulation vs Model Exchange "
            << difference << "\n";
  EXPECT_LT(difference, 1e-3);
  for (const std::string cosim : {"[cosim]\nrtol = 1e-5\n", "[cosim]\nscheme = \"implicit\"\n"}) {
    const auto config = write_fmu_pair(dir, cosim, "", "oscillator_cs");
    for (const char* executor : {"inprocess", "processes"}) {
      const AppRun r = macrostep("run " + config.string() + " --executor " + executor +
                                 " --output " + (dir / (std::string(executor) + ".csv")).string());
      ASSERT_EQ(r.status, 0) << r.output;
    }
    EXPECT_TRUE(read_file(dir / "inprocess.csv") == read_file(dir / "processes.csv"))
        << cosim << ": the executors' CSV files differ";
    EXPECT_GT(read_csv(dir / "inprocess.csv").size(), 20u);
  }
  // No equations for one IDA: the monolithic run and the reference are refused, naming it.
  const auto config = write_fmu_pair(dir, fixed, "", "oscillator_cs").string();
  for (const std::string& command : {"run " + config + " --monolithic", "reference " + config}) {
    const AppRun r = macrostep(command);
    EXPECT_EQ(r.status, 2) << command << "\n" << r.output;
    EXPECT_NE(r.output.find("subsystem \"m1\" advances itself (a Co-Simulation FMU)"),
              std::string::npos)
        << r.output;
  }
  // No dense output inside its steps: rows on the output grid are refused, naming it.
  const AppRun grid = macrostep("run " + config + " --set output.rows=grid");
  EXPECT_EQ(grid.status, 2) << grid.output;
  EXPECT_NE(grid.output.find("subsystem \"m1\" (a Co-Simulation FMU) has them only at the ends"),
            std::string::npos)
      << grid.output;
  fs::remove_all(dir);
}

// A Co-Simulation FMU without canHandleVariableCommunicationStepSize takes one step length: a
// controlled run and an end time that is not a whole number of steps are refused before they
// start; a fixed-step run takes H from the first step on (no start-up ramp).
TEST(FmuCoSimulation, OneCommunicationStepSizeRunsOnlyWithAFixedStepFromTheStart) {
  const fs::path dir = temp_dir("cs-fixed-step");
  const auto config = write_fmu_pair(dir, "", "", "oscillator_cs_fixed_step").string();
  const AppRun controlled = macrostep("run " + config + " --output " + (dir / "c.csv").string());
  EXPECT_EQ(controlled.status, 2) << controlled.output;
  EXPECT_NE(controlled.output.find("subsystem \"m1\" is a Co-Simulation FMU without "
                                   "canHandleVariableCommunicationStepSize: every step it takes "
                                   "must have one length; give a fixed macro step"),
            std::string::npos)
      << controlled.output;
  EXPECT_FALSE(fs::exists(dir / "c.csv"));
  const AppRun uneven = macrostep("run " + config + " --estimator none --step-size 3e-3 --output " +
                                  (dir / "u.csv").string());
  EXPECT_EQ(uneven.status, 2) << uneven.output;
  EXPECT_NE(uneven.output.find("is not a whole number of steps H = 0.003 s"), std::string::npos)
      << uneven.output;
  const AppRun fixed = macrostep("run " + config + " --estimator none --step-size 1e-3 --order 1 " +
                                 "--output " + (dir / "f.csv").string());
  ASSERT_EQ(fixed.status, 0) << fixed.output;
  const auto steps = read_csv(dir / "f.steps.csv");
  ASSERT_FALSE(steps.empty());
  for (const auto& row : steps) EXPECT_NEAR(row[2], 1e-3, 1e-15) << "attempt " << row[0];
  // Beside it a step source's time event cannot be a macro point: the run says so.
  std::ofstream(dir / "beside.toml")
      << "[[subsystem]]\nname = \"m1\"\nmodel = \"fmu\"\npath = \"oscillator_cs_fixed_step.fmu\"\n"
      << "[[subsystem]]\nname = \"m2\"\nmodel = \"oscillator_mass\"\nforce_input = true\n"
      << "force_sign = -1.0\n[[subsystem]]\nname = \"push\"\nmodel = \"step\"\nfinal = 1.0\n"
      << "time = 0.05\n[[subsystem]]\nname = \"scale\"\nmodel = \"gain\"\nk = 2.0\n"
      << "[[connection]]\nname = \"coupling\"\nlaw = \"spring_damper\"\n"
      << "from = [\"m1.x\", \"m1.v\", \"m2.x\", \"m2.v\"]\nto = [\"m1.force\", \"m2.force\"]\n"
      << "c = 400.0\n[[connection]]\nname = \"p\"\nlaw = \"signal\"\nfrom = \"push.y\"\n"
      << "to = \"scale.u\"\n[simulation]\nend_time = 0.1\noutput_interval = 1e-3\n";
  const AppRun beside =
      macrostep("run " + (dir / "beside.toml").string() +
                " --estimator none --step-size 1e-3 --output " + (dir / "b.csv").string());
  ASSERT_EQ(beside.status, 0) << beside.output;
  EXPECT_NE(beside.output.find("the time events of subsystem \"push\" fall inside macro steps in "
                               "this run, not on macro points: subsystem \"m1\" takes steps of "
                               "one length only"),
            std::string::npos)
      << beside.output;
  fs::remove_all(dir);
}

TEST(FmuApp, ABadFmuOrNameExitsTwoWithTheLine) {
  const fs::path dir = temp_dir("config");
  const auto config = write_fmu_pair(dir, "");
  std::string text = read_file(config);
  std::ofstream(config) << std::string(text).replace(text.find("path = \"oscillator.fmu\""), 23,
                                                     "path = \"nowhere.fmu\"");
  AppRun r = macrostep("run " + config.string());
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("fmus.toml:4: subsystem[1].path: no such file"), std::string::npos)
      << r.output;
  std::ofstream(dir / "broken.fmu") << "not a zip";
  std::ofstream(config) << std::string(text).replace(text.find("path = \"oscillator.fmu\""), 23,
                                                     "path = \"broken.fmu\"");
  r = macrostep("run " + config.string());
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("fmus.toml:1: subsystem[1]: FMU "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("not a zip archive"), std::string::npos) << r.output;
  std::ofstream(config) << std::string(text).replace(text.find("x = 0.01"), 8, "x = \"a\"");
  r = macrostep("run " + config.string());
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("subsystem[1].parameters.x: must be a number or a boolean"),
            std::string::npos)
      << r.output;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace macrostep

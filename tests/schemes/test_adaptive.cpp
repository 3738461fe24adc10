// Scheme auto (schemes/adaptive.hpp): explicit or implicit macro steps, chosen from the solver
// calls each costs per simulated second.
//  - a drive train that comes to rest: the explicit scheme is held at its stability limit, the
//    implicit one is not; auto must find that out and take about as few steps as implicit, and
//    agree with the monolithic run as well as the fixed schemes do;
//  - a system the explicit scheme is cheaper on stays (nearly) explicit: at most the probes;
//  - a joint (no explicit steps possible) runs implicit throughout and says why;
//  - broken state arrays are refused.
// Bit-identity across executors and a resumed checkpoint are in tests/executors and tests/app.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "macrostep/config/run_config.hpp"
#include "macrostep/output/csv.hpp"
#include "macrostep/run/cosimulation.hpp"
#include "macrostep/run/monolithic.hpp"
#include "macrostep/run/observer.hpp"
#include "macrostep/schemes/adaptive.hpp"

namespace {

using namespace macrostep;
namespace fs = std::filesystem;

fs::path adaptive_dir() {
  const fs::path dir =
      fs::temp_directory_path() / ("macrostep_adaptive_" + std::to_string(getpid()));
  fs::create_directories(dir);
  return dir;
}

run::CosimResult run_scheme(const config::RunConfig& c, config::CosimScheme scheme, double stop,
                            const std::string& name) {
  run::CosimOptions o;
  o.scheme = scheme;
  o.estimator = scheme == config::CosimScheme::kImplicit ? control::Estimator::kImMD
                                                         : control::Estimator::kExMD;
  o.stop_time = stop;
  o.output_file = (adaptive_dir() / (name + ".csv")).string();
  o.executor = config::ExecutorKind::kInProcess;  // this test binary is no worker executable
  o.progress = run::MonolithicOptions::Progress::kNever;
  return run::run_cosimulation(c, o);
}

run::MonolithicResult run_monolithic(const config::RunConfig& c, double stop) {
  run::MonolithicOptions o;
  o.output_file = (adaptive_dir() / "monolithic.csv").string();
  o.stop_time = stop;
  o.progress = run::MonolithicOptions::Progress::kNever;
  return run::run_monolithic(c, o);
}

// Largest deviation of the final values from the monolithic run's, relative to 1 + |value|.
double final_error(const run::CosimResult& r, const run::MonolithicResult& m) {
  double e = 0.0;
  for (std::size_t j = 0; j < m.final_values.size(); ++j) {
    e = std::max(
        e, std::abs(r.final_values[j] - m.final_values[j]) / (1.0 + std::abs(m.final_values[j])));
  }
  return e;
}

// A run of configs/NAME.toml with scheme auto; fails the test unless auto reported its choice.
run::CosimResult run_auto(const std::string& name, double stop) {
  const config::RunConfig c =
      config::load_config(std::string(MACROSTEP_SOURCE_DIR) + "/configs/" + name + ".toml");
  run::CosimResult r = run_scheme(c, config::CosimScheme::kAuto, stop, "auto");
  EXPECT_TRUE(r.run.scheme_choice.used);
  return r;
}

class Adaptive : public ::testing::Test {
 protected:
  void TearDown() override { fs::remove_all(adaptive_dir()); }
};

// configs/drivetrain-rest.toml coasts to rest in a few seconds; from then on the explicit
// scheme's H is held by the stiff coupling shaft, not by the error, and the implicit one grows.
TEST_F(Adaptive, DriveTrainAtRestSwitchesToImplicitSteps) {
  const config::RunConfig c =
      config::load_config(std::string(MACROSTEP_SOURCE_DIR) + "/configs/drivetrain-rest.toml");
  constexpr double kStop = 30.0;
  const auto ex = run_scheme(c, config::CosimScheme::kExplicit, kStop, "explicit");
  const auto im = run_scheme(c, config::CosimScheme::kImplicit, kStop, "implicit");
  const auto au = run_scheme(c, config::CosimScheme::kAuto, kStop, "auto");
  const auto mono = run_monolithic(c, kStop);
  const auto& choice = au.run.scheme_choice;
  ASSERT_TRUE(choice.used);
  EXPECT_TRUE(choice.only_reason.empty()) << choice.only_reason;
  EXPECT_EQ(choice.explicit_steps.accepted + choice.implicit_steps.accepted, au.run.steps.accepted);
  EXPECT_EQ(choice.explicit_steps.attempts + choice.implicit_steps.attempts,
            au.run.steps.accepted + au.run.steps.rejected);
  // The run ends in implicit steps (a probe kept, or one still running because it keeps getting
  // cheaper).
  ASSERT_FALSE(choice.recent.empty());
  EXPECT_TRUE(choice.recent.back().to_implicit) << choice.recent.back().reason;
  // The steps table marks every implicit attempt (the fixed schemes' tables have no such column).
  const output::CsvTable steps = output::read_csv(au.steps_path, "attempt");
  const auto implicit = steps.column_index("implicit");
  ASSERT_TRUE(implicit.has_value());
  double implicit_rows = 0.0;
  for (double v : steps.values[*implicit]) implicit_rows += v;
  EXPECT_EQ(implicit_rows, static_cast<double>(choice.implicit_steps.attempts));
  EXPECT_FALSE(output::read_csv(ex.steps_path, "attempt").column_index("implicit").has_value());
  // A good part of the simulated time in implicit steps: the explicit ones while the drive train
  // still moves and until implicit steps are measured to be cheaper (their H at the stability
  // limit: thousands of steps over the run otherwise).
  EXPECT_GT(choice.implicit_steps.time, 0.4 * kStop);
  EXPECT_LT(au.run.steps.accepted, 0.6 * static_cast<double>(ex.run.steps.accepted));
  // Within the accuracy of the fixed schemes at the same tolerances, against the monolithic run
  // (the angles carry the error of the whole run).
  const double e_auto = final_error(au, mono), e_ex = final_error(ex, mono),
               e_im = final_error(im, mono);
  EXPECT_LT(e_auto, 3.0 * std::max(e_ex, e_im))
      << "auto " << e_auto << ", explicit " << e_ex << ", implicit " << e_im;
}

// The two-mass oscillator in D/D decomposition over a few periods: nothing is at rest, the
// explicit steps are the cheaper ones: auto probes implicit steps (after 256 explicit ones) and
// goes back.
TEST_F(Adaptive, OscillatorKeepsExplicitSteps) {
  const auto au = run_auto("two-mass-dd", 0.05);
  const auto& choice = au.run.scheme_choice;
  EXPECT_GE(choice.switches, 2U) << "no probe of implicit steps: nothing was chosen";
  EXPECT_GT(choice.explicit_steps.accepted, 4 * choice.implicit_steps.accepted)
      << choice.implicit_steps.accepted << " implicit steps";
  for (const auto& s : choice.recent) {
    EXPECT_EQ(s.reason.find("kept"), std::string::npos) << "t = " << s.time << ": " << s.reason;
  }
}

TEST_F(Adaptive, JointRunsImplicitOnlyAndSaysWhy) {
  const auto au = run_auto("two-mass-joint", 0.01);
  const auto& choice = au.run.scheme_choice;
  EXPECT_EQ(choice.only_reason.rfind("implicit only: ", 0), 0U) << choice.only_reason;
  EXPECT_EQ(choice.explicit_steps.attempts, 0U);
  EXPECT_EQ(choice.switches, 0U);
  EXPECT_EQ(choice.implicit_steps.accepted, au.run.steps.accepted);
}

// Stops a run with an exception after a number of attempts (a failure in the middle of a run).
class FailAfterAttempts final : public run::RunObserver {
 public:
  explicit FailAfterAttempts(std::uint64_t n) : n_(n) {}
  void attempted(const schemes::StepRecord& r) override {
    if (r.attempt >= n_) throw std::runtime_error("the test stops the run here");
  }

 private:
  std::uint64_t n_;
};

// A run that fails still reports how its steps were chosen, up to the failure.
TEST_F(Adaptive, FailedRunReportsItsChoice) {
  const config::RunConfig c =
      config::load_config(std::string(MACROSTEP_SOURCE_DIR) + "/configs/two-mass-dd.toml");
  run::CosimOptions o;
  o.scheme = config::CosimScheme::kAuto;
  o.estimator = control::Estimator::kExMD;
  o.stop_time = 0.05;
  o.output_file = (adaptive_dir() / "failed.csv").string();
  o.executor = config::ExecutorKind::kInProcess;
  o.progress = run::MonolithicOptions::Progress::kNever;
  FailAfterAttempts stop(300);
  o.observers.push_back(&stop);
  try {
    run::run_cosimulation(c, o);
    ADD_FAILURE() << "the run did not stop";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "the test stops the run here");
  }
  std::ifstream in(adaptive_dir() / "failed.json");
  const auto meta = nlohmann::json::parse(in);
  EXPECT_EQ(meta.at("status"), "failed");
  const auto& choice = meta.at("statistics").at("scheme_choice");
  EXPECT_EQ(choice.at("explicit").at("attempts").get<int>() +
                choice.at("implicit").at("attempts").get<int>(),
            300)
      << choice;
}

TEST(AdaptiveState, BrokenArraysAreRefused) {
  corrector::CorrectorOptions o;
  schemes::AdaptiveScheme scheme(o);
  EXPECT_THROW(scheme.import_state({}), std::invalid_argument);
  EXPECT_THROW(scheme.import_state({{1.0, 2.0}}), std::invalid_argument);
  corrector::CorrectorOptions waveform;
  waveform.iteration = corrector::IterationKind::kWaveform;
  EXPECT_THROW(schemes::AdaptiveScheme{waveform}, std::invalid_argument);
}

}  // namespace

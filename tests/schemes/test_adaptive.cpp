// Scheme auto (schemes/adaptive.hpp): explicit, semi-implicit or implicit macro steps, chosen
// from the work (size-weighted solver calls) each costs per simulated second.
//  - a drive train that comes to rest: the explicit scheme is held at its stability limit, the
//    iterative ones are not; auto must find that out and take about as few steps as implicit,
//    and agree with the monolithic run as well as the fixed schemes do; its linear shaft makes
//    the semi-implicit steps (one corrector pass) the cheapest there, and the statistics and the
//    steps table must say so;
//  - a checkpoint written in a semi-implicit stretch resumes to the same bytes;
//  - a system the explicit scheme is cheaper on stays (nearly) explicit: at most the probes;
//  - a joint (no explicit steps possible) runs semi-implicit and implicit steps and says why;
//  - a scheme measured far dearer is not probed again every few hundred steps (S-5.5);
//  - a semi-implicit step that leaves a large coupling mismatch is repeated as an implicit one;
//  - broken state arrays are refused.
// Bit-identity across executors and a resumed SIGKILL are in tests/executors and tests/app.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "macrostep/checkpoint/checkpoint.hpp"
#include "macrostep/config/run_config.hpp"
#include "macrostep/output/csv.hpp"
#include "macrostep/run/cosimulation.hpp"
#include "macrostep/run/interrupt.hpp"
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

// The number after `key` in `text` (a switch reason's rates); NaN where `key` is missing.
double number_after(const std::string& text, const std::string& key) {
  const auto at = text.find(key);
  return at == std::string::npos ? std::nan("") : std::stod(text.substr(at + key.size()));
}

// The steps and attempts per scheme add up to the run's.
void expect_counts_add_up(const run::CosimResult& r) {
  const auto& c = r.run.scheme_choice;
  EXPECT_EQ(c.explicit_steps.accepted + c.semi_implicit_steps.accepted + c.implicit_steps.accepted,
            r.run.steps.accepted);
  EXPECT_EQ(c.explicit_steps.attempts + c.semi_implicit_steps.attempts + c.implicit_steps.attempts,
            r.run.steps.accepted + r.run.steps.rejected);
}

// The steps table's columns implicit and semi_implicit mark as many attempts as the statistics
// count for each, and no attempt both.
void expect_steps_table_marks(const run::CosimResult& r) {
  const auto& c = r.run.scheme_choice;
  const output::CsvTable steps = output::read_csv(r.steps_path, "attempt");
  const auto implicit = steps.column_index("implicit");
  const auto semi = steps.column_index("semi_implicit");
  ASSERT_TRUE(implicit.has_value() && semi.has_value());
  double implicit_rows = 0.0, semi_rows = 0.0;
  for (std::size_t k = 0; k < steps.rows(); ++k) {
    implicit_rows += steps.values[*implicit][k];
    semi_rows += steps.values[*semi][k];
    EXPECT_LE(steps.values[*implicit][k] + steps.values[*semi][k], 1.0) << "attempt " << k + 1;
  }
  EXPECT_EQ(implicit_rows, static_cast<double>(c.implicit_steps.attempts));
  EXPECT_EQ(semi_rows, static_cast<double>(c.semi_implicit_steps.attempts));
}

class Adaptive : public ::testing::Test {
 protected:
  void TearDown() override { fs::remove_all(adaptive_dir()); }
};

// K-5.5's corner (m_1 = 1e-6 kg, d_c = 1e6 N s/m): the iterative steps' H lies far beyond the
// explicit stability limit, where one explicit step passed exMD's test at H = 1.7e-4 s and the
// coupling blew up two steps later (t = 0.031 s). A switch resumes the H and κ that the entered
// kind of step last took (explicit steps: at most the H of the step just concluded), so the
// first attempt after every switch into explicit steps is no longer than the last accepted
// explicit one, and the first after a switch back into iterative steps takes their last H
// again instead of the explicit steps' (before: 93 of 108 switches into explicit steps took an
// accepted first step above 4 times the explicit steps' mean H). Checked on K-5.5 and on the demo
// (K-5.5 alone switches only a few times since a scheme measured far dearer is skipped longer).
struct Resumptions {
  int switches = 0, lowered = 0;
};

// Checks every switch of an auto run of configs/NAME.toml against the rule above.
Resumptions check_resumptions(const std::string& name, double stop) {
  const auto au = run_auto(name, stop);
  expect_counts_add_up(au);
  const output::CsvTable steps = output::read_csv(au.steps_path, "attempt");
  const auto col = [&](const char* name) { return steps.values.at(*steps.column_index(name)); };
  const auto &h = col("h"), &t = col("t_start"), &kappa = col("kappa"), &accepted = col("accepted"),
             &implicit = col("implicit"), &semi = col("semi_implicit");
  constexpr int kKinds = 3;
  std::array<double, kKinds> last_h{}, last_kappa{};
  std::vector<double> points = {0.0};  // T of the accepted points, the newest last
  // The degree the controller resumes: the last one, as far as the newest κ + 1 points span
  // κ·H/4 (MacroStepController::resume_step).
  const auto resumed_kappa = [&](double kappa_last, double step) {
    auto k = static_cast<std::size_t>(std::min<double>(kappa_last, points.size() - 1.0));
    const double t_m = points.back();
    while (k > 0 && t_m - points[points.size() - 1 - k] < static_cast<double>(k) * step / 4.0) {
      --k;
    }
    return static_cast<double>(k);
  };
  int switches = 0, resumed = 0, wrong = 0, lowered = 0;
  int previous = 0;  // explicit at the start
  for (std::size_t k = 0; k < steps.rows(); ++k) {
    const int kind = implicit[k] != 0.0 ? 2 : semi[k] != 0.0 ? 1 : 0;
    const auto i = static_cast<std::size_t>(kind);
    if (kind != previous && last_h[i] > 0.0) {
      ++switches;
      const double expected =
          kind == 0 ? std::min(last_h[i], h[k - 1]) : last_h[i];  // the rule above
      const double expected_kappa = resumed_kappa(last_kappa[i], h[k]);
      lowered += expected_kappa < last_kappa[i] ? 1 : 0;
      // t_end may shorten the last step (H_max does not act here); H = T_{N+1} − T_N carries
      // the rounding of T (a few ulps of T).
      const double rounding = 4.0 * std::numeric_limits<double>::epsilon() * t[k];
      if (k + 1 == steps.rows() ||
          (std::abs(h[k] - expected) <= 1e-9 * expected + rounding && kappa[k] == expected_kappa)) {
        ++resumed;
      } else {
        ++wrong;
        ADD_FAILURE() << name << " attempt " << k + 1 << ": H " << h[k] << " kappa " << kappa[k]
                      << ", expected " << expected << " kappa " << expected_kappa;
        if (wrong > 5) break;
      }
    }
    previous = kind;
    if (accepted[k] != 0.0) {
      last_h[i] = h[k];
      last_kappa[i] = kappa[k];
      points.push_back(t[k] + h[k]);
    }
  }
  EXPECT_EQ(resumed, switches) << name;
  return {switches, lowered};
}

TEST_F(Adaptive, ASwitchResumesTheStepSizeOfTheKindOfStepItEnters) {
  const Resumptions k55 = check_resumptions("k-5.5", 5e-3);
  const Resumptions demo = check_resumptions("demo", 0.01);
  EXPECT_GT(k55.switches + demo.switches, 4);
  EXPECT_GT(k55.lowered + demo.lowered, 0) << "no switch needed the span rule: it is not tested";
}

// configs/drivetrain-rest.toml coasts to rest in a few seconds; from then on the explicit
// scheme's H is held by the stiff coupling shaft, not by the error, and the implicit one grows.
TEST_F(Adaptive, DriveTrainAtRestSwitchesToIterativeSteps) {
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
  expect_counts_add_up(au);
  // The run ends in iterative steps (a probe kept, or one still running because it keeps getting
  // cheaper).
  ASSERT_FALSE(choice.recent.empty());
  EXPECT_NE(choice.recent.back().to, schemes::StepKind::kExplicit) << choice.recent.back().reason;
  // The steps table marks every attempt of either iterative scheme (the fixed schemes' tables
  // have no such columns).
  expect_steps_table_marks(au);
  EXPECT_FALSE(output::read_csv(ex.steps_path, "attempt").column_index("implicit").has_value());
  // A good part of the simulated time in iterative steps: the explicit ones while the drive
  // train still moves and until iterative steps are measured to be cheaper (their H at the
  // stability limit: thousands of steps over the run otherwise).
  EXPECT_GT(choice.semi_implicit_steps.time + choice.implicit_steps.time, 0.4 * kStop);
  EXPECT_LT(au.run.steps.accepted, 0.6 * static_cast<double>(ex.run.steps.accepted));
  // Within the accuracy of the fixed schemes at the same tolerances, against the monolithic run
  // (the angles carry the error of the whole run).
  const double e_auto = final_error(au, mono), e_ex = final_error(ex, mono),
               e_im = final_error(im, mono);
  EXPECT_LT(e_auto, 3.0 * std::max(e_ex, e_im))
      << "auto " << e_auto << ", explicit " << e_ex << ", implicit " << e_im;
}

// The drive train at rest again, over 10 s: its shaft is a linear spring, so one Newton step
// solves the coupling and the semi-implicit steps reach the implicit H at a fraction of the cost.
// Auto probes them first; the probe is kept, and the statistics, the metadata and the steps
// table say so.
TEST_F(Adaptive, DriveTrainAtRestTakesSemiImplicitSteps) {
  const auto au = run_auto("drivetrain-rest", 10.0);
  const auto& choice = au.run.scheme_choice;
  expect_counts_add_up(au);
  expect_steps_table_marks(au);
  EXPECT_GT(choice.semi_implicit_steps.accepted, 0U);
  EXPECT_GT(choice.semi_implicit_steps.time,
            choice.explicit_steps.time + choice.implicit_steps.time);
  ASSERT_FALSE(choice.recent.empty());
  const auto& first = choice.recent.front();
  EXPECT_EQ(first.from, schemes::StepKind::kExplicit);
  EXPECT_EQ(first.to, schemes::StepKind::kSemiImplicit);
  EXPECT_EQ(first.reason.rfind("probe of semi-implicit steps kept: ", 0), 0U) << first.reason;
  std::ifstream in(au.json_path);
  const auto meta = nlohmann::json::parse(in);
  const auto& json_choice = meta.at("statistics").at("scheme_choice");
  EXPECT_EQ(json_choice.at("semi_implicit").at("accepted").get<std::uint64_t>(),
            choice.semi_implicit_steps.accepted);
  EXPECT_EQ(json_choice.at("recent_switches").at(0).at("to"), "semi-implicit");
  EXPECT_EQ(json_choice.at("recent_switches").at(0).at("from"), "explicit");
}

// Implicit steps are measured once; after that they are probed only where they were measured
// cheaper than semi-implicit ones or where the semi-implicit steps' one corrector pass leaves a
// coupling mismatch above τ in one attempt of kMismatchShare. On the drive train's linear shaft
// that mismatch is about 1e-5 of the weights (below the default τ = 0.33): one probe of implicit
// steps, measured dearer, and no other.
TEST_F(Adaptive, ImplicitStepsAreProbedOnceWhereSemiImplicitOnesLeaveNoMismatch) {
  const config::RunConfig c =
      config::load_config(std::string(MACROSTEP_SOURCE_DIR) + "/configs/drivetrain-rest.toml");
  const auto r = run_scheme(c, config::CosimScheme::kAuto, 10.0, "plain");
  const auto& choice = r.run.scheme_choice;
  EXPECT_GT(choice.semi_implicit_steps.accepted, 0U);
  EXPECT_GT(r.run.corrector.max_iteration_residual, 0.0) << "the mismatch was not measured";
  EXPECT_LT(r.run.corrector.max_iteration_residual, c.cosim.tau);
  int implicit_probes = 0;
  for (std::size_t k = 0; k < choice.recent.size(); ++k) {
    const auto& s = choice.recent[k];
    if (s.to != schemes::StepKind::kImplicit) continue;
    ++implicit_probes;
    EXPECT_EQ(s.from, schemes::StepKind::kSemiImplicit);
    EXPECT_EQ(s.reason.rfind("probe of implicit steps: ", 0), 0U) << s.reason;  // not kept
    ASSERT_LT(k + 1, choice.recent.size());
    EXPECT_EQ(choice.recent[k + 1].to, schemes::StepKind::kSemiImplicit);
  }
  EXPECT_EQ(implicit_probes, 1);
  EXPECT_LT(choice.implicit_steps.time, 0.1 * 10.0);
  expect_counts_add_up(r);
  expect_steps_table_marks(r);
}

// The mismatch rule alone: K-A1's stiff chain with τ = 1e-8, so that the semi-implicit steps'
// one corrector pass leaves a mismatch above τ everywhere. After the first probe of implicit
// steps measured them dearer than the semi-implicit ones, only that rule makes them a candidate
// again: a later probe starts while the semi-implicit rate is below the implicit one measured
// last.
TEST_F(Adaptive, ImplicitStepsAreProbedAgainWhereSemiImplicitOnesLeaveAMismatch) {
  config::RunConfig c =
      config::load_config(std::string(MACROSTEP_SOURCE_DIR) + "/configs/k-a1.toml");
  c.cosim.tau = 1e-8;
  const auto r = run_scheme(c, config::CosimScheme::kAuto, 1.5e-4, "tight");
  EXPECT_GT(r.run.corrector.max_iteration_residual, c.cosim.tau);
  // "probe of implicit steps: work R per simulated second against L in semi-implicit steps".
  double implicit_rate = 0.0;  // of the last probe of implicit steps
  int probes = 0, by_mismatch = 0;
  for (const auto& s : r.run.scheme_choice.recent) {
    if (s.to != schemes::StepKind::kImplicit) continue;
    ++probes;
    const double semi_rate = number_after(s.reason, " against ");
    if (implicit_rate > 1.05 * semi_rate) ++by_mismatch;
    implicit_rate = number_after(s.reason, "probe of implicit steps: work ");
  }
  EXPECT_GE(probes, 2);
  EXPECT_GE(by_mismatch, 1) << "no probe of implicit steps that only the mismatch rule allows";
  expect_counts_add_up(r);
}

// K-5.5's stiff, heavily damped interface: the semi-implicit steps leave a mismatch above τ in
// about one attempt of a hundred, but their H stays about a hundredth of the implicit steps'
// (the one pass with a finite-difference Jacobian is stable only on short steps there). Measured
// once, the implicit steps are kept and carry almost all of the run.
TEST_F(Adaptive, StiffInterfaceKeepsTheImplicitStepsItMeasured) {
  const auto au = run_auto("k-5.5", 1e-4);
  const auto& choice = au.run.scheme_choice;
  expect_counts_add_up(au);
  EXPECT_GT(choice.implicit_steps.time, 0.9e-4);
  bool kept = false;
  for (const auto& s : choice.recent) {
    kept |= s.to == schemes::StepKind::kImplicit &&
            s.reason.rfind("probe of implicit steps kept", 0) == 0;
  }
  EXPECT_TRUE(kept) << "no kept probe of implicit steps among the recent switches";
}

// S-5.7's chain (cubic springs and dampers, 200 masses here): the semi-implicit steps that
// follow auto's explicit start-up leave a coupling mismatch far above the tolerance on single
// steps (one Newton step from the predictor does not solve a cubic law). Such a step is repeated
// as an implicit one (AdaptiveScheme::escalate): in the steps table exactly the semi-implicit
// rows whose mismatch exceeds the limit carry more than one corrector pass, and the statistics
// count them. The limit's reason and its effect on K-5.7: docs/design/methods.md §4.8.
TEST_F(Adaptive, SemiImplicitStepWithALargeMismatchIsRepeatedAsAnImplicitStep) {
  const config::RunConfig c = config::load_config(
      std::string(MACROSTEP_SOURCE_DIR) + "/configs/s-5.7.toml", {"model.masses=200"});
  const auto r = run_scheme(c, config::CosimScheme::kAuto, 1e-4, "escalated");
  const auto& choice = r.run.scheme_choice;
  expect_counts_add_up(r);
  expect_steps_table_marks(r);
  const output::CsvTable steps = output::read_csv(r.steps_path, "attempt");
  const auto col = [&](const char* name) -> const std::vector<double>& {
    const auto k = steps.column_index(name);
    EXPECT_TRUE(k.has_value()) << name;
    return steps.values.at(k.value_or(0));
  };
  const auto &semi = col("semi_implicit"), &mismatch = col("coupling_mismatch"),
             &passes = col("corrector_passes");
  std::uint64_t repeated = 0, below = 0;
  for (std::size_t k = 0; k < steps.rows(); ++k) {
    if (semi[k] != 1.0) {
      EXPECT_EQ(mismatch[k], 0.0) << "attempt " << k + 1;
      continue;
    }
    const bool above = mismatch[k] > schemes::AdaptiveScheme::kEscalationLimit;
    EXPECT_EQ(passes[k] > 1.0, above) << "attempt " << k + 1 << ", mismatch " << mismatch[k];
    repeated += above ? 1 : 0;
    below += above ? 0 : 1;
  }
  EXPECT_GE(repeated, 3u) << "the rule was not exercised";
  EXPECT_GT(below, repeated) << "most semi-implicit steps stand";
  EXPECT_EQ(choice.escalated, repeated);
}

// S-5.5's corner (m_1 = 1e-6 kg, d_c = 1e6 N s/m): explicit steps are stable below about
// 1e-12 s, semi-implicit ones about 1e-10 s, implicit ones take 1e-4 s. Their measured rates
// differ by factors of 1e3 to 1e5; a probe of either disturbs the fast mode, and the implicit
// steps then regrow their H over thousands of steps. Such a scheme is skipped for longer, one
// more skip per factor kSkipFactor (AdaptiveScheme::max_skips), so that auto switches a few
// times only and takes about the fixed implicit scheme's steps (measurements:
// docs/results/2026-12-03-s55-probes.md).
TEST_F(Adaptive, SchemeMeasuredFarDearerIsNotProbedEveryFewSteps) {
  const config::RunConfig c =
      config::load_config(std::string(MACROSTEP_SOURCE_DIR) + "/configs/s-5.5.toml");
  const double stop = 0.01;
  const auto im = run_scheme(c, config::CosimScheme::kImplicit, stop, "implicit");
  const auto au = run_auto("s-5.5", stop);
  expect_counts_add_up(au);
  const auto& choice = au.run.scheme_choice;
  EXPECT_LE(choice.switches, 6u);
  EXPECT_GT(choice.skipped_probes, 2u) << "the rule was not exercised";
  EXPECT_LT(static_cast<double>(au.run.steps.accepted),
            1.25 * static_cast<double>(im.run.steps.accepted))
      << "auto " << au.run.steps.accepted << " steps, implicit " << im.run.steps.accepted;
  EXPECT_GT(choice.implicit_steps.time, 0.99 * stop);
}

// Sets the stop flag after a given attempt: the run writes its final checkpoint there and stops
// (as after SIGTERM).
class StopAfterAttempt final : public run::RunObserver {
 public:
  StopAfterAttempt(std::uint64_t n, run::StopFlag& flag) : n_(n), flag_(flag) {}
  void attempted(const schemes::StepRecord& r) override {
    if (r.attempt == n_) flag_.store(15);
  }

 private:
  std::uint64_t n_;
  run::StopFlag& flag_;
};

// Stops an auto run of `c` to `stop` after the attempt of `whole`'s steps-table row `stop_row`,
// resumes it from the checkpoint written there, and expects the bytes of `whole`.
void expect_resumed_bytes(const config::RunConfig& c, double stop, const run::CosimResult& whole,
                          std::size_t stop_row) {
  const output::CsvTable steps = output::read_csv(whole.steps_path, "attempt");
  run::CosimOptions o;
  o.scheme = config::CosimScheme::kAuto;
  o.estimator = control::Estimator::kExMD;
  o.stop_time = stop;
  o.output_file = (adaptive_dir() / "cut.csv").string();
  o.checkpoint_path = (adaptive_dir() / "cut.ckpt").string();
  o.checkpoint_every = checkpoint::Interval{0.0, 1000000};  // only the final one, at the stop
  o.executor = config::ExecutorKind::kInProcess;
  o.progress = run::MonolithicOptions::Progress::kNever;
  run::StopFlag flag{0};
  StopAfterAttempt stopper(static_cast<std::uint64_t>(steps.time[stop_row]), flag);
  o.stop = &flag;
  o.observers.push_back(&stopper);
  try {
    run::run_cosimulation(c, o);
    FAIL() << "the run did not stop";
  } catch (const run::RunInterrupted& e) {
    ASSERT_EQ(e.checkpoint(), o.checkpoint_path) << e.checkpoint_problem();
  }
  const checkpoint::Checkpoint ckpt = checkpoint::read(o.checkpoint_path);
  EXPECT_EQ(ckpt.steps_rows, stop_row + 1);
  o.stop = nullptr;
  o.observers.clear();
  o.resume = &ckpt;
  const auto resumed = run::run_cosimulation(c, o);
  EXPECT_EQ(resumed.run.scheme_choice.semi_implicit_steps.attempts +
                resumed.run.scheme_choice.explicit_steps.attempts +
                resumed.run.scheme_choice.implicit_steps.attempts,
            steps.rows())
      << "the statistics continue from the checkpoint's";
  std::ifstream a(whole.csv_path), b(o.output_file);
  const std::string whole_bytes{std::istreambuf_iterator<char>(a), {}};
  const std::string resumed_bytes{std::istreambuf_iterator<char>(b), {}};
  EXPECT_GT(whole_bytes.size(), 1000U);
  EXPECT_TRUE(whole_bytes == resumed_bytes) << "the resumed CSV differs";
}

// A checkpoint written while auto takes semi-implicit steps (the mode, its window and its Δ⁰ in
// the scheme's state) resumes to the bytes of the uninterrupted run.
TEST_F(Adaptive, CheckpointInSemiImplicitStretchResumesToTheSameBytes) {
  const config::RunConfig c =
      config::load_config(std::string(MACROSTEP_SOURCE_DIR) + "/configs/drivetrain-rest.toml");
  constexpr double kStop = 4.0;
  const auto whole = run_scheme(c, config::CosimScheme::kAuto, kStop, "whole");
  // Stop 20 attempts into the first semi-implicit stretch (its probe is measured after 24
  // accepted steps: the checkpoint holds a probe under way).
  const output::CsvTable steps = output::read_csv(whole.steps_path, "attempt");
  const auto semi = steps.column_index("semi_implicit");
  ASSERT_TRUE(semi.has_value());
  std::size_t first_semi = 0;
  while (first_semi < steps.rows() && steps.values[*semi][first_semi] == 0.0) ++first_semi;
  const std::size_t stop_row = first_semi + 20;
  ASSERT_LT(stop_row + 1, steps.rows()) << "no semi-implicit stretch to stop in";
  ASSERT_EQ(steps.values[*semi][stop_row + 1], 1.0) << "the attempt after the stop is not";
  expect_resumed_bytes(c, kStop, whole, stop_row);
}

// The two-mass oscillator in D/D decomposition over a few periods: nothing is at rest, the
// explicit steps are the cheaper ones: auto probes implicit steps (after 256 explicit ones) and
// goes back.
TEST_F(Adaptive, OscillatorKeepsExplicitSteps) {
  const auto au = run_auto("two-mass-dd", 0.05);
  const auto& choice = au.run.scheme_choice;
  EXPECT_GE(choice.switches, 2U) << "no probe of implicit steps: nothing was chosen";
  const auto iterative = choice.semi_implicit_steps.accepted + choice.implicit_steps.accepted;
  EXPECT_GT(choice.explicit_steps.accepted, 4 * iterative) << iterative << " iterative steps";
  for (const auto& s : choice.recent) {
    EXPECT_EQ(s.reason.find("kept"), std::string::npos) << "t = " << s.time << ": " << s.reason;
  }
}

// The multirate demo (25 | 500 | 25 masses, stiff contacts in the two small ends): the ends take
// about 2.5 times the core's micro steps, but a solver call of the 1 000-state core costs about
// 20 times one of a 50-state end. The explicit steps are the cheapest there (the fixed explicit
// scheme takes about half the fixed iterative ones' wall time). Counted unweighted, the ends'
// calls made the iterative probes look cheaper, and auto ran iterative steps over 32 % of the
// simulated time at 1.5 times the explicit scheme's wall time; weighted by size, the probes
// fail and the explicit steps carry the run.
TEST_F(Adaptive, WorkWeighsEachSubsystemsCallsByItsSize) {
  const auto au = run_auto("demo-multirate", 2e-3);
  const auto& choice = au.run.scheme_choice;
  expect_counts_add_up(au);
  EXPECT_GT(choice.explicit_steps.time, 0.85 * 2e-3)
      << "semi-implicit " << choice.semi_implicit_steps.time << " s, implicit "
      << choice.implicit_steps.time << " s";
  const double calls_per_accepted =
      choice.explicit_steps.work / static_cast<double>(choice.explicit_steps.accepted);
  // An explicit step with exMD integrates every subsystem twice; each of those runs makes at
  // least one solver call per micro step, and the core alone weighs 1 000.
  EXPECT_GT(calls_per_accepted, 2.0 * 1000.0);
}

// S-5.4b's multirate cut: a probe of semi-implicit steps at t = 1.51 ms fails against the
// explicit steps' rate from before it, and the wave that then reaches the stiff subsystems makes
// the explicit steps gone back to about 20 times dearer. The probe is retried once their first
// two windows are measured, and kept (before the rule the explicit steps ran on for 372 steps
// and carried 72 % of the run's squared error).
TEST_F(Adaptive, FailedProbeIsRetriedWhereTheSchemeGoneBackToGrewDear) {
  const auto au = run_auto("s-5.4b-multirate", 2e-3);
  expect_counts_add_up(au);
  const auto& recent = au.run.scheme_choice.recent;
  std::size_t k = 0;
  while (k < recent.size() && recent[k].reason.find("steps again, kept") == std::string::npos) ++k;
  ASSERT_LT(k, recent.size()) << "no retried probe was kept";
  ASSERT_GE(k, 1U);
  const auto& back = recent[k - 1];
  const auto& retry = recent[k];
  EXPECT_EQ(back.to, schemes::StepKind::kExplicit);
  EXPECT_EQ(retry.to, back.from);
  const double retry_rate = number_after(retry.reason, "kept: work ");
  const double gone_back_rate = number_after(retry.reason, " against ");
  EXPECT_GT(gone_back_rate, schemes::AdaptiveScheme::kRetryFactor * retry_rate) << retry.reason;
  // Retried after the warm-up and two windows of the explicit steps gone back to.
  const output::CsvTable steps = output::read_csv(au.steps_path, "attempt");
  const auto t_start = steps.column_index("t_start");
  const auto accepted = steps.column_index("accepted");
  ASSERT_TRUE(t_start && accepted);
  int between = 0;
  for (std::size_t r = 0; r < steps.rows(); ++r) {
    const double t = steps.values[*t_start][r];
    if (t >= back.time && t < retry.time && steps.values[*accepted][r] == 1.0) ++between;
  }
  EXPECT_EQ(between, schemes::AdaptiveScheme::kWarmup + 2 * schemes::AdaptiveScheme::kWindow);
  // A checkpoint between the return and the retry holds the failed probe's rate: the resumed
  // run retries alike.
  std::size_t stop_row = 0;
  while (stop_row < steps.rows() && steps.values[*t_start][stop_row] < back.time) ++stop_row;
  expect_resumed_bytes(
      config::load_config(std::string(MACROSTEP_SOURCE_DIR) + "/configs/s-5.4b-multirate.toml"),
      2e-3, au, stop_row + 10);
}

TEST_F(Adaptive, JointRunsNoExplicitStepsAndSaysWhy) {
  const auto au = run_auto("two-mass-joint", 0.01);
  const auto& choice = au.run.scheme_choice;
  EXPECT_EQ(choice.only_reason.rfind("no explicit steps: ", 0), 0U) << choice.only_reason;
  EXPECT_EQ(choice.explicit_steps.attempts, 0U);
  expect_counts_add_up(au);
  // It starts in implicit steps (the robust ones), and probes semi-implicit ones only after
  // kFirstProbe steps.
  EXPECT_GE(choice.implicit_steps.accepted,
            std::min<std::uint64_t>(au.run.steps.accepted, schemes::AdaptiveScheme::kFirstProbe));
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
                choice.at("semi_implicit").at("attempts").get<int>() +
                choice.at("implicit").at("attempts").get<int>(),
            300)
      << choice;
}

TEST(AdaptiveState, BrokenArraysAreRefused) {
  corrector::CorrectorOptions o;
  schemes::AdaptiveScheme scheme(o);
  EXPECT_THROW(scheme.import_state({}), std::invalid_argument);
  EXPECT_THROW(scheme.import_state({{1.0, 2.0}}), std::invalid_argument);
  // The arrays of another layout version (a checkpoint of an older auto, of two schemes) are
  // refused by the version before anything is read.
  std::vector<double> choice(28, 0.0);
  choice[0] = schemes::AdaptiveScheme::kStateLayout - 1.0;
  const std::vector<double> window(schemes::AdaptiveScheme::kWindow, 0.0);
  try {
    scheme.import_state({choice, window, window, std::vector<double>(14, 0.0), {}});
    ADD_FAILURE() << "another layout was imported";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("another layout"), std::string::npos) << e.what();
  }
  corrector::CorrectorOptions waveform;
  waveform.iteration = corrector::IterationKind::kWaveform;
  EXPECT_THROW(schemes::AdaptiveScheme{waveform}, std::invalid_argument);
}

}  // namespace

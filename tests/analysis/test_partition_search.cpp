// The partition model of `macrostep suggest-partition` (partition_search.hpp, beyond
// the seeds). Checked against closed forms: the backward difference of polynomials, the loads
// of the stated cost model, and the optimum of small cases worked out by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

#include "macrostep/analysis/partition_search.hpp"

namespace {

using macrostep::analysis::CutIndicatorSampler;
using macrostep::analysis::PartitionModel;
using macrostep::analysis::TrialRun;
using macrostep::analysis::TrialSubsystem;

// A polynomial of degree κ is extrapolated exactly (no error); t^{κ+1} sampled at spacing h has
// the constant (κ+1)-th difference (κ+1)! h^{κ+1}.
TEST(CutIndicatorSampler, BackwardDifferencesOfPolynomials) {
  const double h = 0.1, rtol = 1e-3, atol = 1e-2;
  for (int kappa = 0; kappa <= 5; ++kappa) {
    CutIndicatorSampler sampler(2, kappa, kappa, rtol, atol);
    double sum = 0.0, factorial = 1.0;
    for (int j = 2; j <= kappa + 1; ++j) factorial *= j;
    for (int k = 0; k < 20; ++k) {
      const double t = k * h;
      const double next = 5.0 * std::pow(t, kappa + 1);
      sampler.add(t, {std::pow(t, kappa), next});
      if (k > kappa) {
        const double err =
            5.0 * factorial * std::pow(h, kappa + 1) / (atol + rtol * std::abs(next));
        sum += std::pow(err, 1.0 / (kappa + 1));
      }
    }
    EXPECT_EQ(sampler.samples(), static_cast<std::size_t>(20 - kappa - 1));
    // Degree κ: only round-off (differences of ~1e-15), which the root magnifies.
    EXPECT_LT(sampler.indicators()[0], 20 * std::pow(1e-13 / atol, 1.0 / (kappa + 1)))
        << "kappa " << kappa;
    EXPECT_NEAR(sampler.indicators()[1], sum, 1e-9 * sum) << "kappa " << kappa;
  }
}

// On a non-uniform grid (a trial's macro points) the error is the Lagrange extrapolation's:
// for t^2 and κ = 1 through t_{k-2}, t_{k-1} it is (t_k − t_{k-2})(t_k − t_{k-1}).
TEST(CutIndicatorSampler, NonUniformGridUsesTheLagrangeExtrapolation) {
  const std::vector<double> times{0.0, 0.1, 0.3, 0.4, 0.7, 1.2};
  CutIndicatorSampler sampler(1, 1, 1, 1e-300, 1.0);
  double expected = 0.0;
  for (std::size_t k = 0; k < times.size(); ++k) {
    sampler.add(times[k], {times[k] * times[k]});
    if (k >= 2) expected += std::sqrt((times[k] - times[k - 2]) * (times[k] - times[k - 1]));
  }
  EXPECT_NEAR(sampler.indicators()[0], expected, 1e-12);
  EXPECT_THROW(sampler.add(1.2, {1.0}), std::invalid_argument);
}

// Order control: each sample counts its best order, so a cubic costs (nearly) nothing when κ may
// reach 3, and its κ = 2 difference when κ stops at 2.
TEST(CutIndicatorSampler, OrderControlTakesTheBestOrder) {
  CutIndicatorSampler controlled(1, 0, 5, 1e-3, 1e-2), capped(1, 0, 2, 1e-3, 1e-2);
  for (int k = 0; k < 30; ++k) {
    const double t = 0.1 * k;
    controlled.add(t, {t * t * t});
    capped.add(t, {t * t * t});
  }
  EXPECT_EQ(controlled.samples(), 24u);
  EXPECT_LT(controlled.indicators()[0], 24 * std::pow(1e-13 / 1e-2, 1.0 / 6.0));
  EXPECT_GT(capped.indicators()[0], 10 * controlled.indicators()[0]);
}

// Every mass alike, every element alike: the best cut balances the masses, and the model's
// loads follow c(n) = c1 n (equal sizes in the trial: a fit through the origin).
TEST(PartitionModel, HomogeneousChainIsCutIntoEqualBlocks) {
  TrialRun trial;
  trial.duration = 1.0;
  trial.attempts = 100.0;
  trial.overhead_per_attempt_s = 1e-4;
  // 40 masses as 5 | 35 with ten micro steps per macro step everywhere (held by their own
  // dynamics: 1000 micro steps per second), 1 us per mass and micro step.
  trial.subsystems = {{0, 5, 1000.0, 5 * 1000.0 * 1e-6}, {5, 40, 1000.0, 35 * 1000.0 * 1e-6}};
  std::vector<double> indicators(41, 50.0);
  const PartitionModel model(trial, indicators, 8);
  EXPECT_DOUBLE_EQ(model.calibration(), 2.0);  // 100 attempts for N_e = 50
  EXPECT_NEAR(model.cost_per_step(10), 1e-5, 1e-12);
  const auto own = model.predict({0, 5, 40});
  EXPECT_DOUBLE_EQ(own.macro_steps, 100.0);
  EXPECT_NEAR(own.wall_s, 100 * 1e-4 + 1000.0 * 35e-6, 1e-12);
  const auto best = model.search(2);
  EXPECT_EQ(best.boundaries, (std::vector<std::size_t>{0, 20, 40}));
  EXPECT_NEAR(best.wall_s, 100 * 1e-4 + 1000.0 * 20e-6, 1e-12);
  EXPECT_NEAR(best.idle_share, 0.0, 1e-12);
  EXPECT_NEAR(own.idle_share, 1.0 - (20.0 / 35.0), 1e-12);
}

// The multirate chain of seed 000 §5.4 in small: light masses 11..20 between heavy ones, cut at
// the mass jumps (elements 10 and 20). Forces across a jump are rough (large N_e), between equal
// masses smooth. The search moves the cuts off the jumps and the predicted macro steps fall.
TEST(PartitionModel, CutsMoveOffTheMassJumps) {
  TrialRun trial;
  trial.duration = 0.01;
  trial.attempts = 1000.0;
  trial.overhead_per_attempt_s = 2e-5;
  trial.subsystems = {{0, 10, 1500.0, 1500 * 10e-6},   // heavy: 1.5 micro steps per macro step
                      {10, 20, 8000.0, 8000 * 10e-6},  // light: held by its own dynamics
                      {20, 30, 1500.0, 1500 * 10e-6}};
  std::vector<double> indicators(31, 10.0);
  indicators[10] = indicators[20] = 200.0;
  for (std::size_t e = 11; e < 20; ++e) indicators[e] = 150.0;  // inside the light block
  const PartitionModel model(trial, indicators, 4);
  EXPECT_DOUBLE_EQ(model.calibration(), 5.0);
  const auto best = model.search(3);
  ASSERT_EQ(best.boundaries.size(), 4u);
  for (std::size_t j = 1; j < 3; ++j) {
    EXPECT_NE(best.boundaries[j], 10u);
    EXPECT_NE(best.boundaries[j], 20u);
    EXPECT_EQ(indicators[best.boundaries[j]], 10.0) << "cut at element " << best.boundaries[j];
  }
  EXPECT_DOUBLE_EQ(best.macro_steps, 50.0);  // 5 * 10 instead of the trial's 1000
  // The light masses keep their own 8000 micro steps; the heavy blocks fall to 1.5 per macro step.
  const auto own = model.predict({0, 10, 20, 30});
  EXPECT_DOUBLE_EQ(own.macro_steps, 1000.0);
  EXPECT_LT(best.wall_s, own.wall_s);
}

// One core: the loads add up (the longest-first schedule puts every block on it).
TEST(PartitionModel, OneCoreAddsTheLoads) {
  TrialRun trial;
  trial.duration = 1.0;
  trial.attempts = 10.0;
  trial.subsystems = {{0, 2, 100.0, 2e-3}, {2, 4, 100.0, 2e-3}};
  const PartitionModel model(trial, std::vector<double>(5, 1.0), 1);
  const auto p = model.predict({0, 2, 4});
  EXPECT_NEAR(p.wall_s, 4e-3, 1e-15);
  ASSERT_EQ(p.schedule.size(), 1u);
  EXPECT_EQ(p.schedule[0].size(), 2u);
}

TEST(PartitionModel, InconsistentInputIsRefused) {
  TrialRun trial;
  trial.duration = 1.0;
  trial.attempts = 10.0;
  trial.subsystems = {{0, 2, 100.0, 1e-3}, {3, 4, 100.0, 1e-3}};  // a gap
  EXPECT_THROW(PartitionModel(trial, std::vector<double>(5, 1.0), 2), std::invalid_argument);
  trial.subsystems[1].first = 2;
  EXPECT_THROW(PartitionModel(trial, std::vector<double>(4, 1.0), 2), std::invalid_argument);
  EXPECT_THROW(PartitionModel(trial, std::vector<double>(5, NAN), 2), std::invalid_argument);
  const PartitionModel model(trial, std::vector<double>(5, 1.0), 2);
  EXPECT_THROW((void)model.search(5), std::invalid_argument);
  EXPECT_THROW((void)model.predict({0, 3, 3, 4}), std::invalid_argument);
  EXPECT_THROW(CutIndicatorSampler(3, 2, 6, 1e-3, 1e-3), std::invalid_argument);
  EXPECT_THROW(CutIndicatorSampler(3, 2, 1, 1e-3, 1e-3), std::invalid_argument);
}

}  // namespace

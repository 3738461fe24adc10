// A model that returns NaN or an infinity. The attempt counts as a failure of that
// subsystem: the step is rejected and H reduced (D-26); if it persists, the run ends with an
// error naming the subsystem, the variable and the time (DESIGN.md contract 5).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "explicit_options.hpp"
#include "macrostep/executors/in_process_executor.hpp"
#include "macrostep/schemes/explicit_jacobi.hpp"
#include "star_system.hpp"

namespace macrostep {
namespace {

// A star body whose position output turns NaN from `t_bad` on (its states stay finite, so its
// IDA integrates on: only the master can notice).
class PoisonedBody final : public model::Subsystem {
 public:
  PoisonedBody(std::unique_ptr<model::Subsystem> inner, double t_bad)
      : inner_(std::move(inner)), t_bad_(t_bad) {}
  std::size_t state_size() const override { return inner_->state_size(); }
  std::size_t input_size() const override { return inner_->input_size(); }
  std::size_t output_size() const override { return inner_->output_size(); }
  std::span<const model::StateRole> state_roles() const override { return inner_->state_roles(); }
  std::string state_name(std::size_t i) const override { return inner_->state_name(i); }
  std::string output_name(std::size_t i) const override { return inner_->output_name(i); }
  std::string input_name(std::size_t i) const override { return inner_->input_name(i); }
  double initial_time() const override { return inner_->initial_time(); }
  void initial_state(std::span<const double> u0, std::span<double> z0,
                     std::span<double> zp0) const override {
    inner_->initial_state(u0, z0, zp0);
  }
  void residual(double t, std::span<const double> z, std::span<const double> zp,
                std::span<const double> u, std::span<double> r) const override {
    inner_->residual(t, z, zp, u, r);
  }
  const model::SparsityPattern& jacobian_pattern() const override {
    return inner_->jacobian_pattern();
  }
  void jacobian(double t, std::span<const double> z, std::span<const double> zp,
                std::span<const double> u, double cj, std::span<double> values) const override {
    inner_->jacobian(t, z, zp, u, cj, values);
  }
  void outputs(double t, std::span<const double> z, std::span<const double> u,
               std::span<double> y) const override {
    inner_->outputs(t, z, u, y);
    if (t >= t_bad_) y[0] = std::numeric_limits<double>::quiet_NaN();
  }

 private:
  std::unique_ptr<model::Subsystem> inner_;
  double t_bad_;
};

// The star system of star_system.hpp with body 2 poisoned from t_bad on.
system::CoupledSystem poisoned_star(double t_bad) {
  const testing::Star s;
  std::vector<std::unique_ptr<model::Subsystem>> bodies;
  std::vector<system::MonitoredOutput> monitored;
  for (std::size_t i = 0; i < 3; ++i) {
    const std::string name = "body" + std::to_string(i + 1);
    auto body = std::make_unique<testing::FreeBody>(name, s.mass, s.x0[i], s.v0[i]);
    if (i == 1) {
      bodies.push_back(std::make_unique<PoisonedBody>(std::move(body), t_bad));
    } else {
      bodies.push_back(std::move(body));
    }
    monitored.push_back({name + ".x", {i, 0}, control::WeightGroup::kPosition});
    monitored.push_back({name + ".v", {i, 1}, control::WeightGroup::kVelocity});
  }
  std::vector<std::unique_ptr<system::CouplingLaw>> laws;
  laws.push_back(std::make_unique<testing::NodeLaw>(s.k, s.d));
  return system::CoupledSystem(std::move(bodies), std::move(laws), {{0}, {1}, {2}},
                               std::move(monitored));
}

TEST(NonFiniteOutputs, AreRejectedWithSmallerStepsThenNamedWithVariableAndTime) {
  const auto sys = poisoned_star(0.05);
  executors::InProcessExecutor ex(sys, sys.initial_couplings(), executors::InProcessOptions{});
  schemes::SchemeOptions o = testing::controlled(0.2, control::Estimator::kExMD, 1e-5);
  o.control.h = 1e-4;
  schemes::SchemeResult result;
  std::vector<double> accepted;
  try {
    schemes::run_explicit(
        sys, ex, o, [&](const schemes::AcceptedPoint& p) { accepted.push_back(p.time); }, {},
        result);
    FAIL() << "a NaN output went unnoticed";
  } catch (const schemes::SubsystemFailure& e) {
    const std::string m = e.what();
    EXPECT_EQ(e.subsystem(), 1u);
    EXPECT_NE(m.find("subsystem 2 failed in the macro step"), std::string::npos) << m;
    EXPECT_NE(m.find("its output \"body2.x\" is nan at t = "), std::string::npos) << m;
    EXPECT_LT(e.time(), 0.05);
  }
  ASSERT_FALSE(accepted.empty());
  EXPECT_LT(accepted.back(), 0.05);  // no accepted point carries the NaN
  // The failed attempts were rejected, each with a quarter of the step before (D-26), until
  // the run gave up: at the limit of attempts, or when H fell below H_min.
  EXPECT_GT(result.steps.subsystem_failures, 5u);
  EXPECT_EQ(result.steps.rejected, result.steps.subsystem_failures);
}

TEST(NonFiniteOutputs, EndAFixedStepRunAtOnce) {
  const auto sys = poisoned_star(0.0505);
  executors::InProcessExecutor ex(sys, sys.initial_couplings(), executors::InProcessOptions{});
  schemes::SchemeOptions o;
  o.control.mode = control::StepSizeMode::kFixed;
  o.control.t_end = 0.2;
  o.control.h = 1e-3;
  o.control.kappa_fixed = 1;
  o.control.estimator = control::Estimator::kNone;
  try {
    schemes::run_explicit(sys, ex, o, [](const schemes::AcceptedPoint&) {});
    FAIL() << "a NaN output went unnoticed";
  } catch (const schemes::SubsystemFailure& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("its output \"body2.x\" is nan at t = 0.051"), std::string::npos) << m;
  }
}

}  // namespace
}  // namespace macrostep

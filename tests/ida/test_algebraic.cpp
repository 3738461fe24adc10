// Subsystems without continuous states (y = g(t, u): a gain, a sum, a source): the integrator
// runs no IDA; its time is the whole workspace, and snapshots, clones and exported snapshots
// carry it like any other.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "macrostep/ida/integrator.hpp"
#include "macrostep/library/sources.hpp"
#include "macrostep/model/subsystem.hpp"

namespace macrostep::ida {
namespace {

// y_0 = k·u_0 + sin(t), y_1 = u_0 + u_1: two outputs, two inputs, feed-through, no states.
class GainAndSum final : public model::Subsystem {
 public:
  explicit GainAndSum(double k) : k_(k) { pattern_.column_start = {0}; }
  std::size_t state_size() const override { return 0; }
  std::size_t input_size() const override { return 2; }
  std::size_t output_size() const override { return 2; }
  bool has_feedthrough() const override { return true; }
  std::span<const model::StateRole> state_roles() const override { return {}; }
  std::string state_name(std::size_t) const override { return ""; }
  std::string output_name(std::size_t i) const override { return i == 0 ? "gain" : "sum"; }
  std::string input_name(std::size_t i) const override { return i == 0 ? "a" : "b"; }
  double initial_time() const override { return 0.5; }
  void initial_state(std::span<const double>, std::span<double>, std::span<double>) const override {
  }
  void residual(double, std::span<const double>, std::span<const double>, std::span<const double>,
                std::span<double>) const override {}
  const model::SparsityPattern& jacobian_pattern() const override { return pattern_; }
  void jacobian(double, std::span<const double>, std::span<const double>, std::span<const double>,
                double, std::span<double>) const override {}
  void outputs(double t, std::span<const double>, std::span<const double> u,
               std::span<double> y) const override {
    y[0] = k_ * u[0] + std::sin(t);
    y[1] = u[0] + u[1];
  }

 private:
  double k_;
  model::SparsityPattern pattern_;
};

// u(t) = (t, 2 - t).
class Ramp final : public model::InputFunction {
 public:
  void evaluate(double t, std::span<double> u) const override {
    u[0] = t;
    u[1] = 2.0 - t;
  }
};

TEST(AlgebraicSubsystem, OutputsFollowTimeAndInputsWithoutIda) {
  const GainAndSum model(3.0);
  const Ramp input;
  Integrator integrator(model, IntegratorOptions{}, &input);
  EXPECT_EQ(integrator.time(), 0.5);
  std::vector<double> y(2);
  integrator.outputs(y);
  EXPECT_DOUBLE_EQ(y[0], 1.5 + std::sin(0.5));
  EXPECT_DOUBLE_EQ(y[1], 2.0);
  const AdvanceStats s = integrator.advance_to(1.25);
  EXPECT_EQ(s.steps, 0);
  EXPECT_EQ(integrator.time(), 1.25);
  integrator.outputs(y);
  EXPECT_DOUBLE_EQ(y[0], 3.75 + std::sin(1.25));
  EXPECT_EQ(integrator.current_order(), 0);
  EXPECT_EQ(integrator.input_jump_norm(), 0.0);
  std::vector<double> none;
  integrator.state(none, none);
  integrator.consistent_derivative(none);
  std::vector<double> d(4);
  integrator.feedthrough_jacobian(d);
  EXPECT_NEAR(d[0], 3.0, 1e-6);  // ∂y_0/∂u_0
  EXPECT_NEAR(d[1], 1.0, 1e-6);  // ∂y_1/∂u_0
  EXPECT_NEAR(d[2], 0.0, 1e-6);  // ∂y_0/∂u_1
  EXPECT_NEAR(d[3], 1.0, 1e-6);  // ∂y_1/∂u_1
  EXPECT_THROW(integrator.advance_to(1.0), std::invalid_argument);
  // A restart or a history shift has nothing to act on.
  AdvanceControl control;
  control.restart = true;
  integrator.advance_to(1.5, control);
  EXPECT_EQ(integrator.time(), 1.5);
}

TEST(AlgebraicSubsystem, SnapshotsClonesAndExportsCarryTheTime) {
  for (const LinearSolver solver : {LinearSolver::kKlu, LinearSolver::kDense}) {
    const GainAndSum model(2.0);
    const Ramp input;
    IntegratorOptions options;
    options.linear_solver = solver;
    Integrator a(model, options, &input);
    a.advance_to(0.75);
    const auto snapshot = a.make_snapshot();
    EXPECT_EQ(snapshot->time(), 0.75);
    a.advance_to(2.0);
    a.restore(*snapshot);
    EXPECT_EQ(a.time(), 0.75);

    Integrator b(model, options, &input);
    b.copy_state_from(a);
    EXPECT_EQ(b.time(), 0.75);

    const std::vector<std::byte> bytes = a.export_snapshot(*snapshot);
    Integrator c(model, options, &input);
    auto imported = c.make_snapshot();
    c.import_snapshot(bytes, *imported);
    c.restore(*imported);
    EXPECT_EQ(c.time(), 0.75);
    EXPECT_EQ(c.export_snapshot(*imported), bytes);  // the same bytes again
  }
}

// A jump (a step of width 0) is a time event: an advance that ends on it has the value before
// it as its left limit and the one after it as its state; one that passes it has neither, and a
// restore forgets the left limit.
TEST(AlgebraicSubsystem, AnAdvanceEndingOnATimeEventKeepsTheOutputsBeforeIt) {
  const library::StepSource step(2.0, 24.0, 0.1, 0.0, "V");
  ASSERT_NE(step.events(), nullptr);
  Integrator integrator(step, IntegratorOptions{});
  std::vector<double> y(1), before(1);
  integrator.advance_to(0.05);
  EXPECT_FALSE(integrator.event_at_end());
  EXPECT_THROW(integrator.outputs_before_event(before), std::logic_error);
  const auto snapshot = integrator.make_snapshot();
  EXPECT_EQ(integrator.advance_to(0.1).events, 1);
  ASSERT_TRUE(integrator.event_at_end());
  integrator.outputs_before_event(before);
  integrator.outputs(y);
  EXPECT_EQ(before[0], 2.0);
  EXPECT_EQ(y[0], 24.0);
  EXPECT_EQ(integrator.mode()->next_time_event(), std::numeric_limits<double>::infinity());
  integrator.restore(*snapshot);
  EXPECT_FALSE(integrator.event_at_end());
  EXPECT_EQ(integrator.mode()->next_time_event(), 0.1);
  EXPECT_EQ(integrator.advance_to(0.2).events, 1);
  EXPECT_FALSE(integrator.event_at_end()) << "the event lies inside the advance";
  integrator.outputs(y);
  EXPECT_EQ(y[0], 24.0);
}

}  // namespace
}  // namespace macrostep::ida

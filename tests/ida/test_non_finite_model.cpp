// A model that returns a residual or Jacobian value that is not finite: IDA retries with a
// smaller step, which steps over a passing failure; a model that fails from some time on ends the
// advance with IntegrationError naming the value, its states and the time, instead of IDA
// shrinking its steps towards that time until max_steps.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "macrostep/ida/integrator.hpp"

namespace macrostep {
namespace {

// x' = v, v' = -x, whose residual (or one Jacobian entry) is `bad` for t in [t_bad, t_good).
class BreakingOscillator final : public model::Subsystem {
 public:
  enum class Where { kResidual, kJacobian, kThrowsInt };
  BreakingOscillator(Where where, double t_bad, double bad,
                     double t_good = std::numeric_limits<double>::infinity())
      : where_(where), t_bad_(t_bad), t_good_(t_good), bad_(bad) {
    pattern_.n = 2;
    pattern_.column_start = {0, 2, 4};
    pattern_.row_index = {0, 1, 0, 1};
  }
  std::size_t state_size() const override { return 2; }
  std::size_t input_size() const override { return 0; }
  std::size_t output_size() const override { return 1; }
  std::span<const model::StateRole> state_roles() const override { return roles_; }
  std::string state_name(std::size_t i) const override { return i == 0 ? "x" : "v"; }
  std::string output_name(std::size_t) const override { return "x"; }
  std::string input_name(std::size_t) const override { return ""; }
  double initial_time() const override { return 0.0; }
  void initial_state(std::span<const double>, std::span<double> z,
                     std::span<double> zp) const override {
    z[0] = 1.0;
    z[1] = 0.0;
    zp[0] = 0.0;
    zp[1] = -1.0;
  }
  void residual(double t, std::span<const double> z, std::span<const double> zp,
                std::span<const double>, std::span<double> r) const override {
    if (where_ == Where::kThrowsInt && broken(t)) throw 42;  // not a std::exception
    r[0] = zp[0] - z[1];
    r[1] = where_ == Where::kResidual && broken(t) ? bad_ : zp[1] + z[0];
  }
  const model::SparsityPattern& jacobian_pattern() const override { return pattern_; }
  void jacobian(double t, std::span<const double>, std::span<const double>, std::span<const double>,
                double cj, std::span<double> values) const override {
    values[0] = cj;   // dF0/dx
    values[1] = 1.0;  // dF1/dx
    values[2] = -1.0;
    values[3] = cj;
    if (where_ == Where::kJacobian && broken(t)) values[1] = bad_;
  }
  void outputs(double, std::span<const double> z, std::span<const double>,
               std::span<double> y) const override {
    y[0] = z[0];
  }

 private:
  bool broken(double t) const { return t >= t_bad_ && t < t_good_; }
  Where where_;
  double t_bad_, t_good_, bad_;
  model::SparsityPattern pattern_;
  model::StateRole roles_[2] = {model::StateRole::kPosition, model::StateRole::kVelocity};
};

struct Failure {
  std::string message;
  double time = 0.0;
  long steps = 0;
};

Failure integrate(const BreakingOscillator& model, ida::LinearSolver solver) {
  ida::IntegratorOptions options;
  options.linear_solver = solver;
  ida::Integrator integrator(model, options);
  try {
    integrator.advance_to(0.1);
  } catch (const ida::IntegrationError& e) {
    return {e.what(), e.time(), integrator.total_stats().steps};
  }
  return {"no error", integrator.time(), integrator.total_stats().steps};
}

class NonFiniteModel : public ::testing::TestWithParam<ida::LinearSolver> {};

TEST_P(NonFiniteModel, ResidualIsNamedWithItsStateAndTime) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const BreakingOscillator model(BreakingOscillator::Where::kResidual, 1e-3, nan);
  const Failure f = integrate(model, GetParam());
  EXPECT_NE(f.message.find("the model's residual r[1] (row of state \"v\") is nan at t = 0.001"),
            std::string::npos)
      << f.message;
  EXPECT_GE(f.time, 0.0);
  EXPECT_LT(f.time, 1e-3);  // IDA's last accepted point: the failing step started before t_bad
  // Before, IDA crept towards t_bad with ever smaller steps until max_steps (500,000).
  EXPECT_LT(f.steps, 1000);
}

TEST_P(NonFiniteModel, JacobianEntryIsNamedWithRowColumnAndTime) {
  const BreakingOscillator model(BreakingOscillator::Where::kJacobian, 1e-3,
                                 -std::numeric_limits<double>::infinity());
  const Failure f = integrate(model, GetParam());
  EXPECT_NE(f.message.find("the model's Jacobian entry values[1] (row 1 of state \"v\", column 0 "
                           "of state \"x\"; cj = "),
            std::string::npos)
      << f.message;
  EXPECT_NE(f.message.find(") is -inf at t = 0.00"), std::string::npos) << f.message;
  EXPECT_LT(f.steps, 1000);
}

// A throw of something else than a std::exception (a plugin's `throw 42`) ended the process
// (std::terminate in IDA's C frames); it is a failure with a message like any model error.
TEST_P(NonFiniteModel, AThrowOfAnythingIsAFailureWithACause) {
  const BreakingOscillator model(BreakingOscillator::Where::kThrowsInt, 1e-3, 0.0);
  const Failure f = integrate(model, GetParam());
  EXPECT_NE(f.message.find("the model threw an exception that is not a std::exception"),
            std::string::npos)
      << f.message;
}

TEST_P(NonFiniteModel, FiniteValuesIntegrateAsBefore) {
  // The same model with the breaking time beyond the interval: no failure, the solution of
  // x'' = -x to the integrator's accuracy.
  const BreakingOscillator model(BreakingOscillator::Where::kResidual, 1.0,
                                 std::numeric_limits<double>::quiet_NaN());
  const Failure f = integrate(model, GetParam());
  EXPECT_EQ(f.message, "no error");
  EXPECT_EQ(f.time, 0.1);
}

TEST_P(NonFiniteModel, APassingFailureIsSteppedOver) {
  // NaN for a microsecond: the steps that land there are retried shorter and the integration
  // goes on, to the same solution as without the failure (within the tolerances).
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const BreakingOscillator model(BreakingOscillator::Where::kResidual, 0.05, nan, 0.050001);
  ida::IntegratorOptions options;
  options.linear_solver = GetParam();
  ida::Integrator integrator(model, options);
  integrator.advance_to(0.1);
  std::vector<double> z(2), zp(2);
  integrator.state(z, zp);
  EXPECT_NEAR(z[0], std::cos(0.1), 1e-5);
  EXPECT_NEAR(z[1], -std::sin(0.1), 1e-5);
}

INSTANTIATE_TEST_SUITE_P(Solvers, NonFiniteModel,
                         ::testing::Values(ida::LinearSolver::kKlu, ida::LinearSolver::kDense));

}  // namespace
}  // namespace macrostep

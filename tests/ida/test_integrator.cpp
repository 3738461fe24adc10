// IDA + KLU/dense integrator: accuracy against closed forms, solver agreement, exact arrival at
// macro points (METHODS.md §6.6, D-35), error reporting.
#include <gtest/gtest.h>

#include <atomic>

#include <cmath>
#include <numbers>
#include <string>
#include <tuple>
#include <vector>

#include "macrostep/ida/integrator.hpp"
#include "macrostep/model/output_grid.hpp"
#include "test_support.hpp"

namespace macrostep {
namespace {

using ida::Integrator;
using ida::IntegratorOptions;
using ida::LinearSolver;

// Linear undamped fixed-fixed chain (seed 000 Eq. 2.15 with C = D = d = 0, no forces):
// M x'' + K x = 0 with K = c·tridiag(-1, 2, -1) has the modes phi_k(i) = sin(i k pi / (n+1)) and
// omega_k = 2 sqrt(c/m) sin(k pi / (2(n+1))). The integrator must follow the modal solution, also
// in overshoot mode (METHODS §6.6 option (a)), where the state at each point is interpolated.
class ModalChain : public ::testing::TestWithParam<std::tuple<LinearSolver, bool>> {};

TEST_P(ModalChain, FollowsClosedFormModalSolution) {
  const std::size_t n = 8;
  const double m = 1.0, c = 1e4;
  const double pi = std::numbers::pi;
  library::ChainParameters p;
  p.mass.assign(n, m);
  p.element.assign(n + 1, library::ElementLaw{c, 0.0, 0.0, 0.0, 3.0, 3.0});
  p.forces.assign(n, {});
  // Initial state: modes 1, 3 and 8 in position, mode 2 in velocity.
  const std::vector<double> a = {1e-3, 0.0, 4e-4, 0, 0, 0, 0, 2e-4};
  const std::vector<double> b = {0.0, 0.05, 0, 0, 0, 0, 0, 0};
  std::vector<double> omega(n);
  for (std::size_t k = 0; k < n; ++k) {
    omega[k] = 2.0 * std::sqrt(c / m) * std::sin((k + 1) * pi / (2.0 * (n + 1)));
  }
  auto mode = [&](std::size_t k, std::size_t i) {  // 0-based k, i
    return std::sin((i + 1) * (k + 1) * pi / (n + 1));
  };
  p.x0.assign(n, 0.0);
  p.v0.assign(n, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t k = 0; k < n; ++k) {
      p.x0[i] += a[k] * mode(k, i);
      p.v0[i] += b[k] * mode(k, i);
    }
  }
  library::ChainSegment chain(p, 0, n);
  IntegratorOptions o;
  o.linear_solver = std::get<0>(GetParam());
  o.overshoot = std::get<1>(GetParam());
  o.rtol = 1e-10;
  o.atol_pos = 1e-15;
  o.atol_vel = 1e-12;
  Integrator integ(chain, o);
  std::vector<double> z(2 * n), zp(2 * n);
  double max_error = 0.0;
  for (int step = 1; step <= 20; ++step) {
    const double t = step * 2.5e-3;  // 0.05 s: about 1.6 periods of the slowest mode
    integ.advance_to(t);
    EXPECT_EQ(integ.time(), t);
    integ.state(z, zp);
    for (std::size_t i = 0; i < n; ++i) {
      double x = 0.0, v = 0.0;
      for (std::size_t k = 0; k < n; ++k) {
        const double wt = omega[k] * t;
        x += (a[k] * std::cos(wt) + b[k] / omega[k] * std::sin(wt)) * mode(k, i);
        v += (-a[k] * omega[k] * std::sin(wt) + b[k] * std::cos(wt)) * mode(k, i);
      }
      max_error = std::max(max_error, std::abs(z[2 * i] - x) / 1e-3);
      max_error = std::max(max_error, std::abs(z[2 * i + 1] - v) / (1e-3 * omega[n - 1]));
    }
  }
  // Relative to the amplitude scale; BDF at rtol 1e-10 over ~1.6 periods.
  EXPECT_LT(max_error, 1e-6);
}

INSTANTIATE_TEST_SUITE_P(
    Solvers, ModalChain,
    ::testing::Combine(::testing::Values(LinearSolver::kKlu, LinearSolver::kDense),
                       ::testing::Bool()),
    [](const auto& info) {
      return std::string(std::get<0>(info.param) == LinearSolver::kKlu ? "Klu" : "Dense") +
             (std::get<1>(info.param) ? "Overshoot" : "");
    });

// KLU and dense LU solve the same Newton systems; results agree to the integration tolerance.
TEST(Integrator, KluAndDenseAgreeToTolerance) {
  const auto p = test::nonlinear_chain(30);
  library::ChainSegment chain(p, 0, 30);
  IntegratorOptions o;
  o.rtol = 1e-8;
  o.atol_pos = 1e-11;
  o.atol_vel = 1e-8;
  o.linear_solver = LinearSolver::kKlu;
  Integrator klu(chain, o);
  o.linear_solver = LinearSolver::kDense;
  Integrator dense(chain, o);
  std::vector<double> zk(60), zpk(60), zd(60), zpd(60);
  double max_x = 0, max_v = 0, err_x = 0, err_v = 0;
  for (int k = 1; k <= 20; ++k) {
    klu.advance_to(k * 1e-4);
    dense.advance_to(k * 1e-4);
    klu.state(zk, zpk);
    dense.state(zd, zpd);
    for (std::size_t i = 0; i < 30; ++i) {
      max_x = std::max(max_x, std::abs(zk[2 * i]));
      max_v = std::max(max_v, std::abs(zk[2 * i + 1]));
      err_x = std::max(err_x, std::abs(zk[2 * i] - zd[2 * i]));
      err_v = std::max(err_v, std::abs(zk[2 * i + 1] - zd[2 * i + 1]));
    }
  }
  EXPECT_LT(err_x / max_x, 1e-5);
  EXPECT_LT(err_v / max_v, 1e-5);
  EXPECT_GT(klu.total_stats().steps, 10);
}

// Every macro step ends exactly on its macro-time point (IDASetStopTime + Listing 4.1), also
// for points that are not representable sums of micro steps.
TEST(Integrator, StopsExactlyAtMacroPoints) {
  const auto p = test::nonlinear_chain(30);
  library::ChainSegment segment(p, 0, 12);
  test::QuadraticInput input(1, 0.0, 10.0);
  for (bool adjust : {true, false}) {
    IntegratorOptions o;
    o.stop_adjustment = adjust;
    Integrator integ(segment, o, &input);
    double t = 0.0;
    for (int k = 1; k <= 60; ++k) {
      t += 1e-5 / 3.0 * (1.0 + 0.1 * (k % 5));
      const auto s = integ.advance_to(t);
      EXPECT_EQ(integ.time(), t) << "adjust " << adjust << " step " << k;
      EXPECT_GE(s.steps, 1);
    }
  }
}

// Output samples on a grid (set_output_grid): every grid time strictly inside each advance, the
// outputs there from IDA's interpolant, without changing the integration; against a second
// integrator whose macro points are the grid times themselves (it stops there), they agree to the
// solver's tolerance.
TEST(Integrator, OutputSamplesAreTheDenseOutputAtTheGridTimes) {
  const auto p = test::nonlinear_chain(30);
  library::ChainSegment segment(p, 0, 12);
  test::QuadraticInput input(1, 0.0, 10.0);
  IntegratorOptions o;
  o.rtol = 1e-10;
  o.atol_pos = 1e-13;
  o.atol_vel = 1e-10;
  Integrator sampled(segment, o, &input), plain(segment, o, &input), hits(segment, o, &input);
  const double dt = 1e-6;
  sampled.set_output_grid(dt);
  const std::size_t ny = segment.output_size();
  std::vector<double> y(ny), scale(ny, 0.0);
  double t = 0.0, worst = 0.0;
  std::size_t samples = 0;
  for (int k = 1; k <= 40; ++k) {
    const double t1 = t + 3.7e-6 * (1.0 + 0.3 * (k % 3));
    sampled.advance_to(t1);
    plain.advance_to(t1);
    // The same integration with and without samples.
    std::vector<double> a(ny), b(ny);
    sampled.outputs(a);
    plain.outputs(b);
    EXPECT_TRUE(test::bit_identical(a, b)) << "step " << k;
    const ida::OutputSamples& s = sampled.samples();
    const model::GridRange inside = model::grid_inside(t, t1, dt);
    ASSERT_EQ(s.times.size(), static_cast<std::size_t>(inside.size())) << "step " << k;
    ASSERT_EQ(s.values.size(), s.times.size() * ny);
    for (std::size_t j = 0; j < s.times.size(); ++j) {
      const double tk = model::grid_time(inside.first + static_cast<std::int64_t>(j), dt);
      EXPECT_EQ(s.times[j], tk);
      hits.advance_to(tk);
      hits.outputs(y);
      for (std::size_t o2 = 0; o2 < ny; ++o2) {
        scale[o2] = std::max(scale[o2], std::abs(y[o2]));
        worst = std::max(worst, std::abs(y[o2] - s.values[j * ny + o2]) / (1e-6 + scale[o2]));
      }
      ++samples;
    }
    t = t1;
  }
  std::cout << samples << " samples, largest relative difference " << worst << "\n";
  EXPECT_GT(samples, 100u);
  EXPECT_LT(worst, 1e-6);
}

// Listing 4.1 removes the tiny final micro steps that plain stop-time clipping leaves: over
// many macro steps with H not a multiple of h, the adjusted run never needs more micro steps.
TEST(Integrator, StopAdjustmentAvoidsTinyFinalSteps) {
  const auto p = test::nonlinear_chain(30);
  library::ChainSegment chain(p, 0, 30);
  long steps[2] = {0, 0};
  for (int adjust = 0; adjust < 2; ++adjust) {
    IntegratorOptions o;
    o.stop_adjustment = adjust == 1;
    Integrator integ(chain, o);
    for (int k = 1; k <= 200; ++k) steps[adjust] += integ.advance_to(k * 7.3e-6).steps;
  }
  EXPECT_LE(steps[1], steps[0]);
}

// Overshoot mode (METHODS §6.6 option (a), seed 000 §4.3): no micro step longer than the macro
// step, IDA steps past each point and time() is the point itself; an interpolated state has no
// workspace, and nothing restarts. The sizes' mean and spread come with the counters.
TEST(Integrator, OvershootStepsPastThePointAndInterpolates) {
  const auto p = test::nonlinear_chain(30);
  library::ChainSegment segment(p, 0, 12);
  test::QuadraticInput input(1, 0.0, 10.0);
  IntegratorOptions o;
  o.overshoot = true;
  Integrator integ(segment, o, &input);
  const double h = 2e-6;
  long steps = 0;
  double sum = 0.0, square_sum = 0.0;
  bool beyond = false;
  for (int k = 1; k <= 50; ++k) {
    const auto s = integ.advance_to(k * h);
    EXPECT_EQ(integ.time(), k * h);
    EXPECT_LE(s.step_sum, static_cast<double>(s.steps) * h * (1.0 + 1e-12));
    steps += s.steps;
    sum += s.step_sum;
    square_sum += s.step_square_sum;
    if (s.steps == 0) beyond = true;  // the previous step already passed this point
    try {
      (void)integ.make_snapshot();
    } catch (const std::logic_error&) {
      beyond = true;
    }
  }
  EXPECT_TRUE(beyond);
  EXPECT_GT(steps, 0);
  EXPECT_NEAR(integ.total_stats().step_sum, sum, 1e-15);
  EXPECT_GE(square_sum * static_cast<double>(steps), sum * sum * (1.0 - 1e-12));  // Cauchy–Schwarz
  ida::AdvanceControl restart;
  restart.restart = true;
  EXPECT_THROW(integ.advance_to(51 * h, restart), std::logic_error);
}

// The liveness counter of the process executor's hang check counts exactly the model
// evaluations (residual + Jacobian) of advance_to(), and snapshots leave it alone.
TEST(Integrator, ProgressCounterCountsEveryModelEvaluation) {
  const auto p = test::nonlinear_chain(30);
  library::ChainSegment segment(p, 0, 12);
  test::QuadraticInput input(1, 0.0, 10.0);
  Integrator integ(segment, IntegratorOptions{}, &input);
  const auto before = integ.total_stats();  // the consistent start evaluates the model too
  std::atomic<std::uint64_t> counter{0};
  integ.set_progress_counter(&counter);
  const auto snapshot = integ.make_snapshot();
  ida::AdvanceStats sum;
  for (int k = 1; k <= 20; ++k) sum += integ.advance_to(k * 1e-5);
  EXPECT_GT(sum.residual_evals, 20);
  EXPECT_EQ(counter.load(), static_cast<std::uint64_t>(sum.residual_evals + sum.jacobian_evals));
  EXPECT_EQ(integ.total_stats().residual_evals - before.residual_evals, sum.residual_evals);
  const std::uint64_t at_end = counter.load();
  integ.restore(*snapshot);
  EXPECT_EQ(counter.load(), at_end);
  integ.set_progress_counter(nullptr);
  integ.advance_to(1e-5);
  EXPECT_EQ(counter.load(), at_end);
}

TEST(Integrator, ReportsBadUse) {
  const auto p = test::nonlinear_chain(30);
  library::ChainSegment segment(p, 5, 15);
  IntegratorOptions o;
  o.rtol = 0.0;
  EXPECT_THROW(Integrator(segment, o), std::invalid_argument);
  o.rtol = 1e-6;
  o.max_order = 6;
  EXPECT_THROW(Integrator(segment, o), std::invalid_argument);
  o.max_order = 5;
  // Inputs are required for a cut segment.
  EXPECT_THROW(Integrator(segment, o), std::logic_error);
  test::QuadraticInput input(2, 0.0, 1.0);
  Integrator integ(segment, o, &input);
  integ.advance_to(1e-5);
  EXPECT_THROW(integ.advance_to(1e-5), std::invalid_argument);
  EXPECT_THROW(integ.advance_to(0.5e-5), std::invalid_argument);
}

// The jump handling (ida::AdvanceControl): a z' consistent with a new input solves
// the residual; the jump norm tells a jump from none; a history shift with no input difference
// changes no bit; a restart integrates on from the same state.
TEST(Integrator, ConsistentDerivativeJumpNormShiftAndRestart) {
  const auto p = test::nonlinear_chain(30);
  library::ChainSegment segment(p, 5, 15);
  IntegratorOptions o;
  o.rtol = 1e-8;
  o.atol_pos = 1e-11;
  o.atol_vel = 1e-8;
  test::QuadraticInput old_input(2, 0.0, 1.0), jumped(2, 0.0, 1e3);
  Integrator a(segment, o, &old_input), b(segment, o, &old_input);
  a.advance_to(1e-5);
  b.copy_state_from(a);
  EXPECT_LT(a.input_jump_norm(), 1.0);  // the history fits its own input
  const std::size_t n = segment.state_size();
  std::vector<double> z(n), zp(n), r(n), u(2);
  a.set_input(&jumped);
  EXPECT_GT(a.input_jump_norm(), 1.0);
  a.state(z, zp);
  a.consistent_derivative(zp);
  jumped.evaluate(a.time(), u);
  segment.residual(a.time(), z, zp, u, r);
  for (std::size_t i = 0; i < n; ++i) EXPECT_NEAR(r[i], 0.0, 1e-9 * (1.0 + std::abs(u[0])));
  // No input difference: the shift adds zeros.
  a.set_input(&old_input);
  ida::AdvanceControl shift;
  shift.previous_input = &old_input;
  a.advance_to(2e-5, shift);
  b.advance_to(2e-5);
  std::vector<double> za(n), zpa(n), zb(n), zpb(n);
  a.state(za, zpa);
  b.state(zb, zpb);
  EXPECT_TRUE(test::bit_identical(za, zb));
  // A restart at the jump continues from the same state with the new input.
  ida::AdvanceControl restart;
  restart.restart = true;
  a.set_input(&jumped);
  const auto stats = a.advance_to(3e-5, restart);
  EXPECT_GT(stats.steps, 0);
  EXPECT_DOUBLE_EQ(a.time(), 3e-5);
}

// A chain of `masses` equal bodies with linear spring/dampers, at rest but for a velocity.
library::ChainParameters linear_chain(std::size_t masses, double m, double c, double d) {
  library::ChainParameters p;
  p.mass.assign(masses, m);
  p.element.assign(masses + 1, library::ElementLaw{c, d, 0.0, 0.0, 3.0, 3.0});
  p.forces.assign(masses, {});
  p.x0.assign(masses, 0.0);
  p.v0.assign(masses, 0.0);
  p.v0[0] = 1e-2;
  return p;
}

// Whether a history shift at a jump of the input changes the next macro step: integrators
// advanced to T with `before`, then to 2T with `after`, one keeping its history, one shifting it.
bool shift_changes_the_step(const library::ChainParameters& p, double t) {
  library::ChainSegment segment(p, 2, 4);  // both ends cut: two force inputs
  IntegratorOptions o;
  test::QuadraticInput before(2, 0.0, 1.0), after(2, 0.0, 2.0);
  Integrator keep(segment, o, &before), shift(segment, o, &before);
  keep.advance_to(t);
  shift.advance_to(t);
  keep.set_input(&after);
  shift.set_input(&after);
  ida::AdvanceControl control;
  control.previous_input = &before;
  keep.advance_to(2 * t);
  shift.advance_to(2 * t, control);
  const std::size_t n = segment.state_size();
  std::vector<double> zk(n), zpk(n), zs(n), zps(n);
  keep.state(zk, zpk);
  shift.state(zs, zps);
  return !test::bit_identical(zk, zs);
}

// The history is shifted where its span resolves the modes the input drives, and left as it is
// where a mode decays much faster than the span: there the past that would lead to the present
// state under the new input grows like e^{span·|λ|} backwards, and shifting to it made runs of
// S-5.4b restructured 40× less accurate than keeping the history.
TEST(Integrator, HistoryIsShiftedOnlyOverSpansThatResolveTheModes) {
  // 1 kg bodies, 100 N/m: ω = 10 1/s, spans of micro steps of about 1e-3 s.
  EXPECT_TRUE(shift_changes_the_step(linear_chain(6, 1.0, 1e2, 0.0), 1e-2));
  // 0.1 kg bodies, dampers of 1e4 N s/m: |λ| about 4e5 1/s against spans of 1e-4 s and more.
  EXPECT_FALSE(shift_changes_the_step(linear_chain(6, 0.1, 1e2, 1e4), 1e-2));
}

// A body on a spring whose coupling force is an algebraic state (a user's DAE):
// x' = v, m·v' = −k·x + F, 0 = F − c·(u − x). F has no derivative (a zero column of dF/dz').
class SpringForceDae final : public model::Subsystem {
 public:
  SpringForceDae() {
    pattern_.n = 3;
    pattern_.column_start = {0, 3, 5, 7};
    pattern_.row_index = {0, 1, 2, 0, 1, 1, 2};
  }
  std::size_t state_size() const override { return 3; }
  std::size_t input_size() const override { return 1; }
  std::size_t output_size() const override { return 1; }
  std::span<const model::StateRole> state_roles() const override { return roles_; }
  std::string state_name(std::size_t i) const override { return i == 0 ? "x" : i == 1 ? "v" : "F"; }
  std::string output_name(std::size_t) const override { return "x"; }
  std::string input_name(std::size_t) const override { return "u"; }
  double initial_time() const override { return 0.0; }
  void initial_state(std::span<const double> u0, std::span<double> z,
                     std::span<double> zp) const override {
    z[0] = 0.0;
    z[1] = 0.0;
    z[2] = kC * u0[0];
    zp[0] = 0.0;
    zp[1] = z[2] / kM;
    zp[2] = 0.0;
  }
  void residual(double, std::span<const double> z, std::span<const double> zp,
                std::span<const double> u, std::span<double> r) const override {
    r[0] = zp[0] - z[1];
    r[1] = kM * zp[1] + kK * z[0] - z[2];
    r[2] = z[2] - kC * (u[0] - z[0]);
  }
  const model::SparsityPattern& jacobian_pattern() const override { return pattern_; }
  void jacobian(double, std::span<const double>, std::span<const double>, std::span<const double>,
                double cj, std::span<double> values) const override {
    const double v[] = {cj, kK, kC, -1.0, kM * cj, -1.0, 1.0};
    std::copy(std::begin(v), std::end(v), values.begin());
  }
  void outputs(double, std::span<const double> z, std::span<const double>,
               std::span<double> y) const override {
    y[0] = z[0];
  }

 private:
  static constexpr double kM = 1.0, kK = 100.0, kC = 50.0;
  model::SparsityPattern pattern_;
  std::vector<model::StateRole> roles_{model::StateRole::kPosition, model::StateRole::kVelocity,
                                       model::StateRole::kOther};
};

// The history of a DAE is not shifted at an input jump (there is no z' for its algebraic state to
// shift along): the step keeps it, bit for bit. The shift asked dF/dz' to be invertible and
// failed every co-simulation of such a plugin under the default jump handling.
TEST(Integrator, AnAlgebraicStateKeepsTheHistoryAtAJump) {
  const SpringForceDae dae;
  // The next macro step's polynomial starts 1e-4 off the last one's end (an extrapolation's miss).
  test::QuadraticInput before(1, 0.0, 1.0), after(1, 0.0, 1.0001);
  Integrator keep(dae, IntegratorOptions{}, &before), shift(dae, IntegratorOptions{}, &before);
  keep.advance_to(1e-2);
  shift.advance_to(1e-2);
  keep.set_input(&after);
  shift.set_input(&after);
  ida::AdvanceControl control;
  control.previous_input = &before;
  keep.advance_to(2e-2);
  ASSERT_NO_THROW(shift.advance_to(2e-2, control));
  std::vector<double> zk(3), zpk(3), zs(3), zps(3);
  keep.state(zk, zpk);
  shift.state(zs, zps);
  EXPECT_TRUE(test::bit_identical(zk, zs));
}

// An IDA failure surfaces as IntegrationError naming the time (DESIGN.md contract 5).
TEST(Integrator, FailureIsReportedWithTime) {
  library::ChainParameters p;
  p.mass.assign(2, 1.0);
  p.element.assign(3, library::ElementLaw{1e4, 0.0, 0.0, 0.0, 3.0, 3.0});
  p.forces.assign(2, {});
  p.x0 = {1e-3, 0.0};
  p.v0 = {0.0, 0.0};
  library::ChainSegment chain(p, 0, 2);
  IntegratorOptions o;
  o.max_steps = 5;
  Integrator integ(chain, o);
  try {
    integ.advance_to(10.0);
    FAIL() << "expected IntegrationError";
  } catch (const ida::IntegrationError& e) {
    EXPECT_GT(e.time(), 0.0);
    EXPECT_NE(std::string(e.what()).find("micro steps"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace macrostep

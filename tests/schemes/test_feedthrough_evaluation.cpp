// The consistent update with outputs nonlinear in the inputs (METHODS.md §1.1
// and decision D-1: "the runtime always updates consistently", seed 000 Eq. 2.22: at every macro
// point u_{N+1} − φ(T_{N+1}, z_{N+1}, u_{N+1}) = 0, the static coupling equations solved, not
// linearised). The force/displacement two-mass oscillator (METHODS §1.2, seed 000 Eq. 2.7) with
// seed 000's nonlinear coupling element (Eq. 5.2) in "two": its feed-through output
// F = c_c·Δx + d_c·Δv + C_c·Δx³ + D_c·Δv³ (Δx = x2 − x̃1, Δv = v2 − ṽ1) is cubic in x̃1, ṽ1.
//  - Evaluated (the model says its outputs are not affine in u): at every accepted macro point
//    the coupling equations hold with the TRUE output, recomputed here from the states and u,
//    to the update's tolerance, in explicit Jacobi and Gauss–Seidel.
//  - The same model declared affine takes the linearised update y(u) ≈ y(u_eval) + D·(u − u_eval)
//    (what every feed-through system did before the output evaluation): its true residual is
//    far above the tolerance, so the first check can fail.
//  - Outputs affine in u (the linear element) are moved with D and ask for no evaluation.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "force_displacement_model.hpp"
#include "macrostep/config/run_config.hpp"
#include "macrostep/executors/in_process_executor.hpp"
#include "macrostep/library/oscillator_mass.hpp"
#include "macrostep/run/cosimulation.hpp"
#include "macrostep/system/displacement_law.hpp"
#include "macrostep/system/signal_law.hpp"
#include "macrostep/system/system_description.hpp"

namespace {

using namespace macrostep;
namespace fd = macrostep::testing;

constexpr double kEvaluationEnd = 0.04;

system::CoupledSystem build(const std::string& text) {
  const config::RunConfig c = config::parse_config(
      text + "\n[simulation]\nend_time = 0.05\noutput_interval = 1e-3\n", "feedthrough-evaluation");
  EXPECT_TRUE(c.system_description.has_value());
  return system::build_system(*c.system_description);
}

// The cubic element's mass "two" with a false declaration: its outputs affine in u. The
// consistent update then moves the output with D instead of evaluating it, the linearised update
// every feed-through system had before the output evaluation. Everything else is the model's.
class DeclaredAffine final : public model::Subsystem {
 public:
  explicit DeclaredAffine(const library::OscillatorMassParameters& p) : m_(p) {}
  std::size_t state_size() const override { return m_.state_size(); }
  std::size_t input_size() const override { return m_.input_size(); }
  std::size_t output_size() const override { return m_.output_size(); }
  bool has_feedthrough() const override { return true; }
  bool output_feeds_through(std::size_t o) const override { return m_.output_feeds_through(o); }
  bool outputs_affine_in_inputs() const override { return true; }  // the false declaration
  std::span<const model::StateRole> state_roles() const override { return m_.state_roles(); }
  std::string state_name(std::size_t i) const override { return m_.state_name(i); }
  std::string output_name(std::size_t i) const override { return m_.output_name(i); }
  std::string input_name(std::size_t i) const override { return m_.input_name(i); }
  double initial_time() const override { return m_.initial_time(); }
  void initial_state(std::span<const double> u0, std::span<double> z0,
                     std::span<double> zp0) const override {
    m_.initial_state(u0, z0, zp0);
  }
  void residual(double t, std::span<const double> z, std::span<const double> zp,
                std::span<const double> u, std::span<double> r) const override {
    m_.residual(t, z, zp, u, r);
  }
  const model::SparsityPattern& jacobian_pattern() const override { return m_.jacobian_pattern(); }
  void jacobian(double t, std::span<const double> z, std::span<const double> zp,
                std::span<const double> u, double cj, std::span<double> values) const override {
    m_.jacobian(t, z, zp, u, cj, values);
  }
  void outputs(double t, std::span<const double> z, std::span<const double> u,
               std::span<double> y) const override {
    m_.outputs(t, z, u, y);
  }
  void feedthrough_jacobian(double t, std::span<const double> z, std::span<const double> u,
                            std::span<double> values) const override {
    m_.feedthrough_jacobian(t, z, u, values);
  }

 private:
  library::OscillatorMass m_;
};

// The cubic F/D system with "two" declared affine (laws and inputs as the description builds).
system::CoupledSystem build_linearised() {
  library::OscillatorMassParameters one, two;
  one.stiffness = fd::kFdC1;
  one.force_input = true;
  one.x0 = 1e-3;
  two.stiffness = fd::kFdC2;
  two.displacement_input = true;
  two.coupling_stiffness = fd::kFdCc;
  two.coupling_damping = fd::kFdDc;
  two.coupling_cubic_stiffness = fd::kFdCubicC;
  two.coupling_cubic_damping = fd::kFdCubicD;
  std::vector<std::unique_ptr<model::Subsystem>> subsystems;
  subsystems.push_back(std::make_unique<library::OscillatorMass>(one));
  subsystems.push_back(std::make_unique<DeclaredAffine>(two));
  std::vector<std::unique_ptr<system::CouplingLaw>> laws;
  laws.push_back(std::make_unique<system::DisplacementLaw>("x1", "v1", system::OutputRef{0, 0},
                                                           system::OutputRef{0, 1}));
  laws.push_back(std::make_unique<system::SignalLaw>("lambda", system::OutputRef{1, 2}));
  return system::CoupledSystem(std::move(subsystems), std::move(laws), {{2}, {0, 1}}, {});
}

// Tight coupling-variable weights: the update's tolerance 1e-3 then allows |Δλ| of about 1e-8 N,
// far below what the linearisation misses at H = 2e-4, κ = 1.
control::ErrorTolerances tight_weights() {
  control::ErrorTolerances tol;
  tol.rtol = 1e-6;
  tol.atol_u = 1e-6;
  return tol;
}

struct Residuals {
  double worst = 0.0;           // largest true WRMS residual ‖u − φ(y_true(u))‖_W
  double worst_after_t0 = 0.0;  // the same over the macro points after the initial one
  double worst_output = 0.0;    // largest |written force − true force at the written u|
  std::size_t points = 0;
  bool displacements_exact = true;  // x̃1 == x1 and ṽ1 == v1 bit for bit
  schemes::SchemeResult result;
};

// Fixed-H Jacobi (or Gauss–Seidel, "two" first) with κ = 1 to kEvaluationEnd; at every accepted
// point the coupling residual with the true output of "two", recomputed from its states and the
// written u.
Residuals run(const system::CoupledSystem& sys, bool gauss_seidel) {
  schemes::SchemeOptions o;
  o.control.mode = control::StepSizeMode::kFixed;
  o.control.t_end = kEvaluationEnd;
  o.control.h = 2e-4;
  o.control.kappa_fixed = 1;
  o.control.estimator = control::Estimator::kNone;
  o.control.fixed_start_ramp = false;
  o.control.tolerances = tight_weights();
  if (gauss_seidel) {
    // Base-excited "two" first: it runs with extrapolated x̃1, ṽ1, which the update then moves
    // to the new x1, v1 (force-driven first, its inputs are x1, v1 already: nothing to move).
    o.gauss_seidel = schemes::GaussSeidelOptions{};
    o.gauss_seidel->sequence = {1, 0};
  }
  executors::InProcessOptions eo;
  eo.solver.rtol = 1e-10;
  eo.rollback = schemes::needs_rollback(o);
  eo.threads = 1;
  executors::InProcessExecutor ex(sys, sys.initial_couplings(), eo);
  const auto scheme = schemes::make_scheme(o);
  Residuals r;
  schemes::run_scheme(
      sys, ex, *scheme, o,
      [&](const schemes::AcceptedPoint& p) {
        const auto& one = p.outputs[0];
        const auto& two = p.outputs[1];
        const double force = fd::cubic_element_force(two[0], two[1], p.u[0], p.u[1]);
        const std::vector<double> g = {p.u[0] - one[0], p.u[1] - one[1], p.u[2] - force};
        std::vector<double> w(3);
        control::error_weights(p.u, o.control.tolerances, control::WeightGroup::kCouplingVariable,
                               w);
        const double residual = control::wrms_norm(g, w);
        r.worst = std::max(r.worst, residual);
        if (p.step > 0) r.worst_after_t0 = std::max(r.worst_after_t0, residual);
        r.worst_output = std::max(r.worst_output, std::abs(two[2] - force));
        r.displacements_exact = r.displacements_exact && p.u[0] == one[0] && p.u[1] == one[1];
        ++r.points;
      },
      [](const schemes::StepRecord&) {}, r.result);
  return r;
}

TEST(FeedthroughEvaluation, NonlinearOutputsSatisfyTheTrueCouplingEquationsAtEveryMacroPoint) {
  const system::CoupledSystem evaluated = build(fd::force_displacement_cubic_two_mass());
  ASSERT_TRUE(evaluated.evaluated(1));
  ASSERT_FALSE(evaluated.evaluated(0));
  const system::CoupledSystem linearised = build_linearised();
  ASSERT_FALSE(linearised.has_evaluated_outputs());
  for (const bool gauss_seidel : {false, true}) {
    SCOPED_TRACE(gauss_seidel ? "Gauss-Seidel" : "Jacobi");
    const Residuals e = run(evaluated, gauss_seidel);
    const Residuals l = run(linearised, gauss_seidel);
    EXPECT_EQ(e.points, 201u);  // the initial point and 200 steps
    EXPECT_LE(e.worst, 1e-3);
    EXPECT_TRUE(e.displacements_exact);
    // The written output is the model's at the written u (no evaluation after the last test).
    EXPECT_LE(e.worst_output, 1e-12);
    // The linearised update: Newton converges on the wrong equations (worst at t0, where the
    // initial update starts from u = 0, 1e-3 m from x1; far above the tolerance at every point).
    EXPECT_GT(l.worst, 1e-2);
    EXPECT_GT(l.worst_after_t0, 0.1);
    const auto& c = e.result.consistent_update;
    EXPECT_GE(c.output_evaluations, 200u);                     // at least one per macro step
    EXPECT_EQ(c.subsystem_evaluations, c.output_evaluations);  // only "two" is asked
    EXPECT_EQ(l.result.consistent_update.output_evaluations, 0u);
    std::printf(
        "%s cubic F/D, H = 2e-4, kappa 1: largest true coupling residual (WRMS, tolerance 1e-3) "
        "evaluated %.3g, linearised %.3g (%.3g after t0); %llu output evaluations, %llu Newton "
        "steps for %zu points\n",
        gauss_seidel ? "Gauss-Seidel" : "Jacobi", e.worst, l.worst, l.worst_after_t0,
        static_cast<unsigned long long>(c.output_evaluations),
        static_cast<unsigned long long>(c.newton_iterations), e.points);
  }
}

// Outputs affine in u (the linear element, configs/two-mass-fd.toml's model) are moved with D,
// exactly: no subsystem is asked for an evaluation, and the run is the one of the linear update.
TEST(FeedthroughEvaluation, AffineOutputsAskForNoEvaluation) {
  const system::CoupledSystem sys = build(fd::kForceDisplacementTwoMass);
  ASSERT_TRUE(sys.has_feedthrough());
  EXPECT_FALSE(sys.has_evaluated_outputs());
  const Residuals r = run(sys, false);
  EXPECT_EQ(r.result.consistent_update.output_evaluations, 0u);
  EXPECT_GT(r.result.consistent_update.newton_iterations, 0u);
  EXPECT_TRUE(r.displacements_exact);
}

}  // namespace

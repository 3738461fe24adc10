// The stability analysis of described systems (runtime/analysis/coupled_stability.hpp) against
// two independent references: the two-mass recurrence of stability.hpp, built from the model's
// equations by hand (the described path linearises the runtime's chain segments and laws), and
// the monolithic system's own exact propagator, which every convergent scheme approaches as
// H → 0.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <vector>

#include "macrostep/analysis/coupled_stability.hpp"
#include "macrostep/system/chain_system.hpp"

namespace macrostep::analysis {
namespace {

// A chain of masses with linear springs and dampers, both ends fixed, cut at `boundaries`.
library::ChainParameters linear_chain(const std::vector<double>& mass, const std::vector<double>& c,
                                      const std::vector<double>& d) {
  library::ChainParameters p;
  p.mass = mass;
  for (std::size_t e = 0; e < c.size(); ++e) p.element.push_back({c[e], d[e]});
  p.forces.resize(mass.size());
  p.x0.assign(mass.size(), 0.0);
  p.v0.assign(mass.size(), 0.0);
  p.x0[0] = 1e-3;
  return p;
}

// The described two-mass chain and the hand-built two-mass model give the same ρ over H for
// explicit Jacobi with Lagrange κ = 0..3 (the hand-built one integrates the same ODE).
TEST(CoupledStability, TwoMassChainAgreesWithTheTwoMassRecurrence) {
  TwoMass model;
  model.m2 = 0.01;
  model.c2 = 0.3;
  model.cc = 0.05;
  model.d1 = 0.02;
  const auto chain = linear_chain({model.m1, model.m2}, {model.c1, model.cc, model.c2},
                                  {model.d1, model.dc, model.d2});
  const system::CoupledSystem sys = system::make_chain_system(chain, {0, 1, 2});
  const LinearCoupledSystem lin = linearise(sys);
  ASSERT_EQ(lin.states(), 4u);
  ASSERT_EQ(lin.couplings(), 1u);
  for (int kappa = 0; kappa <= 3; ++kappa) {
    Method two;
    two.order = kappa;
    CoupledMethod described;
    described.order = kappa;
    for (double h : {0.02, 0.1, 0.198, 0.3, 0.9, 2.0}) {
      const double expected = spectral_radius(model, two, h);
      const double got = spectral_radius(coupled_recurrence(lin, described, h).m);
      EXPECT_NEAR(got, expected, 1e-6 * expected) << "kappa " << kappa << " h " << h;
    }
  }
}

// The same for Gauss–Seidel with either end value of the force that reads the second subsystem
// itself: converged (solved for) and sequential (its own states extrapolated, stability.hpp).
TEST(CoupledStability, TwoMassChainAgreesForBothGaussSeidelEndValues) {
  TwoMass model;
  model.m2 = 0.5;
  model.c2 = 2.0;
  model.cc = 0.7;
  model.d1 = 0.02;
  model.dc = 0.05;
  const auto chain = linear_chain({model.m1, model.m2}, {model.c1, model.cc, model.c2},
                                  {model.d1, model.dc, model.d2});
  const LinearCoupledSystem lin = linearise(system::make_chain_system(chain, {0, 1, 2}));
  for (const GaussSeidelEndValue e :
       {GaussSeidelEndValue::kConverged, GaussSeidelEndValue::kSequential}) {
    for (int kappa = 0; kappa <= 3; ++kappa) {
      Method two;
      two.scheme = Scheme::kGaussSeidel;
      two.end_value = e;
      two.order = kappa;
      CoupledMethod described;
      described.scheme = CoupledScheme::kGaussSeidel;
      described.end_value = e;
      described.order = kappa;
      for (double h : {0.02, 0.1, 0.3, 0.9, 2.0}) {
        const double expected = spectral_radius(model, two, h);
        const Recurrence r = coupled_recurrence(lin, described, h);
        EXPECT_NEAR(spectral_radius(r.m), expected, 1e-6 * expected)
            << "sequential " << (e == GaussSeidelEndValue::kSequential) << " kappa " << kappa
            << " h " << h;
        EXPECT_EQ(r.state_points,
                  e == GaussSeidelEndValue::kSequential ? static_cast<std::size_t>(kappa) : 0u);
      }
    }
  }
}

// For H → 0 the recurrence's dominant eigenvalues approach those of the monolithic propagator
// e^{A_mono H} (consistency): on a five-mass chain cut three times, a three-body system with a
// feed-through-free star of springs, explicit and implicit, ρ(M) − ρ(e^{A H}) is O(H^{κ+1}).
TEST(CoupledStability, SmallStepsApproachTheMonolithicPropagator) {
  const auto chain = linear_chain({1.0, 2.0, 0.5, 1.5, 1.0}, {100, 40, 80, 60, 120, 90},
                                  {0.5, 0.2, 0.1, 0.3, 0.2, 0.4});
  const system::CoupledSystem sys = system::make_chain_system(chain, {0, 1, 3, 4, 5});
  const LinearCoupledSystem lin = linearise(sys);
  ASSERT_EQ(lin.states(), 10u);
  ASSERT_EQ(lin.couplings(), 3u);
  const double omega = fastest_frequency(lin);
  EXPECT_GT(omega, 5.0);
  for (const CoupledScheme scheme : {CoupledScheme::kExplicit, CoupledScheme::kImplicit}) {
    CoupledMethod m;
    m.scheme = scheme;
    m.order = 2;
    double previous = 0.0;
    for (const double w : {0.02, 0.01}) {
      const double h = w / omega;
      const double mono = spectral_radius(expm(h * lin.monolithic()));
      const double gap = std::abs(spectral_radius(coupled_recurrence(lin, m, h).m) - mono);
      EXPECT_LT(gap, 1e-9) << "omega_hat " << w;
      if (previous > 0.0) {
        EXPECT_LT(gap, previous / 4.0) << "no convergence at omega_hat " << w;
      }
      previous = gap;
    }
  }
}

TEST(CoupledStability, RefusesWhatItCannotLinearise) {
  const auto chain = linear_chain(std::vector<double>(400, 1.0), std::vector<double>(401, 1.0),
                                  std::vector<double>(401, 0.0));
  const system::CoupledSystem sys = system::make_chain_system(chain, {0, 200, 400});
  EXPECT_THROW(linearise(sys), std::invalid_argument);  // 800 states
}

}  // namespace
}  // namespace macrostep::analysis

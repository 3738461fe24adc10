// The hydraulic volume node (seed 003 §2.4, Eq. 2.86-2.96; MODELS.md F-HYD): bulk-modulus
// models against their formulas and the derived F-HYD numbers, the pressure build-up of a closed
// chamber against the node ODE, the Newton iteration, the stepped model, and ∂p/∂V.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

#include "law_checks.hpp"
#include "macrostep/system/hydraulic_node_law.hpp"

namespace macrostep {
namespace {

using system::HydraulicNodeLaw;
using system::PressureDependentBulkModulus;

constexpr double kBar = 1e5;

// The example fluid of seed 003 Fig. 2.18: Ẽ = 821 N/mm², ν = 0.08, κ = 1.4, p̃ = p0 = 1 bar.
PressureDependentBulkModulus example_fluid() {
  return PressureDependentBulkModulus::from_fluid(8.21e8, 0.08, 1.4, 1.0 * kBar);
}

HydraulicNodeLaw::Parameters pressure_dependent_node(double node_volume) {
  HydraulicNodeLaw::Parameters p;
  p.node_volume = node_volume;
  p.initial_pressure = 1.0 * kBar;
  p.model = HydraulicNodeLaw::Model::kPressureDependent;
  p.pressure_dependent = example_fluid();
  return p;
}

HydraulicNodeLaw::Parameters constant_node(double node_volume, double modulus, double p0) {
  HydraulicNodeLaw::Parameters p;
  p.node_volume = node_volume;
  p.initial_pressure = p0;
  p.model = HydraulicNodeLaw::Model::kConstant;
  p.constant_modulus = modulus;
  return p;
}

// MODELS.md F-HYD [D]: a = 8.867e8 Pa, b = 1.749e11, c = −1.7142857 (to the printed digits).
TEST(HydraulicNodeLaw, FluidCoefficientsMatchTheDerivedValues) {
  const auto e = example_fluid();
  EXPECT_NEAR(e.a, 8.867e8, 0.0005e8);
  EXPECT_NEAR(e.b, 1.749e11, 0.0005e11);
  EXPECT_NEAR(e.c, -1.7142857, 5e-8);
}

// MODELS.md F-HYD [D]: E(1 / 10 / 100 / 1000 bar) = 1.89e6 / 8.82e7 / 7.55e8 / 8.84e8 Pa, each
// within half a unit of its last printed digit.
TEST(HydraulicNodeLaw, PressureDependentModulusMatchesTheDerivedValues) {
  const auto e = example_fluid();
  const std::array<double, 4> bar = {1.0, 10.0, 100.0, 1000.0};
  const std::array<double, 4> published = {1.89e6, 8.82e7, 7.55e8, 8.84e8};
  for (std::size_t k = 0; k < bar.size(); ++k) {
    EXPECT_LT(std::fabs(e.modulus(bar[k] * kBar) - published[k]),
              0.5 * std::pow(10.0, std::floor(std::log10(published[k])) - 2.0))
        << bar[k] << " bar";
  }
}

// MODELS.md F-HYD [D]: ΔV/V_K to reach 2 / 10 / 100 / 1000 bar from 1 bar = 0.029 / 0.061 /
// 0.082 / 0.186 (g of Eq. 2.95, within half a unit of the third decimal), and the law inverts
// it: fed exactly g(target), the node returns the target pressure.
TEST(HydraulicNodeLaw, VolumeToReachAPressureMatchesTheDerivedValues) {
  const std::array<double, 4> bar = {2.0, 10.0, 100.0, 1000.0};
  const std::array<double, 4> published = {0.029, 0.061, 0.082, 0.186};
  const double node_volume = 1e-5;  // MODELS.md F-HYD [SI]
  const HydraulicNodeLaw law("node.p", pressure_dependent_node(node_volume), {{0, 0}});
  for (std::size_t k = 0; k < bar.size(); ++k) {
    const double s = example_fluid().compliance_integral(1.0 * kBar, bar[k] * kBar);
    EXPECT_NEAR(s, published[k], 5e-4) << bar[k] << " bar";
    std::array<double, 1> p{};
    law.evaluate(std::array<double, 1>{s * node_volume}, p);
    EXPECT_NEAR(p[0], bar[k] * kBar, 1e-9 * bar[k] * kBar);
  }
}

// Eq. 2.89: p = p0 + (E/V_K)·Σ(V_i − V_i⁰), by hand: three lines, V_K = 2e-5 m³, E = 1.5e9 Pa,
// p0 = 50 bar, ΔV = (1e-8 − 2e-8) + (3e-8 − 0) + (−5e-9 − 5e-9) = 1e-8 m³ → Δp = 7.5e5 Pa.
TEST(HydraulicNodeLaw, ConstantModulusByHand) {
  const HydraulicNodeLaw law("p", constant_node(2e-5, 1.5e9, 50.0 * kBar), {{0, 2}, {1, 0}, {3, 1}},
                             {2e-8, 0.0, 5e-9});
  ASSERT_EQ(law.reads().size(), 3u);
  EXPECT_EQ(law.reads()[2].subsystem, 3u);
  EXPECT_FALSE(law.has_feedthrough());
  std::array<double, 1> p{};
  law.evaluate(std::array<double, 3>{1e-8, 3e-8, -5e-9}, p);
  EXPECT_NEAR(p[0], 50.0 * kBar + 7.5e5, 1e-6);
  EXPECT_EQ(law.pressure(0.0).iterations, 0);
  EXPECT_NEAR(law.pressure_rate(60.0 * kBar, std::array<double, 2>{1e-6, -3e-6}),
              1.5e9 / 2e-5 * -2e-6, 1e-3);
}

// Pressure build-up of a closed chamber filled at constant flow Q (V(t) = Q·t): the node ODE
// ṗ = E(p)·Q/V_K (Eq. 2.86), integrated independently by classical RK4 with small steps from
// 1 bar to about 1000 bar, against the law's algebraic p(V(t)) (Eq. 2.88/2.95); and the
// constant-modulus closed form p = p0 + E·Q·t/V_K.
TEST(HydraulicNodeLaw, ClosedChamberPressureBuildUp) {
  const double node_volume = 1e-5, flow = 2e-5;  // 2e-5 m³/s fills 0.186·V_K in ~0.093 s
  const HydraulicNodeLaw law("p", pressure_dependent_node(node_volume), {{0, 0}});
  const auto e = example_fluid();
  const auto rate = [&](double p) { return e.modulus(p) * flow / node_volume; };
  const int steps = 200000;
  const double end = 0.0935, h = end / steps;
  double p = 1.0 * kBar;
  for (int k = 1; k <= steps; ++k) {
    const double k1 = rate(p), k2 = rate(p + 0.5 * h * k1), k3 = rate(p + 0.5 * h * k2),
                 k4 = rate(p + h * k3);
    p += h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4);
    if (k % 20000 == 0) {
      std::array<double, 1> u{};
      law.evaluate(std::array<double, 1>{flow * h * k}, u);
      EXPECT_NEAR(u[0], p, 1e-8 * p) << "t = " << h * k;
    }
  }
  EXPECT_GT(p, 900.0 * kBar);  // the build-up crossed the stiff range of Fig. 2.18

  const HydraulicNodeLaw stiff("p", constant_node(node_volume, 1.4e9, 1.0 * kBar), {{0, 0}});
  for (double t : {0.0, 1e-4, 3e-3}) {
    std::array<double, 1> u{};
    stiff.evaluate(std::array<double, 1>{flow * t}, u);
    EXPECT_NEAR(u[0], 1.0 * kBar + 1.4e9 * flow * t / node_volume, 1e-6);
  }
}

// MODELS.md F-HYD target: Newton from p^(l−1) with ΔV/V_K steps of 1e-4 converges (1e-12
// relative here, 1e-10 in the source) with ≤ 3 corrections in ≥ 95 % of the steps, up from 1 bar
// to 1000 bar and back down to 0.1 bar. A fresh law (accepted pressure p0 = 1 bar) reaches any
// s in [−0.5, 1] (0.06 to 8000 bar) in at most 12 corrections (11 measured): the large jumps of
// a first step, not of a running co-simulation.
TEST(HydraulicNodeLaw, NewtonIterationsForSmallVolumeSteps) {
  const auto e = example_fluid();
  const double p0 = 1.0 * kBar, ds = 1e-4;
  int steps = 0, within_three = 0, most = 0;
  double s = 0.0, p = p0;
  const auto step = [&](double next_s) {
    s = next_s;
    const auto solution = system::solve_node_pressure(e, p0, s, p);
    EXPECT_NEAR(e.compliance_integral(p0, solution.pressure), s, 1e-12);
    p = solution.pressure;
    ++steps;
    within_three += solution.iterations <= 3 ? 1 : 0;
    most = std::max(most, solution.iterations);
  };
  while (p < 1000.0 * kBar) step(s + ds);
  while (p > 0.1 * kBar) step(s - ds);
  EXPECT_GE(within_three, 0.95 * steps) << "max " << most << " over " << steps << " steps";
  RecordProperty("max_newton_corrections", most);

  const HydraulicNodeLaw law("p", pressure_dependent_node(1e-5), {{0, 0}});
  for (double rel = -0.5; rel <= 1.0; rel += 0.0025) {
    const auto solution = law.pressure(rel);
    EXPECT_LE(solution.iterations, 12) << "s = " << rel;
    EXPECT_NEAR(e.compliance_integral(p0, solution.pressure), rel, 1e-12);
  }
}

// MODELS.md F-HYD: from 1000 bar toward a 2 bar target the plain Newton step lands at a negative
// pressure (g is concave, the tangent at 1000 bar is far too steep); the guarded solve converges.
TEST(HydraulicNodeLaw, GuardAgainstNegativePressure) {
  const auto e = example_fluid();
  const double p0 = 1.0 * kBar, start = 1000.0 * kBar, target = 2.0 * kBar;
  const double s = e.compliance_integral(p0, target);
  const double plain_step = start - (e.compliance_integral(p0, start) - s) * e.modulus(start);
  EXPECT_LT(plain_step, 0.0);
  const auto solution = system::solve_node_pressure(e, p0, s, start);
  EXPECT_NEAR(solution.pressure, target, 1e-9 * target);
  EXPECT_THROW((void)system::solve_node_pressure(e, p0, s, -1.0), std::invalid_argument);
  EXPECT_THROW((void)system::solve_node_pressure(e, p0, std::nan(""), p0), std::invalid_argument);
}

// ∂p/∂V_i = E(p)/V_K against central differences, both models, several fill levels.
TEST(HydraulicNodeLaw, JacobianMatchesCentralDifferences) {
  const double vk = 1e-5;
  const HydraulicNodeLaw dependent("p", pressure_dependent_node(vk), {{0, 0}, {1, 0}},
                                   {1e-7, -2e-7});
  const HydraulicNodeLaw constant("p", constant_node(vk, 1.2e9, 3.0e6), {{0, 0}, {1, 0}});
  const std::vector<std::vector<double>> fills = {
      {1e-7, -2e-7}, {1.5e-7, -1.9e-7}, {3e-7, 1e-7}, {2e-6, -1e-7}, {-1e-6, -2e-7}};
  for (const auto& v : fills) {
    testing::expect_law_jacobian_matches_central_differences(dependent, v, {1e-7, 1e-7}, 1e-5,
                                                             1e-6);
    testing::expect_law_jacobian_matches_central_differences(constant, v, {1e-7, 1e-7}, 1e-5, 1e-6);
    std::array<double, 2> d{};
    std::array<double, 1> p{};
    dependent.jacobian(v, d);
    dependent.evaluate(v, p);
    EXPECT_DOUBLE_EQ(d[0], example_fluid().modulus(p[0]) / vk);
    EXPECT_EQ(d[0], d[1]);
  }
}

HydraulicNodeLaw::Parameters stepped_node(double node_volume) {
  auto p = pressure_dependent_node(node_volume);
  p.model = HydraulicNodeLaw::Model::kStepped;
  return p;
}

double evaluated(const HydraulicNodeLaw& law, std::span<const double> volumes) {
  std::array<double, 1> p{};
  law.evaluate(volumes, p);
  return p[0];
}

// Evaluates at `volumes` and accepts that point with the evaluated pressure (what the pipeline
// does after an accepted macro step).
double step_to(HydraulicNodeLaw& law, std::span<const double> volumes) {
  const double p = evaluated(law, volumes);
  law.accept(volumes, std::array<double, 1>{p});
  return p;
}

// Stepped bulk modulus (Eq. 2.93) by hand for two macro steps; a rejected attempt (evaluations
// at other volumes, no accept) leaves the accepted point as it was, so the retry gives the bits
// of a run without the rejection; export/import carries the state bit for bit. Before its first
// accepted point (t0) the law gives the pressure-dependent node's value.
TEST(HydraulicNodeLaw, SteppedModulusFollowsEquation293AndKeepsItsStateOnReject) {
  const auto e = example_fluid();
  HydraulicNodeLaw law("p", stepped_node(1e-5), {{0, 0}, {1, 0}});
  EXPECT_TRUE(law.is_stateful());
  EXPECT_TRUE(law.depends_on_macro_grid());
  const std::array<double, 2> v0 = {0.0, 0.0}, v1 = {1e-9, 2e-9}, v2 = {3e-9, 2.5e-9},
                              rejected = {9e-8, 7e-8};
  EXPECT_DOUBLE_EQ(evaluated(law, v0), 1.0 * kBar);  // t0 at the reference volumes: p0
  law.start(v0, std::array<double, 1>{1.0 * kBar});
  const double p1 = e.modulus(1.0 * kBar) / 1e-5 * 3e-9 + 1.0 * kBar;
  EXPECT_DOUBLE_EQ(step_to(law, v1), p1);
  EXPECT_EQ(law.accepted_pressure(), p1);
  std::array<double, 2> d{};
  law.jacobian(v2, d);
  EXPECT_EQ(d[0], e.modulus(p1) / 1e-5);  // E frozen at the accepted pressure
  const double p2 = e.modulus(p1) / 1e-5 * (2e-9 + 0.5e-9) + p1;
  HydraulicNodeLaw retried = law, straight = law;
  (void)evaluated(retried, rejected);  // an attempt that the controller rejects
  (void)evaluated(retried, rejected);
  EXPECT_EQ(step_to(retried, v2), step_to(straight, v2));
  EXPECT_DOUBLE_EQ(straight.accepted_pressure(), p2);

  HydraulicNodeLaw resumed("p", stepped_node(1e-5), {{0, 0}, {1, 0}});
  resumed.import_state(law.export_state());
  EXPECT_EQ(resumed.export_state(), law.export_state());
  EXPECT_EQ(evaluated(resumed, v2), evaluated(law, v2));
  EXPECT_THROW(resumed.import_state(std::vector<double>{1.0}), std::invalid_argument);
  resumed.reset_state();
  EXPECT_EQ(resumed.accepted_pressure(), 1.0 * kBar);
  EXPECT_DOUBLE_EQ(resumed.pressure(0.0).pressure, 1.0 * kBar);  // t0: the pressure-dependent value
  resumed.start(v0, std::array<double, 1>{1.0 * kBar});
  EXPECT_THROW((void)resumed.pressure(0.0), std::logic_error);
}

// Started away from the reference volumes (V(t0) ≠ V⁰), the stepped node's t0 pressure is the
// pressure-dependent node's p(V(t0)), not one Euler step across the whole offset: otherwise that
// step's error stays in the run at every H (the line pair's pressure swing settled 1.6 % off).
TEST(HydraulicNodeLaw, SteppedNodeStartsAtThePressureDependentValue) {
  const double vk = 1e-5;
  const HydraulicNodeLaw dependent("p", pressure_dependent_node(vk), {{0, 0}});
  HydraulicNodeLaw stepped("p", stepped_node(vk), {{0, 0}});
  const std::array<double, 1> offset{0.05 * vk};  // s = 0.05: 1 bar → several bar
  const double p_t0 = evaluated(stepped, offset);
  EXPECT_EQ(p_t0, evaluated(dependent, offset));
  EXPECT_NEAR(example_fluid().compliance_integral(1.0 * kBar, p_t0), 0.05, 1e-14);
  const double euler = example_fluid().modulus(1.0 * kBar) / vk * offset[0] + 1.0 * kBar;
  EXPECT_GT(std::fabs(euler - p_t0), 0.01 * p_t0);  // what the old start gave
  stepped.start(offset, std::array<double, 1>{p_t0});
  EXPECT_EQ(stepped.accepted_pressure(), p_t0);
}

// The stepped model is an explicit Euler step of dp/dV = E(p)/V_K in the volume increment:
// filling to s = 0.01 (1 → ~1.4 bar) in n equal accepted steps, its error against the exact g(p)
// = s solution of the pressure-dependent node (Eq. 2.95) halves with the increment (first
// order), and at the finest increment stepped and pressure-dependent agree to 1e-3 relative.
TEST(HydraulicNodeLaw, SteppedModulusConvergesToThePressureDependentNodeAtFirstOrder) {
  const double target_s = 0.01, vk = 1e-5;
  const HydraulicNodeLaw exact("p", pressure_dependent_node(vk), {{0, 0}});
  const double p_exact = exact.pressure(target_s).pressure;
  EXPECT_NEAR(example_fluid().compliance_integral(1.0 * kBar, p_exact), target_s, 1e-14);
  double previous_error = 0.0;
  for (int n : {200, 400, 800, 1600}) {
    HydraulicNodeLaw stepped("p", stepped_node(vk), {{0, 0}});
    HydraulicNodeLaw dependent("p", pressure_dependent_node(vk), {{0, 0}});
    const std::array<double, 1> v0{0.0};  // t0 at the reference volume
    stepped.start(v0, std::array<double, 1>{1.0 * kBar});
    dependent.start(v0, std::array<double, 1>{1.0 * kBar});
    double p_dependent = 0.0;
    for (int k = 1; k <= n; ++k) {
      const std::array<double, 1> v{target_s * vk * k / n};
      (void)step_to(stepped, v);
      p_dependent = step_to(dependent, v);
    }
    EXPECT_NEAR(p_dependent, p_exact, 1e-12 * p_exact);  // path independent up to Newton's tol
    const double error = std::fabs(stepped.accepted_pressure() - p_exact);
    if (previous_error > 0.0) {
      EXPECT_NEAR(previous_error / error, 2.0, 0.1) << n << " steps";
    }
    if (n == 1600) {
      EXPECT_LT(error, 1e-3 * p_exact);
    }
    previous_error = error;
  }
}

// Without air (b = 0) the modulus is the constant a, and the stepped node is the constant node:
// the recursion's sum of increments equals a·s up to rounding, over 1000 accepted steps of
// varying sign.
TEST(HydraulicNodeLaw, SteppedModulusWithoutAirIsTheConstantNode) {
  auto params = stepped_node(1e-5);
  params.pressure_dependent.b = 0.0;
  HydraulicNodeLaw stepped("p", params, {{0, 0}});
  const HydraulicNodeLaw constant("p", constant_node(1e-5, params.pressure_dependent.a, 1.0 * kBar),
                                  {{0, 0}});
  for (int k = 1; k <= 1000; ++k) {
    const std::array<double, 1> v{5e-13 * std::sin(0.01 * k) * k};  // p stays > 0
    const double p = step_to(stepped, v);
    EXPECT_NEAR(p, evaluated(constant, v), 1e-12 * std::fabs(evaluated(constant, v)) + 1e-6);
  }
}

// Newton from p^(l−1) (the accepted pressure) on the law: up from 1 bar to 1000 bar and down to
// 0.1 bar in ΔV/V_K = 1e-4 steps, the law's own histogram has ≤ 3 corrections in ≥ 95 % of the
// accepted steps, and it survives export/import.
TEST(HydraulicNodeLaw, NewtonHistogramFromTheAcceptedPressure) {
  const double vk = 1e-5, ds = 1e-4;
  HydraulicNodeLaw law("p", pressure_dependent_node(vk), {{0, 0}});
  ASSERT_TRUE(law.is_stateful());
  EXPECT_FALSE(law.depends_on_macro_grid());
  double s = 0.0;
  while (law.accepted_pressure() < 1000.0 * kBar)
    step_to(law, std::array<double, 1>{(s += ds) * vk});
  while (law.accepted_pressure() > 0.1 * kBar) step_to(law, std::array<double, 1>{(s -= ds) * vk});
  const auto histograms = law.histograms();
  ASSERT_EQ(histograms.size(), 1u);
  EXPECT_EQ(histograms[0].name, "newton_iterations");
  const auto& bins = histograms[0].bins;
  ASSERT_EQ(bins.size(), HydraulicNodeLaw::kNewtonBins);
  std::uint64_t total = 0, at_most_3 = 0;
  for (std::size_t k = 0; k < bins.size(); ++k) {
    total += bins[k];
    at_most_3 += k <= 3 ? bins[k] : 0;
  }
  EXPECT_GT(total, 3000u);
  EXPECT_GE(static_cast<double>(at_most_3), 0.95 * static_cast<double>(total));
  HydraulicNodeLaw copy("p", pressure_dependent_node(vk), {{0, 0}});
  copy.import_state(law.export_state());
  EXPECT_EQ(copy.histograms()[0].bins, bins);
}

// With reads_flows the node reads [V_1, V_2, Q_1, Q_2]: the pressure from the volumes alone,
// ∂p/∂Q = 0, and the rate ṗ = E(p)/V_K·(Q_1 + Q_2) (Eq. 2.91) for both moduli.
TEST(HydraulicNodeLaw, ReadsFlowsForItsRate) {
  for (auto params : {pressure_dependent_node(1e-5), constant_node(1e-5, 1.5e9, 1.0 * kBar)}) {
    params.reads_flows = true;
    const HydraulicNodeLaw law("p", params, {{0, 0}, {1, 0}, {0, 1}, {1, 1}});
    auto plain = params;
    plain.reads_flows = false;
    const HydraulicNodeLaw volumes_only("p", plain, {{0, 0}, {1, 0}});
    ASSERT_TRUE(law.has_rate());
    EXPECT_FALSE(volumes_only.has_rate());
    const std::array<double, 4> y = {2e-8, -1e-8, 3e-6, -1e-6};
    const double p = evaluated(law, y);
    EXPECT_EQ(p, evaluated(volumes_only, std::span<const double>(y).first(2)));
    std::array<double, 1> rate{};
    law.rate(y, rate);
    EXPECT_DOUBLE_EQ(rate[0], law.modulus(p) / 1e-5 * 2e-6);
    std::array<double, 4> d{};
    law.jacobian(y, d);
    EXPECT_EQ(d[0], law.modulus(p) / 1e-5);
    EXPECT_EQ(d[1], d[0]);
    EXPECT_EQ(d[2], 0.0);
    EXPECT_EQ(d[3], 0.0);
    EXPECT_THROW(HydraulicNodeLaw("p", params, {{0, 0}, {1, 0}, {0, 1}}), std::invalid_argument);
  }
}

TEST(HydraulicNodeLaw, RejectsInvalidParameters) {
  auto bad_volume = constant_node(0.0, 1e9, 1e5);
  EXPECT_THROW(HydraulicNodeLaw("p", bad_volume, {{0, 0}}), std::invalid_argument);
  EXPECT_THROW(HydraulicNodeLaw("p", constant_node(1e-5, -1.0, 1e5), {{0, 0}}),
               std::invalid_argument);
  EXPECT_THROW(HydraulicNodeLaw("p", constant_node(1e-5, 1e9, 1e5), {}), std::invalid_argument);
  EXPECT_THROW(HydraulicNodeLaw("p", constant_node(1e-5, 1e9, 1e5), {{0, 0}}, {1.0, 2.0}),
               std::invalid_argument);
  auto zero_pressure = pressure_dependent_node(1e-5);
  zero_pressure.initial_pressure = 0.0;
  EXPECT_THROW(HydraulicNodeLaw("p", zero_pressure, {{0, 0}}), std::invalid_argument);
  auto bad_exponent = pressure_dependent_node(1e-5);
  bad_exponent.pressure_dependent.c = -0.5;
  EXPECT_THROW(HydraulicNodeLaw("p", bad_exponent, {{0, 0}}), std::invalid_argument);
  EXPECT_THROW((void)PressureDependentBulkModulus::from_fluid(8e8, 0.08, 0.0, 1e5),
               std::invalid_argument);
}

}  // namespace
}  // namespace macrostep

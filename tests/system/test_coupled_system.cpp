// The coupled system (METHODS.md §1.1, §1.3; seed 000 Eq. 2.4, 2.16-2.20): coupling laws and
// their ∂φ/∂y, the force/force cut chain built by make_chain_system (coupling variables equal the
// cut elements' forces of the whole chain, inputs wired to the right cuts, coupling bodies
// monitored), and a system that is not a chain.
#include <gtest/gtest.h>

#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "macrostep/library/chain.hpp"
#include "macrostep/library/oscillator_mass.hpp"
#include "macrostep/system/chain_system.hpp"
#include "macrostep/system/coupled_system.hpp"
#include "macrostep/system/displacement_law.hpp"
#include "macrostep/system/signal_law.hpp"
#include "macrostep/system/spring_damper_law.hpp"
#include "star_system.hpp"

namespace macrostep {
namespace {

using control::WeightGroup;

library::ChainParameters chain(std::size_t n) {
  library::ChainParameters p;
  for (std::size_t i = 0; i < n; ++i) {
    p.mass.push_back(1.0 + 0.1 * static_cast<double>(i));
    p.x0.push_back(1e-3 * static_cast<double>(i % 3) - 1e-3);
    p.v0.push_back(0.5 * static_cast<double>(i % 4) - 0.7);
  }
  for (std::size_t i = 0; i <= n; ++i) {
    p.element.push_back({1e4 + static_cast<double>(i), 2.0, 1e8, 1e-2, 3.0, 3.0});
  }
  p.element[4].ex = 6.0;  // a cut element with a non-default exponent (D-2)
  p.forces.assign(n, {});
  return p;
}

std::vector<std::size_t> to_vector(std::span<const std::size_t> s) {
  return {s.begin(), s.end()};
}

TEST(CoupledSystem, CouplingVariablesAreTheCutElementForces) {
  const auto p = chain(10);
  const auto sys = system::make_chain_system(p, library::sized_partition(10, {4, 3, 3}));
  ASSERT_EQ(sys.subsystem_count(), 3u);
  ASSERT_EQ(sys.coupling_count(), 2u);
  ASSERT_EQ(sys.law_count(), 2u);
  const auto u0 = sys.initial_couplings();
  // Cut 1 is element 5 (1-based; 0-based 4) between masses 4 and 5 (1-based).
  EXPECT_DOUBLE_EQ(u0[0], p.element[4].force(p.x0[4] - p.x0[3], p.v0[4] - p.v0[3]));
  EXPECT_DOUBLE_EQ(u0[1], p.element[7].force(p.x0[7] - p.x0[6], p.v0[7] - p.v0[6]));
  EXPECT_EQ(sys.coupling_name(0), "lambda_1");
  EXPECT_EQ(sys.coupling_name(1), "lambda_2");
  EXPECT_EQ(sys.law_offset(1), 1u);
  EXPECT_EQ(sys.law(1).variable_names()[0], "lambda_2");
}

// seed 000 Eq. 2.20 with the cut element's law (D-2), contract 1: u[c] is bit for bit
// law.force(x_right − x_left, v_right − v_left) of the outputs, as before the laws were general.
TEST(CoupledSystem, EvaluateCouplingsIsBitIdenticalToTheCutElementForce) {
  auto p = chain(12);
  p.element[6].ex = 7.0;
  p.element[9].ev = 2.0;
  const std::vector<std::size_t> boundaries = {0, 3, 6, 9, 12};
  const auto sys = system::make_chain_system(p, boundaries);
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> x(-2e-3, 2e-3), v(-3.0, 3.0);
  std::vector<std::vector<double>> y(4, std::vector<double>(4));
  std::vector<double> u(3);
  for (int trial = 0; trial < 200; ++trial) {
    for (auto& out : y)
      out = {x(rng), x(rng), v(rng), v(rng)};  // [x_first, x_last, v_first, v_last]
    sys.evaluate_couplings(y, u);
    for (std::size_t c = 0; c < 3; ++c) {
      const double expected =
          p.element[boundaries[c + 1]].force(y[c + 1][0] - y[c][1], y[c + 1][2] - y[c][3]);
      EXPECT_EQ(std::bit_cast<std::uint64_t>(u[c]), std::bit_cast<std::uint64_t>(expected))
          << "cut " << c + 1;
    }
  }
}

TEST(CoupledSystem, InputsAndMonitoredCouplingBodies) {
  const auto p = chain(9);
  const auto sys = system::make_chain_system(p, library::equal_partition(9, 3));
  EXPECT_EQ(to_vector(sys.feed_channels(0)), (std::vector<std::size_t>{0}));
  EXPECT_EQ(to_vector(sys.feed_channels(1)), (std::vector<std::size_t>{0, 1}));
  EXPECT_EQ(to_vector(sys.feed_channels(2)), (std::vector<std::size_t>{1}));
  // The coupling bodies, left then right of each cut, x then v: the result columns.
  const auto monitored = sys.monitored_outputs();
  ASSERT_EQ(monitored.size(), 8u);
  const std::vector<std::string> names = {"x_3", "v_3", "x_4", "v_4", "x_6", "v_6", "x_7", "v_7"};
  for (std::size_t j = 0; j < names.size(); ++j) {
    EXPECT_EQ(monitored[j].name, names[j]);
    const auto group = j % 2 == 0 ? WeightGroup::kPosition : WeightGroup::kVelocity;
    EXPECT_EQ(monitored[j].group, group);
    EXPECT_EQ(sys.monitored_groups()[j], group);
    // The names of the subsystems' outputs agree with the monitored bodies.
    EXPECT_EQ(sys.subsystem(monitored[j].output.subsystem).output_name(monitored[j].output.output),
              names[j]);
  }
  std::vector<std::vector<double>> y = {{1, 2, 3, 4}, {5, 6, 7, 8}, {9, 10, 11, 12}};
  std::vector<double> values(8);
  sys.gather_monitored(y, values);
  EXPECT_EQ(values, (std::vector<double>{2, 4, 5, 7, 6, 8, 9, 11}));
  std::vector<double> u = {1.5, -2.5}, in(2);
  sys.gather_inputs(1, u, in);
  EXPECT_EQ(in[0], 1.5);
  EXPECT_EQ(in[1], -2.5);
}

TEST(CoupledSystem, RejectsBadPartitions) {
  const auto p = chain(6);
  EXPECT_THROW(system::make_chain_system(p, {0, 3, 3, 6}), std::invalid_argument);
  EXPECT_THROW(system::make_chain_system(p, {0, 3, 5}), std::invalid_argument);
  EXPECT_THROW(system::make_chain_system(p, {1, 6}), std::invalid_argument);
  // One subsystem: the whole chain, no couplings.
  const auto whole = system::make_chain_system(p, {0, 6});
  EXPECT_EQ(whole.coupling_count(), 0u);
  EXPECT_TRUE(whole.monitored_outputs().empty());
}

// METHODS §1.1: the system is not tied to the chain. One law reads the outputs of three
// subsystems and writes three coupling variables; evaluation, ∂φ/∂y, inputs and monitored
// outputs follow the law and the maps the builder gave.
TEST(CoupledSystem, LawReadingThreeSubsystems) {
  const testing::Star star;
  const auto sys = testing::make_star_system(star);
  ASSERT_EQ(sys.subsystem_count(), 3u);
  ASSERT_EQ(sys.coupling_count(), 3u);
  EXPECT_EQ(sys.coupling_name(2), "F_3");
  const std::vector<std::vector<double>> y = {{0.1, 0.3}, {-0.05, 0.0}, {0.02, -0.6}};
  std::vector<double> u(3);
  sys.evaluate_couplings(y, u);
  const double xm = (0.1 - 0.05 + 0.02) / 3.0, vm = (0.3 + 0.0 - 0.6) / 3.0;
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_DOUBLE_EQ(u[i], star.k * (xm - y[i][0]) + star.d * (vm - y[i][1]));
  }
  EXPECT_NEAR(u[0] + u[1] + u[2], 0.0, 1e-14 * std::abs(u[0]));  // the node carries no force
  EXPECT_EQ(sys.initial_couplings(), u);                         // y above is the initial state
  std::vector<double> jac(18);
  sys.coupling_jacobian(0, y, jac);
  EXPECT_DOUBLE_EQ(jac[0], star.k * (1.0 / 3.0 - 1.0));          // ∂F_1/∂x_1
  EXPECT_DOUBLE_EQ(jac[3], star.d / 3.0);                        // ∂F_1/∂v_2
  EXPECT_DOUBLE_EQ(jac[6 * 2 + 5], star.d * (1.0 / 3.0 - 1.0));  // ∂F_3/∂v_3
  EXPECT_THROW(sys.coupling_jacobian(0, y, std::span<double>(jac).first(4)), std::invalid_argument);
  std::vector<double> in(1);
  sys.gather_inputs(2, u, in);
  EXPECT_EQ(in[0], u[2]);
  ASSERT_EQ(sys.monitored_outputs().size(), 6u);
  EXPECT_EQ(sys.monitored_outputs()[3].name, "body2.v");
  EXPECT_EQ(sys.monitored_groups()[3], WeightGroup::kVelocity);
}

// A law whose φ would depend on u (an algebraic loop through the law).
class FeedthroughLaw final : public system::CouplingLaw {
 public:
  std::span<const system::OutputRef> reads() const override { return reads_; }
  std::span<const std::string> variable_names() const override { return names_; }
  void evaluate(std::span<const double> y, std::span<double> u) const override { u[0] = y[0]; }
  void jacobian(std::span<const double>, std::span<double> dphi_dy) const override {
    dphi_dy[0] = 1.0;
  }
  bool has_feedthrough() const override { return true; }

 private:
  std::array<system::OutputRef, 1> reads_{};
  std::array<std::string, 1> names_{"u_1"};
};

// Contract 5 (errors name the cause before anything runs): references to missing outputs or
// coupling variables, monitored coupling variables and laws with feed-through are rejected.
TEST(CoupledSystem, RejectsInconsistentMaps) {
  const testing::Star star;
  auto bodies = [&] {
    std::vector<std::unique_ptr<model::Subsystem>> b;
    for (std::size_t i = 0; i < 3; ++i) {
      b.push_back(std::make_unique<testing::FreeBody>("b", 1.0, star.x0[i], star.v0[i]));
    }
    return b;
  };
  auto node = [&] {
    std::vector<std::unique_ptr<system::CouplingLaw>> laws;
    laws.push_back(std::make_unique<testing::NodeLaw>(1.0, 0.0));
    return laws;
  };
  const std::vector<std::vector<std::size_t>> inputs = {{0}, {1}, {2}};
  EXPECT_NO_THROW(system::CoupledSystem(bodies(), node(), inputs, {}));
  EXPECT_THROW(system::CoupledSystem(bodies(), node(), {{0}, {1}, {3}}, {}), std::invalid_argument);
  EXPECT_THROW(system::CoupledSystem(bodies(), node(), {{0}, {1}}, {}), std::invalid_argument);
  EXPECT_THROW(system::CoupledSystem(bodies(), node(), inputs, {{"x", {3, 0}}}),
               std::invalid_argument);
  EXPECT_THROW(system::CoupledSystem(bodies(), node(), inputs,
                                     {{"u", {0, 0}, WeightGroup::kCouplingVariable}}),
               std::invalid_argument);
  std::vector<std::unique_ptr<system::CouplingLaw>> bad;
  bad.push_back(std::make_unique<system::SpringDamperLaw>(
      "lambda_1", library::ElementLaw{}, system::OutputRef{0, 0},
      system::OutputRef{0, 2},  // no output 2
      system::OutputRef{1, 0}, system::OutputRef{1, 1}));
  EXPECT_THROW(system::CoupledSystem(bodies(), std::move(bad), {{0}, {0}, {0}}, {}),
               std::invalid_argument);
  std::vector<std::unique_ptr<system::CouplingLaw>> loop;
  loop.push_back(std::make_unique<FeedthroughLaw>());
  EXPECT_THROW(system::CoupledSystem(bodies(), std::move(loop), {{0}, {0}, {0}}, {}),
               std::invalid_argument);
}

// The consistent update of D-1 (seed 000 Eq. 2.22) on the force/displacement two-mass system
// with feed-through (Eq. 2.7): from outputs evaluated at arbitrary end inputs u_eval it returns
// u with x̃1 = x1, ṽ1 = v1 and λ = c_c(x2 − x̃1) + d_c(v2 − ṽ1) (a closed form, exact because the
// output is affine in u), moves the feed-through output to that u, and reports a solve that
// cannot converge (no Newton step allowed) naming the coupling variable.
TEST(CoupledSystem, ConsistentUpdateSolvesTheFeedthroughCouplingEquations) {
  library::OscillatorMassParameters one, two;
  one.force_input = true;
  two.displacement_input = true;
  two.coupling_stiffness = 300.0;
  two.coupling_damping = 0.5;
  std::vector<std::unique_ptr<model::Subsystem>> subsystems;
  subsystems.push_back(std::make_unique<library::OscillatorMass>(one));
  subsystems.push_back(std::make_unique<library::OscillatorMass>(two));
  std::vector<std::unique_ptr<system::CouplingLaw>> laws;
  laws.push_back(std::make_unique<system::DisplacementLaw>("x1", "v1", system::OutputRef{0, 0},
                                                           system::OutputRef{0, 1}));
  laws.push_back(std::make_unique<system::SignalLaw>("lambda", system::OutputRef{1, 2}));
  const system::CoupledSystem sys(std::move(subsystems), std::move(laws), {{2}, {0, 1}}, {});
  ASSERT_TRUE(sys.has_feedthrough());
  // End states z1 = (0.3, −2), z2 = (0.1, 4); the runs ended with u_eval.
  const std::vector<double> z1 = {0.3, -2.0}, z2 = {0.1, 4.0}, u_eval = {0.25, -1.0, 7.0};
  std::vector<std::vector<double>> outputs(2), d(2);
  outputs[0].resize(2);
  outputs[1].resize(3);
  d[1].resize(6);
  sys.subsystem(0).outputs(0.0, z1, std::vector<double>{u_eval[2]}, outputs[0]);
  sys.subsystem(1).outputs(0.0, z2, std::vector<double>{u_eval[0], u_eval[1]}, outputs[1]);
  sys.subsystem(1).feedthrough_jacobian(0.0, z2, std::vector<double>{u_eval[0], u_eval[1]}, d[1]);
  auto base = outputs;
  std::vector<double> u(3);
  const system::ConsistentUpdate r =
      sys.consistent_update(outputs, d, u_eval, control::ErrorTolerances{}, u);
  ASSERT_TRUE(r.converged);
  EXPECT_EQ(r.iterations, 1);  // affine outputs: one Newton step, then the test
  EXPECT_EQ(u[0], 0.3);
  EXPECT_EQ(u[1], -2.0);
  const double lambda = 300.0 * (0.1 - 0.3) + 0.5 * (4.0 + 2.0);
  EXPECT_NEAR(u[2], lambda, 1e-12);
  EXPECT_NEAR(outputs[1][2], lambda, 1e-12);  // the output moved to the consistent u
  EXPECT_EQ(outputs[1][0], 0.1);

  std::vector<double> u_fail(3);
  const system::ConsistentUpdate f =
      sys.consistent_update(base, d, u_eval, control::ErrorTolerances{}, u_fail, 1e-3, 0);
  EXPECT_FALSE(f.converged);
  EXPECT_EQ(sys.coupling_name(f.worst), "lambda");
}

// Three oscillator masses A–B–C, B's force input fed by both springs (an effort input is the sum
// of its feeds): gather_inputs adds the feeds in order, sum_feeds turns a polynomial over the
// feeds into one over the inputs (node by node), feed_max takes the larger perturbation; a
// second feed into a kinematic input and an input without feed are refused.
TEST(CoupledSystem, AnEffortInputIsTheSumOfItsFeeds) {
  const auto masses = [](bool b_displacement) {
    library::OscillatorMassParameters a, b;
    a.force_input = true;
    b.force_input = !b_displacement;
    b.displacement_input = b_displacement;
    b.force_sign = -1.0;
    std::vector<std::unique_ptr<model::Subsystem>> s;
    s.push_back(std::make_unique<library::OscillatorMass>(a));
    s.push_back(std::make_unique<library::OscillatorMass>(b));
    s.push_back(std::make_unique<library::OscillatorMass>(a));
    return s;
  };
  const auto springs = []() {
    std::vector<std::unique_ptr<system::CouplingLaw>> laws;
    const library::ElementLaw element{100.0, 0.5, 0.0, 0.0, 3.0, 3.0};
    laws.push_back(std::make_unique<system::SpringDamperLaw>(
        "sAB", element, system::OutputRef{0, 0}, system::OutputRef{0, 1}, system::OutputRef{1, 0},
        system::OutputRef{1, 1}));
    laws.push_back(std::make_unique<system::SpringDamperLaw>(
        "sCB", element, system::OutputRef{2, 0}, system::OutputRef{2, 1}, system::OutputRef{1, 0},
        system::OutputRef{1, 1}));
    return laws;
  };
  const system::InputFeeds feeds = {{{0}}, {{0, 1}}, {{1}}};
  const auto sys = system::CoupledSystem::with_input_feeds(masses(false), springs(), feeds, {});
  EXPECT_TRUE(sys.single_feeds(0));
  EXPECT_FALSE(sys.single_feeds(1));
  EXPECT_EQ(to_vector(sys.feed_channels(1)), (std::vector<std::size_t>{0, 1}));
  EXPECT_EQ(to_vector(sys.input_feeds(1, 0)), (std::vector<std::size_t>{0, 1}));
  const std::vector<double> u = {1.5, -4.0};
  std::vector<double> in(1);
  sys.gather_inputs(1, u, in);
  EXPECT_EQ(in[0], 1.5 + -4.0);
  EXPECT_EQ(sys.feed_max(1, 0, std::vector<double>{0.1, 0.3}), 0.3);

  model::SupportPoints p;
  p.degree = 1;
  p.channels = 2;
  p.step_begin = 0.0;
  p.time = {0.0, 0.1};
  p.value[0] = {1.0, 2.0};
  p.value[1] = {-3.0, 0.5};
  sys.sum_feeds(1, p);
  EXPECT_EQ(p.channels, 1u);
  EXPECT_EQ(p.value[0][0], -2.0);
  EXPECT_EQ(p.value[0][1], 2.5);
  EXPECT_EQ(p.value[1][0], 0.0);  // unused slots zero (byte-wise comparable)
  model::SupportPoints single = p;
  sys.sum_feeds(0, single);  // one feed: unchanged
  EXPECT_EQ(std::memcmp(&single, &p, sizeof p), 0);

  // x_in fed twice: not an effort.
  EXPECT_THROW(system::CoupledSystem::with_input_feeds(masses(true), springs(),
                                                       {{{0}}, {{0, 1}, {1}}, {{1}}}, {}),
               std::invalid_argument);
  EXPECT_THROW(
      system::CoupledSystem::with_input_feeds(masses(false), springs(), {{{0}}, {{}}, {{1}}}, {}),
      std::invalid_argument);
}

}  // namespace
}  // namespace macrostep

// The coupled system (METHODS.md §1.1, §1.3; seed 000 Eq. 2.4, 2.16-2.20): coupling laws and
// their ∂φ/∂y, the force/force cut chain built by make_chain_system (coupling variables equal the
// cut elements' forces of the whole chain, inputs wired to the right cuts, coupling bodies
// monitored), and a system that is not a chain.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "macrostep/library/chain.hpp"
#include "macrostep/system/chain_system.hpp"
#include "macrostep/system/coupled_system.hpp"

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
  EXPECT_EQ(to_vector(sys.input_couplings(0)), (std::vector<std::size_t>{0}));
  EXPECT_EQ(to_vector(sys.input_couplings(1)), (std::vector<std::size_t>{0, 1}));
  EXPECT_EQ(to_vector(sys.input_couplings(2)), (std::vector<std::size_t>{1}));
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

}  // namespace
}  // namespace macrostep

// The force/force cut chain (seed 000 Eq. 2.16-2.20; METHODS.md §1.3): coupling variables equal
// the cut elements' forces of the whole chain, inputs are wired to the right cuts.
#include <gtest/gtest.h>

#include <vector>

#include "macrostep/library/chain.hpp"
#include "macrostep/system/coupled_system.hpp"

namespace macrostep {
namespace {

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

TEST(CoupledSystem, CouplingVariablesAreTheCutElementForces) {
  const auto p = chain(10);
  const auto sys = system::make_chain_system(p, library::sized_partition(10, {4, 3, 3}));
  ASSERT_EQ(sys.subsystem_count(), 3u);
  ASSERT_EQ(sys.coupling_count(), 2u);
  const auto u0 = sys.initial_couplings();
  // Cut 1 is element 5 (1-based; 0-based 4) between masses 4 and 5 (1-based).
  EXPECT_DOUBLE_EQ(u0[0], p.element[4].force(p.x0[4] - p.x0[3], p.v0[4] - p.v0[3]));
  EXPECT_DOUBLE_EQ(u0[1], p.element[7].force(p.x0[7] - p.x0[6], p.v0[7] - p.v0[6]));
  EXPECT_EQ(sys.coupling(0).name, "lambda_1");
  EXPECT_EQ(sys.coupling(1).name, "lambda_2");
}

TEST(CoupledSystem, InputsAndCouplingBodies) {
  const auto p = chain(9);
  const auto sys = system::make_chain_system(p, library::equal_partition(9, 3));
  EXPECT_EQ(std::vector<std::size_t>(sys.input_couplings(0).begin(), sys.input_couplings(0).end()),
            (std::vector<std::size_t>{0}));
  EXPECT_EQ(std::vector<std::size_t>(sys.input_couplings(1).begin(), sys.input_couplings(1).end()),
            (std::vector<std::size_t>{0, 1}));
  EXPECT_EQ(std::vector<std::size_t>(sys.input_couplings(2).begin(), sys.input_couplings(2).end()),
            (std::vector<std::size_t>{1}));
  const auto bodies = sys.coupling_bodies();
  ASSERT_EQ(bodies.size(), 4u);
  EXPECT_EQ(bodies[0].x_name, "x_3");
  EXPECT_EQ(bodies[1].x_name, "x_4");
  EXPECT_EQ(bodies[2].v_name, "v_6");
  EXPECT_EQ(bodies[3].v_name, "v_7");
  // The names of the subsystems' outputs agree with the monitored bodies.
  EXPECT_EQ(sys.subsystem(0).output_name(bodies[0].x.output), "x_3");
  EXPECT_EQ(sys.subsystem(1).output_name(bodies[1].v.output), "v_4");
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
}

}  // namespace
}  // namespace macrostep

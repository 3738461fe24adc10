// The restarted copy of a coupled system (system/restarted_system.hpp): the same structure, the
// given initial time and states, everything else forwarded; bad states are refused.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

#include "macrostep/library/chain.hpp"
#include "macrostep/system/chain_system.hpp"
#include "macrostep/system/restarted_system.hpp"

namespace macrostep {
namespace {

library::ChainParameters restart_chain(std::size_t n) {
  library::ChainParameters p;
  for (std::size_t i = 0; i < n; ++i) {
    p.mass.push_back(1.0 + 0.1 * static_cast<double>(i));
    p.x0.push_back(1e-3 * static_cast<double>(i));
    p.v0.push_back(0.1);
  }
  for (std::size_t i = 0; i <= n; ++i) p.element.push_back({1e4, 2.0, 0.0, 0.0, 3.0, 3.0});
  p.forces.assign(n, {});
  return p;
}

TEST(RestartedSystem, StartsAtTheGivenTimeAndStatesWithTheSameCoupling) {
  const auto base = system::make_chain_system(restart_chain(6), library::equal_partition(6, 2));
  std::vector<std::vector<double>> states;
  for (std::size_t i = 0; i < base.subsystem_count(); ++i) {
    std::vector<double> z(base.subsystem(i).state_size());
    for (std::size_t k = 0; k < z.size(); ++k) z[k] = 0.01 * static_cast<double>(i + k + 1);
    states.push_back(z);
  }
  const auto r = system::restarted_system(base, 0.25, states);
  ASSERT_EQ(r.subsystem_count(), base.subsystem_count());
  ASSERT_EQ(r.coupling_count(), base.coupling_count());
  EXPECT_EQ(r.coupling_name(0), base.coupling_name(0));
  EXPECT_EQ(r.monitored_outputs().size(), base.monitored_outputs().size());
  for (std::size_t i = 0; i < r.subsystem_count(); ++i) {
    const model::Subsystem& s = r.subsystem(i);
    EXPECT_EQ(s.initial_time(), 0.25);
    std::vector<double> u(s.input_size(), 0.0), z(s.state_size()), zp(s.state_size(), 1.0);
    s.initial_state(u, z, zp);
    EXPECT_EQ(z, states[i]);
    for (std::size_t k = 0; k < s.input_size(); ++k)
      EXPECT_EQ(
          std::vector<std::size_t>(r.input_feeds(i, k).begin(), r.input_feeds(i, k).end()),
          std::vector<std::size_t>(base.input_feeds(i, k).begin(), base.input_feeds(i, k).end()));
    // The equations are the base's: the same outputs at the same state.
    std::vector<double> y(s.output_size()), yb(s.output_size());
    s.outputs(0.25, z, u, y);
    base.subsystem(i).outputs(0.25, z, u, yb);
    EXPECT_EQ(y, yb);
  }
  // u = φ(y) at the given states: the laws are the base's.
  EXPECT_EQ(r.initial_couplings().size(), base.coupling_count());
}

TEST(RestartedSystem, RefusesStatesThatDoNotFit) {
  const auto base = system::make_chain_system(restart_chain(6), library::equal_partition(6, 2));
  std::vector<std::vector<double>> states(base.subsystem_count());
  for (std::size_t i = 0; i < states.size(); ++i)
    states[i].assign(base.subsystem(i).state_size(), 0.0);
  EXPECT_NO_THROW(system::restarted_system(base, 1.0, states));
  auto short_state = states;
  short_state[1].pop_back();
  EXPECT_THROW(system::restarted_system(base, 1.0, short_state), std::invalid_argument);
  auto nan_state = states;
  nan_state[0][0] = std::nan("");
  EXPECT_THROW(system::restarted_system(base, 1.0, nan_state), std::invalid_argument);
  states.pop_back();
  EXPECT_THROW(system::restarted_system(base, 1.0, states), std::invalid_argument);
}

}  // namespace
}  // namespace macrostep

// The closed form the bouncing-ball tests check against (tests/ida/test_events.cpp, the ball
// FMU in tests/fmu): a ball dropped from h0 at rest under gravity g, restitution e.
#pragma once

#include <cmath>
#include <cstddef>
#include <vector>

namespace macrostep::test {

// The first `count` impact times: t_1 = sqrt(2 h0 / g), then flights of 2 e^k v_1 / g.
inline std::vector<double> impact_times(double h0, double e, std::size_t count, double g = 9.81) {
  std::vector<double> t{std::sqrt(2.0 * h0 / g)};
  double speed = g * t[0];
  while (t.size() < count) {
    speed *= e;
    t.push_back(t.back() + 2.0 * speed / g);
  }
  return t;
}

}  // namespace macrostep::test

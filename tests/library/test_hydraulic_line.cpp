// HydraulicLine: a line's fluid column from a compliant chamber of its own to a volume node (seed
// 003 §2.4): its equations against differences and a closed form, and its outputs' nominals.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

#include "macrostep/library/hydraulic_line.hpp"
#include "subsystem_checks.hpp"

namespace macrostep {
namespace {

using library::HydraulicLine;
using library::HydraulicLineParameters;

// configs/f-2.8-hydraulic.toml's line a: I = 8.5e6 kg/m^4, k = 8.5e12 Pa/m^3, omega = 1000 rad/s.
HydraulicLineParameters f28_line() {
  HydraulicLineParameters p;
  p.density = 850.0;
  p.length = 1.0;
  p.area = 1.0e-4;
  p.chamber_volume = 1.0e-4;
  p.chamber_modulus = 8.5e8;
  p.chamber_pressure = 1.0e7;
  p.volume0 = 1.0e-7;
  return p;
}

TEST(HydraulicLine, JacobiansMatchDifferencesAndTheStartIsConsistent) {
  const HydraulicLine line(f28_line());
  const testing::SubsystemPoint at{0.0, {3.0e-7, -2.0e-4}, {-2.0e-4, 0.6}, {9.9e6}};
  for (double cj : {1.0, 2.0e4}) {
    testing::expect_jacobian_matches_central_differences(line, at, cj, 1e-6);
  }
  testing::expect_coupling_jacobians_match_differences(line, at);
  testing::expect_consistent_initial_state(line, {1.0e7}, 1e-12);
}

// Against a constant node pressure equal to the chamber's at V = 0 the line is a harmonic
// oscillator about V = 0: V(t) = V0 cos(omega t), omega = sqrt(k/I) = 1000 rad/s.
TEST(HydraulicLine, AgainstAConstantPressureTheVolumeOscillatesAtItsOwnFrequency) {
  HydraulicLineParameters p = f28_line();
  const HydraulicLine line(p);
  EXPECT_DOUBLE_EQ(std::sqrt(line.stiffness() / line.inertance()), 1000.0);
  const double node = p.chamber_pressure + line.stiffness() * p.volume0;  // p_C at V = 0
  const testing::ConstantInput pressure({node});
  const std::vector<double> times = {1e-3, 2e-3, 3.1415926535897932e-3};
  const auto z = testing::integrate_states(line, pressure, times);
  for (std::size_t k = 0; k < times.size(); ++k) {
    EXPECT_NEAR(z[k][0], p.volume0 * std::cos(1000.0 * times[k]), 1e-6 * p.volume0)
        << "t = " << times[k];
  }
}

// The outputs' sizes for the controller's tolerances: by default the volume that moves the
// chamber's pressure by 1 bar and that volume at the line's own angular frequency; given, as
// given; the chamber pressure keeps 1, and so do the states (the solver's atol is in the model's
// units).
TEST(HydraulicLine, OutputNominalsComeFromTheLineUnlessGiven) {
  HydraulicLineParameters p = f28_line();
  const HydraulicLine derived(p);
  const double volume = 1.0e-4 * 1.0e5 / 8.5e8;
  EXPECT_DOUBLE_EQ(derived.output_nominal(HydraulicLine::kVolume), volume);
  EXPECT_DOUBLE_EQ(derived.output_nominal(HydraulicLine::kFlow), volume * 1000.0);
  EXPECT_EQ(derived.output_nominal(HydraulicLine::kChamberPressure), 1.0);
  EXPECT_TRUE(derived.state_nominals().empty());
  p.volume_nominal = 2.0e-8;
  EXPECT_DOUBLE_EQ(HydraulicLine(p).output_nominal(HydraulicLine::kFlow), 2.0e-5);
  p.flow_nominal = 3.0e-5;
  const HydraulicLine given(p);
  EXPECT_EQ(given.output_nominal(HydraulicLine::kVolume), 2.0e-8);
  EXPECT_EQ(given.output_nominal(HydraulicLine::kFlow), 3.0e-5);
  p.flow_nominal = -1.0;
  EXPECT_THROW(HydraulicLine{p}, std::invalid_argument);
  p.flow_nominal = INFINITY;
  EXPECT_THROW(HydraulicLine{p}, std::invalid_argument);
}

}  // namespace
}  // namespace macrostep

// End-to-end runs of inputs fed by several connections (an effort input is the sum of its
// feeds): configs/three-body.toml (B fed by two springs) and configs/branched.toml (a hub fed by
// three shafts). Both executors give the same bytes, explicit and implicit; the co-simulation
// converges to the monolithic run of the same description at order κ + 1 in a fixed H; a signal
// input fed twice is a configuration error.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "binary_fixture.hpp"

namespace {

using macrostep::testing::final_nrmse;
using macrostep::testing::Outcome;

class MultiFeed : public macrostep::testing::BinaryTest {};

std::string config(const std::string& name) {
  return std::string(MACROSTEP_SOURCE_DIR) + "/configs/" + name + ".toml";
}

class MultiFeedRuns : public MultiFeed {
 protected:
  // NRMSE of a fixed-H in-process run against the monolithic reference at its result's times.
  double error(const std::string& name, const std::string& scheme, int kappa, double h,
               const std::string& stop) {
    const std::string tag = name + "-" + scheme + "-" + std::to_string(kappa) + "-" +
                            std::to_string(static_cast<int>(std::lround(1e6 * h)));
    const Outcome o =
        macrostep("run " + config(name) + " --scheme " + scheme + " --estimator none --order " +
                  std::to_string(kappa) + " --step-size " + std::to_string(h) + " --stop-time " +
                  stop + " --output " + tag + ".csv");
    EXPECT_EQ(o.status, 0) << tag << ": " << o.err;
    const Outcome ref = macrostep("reference " + config(name) + " --at " + tag +
                                  ".csv --output ref-" + tag + ".csv");
    EXPECT_EQ(ref.status, 0) << ref.err;
    const Outcome cmp = macrostep("compare " + tag + ".csv ref-" + tag + ".csv");
    EXPECT_EQ(cmp.status, 0) << cmp.err;
    return final_nrmse(cmp.out);
  }

  // The observed order log2(e(H)/e(H/2)) is κ + 1 within ±0.5.
  void expect_order(const std::string& name, const std::string& scheme, int kappa, double h,
                    const std::string& stop = "1") {
    std::vector<double> e;
    for (const double step : {h, h / 2, h / 4}) e.push_back(error(name, scheme, kappa, step, stop));
    for (std::size_t k = 0; k + 1 < e.size(); ++k) {
      ASSERT_GT(e[k + 1], 0.0) << name << " " << scheme;
      const double order = std::log2(e[k] / e[k + 1]);
      EXPECT_NEAR(order, kappa + 1, 0.5)
          << name << " " << scheme << " κ=" << kappa << ": errors " << e[0] << ", " << e[1];
    }
  }

  // Both executors write the same bytes.
  void expect_executors_agree(const std::string& name, const std::string& scheme) {
    for (const std::string executor : {"inprocess", "processes"}) {
      const Outcome o =
          macrostep("run " + config(name) + " --scheme " + scheme + " --stop-time 0.5 --executor " +
                    executor + " --output " + scheme + "-" + executor + ".csv");
      ASSERT_EQ(o.status, 0) << name << " " << scheme << " " << executor << ": " << o.err;
    }
    const std::string in_process = read_file(scheme + "-inprocess.csv");
    EXPECT_GT(in_process.size(), 1000u) << name << " " << scheme;
    EXPECT_TRUE(in_process == read_file(scheme + "-processes.csv"))
        << name << " " << scheme << ": executors differ";
  }
};

TEST_F(MultiFeedRuns, ThreeBodyExecutorsAgree) {
  for (const std::string scheme : {"explicit", "implicit"})
    expect_executors_agree("three-body", scheme);
}

TEST_F(MultiFeedRuns, BranchedExecutorsAgree) {
  for (const std::string scheme : {"explicit", "implicit"})
    expect_executors_agree("branched", scheme);
}

// Measured (NRMSE at H, H/2, H/4, order 2.0 ± 0.05 throughout): three-body κ = 1 explicit
// 9.4e-3, 2.4e-3, 6.1e-4, implicit 1.9e-3, 4.8e-4, 1.2e-4.
TEST_F(MultiFeedRuns, ThreeBodyConvergesAtOrderKappaPlusOne) {
  expect_order("three-body", "explicit", 1, 4e-3);
  expect_order("three-body", "implicit", 1, 4e-3);
}

// branched over 0.5 s, κ = 1 from H = 2e-3: explicit 8.1e-2, 2.1e-2, 5.2e-3, implicit 1.6e-2,
// 4.1e-3, 1.1e-3 (over 1 s: explicit 1.1e-1, 2.9e-2, 7.2e-3); κ = 2 explicit from 4e-3.
TEST_F(MultiFeedRuns, BranchedConvergesAtOrderKappaPlusOne) {
  expect_order("branched", "explicit", 1, 2e-3, "0.5");
  expect_order("branched", "implicit", 1, 2e-3, "0.5");
  expect_order("branched", "explicit", 2, 4e-3, "0.5");
}

// A signal input takes one connection: the second is refused, naming both (exit 2).
TEST_F(MultiFeed, SignalInputFedTwiceIsAConfigurationError) {
  write_file("twice.toml", R"([[subsystem]]
name = "motor"
model = "dc_motor"
resistance = 0.5
inductance = 2.0e-3
torque_constant = 0.5
inertia = 0.02

[[subsystem]]
name = "pi"
model = "pid"
kp = 1.0
setpoint = 1.0
output_lag = 0.01

[[connection]]
name = "voltage"
law = "signal"
from = "pi.command"
to = "motor.voltage"

[[connection]]
name = "boost"
law = "signal"
from = "pi.command"
to = "motor.voltage"

[[connection]]
name = "speed"
law = "signal"
from = "motor.omega"
to = "pi.measured"

[simulation]
end_time = 0.1
output_interval = 0.01
)");
  const Outcome o = macrostep("run twice.toml");
  EXPECT_EQ(o.status, 2) << o.err;
  EXPECT_NE(o.err.find("input \"motor.voltage\" is fed already by connection \"voltage\""),
            std::string::npos)
      << o.err;
  EXPECT_NE(o.err.find("connection \"boost\" feeds it too"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("only effort inputs (forces, torques, flows) take several connections"),
            std::string::npos)
      << o.err;
}

}  // namespace

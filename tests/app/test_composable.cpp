// End-to-end runs of described systems that are not chains of coupled bodies: subsystems
// without inputs (a source of coupling data only), in every scheme and both executors; a run
// that diverges.
#include <gtest/gtest.h>

#include <string>

#include "binary_fixture.hpp"

namespace {

using macrostep::testing::final_nrmse;
using macrostep::testing::Outcome;

class Composable : public macrostep::testing::BinaryTest {};

// A free two-inertia drive train (no inputs: both ends free) drives a load inertia through a
// torsion spring that acts on the load only. The spinner is a subsystem without inputs.
constexpr const char* kFreeSpinner = R"(
[[subsystem]]
name = "spinner"
model = "drive_train"
inertia = [0.05, 0.02]
shaft = [{c = 40.0, d = 0.05}]
speed0 = [3.0, 0.0]
left_coupled = false
right_coupled = false

[[subsystem]]
name = "load"
model = "drive_train"
inertia = [0.5]
right_coupled = false

[[connection]]
name = "shaft"
law = "rotational_spring_damper"
from = ["spinner.phi_2", "spinner.omega_2", "load.phi_1", "load.omega_1"]
to = ["load.tau_left"]
c = 50.0
d = 0.5

[simulation]
end_time = 0.3
output_interval = 1e-2

[cosim]
rtol = 1e-4
)";

// Every scheme runs it to the end, the process executor gives the in-process bytes, and the
// adaptive schemes stay near the monolithic run of the same description at the result's times
// (measured 3.5e-4 explicit, similar implicit; the bound leaves room for other platforms).
TEST_F(Composable, SubsystemWithoutInputsRunsInEverySchemeAndExecutor) {
  write_file("spinner.toml", kFreeSpinner);
  for (const std::string scheme :
       {"explicit", "implicit", "semi-implicit", "waveform", "gauss-seidel"}) {
    const std::string options =
        " --scheme " + scheme +
        (scheme == "gauss-seidel" ? std::string(" --estimator none --step-size 1e-3") : "");
    for (const std::string executor : {"inprocess", "processes"}) {
      const Outcome o = macrostep("run spinner.toml" + options + " --executor " + executor +
                                  " --output " + scheme + "-" + executor + ".csv");
      ASSERT_EQ(o.status, 0) << scheme << " " << executor << ": " << o.err;
    }
    const std::string in_process = read_file(scheme + "-inprocess.csv");
    EXPECT_GT(in_process.size(), 1000u) << scheme;
    EXPECT_TRUE(in_process == read_file(scheme + "-processes.csv"))
        << scheme << ": executors differ";
    if (scheme != "explicit" && scheme != "implicit") continue;
    const Outcome ref = macrostep("reference spinner.toml --at " + scheme +
                                  "-inprocess.csv --output ref-" + scheme + ".csv");
    ASSERT_EQ(ref.status, 0) << ref.err;
    const Outcome cmp = macrostep("compare " + scheme + "-inprocess.csv ref-" + scheme + ".csv");
    ASSERT_EQ(cmp.status, 0) << cmp.err;
    EXPECT_LT(final_nrmse(cmp.out), 3e-3) << scheme << "\n" << cmp.out;
  }
}

// Two inertias on a shaft with a speed feedback of the wrong sign: the model itself grows like
// e^(t/1.1 s). The run stops where a coupling variable passes 1e10 times its scale, names it
// and keeps every row before; both executors stop at the same point.
constexpr const char* kWrongSign = R"(
[[subsystem]]
name = "motor"
model = "drive_train"
inertia = [0.05]
speed0 = [1.0]

[[subsystem]]
name = "load"
model = "drive_train"
inertia = [0.5]
speed0 = [1.0]
right_coupled = false

[[connection]]
name = "shaft"
law = "rotational_spring_damper"
from = ["motor.phi_1", "motor.omega_1", "load.phi_1", "load.omega_1"]
to = ["motor.tau_right", "load.tau_left"]
c = 500.0
d = 0.5

[[connection]]
name = "feedback"
law = "signal"
from = "load.omega_1"
to = "motor.tau_left"
gain = -2.0

[simulation]
end_time = 20
output_interval = 1e-2

[cosim]
rtol = 1e-4
)";

TEST_F(Composable, DivergingRunStopsNamingTheVariableAndKeepsItsRows) {
  write_file("wrong-sign.toml", kWrongSign);
  for (const std::string executor : {"inprocess", "processes"}) {
    const Outcome o =
        macrostep("run wrong-sign.toml --executor " + executor + " --output " + executor + ".csv");
    EXPECT_EQ(o.status, 1) << o.err;
    EXPECT_NE(o.err.find("the co-simulation diverges: coupling variable feedback grew to"),
              std::string::npos)
        << o.err;
    EXPECT_NE(o.err.find("check also the sign of every law and gain"), std::string::npos);
    EXPECT_NE(read_file(executor + ".json").find("\"status\": \"failed\""), std::string::npos);
  }
  const std::string rows = read_file("inprocess.csv");
  EXPECT_TRUE(rows == read_file("processes.csv"));
  // The last row is complete and lies well inside the 20 s: the run did not go on to the end.
  ASSERT_EQ(rows.back(), '\n');
  const std::string last = rows.substr(rows.rfind('\n', rows.size() - 2) + 1);
  const double t_last = std::stod(last.substr(0, last.find(',')));
  EXPECT_GT(t_last, 1.0);
  EXPECT_LT(t_last, 15.0);
}

// A user's plugin with a sign error: both masses of the test plugin take the spring's force
// with the wrong sign (a: -lambda, b: +lambda), which makes the stiff coupling spring push the
// masses apart (growth rate sqrt(2c/m - c_ground/m) = 55 1/s). The run stops with exit 1 naming
// the coupling variable and the time, with every row before intact, in-process and in worker
// processes alike.
TEST_F(Composable, SignErrorInAPluginStopsTheRun) {
  const std::string plugin = "model = \"plugin\"\nlibrary = \"" MISBEHAVING_PLUGIN "\"\n";
  write_file("sign.toml", "[[subsystem]]\nname = \"a\"\n" + plugin +
                              "parameters = {at = 1.0e9, force_sign = -1}\n"
                              "[[subsystem]]\nname = \"b\"\n" +
                              plugin +
                              "parameters = {at = 1.0e9, force_sign = 1, x0 = 0.0}\n"
                              "[[connection]]\nname = \"spring\"\nlaw = \"spring_damper\"\n"
                              "from = [\"a.x\", \"a.v\", \"b.x\", \"b.v\"]\nto = [\"a.force\", "
                              "\"b.force\"]\nc = 2000.0\nd = 0.0\n"
                              "[simulation]\nend_time = 5.0\noutput_interval = 1.0e-3\n");
  for (const std::string executor : {"inprocess", "processes"}) {
    const Outcome o =
        macrostep("run sign.toml --executor " + executor + " --output " + executor + ".csv");
    EXPECT_EQ(o.status, 1) << o.err;
    EXPECT_NE(o.err.find("the co-simulation diverges: coupling variable spring"), std::string::npos)
        << o.err;
    EXPECT_NE(read_file(executor + ".json").find("\"status\": \"failed\""), std::string::npos);
    const std::string rows = read_file(executor + ".csv");
    ASSERT_EQ(rows.back(), '\n');
    const std::string last = rows.substr(rows.rfind('\n', rows.size() - 2) + 1);
    const double t_last = std::stod(last.substr(0, last.find(',')));
    EXPECT_GT(t_last, 0.2) << executor;
    EXPECT_LT(t_last, 1.0) << executor;
  }
}

}  // namespace

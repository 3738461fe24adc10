// Sources and blocks end to end: configs/sources.toml (a step-driven open-loop motor with a table
// brake torque) in every fixed-step scheme and both executors, against the monolithic
// reference, killed and resumed, and with a worker killed under --max-restarts; sources without
// inputs driving a body through blocks; and a gain and a sum inside a control loop, whose
// coupling equations must hold at every accepted point.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "../support/child_processes.hpp"
#include "binary_fixture.hpp"
#include "macrostep/output/csv.hpp"

namespace {

namespace fs = std::filesystem;
using macrostep::testing::children_of;
using macrostep::testing::final_nrmse;
using macrostep::testing::Outcome;

class Sources : public macrostep::testing::BinaryTest {
 protected:
  // configs/sources.toml and its table, copied into the test directory (the table's path is
  // relative to the configuration).
  void copy_config() const {
    for (const char* name : {"sources.toml", "sources-load.csv"}) {
      fs::copy_file(fs::path(MACROSTEP_SOURCE_DIR) / "configs" / name, dir_ / name);
    }
  }
  // Starts `macrostep <args>` in the test directory (stdout, stderr to run.out, run.err).
  pid_t start(const std::vector<std::string>& args) const {
    const pid_t pid = macrostep::testing::fork_tied();
    if (pid == 0) {
      if (::chdir(dir_.c_str()) != 0) ::_exit(120);
      if (!std::freopen("run.out", "w", stdout) || !std::freopen("run.err", "w", stderr)) {
        ::_exit(121);
      }
      std::string binary = macrostep::testing::app_binary(MACROSTEP_BINARY);
      std::vector<char*> argv{binary.data()};
      for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      ::execv(binary.c_str(), argv.data());
      ::_exit(127);
    }
    return pid;
  }
  static int exit_status(pid_t pid) {
    int status = 0;
    EXPECT_EQ(::waitpid(pid, &status, 0), pid);
    return WIFSIGNALED(status) ? -WTERMSIG(status) : WEXITSTATUS(status);
  }
};

const std::string kFixed = " --estimator none --step-size 1e-3";

// Explicit, implicit and Gauss-Seidel at a fixed H: the process executor gives the in-process
// bytes, with the smoothed step of the file and with a jump (width = 0), over 0.3 s (the step is
// at 0.1 s).
TEST_F(Sources, StepDrivenMotorIsBitIdenticalInEverySchemeAndExecutor) {
  copy_config();
  std::string jump = read_file("sources.toml");
  jump.replace(jump.find("width = 5e-3"), 12, "width = 0.0");
  write_file("jump.toml", jump);
  for (const std::string config : {"sources", "jump"}) {
    for (const std::string scheme : {"explicit", "implicit", "gauss-seidel"}) {
      for (const std::string executor : {"inprocess", "processes"}) {
        const Outcome o =
            macrostep("run " + config + ".toml --scheme " + scheme + kFixed + " --stop-time 0.3" +
                      " --executor " + executor + " --output " + executor + ".csv");
        ASSERT_EQ(o.status, 0) << config << " " << scheme << " " << executor << ": " << o.err;
      }
      const std::string in_process = read_file("inprocess.csv");
      EXPECT_GT(in_process.size(), 10000u);
      EXPECT_TRUE(in_process == read_file("processes.csv")) << config << " " << scheme;
    }
  }
}

// The file's run (explicit, fixed H) and an implicit one against the tight monolithic reference.
TEST_F(Sources, StepDrivenMotorFollowsTheMonolithicReference) {
  copy_config();
  for (const std::string& options : {std::string(""), " --scheme implicit" + kFixed}) {
    const Outcome o = macrostep("run sources.toml" + options + " --output run.csv");
    ASSERT_EQ(o.status, 0) << o.err;
    const Outcome ref = macrostep("reference sources.toml --at run.csv --output ref.csv");
    ASSERT_EQ(ref.status, 0) << ref.err;
    const Outcome cmp = macrostep("compare run.csv ref.csv");
    ASSERT_EQ(cmp.status, 0) << cmp.err;
    EXPECT_LT(final_nrmse(cmp.out), 1e-2) << options << "\n" << cmp.out;  // measured 5.9e-4
    std::cout << "sources.toml" << options << ": " << cmp.out.substr(cmp.out.rfind("NRMSE"));
  }
}

// A jump (width 0) is a time event (methods.md §3.3): the macro steps end on it, in a controlled
// run and in a fixed-step one whose grid misses it (H = 3e-3 s), the row there has the voltage
// after it, the step after it starts from that value (no polynomial through the jump), and the
// run follows the monolithic reference, which takes the jump as an event too.
TEST_F(Sources, AJumpIsAMacroPointAndTheRunFollowsTheReference) {
  copy_config();
  // Rows at the macro points (not on the file's output grid), so that the row at 0.1 s is one.
  const std::string jump = " --set subsystem.supply.width=0 --set 'output.rows=\"macro\"'";
  for (const std::string& options :
       {std::string(" --estimator exMD"), std::string(" --step-size 3e-3")}) {
    const Outcome o =
        macrostep("run sources.toml" + jump + options + " --stop-time 0.3 --output run.csv");
    ASSERT_EQ(o.status, 0) << o.err;
    EXPECT_EQ(o.out.find("warning"), std::string::npos) << o.out;
    const auto table = macrostep::output::read_csv(path("run.csv"));
    const auto voltage = table.column_index("voltage");
    ASSERT_TRUE(voltage);
    const auto& t = table.time;
    const auto at = std::find(t.begin(), t.end(), 0.1);
    ASSERT_NE(at, t.end()) << options << ": no macro point at the jump";
    const auto row = static_cast<std::size_t>(at - t.begin());
    EXPECT_EQ(table.values[*voltage][row], 24.0) << options;
    EXPECT_EQ(table.values[*voltage][row - 1], 0.0) << options;
    const Outcome ref =
        macrostep("reference sources.toml" + jump + " --at run.csv --output ref.csv");
    ASSERT_EQ(ref.status, 0) << ref.err;
    const Outcome cmp = macrostep("compare run.csv ref.csv");
    ASSERT_EQ(cmp.status, 0) << cmp.err;
    EXPECT_LT(final_nrmse(cmp.out), 1e-2) << options << "\n" << cmp.out;
    std::cout << "jump" << options << ": " << cmp.out.substr(cmp.out.rfind("NRMSE"));
  }
}

// Two masses on a spring, the first driven by the sum of two steps of width 0 at 0.3 s and at
// `second` (time events).
std::string two_steps(const std::string& second, double second_final) {
  return "[[subsystem]]\nname = \"on\"\nmodel = \"step\"\nfinal = 10.0\ntime = 0.3\n"
         "[[subsystem]]\nname = \"off\"\nmodel = \"step\"\nfinal = " +
         std::to_string(second_final) + "\ntime = " + second +
         "\n[[subsystem]]\nname = \"sum\"\nmodel = \"sum\"\nsigns = [1.0, 1.0]\n"
         "[[subsystem]]\nname = \"a\"\nmodel = \"oscillator_mass\"\nmass = 1.0\nc = 100.0\n"
         "d = 1.0\nforce_input = true\n"
         "[[subsystem]]\nname = \"b\"\nmodel = \"oscillator_mass\"\nmass = 2.0\nc = 50.0\n"
         "d = 0.5\nforce_input = true\nforce_sign = -1.0\n"
         "[[connection]]\nname = \"u1\"\nlaw = \"signal\"\nfrom = \"on.y\"\nto = \"sum.u_1\"\n"
         "[[connection]]\nname = \"u2\"\nlaw = \"signal\"\nfrom = \"off.y\"\nto = \"sum.u_2\"\n"
         "[[connection]]\nname = \"drive\"\nlaw = \"signal\"\nfrom = \"sum.y\"\nto = \"a.force\"\n"
         "[[connection]]\nname = \"spring\"\nlaw = \"spring_damper\"\n"
         "from = [\"a.x\", \"a.v\", \"b.x\", \"b.v\"]\nto = [\"a.force\", \"b.force\"]\n"
         "c = 200.0\nd = 2.0\n[solver]\nrtol = 1e-9\n"
         "[simulation]\nend_time = 1.0\noutput_interval = 1e-3\n";
}

// Time events closer than rounding (0.3 and 0.1 + 0.2) are one macro point, controlled, on a
// fixed grid, implicit and in the reference (they made the step source chatter, and two FMUs' such
// edges made H fall below H_min); and a pulse 1e-12 s wide between two grid points leaves a fixed
// grid's polynomials alone (a degree-2 polynomial through the points 1e-12 s apart had turned a
// response of 1e-13 m into 1e-4 m).
TEST_F(Sources, TimeEventsCloserThanAStepAreOneMacroPointOrLeaveTheGridAlone) {
  std::ofstream(path("same.toml")) << two_steps("0.30000000000000004", 10.0);
  for (const std::string options :
       {"", " --estimator none --step-size 0.007", " --scheme implicit"}) {
    const Outcome o = macrostep("run same.toml" + options + " --output same.csv");
    ASSERT_EQ(o.status, 0) << options << "\n" << o.err;
    const Outcome ref = macrostep("reference same.toml --at same.csv --output ref.csv");
    ASSERT_EQ(ref.status, 0) << ref.err;
    const Outcome cmp = macrostep("compare same.csv ref.csv");
    ASSERT_EQ(cmp.status, 0) << cmp.err;
    EXPECT_LT(final_nrmse(cmp.out), 1e-2) << options << "\n" << cmp.out;  // measured 1.9e-3
  }
  std::ofstream(path("pulse.toml")) << two_steps("0.30000000000099997", -10.0);
  const Outcome o = macrostep(
      "run pulse.toml --estimator none --step-size 0.007 --set 'output.rows=\"macro\"' "
      "--output pulse.csv");
  ASSERT_EQ(o.status, 0) << o.err;
  const auto table = macrostep::output::read_csv(path("pulse.csv"));
  const auto x = table.column_index("a.x");
  ASSERT_TRUE(x);
  double largest = 0.0;
  for (const double v : table.values[*x]) largest = std::max(largest, std::abs(v));
  EXPECT_LT(largest, 1e-12) << "a 10 N pulse of 1e-12 s moves the mass by about 1e-13 m";
}

// Killed with SIGKILL after a checkpoint and resumed: the CSV is the uninterrupted run's. With the
// step as a jump (a time event, methods.md §3.3) and an H whose grid misses it: the checkpoint
// before the event carries the event limit, and the resumed run ends a step on it as the whole
// run did.
TEST_F(Sources, ResumeAfterSigkillIsBitIdentical) {
  copy_config();
  for (const std::string scheme : {"explicit", "gauss-seidel"}) {
    const std::vector<std::string> common = {"sources.toml",
                                             "--scheme",
                                             scheme,
                                             "--estimator",
                                             "none",
                                             "--step-size",
                                             "3e-4",
                                             "--stop-time",
                                             "0.2",
                                             "--executor",
                                             "processes",
                                             "--set",
                                             "subsystem.supply.width=0"};
    std::vector<std::string> whole = {"run"};
    whole.insert(whole.end(), common.begin(), common.end());
    whole.insert(whole.end(), {"--output", "whole.csv"});
    ASSERT_EQ(exit_status(start(whole)), 0) << read_file("run.err");
    const std::size_t total = lines("whole.csv");
    std::vector<std::string> cut = {"run"};
    cut.insert(cut.end(), common.begin(), common.end());
    cut.insert(cut.end(), {"--output", "cut.csv", "--checkpoint-every", "50steps"});
    fs::remove(path("cut.ckpt"));
    const pid_t pid = start(cut);
    while (::waitpid(pid, nullptr, WNOHANG) == 0 &&
           !(lines("cut.csv") > total / 3 && fs::exists(path("cut.ckpt")))) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    ::kill(pid, SIGKILL);
    const int status = exit_status(pid);
    if (status != -SIGKILL) GTEST_SKIP() << "the run ended before the kill (status " << status;
    const Outcome resumed = macrostep("resume cut.ckpt");
    ASSERT_EQ(resumed.status, 0) << resumed.err;
    EXPECT_TRUE(read_file("cut.csv") == read_file("whole.csv")) << scheme << ": resumed differs";
  }
}

// A worker killed in the middle of the run: --max-restarts recovers it, bit-identically. One
// process per subsystem, so that the killed one hosts the motor alone.
TEST_F(Sources, KilledWorkerIsRecoveredWithMaxRestartsBitIdentically) {
  copy_config();
  const std::vector<std::string> common = {"run",         "sources.toml", "--estimator",    "none",
                                           "--step-size", "1e-4",         "--stop-time",    "0.4",
                                           "--executor",  "processes",    "--max-restarts", "2",
                                           "--processes", "per-subsystem"};
  std::vector<std::string> plain = common;
  plain.insert(plain.end(), {"--output", "plain.csv"});
  ASSERT_EQ(exit_status(start(plain)), 0) << read_file("run.err");
  const std::size_t total = lines("plain.csv");
  std::vector<std::string> run = common;
  run.insert(run.end(), {"--output", "run.csv"});
  const pid_t app = start(run);
  std::vector<pid_t> workers;
  while (::waitpid(app, nullptr, WNOHANG) == 0) {
    workers = children_of(app);
    if (workers.size() == 4 && lines("run.csv") > total / 3) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_EQ(workers.size(), 4u) << "the run ended before the kill";
  ASSERT_EQ(::kill(workers[2], SIGKILL), 0);  // the motor's worker (subsystems in order)
  ASSERT_EQ(exit_status(app), 0) << read_file("run.err");
  EXPECT_NE(read_file("run.err").find("recovered from a worker failure"), std::string::npos)
      << read_file("run.err");
  EXPECT_TRUE(read_file("run.csv") == read_file("plain.csv")) << "the recovered CSV differs";
}

// Sources without inputs (a ramp and a sine) summed and scaled by blocks drive a body: a torque
// ramp plus an oscillation on one inertia, in every scheme at a fixed H and both executors.
constexpr const char* kSourceDriven = R"(
[[subsystem]]
name = "ramp"
model = "ramp"
slope = 2.0
start_time = 0.05
end_time = 0.25
unit = "N m"

[[subsystem]]
name = "wobble"
model = "sine"
amplitude = 0.3
frequency = 5.0
unit = "N m"

[[subsystem]]
name = "total"
model = "sum"
signs = [1.0, 1.0]
unit = "N m"

[[subsystem]]
name = "scale"
model = "gain"
k = -1.0
unit = "N m"

[[subsystem]]
name = "body"
model = "drive_train"
inertia = [0.5]
bearing_damping = [0.1]
right_coupled = false

[[connection]]
name = "a"
law = "signal"
from = "ramp.y"
to = "total.u_1"

[[connection]]
name = "b"
law = "signal"
from = "wobble.y"
to = "total.u_2"

[[connection]]
name = "sum"
law = "signal"
from = "total.y"
to = "scale.u"

[[connection]]
name = "torque"
law = "signal"
from = "scale.y"
to = "body.tau_left"

[simulation]
end_time = 0.5
output_interval = 1e-3

[cosim]
rtol = 1e-5
)";

TEST_F(Sources, SourcesWithoutInputsDriveABodyThroughBlocks) {
  write_file("driven.toml", kSourceDriven);
  for (const std::string scheme : {"explicit", "implicit", "gauss-seidel"}) {
    for (const std::string executor : {"inprocess", "processes"}) {
      const Outcome o = macrostep("run driven.toml --scheme " + scheme + kFixed + " --executor " +
                                  executor + " --output " + executor + ".csv");
      ASSERT_EQ(o.status, 0) << scheme << " " << executor << ": " << o.err;
    }
    EXPECT_TRUE(read_file("inprocess.csv") == read_file("processes.csv")) << scheme;
  }
  // Against the monolithic run of the same description (the estimators would not see the
  // body's error: nothing reads its outputs, so the comparison is at a fixed H).
  const Outcome o = macrostep("run driven.toml" + kFixed + " --output adaptive.csv");
  ASSERT_EQ(o.status, 0) << o.err;
  const Outcome ref = macrostep("reference driven.toml --at adaptive.csv --output ref.csv");
  ASSERT_EQ(ref.status, 0) << ref.err;
  const Outcome cmp = macrostep("compare adaptive.csv ref.csv");
  EXPECT_LT(final_nrmse(cmp.out), 1e-3) << cmp.out;  // measured 1.9e-5
  const auto table = macrostep::output::read_csv(path("adaptive.csv"));
  const auto torque = table.column_index("torque");
  ASSERT_TRUE(torque);
  const double t_last = table.time.back();
  EXPECT_NEAR(table.values[*torque].back(),
              -(0.4 + 0.3 * std::sin(2.0 * 3.14159265358979323846 * 5.0 * t_last)), 1e-12);
}

// A control loop with two feed-through blocks: the motor speed, scaled by a gain (a sensor),
// minus a ramped setpoint (a sum), drives a lag-free PI controller (feed-through too) whose
// command is the motor voltage. The loop is closed through the motor (no feed-through).
constexpr const char* kGainLoop = R"(
[[subsystem]]
name = "setpoint"
model = "ramp"
slope = 40.0
end_time = 0.25
unit = "V"

[[subsystem]]
name = "sensor"
model = "gain"
k = 0.5
unit = "V"

[[subsystem]]
name = "error"
model = "sum"
signs = [-1.0, 1.0]
unit = "V"

[[subsystem]]
name = "pi"
model = "pid"
kp = 2.0
ki = 20.0

[[subsystem]]
name = "motor"
model = "dc_motor"
resistance = 0.5
inductance = 2.0e-3
torque_constant = 0.5
inertia = 0.02
damping = 1.0e-3
right_coupled = false

[[connection]]
name = "speed"
law = "signal"
from = "motor.omega"
to = "sensor.u"

[[connection]]
name = "reference"
law = "signal"
from = "setpoint.y"
to = "error.u_1"

[[connection]]
name = "measured"
law = "signal"
from = "sensor.y"
to = "error.u_2"

[[connection]]
name = "deviation"
law = "signal"
from = "error.y"
to = "pi.measured"

[[connection]]
name = "voltage"
law = "signal"
from = "pi.command"
to = "motor.voltage"

[simulation]
end_time = 1.5
output_interval = 1e-4

[cosim]
rtol = 1e-5
)";

// At every row (every accepted macro point) each connection's variable equals its source output,
// and the blocks' outputs equal their functions of those variables (the controller's command
// needs its integral state, which only --all-states writes, and then without outputs).
// `bound`: relative to 1 + |voltage|.
void expect_loop_equations(const macrostep::output::CsvTable& t, const std::string& what,
                           double bound) {
  const auto col = [&](const char* name) -> const std::vector<double>& {
    const auto c = t.column_index(name);
    EXPECT_TRUE(c) << name;
    return t.values.at(c.value_or(0));
  };
  const auto& omega = col("motor.omega");
  const auto& speed = col("speed");
  const auto& sensor = col("sensor.y");
  const auto& measured = col("measured");
  const auto& setpoint = col("setpoint.y");
  const auto& reference = col("reference");
  const auto& error = col("error.y");
  const auto& deviation = col("deviation");
  const auto& command = col("pi.command");
  const auto& voltage = col("voltage");
  double worst = 0.0;
  for (std::size_t r = 0; r < t.rows(); ++r) {
    const double scale = 1.0 + std::abs(voltage[r]);
    const double residuals[] = {speed[r] - omega[r],
                                measured[r] - sensor[r],
                                sensor[r] - 0.5 * speed[r],
                                reference[r] - setpoint[r],
                                error[r] - (measured[r] - reference[r]),
                                deviation[r] - error[r],
                                voltage[r] - command[r]};
    for (const double e : residuals) worst = std::max(worst, std::abs(e) / scale);
  }
  EXPECT_LT(worst, bound) << what;
  std::cout << what << ": " << t.rows() << " rows, largest coupling residual " << worst << "\n";
}

// Explicit Jacobi and Gauss-Seidel solve the affine feed-through exactly (measured 5e-17); the
// implicit scheme's corrector stops at its tolerance (measured 1.0e-7 at rtol 1e-5).
TEST_F(Sources, GainAndSumInAControlLoopKeepTheCouplingEquations) {
  write_file("loop.toml", kGainLoop);
  const std::pair<std::string, double> runs[] = {
      {"", 1e-14}, {" --scheme implicit", 1e-5}, {" --scheme gauss-seidel" + kFixed, 1e-14}};
  for (const auto& [options, bound] : runs) {
    const Outcome o = macrostep("run loop.toml --output loop.csv" + options);
    ASSERT_EQ(o.status, 0) << options << ": " << o.err;
    const auto table = macrostep::output::read_csv(path("loop.csv"));
    ASSERT_GT(table.rows(), 20u);
    expect_loop_equations(table, "loop" + options, bound);
    // The loop settles: speed·k follows the held setpoint of 10 V.
    EXPECT_NEAR(table.values[*table.column_index("sensor.y")].back(), 10.0, 1e-2) << options;
  }
}

}  // namespace

// `macrostep stability` end to end (runtime/app/stability_command.hpp; METHODS.md §7.1): the text,
// the CSV and the PNG; two-mass parameters from a run configuration; bad options exit 2; and the
// tool agrees with a co-simulation of the same model (explicit Jacobi, the existing runtime): a
// run above the edge of the stable band grows, one below it does not; on a described system ρ
// predicts how fast.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "binary_fixture.hpp"

namespace macrostep::testing {
namespace {

class Stability : public BinaryTest {
 protected:
  void expect_tool_agrees(const char* config, double growth) const;
};

// The linear two-mass oscillator of tests/support (m = 1, 2 kg; c = 1e4, 5e3, 2e4 N/m; no
// damping) as a run configuration with a fixed macro step, κ = 2.
constexpr const char* kTwoMass = R"(
[model]
masses = 2
mass = 1.0
x0 = [1.0e-3, -2.0e-3]
v0 = [0.1, 0.0]
[model.element]
c = 1.0e4
[[model.mass_override]]
first = 2
mass = 2.0
[[model.element_override]]
first = 2
c = 5.0e3
[[model.element_override]]
first = 3
c = 2.0e4
[partition]
subsystems = 2
[solver]
rtol = 1.0e-10
[simulation]
end_time = 1.0
output_interval = 1.0e-3
[cosim]
estimator = "none"
step_size = 1.0e-3
order = 2
)";

// A two-mass model whose stable set has a gap (m2 = 0.01, c2 = 0.3, cc = 0.05, d1 = 0.02, κ = 2):
// stable from small H up to ω̂ ≈ 0.198, unstable up to ρ ≈ 1.9 above, stable again from ω̂ ≈ 0.78.
constexpr const char* kGapped = R"(
[model]
masses = 2
mass = 1.0
x0 = [1.0e-1, -2.0e-1]
v0 = [0.1, 0.0]
[model.element]
c = 1.0
d = 0.02
[[model.mass_override]]
first = 2
mass = 0.01
[[model.element_override]]
first = 2
c = 0.05
d = 0.0
[[model.element_override]]
first = 3
c = 0.3
d = 0.0
[partition]
subsystems = 2
[solver]
rtol = 1.0e-10
[simulation]
end_time = 1.0
output_interval = 1.0e-3
[cosim]
estimator = "none"
step_size = 1.0e-3
order = 2
)";

// "<label> <h> s" from the text output; NaN if absent.
double h_after(const std::string& out, const std::string& label) {
  std::smatch m;
  const std::regex re(label + " ([0-9.eE+-]+) s");
  return std::regex_search(out, m, re) ? std::stod(m[1].str()) : std::nan("");
}
double largest_stable_h(const std::string& out) {
  return h_after(out, "largest stable H:");
}
double band_edge_h(const std::string& out) {
  return h_after(out, "stable band from the smallest H: up to H =");
}

// K-C (seed 000 App. C, METHODS §7.3 S3): κ = 2 F/F Jacobi on the symmetric model is stable up to
// ω̂ ≈ 0.596; the command prints it and draws the PNG.
TEST_F(Stability, DefaultModelPrintsTheKCLimitAndAPlot) {
  const Outcome o = macrostep("stability --points 40 --csv scan.csv");
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_NEAR(largest_stable_h(o.out), 0.596, 0.001);  // m = c = 1: H = ω̂
  std::ifstream png(path("stability.png"), std::ios::binary);
  char magic[4] = {};
  png.read(magic, 4);
  EXPECT_EQ(std::string(magic + 1, 3), "PNG") << "no PNG written";
  std::istringstream csv(read_file("scan.csv"));
  std::string line;
  int rows = 0;
  while (std::getline(csv, line)) ++rows;
  EXPECT_EQ(rows, 41);  // header + 40 points
}

// Seed 000 App. C (METHODS §7.3 S3): F/F Gauss-Seidel κ = 0 on the undamped symmetric model is
// unstable at every H as the seed defines it (--gauss-seidel sequential) and stable up to the
// scan's end converged (the default); the heading names the end value, a configuration's scheme
// and gauss_seidel key are the defaults, and the option is refused with another scheme or name.
TEST_F(Stability, GaussSeidelEndValuesGiveTheSeedsAndTheConvergedScheme) {
  const std::string gs =
      "stability --scheme gauss-seidel --order 0 --no-plot --points 30 "
      "--omega-min 0.05 --omega-max 3";
  const Outcome seq = macrostep(gs + " --gauss-seidel sequential");
  ASSERT_EQ(seq.status, 0) << seq.err;
  EXPECT_NE(seq.out.find("ff gauss-seidel (sequential), lagrange (order 0)"), std::string::npos)
      << seq.out;
  EXPECT_NE(seq.out.find("unstable at every H of the scan"), std::string::npos) << seq.out;
  const Outcome conv = macrostep(gs);
  ASSERT_EQ(conv.status, 0) << conv.err;
  EXPECT_NE(conv.out.find("ff gauss-seidel (converged)"), std::string::npos) << conv.out;
  EXPECT_NEAR(largest_stable_h(conv.out), 3.0, 1e-9) << conv.out;  // the end of the scan
  std::string file = std::regex_replace(kTwoMass, std::regex("\\[cosim\\]\n"),
                                        "[cosim]\nscheme = \"gauss-seidel\"\n"
                                        "gauss_seidel = \"sequential\"\n");
  write_file("gs.toml", file);
  const Outcome from_file = macrostep("stability gs.toml --no-plot --points 5");
  ASSERT_EQ(from_file.status, 0) << from_file.err;
  EXPECT_NE(from_file.out.find("gauss-seidel (sequential)"), std::string::npos) << from_file.out;
  for (const char* bad : {"stability --gauss-seidel sequential --no-plot",
                          "stability --scheme gauss-seidel --gauss-seidel iterated --no-plot"}) {
    const Outcome o = macrostep(bad);
    EXPECT_EQ(o.status, 2) << bad << ": " << o.out;
    EXPECT_NE(o.err.find("--gauss-seidel"), std::string::npos) << o.err;
  }
}

TEST_F(Stability, ParametersComeFromTheConfiguration) {
  write_file("two.toml", kTwoMass);
  const Outcome o = macrostep("stability two.toml --no-plot --points 20 --m1 1");
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.out.find("m = 1, 2; c1 = 10000, cc = 5000, c2 = 20000"), std::string::npos) << o.out;
  EXPECT_FALSE(std::filesystem::exists(path("two.stability.png")));
}

TEST_F(Stability, BadValuesExitWithStatusTwo) {
  for (const char* args :
       {"stability --decomposition xy --no-plot", "stability --approximation c7 --no-plot",
        "stability --scheme seidel --no-plot", "stability --omega-min 2 --omega-max 1 --no-plot",
        "stability --approximation lin-2-3-opt --dc 0.1 --no-plot"}) {
    const Outcome o = macrostep(args);
    EXPECT_EQ(o.status, 2) << args << ": " << o.out << o.err;
    EXPECT_FALSE(o.err.empty()) << args;
  }
  std::string three = std::regex_replace(kTwoMass, std::regex("masses = 2"), "masses = 3");
  three = std::regex_replace(three, std::regex("x0 = .*\n"), "");
  three = std::regex_replace(three, std::regex("v0 = .*\n"), "");
  write_file("three.toml", three);
  // Three masses are a described system now: analysed linearised, not refused.
  const Outcome o = macrostep("stability three.toml --no-plot --points 10");
  EXPECT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.out.find("2 subsystems, 6 states, 1 coupling variables"), std::string::npos) << o.out;
  // A constraint law is not linearised; two-mass options do not apply to a described system.
  for (const std::string& args :
       {"stability " + std::string(MACROSTEP_SOURCE_DIR) + "/configs/two-mass-joint.toml --no-plot",
        std::string("stability three.toml --m1 2 --no-plot"),
        std::string("stability three.toml --scheme semi-implicit --no-plot")}) {
    const Outcome bad = macrostep(args);
    EXPECT_EQ(bad.status, 2) << args << ": " << bad.out << bad.err;
    EXPECT_FALSE(bad.err.empty()) << args;
  }
}

// The largest |x_1|, |x_2| of a result CSV over the first and the last quarter of its rows.
std::pair<double, double> amplitudes(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  std::getline(in, line);  // header: time,x_1,v_1,x_2,v_2,lambda_1
  std::vector<double> a;
  while (std::getline(in, line)) {
    std::istringstream row(line);
    std::string cell;
    std::vector<double> v;
    while (std::getline(row, cell, ',')) v.push_back(std::stod(cell));
    a.push_back(std::max(std::abs(v.at(1)), std::abs(v.at(3))));
  }
  const std::size_t q = a.size() / 4;
  return {*std::max_element(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(q)),
          *std::max_element(a.end() - static_cast<std::ptrdiff_t>(q), a.end())};
}

// The tool agrees with simulation: 300 fixed macro steps of the explicit Jacobi co-simulation
// (IDA subsystems, κ = 2) at 0.9 and 1.1 times the edge of the stable band the tool reports. The
// first stays bounded (no growth beyond a factor 2 between the first and the last quarter), the
// second grows by more than `growth`. On the gapped model the largest stable H lies far above the
// band, and the tool warns about the gap.
void Stability::expect_tool_agrees(const char* config, double growth) const {
  write_file("two.toml", config);
  const Outcome tool = macrostep("stability two.toml --no-plot --points 60");
  ASSERT_EQ(tool.status, 0) << tool.err;
  const double edge = band_edge_h(tool.out);
  ASSERT_TRUE(std::isfinite(edge)) << tool.out;
  for (const double factor : {0.9, 1.1}) {
    const double h = factor * edge;
    const Outcome run = macrostep("run two.toml --executor inprocess --output r.csv --step-size " +
                                  std::to_string(h) + " --stop-time " + std::to_string(300 * h));
    ASSERT_EQ(run.status, 0) << run.err;
    const auto [first, last] = amplitudes(read_file("r.csv"));
    if (factor < 1.0) {
      EXPECT_LT(last, 2.0 * first) << "at " << factor << " times the band edge";
    } else {
      EXPECT_GT(last, growth * first) << "at " << factor << " times the band edge";
    }
  }
}

// A linear five-mass chain cut into three subsystems: a described system, analysed linearised.
constexpr const char* kFiveMasses = R"(
[model]
masses = 5
mass = 1.0
x0 = [1.0e-3, 0.0, -1.0e-3, 0.0, 2.0e-3]
v0 = [0.0, 0.1, 0.0, 0.0, 0.0]
[model.element]
c = 1.0e4
d = 1.0
[[model.mass_override]]
first = 2
mass = 0.2
[[model.element_override]]
first = 3
c = 3.0e4
[partition]
subsystems = 3
[solver]
rtol = 1.0e-10
[simulation]
end_time = 1.0
output_interval = 1.0e-3
[cosim]
estimator = "none"
step_size = 1.0e-3
order = 2
)";

// Every digit of a double, for the command line.
std::string exact(double v) {
  std::ostringstream out;
  out.precision(17);
  out << v;
  return out.str();
}

// ρ of the first row of a scan's table (the line after the header).
double first_rho(const std::string& out) {
  std::istringstream in(out);
  std::string line;
  std::getline(in, line);
  std::getline(in, line);
  std::getline(in, line);
  std::istringstream row(line);
  double h = 0.0, w = 0.0, rho = 0.0;
  row >> h >> w >> rho;
  return rho;
}

// On a described system ρ predicts the run: 300 fixed steps at 0.9 times the band edge stay
// bounded, and above the edge the amplitude grows like ρ^N (over the 225 steps between the
// first and the last quarter, within 30 % in the exponent; about 1 measured), for explicit
// Jacobi, Gauss-Seidel and the implicit scheme alike; the run above the edge is warned about
// before it starts.
TEST_F(Stability, OnADescribedSystemRhoPredictsTheGrowthOfARun) {
  write_file("five.toml", kFiveMasses);
  for (const auto& [scheme, above] :
       {std::pair{"explicit", 1.03}, std::pair{"gauss-seidel", 1.03}, std::pair{"implicit", 1.3}}) {
    const std::string options = std::string(" --scheme ") + scheme;
    const Outcome tool = macrostep("stability five.toml --no-plot --points 40" + options);
    ASSERT_EQ(tool.status, 0) << tool.err;
    EXPECT_NE(tool.out.find("3 subsystems, 10 states, 2 coupling variables"), std::string::npos)
        << tool.out;
    const double edge = band_edge_h(tool.out);
    ASSERT_TRUE(std::isfinite(edge)) << tool.out;
    for (const double factor : {0.9, above}) {
      const double h = factor * edge;
      const std::string run_options =
          std::string(scheme) == "explicit" ? "" : options + " --estimator none";
      const Outcome run =
          macrostep("run five.toml --executor inprocess --output r.csv --step-size " + exact(h) +
                    " --stop-time " + exact(300 * h) + run_options);
      ASSERT_EQ(run.status, 0) << run.err;
      const auto [first, last] = amplitudes(read_file("r.csv"));
      // The pre-run check warns exactly when H lies outside the band.
      const bool warned = run.err.find("warning: the fixed step H") != std::string::npos;
      EXPECT_EQ(warned, factor > 1.0) << scheme << " at " << factor << ": " << run.err;
      if (factor < 1.0) {
        EXPECT_LT(last, 1.5 * first) << scheme << " at 0.9 times the band edge";
        continue;
      }
      const Outcome at = macrostep("stability five.toml --no-plot --points 2 --h-min " + exact(h) +
                                   " --h-max " + exact(h * 1.0001) + options);
      const double rho = first_rho(at.out);
      ASSERT_GT(rho, 1.01) << at.out << at.err;
      const double exponent = std::log(last / first) / (225.0 * std::log(rho));
      EXPECT_GT(exponent, 0.7) << scheme << ": rho " << rho << ", growth " << last / first;
      EXPECT_LT(exponent, 1.3) << scheme << ": rho " << rho << ", growth " << last / first;
    }
  }
}

// configs/two-mass-s3.toml (seed 000 App. C's symmetric model, F/F Gauss-Seidel as the seed
// defines it, κ = 0, ω̂ = 0.3): the tool's ρ for the file is > 1, the run is warned about and
// grows like ρ^N (between the first and the last quarter of its rows, within 20 % in the
// exponent), with the same bytes in processes (the outputs the end value extrapolates from live
// in the master); gauss_seidel = "converged" over it (--set) has ρ = 1 and stays bounded. The
// summary and the JSON name the end value; --scheme explicit over the file refuses the key.
TEST_F(Stability, SequentialGaussSeidelRunGrowsAsTheToolSays) {
  const std::string file = std::string(MACROSTEP_SOURCE_DIR) + "/configs/two-mass-s3.toml";
  const std::string at = " --no-plot --points 2 --omega-min 0.3 --omega-max 0.31";
  const Outcome tool = macrostep("stability " + file + at);
  ASSERT_EQ(tool.status, 0) << tool.err;
  EXPECT_NE(tool.out.find("ff gauss-seidel (sequential), lagrange (order 0)"), std::string::npos)
      << tool.out;
  const double rho = first_rho(tool.out);
  ASSERT_GT(rho, 1.01) << tool.out;
  const Outcome in = macrostep("run " + file + " --output in.csv");
  const Outcome pr = macrostep("run " + file + " --executor processes --output pr.csv");
  ASSERT_EQ(in.status, 0) << in.err;
  ASSERT_EQ(pr.status, 0) << pr.err;
  EXPECT_EQ(read_file("in.csv"), read_file("pr.csv"));
  EXPECT_NE(in.err.find("warning: the fixed step H"), std::string::npos) << in.err;
  EXPECT_NE(in.out.find("sequential end values"), std::string::npos) << in.out;
  EXPECT_NE(read_file("in.json").find("\"gauss_seidel\": \"sequential\""), std::string::npos);
  const std::string text = read_file("in.csv");
  const auto rows = static_cast<double>(std::count(text.begin(), text.end(), '\n') - 1);
  const auto [first, last] = amplitudes(text);
  const double exponent = std::log(last / first) / ((rows - rows / 4) * std::log(rho));
  EXPECT_GT(exponent, 0.8) << "rho " << rho << ", growth " << last / first;
  EXPECT_LT(exponent, 1.2) << "rho " << rho << ", growth " << last / first;

  const std::string converged = " --set cosim.gauss_seidel=converged";
  const Outcome tool_c = macrostep("stability " + file + at + converged);
  ASSERT_EQ(tool_c.status, 0) << tool_c.err;
  EXPECT_LE(first_rho(tool_c.out), 1.0 + 1e-8) << tool_c.out;
  const Outcome conv = macrostep("run " + file + converged + " --output conv.csv");
  ASSERT_EQ(conv.status, 0) << conv.err;
  const auto [conv_first, conv_last] = amplitudes(read_file("conv.csv"));
  EXPECT_LT(conv_last, 1.5 * conv_first);
  EXPECT_NE(read_file("conv.json").find("\"gauss_seidel\": \"converged\""), std::string::npos);

  const Outcome refused = macrostep("run " + file + " --scheme explicit");
  EXPECT_EQ(refused.status, 2);
  EXPECT_NE(refused.err.find("cosim.gauss_seidel applies only to the gauss-seidel scheme"),
            std::string::npos)
      << refused.err;
}

TEST_F(Stability, TheToolAgreesWithACoSimulation) {
  expect_tool_agrees(kTwoMass, 100.0);
}

TEST_F(Stability, TheBandEdgeNotTheLargestStableHIsWhatARunCanUse) {
  expect_tool_agrees(kGapped, 10.0);
  const Outcome tool = macrostep("stability two.toml --no-plot --points 60");
  EXPECT_NEAR(band_edge_h(tool.out), 0.198, 0.002) << tool.out;
  EXPECT_GT(largest_stable_h(tool.out), 1.0) << tool.out;
  EXPECT_NE(tool.out.find("warning: the stable set has gaps"), std::string::npos) << tool.out;
}

// A DC motor whose speed a PID loop drives away (the linearised loop's largest real eigenvalue
// is +1.6 /s): every correct run grows by e^{1.6 H} per step. The fixed-step run's warning about
// the stable band speaks of the coupling's growth only, so a small H on this plant gets none; an
// H beyond the coupling's band still gets it.
constexpr const char* kUnstablePlant =
    R"(description = "linear dc motor + shaft + two-inertia load, constant 12 V"
[[subsystem]]
name = "pi"
model = "pid"
kp = 1.5
ki = 4.0
kd = 0.05
derivative_filter_time = 0.01
output_lag = 0.005
setpoint = 10.0
integral0 = 2.0
derivative_filter0 = 3.0
command0 = 1.0
[[subsystem]]
name = "motor"
model = "dc_motor"
resistance = 0.5
inductance = 2.0e-3
torque_constant = 0.5
inertia = 0.02
damping = 1.0e-3
gear_ratio = 5.0
current0 = 1.0
speed0 = 0.5
angle0 = 0.1
[[subsystem]]
name = "load"
model = "drive_train"
inertia = [0.02, 0.5]
shaft = [{c = 1.0e3, d = 0.2}]
bearing_damping = [0.05, 0.1]
load = [{inertia = 2, constant = -2.0}]
angle0 = [0.0, 0.01]
speed0 = [0.3, 0.0]
right_coupled = false
[[connection]]
name = "shaft"
law = "rotational_spring_damper"
from = ["motor.phi", "motor.omega", "load.phi_1", "load.omega_1"]
to = ["motor.tau_right", "load.tau_left"]
c = 500.0
d = 0.5
[[connection]]
name = "voltage"
law = "signal"
from = "pi.command"
to = "motor.voltage"
gain = 2.0
offset = 1.0
[[connection]]
name = "speed"
law = "signal"
from = "load.omega_2"
to = "pi.measured"
[solver]
rtol = 1e-10
atol_pos = 1e-13
atol_vel = 1e-10
[simulation]
end_time = 0.5
output_interval = 1e-3
[cosim]
estimator = "none"
step_size = 1.0e-4
order = 2
)";

TEST_F(Stability, AGrowingPlantIsNotTakenForAnUnstableCoupling) {
  write_file("plant.toml", kUnstablePlant);
  const Outcome small = macrostep(
      "run plant.toml --executor inprocess --step-size 1e-4 --stop-time 0.01 --output s.csv");
  ASSERT_EQ(small.status, 0) << small.err;
  EXPECT_EQ(small.err.find("outside the stable band"), std::string::npos) << small.err;
  const Outcome large = macrostep(
      "run plant.toml --executor inprocess --step-size 1e-2 --stop-time 0.1 --output l.csv");
  EXPECT_NE(large.err.find("outside the stable band"), std::string::npos) << large.err;
  EXPECT_NE(large.err.find("above the system's own growth of"), std::string::npos) << large.err;
  // The stability command counts the same way: a band from small H, the growth named.
  const Outcome scan = macrostep("stability plant.toml --no-plot --h-min 1e-6 --h-max 1e-1");
  ASSERT_EQ(scan.status, 0) << scan.err;
  EXPECT_NE(scan.out.find("the system grows by itself"), std::string::npos) << scan.out;
  EXPECT_NE(scan.out.find("stable band from the smallest H: up to"), std::string::npos) << scan.out;
}

}  // namespace
}  // namespace macrostep::testing

// FMI 3 array variables (subsystems/fmu): a state-space block written as tools export it
// (fmus/state_space.c: arrays dimensioned by a structural parameter and by literals, array start
// values, an array input, output and state) loaded element by element and checked against its
// equations, every refusal about arrays, and the block as one mass of the two-mass oscillator in
// co-simulations against the scalar oscillator FMU, with both executors and the implicit scheme.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "../support/read_file.hpp"
#include "fmu_test_support.hpp"
#include "macrostep/fmu/fmu.hpp"

namespace macrostep {
namespace {

using macrostep::testing::read_file;
using namespace fmu_testing;

namespace fs = std::filesystem;

TEST(FmuArrays, ElementsAreStatesInputsAndOutputsWithTheirEquations) {
  const auto fmu = load("state_space", R"({"A": [[0, 1], [-4, -0.5]], "B": [[0], [2]],
                                          "C": [1, 0, 0.5, 1], "x": [1, -2]})");
  ASSERT_EQ(fmu->state_size(), 2u);
  EXPECT_EQ(fmu->state_name(0), "x[1]");
  EXPECT_EQ(fmu->state_name(1), "x[2]");
  ASSERT_EQ(fmu->input_size(), 1u);
  EXPECT_EQ(fmu->input_name(0), "u[1]");
  ASSERT_EQ(fmu->output_size(), 2u);
  EXPECT_EQ(fmu->output_name(1), "y[2]");
  EXPECT_EQ(fmu->output_unit(1), "m");
  // Units and descriptions of the variables, element by element.
  EXPECT_EQ(fmu->output_description(1), "output y = C x + D u");
  EXPECT_EQ(fmu->state_unit(1), "m");
  EXPECT_EQ(fmu->state_description(0), "state vector");
  EXPECT_TRUE(fmu->has_feedthrough());  // y depends on u (through D), as the FMU declares
  const std::vector<double> u = {0.25};
  std::vector<double> z(2), zp(2), y(2);
  fmu->initial_state(u, z, zp);
  EXPECT_EQ(z, (std::vector<double>{1.0, -2.0}));
  // x' = A x + B u, y = C x + D u (D = 0).
  EXPECT_EQ(zp[0], -2.0);
  EXPECT_EQ(zp[1], -4.0 * 1.0 - 0.5 * -2.0 + 2.0 * 0.25);
  fmu->outputs(0.0, z, u, y);
  EXPECT_EQ(y[0], 1.0);
  EXPECT_EQ(y[1], 0.5 * 1.0 - 2.0);
  // The Jacobian cj·I − A from the FMU's directional derivatives, a column per state element.
  const auto& pattern = fmu->jacobian_pattern();
  std::vector<double> values(pattern.row_index.size());
  fmu->jacobian(0.0, z, zp, u, 10.0, values);
  const double a[2][2] = {{0.0, 1.0}, {-4.0, -0.5}};
  for (std::size_t j = 0; j < 2; ++j) {
    for (auto k = pattern.column_start[j]; k < pattern.column_start[j + 1]; ++k) {
      const auto i = static_cast<std::size_t>(pattern.row_index[static_cast<std::size_t>(k)]);
      EXPECT_EQ(values[static_cast<std::size_t>(k)], (i == j ? 10.0 : 0.0) - a[i][j])
          << i << "," << j;
    }
  }
}

TEST(FmuArrays, OneElementCanBeCoupledAndTheOthersKeepTheirStart) {
  const auto fmu = load("state_space", R"({"D": [0, 1], "x": [3, 4]})", {"u[1]"}, {"y[2]"});
  ASSERT_EQ(fmu->output_size(), 1u);
  EXPECT_EQ(fmu->output_name(0), "y[2]");
  const std::vector<double> u = {0.5};
  std::vector<double> z(2), zp(2), y(1);
  fmu->initial_state(u, z, zp);
  fmu->outputs(0.0, z, u, y);
  EXPECT_EQ(y[0], 4.0 + 0.5);  // x_2 + D_2 u
  // The whole array by its name: every element.
  const auto whole = load("state_space", "{}", {"u"}, {"y"});
  EXPECT_EQ(whole->output_size(), 2u);
  EXPECT_FALSE(load("state_space_proper")->has_feedthrough());
}

TEST(FmuArrays, EveryBadArrayUseHasItsOwnMessage) {
  const std::string path = fmu_file("state_space");
  struct Case {
    fmu::FmuDescription d;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {{path, R"({"A": [0, 1, 2]})", {}, {}, ""},
       "parameters: \"A\" has 4 elements (2 x 2), the value gives 3"},
      {{path, R"({"A": 1.0})", {}, {}, ""}, "parameters: \"A\" has 4 elements (2 x 2)"},
      {{path, R"({"B": [[0], ["one"]]})", {}, {}, ""},
       "parameters: \"B\" must be an array of numbers or booleans"},
      {{path, R"({"n": 3})", {}, {}, ""},
       "parameters: \"n\" is not a variable whose start value can be set"},
      {{path, "{}", {}, {"y[3]"}, ""}, "outputs: \"y[3]\" is not a Real, Integer or Boolean"},
      {{path, "{}", {}, {"y[1,1]"}, ""}, "outputs: \"y[1,1]\" is not a Real"},
      {{path, "{}", {"u[0]"}, {}, ""}, "inputs: \"u[0]\" is not a Real"},
  };
  for (const Case& c : cases) {
    const std::string message = refusal(c.d);
    EXPECT_NE(message.find(c.expected), std::string::npos) << c.d.parameters << ": " << message;
  }
  // A model description whose array sizes do not fit: named, not left to the FMU's log.
  const fs::path dir = temp_dir("arrays");
  const std::string xml = read_file(fs::path(FMU_XML_DIR) / "state_space.xml");
  const std::string so = "binaries/x86_64-linux/state_space.so";
  const std::string binary = read_file(fs::path(FMU_DIR) / ("state_space.stage/" + so));
  const auto with = [&](const std::string& name, const std::string& from, const std::string& to) {
    std::string text = xml;
    text.replace(text.find(from), from.size(), to);
    return make_fmu(dir, name, {{"modelDescription.xml", text}, {so, binary}});
  };
  const std::vector<std::pair<std::string, std::string>> bad = {
      {with("starts", R"(start="0 1 -1 0")", R"(start="0 1 -1")"),
       "\"A\" has 4 elements and 3 start values"},
      {with("size", R"(start="2"/>)", R"(/>)"), "its size, the variable \"n\", has no start value"},
      {with("derivative", "derivative=\"8\">\n      <Dimension valueReference=\"1\"/>",
            "derivative=\"8\">\n      <Dimension start=\"3\"/>"),
       "the derivative \"der(x)\" has 3 elements, its state \"x\" 2"},
  };
  for (const auto& [fmu, expected] : bad) {
    const std::string message = refusal({fmu, "{}", {}, {}, ""});
    EXPECT_NE(message.find(expected), std::string::npos) << fmu << ": " << message;
  }
  fs::remove_all(dir);
}

// The first mass of the two-mass oscillator as a state-space block (A = [0 1; -c/m -d/m],
// B = [0; 1/m], C = I, exported with D = 0 and so without feed-through), the second the scalar
// oscillator FMU: the same system as the pair of scalar FMUs, with other floating-point
// operations.
fs::path write_state_space_pair(const fs::path& dir, const std::string& cosim) {
  const fs::path scalar = write_fmu_pair(dir, cosim);
  fs::copy_file(fmu_file("state_space_proper"), dir / "state_space.fmu",
                fs::copy_options::skip_existing);
  std::string text = read_file(scalar);
  const auto replace = [&](const std::string& from, const std::string& to) {
    const auto at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) text.replace(at, from.size(), to);
  };
  replace("path = \"oscillator.fmu\"\nparameters = {m = 1.0, c = 100.0, d = 0.1, x = 0.01}",
          "path = \"state_space.fmu\"\n"
          "parameters = {A = [[0.0, 1.0], [-100.0, -0.1]], B = [[0.0], [1.0]], x = [0.01, 0.0]}");
  replace("\"m1.x\", \"m1.v\"", "\"m1.y[1]\", \"m1.y[2]\"");
  replace("\"m1.force\"", "\"m1.u[1]\"");
  const fs::path path = dir / "state_space.toml";
  std::ofstream(path) << text;
  return path;
}

TEST(FmuArrays, AStateSpaceMassIsTheScalarOscillatorInBothExecutorsAndSchemes) {
  const fs::path dir = temp_dir("state-space-pair");
  const std::string fixed = "[cosim]\nestimator = \"none\"\nstep_size = 1e-3\norder = 2\n";
  const fs::path config = write_state_space_pair(dir, fixed);
  for (const char* executor : {"inprocess", "processes"}) {
    const AppRun r = macrostep("run " + config.string() + " --executor " + executor + " --output " +
                               (dir / (std::string(executor) + ".csv")).string());
    ASSERT_EQ(r.status, 0) << r.output;
  }
  std::string header;
  read_csv(dir / "inprocess.csv", &header);
  EXPECT_EQ(header, "time,m1.y[1],m1.y[2],m2.x,m2.v,coupling");
  EXPECT_TRUE(read_file(dir / "inprocess.csv") == read_file(dir / "processes.csv"))
      << "the executors' CSV files differ";
  const AppRun scalar = macrostep("run " + (dir / "fmus.toml").string() + " --output " +
                                  (dir / "scalar.csv").string());
  ASSERT_EQ(scalar.status, 0) << scalar.output;
  const double explicit_difference =
      largest_relative_difference(dir / "inprocess.csv", dir / "scalar.csv");
  std::cout << "explicit, H = 1e-3: state space vs scalar FMU " << explicit_difference << "\n";
  EXPECT_LT(explicit_difference, 1e-6);
  // Implicit: perturbed runs through the array input.
  const std::string implicit =
      "[cosim]\nscheme = \"implicit\"\nestimator = \"none\"\nstep_size = 1e-2\norder = 2\n";
  write_state_space_pair(dir, implicit);
  for (const char* name : {"state_space", "fmus"}) {
    const AppRun r =
        macrostep("run " + (dir / (std::string(name) + ".toml")).string() + " --output " +
                  (dir / (std::string(name) + "-implicit.csv")).string());
    ASSERT_EQ(r.status, 0) << r.output;
  }
  const double implicit_difference =
      largest_relative_difference(dir / "state_space-implicit.csv", dir / "fmus-implicit.csv");
  std::cout << "implicit, H = 1e-2: state space vs scalar FMU " << implicit_difference << "\n";
  EXPECT_LT(implicit_difference, 1e-5);  // the corrector's tolerance, as FMUs vs built-in
  EXPECT_EQ(statistics(dir / "state_space-implicit.csv")["corrector"]["passes"],
            statistics(dir / "fmus-implicit.csv")["corrector"]["passes"]);
  fs::remove_all(dir);
}

// An oscillator cut into two first-order blocks, as a signal-flow model exports them: x' = v and
// v' = -4 x, each a state-space FMU whose one coupled state is of no mechanical role. The default
// estimator watches such states (as it watches velocities); it watched nothing before, took
// steps of a second and ended at x = 5.1 instead of cos 10. Closed form x = cos 2t, v = -2 sin 2t.
TEST(FmuArrays, FirstOrderBlocksOfAnOscillatorFollowItsClosedFormAtTheDefaultEstimator) {
  const fs::path dir = temp_dir("first-order-pair");
  fs::copy_file(fmu_file("state_space_proper"), dir / "state_space.fmu");
  // State 1 integrates the input; state 2 decays on its own (A = [0 0; 0 -1]).
  const std::string block =
      "path = \"state_space.fmu\"\ninputs = [\"u[1]\"]\n"
      "outputs = [\"y[1]\"]\n";
  std::ofstream(dir / "pair.toml")
      << "[[subsystem]]\nname = \"pos\"\nmodel = \"fmu\"\n"
      << block
      << "parameters = {A = [[0.0, 0.0], [0.0, -1.0]], B = [[1.0], [0.0]], x = [1.0, 0.0]}\n"
      << "[[subsystem]]\nname = \"vel\"\nmodel = \"fmu\"\n"
      << block
      << "parameters = {A = [[0.0, 0.0], [0.0, -1.0]], B = [[1.0], [0.0]], x = [0.0, 0.0]}\n"
      << "[[connection]]\nname = \"velocity\"\nlaw = \"signal\"\nfrom = [\"vel.y[1]\"]\n"
      << "to = [\"pos.u[1]\"]\n"
      << "[[connection]]\nname = \"acceleration\"\nlaw = \"signal\"\n"
      << "from = [\"pos.y[1]\"]\nto = [\"vel.u[1]\"]\ngain = -4.0\n"
      << "[simulation]\nend_time = 5.0\noutput_interval = 0.01\n";
  const AppRun r = macrostep("run " + (dir / "pair.toml").string() + " --executor inprocess " +
                             "--output " + (dir / "pair.csv").string());
  ASSERT_EQ(r.status, 0) << r.output;
  std::string header;
  const auto rows = read_csv(dir / "pair.csv", &header);
  ASSERT_EQ(header.rfind("time,pos.y[1],vel.y[1]", 0), 0U) << header;
  double largest = 0.0;
  for (const auto& row : rows) {
    largest = std::max({largest, std::abs(row[1] - std::cos(2.0 * row[0])),
                        std::abs(row[2] + 2.0 * std::sin(2.0 * row[0]))});
  }
  std::cout << "first-order blocks, default estimator: largest error " << largest << " in "
            << statistics(dir / "pair.csv")["macro_steps"] << " steps\n";
  EXPECT_LT(largest, 1e-2);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace macrostep

// Result rows on the output grid ([output] rows = "grid", docs/reference/commands.md "Result
// rows") end to end: every row at k * output_interval, the same bytes in-process and in
// processes and after a checkpoint and resume, the co-simulation's own error against a reference
// on the same grid (no interpolation between the reference's rows), macro points on the grid
// written as themselves, and the refusals.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "binary_fixture.hpp"

namespace macrostep::testing {
namespace {

class GridRows : public BinaryTest {
 protected:
  // configs/drivetrain.toml with [output] rows and the run's own output interval.
  std::string drivetrain(const std::string& rows, double interval) const {
    std::ifstream in(std::string(MACROSTEP_SOURCE_DIR) + "/configs/drivetrain.toml");
    std::string text(std::istreambuf_iterator<char>(in), {});
    const std::string from = "output_interval = 1e-3";
    const auto at = text.find(from);
    EXPECT_NE(at, std::string::npos);
    std::ostringstream interval_text;
    interval_text << "output_interval = " << interval;
    text.replace(at, from.size(), interval_text.str());
    return text + "\n[output]\nrows = \"" + rows + "\"\n";
  }
  // The time column of a result CSV.
  std::vector<double> times(const std::string& csv) const {
    std::istringstream lines(read_file(csv));
    std::string line;
    std::getline(lines, line);
    std::vector<double> t;
    while (std::getline(lines, line)) t.push_back(std::stod(line.substr(0, line.find(','))));
    return t;
  }
};

TEST_F(GridRows, RowsAreOnTheGridInEveryExecutorAndMeasureTheRunItself) {
  write_file("grid.toml", drivetrain("grid", 2e-3));
  write_file("macro.toml", drivetrain("macro", 2e-3));
  for (const char* executor : {"inprocess", "processes"}) {
    const Outcome o = macrostep(std::string("run grid.toml --executor ") + executor + " --output " +
                                executor + ".csv");
    ASSERT_EQ(o.status, 0) << o.err;
  }
  EXPECT_TRUE(read_file("inprocess.csv") == read_file("processes.csv"))
      << "the executors' grid rows differ";
  const std::vector<double> t = times("inprocess.csv");
  ASSERT_EQ(t.size(), 751u);  // 0, 2e-3, ..., 1.5 s
  for (std::size_t k = 0; k < t.size(); ++k) {
    ASSERT_EQ(t[k], static_cast<double>(k) * 2e-3) << "row " << k;
  }
  // The reference on the same grid: compared without interpolation, the co-simulation's error
  // alone, as the macro rows against a reference written at their own times.
  ASSERT_EQ(macrostep("reference grid.toml --output ref.csv").status, 0);
  const Outcome grid = macrostep("compare inprocess.csv ref.csv");
  ASSERT_EQ(grid.status, 0) << grid.err;
  EXPECT_EQ(grid.out.find("interpolated"), std::string::npos) << grid.out;
  ASSERT_EQ(macrostep("run macro.toml --executor inprocess --output macro.csv").status, 0);
  ASSERT_EQ(macrostep("reference macro.toml --at macro.csv --output at.csv").status, 0);
  const Outcome macro = macrostep("compare macro.csv at.csv");
  const double grid_error = final_nrmse(grid.out), macro_error = final_nrmse(macro.out);
  std::cout << "NRMSE: grid rows " << grid_error << ", macro rows against reference --at "
            << macro_error << "\n";
  EXPECT_GT(grid_error, 0.0);
  EXPECT_LT(grid_error, 1.5 * macro_error);
  EXPECT_GT(grid_error, macro_error / 1.5);
}

// With a fixed step of one output interval the macro points after the start-up steps are on the
// grid: there the grid rows are the macro rows, value for value (at the times k·Δ instead of the
// sums of the steps).
TEST_F(GridRows, MacroPointsOnTheGridAreWrittenAsThemselves) {
  const std::string fixed = " --estimator none --step-size 2e-3 --order 1 --executor inprocess";
  write_file("grid.toml", drivetrain("grid", 2e-3));
  write_file("macro.toml", drivetrain("macro", 2e-3));
  Outcome o = macrostep("run grid.toml --output grid.csv" + fixed);
  ASSERT_EQ(o.status, 0) << o.err;
  o = macrostep("run macro.toml --output macro.csv" + fixed);
  ASSERT_EQ(o.status, 0) << o.err;
  // The macro rows on the grid by their index k.
  std::map<long, std::string> macro_rows;
  std::istringstream b(read_file("macro.csv"));
  std::string line;
  std::getline(b, line);
  while (std::getline(b, line)) {
    const double k = std::stod(line.substr(0, line.find(','))) / 2e-3;
    if (std::abs(k - std::round(k)) < 1e-6)
      macro_rows[std::lround(k)] = line.substr(line.find(','));
  }
  std::istringstream a(read_file("grid.csv"));
  std::getline(a, line);
  std::size_t same = 0;
  for (long k = 0; std::getline(a, line); ++k) {
    const auto m = macro_rows.find(k);
    if (m == macro_rows.end()) continue;
    EXPECT_EQ(line.substr(line.find(',')), m->second) << "row at k = " << k;
    ++same;
  }
  EXPECT_GT(same, 700u);
}

TEST_F(GridRows, ACheckpointedGridRunResumesToTheSameBytes) {
  write_file("grid.toml", drivetrain("grid", 2e-3));
  ASSERT_EQ(macrostep("run grid.toml --executor inprocess --output whole.csv").status, 0);
  const Outcome first = macrostep(
      "run grid.toml --executor processes --output cut.csv --checkpoint-every 40steps "
      "--checkpoint cut.ckpt");
  ASSERT_EQ(first.status, 0) << first.err;
  const Outcome rest = macrostep("resume cut.ckpt");
  ASSERT_EQ(rest.status, 0) << rest.err;
  EXPECT_TRUE(read_file("whole.csv") == read_file("cut.csv")) << "the resumed run differs";
}

// The chain of the app tests, explicit and implicit: grid rows in both executors to the byte,
// at the grid's times.
TEST_F(GridRows, AChainsGridRowsAreTheSameInBothExecutorsAndSchemes) {
  write_file("chain.toml", kTestChainModel +
                               "[simulation]\nend_time = 2e-3\noutput_interval = 1e-5\n"
                               "[output]\nrows = \"grid\"\n");
  for (const char* scheme : {"explicit", "implicit"}) {
    for (const char* executor : {"inprocess", "processes"}) {
      const Outcome o = macrostep(std::string("run chain.toml --scheme ") + scheme +
                                  " --executor " + executor + " --output " + executor + ".csv");
      ASSERT_EQ(o.status, 0) << o.err;
    }
    EXPECT_TRUE(read_file("inprocess.csv") == read_file("processes.csv"))
        << scheme << ": the executors' grid rows differ";
    const std::vector<double> t = times("inprocess.csv");
    ASSERT_EQ(t.size(), 201u) << scheme;
    for (std::size_t k = 0; k < t.size(); ++k) {
      EXPECT_EQ(t[k], static_cast<double>(k) * 1e-5) << scheme << " row " << k;
    }
  }
}

TEST_F(GridRows, WhatGridRowsCannotDoIsRefused) {
  write_file("grid.toml", drivetrain("grid", 2e-3));
  Outcome o = macrostep("run grid.toml --all-states");
  EXPECT_EQ(o.status, 2);
  EXPECT_NE(o.err.find("grid.toml:69: rows = \"grid\" writes the outputs and coupling variables"),
            std::string::npos)
      << o.err;
  o = macrostep("run grid.toml --estimator none --step-size 2 --order 0");
  EXPECT_EQ(o.status, 2);
  EXPECT_NE(o.err.find("takes at most 512 output intervals per macro step"), std::string::npos)
      << o.err;
  write_file("bad.toml", drivetrain("every", 2e-3));
  o = macrostep("run bad.toml");
  EXPECT_EQ(o.status, 2);
  EXPECT_NE(o.err.find("output.rows"), std::string::npos) << o.err;
}

// A stiff start takes macro steps far shorter than the grid's tolerance (1e-9 of the interval):
// on S-5.5's corner the first explicit steps are 1e-16 s long, so dozens of macro points lie
// within 1e-13 s of t = 0. Each grid time is one row, the first point on it, and the rows stay
// increasing, so that `compare` reads them (it refused "not strictly increasing at row 2").
TEST_F(GridRows, MacroStepsShorterThanTheGridsToleranceGiveOneRowPerGridTime) {
  const std::string run = "run " MACROSTEP_SOURCE_DIR
                          "/configs/s-5.5.toml --scheme auto --stop-time 1e-3 --set "
                          "output.rows=grid --executor inprocess";
  Outcome o = macrostep(run + " --output stiff.csv");
  ASSERT_EQ(o.status, 0) << o.err;
  const std::vector<double> t = times("stiff.csv");
  ASSERT_EQ(t.size(), 11u);  // 0, 1e-4, ..., 1e-3 s
  for (std::size_t k = 0; k < t.size(); ++k) {
    EXPECT_NEAR(t[k], static_cast<double>(k) * 1e-4, 1e-15) << "row " << k;
  }
  const auto meta = nlohmann::json::parse(read_file("stiff.json"));
  EXPECT_LT(meta.at("statistics").at("step_min").get<double>(), 1e-13)
      << "the run no longer takes steps within the grid's tolerance: the test tests nothing";
  ASSERT_EQ(macrostep("reference " MACROSTEP_SOURCE_DIR
                      "/configs/s-5.5.toml --at stiff.csv --output stiff.ref.csv")
                .status,
            0);
  o = macrostep("compare stiff.csv stiff.ref.csv");
  EXPECT_EQ(o.status, 0) << o.err;
}

// Without [output] rows: a described system's rows are on the grid, a chain's at the macro
// points, and so are those of a system with feed-through or a joint (their values inside a step
// are not the solvers' own) and of an --all-states run; the JSON says which.
TEST_F(GridRows, TheDefaultIsTheGridWhereItHoldsTheSolversOwnValues) {
  const auto row_times = [&](const std::string& config, const std::string& extra) {
    const Outcome o = macrostep("run " + std::string(MACROSTEP_SOURCE_DIR) + "/configs/" + config +
                                " --stop-time 2e-3 --executor inprocess --output r.csv" + extra);
    EXPECT_EQ(o.status, 0) << config << ": " << o.err;
    const auto meta = nlohmann::json::parse(read_file("r.json")).at("output");
    return meta.at("row_times").get<std::string>() +
           (meta.at("output_interval").is_null() ? "" : " interval");
  };
  EXPECT_EQ(row_times("drivetrain.toml", ""), "grid interval");
  EXPECT_EQ(row_times("sources.toml", ""), "grid interval");
  EXPECT_EQ(row_times("k-4.3.toml", ""), "macro");           // a [model] chain
  EXPECT_EQ(row_times("two-mass-fd.toml", ""), "macro");     // feed-through
  EXPECT_EQ(row_times("two-mass-joint.toml", ""), "macro");  // a joint
  EXPECT_EQ(row_times("drivetrain.toml", " --all-states"), "macro");
  EXPECT_EQ(row_times("drivetrain.toml", " --set output.rows=macro"), "macro");
  EXPECT_EQ(row_times("k-4.3.toml", " --set output.rows=grid"), "grid interval");
}

}  // namespace
}  // namespace macrostep::testing

// `macrostep sweep` end to end (docs/reference/commands.md): every combination of the --grid
// values is one case, and a case's result is the bytes of `macrostep run` with the same edits;
// the summary lists values, status, statistics and the error against a reference; bad grids
// and refused configurations exit 2 before anything runs; a failed case makes the sweep exit 1;
// SIGTERM stops the running cases with their files and lists the ones not run.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "binary_fixture.hpp"

namespace {

namespace fs = std::filesystem;
using macrostep::testing::final_nrmse;
using macrostep::testing::Outcome;

// The app tests' chain; `end` is its end time and `cosim` its [cosim] table.
std::string sweep_chain(const std::string& end, const std::string& cosim) {
  return macrostep::testing::kTestChainModel + "[simulation]\nend_time = " + end +
         "\noutput_interval = 2.0e-5\n[cosim]\nthreads = 1\n" + cosim;
}

class Sweep : public macrostep::testing::BinaryTest {
 protected:
  // The lines of a file, split at commas (the tests' fields hold no commas).
  std::vector<std::vector<std::string>> rows(const std::string& name) const {
    std::vector<std::vector<std::string>> out;
    std::istringstream in(read_file(name));
    std::string line;
    while (std::getline(in, line)) {
      std::vector<std::string> fields;
      std::istringstream cells(line);
      std::string cell;
      while (std::getline(cells, cell, ',')) fields.push_back(cell);
      if (!line.empty() && line.back() == ',') fields.emplace_back();
      out.push_back(fields);
    }
    return out;
  }
};

TEST_F(Sweep, EveryCaseIsTheRunOfItsEditsAndTheSummaryHoldsIt) {
  write_file("c.toml", sweep_chain("0.02", "estimator = \"exMD\"\nrtol = 1.0e-4\n"));
  ASSERT_EQ(macrostep("reference c.toml").status, 0);
  const Outcome o = macrostep(
      "sweep c.toml --grid cosim.rtol=1e-4,1e-5 --grid 'model.element.d=[10.0, 20.0]' "
      "--reference c.reference.csv --jobs 2 --dir sw");
  ASSERT_EQ(o.status, 0) << o.err;
  const auto table = rows("sw/summary.csv");
  ASSERT_EQ(table.size(), 5U);
  EXPECT_EQ(table[0], (std::vector<std::string>{
                          "case", "cosim.rtol", "model.element.d", "status", "exit_status",
                          "wall_s", "macro_steps", "rejected", "micro_steps", "mean_step", "nrmse",
                          "largest_nrmse", "largest_nrmse_variable", "result", "note"}));
  // The first axis varies slowest.
  const std::vector<std::vector<std::string>> values = {
      {"1e-4", "10.0"}, {"1e-4", "20.0"}, {"1e-5", "10.0"}, {"1e-5", "20.0"}};
  for (std::size_t i = 0; i < values.size(); ++i) {
    SCOPED_TRACE(i);
    const auto& row = table[i + 1];
    ASSERT_EQ(row.size(), table[0].size());
    const std::string name = "case-00" + std::to_string(i + 1);
    EXPECT_EQ(row[0], name);
    EXPECT_EQ((std::vector<std::string>{row[1], row[2]}), values[i]);
    EXPECT_EQ(row[3], "completed");
    EXPECT_EQ(row[4], "0");
    EXPECT_GT(std::stod(row[5]), 0.0);
    const auto meta = nlohmann::json::parse(read_file("sw/" + name + ".json"));
    EXPECT_EQ(std::stol(row[6]), meta.at("statistics").at("macro_steps").get<long>());
    EXPECT_EQ(std::stol(row[7]), meta.at("statistics").at("rejected").get<long>());
    EXPECT_EQ(row[13], name + ".csv");
    // The error is `compare`'s against the same reference.
    const Outcome compare = macrostep("compare sw/" + name + ".csv c.reference.csv");
    ASSERT_EQ(compare.status, 0) << compare.err;
    EXPECT_NEAR(std::stod(row[10]), final_nrmse(compare.out), 1e-6 * final_nrmse(compare.out));
  }
  // A case is the run of its edits, byte for byte.
  ASSERT_EQ(macrostep("run c.toml --set cosim.rtol=1e-5 --set model.element.d=10.0 --executor "
                      "inprocess --output r.csv")
                .status,
            0);
  EXPECT_TRUE(read_file("r.csv") == read_file("sw/case-003.csv"));
  EXPECT_FALSE(read_file("sw/case-003.csv") == read_file("sw/case-004.csv"));
  // A progress line per case, and the table on stdout.
  for (const char* line : {"sweep: [1/4] ", "sweep: [4/4] "}) {
    EXPECT_NE(o.err.find(line), std::string::npos) << o.err;
  }
  EXPECT_NE(o.out.find("case-004  1e-5"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("summary: sw/summary.csv\n"), std::string::npos) << o.out;

  // --weights time: each case's NRMSE is `compare --weights time`'s against the same reference.
  const Outcome timed = macrostep(
      "sweep c.toml --grid cosim.rtol=1e-4,1e-5 --reference c.reference.csv --weights time "
      "--jobs 2 --dir swt");
  ASSERT_EQ(timed.status, 0) << timed.err;
  const auto weighted = rows("swt/summary.csv");
  ASSERT_EQ(weighted.size(), 3U);
  ASSERT_EQ(weighted[0][9], "nrmse");
  for (std::size_t i = 1; i < weighted.size(); ++i) {
    SCOPED_TRACE(i);
    const std::string csv = "swt/case-00" + std::to_string(i) + ".csv";
    const double by_time =
        final_nrmse(macrostep("compare " + csv + " c.reference.csv --weights time").out);
    const double alike = final_nrmse(macrostep("compare " + csv + " c.reference.csv").out);
    EXPECT_NEAR(std::stod(weighted[i][9]), by_time, 1e-6 * by_time);
    EXPECT_GT(std::abs(by_time - alike), 1e-3 * alike);
  }
}

TEST_F(Sweep, BadGridsAndRefusedCasesExitTwoBeforeAnythingRuns) {
  write_file("c.toml", sweep_chain("0.02", "estimator = \"exMD\"\nrtol = 1.0e-4\n"));
  const auto refused = [this](const std::string& args, const std::string& message) {
    const Outcome o = macrostep("sweep c.toml --dir sw " + args);
    EXPECT_EQ(o.status, 2) << args;
    EXPECT_EQ(o.err.substr(0, message.size()), message) << args << ": " << o.err;
    EXPECT_FALSE(fs::exists(path("sw"))) << args;
  };
  refused("--grid cosim.rtol", "macrostep: --grid cosim.rtol: must be KEY=VALUES");
  refused("--grid cosim.rtol=1e-4,,1e-5",
          "macrostep: --grid cosim.rtol=1e-4,,1e-5: an empty value");
  refused("--grid cosim.rtol=1e-4 --grid cosim.rtol=1e-5",
          "macrostep: --grid cosim.rtol: the key is given twice");
  refused(
      "--grid cosim.rtol=1e-4,2",
      "macrostep: case-002 (cosim.rtol=2): --set cosim.rtol=2: cosim.rtol: must be < 1 (got 2)\n");
  refused("--grid cosim.rtol=1e-4 --set cosim.rtl=1",
          "macrostep: case-001 (cosim.rtol=1e-4): --set cosim.rtl=1: cosim.rtl: unknown key");
  refused("--grid cosim.rtol=1e-4 --reference none.csv", "macrostep: --reference: none.csv");
  refused("--grid cosim.rtol=1e-4 --weights time", "macrostep: --weights requires --reference\n");
  refused("--grid cosim.rtol=1e-4 --reference none.csv --weights rows",
          "macrostep: --weights 'rows' is not a weighting of the rows; allowed: equal, time\n");
  refused("--grid cosim.rtol=1e-4 --jobs -1",
          "macrostep: --jobs: must be an integer >= 1 (got -1)");
  refused("--grid cosim.rtol=1e-4 --jobs 0", "macrostep: --jobs: must be an integer >= 1 (got 0)");
  EXPECT_EQ(macrostep("sweep c.toml --dir sw").status, 2);  // no --grid
}

// A rerun of the same sweep replaces its own files; a sweep of other cases does not fill a
// directory that holds another's (its cases would stay beside a summary without them).
TEST_F(Sweep, ADirectoryOfAnotherSweepIsRefusedAndKept) {
  write_file("c.toml", sweep_chain("0.002", "estimator = \"exMD\"\nrtol = 1.0e-4\n"));
  const std::string grid = "--grid cosim.rtol=1e-4,1e-5 --jobs 1 --dir sw";
  ASSERT_EQ(macrostep("sweep c.toml " + grid).status, 0);
  ASSERT_EQ(macrostep("sweep c.toml " + grid).status, 0);
  const std::string second = read_file("sw/case-002.csv");
  const Outcome other = macrostep("sweep c.toml --grid cosim.rtol=1e-3 --dir sw");
  EXPECT_EQ(other.status, 2);
  EXPECT_EQ(other.err.rfind("macrostep: --dir sw: holds the files of another sweep (its "
                            "summary.csv lists other cases)",
                            0),
            0U)
      << other.err;
  EXPECT_EQ(read_file("sw/case-002.csv"), second);
  EXPECT_EQ(rows("sw/summary.csv").size(), 3U);
  fs::create_directory(path("stray"));
  write_file("stray/notes.txt", "mine\n");
  EXPECT_EQ(macrostep("sweep c.toml --grid cosim.rtol=1e-3 --dir stray").status, 2);
  EXPECT_EQ(read_file("stray/notes.txt"), "mine\n");
}

TEST_F(Sweep, AFailedCaseIsListedAndTheSweepExitsOne) {
  // Explicit Jacobi diverges at H = 2e-3 s on this chain (sqrt(c/m) = 1e3 1/s).
  write_file("c.toml", sweep_chain("0.02", ""));
  const Outcome o = macrostep(
      "sweep c.toml --set cosim.estimator=none --grid cosim.step_size=1e-5,2e-3 --dir sw");
  EXPECT_EQ(o.status, 1) << o.err;
  const auto table = rows("sw/summary.csv");
  ASSERT_EQ(table.size(), 3U);
  EXPECT_EQ(table[1][2], "completed");
  EXPECT_EQ(table[2][2], "failed");
  EXPECT_EQ(table[2][3], "1");
  EXPECT_NE(read_file("sw/summary.csv").find("the co-simulation diverges"), std::string::npos);
}

TEST_F(Sweep, SigtermStopsTheRunningCasesAndListsTheRest) {
  // Cases of minutes, stopped after two seconds: two interrupted, one not run. (timeout
  // --foreground sends one SIGTERM; without it a second one reaches the sweep's process group,
  // and a second signal ends the sweep at once.)
  write_file("c.toml", sweep_chain("100.0", "estimator = \"exMD\"\nrtol = 1.0e-4\n"));
  const Outcome o = macrostep("sweep c.toml --grid cosim.rtol=1e-5,1e-6,1e-7 --jobs 2 --dir sw",
                              "timeout --foreground --preserve-status -s TERM 2");
  EXPECT_EQ(o.status, 143) << o.err;
  const auto table = rows("sw/summary.csv");
  ASSERT_EQ(table.size(), 4U);
  for (std::size_t i = 1; i <= 2; ++i) {
    EXPECT_EQ(table[i][2], "interrupted") << i;
    EXPECT_EQ(nlohmann::json::parse(read_file("sw/" + table[i][0] + ".json")).at("status"),
              "interrupted");
  }
  EXPECT_EQ(table[3][2], "not run");
  EXPECT_FALSE(fs::exists(path("sw/case-003.csv")));
}

}  // namespace

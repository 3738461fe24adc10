// `macrostep plot` end to end (runtime/app/plot_command.hpp, tools/plot_run.py):
// every configuration in configs/ gives its figures after a short run; the macro-step figure
// counts the same accepted and rejected attempts as the run's JSON (the steps file of
// /work/prompts/steps-format.md against the controller's statistics); a monolithic run gives
// the coupling figure only; bad input is one line and exit status 2.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "binary_fixture.hpp"

namespace macrostep::testing {
namespace {

namespace fs = std::filesystem;

class Plot : public BinaryTest {
 protected:
  void plot_every_configuration(const std::vector<fs::path>& all) const;
  // True if the file starts with the PNG signature.
  bool is_png(const std::string& name) const {
    std::ifstream in(path(name), std::ios::binary);
    char magic[8] = {};
    in.read(magic, 8);
    return in.gcount() == 8 && std::string(magic + 1, 3) == "PNG";
  }
};

// Models whose construction alone takes seconds to minutes (20 000 to 100 000 masses, dense
// LU of 500-mass subsystems): their scaled S- versions run in the test instead;
// DISABLED_LargeConfigurationsGiveTheirFigures runs them on request.
const std::vector<std::string> kLarge = {"k-4.5",       "k-4.5-contact", "k-5.4a-ns100", "k-5.7",
                                         "k-5.7-dense", "k-5.8",         "s-5.7-dense"};
// The explicit scheme at the corner of the K-5.5 sweep crawls at its stability limit (H about
// 2e-12 s); with a stop time of 1e-3 s the stability-limit guard ends it after 1000 macro steps,
// exit 1: the figures of a failed run are drawn all the same.
const std::vector<std::string> kStabilityLimited = {"k-5.5", "s-5.5"};

bool listed(const std::vector<std::string>& names, const std::string& stem) {
  return std::find(names.begin(), names.end(), stem) != names.end();
}

std::vector<fs::path> configs(bool large) {
  std::vector<fs::path> found;
  for (const auto& entry : fs::directory_iterator(MACROSTEP_SOURCE_DIR "/configs")) {
    const std::string stem = entry.path().stem().string();
    if (entry.path().extension() == ".toml" && listed(kLarge, stem) == large) {
      found.push_back(entry.path());
    }
  }
  std::sort(found.begin(), found.end());
  return found;
}

// The counts the plot prints for STEM's macro-step figure; false if it printed none.
bool steps_counts(const std::string& out, const std::string& stem, long& accepted, long& rejected) {
  std::smatch m;
  const std::regex re(
      stem +
      R"(\.steps\.png \(macro-step size and kappa: (\d+) accepted steps, (\d+) rejected attempts)");
  if (!std::regex_search(out, m, re)) return false;
  accepted = std::stol(m[1].str());
  rejected = std::stol(m[2].str());
  return true;
}

// Short runs (in-process: the figures do not depend on the executor) and one `plot` of all of
// them. 2e-6 s is a few dozen macro steps from the configs' H_init (1e-9 .. 1e-6 s).
void Plot::plot_every_configuration(const std::vector<fs::path>& all) const {
  std::string results;
  for (const fs::path& config : all) {
    SCOPED_TRACE(config.filename().string());
    const std::string stem = config.stem().string();
    const bool limited = listed(kStabilityLimited, stem);
    const Outcome run =
        macrostep("run '" + config.string() + "' --stop-time " + (limited ? "1e-3" : "2e-6") +
                  " --executor inprocess --output " + stem + ".csv");
    EXPECT_EQ(run.status, limited ? 1 : 0) << run.err;
    results += " " + stem + ".csv";
  }
  const Outcome plot = macrostep("plot" + results);
  ASSERT_EQ(plot.status, 0) << plot.err;
  for (const fs::path& config : all) {
    const std::string stem = config.stem().string();
    SCOPED_TRACE(stem);
    EXPECT_TRUE(is_png(stem + ".coupling.png"));
    EXPECT_TRUE(is_png(stem + ".breakdown.png"));
    if (fs::exists(path(stem + ".steps.csv"))) {
      EXPECT_TRUE(is_png(stem + ".steps.png"));
      long accepted = -1, rejected = -1;
      ASSERT_TRUE(steps_counts(plot.out, stem, accepted, rejected)) << plot.out;
      const auto json = nlohmann::json::parse(read_file(stem + ".json"));
      EXPECT_EQ(accepted, json["statistics"]["macro_steps"].get<long>());
      EXPECT_EQ(rejected, json["statistics"]["rejected"].get<long>());
    } else {
      EXPECT_NE(plot.out.find(stem + ".csv: no steps file"), std::string::npos) << plot.out;
    }
  }
}

// In two halves, so that CI's two test slots share the plotting.
TEST_F(Plot, EveryConfigurationGivesItsFiguresFirstHalf) {
  const auto all = configs(false);
  ASSERT_GE(all.size(), 20u);
  plot_every_configuration({all.begin(), all.begin() + static_cast<long>(all.size() / 2)});
}

TEST_F(Plot, EveryConfigurationGivesItsFiguresSecondHalf) {
  const auto all = configs(false);
  ASSERT_GE(all.size(), 20u);
  plot_every_configuration({all.begin() + static_cast<long>(all.size() / 2), all.end()});
}

TEST_F(Plot, DISABLED_LargeConfigurationsGiveTheirFigures) {
  plot_every_configuration(configs(true));
}

// The PNGs go to --dir, named after the result, which is created with its parents if missing;
// the JSON names the same run as the CSV.
TEST_F(Plot, DirectoryAndMetadataArgument) {
  const Outcome run = macrostep("run '" MACROSTEP_SOURCE_DIR
                                "/configs/demo.toml' --stop-time 1e-4 --executor inprocess "
                                "--output demo.csv");
  ASSERT_EQ(run.status, 0) << run.err;
  ASSERT_FALSE(fs::exists(path("figures")));
  const Outcome plot = macrostep("plot demo.json --dir figures/run");
  ASSERT_EQ(plot.status, 0) << plot.err;
  EXPECT_TRUE(is_png("figures/run/demo.coupling.png"));
  EXPECT_TRUE(is_png("figures/run/demo.breakdown.png"));
  EXPECT_FALSE(fs::exists(path("demo.coupling.png")));
}

// An HDF5 result carries its steps and its metadata: the plot needs no other file.
TEST_F(Plot, Hdf5ResultAlone) {
  const Outcome run = macrostep("run '" MACROSTEP_SOURCE_DIR
                                "/configs/demo.toml' --stop-time 1e-4 --executor inprocess "
                                "--output demo.h5");
  ASSERT_EQ(run.status, 0) << run.err;
  const auto json = nlohmann::json::parse(read_file("demo.json"));
  fs::remove(path("demo.json"));
  const Outcome plot = macrostep("plot demo.h5");
  ASSERT_EQ(plot.status, 0) << plot.err;
  EXPECT_TRUE(is_png("demo.coupling.png"));
  EXPECT_TRUE(is_png("demo.breakdown.png"));
  EXPECT_TRUE(is_png("demo.steps.png"));
  long accepted = -1, rejected = -1;
  ASSERT_TRUE(steps_counts(plot.out, "demo", accepted, rejected)) << plot.out;
  EXPECT_EQ(accepted, json["statistics"]["macro_steps"].get<long>());
  EXPECT_EQ(rejected, json["statistics"]["rejected"].get<long>());
}

// A monolithic run has no macro steps and no breakdown: the coupling figure only.
TEST_F(Plot, MonolithicRunGivesTheCouplingFigure) {
  const Outcome run = macrostep("run '" MACROSTEP_SOURCE_DIR
                                "/configs/demo.toml' --monolithic --stop-time 1e-3 --output "
                                "mono.csv");
  ASSERT_EQ(run.status, 0) << run.err;
  const Outcome plot = macrostep("plot mono.csv");
  ASSERT_EQ(plot.status, 0) << plot.err;
  EXPECT_TRUE(is_png("mono.coupling.png"));
  EXPECT_FALSE(fs::exists(path("mono.steps.png")));
  EXPECT_FALSE(fs::exists(path("mono.breakdown.png")));
}

// --reference: the run over a reference of the same system, one figure, into a --dir made for
// it; panels by unit are tests/tools/test_plot_units.py's (the grouping, without drawing).
TEST_F(Plot, RunOverItsReference) {
  const std::string config = "'" MACROSTEP_SOURCE_DIR "/configs/demo.toml' ";
  ASSERT_EQ(
      macrostep("run " + config + "--stop-time 1e-4 --executor inprocess --output r.csv").status,
      0);
  const Outcome reference = macrostep("reference " + config + "--at r.csv --output ref.h5");
  ASSERT_EQ(reference.status, 0) << reference.err;
  const Outcome plot = macrostep("plot r.csv --reference ref.h5 --dir figures/new");
  ASSERT_EQ(plot.status, 0) << plot.err;
  EXPECT_TRUE(is_png("figures/new/r.reference.png"));
  EXPECT_TRUE(is_png("figures/new/r.coupling.png"));
  EXPECT_NE(plot.out.find("plot: figures/new/r.reference.png (over the reference ref, the "
                          "difference below)"),
            std::string::npos)
      << plot.out;
  // A reference of another system (no column in common), or none: one line, status 2.
  write_file("other.csv", "time,y_1\n0,1\n1,2\n");
  fs::remove(path("r.coupling.png"));
  const Outcome other = macrostep("plot r.csv --reference other.csv");
  EXPECT_EQ(other.status, 2);
  EXPECT_EQ(other.err, "macrostep plot: no column of r is in the reference other\n");
  EXPECT_FALSE(fs::exists(path("r.coupling.png"))) << "a refused plot writes no figure";
  const Outcome missing = macrostep("plot r.csv --reference missing.csv --dir never");
  EXPECT_EQ(missing.status, 2);
  EXPECT_EQ(missing.err, "macrostep plot: missing.csv: no such file\n");
  EXPECT_FALSE(fs::exists(path("never")));
}

// One line "macrostep plot: ..." and exit status 2 for each kind of bad input.
TEST_F(Plot, BadInputIsOneLineAndStatusTwo) {
  write_file("settings.toml", "[model]\nmasses = 2\n");
  write_file("short.csv", "time,x_1\n0,1\n1\n");
  write_file("ok.csv", "time,x_1,lambda_1\n0,1,2\n1,2,3\n");
  // A matplotlib that cannot be imported, first on the path.
  fs::create_directories(path("nompl/matplotlib"));
  write_file("nompl/matplotlib/__init__.py", "raise ImportError('no matplotlib here')\n");
  const struct {
    std::string args, message;
  } cases[] = {
      {"plot missing.csv", "missing.csv: no such file"},
      {"plot settings.toml", "not a macrostep result"},
      {"plot short.csv", "short.csv:3: 1 fields, the header has 2"},
      {"plot .", "is a directory"},
      {"plot ok.csv --dir ok.csv", "ok.csv: is a file, not a directory for the figures"},
      {"plot missing.csv --dir nowhere", "missing.csv: no such file"},
      {"plot", "RESULT is required"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.args);
    const Outcome o = macrostep(c.args);
    EXPECT_EQ(o.status, 2);
    EXPECT_NE(o.err.find(c.message), std::string::npos) << o.err;
    EXPECT_LE(std::count(o.err.begin(), o.err.end(), '\n'), 2) << o.err;  // + CLI11's usage hint
  }
  const Outcome no_mpl = macrostep("plot ok.csv", "PYTHONPATH=nompl");
  EXPECT_EQ(no_mpl.status, 2);
  EXPECT_EQ(no_mpl.err,
            "macrostep plot: needs matplotlib for /usr/bin/python3 (apt-get install "
            "python3-matplotlib)\n");
  const Outcome no_script = macrostep("plot ok.csv", "MACROSTEP_TOOLS_DIR=nompl");
  EXPECT_EQ(no_script.status, 2);
  EXPECT_NE(no_script.err.find("plot_run.py not found"), std::string::npos) << no_script.err;
  EXPECT_FALSE(fs::exists(path("nowhere")));  // nothing is made for a plot that fails
  // The good file plots (so the failures above are the inputs', not the tool's).
  const Outcome ok = macrostep("plot ok.csv");
  EXPECT_EQ(ok.status, 0) << ok.err;
  EXPECT_TRUE(is_png("ok.coupling.png"));
}

}  // namespace
}  // namespace macrostep::testing

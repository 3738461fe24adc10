// Helpers of the FMU tests (test_fmu*.cpp): the test FMUs by name, a temporary directory, the app
// run as a child process, a result CSV read back, archives of chosen files, and the two-mass
// oscillator as two FMUs and as the built-in chain.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "../support/read_file.hpp"
#include "../support/shell_command.hpp"
#include "macrostep/fmu/fmu.hpp"
#include "macrostep/library/model_description.hpp"

namespace macrostep::fmu_testing {

namespace fs = std::filesystem;

inline std::string fmu_file(const std::string& name) {
  return fs::path(FMU_DIR) / (name + ".fmu");
}

inline std::unique_ptr<model::Subsystem> load(const std::string& name,
                                              const std::string& parameters = "{}",
                                              std::vector<std::string> inputs = {},
                                              std::vector<std::string> outputs = {}) {
  return library::build_subsystem(
      fmu::FmuDescription{fmu_file(name), parameters, std::move(inputs), std::move(outputs), ""});
}

inline fs::path temp_dir(const std::string& what) {
  const auto dir =
      fs::temp_directory_path() / ("macrostep-test-fmu-" + what + "-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

using AppRun = test::CommandRun;

inline AppRun macrostep(const std::string& args) {
  return test::run_shell(std::string(MACROSTEP_BINARY) + " " + args + " 2>&1");
}

inline std::vector<std::vector<double>> read_csv(const fs::path& path,
                                                 std::string* header = nullptr) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  if (header != nullptr) *header = line;
  std::vector<std::vector<double>> rows;
  while (std::getline(in, line)) {
    std::vector<double> row;
    std::istringstream fields(line);
    for (std::string field; std::getline(fields, field, ',');) row.push_back(std::stod(field));
    rows.push_back(row);
  }
  return rows;
}

// The message of an FMU refused when built, or "no error".
inline std::string refusal(const fmu::FmuDescription& d) {
  try {
    (void)fmu::build_fmu_subsystem(d);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "no error";
}

// An archive of the given files ({path in the archive, contents}).
inline std::string make_fmu(const fs::path& dir, const std::string& name,
                            const std::vector<std::pair<std::string, std::string>>& files) {
  const fs::path stage = dir / (name + ".stage");
  fs::create_directories(stage);
  std::string list;
  for (const auto& [path, contents] : files) {
    fs::create_directories((stage / path).parent_path());
    std::ofstream(stage / path, std::ios::binary) << contents;
    list += " " + path;
  }
  const fs::path archive = dir / (name + ".fmu");
  const std::string command = "cd " + stage.string() + " && " + CMAKE_BINARY + " -E tar cf " +
                              archive.string() + " --format=zip" + list;
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
  return archive.string();
}

// The two-mass oscillator of MODELS.md §1.2, wall -(c, d)- m1 -(cc, dc)- m2 -(c, d)- wall with a
// harmonic force on m2, cut at the coupling element: as the built-in chain, and as two oscillator
// FMUs joined by a spring_damper connection. Same solver and co-simulation settings.
inline const char* kCommon =
    "[solver]\nrtol = 1e-8\n"
    "[simulation]\nend_time = 1.0\noutput_interval = 1e-2\n";

inline fs::path write_chain(const fs::path& dir, const std::string& cosim) {
  const auto path = dir / "chain.toml";
  std::ofstream(path) << "[model]\nmasses = 2\nmass = 1.0\nx0 = [0.01, 0.0]\n"
                      << "[model.element]\nc = 100.0\nd = 0.1\n"
                      << "[[model.mass_override]]\nfirst = 2\nlast = 2\nmass = 0.5\n"
                      << "[[model.element_override]]\nfirst = 2\nlast = 2\nc = 400.0\nd = 1.0\n"
                      << "[[model.force]]\ntype = \"harmonic\"\nmasses = [2]\n"
                      << "amplitude = 20.0\nomega = 7.0\n"
                      << "[partition]\nsubsystems = 2\n"
                      << kCommon << cosim;
  return path;
}

// `fmu`: "oscillator" (FMI 2.0), "oscillator3" (the same C code as FMI 3.0), "oscillator_once"
// (canBeInstantiatedOnlyOncePerProcess).
// The two-mass oscillator of two FMUs (the chain of write_chain as a described system), its rows
// at the macro points as the chain writes them, so that the two compare row by row.
inline fs::path write_fmu_pair(const fs::path& dir, const std::string& cosim,
                               const std::string& extra_m2 = "",
                               const std::string& fmu = "oscillator") {
  fs::copy_file(fmu_file(fmu), dir / (fmu + ".fmu"), fs::copy_options::skip_existing);
  const auto path = dir / (fmu == "oscillator" ? "fmus.toml" : fmu + ".toml");
  std::ofstream(path) << "[[subsystem]]\nname = \"m1\"\nmodel = \"fmu\"\npath = \"" << fmu
                      << ".fmu\"\n"
                      << "parameters = {m = 1.0, c = 100.0, d = 0.1, x = 0.01}\n"
                      << "[[subsystem]]\nname = \"m2\"\nmodel = \"fmu\"\npath = \"" << fmu
                      << ".fmu\"\n"
                      << "parameters = {m = 0.5, c = 100.0, d = 0.1, amplitude = 20.0, "
                      << "omega = 7.0, force_sign = -1" << extra_m2 << "}\n"
                      << "[[connection]]\nname = \"coupling\"\nlaw = \"spring_damper\"\n"
                      << "from = [\"m1.x\", \"m1.v\", \"m2.x\", \"m2.v\"]\n"
                      << "to = [\"m1.force\", \"m2.force\"]\nc = 400.0\nd = 1.0\n"
                      << kCommon << "[output]\nrows = \"macro\"\n"
                      << cosim;
  return path;
}

// Largest difference of every column (but time) over the FMU run's, relative to the column's
// largest magnitude in b; the time grids must be the same. Rows at or before `after` are left out.
inline double largest_relative_difference(const fs::path& a, const fs::path& b,
                                          double after = -INFINITY) {
  const auto ra = read_csv(a), rb = read_csv(b);
  EXPECT_EQ(ra.size(), rb.size());
  if (ra.empty() || ra.size() != rb.size()) return INFINITY;
  double worst = 0.0;
  for (std::size_t c = 1; c < ra[0].size(); ++c) {
    double scale = 0.0, diff = 0.0;
    for (std::size_t k = 0; k < ra.size(); ++k) {
      EXPECT_EQ(ra[k][0], rb[k][0]) << "row " << k;
      if (ra[k][0] <= after) continue;
      scale = std::max(scale, std::abs(rb[k][c]));
      diff = std::max(diff, std::abs(ra[k][c] - rb[k][c]));
    }
    worst = std::max(worst, diff / scale);
  }
  return worst;
}

// Checkpoint and resume of CONFIG against its whole run: the whole run into DIR/whole.csv (with
// WHOLE_ARGS, e.g. an executor), the same run in worker processes with a checkpoint every 40
// accepted steps into DIR/cut.csv, then `resume` of the last checkpoint, which cuts that CSV at
// the checkpoint and continues it: it must end as the whole run's bytes.
inline void expect_resume_gives_the_whole_runs_bytes(const fs::path& config, const fs::path& dir,
                                                     const std::string& whole_args = "") {
  const AppRun whole = macrostep("run " + config.string() + " " + whole_args + " --output " +
                                 (dir / "whole.csv").string());
  ASSERT_EQ(whole.status, 0) << whole.output;
  const fs::path checkpoint = dir / "cut.ckpt";
  const AppRun first = macrostep("run " + config.string() + " --checkpoint-every 40steps " +
                                 "--checkpoint " + checkpoint.string() + " --executor processes" +
                                 " --output " + (dir / "cut.csv").string());
  ASSERT_EQ(first.status, 0) << first.output;
  ASSERT_TRUE(fs::exists(checkpoint)) << first.output;
  const AppRun rest = macrostep("resume " + checkpoint.string());
  ASSERT_EQ(rest.status, 0) << rest.output;
  EXPECT_NE(rest.output.find("resuming "), std::string::npos) << rest.output;
  EXPECT_TRUE(macrostep::testing::read_file(dir / "whole.csv") ==
              macrostep::testing::read_file(dir / "cut.csv"))
      << "the resumed run differs from the whole one";
}

inline nlohmann::json statistics(const fs::path& csv) {
  auto json = nlohmann::json::parse(
      macrostep::testing::read_file(fs::path(csv).replace_extension(".json")));
  return json["statistics"];
}

}  // namespace macrostep::fmu_testing

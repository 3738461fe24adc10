// Per-macro-step diagnostics and HDF5 output end to end (docs/reference/commands.md;
// /work/prompts/steps-format.md is the steps file's contract): the steps table of every scheme
// against the run's own JSON (the per-attempt solver times sum to the JSON's per-subsystem
// totals to the nanosecond, the accepted and rejected counts and corrector passes agree), and an
// HDF5 result against the CSV of the same run (contract 1: the in-process executor gives
// bit-identical numbers in either file), read back by our reader, by h5dump and by h5py.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "../support/child_processes.hpp"
#include "binary_fixture.hpp"
#include "macrostep/output/csv.hpp"
#include "macrostep/output/hdf5.hpp"

namespace {

namespace fs = std::filesystem;
using macrostep::output::CsvTable;
using macrostep::testing::Outcome;

class Diagnostics : public macrostep::testing::BinaryTest {
 protected:
  nlohmann::json json(const std::string& name) const {
    return nlohmann::json::parse(read_file(name));
  }
};

// 10 masses, 2 subsystems, 0.02 s: a hundred-odd controlled macro steps, some rejected.
const std::string kChain = macrostep::testing::kTestChainModel + R"([simulation]
end_time = 0.02
output_interval = 1.0e-4
[cosim]
rtol = 1.0e-5
threads = 1
)";

const std::vector<std::string> kStepColumns = {
    "t_start",          "h",          "kappa",        "accepted",     "error_estimate",
    "corrector_passes", "wall_s",     "solver_s_1",   "solver_s_2",   "idle_s_1",
    "idle_s_2",         "executor_s", "extra_runs_1", "extra_runs_2", "extra_s_1",
    "extra_s_2"};

std::int64_t ns(double seconds) {
  return std::llround(seconds * 1e9);
}

// The steps table against the JSON of its run (steps-format.md): attempts 1..n in order, the
// accepted count and the rejections, T_{N+1} = T_N + H along the accepted attempts, idle = wall −
// solver, per subsystem the attempts' solver times summing to the JSON's solver_s, the extra
// runs' times summing to the JSON's extra_runs_s (exMD: one comparison run per pass), the
// integrations (one nominal run per subsystem and pass, the extra runs) to the JSON's
// statistics.integrations, and the executor's time inside the attempt's wall time.
// `controlled`: a controlled step size, whose accepted attempts passed the error test (norm ≤ 1);
// otherwise a fixed step without estimator, whose error_estimate is NaN throughout.
// The semi-implicit scheme adds coupling_mismatch (≥ 0, finite) before executor_s.
void check_against_json(const CsvTable& steps, const nlohmann::json& meta, bool controlled = true) {
  const bool semi = meta.at("cosim").at("scheme") == "semi-implicit";
  std::vector<std::string> columns = kStepColumns;
  if (semi) columns.insert(columns.begin() + 11, "coupling_mismatch");
  ASSERT_EQ(steps.columns, columns);
  const std::size_t o = semi ? 1 : 0;  // the columns from executor_s on
  const auto& stats = meta.at("statistics");
  const std::size_t n = steps.rows();
  ASSERT_EQ(n,
            stats.at("macro_steps").get<std::size_t>() + stats.at("rejected").get<std::size_t>());
  std::size_t accepted = 0;
  std::int64_t passes = 0;
  std::vector<std::int64_t> solver(2, 0);
  std::int64_t extra = 0;
  double comparison_runs = 0.0, extra_runs = 0.0, nominal_runs = 0.0;
  const bool comparison = meta.at("cosim").at("estimator") == "exMD";
  double t = 0.0, mismatch = 0.0;
  for (std::size_t r = 0; r < n; ++r) {
    SCOPED_TRACE("attempt " + std::to_string(r + 1));
    EXPECT_EQ(steps.time[r], static_cast<double>(r + 1));
    // T_N is the newest accepted point (T_N + H is T_{N+1} up to its rounding).
    EXPECT_NEAR(steps.values[0][r], t, 1e-15);
    const bool ok = steps.values[3][r] == 1.0;
    EXPECT_TRUE(ok || steps.values[3][r] == 0.0);
    if (ok) {
      ++accepted;
      t = steps.values[0][r] + steps.values[1][r];
    }
    if (!controlled) {
      EXPECT_TRUE(std::isnan(steps.values[4][r]));
    } else if (ok) {
      EXPECT_LE(steps.values[4][r], 1.0);
    }
    passes += static_cast<std::int64_t>(steps.values[5][r]);
    const std::int64_t wall = ns(steps.values[6][r]);
    for (std::size_t i = 0; i < 2; ++i) {
      const std::int64_t s = ns(steps.values[7 + i][r]);
      EXPECT_GE(s, 0);
      EXPECT_EQ(ns(steps.values[9 + i][r]), wall - s);
      solver[i] += s;
      const double runs = steps.values[12 + o + i][r];
      extra_runs += runs;
      nominal_runs += steps.values[5][r] + 1.0;
      extra += ns(steps.values[14 + o + i][r]);
      if (comparison) {  // one per pass, none while the start falls back to exCV (D-33)
        EXPECT_TRUE(runs == 0.0 || runs == steps.values[5][r] + 1.0) << runs;
        comparison_runs += runs;
      }
      EXPECT_EQ(runs == 0.0, steps.values[14 + o + i][r] == 0.0);
    }
    EXPECT_GT(steps.values[11 + o][r], 0.0);
    EXPECT_LE(steps.values[11 + o][r], steps.values[6][r]);
    if (semi) {
      EXPECT_TRUE(std::isfinite(steps.values[11][r]) && steps.values[11][r] >= 0.0);
      mismatch = std::max(mismatch, steps.values[11][r]);
    }
  }
  if (comparison) {
    EXPECT_GT(comparison_runs, 0.5 * static_cast<double>(n));
  }
  // Nanoseconds written as seconds and read back: within one per attempt and subsystem.
  EXPECT_NEAR(static_cast<double>(extra), meta.at("time").at("extra_runs_s").get<double>() * 1e9,
              2.0 * static_cast<double>(n));
  EXPECT_EQ(accepted, stats.at("macro_steps").get<std::size_t>());
  const auto& integrations = stats.at("integrations");
  EXPECT_EQ(nominal_runs, integrations.at("nominal").get<double>());
  EXPECT_EQ(extra_runs, integrations.at("extra").get<double>());
  EXPECT_DOUBLE_EQ(integrations.at("per_subsystem_and_step").get<double>(),
                   (nominal_runs + extra_runs) / (2.0 * static_cast<double>(accepted)));
  EXPECT_NEAR(t, meta.at("simulation").at("end_time").get<double>(), 1e-15);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(solver[i], ns(stats.at("subsystems").at(i).at("solver_s").get<double>()))
        << "subsystem " << i + 1;
  }
  if (stats.contains("corrector")) {
    EXPECT_EQ(passes, stats.at("corrector").at("passes").get<std::int64_t>());
    if (semi) {  // the largest of the column is the statistic
      EXPECT_EQ(mismatch, stats.at("corrector").at("max_iteration_residual").get<double>());
      EXPECT_GT(mismatch, 0.0);
    }
  } else if (meta.at("cosim").at("scheme") == "explicit") {
    EXPECT_EQ(passes, 0);
  }
}

struct SchemeCase {
  const char* name;
  const char* args;
  bool controlled = true;
};

class StepsFile : public Diagnostics, public ::testing::WithParamInterface<SchemeCase> {};

// Every scheme and executor: the steps CSV beside the result, named in the JSON.
TEST_P(StepsFile, AgreesWithTheRunsJson) {
  write_file("chain.toml", kChain);
  const Outcome o = macrostep(std::string("run chain.toml --output r.csv ") + GetParam().args);
  ASSERT_EQ(o.status, 0) << o.err;
  const auto meta = json("r.json");
  EXPECT_EQ(meta.at("steps_file"), path("r.steps.csv").substr(dir_.string().size() + 1))
      << "steps_file names the file as the result's \"file\" does";
  ASSERT_EQ(read_file("r.steps.csv").rfind("attempt,t_start,h,kappa,accepted,", 0), 0u);
  check_against_json(macrostep::output::read_csv(path("r.steps.csv"), "attempt"), meta,
                     GetParam().controlled);
}

INSTANTIATE_TEST_SUITE_P(
    Schemes, StepsFile,
    ::testing::Values(SchemeCase{"ExplicitProcesses", "--executor processes"},
                      SchemeCase{"ExplicitInProcess", "--executor inprocess"},
                      SchemeCase{"ImplicitInProcess", "--executor inprocess --scheme implicit"},
                      SchemeCase{"SemiImplicitProcesses",
                                 "--executor processes --scheme semi-implicit"},
                      SchemeCase{"WaveformProcesses", "--executor processes --scheme waveform"},
                      SchemeCase{"GaussSeidelInProcess",
                                 "--executor inprocess --scheme gauss-seidel --estimator none "
                                 "--order 1 --step-size 1e-4",
                                 false}),
    [](const auto& info) { return std::string(info.param.name); });

// The same values with NaN equal to NaN (error_estimate of a failed attempt).
bool same(double a, double b) {
  return a == b || (std::isnan(a) && std::isnan(b));
}

// The HDF5 file of a run against the CSVs of the same run (in-process, so bit-identical):
// /results equals the result CSV double for double, /steps the steps CSV in every column that
// does not measure time, and the metadata attributes the JSON.
TEST_F(Diagnostics, Hdf5EqualsTheCsvOfTheSameRun) {
  write_file("chain.toml", kChain);
  fs::create_directories(path("csv"));
  fs::create_directories(path("h5"));
  const std::string args = " --executor inprocess --scheme implicit";
  ASSERT_EQ(macrostep("run chain.toml --output csv/r.csv" + args).status, 0);
  const Outcome o = macrostep("run chain.toml --output h5/r.h5" + args);
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_FALSE(fs::exists(path("h5/r.steps.csv"))) << "an .h5 result holds its steps itself";

  const CsvTable csv = macrostep::output::read_csv(path("csv/r.csv"));
  const CsvTable h5 = macrostep::output::read_hdf5_table(path("h5/r.h5"));
  ASSERT_EQ(h5.columns, csv.columns);
  ASSERT_EQ(h5.time, csv.time);
  EXPECT_EQ(h5.values, csv.values);

  const CsvTable steps_csv = macrostep::output::read_csv(path("csv/r.steps.csv"), "attempt");
  const CsvTable steps = macrostep::output::read_hdf5_table(path("h5/r.h5"), "steps", "attempt");
  ASSERT_EQ(steps.columns, steps_csv.columns);
  ASSERT_EQ(steps.time, steps_csv.time);
  for (std::size_t c = 0; c < 6; ++c) {  // t_start .. corrector_passes
    for (std::size_t r = 0; r < steps.rows(); ++r) {
      ASSERT_TRUE(same(steps.values[c][r], steps_csv.values[c][r]))
          << steps.columns[c] << " of attempt " << r + 1;
    }
  }
  const auto meta = json("h5/r.json");
  check_against_json(steps, meta);
  EXPECT_EQ(meta.at("steps_file"), "h5/r.h5");

  // compare reads either file: a result against itself in the other format is exact.
  const Outcome cmp = macrostep("compare h5/r.h5 csv/r.csv");
  ASSERT_EQ(cmp.status, 0) << cmp.err;
  EXPECT_NE(cmp.out.find("v_6       m/s   0.000000e+00"), std::string::npos) << cmp.out;
}

// h5py (python3-h5py) and h5dump (hdf5-tools) read the file: shapes, column names and units,
// the metadata JSON and the scalar statistics.
TEST_F(Diagnostics, H5pyAndH5dumpReadTheFile) {
  write_file("chain.toml", kChain);
  const Outcome o = macrostep("run chain.toml --executor inprocess --output r.h5");
  ASSERT_EQ(o.status, 0) << o.err;
  write_file("check.py", R"(import json, sys
import h5py
with h5py.File(sys.argv[1], "r") as f, open(sys.argv[2]) as j:
    meta = json.load(j)
    stats = meta["statistics"]
    r, s = f["results"], f["steps"]
    assert list(r.attrs["columns"]) == ["time", "x_5", "v_5", "x_6", "v_6", "lambda_1"], r.attrs["columns"]
    assert list(r.attrs["units"]) == ["s", "m", "m/s", "m", "m/s", "N"], r.attrs["units"]
    assert r.shape == (meta["output"]["rows"], 6), r.shape
    assert list(s.attrs["columns"])[:3] == ["attempt", "t_start", "h"]
    assert s.shape[0] == stats["macro_steps"] + stats["rejected"], s.shape
    assert int(s[:, 4].sum()) == stats["macro_steps"]
    assert json.loads(f.attrs["metadata_json"]) == meta
    assert f.attrs["statistics.macro_steps"] == stats["macro_steps"]
    assert f.attrs["status"] == "completed"
print("h5py ok")
)");
  const std::string py = "/usr/bin/python3 check.py r.h5 r.json";
  ASSERT_EQ(std::system(("cd '" + dir_.string() + "' && " + py + " > py.txt 2>&1").c_str()), 0)
      << read_file("py.txt");
  if (!fs::exists("/usr/bin/h5dump")) GTEST_SKIP() << "h5dump not installed (hdf5-tools)";
  ASSERT_EQ(std::system(("cd '" + dir_.string() + "' && h5dump -A r.h5 > dump.txt").c_str()), 0);
  const std::string dump = read_file("dump.txt");
  EXPECT_NE(dump.find("DATASET \"results\""), std::string::npos);
  EXPECT_NE(dump.find("DATASET \"steps\""), std::string::npos);
  EXPECT_NE(dump.find("\"corrector_passes\""), std::string::npos);
  EXPECT_NE(dump.find("ATTRIBUTE \"metadata_json\""), std::string::npos);
}

// HDF5 is loaded when a process first writes or reads an HDF5 file, not at every process's start
// (runtime/output/src/hdf5_library.hpp): the binary does not link it, a CSV run does not need
// it, and an .h5 run without it fails with a message naming the file, the library and the
// loader's reason, before it has touched a file. Here the library of HDF5's soname first on the
// loader's path is not one.
TEST_F(Diagnostics, Hdf5IsLoadedOnlyToWriteAnHdf5File) {
  ASSERT_EQ(std::system(("ldd '" MACROSTEP_BINARY "' > '" + path("ldd.txt") + "'").c_str()), 0);
  const std::string libraries = read_file("ldd.txt");
  EXPECT_EQ(libraries.find("hdf5"), std::string::npos) << libraries;

  write_file("chain.toml", kChain);
  fs::create_directories(path("lib"));
  write_file("lib/" MACROSTEP_HDF5_SONAME, "not a library\n");
  const std::string env = "LD_LIBRARY_PATH='" + path("lib") + "'";
  const Outcome csv = macrostep("run chain.toml --executor inprocess --output c.csv", env);
  EXPECT_EQ(csv.status, 0) << csv.err;
  const Outcome h5 = macrostep("run chain.toml --executor inprocess --output h.h5", env);
  EXPECT_NE(h5.status, 0) << h5.err;
  EXPECT_NE(
      h5.err.find("h.h5: HDF5 output needs " MACROSTEP_HDF5_SONAME ", which could not be loaded: " +
                  path("lib/" MACROSTEP_HDF5_SONAME)),
      std::string::npos)
      << h5.err;
  // The failed run leaves no files of its own, and an earlier result as it was.
  EXPECT_FALSE(fs::exists(path("h.h5")));
  EXPECT_FALSE(fs::exists(path("h.json")));
  ASSERT_EQ(macrostep("run chain.toml --executor inprocess --output e.h5").status, 0);
  const std::string result = read_file("e.h5"), metadata = read_file("e.json");
  EXPECT_EQ(macrostep("run chain.toml --executor inprocess --output e.h5", env).status, 2);
  EXPECT_EQ(read_file("e.h5"), result);
  EXPECT_EQ(read_file("e.json"), metadata);
}

// The loader never searches the directory a run starts in: files there named like every library
// the binary needs (its NEEDED entries) and like HDF5's, which it loads on first use, are not
// loaded in place of the system's (an empty RUNPATH entry would be that directory).
TEST_F(Diagnostics, LibrariesInTheWorkingDirectoryAreNotLoaded) {
  const std::string binary = macrostep::testing::app_binary(MACROSTEP_BINARY);
  ASSERT_EQ(std::system(("readelf -d '" + binary + "' > '" + path("dynamic.txt") + "'").c_str()),
            0);
  std::vector<std::string> names{MACROSTEP_HDF5_SONAME};
  const std::string dynamic = read_file("dynamic.txt");
  for (std::size_t at = dynamic.find("(NEEDED)"); at != std::string::npos;
       at = dynamic.find("(NEEDED)", at + 1)) {
    const std::size_t open = dynamic.find('[', at);
    names.push_back(dynamic.substr(open + 1, dynamic.find(']', open) - open - 1));
  }
  ASSERT_GE(names.size(), 5U) << dynamic;
  for (const std::string& name : names) write_file(name, "not a library\n");
  write_file("chain.toml", kChain);
  const Outcome o = macrostep("run chain.toml --executor inprocess --output h.h5");
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_GT(fs::file_size(path("h.h5")), 0U);
}

// Monolithic and reference runs write /results alone, equal to their CSV.
TEST_F(Diagnostics, MonolithicAndReferenceHdf5) {
  write_file("chain.toml", kChain);
  // Each kind its own files: a run does not overwrite another kind's result; the HDF5 file has
  // a stem of its own, since m.csv and m.h5 would share m.json.
  for (const auto& [mode, stem] :
       {std::pair<std::string, std::string>{"run chain.toml --monolithic", "m"},
        {"reference chain.toml", "r"}}) {
    SCOPED_TRACE(mode);
    ASSERT_EQ(macrostep(mode + " --output " + stem + ".csv").status, 0);
    const Outcome o = macrostep(mode + " --output " + stem + "_h5.h5");
    ASSERT_EQ(o.status, 0) << o.err;
    const CsvTable csv = macrostep::output::read_csv(path(stem + ".csv"));
    const CsvTable h5 = macrostep::output::read_hdf5_table(path(stem + "_h5.h5"));
    EXPECT_EQ(h5.columns, csv.columns);
    EXPECT_EQ(h5.time, csv.time);
    EXPECT_EQ(h5.values, csv.values);
    EXPECT_THROW(macrostep::output::read_hdf5_table(path(stem + "_h5.h5"), "steps", "attempt"),
                 macrostep::output::OutputError);
  }
}

// SIGINT: the run stops between macro steps and leaves a complete file (rows so far, metadata
// with status "interrupted").
TEST_F(Diagnostics, InterruptedHdf5RunLeavesAReadableFile) {
  std::string long_chain = kChain;
  long_chain.replace(long_chain.find("end_time = 0.02"), 15, "end_time = 100.0");
  write_file("chain.toml", long_chain);
  const pid_t pid = macrostep::testing::fork_tied();
  if (pid == 0) {
    if (::chdir(dir_.c_str()) != 0 || !std::freopen("run.err", "w", stderr) ||
        !std::freopen("run.out", "w", stdout)) {
      ::_exit(120);
    }
    ::execl(MACROSTEP_BINARY, MACROSTEP_BINARY, "run", "chain.toml", "--executor", "inprocess",
            "--output", "r.h5", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  // Not a time measurement: a moment for the run to get going (the file is valid either way).
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  ASSERT_EQ(::kill(pid, SIGINT), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << read_file("run.err");
  EXPECT_EQ(WEXITSTATUS(status), 128 + SIGINT) << read_file("run.err");
  const CsvTable results = macrostep::output::read_hdf5_table(path("r.h5"));
  const CsvTable steps = macrostep::output::read_hdf5_table(path("r.h5"), "steps", "attempt");
  EXPECT_GE(results.rows(), 1u);
  const auto meta = json("r.json");
  EXPECT_EQ(meta.at("status"), "interrupted");
  EXPECT_EQ(results.rows(), meta.at("output").at("rows").get<std::size_t>());
  EXPECT_EQ(steps.rows(), meta.at("statistics").at("macro_steps").get<std::size_t>() +
                              meta.at("statistics").at("rejected").get<std::size_t>());
}

// Bad paths and combinations: exit 2, one line naming the file.
TEST_F(Diagnostics, BadHdf5PathsAndCombinationsAreRefused) {
  write_file("chain.toml", kChain);
  Outcome o = macrostep("run chain.toml --output no/such/dir/r.h5");
  EXPECT_EQ(o.status, 2);
  EXPECT_NE(o.err.find("no/such/dir/r.h5"), std::string::npos) << o.err;
  o = macrostep("run chain.toml --output r.h5 --checkpoint-every 5steps");
  EXPECT_EQ(o.status, 2);
  EXPECT_NE(o.err.find("checkpoints continue CSV results only"), std::string::npos) << o.err;
  write_file("fake.h5", "time,x\n0,1\n");
  o = macrostep("compare fake.h5 fake.h5");
  EXPECT_NE(o.status, 0);
  EXPECT_NE(o.err.find("fake.h5: cannot open: not a readable HDF5 file"), std::string::npos)
      << o.err;
}

}  // namespace

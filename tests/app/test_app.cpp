// End-to-end tests of the `macrostep` executable: exit codes, messages, files.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "macrostep/output/csv.hpp"

#include "binary_fixture.hpp"

namespace {

namespace fs = std::filesystem;

using macrostep::testing::final_nrmse;
using macrostep::testing::kCosim;
using macrostep::testing::Outcome;

class App : public macrostep::testing::BinaryTest {};

// 10 masses in 2 subsystems (coupling bodies 5 and 6), 2 ms: runs in milliseconds.
const std::string kSmall = R"(description = "test chain"
[model]
masses = 10
seed = 3
mass = 5.0e-2
x0 = {uniform = [-1.0e-5, 1.0e-5]}
v0 = {uniform = [-0.1, 0.1]}
[model.element]
c = 2.5e9
d = 2.5e2
C = 1.0e19
D = 5.0e4
[[model.force]]
type = "harmonic"
all = true
amplitude = {uniform = [1.0e3, 1.0e4]}
omega = {uniform = [1.0e2, 1.0e3]}
[partition]
subsystems = 2
[simulation]
end_time = 2.0e-3
output_interval = 1.0e-4
)";

TEST_F(App, BadConfigurationExitsTwoWithFileLineAndKey) {
  const std::string bad = std::string(MACROSTEP_SOURCE_DIR) + "/tests/config/bad/negative_c.toml";
  const Outcome o = macrostep("run '" + bad + "' --monolithic --output r.csv");
  EXPECT_EQ(o.status, 2);
  EXPECT_EQ(o.err, bad + ":8: model.element.c: must be >= 0 (got -1)\n");
  EXPECT_EQ(o.out, "");
  EXPECT_FALSE(fs::exists(path("r.csv")));
}

TEST_F(App, CommandLineErrorsExitTwo) {
  write_file("small.toml", kSmall);
  EXPECT_EQ(macrostep("").status, 2);            // no subcommand
  EXPECT_EQ(macrostep("frobnicate").status, 2);  // unknown subcommand
  EXPECT_EQ(macrostep("run small.toml --monolithic --frobnicate").status, 2);
  EXPECT_EQ(macrostep("run").status, 2);  // CONFIG missing
  EXPECT_EQ(macrostep("run small.toml --monolithic --rtol abc").status, 2);
  EXPECT_EQ(macrostep("reference small.toml --rtol 1e-3").status, 2);  // not an option there
  const Outcome stop = macrostep("run small.toml --monolithic --stop-time -1");
  EXPECT_EQ(stop.status, 2);
  EXPECT_EQ(stop.err,
            "macrostep: --stop-time must be a number of seconds of at least 1e-12 (got -1)\n");
  // Too short to integrate: refused up front in both modes, not an IDA message.
  for (const char* mode : {"--monolithic", "--executor inprocess"}) {
    const Outcome tiny = macrostep(std::string("run small.toml --stop-time 1e-300 ") + mode);
    EXPECT_EQ(tiny.status, 2) << mode << tiny.err;
    EXPECT_NE(tiny.err.find("--stop-time must be a number of seconds of at least 1e-12"),
              std::string::npos)
        << tiny.err;
  }
  const Outcome rtol = macrostep("run small.toml --monolithic --rtol 2");
  EXPECT_EQ(rtol.status, 2);
  EXPECT_EQ(rtol.err, "macrostep: --rtol must be in (0, 1) (got 2)\n");
  const Outcome dir = macrostep("run small.toml --monolithic --output no/such/dir/r.csv");
  EXPECT_EQ(dir.status, 2);
  EXPECT_NE(dir.err.find("no/such/dir/r.csv: cannot create"), std::string::npos) << dir.err;
  const Outcome missing = macrostep("run missing.toml --monolithic");
  EXPECT_EQ(missing.status, 2);
  EXPECT_EQ(missing.err, "missing.toml: cannot open the configuration file: " +
                             std::string(strerror(ENOENT)) + "\n");
}

TEST_F(App, VersionAndHelpExitZero) {
  const Outcome v = macrostep("--version");
  EXPECT_EQ(v.status, 0);
  // The version, then the commit: `git describe --always --dirty` (a hash, or tag-count-ghash,
  // with -dirty) or "unknown" outside git; sdk_install checks it against the configured value.
  const std::regex version(
      "macrostep [0-9]+[.][0-9]+[.][0-9]+ [(]commit (unknown|[-.A-Za-z0-9]*[0-9a-f]{7,}(-dirty)?)"
      "[)]\nSUNDIALS [0-9.]+, CLI11 [0-9.]+\n");
  EXPECT_TRUE(std::regex_match(v.out, version)) << v.out;
  const Outcome h = macrostep("--help");
  EXPECT_EQ(h.status, 0);
  EXPECT_NE(h.out.find("compare"), std::string::npos);
}

// --pin takes the same forms in `run` and `topology`, the explicit map included, and both
// helps say so.
TEST_F(App, PinHelpShowsEveryForm) {
  for (const char* command : {"run --help", "topology --help"}) {
    const Outcome h = macrostep(command);
    EXPECT_EQ(h.status, 0) << command;
    for (const char* form :
         {"none", "compact", "scatter", "0,2,4-7", "map:M/S1/../Sn", "map:*/0/1/0/1"}) {
      EXPECT_NE(h.out.find(form), std::string::npos) << command << ": " << form << "\n" << h.out;
    }
  }
}

TEST_F(App, CompareTwoCsvFilesPrintsPerVariableErrorsAndTheNorm) {
  // The hand-computed case of test_nrmse: sqrt(0.2), 1, norm sqrt(1.2).
  write_file("ref.csv", "time,v_1,c_1,x_1\n0,1,2,0\n1,-1,2,1\n2,1,2,2\n3,-1,2,3\n");
  write_file("res.csv", "time,x_1,v_1,c_1\n0,0,1,2\n1,1,-1,2\n2,2,1,2\n3,4,1,5\n");
  const Outcome o = macrostep("compare res.csv ref.csv");
  EXPECT_EQ(o.status, 0) << o.err;
  // Per variable its largest difference and its NRMSE; the constant c_1 by its difference.
  EXPECT_NE(o.out.find("  x_1       1.000000e+00  4.472136e-01\n"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("  v_1       2.000000e+00  1.000000e+00\n"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("  c_1       3.000000e+00  near-constant\n"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("largest NRMSE: 1.000000e+00 (v_1), of 2 variables"), std::string::npos)
      << o.out;
  EXPECT_NE(o.out.find("near-constant reference: 1 variable (c_1), largest |difference| "
                       "3.000000e+00 (c_1)"),
            std::string::npos)
      << o.out;
  EXPECT_NE(o.out.find("positions (x_*): 4.472136e-01, velocities (v_*): 1.000000e+00\n"),
            std::string::npos)
      << o.out;
  EXPECT_NEAR(final_nrmse(o.out), std::sqrt(1.2), 1e-6) << o.out;

  const Outcome missing = macrostep("compare res.csv nothing.csv");
  EXPECT_EQ(missing.status, 2);
  EXPECT_NE(missing.err.find("nothing.csv: cannot open"), std::string::npos) << missing.err;
  write_file("other.csv", "time,y_1\n0,1\n1,2\n2,3\n3,4\n");
  const Outcome mismatch = macrostep("compare res.csv other.csv");
  EXPECT_EQ(mismatch.status, 2);
  EXPECT_NE(mismatch.err.find("column 'x_1' of the result is not in the reference"),
            std::string::npos)
      << mismatch.err;
}

// --weights time: the hand-computed case of test_nrmse (times 0, 1, 3 weigh 0.5, 1.5, 1; the
// result off by 1 in the first row: sqrt(0.5/3)); another name is refused with the allowed ones.
TEST_F(App, CompareWeightsTheRowsByTimeWhenAsked) {
  write_file("ref.csv", "time,x_1\n0,0\n1,2\n3,0\n");
  write_file("res.csv", "time,x_1\n0,1\n1,2\n3,0\n");
  const Outcome timed = macrostep("compare res.csv ref.csv --weights time");
  ASSERT_EQ(timed.status, 0) << timed.err;
  EXPECT_NE(timed.out.find("3 time points, each weighted by the time it stands for\n"),
            std::string::npos)
      << timed.out;
  EXPECT_NEAR(final_nrmse(timed.out), std::sqrt(0.5 / 3.0), 1e-6) << timed.out;
  EXPECT_NEAR(final_nrmse(macrostep("compare res.csv ref.csv").out), std::sqrt(3.0 / 8.0), 1e-6);
  const Outcome other = macrostep("compare res.csv ref.csv --weights rows");
  EXPECT_EQ(other.status, 2);
  EXPECT_NE(other.err.find("--weights 'rows' is not a weighting of the rows; allowed: equal, time"),
            std::string::npos)
      << other.err;
}

TEST_F(App, MonolithicRunWritesCouplingBodyStatesAndMetadata) {
  write_file("small.toml", kSmall);
  // Default name: small.monolithic.csv (small.csv is the co-simulation's).
  const Outcome o = macrostep("run small.toml --monolithic");
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.out.find("micro steps"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("x_5 ="), std::string::npos) << o.out;

  const auto t = macrostep::output::read_csv(path("small.monolithic.csv"));
  // The coupling variable of the cut, as a co-simulation of the same file writes it.
  EXPECT_EQ(t.columns, (std::vector<std::string>{"x_5", "v_5", "x_6", "v_6", "lambda_1"}));
  ASSERT_EQ(t.rows(), 21U);
  for (std::size_t i = 0; i < t.rows(); ++i) EXPECT_EQ(t.time[i], static_cast<double>(i) * 1e-4);
  EXPECT_EQ(t.time.back(), 2.0e-3);
  EXPECT_NE(t.values[0].front(), t.values[0].back());  // it moved

  const auto meta = nlohmann::json::parse(read_file("small.monolithic.json"));
  EXPECT_EQ(meta.at("status"), "completed");
  EXPECT_EQ(meta.at("mode"), "monolithic");
  EXPECT_EQ(meta.at("config").at("text"), kSmall);
  EXPECT_EQ(meta.at("config").at("path"), "small.toml");
  EXPECT_EQ(meta.at("model").at("masses"), 10);
  EXPECT_EQ(meta.at("partition").at("coupling_bodies"), nlohmann::json({5, 6}));
  EXPECT_EQ(meta.at("solver").at("rtol"), 1e-6);
  EXPECT_EQ(meta.at("solver").at("atol_pos"), 1e-3 * 1e-6);
  EXPECT_GT(meta.at("statistics").at("micro_steps").get<long>(), 20);
  EXPECT_GT(meta.at("statistics").at("residual_evals").get<long>(), 0);
  EXPECT_GT(meta.at("time").at("wall_ns").get<long>(), 0);
  EXPECT_EQ(meta.at("output").at("rows"), 21);
}

TEST_F(App, OptionsOverrideTheConfiguration) {
  write_file("small.toml", kSmall);
  const Outcome o = macrostep(
      "run small.toml --monolithic --all-states --stop-time 1e-3 --rtol 1e-8 "
      "--output all.csv");
  ASSERT_EQ(o.status, 0) << o.err;
  const auto t = macrostep::output::read_csv(path("all.csv"));
  ASSERT_EQ(t.columns.size(), 21U);
  EXPECT_EQ(t.columns.front(), "x_1");
  EXPECT_EQ(t.columns[19], "v_10");
  EXPECT_EQ(t.columns.back(), "lambda_1");
  EXPECT_EQ(t.rows(), 11U);
  EXPECT_EQ(t.time.back(), 1.0e-3);
  const auto meta = nlohmann::json::parse(read_file("all.json"));
  EXPECT_EQ(meta.at("solver").at("rtol"), 1e-8);
  EXPECT_EQ(meta.at("solver").at("atol_pos"), 1e-3 * 1e-8);  // follows --rtol
  EXPECT_EQ(meta.at("solver").at("atol_vel"), 1e-8);
  EXPECT_EQ(meta.at("output").at("all_states"), true);
}

TEST_F(App, ReferenceRunAndCompareMeasureTheMonolithicError) {
  write_file("small.toml", kSmall);
  const Outcome ref = macrostep("reference small.toml");  // default name: small.reference.csv
  ASSERT_EQ(ref.status, 0) << ref.err;
  const auto meta = nlohmann::json::parse(read_file("small.reference.json"));
  EXPECT_EQ(meta.at("mode"), "reference");
  EXPECT_EQ(meta.at("solver").at("rtol"), 1e-10);
  EXPECT_EQ(meta.at("solver").at("atol_pos"), 1e-13);
  EXPECT_EQ(meta.at("solver").at("atol_vel"), 1e-10);

  ASSERT_EQ(macrostep("run small.toml --monolithic --rtol 1e-4 --output loose.csv").status, 0);
  ASSERT_EQ(macrostep("run small.toml --monolithic --rtol 1e-7 --output tight.csv").status, 0);
  const Outcome loose = macrostep("compare loose.csv small.reference.csv");
  const Outcome tight = macrostep("compare tight.csv small.reference.csv");
  ASSERT_EQ(loose.status, 0) << loose.err;
  ASSERT_EQ(tight.status, 0) << tight.err;
  const double e_loose = final_nrmse(loose.out), e_tight = final_nrmse(tight.out);
  EXPECT_GT(e_loose, 0.0) << loose.out;
  EXPECT_GT(e_tight, 0.0) << tight.out;
  // A tighter tolerance is closer to the reference.
  EXPECT_LT(e_tight, e_loose);
  EXPECT_LT(e_loose, 1.0);
}

TEST_F(App, IntegrationFailureExitsOneAndLeavesValidFiles) {
  // At most 3 micro steps per output interval: IDA cannot reach the first output point.
  write_file("fail.toml", kSmall + "[solver]\nmax_steps = 3\n");
  const Outcome o = macrostep("run fail.toml --monolithic");
  EXPECT_EQ(o.status, 1);
  EXPECT_EQ(o.err.rfind("macrostep: integration failed at t = ", 0), 0U) << o.err;
  EXPECT_NE(o.err.find("micro steps"), std::string::npos) << o.err;
  const auto t = macrostep::output::read_csv(path("fail.monolithic.csv"));  // complete rows only
  EXPECT_EQ(t.rows(), 1U);
  EXPECT_EQ(t.time.front(), 0.0);
  const auto meta = nlohmann::json::parse(read_file("fail.monolithic.json"));
  EXPECT_EQ(meta.at("status"), "failed");
  EXPECT_GT(meta.at("error").at("time").get<double>(), 0.0);
  EXPECT_LT(meta.at("error").at("time").get<double>(), 1e-4);
  EXPECT_EQ(meta.at("output").at("rows"), 1);
}

TEST_F(App, CoSimulationWritesCouplingBodiesCouplingVariablesAndStatistics) {
  write_file("cosim.toml", kCosim);
  const Outcome o = macrostep("run cosim.toml");  // no --monolithic: the [cosim] table
  ASSERT_EQ(o.status, 0) << o.err;
  for (const char* part :
       {"co-simulation of cosim.toml", "exMD estimator", "lambda_1 =", "macro steps", "rejected",
        "mean H", "order histogram: kappa", "micro steps per subsystem", "time [s]", "solver",
        "idle", "snapshot", "process executor (worker processes as placed below"}) {
    EXPECT_NE(o.out.find(part), std::string::npos) << part << "\n" << o.out;
  }

  const auto t = macrostep::output::read_csv(path("cosim.csv"));
  EXPECT_EQ(t.columns, (std::vector<std::string>{"x_5", "v_5", "x_6", "v_6", "lambda_1"}));
  ASSERT_GT(t.rows(), 50U);
  EXPECT_EQ(t.time.front(), 0.0);
  EXPECT_EQ(t.time.back(), 0.02);
  for (std::size_t i = 1; i < t.rows(); ++i) ASSERT_GT(t.time[i], t.time[i - 1]) << i;

  const auto meta = nlohmann::json::parse(read_file("cosim.json"));
  EXPECT_EQ(meta.at("status"), "completed");
  EXPECT_EQ(meta.at("mode"), "cosimulation");
  EXPECT_EQ(meta.at("config").at("text"), kCosim);
  const auto& cosim = meta.at("cosim");
  EXPECT_EQ(cosim.at("scheme"), "explicit");
  EXPECT_EQ(cosim.at("estimator"), "exMD");
  EXPECT_EQ(cosim.at("step_size_mode"), "variable");
  EXPECT_EQ(cosim.at("order"), "auto");
  EXPECT_EQ(cosim.at("order_strategy"), "ida");
  EXPECT_EQ(cosim.at("rtol"), 1e-4);
  EXPECT_DOUBLE_EQ(cosim.at("atol_pos").get<double>(), 1e-7);
  EXPECT_EQ(cosim.at("initial_step_size"), 1e-9);
  EXPECT_EQ(cosim.at("rollback"), true);
  EXPECT_EQ(meta.at("solver").at("rtol"), 1e-6);  // the subsystems keep [solver]

  const auto& st = meta.at("statistics");
  const auto steps = st.at("macro_steps").get<std::size_t>();
  EXPECT_EQ(t.rows(), steps + 1);  // output_every = 1: every accepted point and T_0
  EXPECT_EQ(meta.at("output").at("rows"), t.rows());
  EXPECT_GE(st.at("rejected").get<long>(), 0);
  EXPECT_DOUBLE_EQ(st.at("failed_step_ratio").get<double>(),
                   st.at("rejected").get<double>() / static_cast<double>(steps));
  EXPECT_EQ(st.at("corrector_failures"), 0);
  EXPECT_DOUBLE_EQ(st.at("mean_step").get<double>(), 0.02 / static_cast<double>(steps));
  EXPECT_LE(st.at("step_min").get<double>(), st.at("mean_step").get<double>());
  EXPECT_GE(st.at("step_max").get<double>(), st.at("mean_step").get<double>());
  ASSERT_EQ(st.at("order_histogram").size(), 6U);
  double step_share = 0.0, time_share = 0.0;
  std::size_t counted = 0;
  for (const auto& bin : st.at("order_histogram")) {
    step_share += bin.at("step_share").get<double>();
    time_share += bin.at("time_share").get<double>();
    counted += bin.at("steps").get<std::size_t>();
  }
  EXPECT_EQ(counted, steps);
  EXPECT_NEAR(step_share, 1.0, 1e-12);
  EXPECT_NEAR(time_share, 1.0, 1e-9);
  ASSERT_EQ(st.at("subsystems").size(), 2U);
  for (const auto& sub : st.at("subsystems")) {
    EXPECT_GT(sub.at("micro_steps").get<long>(), 0);
    EXPECT_GT(sub.at("residual_evals").get<long>(), 0);
    EXPECT_GT(sub.at("jacobian_evals").get<long>(), 0);
    EXPECT_GE(sub.at("solver_s").get<double>(), 0.0);
  }
  EXPECT_EQ(st.at("subsystems")[1].at("masses"), nlohmann::json({6, 10}));
  for (const char* key : {"solver_s", "idle_s", "extra_runs_s", "interface_s", "snapshot_s",
                          "output_s", "total_s", "wall_s"}) {
    EXPECT_GE(meta.at("time").at(key).get<double>(), 0.0) << key;
  }
  EXPECT_GT(meta.at("time").at("wall_s").get<double>(), 0.0);

  // T_0 of the co-simulation and of the monolithic run are the same state; the monolithic
  // run evaluates the cut element's law as the master does, so lambda_1 agrees.
  ASSERT_EQ(macrostep("run cosim.toml --monolithic --output mono.csv").status, 0);
  const auto m = macrostep::output::read_csv(path("mono.csv"));
  ASSERT_EQ(m.columns, t.columns);
  for (std::size_t j = 0; j < t.columns.size(); ++j) {
    EXPECT_DOUBLE_EQ(m.values[j].front(), t.values[j].front()) << t.columns[j];
  }
}

// The controller holds the local error per macro step at rtol; over the run the global error
// of the coupling-body states and lambda, normalised by the reference's spread (NRMSE, seed
// 000 Eq. 5.1), measures about 15 * rtol on this chain (1.5e-3 at rtol 1e-4, 4e-5 at 1e-6).
// Bound: 50 * rtol, and a hundredfold tighter rtol must cut the NRMSE at least tenfold.
TEST_F(App, CoSimulationAgreesWithTheReferenceToItsTolerance) {
  write_file("cosim.toml", kCosim);
  ASSERT_EQ(macrostep("reference cosim.toml").status, 0);
  ASSERT_EQ(macrostep("run cosim.toml").status, 0);
  const Outcome loose = macrostep("compare cosim.csv cosim.reference.csv");
  ASSERT_EQ(loose.status, 0) << loose.err;
  EXPECT_NE(loose.out.find("reference interpolated"), std::string::npos) << loose.out;
  EXPECT_NE(loose.out.find("states (x_*, v_*): "), std::string::npos) << loose.out;
  EXPECT_NE(loose.out.find("coupling variables (lambda_*): "), std::string::npos) << loose.out;
  const double e_loose = final_nrmse(loose.out);
  EXPECT_GT(e_loose, 0.0) << loose.out;
  EXPECT_LT(e_loose, 50 * 1e-4) << loose.out;

  ASSERT_EQ(macrostep("run cosim.toml --rtol 1e-6 --output tight.csv").status, 0);
  const auto meta = nlohmann::json::parse(read_file("tight.json"));
  EXPECT_EQ(meta.at("cosim").at("rtol"), 1e-6);  // --rtol is the controller's here
  EXPECT_DOUBLE_EQ(meta.at("cosim").at("atol_u").get<double>(), 1e-2);  // follows it
  EXPECT_EQ(meta.at("solver").at("rtol"), 1e-6);                        // [solver] default
  const Outcome tight = macrostep("compare tight.csv cosim.reference.csv");
  ASSERT_EQ(tight.status, 0) << tight.err;
  const double e_tight = final_nrmse(tight.out);
  EXPECT_GT(e_tight, 0.0);
  EXPECT_LT(e_tight, 50 * 1e-6) << tight.out;
  EXPECT_LT(e_tight, e_loose / 10.0);
}

// reference --at RESULT: the reference on the result's own time points (MODELS.md §4.1), so
// compare needs no interpolation; the co-simulation error is then measured exactly.
TEST_F(App, ReferenceAtTheMacroPointsOfACoSimulation) {
  write_file("cosim.toml", kCosim);
  ASSERT_EQ(macrostep("run cosim.toml").status, 0);
  const Outcome ref = macrostep("reference cosim.toml --at cosim.csv --output at.csv");
  ASSERT_EQ(ref.status, 0) << ref.err;
  const auto result = macrostep::output::read_csv(path("cosim.csv"));
  const auto reference = macrostep::output::read_csv(path("at.csv"));
  EXPECT_EQ(reference.time, result.time);
  EXPECT_EQ(reference.columns, result.columns);
  const auto meta = nlohmann::json::parse(read_file("at.json"));
  EXPECT_EQ(meta.at("simulation").at("output_times"), "given");
  EXPECT_EQ(meta.at("simulation").at("end_time"), 0.02);
  const Outcome cmp = macrostep("compare cosim.csv at.csv");
  ASSERT_EQ(cmp.status, 0) << cmp.err;
  EXPECT_EQ(cmp.out.find("interpolated"), std::string::npos) << cmp.out;
  EXPECT_GT(final_nrmse(cmp.out), 0.0);
  EXPECT_LT(final_nrmse(cmp.out), 50 * 1e-4) << cmp.out;

  const Outcome both = macrostep("reference cosim.toml --at cosim.csv --stop-time 0.01");
  EXPECT_EQ(both.status, 2);
  EXPECT_EQ(both.err,
            "macrostep: --stop-time and --at exclude each other (--at ends at its last time)\n");
  const Outcome missing = macrostep("reference cosim.toml --at none.csv");
  EXPECT_EQ(missing.status, 2);
  EXPECT_EQ(missing.err.rfind("macrostep: --at: none.csv: cannot open", 0), 0U) << missing.err;
  // A time before the start is named as such (not as one out of order).
  write_file("early.csv", "time,x_1\n-0.01,0\n0.01,1\n");
  const Outcome early = macrostep("reference cosim.toml --at early.csv");
  EXPECT_EQ(early.status, 2);
  EXPECT_EQ(early.err, "macrostep: the times to write at must be finite and >= 0 (got -0.01)\n");
  write_file("back.csv", "time,x_1\n0.01,0\n0.005,1\n");
  const Outcome back = macrostep("reference cosim.toml --at back.csv");
  EXPECT_EQ(back.status, 2);
  EXPECT_NE(back.err.find("(got 0.005 after 0.01)"), std::string::npos) << back.err;
}

TEST_F(App, FixedStepCoSimulationWithEveryStateAndOptionOverrides) {
  write_file("cosim.toml", kCosim);
  const Outcome o = macrostep(
      "run cosim.toml --scheme explicit --estimator none --step-size 1e-5 --order 1 "
      "--executor inprocess --threads 2 --stop-time 0.01 --all-states --output fixed.csv");
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.out.find("fixed H = 1e-05 s (exH), kappa = 1"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("in-process executor, 2 threads"), std::string::npos) << o.out;
  const auto t = macrostep::output::read_csv(path("fixed.csv"));
  ASSERT_EQ(t.columns.size(), 21U);  // x_1, v_1, ..., x_10, v_10, lambda_1
  EXPECT_EQ(t.columns.front(), "x_1");
  EXPECT_EQ(t.columns[11], "v_6");
  EXPECT_EQ(t.columns.back(), "lambda_1");
  EXPECT_EQ(t.time.back(), 0.01);
  // Listing 5.1: a ramp to 2H, then the grid 2H + k H.
  std::size_t on_grid = 0;
  for (std::size_t i = 1; i < t.rows(); ++i) {
    if (t.time[i - 1] >= 2e-5) {
      EXPECT_NEAR(t.time[i] - t.time[i - 1], 1e-5, 1e-15) << i;
      ++on_grid;
    }
  }
  EXPECT_EQ(on_grid, 998U);
  const auto meta = nlohmann::json::parse(read_file("fixed.json"));
  EXPECT_EQ(meta.at("cosim").at("method"), "exH");
  EXPECT_EQ(meta.at("cosim").at("step_size"), 1e-5);
  EXPECT_EQ(meta.at("cosim").at("kappa"), 1);
  EXPECT_EQ(meta.at("cosim").at("rollback"), false);
  EXPECT_EQ(meta.at("cosim").at("threads"), 2);
  EXPECT_EQ(meta.at("statistics").at("rejected"), 0);
  EXPECT_EQ(meta.at("output").at("all_states"), true);

  // The same states as a monolithic run of every state, to the coupling error.
  ASSERT_EQ(macrostep("reference cosim.toml --stop-time 0.01 --all-states").status, 0);
  const Outcome cmp = macrostep("compare fixed.csv cosim.reference.csv");
  ASSERT_EQ(cmp.status, 0) << cmp.err;
  EXPECT_NE(cmp.out.find("2-norm over 21 variables"), std::string::npos) << cmp.out;
  EXPECT_LT(final_nrmse(cmp.out), 1e-2) << cmp.out;
}

TEST_F(App, OutputEveryWritesEveryKthMacroPointAndTheLast) {
  write_file("cosim.toml", kCosim + "output_every = 7\n");
  ASSERT_EQ(macrostep("run cosim.toml").status, 0);
  const auto meta = nlohmann::json::parse(read_file("cosim.json"));
  const auto steps = meta.at("statistics").at("macro_steps").get<std::size_t>();
  const auto t = macrostep::output::read_csv(path("cosim.csv"));
  // T_0, T_7, T_14, ... and the last point if it is not a multiple of 7.
  EXPECT_EQ(t.rows(), 1 + steps / 7 + (steps % 7 == 0 ? 0 : 1));
  EXPECT_EQ(t.time.front(), 0.0);
  EXPECT_EQ(t.time.back(), 0.02);
  EXPECT_EQ(meta.at("output").at("output_every"), 7);
}

TEST_F(App, CoSimulationCommandLineErrorsExitTwoBeforeAnyWork) {
  write_file("cosim.toml", kCosim);
  const auto expect_error = [&](const std::string& args, const std::string& message) {
    const Outcome o = macrostep("run cosim.toml " + args + " --output r.csv");
    EXPECT_EQ(o.status, 2) << args;
    EXPECT_EQ(o.err, "macrostep: " + message + "\n") << args;
    EXPECT_EQ(o.out, "") << args;
    EXPECT_FALSE(fs::exists(path("r.csv"))) << args;
  };
  expect_error("--estimator exH",
               "--estimator exH: 'exH' is not an estimator name; the fixed macro step exH is "
               "--estimator none --step-size H (allowed: none, exLE, exMD, exCV (explicit), imMD, "
               "imCV (implicit))");
  expect_error("--estimator imMD",
               "--estimator imMD does not belong to cosim.scheme = \"explicit\" (allowed: exMD, "
               "exLE, exCV, none)");
  expect_error("--scheme implicit --estimator exCV",
               "--estimator exCV does not belong to --scheme implicit (allowed: imMD, imCV, none)");
  expect_error("--scheme waveform --estimator imCV --jacobian sap",
               "--jacobian applies to the implicit and semi-implicit schemes; --scheme waveform "
               "has no interface Jacobian");
  expect_error("--jacobian fd",
               "--jacobian applies to the implicit and semi-implicit schemes; cosim.scheme = "
               "\"explicit\" has no interface Jacobian");
  expect_error("--scheme implicit --jacobian numeric",
               "--jacobian 'numeric' is not an interface Jacobian; allowed: fd, sap, reuse, "
               "quasi-newton, heun, broyden");
  expect_error("--approximation c1",
               "--approximation c1: \"c1\" needs estimator = \"none\" (fixed H) or \"exCV\" "
               "(got \"exMD\"): the state estimators assume a polynomial through the newest "
               "point (METHODS D-7)");
  expect_error("--approximation lin-2-3-opt --estimator none --step-size 1e-5",
               "approximation \"lin-2-3-opt\" of lambda_1 needs the rate du/dt from the outputs, "
               "and its coupling law has a damper (the rate would need accelerations; seed 003 "
               "§2.2.2): use a b = 0 set such as \"const-2-2-b0\", or an undamped coupling");
  expect_error("--order 7", "--order must be auto or an integer 0..5 (got 7)");
  expect_error("--order two", "--order must be auto or an integer 0..5 (got two)");
  expect_error("--scheme gauss-seidel",
               "cosim.estimator = exMD does not belong to --scheme gauss-seidel (allowed: none: a "
               "fixed step size, METHODS D-10); give --estimator with one of them");
  // A key of the scheme that --scheme gives, by --set, is the run's; of another scheme, refused.
  expect_error("--set cosim.sequence=[1]",
               "cosim.scheme = \"explicit\": cosim.sequence applies only to the gauss-seidel "
               "scheme");
  expect_error("--scheme semi-implicit --estimator imMD --set cosim.final_pass=false",
               "--scheme semi-implicit: cosim.final_pass applies only to the implicit scheme and "
               "auto's implicit steps");
  {
    const Outcome o = macrostep(
        "run cosim.toml --scheme gauss-seidel --estimator none --step-size 1e-5 --stop-time 1e-4 "
        "--set cosim.sequence=[2,1] --output gs.csv");
    EXPECT_EQ(o.status, 0) << o.err;
  }
  expect_error("--scheme jacobi",
               "--scheme 'jacobi' is not a scheme; allowed: explicit, implicit, semi-implicit, "
               "waveform, gauss-seidel, auto");
#ifdef MACROSTEP_MPI_BRIDGE
  expect_error("--executor mpi",
               "--executor mpi needs an MPI job: start it as mpirun -np R macrostep run CONFIG "
               "--executor mpi (R >= 2: rank 0 is the master, every other rank a node agent; as "
               "root add --allow-run-as-root, with more ranks than cores --oversubscribe)");
#else
  // The sanitizer builds leave the bridge out ("MPI not built in" is a usage error).
  expect_error("--executor mpi",
               "--executor mpi: this macrostep is built without the MPI bridge (MPI was not "
               "found, or MACROSTEP_WITH_MPI=OFF); install libopenmpi-dev and rebuild");
#endif
  expect_error("--estimator none",
               "--estimator none needs a fixed macro-step size: give --step-size H (or "
               "cosim.step_size)");
  expect_error("--estimator none --step-size 1e-5 --order auto",
               "--estimator none with --order auto: order control needs an error estimator; "
               "give a fixed degree --order K (0..5)");
  expect_error("--estimator none --step-size 1e-5 --rtol 1e-4",
               "--rtol sets the macro-step controller's tolerance, and --estimator none (a fixed "
               "step) has no controller; the subsystem tolerance is [solver] rtol");
  expect_error("--rtol 0", "--rtol must be in (0, 1) (got 0)");
  expect_error("--step-size -1e-5", "--step-size must be > 0 (got -1e-05)");
  expect_error("--threads -1", "--threads must be >= 0 (got -1)");
  expect_error("--hang-timeout -1",
               "--hang-timeout must be 0 (off) or a number of seconds up to 1e6 (got -1)");
  expect_error("--hang-timeout nan",
               "--hang-timeout must be 0 (off) or a number of seconds up to 1e6 (got nan)");
  expect_error("--monolithic --hang-timeout 5",
               "--hang-timeout configures a co-simulation and does not apply to --monolithic");
  expect_error("--max-restarts -1", "--max-restarts must be an integer 0..1000 (got -1)");
  expect_error("--executor inprocess --max-restarts 2",
               "--max-restarts applies to the process executor (--executor processes): a "
               "subsystem in the master's own process cannot crash alone");
  expect_error("--monolithic --max-restarts 2",
               "--max-restarts configures a co-simulation and does not apply to --monolithic");
  expect_error("--executor inprocess --master-hosts-first",
               "--master-hosts-first applies to the process executor (--executor processes); the "
               "in-process executor runs every subsystem in the master anyway");
  expect_error(
      "--monolithic --master-hosts-first",
      "--master-hosts-first configures a co-simulation and does not apply to --monolithic");
  expect_error("--monolithic --order 2",
               "--order configures a co-simulation and does not apply to --monolithic");
  EXPECT_EQ(macrostep("run cosim.toml --threads many").status, 2);

  // A configuration that cannot be co-simulated: one subsystem.
  std::string single = kCosim;
  single.replace(single.find("subsystems = 2"), 14, "subsystems = 1");
  write_file("single.toml", single);
  const Outcome one = macrostep("run single.toml");
  EXPECT_EQ(one.status, 2);
  EXPECT_EQ(one.err,
            "single.toml:17: partition: a co-simulation needs at least two subsystems (got 1); "
            "run the whole model with --monolithic\n");
  EXPECT_FALSE(fs::exists(path("single.csv")));
  EXPECT_EQ(macrostep("run single.toml --monolithic").status, 0);  // the same file runs whole
}

TEST_F(App, CoSimulationFailureNamesTheSubsystemAndLeavesValidFiles) {
  // Fixed H = 1e-4 s with at most 13 IDA steps per macro step, the history kept across the
  // jumps: the first macro steps (the Listing 5.1 ramp from 1e-9 s) fit, a later one does not
  // (measured: 11..16 steps per macro step fail between t = 0.9 and 8.7 ms, 10 fail at once, 17
  // pass), and a fixed-step run stops at the first subsystem failure.
  std::string text = kCosim;
  text.replace(text.find("[cosim]"), std::string::npos,
               "[solver]\nmax_steps = 13\n[cosim]\nestimator = \"none\"\nstep_size = 1.0e-4\n"
               "jump_handling = \"keep\"\nmin_micro_steps = 0\n");
  write_file("fail.toml", text);
  const Outcome o = macrostep("run fail.toml");
  EXPECT_EQ(o.status, 1);
  EXPECT_EQ(o.err.rfind("macrostep: co-simulation failed at t = ", 0), 0U) << o.err;
  EXPECT_NE(o.err.find("failed in the macro step"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("more than 13 micro steps"), std::string::npos) << o.err;
  const auto t = macrostep::output::read_csv(path("fail.csv"));  // complete rows only
  ASSERT_GE(t.rows(), 2U);
  EXPECT_EQ(t.time.front(), 0.0);
  const auto meta = nlohmann::json::parse(read_file("fail.json"));
  EXPECT_EQ(meta.at("status"), "failed");
  const auto& error = meta.at("error");
  EXPECT_EQ(error.at("cause"), "subsystem");
  const int subsystem = error.at("subsystem").get<int>();
  EXPECT_TRUE(subsystem == 1 || subsystem == 2) << subsystem;
  EXPECT_NE(o.err.find("subsystem " + std::to_string(subsystem) + " failed"), std::string::npos);
  EXPECT_EQ(error.at("time").get<double>(), t.time.back());  // T_N of the failed step
  EXPECT_EQ(meta.at("output").at("rows"), t.rows());
  EXPECT_EQ(meta.at("statistics").at("macro_steps").get<std::size_t>() + 1, t.rows());
}

TEST_F(App, ProgressLineOnRequest) {
  write_file("cosim.toml", kCosim);
  const Outcome o = macrostep("run cosim.toml --progress");
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_EQ(o.err.front(), '\r') << o.err;
  EXPECT_NE(o.err.find("t = 0.02 / 0.02 s (100.0 %), H = "), std::string::npos) << o.err;
  EXPECT_NE(o.err.find(" accepted, "), std::string::npos) << o.err;
  EXPECT_NE(o.err.find(" rejected"), std::string::npos) << o.err;
  EXPECT_EQ(o.err.back(), '\n');
  // Not a terminal and no --progress: nothing on stderr.
  EXPECT_EQ(macrostep("run cosim.toml").err, "");
}

}  // namespace

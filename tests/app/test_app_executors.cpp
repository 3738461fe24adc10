// End-to-end tests of the `macrostep` executable: one result however it runs (placement, Gauss-
// Seidel, approximations in processes and in-process), the micro-step stop strategies and the
// jump-handling defaults.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "binary_fixture.hpp"

namespace {

using macrostep::testing::final_nrmse;
using macrostep::testing::kCosim;
using macrostep::testing::Outcome;

class App : public macrostep::testing::BinaryTest {};

}  // namespace

// Contract 4: the placement of the worker processes is explicit; the map is printed and goes
// into the metadata, and pinning does not change the result (contract 1).
TEST_F(App, PinnedProcessRunRecordsItsPlacementAndKeepsTheResult) {
  write_file("cosim.toml", kCosim);
  const Outcome pinned = macrostep("run cosim.toml --executor processes --pin compact");
  ASSERT_EQ(pinned.status, 0) << pinned.err;
  EXPECT_NE(pinned.out.find("placement --pin compact"), std::string::npos) << pinned.out;
  const auto meta = nlohmann::json::parse(read_file("cosim.json"));
  const auto& placement = meta.at("placement");
  EXPECT_EQ(placement.at("policy"), "compact");
  EXPECT_EQ(placement.at("subsystems").size(), 2U);
  EXPECT_EQ(placement.at("pus_per_subsystem"), 2);  // exMD: one comparison run per subsystem
  const std::string pinned_csv = read_file("cosim.csv");
  ASSERT_EQ(macrostep("run cosim.toml --executor inprocess").status, 0);
  EXPECT_EQ(read_file("cosim.csv"), pinned_csv);

  const Outcome bad = macrostep("run cosim.toml --pin bogus");
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("'bogus' is not a policy"), std::string::npos) << bad.err;
  EXPECT_EQ(macrostep("run cosim.toml --monolithic --pin compact").status, 2);
}

// The continuous and seed-003 approximations travel as support points (no protocol change): a run
// in worker processes is bit-identical to the in-process run (DESIGN contract 1), and differs
// from the Lagrange run.
// Gauss–Seidel (METHODS §3.2; its steps against the exact recurrence: tests/schemes
// test_gauss_seidel.cpp): the same bytes in processes, both sequences run, the reversed one
// differs, and the error against the reference is that of the Jacobi run at the same H.
TEST_F(App, GaussSeidelGivesTheSameBitsInProcessesAndFollowsItsSequence) {
  write_file("cosim.toml", kCosim);
  ASSERT_EQ(macrostep("reference cosim.toml --output ref.csv").status, 0);
  const std::string common =
      "run cosim.toml --scheme gauss-seidel --estimator none --step-size 1e-5 --order 2";
  const Outcome in = macrostep(common + " --executor inprocess --output in.csv");
  const Outcome pr = macrostep(common + " --executor processes --output pr.csv");
  ASSERT_EQ(in.status, 0) << in.err;
  ASSERT_EQ(pr.status, 0) << pr.err;
  EXPECT_EQ(read_file("in.csv"), read_file("pr.csv"));
  const auto meta = nlohmann::json::parse(read_file("in.json"));
  EXPECT_EQ(meta.at("cosim").at("scheme"), "gauss-seidel") << meta.at("cosim").dump();
  const Outcome cmp = macrostep("compare in.csv ref.csv");
  ASSERT_EQ(cmp.status, 0) << cmp.err;
  EXPECT_LT(final_nrmse(cmp.out), 1e-3) << cmp.out;

  std::string gs = kCosim;
  gs.replace(gs.find("estimator = \"exMD\""), 18,
             "scheme = \"gauss-seidel\"\nestimator = \"none\"\nstep_size = 1e-5\norder = 2");
  write_file("reversed.toml", gs + "sequence = [2, 1]\n");
  const Outcome rev = macrostep("run reversed.toml --output rev.csv");
  ASSERT_EQ(rev.status, 0) << rev.err;
  EXPECT_NE(read_file("rev.csv"), read_file("in.csv"));
  write_file("short.toml", gs + "sequence = [2]\n");
  const Outcome bad = macrostep("run short.toml");
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("short.toml:29: cosim.sequence: must name each of the 2 subsystems once"),
            std::string::npos)
      << bad.err;
}

TEST_F(App, ApproximationsGiveTheSameBitsInProcessesAndInProcess) {
  write_file("cosim.toml", kCosim);
  std::string lagrange;
  for (const char* a : {"lagrange", "c1", "const-2-2-b0"}) {
    const std::string common =
        std::string("run cosim.toml --estimator none --step-size 1e-5 --order 2 --approximation ") +
        a;
    const Outcome in = macrostep(common + " --executor inprocess --output in.csv");
    const Outcome pr = macrostep(common + " --executor processes --output pr.csv");
    ASSERT_EQ(in.status, 0) << in.err;
    ASSERT_EQ(pr.status, 0) << pr.err;
    EXPECT_EQ(read_file("in.csv"), read_file("pr.csv")) << a;
    if (std::string(a) == "lagrange") {
      lagrange = read_file("in.csv");
    } else {
      EXPECT_NE(read_file("in.csv"), lagrange) << a;
      EXPECT_NE(in.out.find(std::string("approximation: ") + a), std::string::npos) << in.out;
    }
  }
}

// D-50 (cosim.final_pass = false) is the master's decision on values every executor delivers
// alike: worker processes give the in-process bytes (contract 1), with fewer corrector passes
// than the run with the final pass; it is the default with the fd Jacobian; the key belongs to
// the implicit scheme (and auto) only.
TEST_F(App, ImplicitRunWithoutTheFinalPassIsTheSameInProcesses) {
  write_file("cosim.toml", kCosim);
  const std::string common =
      "run cosim.toml --set cosim.scheme=implicit --set cosim.estimator=imMD";
  const std::string skip = " --set cosim.final_pass=false";
  const Outcome in = macrostep(common + skip + " --executor inprocess --output in.csv");
  const Outcome pr = macrostep(common + skip + " --executor processes --output pr.csv");
  const Outcome with =
      macrostep(common + " --set cosim.final_pass=true --executor inprocess --output with.csv");
  const Outcome fd = macrostep(common + " --executor inprocess --output default.csv");
  ASSERT_EQ(in.status, 0) << in.err;
  ASSERT_EQ(pr.status, 0) << pr.err;
  ASSERT_EQ(with.status, 0) << with.err;
  ASSERT_EQ(fd.status, 0) << fd.err;
  EXPECT_EQ(read_file("in.csv"), read_file("pr.csv"));
  EXPECT_EQ(read_file("in.csv"), read_file("default.csv")) << "fd: no final pass by default";
  const auto passes = [this](const char* json) {
    return nlohmann::json::parse(read_file(json))
        .at("statistics")
        .at("corrector")
        .at("mean_passes")
        .get<double>();
  };
  EXPECT_LT(passes("in.json"), passes("with.json"));
  const Outcome bad = macrostep("run cosim.toml --set cosim.final_pass=false");
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("final_pass"), std::string::npos) << bad.err;
}

namespace {

// [solver] micro_step_stop (METHODS §6.6, seed 000 §4.3, K-4.3). Overshoot (option (a)) runs
// only where D-36 allows it and gives the same bytes in-process and in worker processes
// (contract 1); no micro step is longer than H; a refused combination is one line, exit 2.
TEST_F(App, OvershootRunsOnlyWithFixedStepsAndIsTheSameInEveryExecutor) {
  const std::string config = R"(description = "overshoot test chain"
)" + macrostep::testing::kTestChainModel +
                             R"([solver]
micro_step_stop = "overshoot"
[simulation]
end_time = 0.002
output_interval = 1.0e-4
[cosim]
estimator = "none"
step_size = 1.0e-5
)";
  write_file("over.toml", config);
  const Outcome in = macrostep("run over.toml --executor inprocess --output in.csv");
  ASSERT_EQ(in.status, 0) << in.err;
  const Outcome pr = macrostep("run over.toml --executor processes --output pr.csv");
  ASSERT_EQ(pr.status, 0) << pr.err;
  EXPECT_EQ(read_file("in.csv"), read_file("pr.csv"));
  const auto meta = nlohmann::json::parse(read_file("in.json"));
  // Overshoot's own jump defaults: the history kept, no micro-step floor.
  EXPECT_EQ(meta.at("cosim").at("jump_handling"), "keep");
  EXPECT_EQ(meta.at("cosim").at("min_micro_steps"), 0);
  for (const auto& s : meta.at("statistics").at("subsystems")) {
    EXPECT_GT(s.at("micro_steps").get<long>(), 0);
    EXPECT_LE(s.at("micro_step_mean_s").get<double>(), 1.0e-5 * (1.0 + 1e-12));
    EXPECT_GT(s.at("micro_step_std_s").get<double>(), 0.0);  // IDA starts small and grows
    // The micro steps add up to where IDA stands: past the end, by less than one macro step.
    const double reached =
        s.at("micro_step_mean_s").get<double>() * s.at("micro_steps").get<double>();
    EXPECT_GE(reached, 0.002 * (1.0 - 1e-9));
    EXPECT_LT(reached, 0.002 + 1.0e-5);
  }
  // A checkpoint would export an interpolated state: refused where checkpoints are refused.
  const Outcome ckpt = macrostep("run over.toml --checkpoint-every 10steps --output x.csv");
  EXPECT_EQ(ckpt.status, 2) << ckpt.err;
  EXPECT_EQ(ckpt.err.rfind("macrostep: --checkpoint-every does not work with [solver] "
                           "micro_step_stop = \"overshoot\"",
                           0),
            0U)
      << ckpt.err;
  for (const std::string& extra :
       {std::string("--estimator exMD"), std::string("--scheme implicit"),
        std::string("--max-restarts 1"), std::string("--jump-handling restart")}) {
    const Outcome o = macrostep("run over.toml " + extra + " --output x.csv");
    EXPECT_EQ(o.status, 2) << extra << "\n" << o.err;
    EXPECT_EQ(o.err.rfind("macrostep: over.toml:", 0), 0U) << extra << "\n" << o.err;
    EXPECT_NE(o.err.find("solver.micro_step_stop: \"overshoot\""), std::string::npos) << o.err;
    EXPECT_NE(o.err.find("(METHODS D-36)"), std::string::npos) << o.err;
  }
}

// The jump handling a run uses where neither the file nor the command line names one
// (methods.md §2.2): the history shifted and two micro steps per macro step; either given, it is
// the given one. The metadata records what ran.
TEST_F(App, JumpHandlingDefaultsToTheShiftedHistoryWithTwoMicroSteps) {
  write_file("jumps.toml", kCosim);
  const Outcome d =
      macrostep("run jumps.toml --executor inprocess --stop-time 0.002 --output d.csv");
  ASSERT_EQ(d.status, 0) << d.err;
  const auto defaults = nlohmann::json::parse(read_file("d.json")).at("cosim");
  EXPECT_EQ(defaults.at("jump_handling"), "shift");
  EXPECT_EQ(defaults.at("min_micro_steps"), 2);
  EXPECT_NE(d.out.find("input jumps at macro points: shift history, micro steps <= H/2"),
            std::string::npos)
      << d.out;
  const Outcome k = macrostep(
      "run jumps.toml --executor inprocess --stop-time 0.002 --jump-handling keep "
      "--min-micro-steps 0 --output k.csv");
  ASSERT_EQ(k.status, 0) << k.err;
  const auto given = nlohmann::json::parse(read_file("k.json")).at("cosim");
  EXPECT_EQ(given.at("jump_handling"), "keep");
  EXPECT_EQ(given.at("min_micro_steps"), 0);
  EXPECT_NE(read_file("d.csv"), read_file("k.csv"));
}

}  // namespace

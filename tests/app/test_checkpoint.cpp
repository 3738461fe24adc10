// Checkpoint / resume end to end: `macrostep run --checkpoint-every` killed with
// SIGKILL at a random macro step, or stopped with SIGTERM, then `macrostep resume`; the CSV must
// be byte-identical to an uninterrupted run's (DESIGN.md contracts 1, 2: the exported IDA
// workspaces and controller state continue bit-identically). And the refusals of checkpoints
// that cannot be used (exit 2, one clear message).
#include <capnp/message.h>
#include <capnp/serialize.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "../support/child_processes.hpp"
#include "binary_fixture.hpp"
#include "macrostep/checkpoint/checkpoint.hpp"
#include "macrostep/ipc/capnp_bytes.hpp"
#include "macrostep/ipc/schema/checkpoint.capnp.h"
#include "macrostep/output/csv.hpp"

namespace {

namespace fs = std::filesystem;
using macrostep::testing::Outcome;

class Checkpoint : public macrostep::testing::BinaryTest {
 protected:
  // Starts `macrostep <args...>` in the test directory, output to run.out / run.err.
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
  // Runs `args` (a `run` with --checkpoint-every) and sends `signal` once the CSV holds `rows`
  // rows and a checkpoint exists; returns the exit status (-signal when killed), or 0 when the
  // run ended first.
  int interrupt_at(const std::vector<std::string>& args, std::size_t rows, int signal,
                   const std::string& csv, const std::string& ckpt) const {
    const pid_t pid = start(args);
    int status = 0;
    while (::waitpid(pid, &status, WNOHANG) == 0) {
      if (lines(csv) > rows && fs::exists(path(ckpt))) {
        ::kill(pid, signal);
        EXPECT_EQ(::waitpid(pid, &status, 0), pid);
        return WIFSIGNALED(status) ? -WTERMSIG(status) : WEXITSTATUS(status);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return WIFSIGNALED(status) ? -WTERMSIG(status) : WEXITSTATUS(status);
  }

  // The uninterrupted run, then the same run killed with SIGKILL at a random row and resumed:
  // the CSVs are byte-identical. `extra`: the scheme and executor options.
  void kill_and_resume(const std::vector<std::string>& extra) {
    write_file("chain.toml", kChain);
    std::vector<std::string> whole = {"run", "chain.toml", "--output", "whole.csv"};
    whole.insert(whole.end(), extra.begin(), extra.end());
    const Outcome o = macrostep(join(whole));
    ASSERT_EQ(o.status, 0) << o.err;
    const std::string expected = read_file("whole.csv");
    const std::size_t total = lines("whole.csv");
    ASSERT_GT(total, 50u);

    std::vector<std::string> run = {"run",     "chain.toml",         "--output",
                                    "cut.csv", "--checkpoint-every", "7steps"};
    run.insert(run.end(), extra.begin(), extra.end());
    std::mt19937 random(std::random_device{}());
    int status = 0;
    std::size_t row = 0;
    for (int attempt = 0; attempt < 5; ++attempt) {  // a run that ends first is tried again
      row = std::uniform_int_distribution<std::size_t>(total / 5, 4 * total / 5)(random);
      fs::remove(path("cut.ckpt"));
      status = interrupt_at(run, row, SIGKILL, "cut.csv", "cut.ckpt");
      if (status == -SIGKILL) break;
    }
    SCOPED_TRACE("killed after row " + std::to_string(row) + " of " + std::to_string(total));
    ASSERT_EQ(status, -SIGKILL) << read_file("run.err");
    const Outcome resumed = macrostep("resume cut.ckpt");
    ASSERT_EQ(resumed.status, 0) << resumed.err;
    EXPECT_NE(resumed.out.find("resuming "), std::string::npos) << resumed.out;
    EXPECT_TRUE(read_file("cut.csv") == expected) << "the resumed CSV differs";
    expect_same_attempts("cut.steps.csv", "whole.steps.csv");
  }

  // The steps CSVs of a resumed and an uninterrupted run hold the same attempts: equal
  // attempt, t_start, h, kappa, accepted, error_estimate and corrector_passes, and scheme auto's
  // implicit and semi_implicit (the other columns measure wall time, which differs from run to
  // run).
  void expect_same_attempts(const std::string& resumed, const std::string& whole) const {
    const auto a = macrostep::output::read_csv(path(resumed), "attempt");
    const auto b = macrostep::output::read_csv(path(whole), "attempt");
    ASSERT_EQ(a.columns, b.columns);
    ASSERT_EQ(a.time, b.time) << "the attempt numbers differ";
    std::vector<std::size_t> compared = {0, 1, 2, 3, 4, 5};
    for (const char* scheme : {"implicit", "semi_implicit"}) {
      if (const auto c = a.column_index(scheme)) compared.push_back(*c);
    }
    for (std::size_t c : compared) {
      for (std::size_t r = 0; r < a.rows(); ++r) {
        const double x = a.values[c][r], y = b.values[c][r];
        ASSERT_TRUE(x == y || (std::isnan(x) && std::isnan(y)))
            << a.columns[c] << " of attempt " << r + 1 << ": " << x << " vs " << y;
      }
    }
  }

  static std::string join(const std::vector<std::string>& words) {
    std::string s;
    for (const auto& w : words) s += (s.empty() ? "" : " ") + w;
    return s;
  }

  // A checkpoint of the test chain, stopped early by SIGTERM (the final checkpoint).
  void make_checkpoint() {
    write_file("chain.toml", kChain);
    const int status = interrupt_at({"run", "chain.toml", "--output", "r.csv", "--executor",
                                     "inprocess", "--checkpoint-every", "1000steps"},
                                    20, SIGTERM, "r.csv", "r.csv");
    ASSERT_EQ(status, 128 + SIGTERM) << read_file("run.err");
    ASSERT_TRUE(fs::exists(path("r.ckpt")));
  }

  // 10 masses, 2 subsystems, 0.1 s: several hundred controlled macro steps.
  static inline const std::string kChain = macrostep::testing::kTestChainModel + R"([simulation]
end_time = 0.1
output_interval = 1.0e-4
[cosim]
rtol = 1.0e-5
threads = 1
)";
};

// The check: SIGKILL of the master at a random macro step, explicit Jacobi (exMD, order
// control) on worker processes; the resumed CSV equals the uninterrupted one byte for byte.
TEST_F(Checkpoint, ResumeAfterSigkillIsBitIdenticalExplicitProcesses) {
  kill_and_resume({"--executor", "processes"});
}

// The same with 5 subsystems in 2 worker processes (--processes 2): resume starts the same
// groups, which import the checkpoint's states.
TEST_F(Checkpoint, ResumeAfterSigkillIsBitIdenticalGroupedProcesses) {
  kill_and_resume(
      {"--executor", "processes", "--set", "partition.subsystems=5", "--processes", "2"});
}

// The same with the implicit scheme (fd Jacobian, imMD; the corrector's Δ⁰ travels in the
// checkpoint) on the in-process executor.
TEST_F(Checkpoint, ResumeAfterSigkillIsBitIdenticalImplicitInProcess) {
  kill_and_resume({"--executor", "inprocess", "--scheme", "implicit"});
}

// Kept interface Jacobians (reuse's, and broyden's with its updates) travel in the scheme's state:
// the resumed run makes its Newton steps with the same J, bit-identically.
TEST_F(Checkpoint, ResumeAfterSigkillIsBitIdenticalWithKeptJacobians) {
  kill_and_resume({"--executor", "inprocess", "--scheme", "implicit", "--jacobian", "reuse"});
  kill_and_resume({"--executor", "inprocess", "--set", "cosim.scheme=implicit", "--set",
                   "cosim.final_pass=false", "--jacobian", "broyden"});
}

// `timeout` stops a command with SIGTERM sent twice, to the process and then to its process
// group (coreutils): one request, so the run ends after its macro step with its final
// checkpoint, not as after a second signal (a model hung in the master).
TEST_F(Checkpoint, TimeoutsTwoSigtermsAreOneStopRequest) {
  write_file("chain.toml", kChain);
  const Outcome o = macrostep(
      "run chain.toml --executor inprocess --output t.csv --stop-time 1e4 "
      "--set simulation.output_interval=0.01",
      "timeout 1.5");
  EXPECT_EQ(o.status, 124) << o.err;  // timeout's status for a command it had to stop
  EXPECT_EQ(o.err.find("second stop signal"), std::string::npos) << o.err;
  EXPECT_TRUE(fs::exists(path("t.ckpt"))) << o.err;
  const auto meta = nlohmann::json::parse(read_file("t.json"));
  EXPECT_EQ(meta.at("status"), "interrupted");
  EXPECT_EQ(meta.at("error").at("signal"), "SIGTERM");
}

// SIGTERM writes a final checkpoint and complete outputs (CSV rows, JSON "interrupted", exit
// 143); resume finishes the run with the uninterrupted run's bytes, and its JSON continues the
// step counts.
TEST_F(Checkpoint, SigtermWritesAFinalCheckpointAndResumeFinishesIdentically) {
  write_file("chain.toml", kChain);
  ASSERT_EQ(macrostep("run chain.toml --executor inprocess --output whole.csv").status, 0);
  make_checkpoint();
  const auto meta = nlohmann::json::parse(read_file("r.json"));
  EXPECT_EQ(meta.at("status"), "interrupted");
  EXPECT_EQ(meta.at("error").at("signal"), "SIGTERM");
  const std::string cut = read_file("r.csv");
  ASSERT_FALSE(cut.empty());
  EXPECT_EQ(cut.back(), '\n');
  EXPECT_EQ(read_file("whole.csv").rfind(cut, 0), 0u) << "the interrupted CSV is not a prefix";

  // The interrupted steps CSV holds the attempts up to the checkpoint (and no torn row).
  const auto ckpt = macrostep::checkpoint::read(path("r.ckpt"));
  EXPECT_EQ(ckpt.steps_rows, ckpt.accepted_steps + ckpt.rejected_steps);
  EXPECT_EQ(macrostep::output::read_csv(path("r.steps.csv"), "attempt").rows(), ckpt.steps_rows);

  const Outcome resumed = macrostep("resume r.ckpt");
  ASSERT_EQ(resumed.status, 0) << resumed.err;
  EXPECT_TRUE(read_file("r.csv") == read_file("whole.csv"));
  const auto done = nlohmann::json::parse(read_file("r.json"));
  const auto whole = nlohmann::json::parse(read_file("whole.json"));
  EXPECT_EQ(done.at("status"), "completed");
  EXPECT_EQ(done.at("statistics").at("macro_steps"), whole.at("statistics").at("macro_steps"));
  EXPECT_EQ(done.at("statistics").at("rejected"), whole.at("statistics").at("rejected"));
  // The resumed steps CSV is the whole run's: cut at the checkpoint and continued.
  expect_same_attempts("r.steps.csv", "whole.steps.csv");
  // Its rows after the checkpoint are the resumed process's attempts: their solver times sum to
  // that run's JSON totals (the JSON's times cover the resumed process only;
  // docs/reference/commands.md).
  const auto steps = macrostep::output::read_csv(path("r.steps.csv"), "attempt");
  for (std::size_t i = 0; i < 2; ++i) {
    std::int64_t sum = 0;
    for (std::size_t r = ckpt.steps_rows; r < steps.rows(); ++r) {
      sum += std::llround(steps.values[7 + i][r] * 1e9);
    }
    EXPECT_EQ(sum,
              std::llround(
                  done.at("statistics").at("subsystems").at(i).at("solver_s").get<double>() * 1e9));
  }
}

// "SIGINT, SIGTERM and SIGHUP write a final checkpoint" also without
// --checkpoint-every. A fixed-step run on worker processes (no rollback: the workers export their
// live accepted workspaces) stopped by SIGINT writes r.ckpt beside its CSV, names it on stderr
// and in the JSON, leaves no state files behind, and resuming it gives the uninterrupted bytes.
TEST_F(Checkpoint, SignalWithoutAnIntervalWritesAFinalCheckpoint) {
  write_file("chain.toml", kChain);
  const std::string fixed = "--estimator none --step-size 1e-4 --order 1 --executor processes";
  ASSERT_EQ(macrostep("run chain.toml --output whole.csv " + fixed).status, 0);
  std::vector<std::string> run = {"run", "chain.toml", "--output", "r.csv"};
  for (const char* word :
       {"--estimator", "none", "--step-size", "1e-4", "--order", "1", "--executor", "processes"}) {
    run.push_back(word);
  }
  const int status = interrupt_at(run, 20, SIGINT, "r.csv", "r.csv");
  ASSERT_EQ(status, 128 + SIGINT) << read_file("run.err");
  ASSERT_TRUE(fs::exists(path("r.ckpt")));
  EXPECT_FALSE(fs::exists(path("r.ckpt.states")));
  EXPECT_NE(read_file("run.err").find("`macrostep resume r.ckpt` continues the run"),
            std::string::npos)
      << read_file("run.err");
  const auto meta = nlohmann::json::parse(read_file("r.json"));
  EXPECT_EQ(meta.at("status"), "interrupted");
  EXPECT_EQ(meta.at("error").at("checkpoint"), "r.ckpt");
  const Outcome resumed = macrostep("resume r.ckpt");
  ASSERT_EQ(resumed.status, 0) << resumed.err;
  EXPECT_TRUE(read_file("r.csv") == read_file("whole.csv")) << "the resumed CSV differs";
  expect_same_attempts("r.steps.csv", "whole.steps.csv");

  // A run whose scheme a checkpoint cannot carry stops as before and says why there is none.
  const int secant =
      interrupt_at({"run", "chain.toml", "--output", "s.csv", "--executor", "inprocess", "--scheme",
                    "implicit", "--jacobian", "quasi-newton"},
                   20, SIGTERM, "s.csv", "s.csv");
  ASSERT_EQ(secant, 128 + SIGTERM) << read_file("run.err");
  EXPECT_FALSE(fs::exists(path("s.ckpt")));
  EXPECT_NE(read_file("run.err").find("no checkpoint: checkpoints do not work with "
                                      "jacobian = \"quasi-newton\""),
            std::string::npos)
      << read_file("run.err");
  EXPECT_EQ(nlohmann::json::parse(read_file("s.json")).at("error").count("checkpoint"), 0u);
}

// A run with --set edits resumes with them: the checkpoint keeps the file and the run's words,
// and resume applies the edits to the file again (the tail after the checkpoint would differ
// without them, as the whole run does).
TEST_F(Checkpoint, ResumeKeepsTheRunsEdits) {
  write_file("chain.toml", kChain);
  const std::string edit = "cosim.rtol=3e-5";
  ASSERT_EQ(macrostep("run chain.toml --executor inprocess --output plain.csv").status, 0);
  ASSERT_EQ(
      macrostep("run chain.toml --executor inprocess --output whole.csv --set " + edit).status, 0);
  ASSERT_FALSE(read_file("whole.csv") == read_file("plain.csv"));
  const int status = interrupt_at({"run", "chain.toml", "--output", "r.csv", "--executor",
                                   "inprocess", "--set", edit, "--checkpoint-every", "1000steps"},
                                  20, SIGTERM, "r.csv", "r.csv");
  ASSERT_EQ(status, 128 + SIGTERM) << read_file("run.err");
  const Outcome resumed = macrostep("resume r.ckpt");
  ASSERT_EQ(resumed.status, 0) << resumed.err;
  EXPECT_TRUE(read_file("r.csv") == read_file("whole.csv")) << "the resumed CSV differs";
  const auto meta = nlohmann::json::parse(read_file("r.json"));
  EXPECT_EQ(meta.at("config").at("overrides"), nlohmann::json({edit}));
  EXPECT_EQ(meta.at("cosim").at("rtol"), 3e-5);
}

// Scheme auto (explicit or implicit steps by their cost): the choice's state (mode, window,
// allowance, both schemes' states) travels in the checkpoint. The run switches at least once
// (its first probe comes early enough in its several hundred steps).
TEST_F(Checkpoint, ResumeAfterSigkillIsBitIdenticalAuto) {
  kill_and_resume({"--executor", "inprocess", "--scheme", "auto"});
  const auto meta = nlohmann::json::parse(read_file("cut.json"));
  EXPECT_GT(meta["statistics"]["scheme_choice"].value("switches", 0), 0) << meta["statistics"];
}

// jump_handling = "shift" moves the BDF history from the last accepted input
// polynomial, which the exported state carries (RunnerState): killed and resumed bit-identically.
TEST_F(Checkpoint, ResumeAfterSigkillIsBitIdenticalWithShiftedHistories) {
  kill_and_resume({"--executor", "processes", "--jump-handling", "shift"});
}

// Gauss-Seidel (METHODS §3.2, seed 001 Eq. 13, fixed H: the subsystems one after another, each with
// its predecessors' new outputs) killed and resumed: its passes continue bit-identically too.
TEST_F(Checkpoint, ResumeAfterSigkillIsBitIdenticalGaussSeidel) {
  kill_and_resume({"--executor", "processes", "--scheme", "gauss-seidel", "--estimator", "none",
                   "--step-size", "1e-4", "--order", "1"});
}

// Gauss-Seidel with sequential end values: the second subsystem's accepted outputs, from which
// its own end value is extrapolated, travel in the checkpoint (the scheme's state), so the
// resumed run continues bit-identically.
TEST_F(Checkpoint, ResumeAfterSigkillIsBitIdenticalSequentialGaussSeidel) {
  kill_and_resume({"--executor", "processes", "--set", "cosim.scheme=gauss-seidel", "--set",
                   "cosim.estimator=none", "--set", "cosim.step_size=1e-4", "--set",
                   "cosim.order=2", "--set", "cosim.gauss_seidel=sequential"});
}

// [output] checkpoint_every and checkpoint: the file's keys act as --checkpoint-every
// and --checkpoint; a SIGTERM writes the final checkpoint where the file says, and resuming it
// finishes with the uninterrupted run's bytes.
TEST_F(Checkpoint, OutputKeysCheckpointLikeTheCommandLine) {
  write_file("chain.toml", kChain);
  ASSERT_EQ(macrostep("run chain.toml --executor inprocess --output whole.csv").status, 0);
  write_file("keys.toml",
             kChain + "[output]\ncheckpoint_every = \"1000steps\"\ncheckpoint = \"keys.ckpt\"\n");
  const int status =
      interrupt_at({"run", "keys.toml", "--output", "k.csv", "--executor", "inprocess"}, 20,
                   SIGTERM, "k.csv", "k.csv");
  ASSERT_EQ(status, 128 + SIGTERM) << read_file("run.err");
  ASSERT_TRUE(fs::exists(path("keys.ckpt")));
  EXPECT_FALSE(fs::exists(path("k.ckpt")));
  const Outcome resumed = macrostep("resume keys.ckpt");
  ASSERT_EQ(resumed.status, 0) << resumed.err;
  EXPECT_TRUE(read_file("k.csv") == read_file("whole.csv")) << "the resumed CSV differs";

  // Bad values name the file, the line and the key; --checkpoint-every wins over the file.
  const std::string at =
      "bad.toml:" + std::to_string(std::count(kChain.begin(), kChain.end(), '\n') + 2) + ":";
  const auto refused = [&](const std::string& output, const std::string& message) {
    write_file("bad.toml", kChain + "[output]\n" + output);
    const Outcome o = macrostep("run bad.toml --output b.csv");
    EXPECT_EQ(o.status, 2) << output << ": " << o.err;
    EXPECT_NE(o.err.find(message), std::string::npos) << o.err;
    EXPECT_FALSE(fs::exists(path("b.csv"))) << output;
  };
  refused("checkpoint_every = \"5x\"\n",
          at + " output.checkpoint_every '5x': give seconds (30, 30s, 0.5s) or accepted macro "
               "steps (500steps)");
  refused("checkpoint_every = 0\n", at);
  refused("checkpoint = \"x.ckpt\"\n",
          at + " output.checkpoint: names the file of checkpoint_every");
  refused("checkpoint_every = \"\"\n", at);
  write_file("every.toml", kChain + "[output]\ncheckpoint_every = \"5x\"\n");
  const Outcome cli = macrostep(
      "run every.toml --checkpoint-every 2steps --stop-time 1e-3 "
      "--executor inprocess --output e.csv");
  EXPECT_EQ(cli.status, 0) << cli.err;
  EXPECT_TRUE(fs::exists(path("e.ckpt")));
}

// Truncated, corrupted, foreign-version and non-checkpoint files: exit 2, one line naming the
// file and the reason, nothing run.
TEST_F(Checkpoint, DamagedCheckpointsAreRefused) {
  make_checkpoint();
  const std::string good = read_file("r.ckpt");
  const auto refused = [&](const std::string& name, const std::string& bytes,
                           const std::string& reason) {
    std::ofstream(path(name), std::ios::binary) << bytes;
    const Outcome o = macrostep("resume " + name);
    EXPECT_EQ(o.status, 2) << name << ": " << o.err;
    EXPECT_NE(o.err.find(name + ": not a usable checkpoint: "), std::string::npos) << o.err;
    EXPECT_NE(o.err.find(reason), std::string::npos) << o.err;
    EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
  };
  // Half of it, in whole 8-byte words (an odd count of words is "odd.ckpt"'s case below).
  refused("truncated.ckpt", good.substr(0, good.size() / 16 * 8), "(truncated)");
  refused("followed.ckpt", good + std::string(4096, 'x'), "(something follows it)");
  refused("odd.ckpt", good.substr(0, good.size() - 3), "truncated");
  std::string corrupted = good;
  corrupted[corrupted.size() * 2 / 3] ^= 0x10;
  refused("corrupted.ckpt", corrupted, "its contents do not match their hash (corrupted)");
  refused("empty.ckpt", "", "0 bytes: empty or truncated");
  refused("csv.ckpt", read_file("r.csv").substr(0, 64), "");

  // Another format version: the frame rewritten with the next version.
  const auto next = macrostep::checkpoint::kFormatVersion + 1;
  std::vector<capnp::word> words((good.size() + 7) / 8);
  std::memcpy(words.data(), good.data(), good.size());
  capnp::FlatArrayMessageReader reader(kj::arrayPtr(words.data(), words.size()));
  capnp::MallocMessageBuilder builder;
  builder.setRoot(reader.getRoot<macrostep::ipc::schema::CheckpointFile>());
  builder.getRoot<macrostep::ipc::schema::CheckpointFile>().setFormatVersion(next);
  const auto bytes = macrostep::ipc::to_flat_bytes(builder);
  refused("version.ckpt", std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size()),
          "format version " + std::to_string(next) + ", this build reads version " +
              std::to_string(macrostep::checkpoint::kFormatVersion));
  EXPECT_EQ(macrostep("resume missing.ckpt").status, 2);
}

// A checkpoint whose states belong to another configuration (its text replaced by a chain of 12
// masses with the same result columns), or whose result file was replaced: refused with exit 2
// before any step.
TEST_F(Checkpoint, ForeignConfigurationOrResultIsRefused) {
  make_checkpoint();
  auto c = macrostep::checkpoint::read(path("r.ckpt"));
  const std::string text = c.config_text;
  // The same columns (coupling bodies 5 and 6), a second subsystem of 7 masses instead of 5.
  c.config_text.replace(c.config_text.find("masses = 10"), 11, "masses = 12");
  c.config_text.replace(c.config_text.find("subsystems = 2"), 14, "sizes = [5, 7]");
  macrostep::checkpoint::write(path("foreign.ckpt"), c);
  const Outcome foreign = macrostep("resume foreign.ckpt");
  EXPECT_EQ(foreign.status, 2) << foreign.err;
  EXPECT_NE(foreign.err.find("does not fit its configuration"), std::string::npos) << foreign.err;

  c.config_text = text;
  macrostep::checkpoint::write(path("ok.ckpt"), c);
  write_file("r.csv", "time,other\n1,2\n");
  const Outcome csv = macrostep("resume ok.ckpt");
  EXPECT_EQ(csv.status, 2) << csv.err;
  EXPECT_NE(csv.err.find("the checkpoint's result file does not fit it"), std::string::npos)
      << csv.err;
}

// A result file that is not the one the checkpoint's run wrote: another run's output of the same
// columns (the configuration rerun with another first step into the same file), or the same file
// with one digit changed before the checkpoint's position. Refused, nothing spliced.
TEST_F(Checkpoint, ResultNotWrittenByTheCheckpointedRunIsRefused) {
  make_checkpoint();
  const std::string own = read_file("r.csv");
  const std::string own_steps = read_file("r.steps.csv");
  // Another first step: the rows differ from the second one on.
  const Outcome rerun =
      macrostep("run chain.toml --output r.csv --executor inprocess --step-size 2e-9");
  ASSERT_EQ(rerun.status, 0) << rerun.err;
  const std::string other = read_file("r.csv");
  Outcome o = macrostep("resume r.ckpt");
  EXPECT_EQ(o.status, 2) << o.err;
  EXPECT_NE(o.err.find("are not those the checkpoint's run wrote"), std::string::npos) << o.err;
  EXPECT_EQ(read_file("r.csv"), other);

  std::string changed = own;
  const auto digit = changed.find_first_of("123456789", changed.find('\n') + 1);
  changed[digit] = changed[digit] == '9' ? '8' : static_cast<char>(changed[digit] + 1);
  write_file("r.csv", changed);
  o = macrostep("resume r.ckpt");
  EXPECT_EQ(o.status, 2) << o.err;
  EXPECT_NE(o.err.find("are not those the checkpoint's run wrote"), std::string::npos) << o.err;
  EXPECT_EQ(read_file("r.csv"), changed);
  // The file the run wrote resumes.
  write_file("r.csv", own);
  write_file("r.steps.csv", own_steps);
  const Outcome resumed = macrostep("resume r.ckpt");
  EXPECT_EQ(resumed.status, 0) << resumed.err;
}

// What is not a checkpoint file is refused at once, without reading it whole: a directory, a
// FIFO (which would block), a device that never ends, a file past the size limit (sparse), and
// one of exactly the limit.
TEST_F(Checkpoint, SpecialAndOversizedFilesAreRefusedAtOnce) {
  write_file("chain.toml", kChain);
  fs::create_directory(path("dir.ckpt"));
  ASSERT_EQ(::mkfifo(path("fifo.ckpt").c_str(), 0600), 0);
  const auto limit = macrostep::checkpoint::kMaxFileBytes;
  for (const auto& [name, size] :
       {std::pair<const char*, std::uint64_t>{"limit.ckpt", limit}, {"past.ckpt", limit + 8}}) {
    std::ofstream(path(name)).close();
    fs::resize_file(path(name), size);
  }
  for (const auto& [file, reason] :
       {std::pair<std::string, std::string>{"dir.ckpt", "it is a directory"},
        {"fifo.ckpt", "it is not a regular file"},
        {"/dev/zero", "it is not a regular file"},
        {"past.ckpt", "more than a checkpoint has"},
        {"limit.ckpt", "but its message announces"}}) {
    const Outcome o = macrostep("resume " + file, "timeout 60");
    EXPECT_EQ(o.status, 2) << file << ": " << o.err;
    EXPECT_NE(o.err.find(reason), std::string::npos) << file << ": " << o.err;
  }
}

// Options that a checkpoint cannot carry, and bad --checkpoint-every values: exit 2 up front.
TEST_F(Checkpoint, UnsupportedCombinationsAreRefused) {
  write_file("chain.toml", kChain);
  for (const std::string args :
       {"--checkpoint-every 0", "--checkpoint-every 5x", "--checkpoint-every 0steps",
        "--checkpoint-every -1s", "--checkpoint x.ckpt",
        "--checkpoint-every 5 --scheme implicit --jacobian quasi-newton",
        "--checkpoint-every 5 --output r.csv --checkpoint r.csv"}) {
    const Outcome o = macrostep("run chain.toml " + args);
    EXPECT_EQ(o.status, 2) << args << ": " << o.err;
    EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
  }
  EXPECT_EQ(macrostep("run chain.toml --monolithic --checkpoint-every 5").status, 2);
}

}  // namespace

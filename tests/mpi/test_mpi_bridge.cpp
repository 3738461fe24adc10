// The MPI bridge end to end (issue 13): `mpirun -np R macrostep run CONFIG --executor mpi` on
// localhost gives the in-process executor's CSV byte for byte (contract 1; the in-process
// executor is the reference, DESIGN.md), explicit and implicit, for the chain and for a general
// system; a killed node agent ends the run with a message naming its rank, host, subsystems and
// macro step, leaves no process or segment behind and valid partial files; misuse exits 2.
// mpirun runs as root here: every call passes --allow-run-as-root, and --oversubscribe (2 CPUs).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "../app/binary_fixture.hpp"
#include "macrostep/output/csv.hpp"

namespace {

using macrostep::testing::BinaryTest;
using macrostep::testing::Outcome;

const std::string kMpirun =
    std::string("'") + MACROSTEP_MPIEXEC + "' --allow-run-as-root --oversubscribe";
const std::string kDemo = std::string(MACROSTEP_SOURCE_DIR) + "/configs/demo.toml";
const std::string kDriveTrain = std::string(MACROSTEP_SOURCE_DIR) + "/configs/drivetrain.toml";

// Processes whose working directory is `dir` (the test's runs: mpirun, ranks, workers).
std::set<pid_t> processes_in(const std::filesystem::path& dir) {
  std::set<pid_t> pids;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::error_code ec;
    const auto cwd = std::filesystem::read_symlink(entry.path() / "cwd", ec);
    if (!ec && cwd == dir) pids.insert(std::stoi(name));
  }
  return pids;
}

// The environment variable `key` of process `pid` ("" if absent).
std::string environment_of(pid_t pid, const std::string& key) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/environ", std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(in)), {});
  const std::string prefix = key + "=";
  for (std::size_t at = 0; at < all.size();) {
    const std::size_t end = all.find('\0', at);
    const std::string entry = all.substr(at, end - at);
    if (entry.rfind(prefix, 0) == 0) return entry.substr(prefix.size());
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return "";
}

class MpiBridge : public BinaryTest {
 protected:
  // `mpirun -np <ranks> macrostep <args>` in the test directory.
  Outcome mpirun(int ranks, const std::string& args) const {
    return shell(kMpirun + " -np " + std::to_string(ranks) + " '" MACROSTEP_BINARY "' " + args);
  }
  Outcome shell(const std::string& command) const {
    const std::string cmd =
        "cd '" + dir_.string() + "' && " + command + " > stdout.txt 2> stderr.txt";
    const int raw = std::system(cmd.c_str());
    Outcome o;
    o.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
    o.out = read_file("stdout.txt");
    o.err = read_file("stderr.txt");
    return o;
  }
  // The in-process reference and the bridge with 2 and 3 ranks: the same CSV bytes.
  void expect_identical(const std::string& run_args) {
    const Outcome ref = macrostep("run " + run_args + " --executor inprocess --output ref.csv");
    ASSERT_EQ(ref.status, 0) << ref.err;
    for (int ranks : {2, 3}) {
      const std::string csv = "mpi" + std::to_string(ranks) + ".csv";
      const Outcome o = mpirun(ranks, "run " + run_args + " --executor mpi --output " + csv);
      ASSERT_EQ(o.status, 0) << o.out << o.err;
      EXPECT_NE(o.out.find("MPI bridge: " + std::to_string(ranks) + " ranks"), std::string::npos)
          << o.out;
      const std::string bytes = read_file(csv);
      EXPECT_GT(bytes.size(), 1000u);
      EXPECT_TRUE(bytes == read_file("ref.csv")) << "-np " << ranks << " differs from in-process";
    }
  }
};

// Seed 000 §4 explicit Jacobi with exMD step-size and order control (configs/demo.toml).
TEST_F(MpiBridge, ExplicitChainIsBitIdenticalToInProcess) {
  expect_identical("'" + kDemo + "' --stop-time 5e-4");
  // The placement is printed and in the metadata: every rank, its host and its subsystems.
  const auto meta = nlohmann::json::parse(read_file("mpi3.json"));
  const auto& ranks = meta.at("placement").at("ranks");
  ASSERT_EQ(ranks.size(), 3u);
  EXPECT_EQ(ranks[0].at("role"), "master");
  EXPECT_EQ(ranks[1].at("subsystems"), nlohmann::json::array({1}));
  EXPECT_EQ(ranks[2].at("subsystems"), nlohmann::json::array({2}));
  EXPECT_FALSE(ranks[1].at("host").get<std::string>().empty());
  EXPECT_TRUE(ranks[1].at("placement").contains("policy")) << ranks[1].dump();
  EXPECT_EQ(meta.at("cosim").at("executor"), "mpi");
}

// METHODS §4: the implicit scheme's corrector passes and perturbed runs (several step() calls
// per macro step, extra runs) through the bridge.
TEST_F(MpiBridge, ImplicitChainIsBitIdenticalToInProcess) {
  expect_identical("'" + kDemo + "' --stop-time 2e-4 --scheme implicit --estimator imMD");
}

// A general coupled system (issue 9: drive train, 3 subsystems): with 2 ranks one agent hosts
// all three, with 3 ranks the blocks are {1, 2} and {3}.
TEST_F(MpiBridge, GeneralSystemIsBitIdenticalToInProcess) {
  expect_identical("'" + kDriveTrain + "' --stop-time 0.05");
  const auto meta = nlohmann::json::parse(read_file("mpi3.json"));
  const auto& ranks = meta.at("placement").at("ranks");
  EXPECT_EQ(ranks[1].at("subsystems"), nlohmann::json::array({1, 2}));
  EXPECT_EQ(ranks[2].at("subsystems"), nlohmann::json::array({3}));
}

// A node agent killed mid-run: rank 0 names it (rank, host, subsystems, macro step), the CSV and
// JSON written so far are valid, and no process of the run nor a segment is left.
TEST_F(MpiBridge, KilledNodeAgentIsReportedAndLeavesNothingBehind) {
  const pid_t launcher = fork();
  ASSERT_GE(launcher, 0);
  if (launcher == 0) {
    const std::string cmd = "cd '" + dir_.string() + "' && exec " + kMpirun + " -np 3 '" +
                            MACROSTEP_BINARY "' run '" + kDemo +
                            "' --executor mpi --output run.csv > stdout.txt 2> stderr.txt";
    execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  // Wait until rows are written, then kill rank 1 (its node agent).
  pid_t agent = 0;
  std::set<pid_t> seen;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    for (pid_t p : processes_in(dir_)) seen.insert(p);
    std::error_code ec;
    const auto size = std::filesystem::file_size(path("run.csv"), ec);
    if (!ec && size > 20000) {
      for (pid_t p : processes_in(dir_)) {
        if (environment_of(p, "OMPI_COMM_WORLD_RANK") == "1" && agent == 0) {
          // The agent, not one of its workers (they inherit the environment): its parent is not
          // a macrostep of this run with the same rank.
          const std::string stat_path = "/proc/" + std::to_string(p) + "/stat";
          std::ifstream stat(stat_path);
          std::string text((std::istreambuf_iterator<char>(stat)), {});
          const auto close = text.rfind(')');
          if (close == std::string::npos) continue;
          const pid_t parent = std::stoi(text.substr(close + 4));
          if (environment_of(parent, "OMPI_COMM_WORLD_RANK") != "1") agent = p;
        }
      }
      if (agent != 0) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_NE(agent, 0) << "no rows or no rank 1 within 60 s: " << read_file("stderr.txt");
  for (pid_t p : processes_in(dir_)) seen.insert(p);
  ASSERT_EQ(::kill(agent, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(waitpid(launcher, &status, 0), launcher);
  EXPECT_FALSE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  const std::string err = read_file("stderr.txt");
  EXPECT_NE(err.find("rank 1 (host "), std::string::npos) << err;
  EXPECT_NE(err.find("subsystem 1)"), std::string::npos) << err;
  EXPECT_NE(err.find("macro step "), std::string::npos) << err;
  // Valid partial results: the CSV parses (every row complete) and the JSON says why it ended.
  const auto table = macrostep::output::read_csv(path("run.csv"));
  EXPECT_GT(table.time.size(), 10u);
  const auto meta = nlohmann::json::parse(read_file("run.json"));
  EXPECT_EQ(meta.at("status"), "failed");
  EXPECT_NE(meta.at("error").dump().find("rank 1"), std::string::npos) << meta.at("error").dump();
  // Nothing left: no process of the run (ranks, agents, workers), no segment of theirs.
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!processes_in(dir_).empty() && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(processes_in(dir_).empty());
  for (const auto& entry : std::filesystem::directory_iterator("/dev/shm")) {
    const std::string name = entry.path().filename().string();
    for (pid_t p : seen) {
      const std::string tag = "-" + std::to_string(p) + "-";
      EXPECT_FALSE(name.rfind("macrostep-", 0) == 0 && name.find(tag) != std::string::npos)
          << name << " survived";
    }
  }
}

// Misuse, each with a message and exit status 2 before anything starts.
TEST_F(MpiBridge, WithoutMpirunIsAUsageError) {
  const Outcome o = macrostep("run '" + kDemo + "' --executor mpi");
  EXPECT_EQ(o.status, 2) << o.err;
  EXPECT_NE(o.err.find("mpirun -np R"), std::string::npos) << o.err;
  EXPECT_FALSE(std::filesystem::exists(path("demo.csv")));
}

TEST_F(MpiBridge, MoreRanksThanSubsystemsIsAUsageError) {
  // demo.toml has 2 subsystems: 4 ranks are 3 node agents.
  const Outcome o = mpirun(4, "run '" + kDemo + "' --executor mpi --output x.csv");
  EXPECT_EQ(o.status, 2) << o.err;
  EXPECT_NE(o.err.find("4 ranks"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("2 subsystems"), std::string::npos) << o.err;
  EXPECT_FALSE(std::filesystem::exists(path("x.csv")));
}

TEST_F(MpiBridge, OneRankIsAUsageError) {
  const Outcome o = mpirun(1, "run '" + kDemo + "' --executor mpi --output x.csv");
  EXPECT_EQ(o.status, 2) << o.err;
  EXPECT_NE(o.err.find("at least 2 ranks"), std::string::npos) << o.err;
}

TEST_F(MpiBridge, RanksOfDifferentVersionsAreAUsageError) {
  // MPMD: rank 1 stands for another build of macrostep.
  const std::string run =
      " '" MACROSTEP_BINARY "' run '" + kDemo + "' --executor mpi --output x.csv";
  const Outcome o =
      shell(kMpirun + " -np 1" + run + " : -np 1 -x MACROSTEP_BRIDGE_VERSION_OVERRIDE=0.0.9" + run);
  EXPECT_EQ(o.status, 2) << o.err;
  EXPECT_NE(o.err.find("same macrostep"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("rank 1 on "), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("macrostep 0.0.9"), std::string::npos) << o.err;
  EXPECT_FALSE(std::filesystem::exists(path("x.csv")));
}

}  // namespace

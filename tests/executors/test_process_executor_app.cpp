// `macrostep run` end to end with the process executor (DESIGN.md contracts 1 and 5): the CSV of
// a run in processes is the in-process run's, byte for byte; a killed or hung worker fails the run
// with valid files and no segment or process left, or is recovered with max_restarts; SIGINT,
// SIGTERM and SIGHUP stop a run with its files complete; workers inherit no file of the master.
// The app runs in a process group of its own, as a shell starts a job. These tests need this
// build's `macrostep` (MACROSTEP_APP_BINARY); the TSan build, which does not build it, leaves them
// out (tests/executors/CMakeLists.txt).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "../support/app_binary.hpp"
#include "../support/child_processes.hpp"
#include "../support/read_file.hpp"

namespace macrostep {
namespace {

using macrostep::testing::children_of;
using macrostep::testing::count_lines;
using macrostep::testing::process_gone;
using macrostep::testing::read_file;
using macrostep::testing::segments_of_pid_exist;

std::filesystem::path temp_dir(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("macrostep-test-executors-" + std::to_string(getpid()) + "-" + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// Starts `macrostep ARGS...` with stdout/stderr redirected to files in `dir`, in a process
// group of its own (as a shell starts a job), so that a signal to the group reaches the app and
// its workers but not this test.
pid_t spawn_app(const std::filesystem::path& dir, const std::vector<std::string>& args) {
  const pid_t pid = macrostep::testing::fork_tied();
  if (pid == 0) {
    setpgid(0, 0);
    const std::string out = (dir / "stdout.txt").string(), err = (dir / "stderr.txt").string();
    if (!freopen(out.c_str(), "w", stdout) || !freopen(err.c_str(), "w", stderr)) _exit(120);
    std::vector<std::string> all = {macrostep::testing::app_binary(MACROSTEP_APP_BINARY)};
    all.insert(all.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : all) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(all.front().c_str(), argv.data());
    _exit(127);
  }
  return pid;
}

int wait_exit(pid_t pid) {
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

const std::string kDemo = std::string(MACROSTEP_SOURCE_DIR) + "/configs/demo.toml";

TEST(ProcessExecutorApp, CsvBytesAreIdenticalToInProcess) {
  const auto dir = temp_dir("csv");
  for (const char* executor : {"inprocess", "processes"}) {
    const pid_t pid =
        spawn_app(dir, {"run", kDemo, "--stop-time", "0.002", "--executor", executor, "--output",
                        (dir / (std::string(executor) + ".csv")).string()});
    ASSERT_EQ(wait_exit(pid), 0) << read_file(dir / "stderr.txt");
  }
  const pid_t hosted =
      spawn_app(dir, {"run", kDemo, "--stop-time", "0.002", "--executor", "processes",
                      "--master-hosts-first", "--output", (dir / "hosted.csv").string()});
  ASSERT_EQ(wait_exit(hosted), 0) << read_file(dir / "stderr.txt");
  const std::string a = read_file(dir / "inprocess.csv"), b = read_file(dir / "processes.csv");
  EXPECT_GT(a.size(), 1000u);
  EXPECT_TRUE(a == b) << "the CSV files differ";
  EXPECT_TRUE(a == read_file(dir / "hosted.csv")) << "the master-hosted CSV differs";
  EXPECT_NE(read_file(dir / "processes.json").find("\"executor\": \"processes\""),
            std::string::npos);
  EXPECT_NE(read_file(dir / "hosted.json").find("\"master_hosts_first\": true"), std::string::npos);
  std::filesystem::remove_all(dir);
}

// Worker processes hosting groups (--processes, [executor] processes): 5 subsystems in 2
// processes (3 + 2), in 1 beside the master hosting subsystem 1, and auto: the in-process bytes;
// the metadata records the count. A bad count exits 2 before anything starts, naming the option
// and the allowed values.
TEST(ProcessExecutorApp, GroupedProcessesGiveTheInProcessCsvBytes) {
  const auto dir = temp_dir("groups");
  const std::vector<std::pair<std::string, std::vector<std::string>>> runs = {
      {"inprocess", {"--executor", "inprocess"}},
      {"two", {"--executor", "processes", "--processes", "2"}},
      {"hosted", {"--executor", "processes", "--processes", "1", "--master-hosts-first"}},
      {"auto", {"--executor", "processes", "--set", "executor.processes=\"auto\""}},
  };
  for (const auto& [name, extra] : runs) {
    // 860 macro steps: every grouping exchanges each message kind many times.
    std::vector<std::string> args = {"run",         kDemo,
                                     "--stop-time", "0.001",
                                     "--set",       "partition.subsystems=5",
                                     "--output",    (dir / (name + ".csv")).string()};
    args.insert(args.end(), extra.begin(), extra.end());
    ASSERT_EQ(wait_exit(spawn_app(dir, args)), 0) << name << ": " << read_file(dir / "stderr.txt");
    // The summary's last line (the processes' groups, where there are several) ends its line.
    const std::string out = read_file(dir / "stdout.txt");
    EXPECT_TRUE(!out.empty() && out.back() == '\n') << name << ": " << out;
  }
  const std::string a = read_file(dir / "inprocess.csv");
  EXPECT_GT(a.size(), 1000u);
  for (const char* name : {"two", "hosted", "auto"}) {
    EXPECT_TRUE(a == read_file(dir / (std::string(name) + ".csv"))) << name << ": the CSV differs";
  }
  EXPECT_NE(read_file(dir / "two.json").find("\"worker_processes\": 2"), std::string::npos);
  EXPECT_NE(read_file(dir / "auto.json").find("\"processes\": \"auto\""), std::string::npos);
  for (const char* bad : {"0", "many"}) {
    const pid_t pid = spawn_app(dir, {"run", kDemo, "--stop-time", "0.002", "--processes", bad,
                                      "--output", (dir / "bad.csv").string()});
    EXPECT_EQ(wait_exit(pid), 2);
    const std::string err = read_file(dir / "stderr.txt");
    EXPECT_NE(err.find("--processes must be an integer >= 1, \"auto\" or \"per-subsystem\""),
              std::string::npos)
        << err;
    EXPECT_FALSE(std::filesystem::exists(dir / "bad.csv"));
  }
  std::filesystem::remove_all(dir);
}

// A system description (configs/drivetrain.toml, a drive train with a PI speed loop):
// the process executor builds every model from its Cap'n Proto description and gives the same
// bytes as in-process (contract 1).
TEST(ProcessExecutorApp, SystemDescriptionCsvBytesAreIdenticalToInProcess) {
  const auto dir = temp_dir("system");
  const std::string config = std::string(MACROSTEP_SOURCE_DIR) + "/configs/drivetrain.toml";
  for (const char* executor : {"inprocess", "processes"}) {
    const pid_t pid =
        spawn_app(dir, {"run", config, "--stop-time", "0.6", "--executor", executor, "--output",
                        (dir / (std::string(executor) + ".csv")).string()});
    ASSERT_EQ(wait_exit(pid), 0) << read_file(dir / "stderr.txt");
  }
  const std::string a = read_file(dir / "inprocess.csv"), b = read_file(dir / "processes.csv");
  EXPECT_GT(a.size(), 10000u);
  EXPECT_EQ(a.substr(0, a.find('\n')),
            "time,motor.phi_1,motor.phi_2,motor.omega_1,motor.omega_2,load.phi_1,load.phi_2,"
            "load.omega_1,load.omega_2,pi.command,shaft,speed,torque");
  EXPECT_TRUE(a == b) << "the CSV files differ";
  EXPECT_NE(read_file(dir / "processes.json").find("\"executor\": \"processes\""),
            std::string::npos);
  std::filesystem::remove_all(dir);
}

// Scheme auto decides from solver-call counts, which every executor reports alike: the same
// switches and the same bytes (contract 1). 1.2 s of the drive train: a probe of semi-implicit
// steps after 256 explicit ones (about the load step at 0.5 s); with cosim.tau = 1e-8 the
// semi-implicit steps' coupling mismatch counts as large, and an implicit probe follows, so that
// all three schemes run in both executors. S-5.7's chain (200 masses, 1e-4 s): semi-implicit
// steps repeated as implicit ones for their mismatch.
TEST(ProcessExecutorApp, AutoSchemeCsvBytesAreIdenticalToInProcess) {
  const auto dir = temp_dir("auto");
  const std::string configs = std::string(MACROSTEP_SOURCE_DIR) + "/configs/";
  struct Case {
    const char* name;
    std::vector<std::string> args;
    std::vector<const char*> schemes;  // each must have run
  };
  const std::vector<Case> cases = {
      {"default tau",
       {configs + "drivetrain.toml", "--stop-time", "1.2"},
       {"explicit", "semi_implicit"}},
      {"tau = 1e-8",
       {configs + "drivetrain.toml", "--stop-time", "2", "--set", "cosim.tau=1e-8"},
       {"explicit", "semi_implicit", "implicit"}},
      {"escalated",
       {configs + "s-5.7.toml", "--stop-time", "1e-4", "--set", "model.masses=200"},
       {"explicit", "semi_implicit"}}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    for (const char* executor : {"inprocess", "processes"}) {
      std::vector<std::string> args = {"run",
                                       "--set",
                                       "cosim.scheme=auto",
                                       "--executor",
                                       executor,
                                       "--output",
                                       (dir / (std::string(executor) + ".csv")).string()};
      args.insert(args.begin() + 1, c.args.begin(), c.args.end());
      const pid_t pid = spawn_app(dir, args);
      ASSERT_EQ(wait_exit(pid), 0) << read_file(dir / "stderr.txt");
    }
    const std::string a = read_file(dir / "inprocess.csv"), b = read_file(dir / "processes.csv");
    EXPECT_GT(a.size(), 10000u);
    EXPECT_TRUE(a == b) << "the CSV files differ";
    const auto meta = nlohmann::json::parse(read_file(dir / "processes.json"));
    const auto& choice = meta["statistics"]["scheme_choice"];
    for (const char* scheme : c.schemes) {
      EXPECT_GT(choice[scheme].value("attempts", 0), 0) << "no " << scheme << " steps: " << choice;
    }
    if (std::string(c.name) == "escalated") {
      EXPECT_GT(choice.value("escalated", 0), 0) << choice;
    }
  }
  std::filesystem::remove_all(dir);
}

// A header and complete rows, all with the header's number of fields; returns the rows.
std::size_t expect_valid_csv(const std::string& text) {
  EXPECT_FALSE(text.empty());
  if (text.empty()) return 0;
  EXPECT_EQ(text.back(), '\n');
  std::istringstream lines(text);
  std::string line;
  std::getline(lines, line);
  const auto fields = std::count(line.begin(), line.end(), ',');
  std::size_t rows = 0;
  while (std::getline(lines, line)) {
    EXPECT_EQ(std::count(line.begin(), line.end(), ','), fields) << "row " << rows;
    ++rows;
  }
  return rows;
}

struct DemoRun {
  pid_t app;
  std::vector<pid_t> workers;  // in subsystem order
};

// Starts the demo in DIR to `stop_time` with the process executor, one worker process per
// subsystem (the callers signal or kill one of them; on 2 CPUs --processes auto would host
// both in one), the options `extra` and its CSV at `csv`, and waits until both workers run and
// the CSV has at least 50 rows after its header. A run killed right after may write no further
// row, so callers expect at least (not more than) 50.
DemoRun start_demo_run(const std::filesystem::path& dir, const std::filesystem::path& csv,
                       const std::string& stop_time, const std::vector<std::string>& extra = {}) {
  std::vector<std::string> args = {"run",        kDemo,       "--stop-time", stop_time,
                                   "--executor", "processes", "--processes", "per-subsystem"};
  args.insert(args.end(), extra.begin(), extra.end());
  args.insert(args.end(), {"--output", csv.string()});
  DemoRun run{spawn_app(dir, args), {}};
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    run.workers = children_of(run.app);
    if (run.workers.size() == 2 && count_lines(csv) > 50) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  std::sort(run.workers.begin(), run.workers.end());  // spawned in subsystem order
  return run;
}

TEST(ProcessExecutorApp, KilledWorkerFailsTheRunWithAValidCsvAndNoSegment) {
  const auto dir = temp_dir("kill");
  const auto csv = dir / "run.csv";
  const auto [app, workers] = start_demo_run(dir, csv, "100");
  ASSERT_EQ(workers.size(), 2u);
  ASSERT_EQ(kill(workers[1], SIGKILL), 0);
  const auto killed = std::chrono::steady_clock::now();
  const int rc = wait_exit(app);
  std::cout << "the app exited "
            << std::chrono::duration<double>(std::chrono::steady_clock::now() - killed).count()
            << " s after the kill\n";
  EXPECT_NE(rc, 0);
  const std::string err = read_file(dir / "stderr.txt");
  EXPECT_NE(err.find("subsystem 2"), std::string::npos) << err;
  EXPECT_NE(err.find("macro step"), std::string::npos) << err;
  EXPECT_GE(expect_valid_csv(read_file(csv)), 50u);
  const std::string meta = read_file(dir / "run.json");
  EXPECT_NE(meta.find("\"cause\": \"worker\""), std::string::npos);
  EXPECT_FALSE(segments_of_pid_exist(app));
  std::filesystem::remove_all(dir);
}

// Crash recovery from the command line: with --max-restarts the run survives the
// killed worker, says so on stderr and in the metadata, and its CSV has the bytes of an
// undisturbed run.
TEST(ProcessExecutorApp, KilledWorkerIsRecoveredWithMaxRestartsAndTheCsvIsUnchanged) {
  const auto dir = temp_dir("recover");
  const pid_t plain = spawn_app(dir, {"run", kDemo, "--stop-time", "0.004", "--executor",
                                      "inprocess", "--output", (dir / "plain.csv").string()});
  ASSERT_EQ(wait_exit(plain), 0) << read_file(dir / "stderr.txt");
  const auto csv = dir / "run.csv";
  const auto [app, workers] = start_demo_run(dir, csv, "0.004", {"--max-restarts", "2"});
  ASSERT_EQ(workers.size(), 2u);
  ASSERT_EQ(kill(workers[1], SIGKILL), 0);
  ASSERT_EQ(wait_exit(app), 0) << read_file(dir / "stderr.txt");
  const std::string err = read_file(dir / "stderr.txt");
  EXPECT_NE(err.find("recovered from a worker failure: subsystem 2"), std::string::npos) << err;
  EXPECT_TRUE(read_file(csv) == read_file(dir / "plain.csv")) << "the CSV files differ";
  const std::string meta = read_file(dir / "run.json");
  EXPECT_NE(meta.find("\"recoveries\""), std::string::npos) << meta;
  EXPECT_NE(meta.find("\"max_restarts\": 2"), std::string::npos);
  EXPECT_FALSE(segments_of_pid_exist(app));
  std::filesystem::remove_all(dir);
}

TEST(ProcessExecutorApp, HungWorkerFailsTheRunWithAValidCsvAndNoProcessLeft) {
  const auto dir = temp_dir("hang");
  const auto csv = dir / "run.csv";
  const auto [app, workers] = start_demo_run(dir, csv, "100", {"--hang-timeout", "1"});
  ASSERT_EQ(workers.size(), 2u);
  ASSERT_EQ(kill(workers[0], SIGSTOP), 0);
  const auto stopped = std::chrono::steady_clock::now();
  const int rc = wait_exit(app);
  std::cout << "the app exited "
            << std::chrono::duration<double>(std::chrono::steady_clock::now() - stopped).count()
            << " s after the stop\n";
  EXPECT_EQ(rc, 1);
  const std::string err = read_file(dir / "stderr.txt");
  EXPECT_NE(err.find("subsystem 1"), std::string::npos) << err;
  EXPECT_NE(err.find("hangs"), std::string::npos) << err;
  EXPECT_GE(expect_valid_csv(read_file(csv)), 50u);
  EXPECT_NE(read_file(dir / "run.json").find("\"cause\": \"worker\""), std::string::npos);
  EXPECT_FALSE(segments_of_pid_exist(app));
  for (const pid_t w : workers) EXPECT_TRUE(process_gone(w)) << w;
  std::filesystem::remove_all(dir);
}

// Ctrl-C at a terminal: SIGINT to the whole process group, the master and its workers. The
// workers see the current step through; the master stops after it, writes its files as far as
// it got (status "interrupted" in the metadata) and exits 128 + SIGINT; nothing is left.
TEST(InterruptedRun, CtrlCStopsACoSimulationWithItsFilesComplete) {
  const auto dir = temp_dir("sigint");
  const auto csv = dir / "run.csv";
  const auto [app, workers] = start_demo_run(dir, csv, "100");
  ASSERT_EQ(workers.size(), 2u);
  ASSERT_EQ(kill(-app, SIGINT), 0);
  EXPECT_EQ(wait_exit(app), 128 + SIGINT);
  const std::string err = read_file(dir / "stderr.txt");
  EXPECT_NE(err.find("co-simulation interrupted by SIGINT at t = "), std::string::npos) << err;
  EXPECT_GE(expect_valid_csv(read_file(csv)), 50u);
  const std::string meta = read_file(dir / "run.json");
  EXPECT_NE(meta.find("\"status\": \"interrupted\""), std::string::npos) << meta;
  EXPECT_NE(meta.find("\"signal\": \"SIGINT\""), std::string::npos) << meta;
  EXPECT_FALSE(segments_of_pid_exist(app));
  for (const pid_t w : workers) EXPECT_TRUE(process_gone(w)) << w;
  std::filesystem::remove_all(dir);
}

TEST(InterruptedRun, SigtermStopsAMonolithicRunWithItsFilesComplete) {
  const auto dir = temp_dir("sigterm");
  const auto csv = dir / "mono.csv";
  const pid_t app = spawn_app(
      dir, {"run", kDemo, "--monolithic", "--stop-time", "100", "--output", csv.string()});
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    if (count_lines(csv) > 50) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_EQ(kill(app, SIGTERM), 0);
  EXPECT_EQ(wait_exit(app), 128 + SIGTERM);
  const std::string err = read_file(dir / "stderr.txt");
  EXPECT_NE(err.find("monolithic run interrupted by SIGTERM at t = "), std::string::npos) << err;
  EXPECT_GE(expect_valid_csv(read_file(csv)), 50u);
  EXPECT_NE(read_file(dir / "mono.json").find("\"status\": \"interrupted\""), std::string::npos);
  std::filesystem::remove_all(dir);
}

// ---- hostile input, signals and descriptors -----------------------------------------------

// Defect 13: SIGHUP (the terminal closed) is handled like SIGINT and SIGTERM: the files are
// complete up to the current step, the workers are shut down, nothing is left in /dev/shm.
TEST(InterruptedRun, SighupStopsACoSimulationWithItsFilesComplete) {
  const auto dir = temp_dir("sighup");
  const auto csv = dir / "run.csv";
  const auto [app, workers] = start_demo_run(dir, csv, "100");
  ASSERT_EQ(workers.size(), 2u);
  ASSERT_EQ(kill(-app, SIGHUP), 0);  // the terminal's process group
  EXPECT_EQ(wait_exit(app), 128 + SIGHUP);
  const std::string err = read_file(dir / "stderr.txt");
  EXPECT_NE(err.find("co-simulation interrupted by SIGHUP at t = "), std::string::npos) << err;
  EXPECT_GE(expect_valid_csv(read_file(csv)), 50u);
  const std::string meta = read_file(dir / "run.json");
  EXPECT_NE(meta.find("\"status\": \"interrupted\""), std::string::npos) << meta;
  EXPECT_NE(meta.find("\"signal\": \"SIGHUP\""), std::string::npos) << meta;
  EXPECT_FALSE(segments_of_pid_exist(app));
  for (const pid_t w : workers) EXPECT_TRUE(process_gone(w)) << w;
  std::filesystem::remove_all(dir);
}

// Defect 13: SIGTERM sent to one worker ends that worker, and the master reports it.
TEST(ProcessExecutorApp, SigtermToOneWorkerEndsItAndTheMasterSaysSo) {
  const auto dir = temp_dir("worker-sigterm");
  const auto csv = dir / "run.csv";
  const auto [app, workers] = start_demo_run(dir, csv, "100");
  ASSERT_EQ(workers.size(), 2u);
  ASSERT_EQ(kill(workers[0], SIGTERM), 0);
  EXPECT_EQ(wait_exit(app), 1);
  const std::string err = read_file(dir / "stderr.txt");
  EXPECT_NE(err.find("subsystem 1"), std::string::npos) << err;
  EXPECT_NE(err.find("killed by signal 15"), std::string::npos) << err;
  EXPECT_GE(expect_valid_csv(read_file(csv)), 50u);
  EXPECT_NE(read_file(dir / "run.json").find("\"cause\": \"worker\""), std::string::npos);
  EXPECT_FALSE(segments_of_pid_exist(app));
  for (const pid_t w : workers) EXPECT_TRUE(process_gone(w)) << w;
  std::filesystem::remove_all(dir);
}

// Defect 11: a worker holds none of the master's files (the result CSV above all): the CSV is
// close-on-exec and the spawn closes every descriptor but the segment's.
TEST(ProcessExecutorApp, WorkersInheritNoFileOfTheMaster) {
  const auto dir = temp_dir("fds");
  const auto csv = dir / "run.csv";
  const auto [app, workers] = start_demo_run(dir, csv, "100");
  ASSERT_EQ(workers.size(), 2u);
  for (const pid_t w : workers) {
    const auto fds = std::filesystem::path("/proc") / std::to_string(w) / "fd";
    for (const auto& fd : std::filesystem::directory_iterator(fds)) {
      const std::string number = fd.path().filename().string();
      if (number == "0" || number == "1" || number == "2") continue;  // shared stdio
      std::error_code ec;
      const auto target = std::filesystem::read_symlink(fd.path(), ec);
      if (ec) continue;  // closed meanwhile
      EXPECT_NE(target, csv) << "worker " << w << " holds the CSV as fd " << fd.path();
      EXPECT_NE(target.string().find(dir.string()), 0u)
          << "worker " << w << " holds " << target << " as fd " << fd.path();
    }
  }
  ASSERT_EQ(kill(app, SIGINT), 0);
  EXPECT_EQ(wait_exit(app), 128 + SIGINT);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace macrostep

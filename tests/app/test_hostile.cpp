// Hostile input: the defects found by trying the `macrostep` binary as a hostile user
// would, each with the test that keeps it fixed (end to end: exit status, message, files).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "macrostep/output/csv.hpp"

#include "../support/child_processes.hpp"
#include "binary_fixture.hpp"

namespace {

namespace fs = std::filesystem;

using macrostep::testing::Outcome;

class Hostile : public macrostep::testing::BinaryTest {
 protected:
  // A small chain: `masses` masses cut by `partition` (a [partition] line), 1 ms.
  static std::string chain(int masses, const std::string& partition,
                           const std::string& extra = "") {
    return "[model]\nmasses = " + std::to_string(masses) +
           "\nseed = 3\nmass = 1.0\nx0 = {uniform = [-1.0e-3, 1.0e-3]}\n"
           "[model.element]\nc = 1.0e6\nd = 10.0\n"
           "[[model.force]]\ntype = \"harmonic\"\ncoupling_bodies = true\namplitude = 10.0\n"
           "omega = 500.0\n[partition]\n" +
           partition + "\n[simulation]\nend_time = 1.0e-3\noutput_interval = 1.0e-4\n" + extra;
  }

  // Runs `macrostep ARGS` (argv, no shell) in the test directory with RLIMIT_FSIZE set to
  // `file_size_limit` bytes and SIGXFSZ ignored, so that a write beyond it fails with EFBIG as a
  // full disk fails with ENOSPC. Returns the exit status (-1 if killed by a signal).
  int run_with_file_size_limit(rlim_t file_size_limit, std::vector<std::string> args) const {
    const pid_t pid = macrostep::testing::fork_tied();
    if (pid == 0) {
      if (chdir(dir_.c_str()) != 0) _exit(120);
      const std::string err = path("stderr.txt");
      if (!freopen(err.c_str(), "w", stderr) || !freopen("/dev/null", "w", stdout)) _exit(121);
      signal(SIGXFSZ, SIG_IGN);
      const rlimit limit{file_size_limit, file_size_limit};
      if (setrlimit(RLIMIT_FSIZE, &limit) != 0) _exit(122);
      args.insert(args.begin(), MACROSTEP_BINARY);
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(MACROSTEP_BINARY, argv.data());
      _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
};

// Every line ends in '\n' and has as many fields as the header.
void expect_complete_rows(const std::string& text) {
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n');
  const auto header_end = text.find('\n');
  const auto fields = std::count(text.begin(), text.begin() + header_end, ',');
  std::size_t start = 0;
  while (start < text.size()) {
    const auto end = text.find('\n', start);
    ASSERT_NE(end, std::string::npos) << "torn last row";
    EXPECT_EQ(std::count(text.begin() + start, text.begin() + end, ','), fields);
    start = end + 1;
  }
}

// Defect 1: deep nesting is refused before the recursive parser sees it (it crashed with
// SIGSEGV at 10,000 levels and took a minute at 100,000).
TEST_F(Hostile, DeepNestingIsRefusedWithOneLine) {
  const std::string message = "nest more than 32 deep here";
  std::string arrays = "a = ";
  arrays.append(10000, '[').append(10000, ']').append("\n");
  write_file("arrays.toml", arrays);
  std::string tables = "a = ";
  for (int i = 0; i < 100000; ++i) tables += "{b=";
  tables.append("1").append(100000, '}').append("\n");
  write_file("tables.toml", tables);
  std::string dotted = "a";
  for (int i = 0; i < 10000; ++i) dotted += ".a";
  write_file("dotted.toml", dotted + " = 1\n");
  for (const char* file : {"arrays.toml", "tables.toml", "dotted.toml"}) {
    const Outcome o = macrostep(std::string("run ") + file);
    EXPECT_EQ(o.status, 2) << file;
    EXPECT_EQ(o.err, std::string(file) + ":1: arrays, inline tables and dotted keys " + message +
                         "; a configuration needs at most a few levels\n");
  }
}

// Defect 1: SIGTERM while the configuration is read ends the process at once (the handlers
// that defer it to the end of a macro step are installed only when the run starts). A FIFO
// keeps the reader waiting as long as the test likes.
TEST_F(Hostile, SigtermWhileReadingTheConfigurationEndsTheProcess) {
  const std::string fifo = path("config.toml");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const pid_t pid = macrostep::testing::fork_tied();
  if (pid == 0) {
    if (!freopen("/dev/null", "w", stderr)) _exit(121);
    execl(MACROSTEP_BINARY, MACROSTEP_BINARY, "run", fifo.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  // Opening the write end succeeds once macrostep has opened the read end.
  int writer = -1;
  for (int i = 0; i < 2000 && writer < 0; ++i) {
    writer = open(fifo.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (writer < 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_GE(writer, 0) << "macrostep never opened its configuration";
  ASSERT_EQ(write(writer, "[model]\n", 8), 8);  // a partial file: it waits for the rest
  ASSERT_EQ(kill(pid, SIGTERM), 0);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  close(writer);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) << status;
}

// Defect 2: a full /dev/shm is a clear error at start-up (the segment's pages are reserved when
// it is created), not a SIGBUS: exit 1 with the reason, a valid CSV and the metadata. A small
// tmpfs is mounted on /dev/shm in a private mount namespace, which needs root (CAP_SYS_ADMIN);
// elsewhere the test is skipped, and test_ipc's file-size-limit test covers the same path.
TEST_F(Hostile, FullDevShmIsAClearErrorAtStartUp) {
  if (std::system("unshare --mount --propagation private true > /dev/null 2>&1") != 0) {
    GTEST_SKIP() << "no mount namespace for this user: cannot fill a private /dev/shm";
  }
  write_file("c.toml", chain(10, "subsystems = 2"));
  const std::string cmd = "cd '" + dir_.string() +
                          "' && unshare --mount --propagation private sh -c 'mount -t tmpfs -o "
                          "size=64k tmpfs /dev/shm && exec \"" MACROSTEP_BINARY
                          "\" run c.toml --executor processes --output r.csv' > stdout.txt "
                          "2> stderr.txt";
  const int raw = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(raw)) << "killed by a signal: " << raw;
  EXPECT_EQ(WEXITSTATUS(raw), 1);
  const std::string err = read_file("stderr.txt");
  EXPECT_NE(err.find("cannot reserve"), std::string::npos) << err;
  EXPECT_NE(err.find(strerror(ENOSPC)), std::string::npos) << err;
  expect_complete_rows(read_file("r.csv"));
  EXPECT_NE(read_file("r.json").find("\"status\": \"failed\""), std::string::npos);
}

// Defect 3: the result file (or its metadata) never overwrites the configuration, however the
// path is spelled.
TEST_F(Hostile, OutputNamingTheConfigurationIsRefused) {
  const std::string text = chain(10, "subsystems = 2");
  write_file("c.toml", text);
  fs::create_symlink("c.toml", path("link.toml"));
  for (const char* output : {"c.toml", "./c.toml", "link.toml"}) {
    const Outcome o = macrostep(std::string("run c.toml --monolithic --output ") + output);
    EXPECT_EQ(o.status, 2) << output;
    EXPECT_NE(o.err.find("is the configuration c.toml itself"), std::string::npos) << o.err;
    EXPECT_EQ(read_file("c.toml"), text);
  }
  const std::string own = chain(10, "subsystems = 2", "[output]\nfile = \"own.toml\"\n");
  write_file("own.toml", own);
  const Outcome o = macrostep("run own.toml --executor inprocess");
  EXPECT_EQ(o.status, 2);
  EXPECT_NE(o.err.find("is the configuration own.toml itself"), std::string::npos) << o.err;
  EXPECT_EQ(read_file("own.toml"), own);
}

// Defect 4: an interior subsystem of one mass (that mass is next to two cuts) runs, with one
// column per body, in every mode.
TEST_F(Hostile, InteriorSubsystemOfOneMassRunsInEveryMode) {
  write_file("one.toml", chain(10, "sizes = [4, 1, 5]"));
  write_file("all.toml", chain(10, "subsystems = 10"));
  for (const std::string stem : {"one", "all"}) {
    const std::string config = stem + ".toml";
    const Outcome cosim = macrostep("run " + config + " --executor inprocess --output co.csv");
    ASSERT_EQ(cosim.status, 0) << cosim.err;
    const Outcome mono = macrostep("run " + config + " --monolithic --output mono.csv");
    ASSERT_EQ(mono.status, 0) << mono.err;
    const Outcome ref = macrostep("reference " + config + " --output ref.csv");
    ASSERT_EQ(ref.status, 0) << ref.err;
    const auto co = macrostep::output::read_csv(path("co.csv"));  // throws on duplicate columns
    EXPECT_EQ(co.columns, macrostep::output::read_csv(path("mono.csv")).columns);
    EXPECT_EQ(co.columns, macrostep::output::read_csv(path("ref.csv")).columns);
    EXPECT_EQ(co.column_index("x_5").has_value(), true);
    const Outcome cmp = macrostep("compare co.csv ref.csv");
    EXPECT_EQ(cmp.status, 0) << cmp.err;
  }
}

// Defect 5: more subsystems than the process executor's segment holds are a configuration
// error naming the limit, not a failure after the start.
TEST_F(Hostile, TooManySubsystemsAreRefusedWithTheLimit) {
  write_file("many.toml", chain(300, "subsystems = 255"));
  const Outcome o = macrostep("run many.toml");
  EXPECT_EQ(o.status, 2);
  EXPECT_EQ(o.err.rfind("many.toml:15: partition.subsystems: too many subsystems (255): at most "
                        "254",
                        0),
            0u)
      << o.err;
}

// Defect 6: the handshake timeout is an option, and a model the machine cannot hold is refused
// with the estimate before anything is built.
TEST_F(Hostile, HandshakeTimeoutIsAnOptionAndHugeModelsAreRefusedUpFront) {
  write_file("c.toml", chain(10, "subsystems = 2"));
  const Outcome zero = macrostep("run c.toml --handshake-timeout 0");
  EXPECT_EQ(zero.status, 2);
  EXPECT_EQ(zero.err,
            "macrostep: --handshake-timeout must be a number of seconds in (0, 1e6] (got 0)\n");
  // No worker process starts, builds its model and reports ready within a millisecond.
  const Outcome short_one =
      macrostep("run c.toml --executor processes --handshake-timeout 1e-3 --output r.csv");
  EXPECT_EQ(short_one.status, 1);
  EXPECT_NE(short_one.err.find("did not complete its handshake within 0.001 s (raise it with "
                               "--handshake-timeout or [executor] handshake_timeout)"),
            std::string::npos)
      << short_one.err;
  write_file("slow.toml", chain(10, "subsystems = 2", "[executor]\nhandshake_timeout = 1.0e-6\n"));
  const Outcome from_file = macrostep("run slow.toml --executor processes --output r.csv");
  EXPECT_EQ(from_file.status, 1);
  EXPECT_NE(from_file.err.find("within 0.001 s"), std::string::npos) << from_file.err;
  const Outcome generous = macrostep("run slow.toml --handshake-timeout 600 --output r.csv");
  EXPECT_EQ(generous.status, 0) << generous.err;

  write_file("huge.toml", chain(100000000, "subsystems = 2"));
  for (const char* mode : {"--monolithic", "--executor processes"}) {
    const Outcome o = macrostep(std::string("run huge.toml --output h.csv ") + mode);
    EXPECT_EQ(o.status, 2) << mode;
    EXPECT_NE(o.err.find("model.masses = 100000000 needs about"), std::string::npos) << o.err;
    EXPECT_NE(o.err.find("GiB are available"), std::string::npos) << o.err;
    EXPECT_FALSE(fs::exists(path("h.csv")));
  }
}

// Defect 7: a write that the file system refuses mid-run (a full disk; here the file-size
// limit) leaves a CSV of complete rows, a message naming the CSV and the reason, and the JSON.
TEST_F(Hostile, FullDiskMidRunKeepsCompleteRowsAndWritesTheMetadata) {
  write_file("c.toml", chain(10, "subsystems = 2"));
  for (const std::vector<std::string>& mode :
       {std::vector<std::string>{"--monolithic"}, {"--executor", "inprocess"}}) {
    std::vector<std::string> args = {"run",  "c.toml",   "--all-states", "--stop-time",
                                     "0.02", "--output", "r.csv"};
    args.insert(args.end(), mode.begin(), mode.end());
    const int status = run_with_file_size_limit(8000, args);
    EXPECT_EQ(status, 1) << mode.front();
    const std::string err = read_file("stderr.txt");
    EXPECT_NE(err.find("r.csv: write failed: " + std::string(strerror(EFBIG))), std::string::npos)
        << err;
    const std::string csv = read_file("r.csv");
    EXPECT_GT(csv.size(), 4000u);
    expect_complete_rows(csv);
    const std::string meta = read_file("r.json");
    EXPECT_NE(meta.find("\"status\": \"failed\""), std::string::npos) << meta;
    EXPECT_NE(meta.find("\"cause\": \"output\""), std::string::npos) << meta;
    // The next mode is another kind of run, which replaces neither this one's result nor its
    // metadata.
    fs::remove(path("r.csv"));
    fs::remove(path("r.json"));
  }
}

// Defect 8: a metadata file that cannot be created stops the run before it starts.
TEST_F(Hostile, MetadataDestinationIsCheckedBeforeTheRun) {
  write_file("c.toml", chain(10, "subsystems = 2"));
  fs::create_directory(path("r.json"));
  for (const char* mode : {"--monolithic", "--executor inprocess"}) {
    const Outcome o = macrostep(std::string("run c.toml --output r.csv ") + mode);
    EXPECT_EQ(o.status, 2) << mode;
    EXPECT_EQ(o.err, "macrostep: r.json: is a directory; the run's metadata goes there\n");
    EXPECT_FALSE(fs::exists(path("r.csv")));
  }
}

// Defect 9: a reference with NaN or an infinity, or one whose every variable is constant
// (NRMSE undefined), is refused.
TEST_F(Hostile, CompareRefusesUnusableReferences) {
  write_file("res.csv", "time,x_1\n0,0\n1,1\n2,2\n");
  write_file("nan.csv", "time,x_1\n0,0\n1,nan\n2,2\n");
  write_file("inf.csv", "time,x_1\n0,0\n1,1\n2,-inf\n");
  write_file("zero.csv", "time,x_1\n0,0\n1,0\n2,0\n");
  const Outcome nan = macrostep("compare res.csv nan.csv");
  EXPECT_EQ(nan.status, 2);
  EXPECT_EQ(nan.err,
            "macrostep compare: nan.csv: the reference's column 'x_1' is nan at row 2 (t = 1): a "
            "reference must be finite\n");
  const Outcome inf = macrostep("compare res.csv inf.csv");
  EXPECT_EQ(inf.status, 2);
  EXPECT_NE(inf.err.find("is -inf at row 3"), std::string::npos) << inf.err;
  const Outcome zero = macrostep("compare res.csv zero.csv");
  EXPECT_EQ(zero.status, 2);
  EXPECT_NE(zero.err.find("every compared variable of the reference is constant"),
            std::string::npos)
      << zero.err;
}

// Defect 10: a PU that does not exist is a usage error for `run` as for `topology`.
TEST_F(Hostile, RunWithAnUnusablePuExitsTwo) {
  write_file("c.toml", chain(10, "subsystems = 2"));
  const Outcome run = macrostep("run c.toml --pin 99 --output r.csv");
  EXPECT_EQ(run.status, 2);
  EXPECT_NE(run.err.find("PU 99 is not usable"), std::string::npos) << run.err;
  EXPECT_FALSE(fs::exists(path("r.csv")));
  EXPECT_EQ(macrostep("topology --pin 99").status, 2);
}

// Defect 13: the messages.
TEST_F(Hostile, MessagesSayWhatIsWrong) {
  fs::create_directory(path("dir.toml"));
  const Outcome dir = macrostep("run dir.toml");
  EXPECT_EQ(dir.status, 2);
  EXPECT_EQ(dir.err, "dir.toml: is a directory, not a configuration file\n");

  write_file("big.toml", "[model]\nmasses = 99999999999999999999\n");
  const Outcome big = macrostep("run big.toml");
  EXPECT_EQ(big.status, 2);
  EXPECT_EQ(big.err,
            "big.toml:2: syntax error: '99999999999999999999' is not representable in 64 bits "
            "(while parsing decimal integer)\n");

  write_file("key.toml", std::string(100000, 'k') + " = 1\n");
  const Outcome key = macrostep("run key.toml");
  EXPECT_EQ(key.status, 2);
  EXPECT_LT(key.err.size(), 400u);
  EXPECT_NE(key.err.find("... (100000 characters): unknown key"), std::string::npos) << key.err;

  const Outcome sub = macrostep("frobnicate");
  EXPECT_EQ(sub.status, 2);
  EXPECT_EQ(sub.err.rfind("macrostep: unknown subcommand 'frobnicate'; the subcommands are run, "
                          "reference, sweep, topology, stability, local-error, resume, plot, "
                          "suggest-partition, cleanup, models, config-keys, compare\n",
                          0),
            0u)
      << sub.err;

  write_file("c.toml", chain(10, "subsystems = 2"));
  const Outcome unreadable = macrostep("run c.toml/inside.toml");  // a file is no directory
  EXPECT_EQ(unreadable.status, 2);
  EXPECT_EQ(unreadable.err, "c.toml/inside.toml: cannot open the configuration file: " +
                                std::string(strerror(ENOTDIR)) + "\n");

  const Outcome empty = macrostep("run c.toml --output ''");
  EXPECT_EQ(empty.status, 2);
  EXPECT_EQ(empty.err, "macrostep: --output must name a file (got an empty string)\n");
  EXPECT_EQ(macrostep("run c.toml --monolithic --output ''").status, 2);
}

}  // namespace

// The files a run writes (output/destinations.hpp), end to end: nothing a run reads is
// overwritten, a special file gets no siblings, the metadata lists every file the run may write,
// and a disk that fills at any moment gives a clear error, never a signal, with every file
// either complete or named in stderr.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "../support/child_processes.hpp"
#include "binary_fixture.hpp"
#include "macrostep/checkpoint/checkpoint.hpp"
#include "macrostep/output/csv.hpp"
#include "macrostep/output/hdf5.hpp"

namespace {

namespace fs = std::filesystem;
using macrostep::testing::Outcome;

// Ten masses in two subsystems, 2 ms, every state written: a few hundred rows.
std::string chain_config() {
  return macrostep::testing::kTestChainModel +
         "[simulation]\nend_time = 2.0e-3\noutput_interval = 1.0e-4\n"
         "[cosim]\nscheme = \"explicit\"\nestimator = \"exMD\"\nrtol = 1.0e-5\n"
         "[output]\nall_states = true\n";
}

class Destinations : public macrostep::testing::BinaryTest {
 protected:
  void SetUp() override {
    BinaryTest::SetUp();
    write_file("c.toml", chain_config());
  }
};

TEST_F(Destinations, CheckpointNeverOverwritesTheConfiguration) {
  const std::string text = read_file("c.toml");
  Outcome o = macrostep("run c.toml --checkpoint-every 5steps --checkpoint c.toml --output r.csv");
  EXPECT_EQ(o.status, 2) << o.err;
  EXPECT_NE(o.err.find("the checkpoint is the configuration c.toml itself"), std::string::npos)
      << o.err;
  EXPECT_EQ(read_file("c.toml"), text);
  // The default checkpoint beside r.csv is r.ckpt: here that is the configuration.
  write_file("r.ckpt", text);
  o = macrostep("run r.ckpt --checkpoint-every 5steps --output r.csv");
  EXPECT_EQ(o.status, 2) << o.err;
  EXPECT_NE(o.err.find("the checkpoint is the configuration r.ckpt itself"), std::string::npos)
      << o.err;
  EXPECT_EQ(read_file("r.ckpt"), text);
  // Without an interval the final checkpoint (on a signal) is planned there too: the run goes
  // on without it rather than failing, and the configuration stays.
  o = macrostep("run r.ckpt --output r.csv --executor inprocess");
  EXPECT_EQ(o.status, 0) << o.err;
  EXPECT_EQ(read_file("r.ckpt"), text);
}

// Each kind of run has its own default file (c.csv, c.monolithic.csv, c.reference.csv), and a
// run never replaces a result of another kind: a co-simulation and its monolithic baseline of
// the same configuration both stay for `compare`.
TEST_F(Destinations, RunsOfAnotherKindNeverOverwriteAResult) {
  ASSERT_EQ(macrostep("run c.toml --executor inprocess").status, 0);
  const std::string cosim = read_file("c.csv");
  const Outcome mono = macrostep("run c.toml --monolithic");
  ASSERT_EQ(mono.status, 0) << mono.err;
  EXPECT_EQ(read_file("c.csv"), cosim);
  EXPECT_NE(read_file("c.monolithic.json").find("\"mode\": \"monolithic\""), std::string::npos);
  EXPECT_NE(read_file("c.json").find("\"mode\": \"cosimulation\""), std::string::npos);
  // Named explicitly, another kind's result is refused before anything runs, for every kind.
  for (const char* run :
       {"run c.toml --monolithic --output c.csv", "reference c.toml --output c.monolithic.csv",
        "run c.toml --executor inprocess --output c.monolithic.csv"}) {
    const Outcome o = macrostep(run);
    EXPECT_EQ(o.status, 2) << run;
    EXPECT_NE(o.err.find("holds the result of a "), std::string::npos) << run << o.err;
    EXPECT_NE(o.err.find("name another file with --output, or remove it first"), std::string::npos)
        << o.err;
  }
  EXPECT_EQ(read_file("c.csv"), cosim);
  EXPECT_NE(read_file("c.json").find("\"mode\": \"cosimulation\""), std::string::npos);
  // A rerun of the same kind replaces its own result.
  EXPECT_EQ(macrostep("run c.toml --monolithic --stop-time 1e-3").status, 0);
}

// A table source reading "d.csv", in d.toml: the default result d.csv is the table itself.
std::string table_config() {
  return "[[subsystem]]\nname = \"push\"\nmodel = \"table\"\nfile = \"d.csv\"\n"
         "[[subsystem]]\nname = \"m\"\nmodel = \"oscillator_mass\"\nc = 100.0\n"
         "force_input = true\n"
         "[[connection]]\nname = \"f\"\nlaw = \"signal\"\nfrom = \"push.force\"\n"
         "to = \"m.force\"\n"
         "[simulation]\nend_time = 1.0e-2\noutput_interval = 1.0e-3\n"
         "[cosim]\nscheme = \"explicit\"\nestimator = \"none\"\nstep_size = 1.0e-3\n";
}

// Every file a configuration reads is an input no output may be: a table source's file, named
// as the result by default or with --output, by every kind of run and by stability.
TEST_F(Destinations, NoOutputIsAFileTheConfigurationReads) {
  write_file("d.toml", table_config());
  const std::string table = "# a brake torque\ntime,force\n0.0,0.0\n1.0,2.0\n";
  write_file("d.csv", table);
  for (const char* args :
       {"run d.toml --executor inprocess", "run d.toml --executor processes",
        "run d.toml --output ./d.csv", "run d.toml --monolithic --output d.csv",
        "reference d.toml --output d.csv", "stability d.toml --no-plot --csv d.csv"}) {
    const Outcome o = macrostep(args);
    EXPECT_EQ(o.status, 2) << args << ": " << o.err;
    EXPECT_NE(o.err.find("is the input file `file` of subsystem push"), std::string::npos)
        << args << ": " << o.err;
    EXPECT_EQ(read_file("d.csv"), table) << args;
    EXPECT_FALSE(fs::exists(path("d.json"))) << args;
    EXPECT_FALSE(fs::exists(path("d.steps.csv"))) << args;
  }
  // The same configuration writes its result elsewhere.
  const Outcome o = macrostep("run d.toml --executor inprocess --output r.csv");
  EXPECT_EQ(o.status, 0) << o.err;
  EXPECT_EQ(read_file("d.csv"), table);
}

// A file that no earlier run of this result wrote is never replaced: a user's data under the
// result's name, a JSON of theirs where the metadata goes, a steps table without its result.
TEST_F(Destinations, FilesOfNoResultAreNeverReplaced) {
  const std::map<std::string, std::vector<std::string>> cases{
      {"mydata.csv",
       {"--output mydata.csv",
        "mydata.csv: the result would replace this existing file, but it is not a result of "
        "macrostep: no metadata mydata.json beside it; name another file with --output, or remove "
        "it first"}},
      {"keep.json",
       {"--output keep.csv",
        "keep.json: the run's metadata would replace this existing file, but it is not the "
        "metadata of a macrostep result;"}},
      {"s.steps.csv", {"--output s.csv", "s.steps.csv: the steps table would replace"}},
      {"m.json", {"--output m.h5", "m.json: the run's metadata would replace"}}};
  for (const auto& [file, what] : cases) {
    write_file(file, "precious\n");
    for (const char* mode : {" --executor inprocess", " --monolithic"}) {
      if (file == "s.steps.csv" && std::string(mode) == " --monolithic") continue;  // none
      const Outcome o = macrostep("run c.toml " + what[0] + mode);
      EXPECT_EQ(o.status, 2) << what[0] << mode << ": " << o.err;
      EXPECT_NE(o.err.find(what[1]), std::string::npos) << o.err;
      EXPECT_EQ(read_file(file), "precious\n") << what[0] << mode;
      for (const char* other : {"mydata.json", "keep.csv", "s.csv", "s.json", "m.h5"}) {
        EXPECT_FALSE(fs::exists(path(other))) << what[0] << mode << ": " << other;
      }
    }
  }
}

// r.csv and r.h5 (or r.txt) share r.json and r.steps.csv: a run of one never takes over the
// other's metadata, so that the JSON always describes the result beside it.
TEST_F(Destinations, MetadataOfAnotherResultIsNeverReplaced) {
  ASSERT_EQ(macrostep("run c.toml --executor inprocess --output r.csv").status, 0);
  const std::string csv = read_file("r.csv");
  const std::string json = read_file("r.json");
  const std::string steps = read_file("r.steps.csv");
  for (const char* other : {"r.h5", "r.txt"}) {
    const Outcome o = macrostep(std::string("run c.toml --executor inprocess --output ") + other);
    EXPECT_EQ(o.status, 2) << other << ": " << o.err;
    EXPECT_NE(o.err.find(std::string("r.json: the run's metadata would replace this existing "
                                     "file, but it describes the result r.csv, not ") +
                         other),
              std::string::npos)
        << o.err;
    EXPECT_FALSE(fs::exists(path(other))) << other;
  }
  EXPECT_EQ(read_file("r.csv"), csv);
  EXPECT_EQ(read_file("r.json"), json);
  EXPECT_EQ(read_file("r.steps.csv"), steps);
  // A checkpoint that is not one of this result is refused too; without an interval (the final
  // checkpoint on a signal) the run goes on without it (r.json lists r.ckpt, planned, unwritten).
  write_file("mine.ckpt", "precious\n");
  Outcome o =
      macrostep("run c.toml --output r.csv --checkpoint mine.ckpt --checkpoint-every 5steps");
  EXPECT_EQ(o.status, 2) << o.err;
  EXPECT_NE(o.err.find("mine.ckpt: the checkpoint would replace this existing file, but it is "
                       "not a checkpoint of the result r.csv"),
            std::string::npos)
      << o.err;
  EXPECT_NE(o.err.find("name another with --checkpoint, or remove it first"), std::string::npos);
  write_file("r.ckpt", "precious\n");
  o = macrostep("run c.toml --executor inprocess --output r.csv");
  EXPECT_EQ(o.status, 0) << o.err;
  EXPECT_EQ(read_file("r.ckpt"), "precious\n");
  EXPECT_EQ(read_file("mine.ckpt"), "precious\n");
}

// A rerun of the same command replaces its own files, named as before or by another spelling of
// the same path, with its checkpoints; the HDF5 result likewise; and the files of a killed run.
TEST_F(Destinations, RerunReplacesItsOwnResult) {
  fs::create_directories(path("out"));
  for (int k = 0; k < 2; ++k) {
    for (const std::string& args : std::vector<std::string>{
             "run c.toml --executor inprocess", "run c.toml --executor inprocess --output r.h5",
             "run c.toml --output out/r.csv --checkpoint-every 5steps",
             "run c.toml --output " + path("out/r.csv") + " --checkpoint-every 5steps",
             "run c.toml --monolithic --output out/r.monolithic.csv"}) {
      const Outcome o = macrostep(args);
      EXPECT_EQ(o.status, 0) << args << ": " << o.err;
    }
  }
  // A run killed before its end has claimed its files in its metadata ("running"): the rerun
  // replaces them.
  const std::string run = "run c.toml --executor inprocess --output k.csv --stop-time ";
  ASSERT_EQ(macrostep(run + "100", "timeout -s KILL 1").status, 128 + SIGKILL);
  EXPECT_NE(read_file("k.json").find("\"status\": \"running\""), std::string::npos);
  const Outcome o = macrostep(run + "1e-3");
  EXPECT_EQ(o.status, 0) << o.err;
  EXPECT_NE(read_file("k.json").find("\"status\": \"completed\""), std::string::npos);
}

TEST_F(Destinations, TwoOutputsAreNeverOneFile) {
  const Outcome o =
      macrostep("run c.toml --checkpoint-every 5steps --checkpoint r.steps.csv --output r.csv");
  EXPECT_EQ(o.status, 2) << o.err;
  EXPECT_NE(o.err.find("would be the same file as the steps table"), std::string::npos) << o.err;
  EXPECT_FALSE(fs::exists(path("r.csv")));
}

TEST_F(Destinations, CharacterDeviceTakesTheResultAlone) {
  const bool json_existed = fs::exists("/dev/null.json");
  const bool steps_existed = fs::exists("/dev/null.steps.csv");
  for (const char* mode : {"--executor inprocess", "--monolithic"}) {
    const Outcome o = macrostep(std::string("run c.toml --output /dev/null ") + mode);
    EXPECT_EQ(o.status, 0) << mode << o.err;
    EXPECT_EQ(fs::exists("/dev/null.json"), json_existed) << mode;
    EXPECT_EQ(fs::exists("/dev/null.steps.csv"), steps_existed) << mode;
  }
  // A checkpoint needs a name of its own beside a device.
  const Outcome o = macrostep("run c.toml --output /dev/null --checkpoint-every 5steps");
  EXPECT_EQ(o.status, 2);
  EXPECT_NE(o.err.find("name it with --checkpoint"), std::string::npos) << o.err;
}

TEST_F(Destinations, FifoIsRefusedInsteadOfBlocking) {
  ASSERT_EQ(mkfifo(path("r.csv").c_str(), 0600), 0);
  const Outcome o = macrostep("run c.toml --output r.csv", "timeout 60");
  EXPECT_EQ(o.status, 2) << o.err;
  EXPECT_NE(o.err.find("r.csv: is a FIFO"), std::string::npos) << o.err;
}

// The other commands that write files check them the same way, and their numbers are checked
// when given: exit 2 with one line, before any work.
TEST_F(Destinations, OtherCommandsRefuseBadFilesAndNumbers) {
  for (const std::string args :
       {"stability --plot /nonexistent/x.png", "stability c.toml --plot c.toml",
        "stability --no-plot --csv /nonexistent/s.csv", "suggest-partition c.toml --subsystems 0",
        "suggest-partition c.toml --trial-time -1", "suggest-partition c.toml --cores 0",
        "suggest-partition c.toml --output c.toml"}) {
    const Outcome o = macrostep(args);
    EXPECT_EQ(o.status, 2) << args << ": " << o.err;
    EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'),
              o.err.find("--help") == std::string::npos ? 1 : 2)
        << args << ": " << o.err;
  }
  EXPECT_EQ(read_file("c.toml"), chain_config());
}

// The metadata's "files" is the list the path checks used; every file the run left in its
// directory is on it (the list comes from the code, not from this test).
TEST_F(Destinations, MetadataListsEveryFileTheRunWrites) {
  for (const char* mode : {"--executor inprocess", "--executor processes"}) {
    for (const auto& entry : fs::directory_iterator(dir_)) {
      if (entry.path().filename() != "c.toml") fs::remove_all(entry.path());
    }
    const Outcome o =
        macrostep(std::string("run c.toml --output out.csv --checkpoint-every 5steps ") + mode);
    ASSERT_EQ(o.status, 0) << o.err;
    const auto meta = nlohmann::json::parse(read_file("out.json"));
    std::set<std::string> listed;
    for (const auto& f : meta.at("files")) listed.insert(f.at("path").get<std::string>());
    EXPECT_EQ(listed.size(), 5u) << meta.at("files").dump();
    for (const auto& entry : fs::directory_iterator(dir_)) {
      const std::string name = entry.path().filename().string();
      if (name == "c.toml" || name == "stdout.txt" || name == "stderr.txt") continue;
      EXPECT_TRUE(listed.count(name) == 1) << name << " is not in " << meta.at("files").dump();
    }
  }
}

// Throws unless every line of the CSV `file` ends in '\n' and has the header's field count.
void complete_rows(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), {});
  if (text.empty() || text.back() != '\n') throw std::runtime_error("a torn last line");
  const auto fields = [&](std::size_t begin, std::size_t end) {
    return std::count(text.begin() + static_cast<std::ptrdiff_t>(begin),
                      text.begin() + static_cast<std::ptrdiff_t>(end), ',');
  };
  const std::size_t header_end = text.find('\n');
  const auto expected = fields(0, header_end);
  for (std::size_t start = header_end + 1; start < text.size();) {
    const std::size_t end = text.find('\n', start);
    if (fields(start, end) != expected) throw std::runtime_error("a row of another width");
    start = end + 1;
  }
}

// Whether `file` (in `dir`) is complete as its kind needs, or named in `err`.
::testing::AssertionResult complete_or_named(const fs::path& file, const std::string& err) {
  const std::string name = file.filename().string();
  if (err.find(name) != std::string::npos) return ::testing::AssertionSuccess();
  try {
    const std::string ext = file.extension().string();
    if (ext == ".csv") {
      complete_rows(file);
    } else if (ext == ".json") {
      std::ifstream in(file);
      const auto parsed = nlohmann::json::parse(in);
      (void)parsed;
    } else if (ext == ".h5") {
      macrostep::output::read_hdf5_table(file.string());
    } else if (ext == ".ckpt") {
      macrostep::checkpoint::read(file.string());
    } else if (fs::is_directory(file)) {
      return ::testing::AssertionSuccess();  // a checkpoint's state files, transient
    }
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure()
           << name << " is partial (" << e.what() << ") and stderr does not name it: " << err;
  }
  return ::testing::AssertionSuccess();
}

// The disk fills at different moments (a tmpfs of a fraction of what the run writes, mounted in
// a private mount namespace, which needs root; elsewhere skipped): for CSV with checkpoints and
// for HDF5, in-process and in worker processes.
TEST_F(Destinations, FullDiskAtAnyMomentIsNeverASignal) {
  if (std::system("unshare --mount --propagation private true > /dev/null 2>&1") != 0) {
    GTEST_SKIP() << "no mount namespace for this user: cannot fill a private tmpfs";
  }
  const std::string text = read_file("c.toml");
  for (const char* result : {"r.csv", "r.h5"}) {
    for (const char* executor : {"inprocess", "processes"}) {
      const std::string args =
          std::string("run ../c.toml --output ") + result + " --executor " + executor +
          (std::string(result) == "r.csv" ? " --checkpoint-every 10steps" : "");
      // What the run writes with room enough.
      fs::create_directories(path("full"));
      const std::string run = "\"" MACROSTEP_BINARY "\" " + args;
      ASSERT_EQ(std::system(("cd '" + path("full") + "' && " + run + " > /dev/null 2>&1").c_str()),
                0)
          << args;
      std::uintmax_t bytes = 0;
      for (const auto& e : fs::recursive_directory_iterator(path("full"))) {
        if (e.is_regular_file()) bytes += e.file_size();
      }
      fs::remove_all(path("full"));
      for (const double fraction : {0.03, 0.15, 0.4, 0.7, 0.95}) {
        const auto size = std::max<std::uintmax_t>(
            4096, static_cast<std::uintmax_t>(fraction * static_cast<double>(bytes)));
        fs::create_directories(path("full"));
        // The tmpfs lives as long as the namespace: the files are copied out before it ends.
        const std::string cmd =
            "cd '" + path("full") +
            "' && unshare --mount --propagation private sh -c 'mount -t tmpfs -o size=" +
            std::to_string(size) + " tmpfs \"$PWD\" && cd \"$PWD\" && " + run +
            " > ../stdout.txt 2> ../stderr.txt; echo $? > ../status.txt; mkdir -p ../seen && "
            "cp -r . ../seen/'";
        const int raw = std::system(cmd.c_str());
        ASSERT_TRUE(WIFEXITED(raw)) << cmd;
        const int status = std::stoi(read_file("status.txt"));
        const std::string err = read_file("stderr.txt");
        const std::string what = std::string(result) + " " + executor + " at " +
                                 std::to_string(size) + " of " + std::to_string(bytes) + " bytes";
        // 0: it fitted; 1: the run failed; 2: a file could not be made before it started.
        EXPECT_TRUE(status >= 0 && status <= 2) << what << ": exit " << status << "\n" << err;
        EXPECT_EQ(read_file("c.toml"), text) << what;
        for (const auto& e : fs::directory_iterator(path("seen"))) {
          EXPECT_TRUE(complete_or_named(e.path(), err)) << what;
        }
        fs::remove_all(path("seen"));
        fs::remove_all(path("full"));
      }
    }
  }
}

// Two masses of the misbehaving plugin joined by a spring; the first misbehaves from 1 ms on.
std::string misbehaving_pair(const std::string& how) {
  return "[[subsystem]]\nname = \"a\"\nmodel = \"plugin\"\nlibrary = \"" MISBEHAVING_PLUGIN
         "\"\nparameters = {misbehaviour = \"" +
         how +
         "\", at = 1.0e-3}\n"
         "[[subsystem]]\nname = \"b\"\nmodel = \"plugin\"\nlibrary = \"" MISBEHAVING_PLUGIN
         "\"\nparameters = {misbehaviour = \"exit\", at = 1.0e9, force_sign = -1}\n"
         "[[connection]]\nname = \"s\"\nlaw = \"spring_damper\"\n"
         "from = [\"a.x\", \"a.v\", \"b.x\", \"b.v\"]\nto = [\"a.force\", \"b.force\"]\n"
         "c = 100.0\nd = 0.1\n[simulation]\nend_time = 4.0e-3\noutput_interval = 1.0e-4\n"
         "[cosim]\nrtol = 1.0e-5\n";
}

// A plugin in the master process (the in-process executor) that calls exit(0) or crashes: the
// user still gets a message, a metadata file that says the run failed and why, and a result file
// of complete rows (exit(): every row up to the failure; a crash: those written so far); exit()
// no longer passes for success.
TEST_F(Destinations, ModelEndingTheMasterIsReported) {
  for (const std::string how : {"exit", "segfault", "abort"}) {
    write_file("p.toml", misbehaving_pair(how));
    const Outcome o = macrostep("run p.toml --executor inprocess --output r.csv");
    const auto meta = nlohmann::json::parse(read_file("r.json"));
    EXPECT_EQ(meta.at("status"), "failed") << how;
    if (how == "exit") {
      EXPECT_EQ(o.status, 1) << o.err;
      EXPECT_NE(o.err.find("ended by exit(0) during the co-simulation"), std::string::npos)
          << o.err;
      EXPECT_NE(meta.at("error").at("message").get<std::string>().find("exit(0)"),
                std::string::npos);
      EXPECT_TRUE(meta.contains("statistics"));
    } else {
      EXPECT_NE(o.status, 0) << how;
      EXPECT_NE(o.err.find("received a fatal signal during the co-simulation"), std::string::npos)
          << o.err;
      EXPECT_EQ(meta.at("error").at("cause"), "crash") << how;
    }
    const auto table = macrostep::output::read_csv(path("r.csv"));
    EXPECT_GE(table.rows(), 1u) << how;
  }
}

// The same plugin in a worker process: the run fails with exit status 1 and says that a model
// called exit() (a worker ends by itself only on the master's shutdown), also when the
// implicit scheme's perturbed runs run it on the worker's other threads.
TEST_F(Destinations, ModelEndingItsWorkerIsNamed) {
  write_file("p.toml", misbehaving_pair("exit"));
  for (const std::string scheme : {"explicit", "implicit"}) {
    const Outcome o =
        macrostep("run p.toml --executor processes --output r.csv --scheme " + scheme);
    EXPECT_EQ(o.status, 1) << scheme << ": " << o.err;
    EXPECT_NE(o.err.find("exited with status 0 (a model or a library in the worker called "
                         "exit()) during macro step"),
              std::string::npos)
        << scheme << ": " << o.err;
    EXPECT_EQ(nlohmann::json::parse(read_file("r.json")).at("status"), "failed") << scheme;
  }
}

// A plugin in the master that never returns: the first SIGTERM asks for a stop after the macro
// step, which never ends; the second ends the process, and the user still gets a message and a
// metadata file that says the run was interrupted.
TEST_F(Destinations, HungModelInTheMasterStillLeavesItsReport) {
  write_file("p.toml", misbehaving_pair("hang"));
  const pid_t pid = macrostep::testing::fork_tied();
  if (pid == 0) {
    if (chdir(dir_.c_str()) != 0) _exit(120);
    if (!freopen("stderr.txt", "w", stderr) || !freopen("/dev/null", "w", stdout)) _exit(121);
    execl(MACROSTEP_BINARY, MACROSTEP_BINARY, "run", "p.toml", "--executor", "inprocess",
          "--output", "r.csv", static_cast<char*>(nullptr));
    _exit(127);
  }
  // Long enough to reach the hang at 1 ms of simulated time, even under a sanitizer.
  std::this_thread::sleep_for(std::chrono::seconds(3));
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, WNOHANG), 0) << "the run ended without hanging";
  kill(pid, SIGTERM);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ASSERT_EQ(waitpid(pid, &status, WNOHANG), 0) << "one SIGTERM ended a hung run";
  kill(pid, SIGTERM);
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) << status;
  const std::string err = read_file("stderr.txt");
  EXPECT_NE(err.find("a second stop signal ends the process"), std::string::npos) << err;
  const auto meta = nlohmann::json::parse(read_file("r.json"));
  EXPECT_EQ(meta.at("status"), "interrupted");
  EXPECT_EQ(meta.at("error").at("cause"), "interrupted");
  EXPECT_GE(macrostep::output::read_csv(path("r.csv")).rows(), 1u);
}

}  // namespace

// A command naming a result that another command writes now stops before it writes anything: a
// second run with the same --output (CSV and HDF5) leaves the first run's result and metadata
// as they were (two writers at their own offsets tore the CSV's rows, and
// HDF5's create truncated the file before its own lock refused it). The lock ends with the
// process that held it: after the first run is killed, a rerun replaces its result.
TEST_F(Destinations, ASecondCommandOnAResultBeingWrittenLeavesItAlone) {
  write_file("p.toml", misbehaving_pair("hang"));
  for (const std::string result : {"r.csv", "s.h5"}) {
    const std::string meta = result.substr(0, 1) + ".json";
    SCOPED_TRACE(result);
    const pid_t pid = macrostep::testing::fork_tied();
    if (pid == 0) {
      if (chdir(dir_.c_str()) != 0) _exit(120);
      if (!freopen("/dev/null", "w", stderr) || !freopen("/dev/null", "w", stdout)) _exit(121);
      execl(MACROSTEP_BINARY, MACROSTEP_BINARY, "run", "p.toml", "--executor", "inprocess",
            "--output", result.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    // The run has claimed its files once its metadata exists and its result holds rows (HDF5:
    // once the file is there).
    const auto written = [&] {
      if (!fs::exists(path(meta)) || !fs::exists(path(result))) return false;
      return result == "s.h5" || lines(result) > 5;
    };
    for (int i = 0; i < 600 && !written(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, WNOHANG), 0) << "the run ended without hanging";
    ASSERT_TRUE(written());
    // Stopped, the first run writes nothing more (it may still be on its way to the hang) and
    // keeps its lock: whatever changes its files now is the second command.
    ASSERT_EQ(kill(pid, SIGSTOP), 0);
    const std::string before = read_file(result);
    const std::string meta_before = read_file(meta);
    for (const std::string& command :
         {"run c.toml --output " + result,
          "run p.toml --executor inprocess --stop-time 5e-4 --output " + result}) {
      const Outcome o = macrostep(command);
      EXPECT_EQ(o.status, 2) << command << ": " << o.err;
      EXPECT_NE(o.err.find(result + ": another macrostep command writes this file now"),
                std::string::npos)
          << command << ": " << o.err;
      EXPECT_TRUE(read_file(result) == before) << command << " changed " << result;
      EXPECT_TRUE(read_file(meta) == meta_before) << command << " changed " << meta;
    }
    kill(pid, SIGKILL);
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    const Outcome rerun =
        macrostep("run p.toml --executor inprocess --stop-time 5e-4 --output " + result);
    EXPECT_EQ(rerun.status, 0) << rerun.err;
  }
}

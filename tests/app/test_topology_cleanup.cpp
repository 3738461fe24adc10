// End-to-end tests of `macrostep topology` and `macrostep cleanup`.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "macrostep/ipc/shared_segment.hpp"

#include "../support/child_processes.hpp"
#include "binary_fixture.hpp"

namespace {

namespace fs = std::filesystem;

using macrostep::testing::Outcome;

class Command : public macrostep::testing::BinaryTest {};

int usable_pus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  EXPECT_EQ(::sched_getaffinity(0, sizeof(set), &set), 0);
  return CPU_COUNT(&set);
}

TEST_F(Command, TopologyPrintsThePuCount) {
  const Outcome o = macrostep("topology");
  ASSERT_EQ(o.status, 0) << o.err;
  const int n = usable_pus();
  EXPECT_NE(o.out.find(std::to_string(n) + (n == 1 ? " PU usable" : " PUs usable")),
            std::string::npos)
      << o.out;
  EXPECT_NE(o.out.find("package"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("NUMA node"), std::string::npos) << o.out;
}

TEST_F(Command, TopologyOfTheDemoHasTwoSubsystems) {
  const Outcome o = macrostep("topology '" MACROSTEP_SOURCE_DIR "/configs/demo.toml'");
  ASSERT_EQ(o.status, 0) << o.err;
  // The demo runs exMD: one extra run per subsystem, so 2 PUs each.
  EXPECT_NE(o.out.find("2 subsystems, explicit scheme, estimator exMD"), std::string::npos)
      << o.out;
  EXPECT_NE(o.out.find("master + 2 subsystems x 2 PUs = 5 PUs needed"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("subsystem 1"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("subsystem 2"), std::string::npos) << o.out;
  EXPECT_EQ(o.out.find("subsystem 3"), std::string::npos) << o.out;
  if (usable_pus() < 5) {
    EXPECT_NE(o.out.find("oversubscribed"), std::string::npos) << o.out;
  }

  const Outcome none =
      macrostep("topology --pin none '" MACROSTEP_SOURCE_DIR "/configs/demo.toml'");
  ASSERT_EQ(none.status, 0) << none.err;
  EXPECT_NE(none.out.find("not pinned"), std::string::npos) << none.out;
}

TEST_F(Command, TopologyRejectsABadPin) {
  Outcome o = macrostep("topology --pin bogus");
  EXPECT_EQ(o.status, 2);
  EXPECT_NE(o.err.find("'bogus'"), std::string::npos) << o.err;
  o = macrostep("topology --pin 0,,1");
  EXPECT_EQ(o.status, 2);
  EXPECT_NE(o.err.find("empty item"), std::string::npos) << o.err;
  o = macrostep("topology --pin 4000");  // a PU this process cannot use
  EXPECT_EQ(o.status, 2);
  EXPECT_NE(o.err.find("PU 4000"), std::string::npos) << o.err;
  o = macrostep("topology no-such-file.toml");
  EXPECT_EQ(o.status, 2);
}

// An explicit per-process map: the first usable PU shared by the master and subsystem 2,
// subsystem 1 left to the OS; a map of the wrong length is refused with both counts.
TEST_F(Command, TopologyPrintsAnExplicitMap) {
  cpu_set_t set;
  CPU_ZERO(&set);
  ASSERT_EQ(::sched_getaffinity(0, sizeof(set), &set), 0);
  int pu = 0;
  while (!CPU_ISSET(pu, &set)) ++pu;
  const std::string p = std::to_string(pu);
  const std::string demo = " '" MACROSTEP_SOURCE_DIR "/configs/demo.toml'";
  const Outcome o = macrostep("topology --pin 'map:" + p + "/*/" + p + "'" + demo);
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.out.find("placement --pin map:" + p + "/*/" + p + ": "), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("subsystem 1  not pinned"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("PU " + p + ": master, subsystem 2"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("PU   " + p + ": 2 processes: master, subsystem 2"), std::string::npos)
      << o.out;
  const Outcome short_map = macrostep("topology --pin 'map:*/" + p + "'" + demo);
  EXPECT_EQ(short_map.status, 2);
  EXPECT_NE(short_map.err.find("2 entries given, 3 needed"), std::string::npos) << short_map.err;
  const Outcome empty = macrostep("topology --pin 'map:*//*'");
  EXPECT_EQ(empty.status, 2);
  EXPECT_NE(empty.err.find("subsystem 1 (entry 2) is empty"), std::string::npos) << empty.err;
}

// A child creates a segment and is SIGKILLed, so that nothing unlinks it. Returns the
// segment's name ("/macrostep-...") and sets `owner` to the dead child's pid.
std::string stale_segment(pid_t& owner) {
  int fds[2];
  if (::pipe(fds) != 0) return {};
  const pid_t pid = macrostep::testing::fork_tied();
  if (pid < 0) return {};
  if (pid == 0) {
    ::close(fds[0]);
    try {
      auto segment = macrostep::ipc::SharedSegment::create();
      const std::string name = segment.name() + "\n";
      (void)!::write(fds[1], name.data(), name.size());
      while (true) ::pause();
    } catch (...) {
      ::_exit(3);
    }
  }
  ::close(fds[1]);
  std::string name;
  char c = 0;
  while (::read(fds[0], &c, 1) == 1 && c != '\n') name += c;
  ::close(fds[0]);
  int status = 0;
  if (::kill(pid, SIGKILL) != 0 || ::waitpid(pid, &status, 0) != pid) return {};
  owner = pid;
  return name;
}

// The dead owner's segment: cleanup removes it.
TEST_F(Command, CleanupRemovesTheSegmentOfAKilledOwner) {
  pid_t pid = 0;
  const std::string name = stale_segment(pid);
  ASSERT_FALSE(name.empty()) << "the child could not create a segment";
  const fs::path file = fs::path("/dev/shm") / name.substr(1);
  ASSERT_TRUE(fs::exists(file)) << file;

  const Outcome o = macrostep("cleanup");
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.out.find("removed " + name), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("owner pid " + std::to_string(pid)), std::string::npos) << o.out;
  EXPECT_FALSE(fs::exists(file)) << file;

  const Outcome again = macrostep("cleanup");
  ASSERT_EQ(again.status, 0) << again.err;
  EXPECT_EQ(again.out.find(name), std::string::npos) << again.out;
}

// "master SIGKILL followed by `cleanup` or by the next run": a run on worker processes
// removes a dead run's segment that is over a minute old (its header's creation time is moved
// back two minutes here) and names it. Another test's run may remove it first (this one holds
// the stale-segment lock, the other runs do not): then it tries again with a new segment.
TEST_F(Command, NextRunRemovesTheSegmentOfADeadRun) {
  write_file("chain.toml", macrostep::testing::kTestChainModel +
                               "[simulation]\nend_time = 1.0e-3\noutput_interval = 1.0e-4\n");
  for (int attempt = 0; attempt < 3; ++attempt) {
    pid_t pid = 0;
    const std::string name = stale_segment(pid);
    ASSERT_FALSE(name.empty()) << "the child could not create a segment";
    const int fd = ::shm_open(name.c_str(), O_RDWR, 0);
    ASSERT_GE(fd, 0);
    const std::int64_t created =
        std::chrono::duration_cast<std::chrono::nanoseconds>(
            std::chrono::system_clock::now().time_since_epoch() - std::chrono::minutes(2))
            .count();
    ASSERT_EQ(::pwrite(fd, &created, sizeof(created),
                       offsetof(macrostep::ipc::SegmentIdentity, creation_time_ns)),
              static_cast<ssize_t>(sizeof(created)));
    ::close(fd);
    const fs::path file = fs::path("/dev/shm") / name.substr(1);
    const Outcome o = macrostep("run chain.toml --executor processes --output r.csv");
    ASSERT_EQ(o.status, 0) << o.err;
    EXPECT_FALSE(fs::exists(file)) << file;
    if (o.err.find("removed the shared-memory segment " + name) == std::string::npos) continue;
    EXPECT_NE(o.err.find("owner pid " + std::to_string(pid) + " does not exist"), std::string::npos)
        << o.err;
    return;
  }
  ADD_FAILURE() << "three runs did not report removing the stale segment";
}

TEST_F(Command, CleanupWithNothingStale) {
  // Segments of live owners are never removed: this process owns one.
  auto segment = macrostep::ipc::SharedSegment::create();
  const Outcome o = macrostep("cleanup");
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_EQ(o.out.find(segment.name()), std::string::npos) << o.out;
  EXPECT_TRUE(fs::exists(fs::path("/dev/shm") / segment.name().substr(1)));
  const Outcome again = macrostep("cleanup");
  EXPECT_EQ(again.status, 0);
  EXPECT_NE(again.out.find("no stale segments"), std::string::npos) << again.out;
}

}  // namespace

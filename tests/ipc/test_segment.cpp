// SharedSegment: creation, header, region allocator, attach-time validation, and cleanup on
// every exit path (DESIGN.md contract 5).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <string>

#include "ipc_test_support.hpp"
#include "macrostep/ipc/shared_segment.hpp"

namespace {

using macrostep::ipc::kCacheLine;
using macrostep::ipc::kMaxRegions;
using macrostep::ipc::kSegmentLayoutVersion;
using macrostep::ipc::kSegmentMagic;
using macrostep::ipc::list_stale_segments;
using macrostep::ipc::RegionRef;
using macrostep::ipc::remove_stale_segments;
using macrostep::ipc::SegmentErrc;
using macrostep::ipc::SegmentError;
using macrostep::ipc::SegmentHeader;
using macrostep::ipc::SegmentIdentity;
using macrostep::ipc::SegmentOptions;
using macrostep::ipc::SharedSegment;
using macrostep::ipc::StaleSegment;
using macrostep::ipc::testing::fork_child;
using macrostep::ipc::testing::shm_name_exists;
using macrostep::ipc::testing::wait_child;

std::int64_t realtime_ns() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// Expects `f` to throw SegmentError with `code` and a message containing `text`.
template <class F>
void expect_segment_error(F&& f, SegmentErrc code, const std::string& text) {
  try {
    f();
    ADD_FAILURE() << "no SegmentError thrown (expected: " << text << ")";
  } catch (const SegmentError& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_NE(std::string(e.what()).find(text), std::string::npos)
        << "message \"" << e.what() << "\" lacks \"" << text << "\"";
  }
}

SegmentHeader& writable_header(const SharedSegment& s) {
  return *reinterpret_cast<SegmentHeader*>(s.base());
}

const StaleSegment* find_stale(const std::vector<StaleSegment>& list, const std::string& name) {
  const auto it =
      std::find_if(list.begin(), list.end(), [&](const StaleSegment& s) { return s.name == name; });
  return it == list.end() ? nullptr : &*it;
}

// A child that creates a segment, reports its name through a pipe, then runs `then`.
struct ChildWithSegment {
  pid_t pid = -1;
  std::string name;
};

ChildWithSegment spawn_segment_owner(const std::function<int(SharedSegment&)>& then,
                                     bool install_handlers = false) {
  int fds[2];
  if (pipe(fds) != 0) return {};
  ChildWithSegment child;
  child.pid = fork_child([&] {
    close(fds[0]);
    if (install_handlers) macrostep::ipc::install_segment_cleanup_handlers();
    SharedSegment s = SharedSegment::create();
    const std::string& n = s.name();
    if (write(fds[1], n.c_str(), n.size() + 1) != static_cast<ssize_t>(n.size() + 1)) return 3;
    close(fds[1]);
    return then(s);
  });
  close(fds[1]);
  char buf[256] = {};
  std::size_t got = 0;
  while (got < sizeof(buf) - 1) {
    const ssize_t n = read(fds[0], buf + got, sizeof(buf) - 1 - got);
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
    if (std::memchr(buf, '\0', got) != nullptr) break;
  }
  close(fds[0]);
  child.name = buf;
  return child;
}

// ---- creation and header ------------------------------------------------------------------------

TEST(SharedSegment, CreatesAPrivateObjectUnderAnUnpredictableName) {
  SharedSegment a = SharedSegment::create();
  SharedSegment b = SharedSegment::create();
  EXPECT_NE(a.name(), b.name());
  const std::string prefix = std::string("/macrostep-") + std::to_string(getuid()) +
                             std::string("-") + std::to_string(getpid()) + "-";
  ASSERT_EQ(a.name().rfind(prefix, 0), 0u) << a.name();
  const std::string random = a.name().substr(prefix.size());
  EXPECT_EQ(random.size(), 16u);
  EXPECT_EQ(random.find_first_not_of("0123456789abcdef"), std::string::npos) << random;

  struct stat st {};
  ASSERT_EQ(stat(("/dev/shm" + a.name()).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(st.st_uid, geteuid());
  EXPECT_EQ(static_cast<std::uint64_t>(st.st_size), a.size());
  EXPECT_TRUE(a.is_owner());
}

// Hostile input: the pages are reserved when the segment is created, so that storage that
// runs out (a full /dev/shm: ENOSPC) is an error of create() that leaves nothing behind, never a
// SIGBUS at the first touch. The file-size limit stands in for the full file system here (it
// needs no root): it refuses the reservation with EFBIG the same way. test_hostile runs the
// app with a really full /dev/shm where a mount namespace is allowed.
TEST(SharedSegment, CreationFailsCleanlyWhenItsPagesCannotBeReserved) {
  const pid_t pid = fork_child([] {
    signal(SIGXFSZ, SIG_IGN);
    const rlimit limit{64 * 1024, 64 * 1024};
    if (setrlimit(RLIMIT_FSIZE, &limit) != 0) return 10;
    SegmentOptions options;
    options.region_bytes = std::size_t{4} << 20;
    try {
      SharedSegment s = SharedSegment::create(options);
      return 11;  // created beyond the limit
    } catch (const SegmentError& e) {
      const std::string m = e.what();
      if (m.find("cannot reserve") == std::string::npos) return 12;
      if (m.find(std::strerror(EFBIG)) == std::string::npos) return 13;
    }
    const std::string mine =
        std::string("macrostep-") + std::to_string(getuid()) + "-" + std::to_string(getpid()) + "-";
    for (const auto& entry : std::filesystem::directory_iterator("/dev/shm")) {
      if (entry.path().filename().string().rfind(mine, 0) == 0) return 14;  // left behind
    }
    return 0;
  });
  EXPECT_EQ(wait_child(pid), 0);
}

TEST(SharedSegment, HeaderRecordsLayoutOwnerAndCreationTime) {
  const std::int64_t before = realtime_ns();
  SegmentOptions options;
  options.region_bytes = 100'000;
  options.run_cpus = 3;
  SharedSegment s = SharedSegment::create(options);
  const std::int64_t after = realtime_ns();

  const auto& id = s.identity();
  EXPECT_EQ(id.magic, kSegmentMagic);
  EXPECT_EQ(id.layout_version, kSegmentLayoutVersion);
  EXPECT_EQ(id.header_size, sizeof(SegmentHeader));
  EXPECT_EQ(id.total_size, s.size());
  EXPECT_EQ(id.heap_offset % kCacheLine, 0u);
  EXPECT_GE(id.heap_offset, sizeof(SegmentHeader));
  EXPECT_EQ(id.heap_offset + id.heap_size, id.total_size);
  EXPECT_GE(id.heap_size, 100'000u);
  EXPECT_EQ(id.owner_uid, getuid());
  EXPECT_EQ(id.owner_pid, getpid());
  EXPECT_NE(id.owner_start_ticks, 0u);
  EXPECT_GE(id.creation_time_ns, before);
  EXPECT_LE(id.creation_time_ns, after);
  EXPECT_EQ(id.run_cpus, 3u);
  EXPECT_EQ(id.max_regions, kMaxRegions);
  EXPECT_EQ(s.attached_processes(), 1u);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(s.base()) % kCacheLine, 0u);
}

// ---- region allocator -----------------------------------------------------------------------

TEST(SharedSegment, AllocatorHandsOutAlignedDisjointZeroedBlocksByOffset) {
  SharedSegment s = SharedSegment::create();
  const RegionRef a = s.allocate("a", 1);
  const RegionRef b = s.allocate("b", 100);
  const RegionRef c = s.allocate("c", 10, 4096);
  for (const RegionRef& r : {a, b, c}) {
    EXPECT_EQ(r.offset % kCacheLine, 0u);
    EXPECT_GE(r.offset, s.identity().heap_offset);
    EXPECT_LE(r.offset + r.size, s.size());
    for (std::uint64_t i = 0; i < r.size; ++i) ASSERT_EQ(s.at(r.offset)[i], std::byte{0});
  }
  EXPECT_EQ(c.offset % 4096, 0u);
  EXPECT_LE(a.offset + kCacheLine, b.offset);  // a 1-byte block still owns its cache line
  EXPECT_LE(b.offset + 128, c.offset);
  EXPECT_EQ(a.size, 1u);
  EXPECT_EQ(b.size, 100u);

  std::memset(s.at(b.offset), 0x5a, b.size);

  // A second mapping (as another process would have) sees the same blocks at the same offsets
  // but at a different address.
  SharedSegment t = SharedSegment::attach(s.name());
  EXPECT_FALSE(t.is_owner());
  EXPECT_NE(t.base(), s.base());
  EXPECT_EQ(s.attached_processes(), 2u);
  const auto found = t.find("b");
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->offset, b.offset);
  EXPECT_EQ(found->size, b.size);
  EXPECT_EQ(std::to_integer<int>(t.at(found->offset)[99]), 0x5a);
  const auto all = t.regions();
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].first, "a");
  EXPECT_EQ(all[1].first, "b");
  EXPECT_EQ(all[2].first, "c");
  EXPECT_FALSE(t.find("missing").has_value());
  expect_segment_error([&] { t.region("missing"); }, SegmentErrc::kNoSuchRegion, "'missing'");
}

TEST(SharedSegment, AllocatorRefusesBadRequests) {
  SegmentOptions options;
  options.region_bytes = kMaxRegions * kCacheLine;
  SharedSegment s = SharedSegment::create(options);
  s.allocate("x", 8);
  expect_segment_error([&] { s.allocate("x", 8); }, SegmentErrc::kInvalidArgument,
                       "exists already");
  expect_segment_error([&] { s.allocate("", 8); }, SegmentErrc::kInvalidArgument, "1 to 39");
  expect_segment_error([&] { s.allocate(std::string(40, 'n'), 8); }, SegmentErrc::kInvalidArgument,
                       "1 to 39");
  expect_segment_error([&] { s.allocate("y", 8, 48); }, SegmentErrc::kInvalidArgument,
                       "power of two");
  expect_segment_error([&] { s.allocate("big", s.size()); }, SegmentErrc::kOutOfSpace,
                       "region_bytes");

  SharedSegment t = SharedSegment::attach(s.name());
  expect_segment_error([&] { t.allocate("z", 8); }, SegmentErrc::kInvalidArgument,
                       "only the owning process");

  for (std::size_t i = 1; i < kMaxRegions; ++i) {
    std::string name = "r";
    name += std::to_string(i);
    s.allocate(name, 1);
  }
  EXPECT_EQ(t.regions().size(), kMaxRegions);
  expect_segment_error([&] { s.allocate("one-more", 1); }, SegmentErrc::kRegionTableFull,
                       "256 regions");
}

TEST(SharedSegment, ConstructPublishesTheObjectForOtherMappings) {
  struct Pod {
    std::uint64_t a;
    double b;
  };
  struct Bigger {
    std::uint64_t v[64];
  };
  SharedSegment s = SharedSegment::create();
  Pod& p = s.construct<Pod>("pod", Pod{7, 2.5});
  EXPECT_EQ(p.a, 7u);

  SharedSegment t = SharedSegment::attach(s.name());
  const Pod& q = t.get<Pod>("pod");
  EXPECT_NE(static_cast<const void*>(&q), static_cast<const void*>(&p));
  EXPECT_EQ(q.a, 7u);
  EXPECT_EQ(q.b, 2.5);
  expect_segment_error([&] { t.get<Bigger>("pod"); }, SegmentErrc::kBadRegion,
                       "expects an object of 512 bytes");
}

// ---- attach validation --------------------------------------------------------------------------

TEST(SharedSegmentAttach, RefusesAMissingSegment) {
  expect_segment_error([] { SharedSegment::attach("/macrostep-no-such-segment"); },
                       SegmentErrc::kNotFound, "does not exist");
}

TEST(SharedSegmentAttach, RefusesWrongMagic) {
  SharedSegment s = SharedSegment::create();
  writable_header(s).id.magic ^= 1;
  expect_segment_error([&] { SharedSegment::attach(s.name()); }, SegmentErrc::kBadMagic,
                       "not a macrostep segment");
  writable_header(s).id.magic ^= 1;
  EXPECT_NO_THROW(SharedSegment::attach(s.name()));
}

TEST(SharedSegmentAttach, RefusesAnotherLayoutVersion) {
  SharedSegment s = SharedSegment::create();
  writable_header(s).id.layout_version = kSegmentLayoutVersion + 1;
  expect_segment_error([&] { SharedSegment::attach(s.name()); }, SegmentErrc::kBadVersion,
                       std::string("layout version ") + std::to_string(kSegmentLayoutVersion + 1));
}

TEST(SharedSegmentAttach, RefusesASegmentOfAnotherUser) {
  SharedSegment s = SharedSegment::create();
  writable_header(s).id.owner_uid = getuid() + 1;
  expect_segment_error([&] { SharedSegment::attach(s.name()); }, SegmentErrc::kWrongOwner,
                       std::string("created by uid ") + std::to_string(getuid() + 1));
}

TEST(SharedSegmentAttach, RefusesASizeThatDisagreesWithTheHeader) {
  SharedSegment s = SharedSegment::create();
  writable_header(s).id.total_size += 4096;
  expect_segment_error([&] { SharedSegment::attach(s.name()); }, SegmentErrc::kBadSize,
                       "the object has");
}

TEST(SharedSegmentAttach, RefusesForeignObjects) {
  const std::string name = std::string("/macrostep-test-foreign-") + std::to_string(getpid());
  const int fd = shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, 10), 0);
  expect_segment_error([&] { SharedSegment::attach(name); }, SegmentErrc::kBadSize, "too small");
  ASSERT_EQ(ftruncate(fd, 65536), 0);
  ASSERT_EQ(pwrite(fd, "not a segment", 13, 0), 13);
  expect_segment_error([&] { SharedSegment::attach(name); }, SegmentErrc::kBadMagic,
                       "not a macrostep segment");
  close(fd);
  shm_unlink(name.c_str());
}

TEST(SharedSegmentAttach, CountsAttachedProcesses) {
  SharedSegment s = SharedSegment::create();
  {
    SharedSegment t = SharedSegment::attach(s.name());
    SharedSegment u = SharedSegment::attach(s.name());
    EXPECT_EQ(s.attached_processes(), 3u);
    EXPECT_EQ(s.adaptive_wait_policy().spin_iterations,
              macrostep::ipc::WaitPolicy::adaptive(3, s.identity().run_cpus).spin_iterations);
  }
  EXPECT_EQ(s.attached_processes(), 1u);
}

// ---- cleanup ------------------------------------------------------------------------------------

TEST(SegmentCleanup, OwnerRemovesTheNameOnDestruction) {
  std::string name;
  {
    SharedSegment s = SharedSegment::create();
    name = s.name();
    EXPECT_TRUE(shm_name_exists(name));
    {
      SharedSegment t = SharedSegment::attach(name);  // an attached mapping never unlinks
    }
    EXPECT_TRUE(shm_name_exists(name));
    SharedSegment moved = std::move(s);  // the name goes with the object, once
    EXPECT_TRUE(shm_name_exists(name));
  }
  EXPECT_FALSE(shm_name_exists(name));
}

TEST(SegmentCleanup, UnlinkRemovesTheNameButKeepsTheMapping) {
  SharedSegment s = SharedSegment::create();
  SharedSegment t = SharedSegment::attach(s.name());
  const RegionRef r = s.allocate("r", 8);
  s.unlink();
  EXPECT_FALSE(s.linked());
  EXPECT_FALSE(shm_name_exists(s.name()));
  expect_segment_error([&] { SharedSegment::attach(s.name()); }, SegmentErrc::kNotFound,
                       "does not exist");
  std::memset(s.at(r.offset), 0x11, 8);
  EXPECT_EQ(std::to_integer<int>(t.at(r.offset)[7]), 0x11);
  s.unlink();  // idempotent
}

TEST(SegmentCleanup, ExitRemovesTheNameThroughAtexit) {
  // std::exit does not destroy the automatic SharedSegment; the atexit handler unlinks it.
  const ChildWithSegment child = spawn_segment_owner([](SharedSegment&) -> int { std::exit(0); });
  ASSERT_GT(child.pid, 0);
  EXPECT_EQ(wait_child(child.pid), 0);
  ASSERT_FALSE(child.name.empty());
  EXPECT_FALSE(shm_name_exists(child.name));
}

TEST(SegmentCleanup, TerminationSignalRemovesTheName) {
  const ChildWithSegment child = spawn_segment_owner(
      [](SharedSegment&) {
        raise(SIGTERM);
        return 1;  // not reached: the previous (default) disposition terminates
      },
      /*install_handlers=*/true);
  ASSERT_GT(child.pid, 0);
  EXPECT_EQ(wait_child(child.pid), -SIGTERM);
  ASSERT_FALSE(child.name.empty());
  EXPECT_FALSE(shm_name_exists(child.name));
}

TEST(SegmentCleanup, AbortRemovesTheName) {
  const ChildWithSegment child = spawn_segment_owner([](SharedSegment&) -> int { std::abort(); },
                                                     /*install_handlers=*/true);
  ASSERT_GT(child.pid, 0);
  EXPECT_EQ(wait_child(child.pid), -SIGABRT);
  EXPECT_FALSE(shm_name_exists(child.name));
}

TEST(SegmentCleanup, ForkedChildNeverRemovesItsParentsSegment) {
  SharedSegment s = SharedSegment::create();
  const pid_t pid = fork_child([&] {
    s.unlink();
    { SharedSegment inherited = std::move(s); }
    std::exit(0);  // runs the atexit handler too
    return 1;
  });
  EXPECT_EQ(wait_child(pid), 0);
  EXPECT_TRUE(shm_name_exists(s.name()));
  EXPECT_NO_THROW(SharedSegment::attach(s.name()));
}

TEST(SegmentCleanup, LiveOwnersSegmentsAreNotStale) {
  SharedSegment s = SharedSegment::create();
  EXPECT_EQ(find_stale(list_stale_segments(), s.name()), nullptr);
  const ChildWithSegment child = spawn_segment_owner([](SharedSegment&) {
    pause();  // alive until killed
    return 0;
  });
  ASSERT_GT(child.pid, 0);
  EXPECT_EQ(find_stale(list_stale_segments(), child.name), nullptr);
  EXPECT_TRUE(shm_name_exists(child.name));
  kill(child.pid, SIGKILL);
  wait_child(child.pid);
  shm_unlink(child.name.c_str());  // only ours: other tests may be checking their stale segments
}

TEST(SegmentCleanup, SegmentOfAKilledOwnerIsListedAndRemoved) {
  const ChildWithSegment child = spawn_segment_owner([](SharedSegment&) {
    pause();
    return 0;
  });
  ASSERT_GT(child.pid, 0);
  ASSERT_FALSE(child.name.empty());
  ASSERT_EQ(kill(child.pid, SIGKILL), 0);  // no exit path the owner controls

  // Dead but not reaped yet: a zombie owner is dead.
  siginfo_t info{};
  ASSERT_EQ(waitid(P_PID, static_cast<id_t>(child.pid), &info, WEXITED | WNOWAIT), 0);
  {
    const auto stale = list_stale_segments();
    const StaleSegment* s = find_stale(stale, child.name);
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(s->owner_pid, child.pid);
    EXPECT_NE(s->reason.find("zombie"), std::string::npos) << s->reason;
  }
  EXPECT_EQ(wait_child(child.pid), -SIGKILL);

  const auto stale = list_stale_segments();
  const StaleSegment* s = find_stale(stale, child.name);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->owner_pid, child.pid);
  EXPECT_GT(s->creation_time_ns, 0);
  EXPECT_GT(s->size, 0u);
  EXPECT_NE(s->reason.find("does not exist"), std::string::npos) << s->reason;
  EXPECT_TRUE(shm_name_exists(child.name));  // listing does not remove

  const auto removed = remove_stale_segments();
  EXPECT_NE(find_stale(removed, child.name), nullptr);
  EXPECT_FALSE(shm_name_exists(child.name));
  EXPECT_EQ(find_stale(list_stale_segments(), child.name), nullptr);
}

// The next run removes dead runs' segments, but only those older than its threshold
// (RingTransport: a minute), so that it never races `cleanup` on fresh ones. The age is the
// header's creation time, moved back here as if the owner had died two minutes ago.
TEST(SegmentCleanup, RemovalByAgeLeavesYoungerStaleSegments) {
  using namespace std::chrono_literals;
  const ChildWithSegment child = spawn_segment_owner([](SharedSegment&) {
    pause();
    return 0;
  });
  ASSERT_GT(child.pid, 0);
  ASSERT_EQ(kill(child.pid, SIGKILL), 0);
  EXPECT_EQ(wait_child(child.pid), -SIGKILL);
  EXPECT_EQ(find_stale(remove_stale_segments(60s), child.name), nullptr);
  ASSERT_TRUE(shm_name_exists(child.name));

  const int fd = shm_open(child.name.c_str(), O_RDWR, 0);
  ASSERT_GE(fd, 0);
  const std::int64_t created = realtime_ns() - std::int64_t{120'000'000'000};
  ASSERT_EQ(pwrite(fd, &created, sizeof(created), offsetof(SegmentIdentity, creation_time_ns)),
            static_cast<ssize_t>(sizeof(created)));
  close(fd);
  const auto removed = remove_stale_segments(60s);
  const StaleSegment* s = find_stale(removed, child.name);
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->creation_time_ns, created);
  EXPECT_FALSE(shm_name_exists(child.name));
}

// Hostile input: a file named like a segment whose owner pid is gone is still not ours
// unless it carries our header: neither an empty object nor foreign content is removed.
TEST(SegmentCleanup, FilesWithoutTheSegmentHeaderAreLeftAlone) {
  const pid_t dead = fork_child([] { return 0; });
  ASSERT_EQ(wait_child(dead), 0);
  const std::string prefix = std::string("/macrostep-") + std::to_string(getuid()) +
                             std::string("-") + std::to_string(dead);
  const std::string empty = prefix + "-00000000deadbeef";
  const std::string foreign = prefix + "-00000000cafebabe";
  for (const std::string& name : {empty, foreign}) {
    const int fd = shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
    ASSERT_GE(fd, 0);
    if (name == foreign) {
      const std::string text(4096, 'x');  // someone else's data, larger than our header
      ASSERT_EQ(write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
    }
    close(fd);
  }
  const auto removed = remove_stale_segments();
  EXPECT_EQ(find_stale(removed, empty), nullptr);
  EXPECT_EQ(find_stale(removed, foreign), nullptr);
  EXPECT_TRUE(shm_name_exists(empty));
  EXPECT_TRUE(shm_name_exists(foreign));
  shm_unlink(empty.c_str());
  shm_unlink(foreign.c_str());
}

}  // namespace

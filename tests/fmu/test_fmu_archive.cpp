// Unpacking FMU archives as untrusted input (macrostep/fmu/archive.hpp): the limits at their
// value and one past it, members streamed to disk rather than held in memory, every write
// checked (a file-size limit stands in for a full disk), and no unpack directory left behind by
// any failure. The archives are written here with libarchive: members of zeros, which a zip
// bomb is made of.
#include <archive.h>
#include <archive_entry.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "../support/child_processes.hpp"
#include "../support/read_file.hpp"
#include "macrostep/fmu/archive.hpp"
#include "macrostep/fmu/fmu.hpp"

namespace macrostep {
namespace {

using macrostep::testing::read_file;

namespace fs = std::filesystem;
using fmu::ArchiveLimits;

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
const std::string kBinary = "binaries/linux64/oscillator.so";

struct Member {
  std::string name;
  std::string contents;   // written first
  std::uint64_t zeros{};  // then this many zero bytes
};

// A zip archive (deflated) of `members`, written with libarchive in blocks.
void write_zip(const fs::path& path, const std::vector<Member>& members) {
  std::unique_ptr<archive, decltype(&archive_write_free)> a(archive_write_new(),
                                                            &archive_write_free);
  ASSERT_EQ(archive_write_set_format_zip(a.get()), ARCHIVE_OK);
  ASSERT_EQ(archive_write_open_filename(a.get(), path.c_str()), ARCHIVE_OK);
  const std::string block(1 << 16, '\0');
  for (const Member& m : members) {
    std::unique_ptr<archive_entry, decltype(&archive_entry_free)> e(archive_entry_new(),
                                                                    &archive_entry_free);
    archive_entry_set_pathname(e.get(), m.name.c_str());
    archive_entry_set_filetype(e.get(), AE_IFREG);
    archive_entry_set_perm(e.get(), 0644);
    archive_entry_set_size(e.get(), static_cast<la_int64_t>(m.contents.size() + m.zeros));
    ASSERT_EQ(archive_write_header(a.get(), e.get()), ARCHIVE_OK) << archive_error_string(a.get());
    if (!m.contents.empty()) {
      ASSERT_EQ(archive_write_data(a.get(), m.contents.data(), m.contents.size()),
                static_cast<la_ssize_t>(m.contents.size()));
    }
    for (std::uint64_t left = m.zeros; left > 0;) {
      const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(left, block.size()));
      ASSERT_EQ(archive_write_data(a.get(), block.data(), n), static_cast<la_ssize_t>(n));
      left -= n;
    }
  }
  ASSERT_EQ(archive_write_close(a.get()), ARCHIVE_OK);
}

// A fresh directory that is $TMPDIR while the fixture lives: the test sees every unpack
// directory made, and other tests' directories do not disturb it.
class FmuArchive : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* old = std::getenv("TMPDIR");
    if (old != nullptr) old_tmpdir_ = old;
    dir_ = fs::temp_directory_path() /
           ("macrostep-test-archive-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    tmp_ = dir_ / "tmp";
    fs::create_directories(tmp_);
    setenv("TMPDIR", tmp_.c_str(), 1);
  }
  void TearDown() override {
    if (old_tmpdir_) {
      setenv("TMPDIR", old_tmpdir_->c_str(), 1);
    } else {
      unsetenv("TMPDIR");
    }
    fs::remove_all(dir_);
  }

  // The macrostep-fmu-* directories in $TMPDIR.
  std::vector<std::string> unpack_dirs() const {
    std::vector<std::string> found;
    for (const auto& e : fs::directory_iterator(tmp_)) {
      const std::string name = e.path().filename().string();
      if (name.rfind("macrostep-fmu-", 0) == 0) found.push_back(name);
    }
    return found;
  }

  std::string zip(const std::string& name, const std::vector<Member>& members) const {
    const fs::path path = dir_ / name;
    write_zip(path, members);
    return path.string();
  }

  // unpack_fmu's refusal, "no error" if it unpacks (the directory then removed).
  std::string refusal(const std::string& path, const ArchiveLimits& limits) const {
    try {
      (void)fmu::unpack_fmu(path, kBinary, limits);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "no error";
  }

  fs::path dir_, tmp_;
  std::optional<std::string> old_tmpdir_;
};

TEST_F(FmuArchive, AMemberAtItsLimitIsUnpackedAndOneBytePastItIsRefused) {
  const std::string path = zip("big.fmu", {{kBinary, "binary", 0}, {"resources/zeros", "", kMiB}});
  ArchiveLimits limits;
  limits.max_member_bytes = kMiB;
  {
    const auto dir = fmu::unpack_fmu(path, kBinary, limits);
    EXPECT_EQ(fs::file_size(dir.path() / "resources/zeros"), kMiB);
    EXPECT_EQ(read_file(dir.path() / kBinary), "binary");
    EXPECT_EQ(unpack_dirs().size(), 1u);
  }
  EXPECT_TRUE(unpack_dirs().empty());
  limits.max_member_bytes = kMiB - 1;
  EXPECT_EQ(refusal(path, limits),
            "member resources/zeros unpacks to more than 1048575 bytes, the limit per member "
            "(MACROSTEP_FMU_MAX_MEMBER)");
  EXPECT_TRUE(unpack_dirs().empty());
}

TEST_F(FmuArchive, TheTotalAtItsLimitIsUnpackedAndOneBytePastItIsRefused) {
  const std::string path = zip("two.fmu", {{kBinary, "", kMiB}, {"resources/zeros", "", kMiB}});
  ArchiveLimits limits;
  limits.max_total_bytes = 2 * kMiB;
  EXPECT_EQ(refusal(path, limits), "no error");
  limits.max_total_bytes = 2 * kMiB - 1;
  EXPECT_EQ(refusal(path, limits),
            "member resources/zeros takes the unpacked files beyond 2097151 bytes, the limit for "
            "one FMU (MACROSTEP_FMU_MAX_UNPACKED)");
  EXPECT_TRUE(unpack_dirs().empty());
}

TEST_F(FmuArchive, TheMemberCountAtItsLimitIsReadAndOnePastItIsRefused) {
  std::vector<Member> members = {{"modelDescription.xml", "<fmiModelDescription/>", 0}};
  for (int i = 1; i <= 4; ++i) members.push_back({"resources/" + std::to_string(i), "x", 0});
  const std::string path = zip("many.fmu", members);
  ArchiveLimits limits;
  limits.max_members = 5;
  const auto listing = fmu::list_fmu_archive(path, limits);
  EXPECT_EQ(listing.files.size(), 5u);
  EXPECT_EQ(listing.model_description, "<fmiModelDescription/>");
  EXPECT_EQ(refusal(path, limits), "no error");
  limits.max_members = 4;
  const std::string expected =
      "has more than 4 members, the limit (MACROSTEP_FMU_MAX_MEMBERS); the next is resources/4";
  try {
    (void)fmu::list_fmu_archive(path, limits);
    ADD_FAILURE() << "listed";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(e.what(), expected);
  }
  EXPECT_EQ(refusal(path, limits), expected);
  EXPECT_TRUE(unpack_dirs().empty());
}

// The peak resident set while a 64 MiB member is unpacked: the old reader held the member in a
// string (64 MiB and more while it grew); blocks of 64 KiB add little.
TEST_F(FmuArchive, AMemberIsStreamedToDiskNotHeldInMemory) {
  const std::string path = zip("bomb.fmu", {{"resources/zeros", "", 64 * kMiB}});
  const auto status_kib = [](const std::string& field) {
    std::ifstream in("/proc/self/status");
    for (std::string line; std::getline(in, line);) {
      if (line.rfind(field + ":", 0) == 0) return std::stol(line.substr(field.size() + 1));
    }
    return -1L;
  };
  // Writing 5 to clear_refs resets the peak (VmHWM) to the current resident set (Linux >= 4.0).
  if (!(std::ofstream("/proc/self/clear_refs") << "5" << std::flush)) {
    GTEST_SKIP() << "/proc/self/clear_refs cannot be written: the peak cannot be reset";
  }
  const long before = status_kib("VmRSS");
  ASSERT_GT(before, 0);
  {
    const auto dir = fmu::unpack_fmu(path, kBinary, ArchiveLimits{});
    EXPECT_EQ(fs::file_size(dir.path() / "resources/zeros"), 64 * kMiB);
  }
  const long peak = status_kib("VmHWM");
  EXPECT_LT(peak - before, 16 * 1024) << "peak " << peak << " KiB, before " << before << " KiB";
}

// A process limited to 1 MiB per file (RLIMIT_FSIZE, SIGXFSZ ignored) gets EFBIG from write(2)
// past it, as a full disk gives ENOSPC: the unpack is refused naming the file and the reason.
TEST_F(FmuArchive, AFailedWriteIsRefusedWithTheSystemsReasonAndLeavesNothing) {
  const std::string path = zip("large.fmu", {{kBinary, "", 64}, {"resources/data", "", 2 * kMiB}});
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  const pid_t child = macrostep::testing::fork_tied();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(pipe_fds[0]);
    const rlimit limit{kMiB, kMiB};
    signal(SIGXFSZ, SIG_IGN);
    if (setrlimit(RLIMIT_FSIZE, &limit) != 0) _exit(3);
    const std::string message = refusal(path, ArchiveLimits{});
    const bool written =
        write(pipe_fds[1], message.data(), message.size()) == static_cast<ssize_t>(message.size());
    _exit(written ? 0 : 4);
  }
  close(pipe_fds[1]);
  std::string message;
  char buffer[256];
  for (ssize_t n; (n = read(pipe_fds[0], buffer, sizeof buffer)) > 0;) message.append(buffer, n);
  close(pipe_fds[0]);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_EQ(message, "cannot write resources/data: File too large");
  EXPECT_TRUE(unpack_dirs().empty());
}

TEST_F(FmuArchive, ConflictingEntriesAreRefusedAndLeaveNothing) {
  const std::string kConflict =
      " (the archive has conflicting entries: a member twice, or a file where a directory is)";
  const std::vector<std::pair<std::vector<Member>, std::string>> cases = {
      {{{"resources/a", "1", 0}, {"resources/a", "2", 0}},
       "cannot create resources/a: File exists" + kConflict},
      {{{"resources/a", "1", 0}, {"resources/a/b", "2", 0}}, "cannot create resources/a/b: "},
      {{{"resources/a/b", "1", 0}, {"resources/a", "2", 0}},
       "cannot create resources/a: File exists" + kConflict},
  };
  int i = 0;
  for (const auto& [members, expected] : cases) {
    const std::string message = refusal(zip(std::to_string(++i) + ".fmu", members), {});
    EXPECT_EQ(message.substr(0, expected.size()), expected) << message;
    EXPECT_NE(message.find(kConflict), std::string::npos) << message;
    EXPECT_TRUE(unpack_dirs().empty()) << message;
  }
}

// Through build_fmu_subsystem: the limits come from the environment, the message names the FMU,
// and the directory of an FMU with resources/ goes also when a later step fails.
TEST_F(FmuArchive, BuildingTheSubsystemNamesTheFmuAndLeavesNothingOnAnyFailure) {
  const std::string xml = read_file(fs::path(FMU_XML_DIR) / "oscillator.xml");
  const std::string binary =
      read_file(fs::path(FMU_DIR) / "oscillator.stage/binaries/linux64/oscillator.so");
  const auto refusal_of = [&](const std::string& path) {
    try {
      (void)fmu::build_fmu_subsystem({path, "{}", {}, {}, ""});
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string big = zip(
      "big.fmu",
      {{"modelDescription.xml", xml, 0}, {kBinary, binary, 0}, {"resources/table", "", 2 * kMiB}});
  EXPECT_EQ(refusal_of(big), "no error");
  setenv("MACROSTEP_FMU_MAX_MEMBER", "1M", 1);
  EXPECT_EQ(refusal_of(big), "FMU " + big +
                                 ": member resources/table unpacks to more than 1 MiB, the limit "
                                 "per member (MACROSTEP_FMU_MAX_MEMBER)");
  setenv("MACROSTEP_FMU_MAX_MEMBER", "1X", 1);
  EXPECT_EQ(refusal_of(big), "FMU " + big +
                                 ": MACROSTEP_FMU_MAX_MEMBER=\"1X\": must be a positive number of "
                                 "bytes, optionally followed by K, M, G or T (powers of 1024)");
  unsetenv("MACROSTEP_FMU_MAX_MEMBER");
  EXPECT_TRUE(unpack_dirs().empty());

  std::string wrong_guid = xml;
  wrong_guid.replace(wrong_guid.find("guid=\"{5e0d"), 11, "guid=\"{0000");
  const std::vector<std::pair<std::vector<Member>, std::string>> cases = {
      {{{"modelDescription.xml", xml, 0},
        {kBinary, binary, 0},
        {"resources/a", "", 0},
        {"resources/a/b", "", 0}},
       "cannot create resources/a/b: "},
      {{{"modelDescription.xml", xml, 0}, {kBinary, "not ELF", 0}, {"resources/a", "", 0}},
       "oscillator.so"},
      {{{"modelDescription.xml", wrong_guid, 0}, {kBinary, binary, 0}, {"resources/a", "", 0}},
       "fmi2Instantiate returned NULL"},
  };
  int i = 0;
  for (const auto& [members, expected] : cases) {
    const std::string path = zip("bad" + std::to_string(++i) + ".fmu", members);
    const std::string message = refusal_of(path);
    EXPECT_EQ(message.rfind("FMU " + path + ": ", 0), 0u) << message;
    EXPECT_NE(message.find(expected), std::string::npos) << message;
    EXPECT_TRUE(unpack_dirs().empty()) << message;
  }
}

}  // namespace
}  // namespace macrostep

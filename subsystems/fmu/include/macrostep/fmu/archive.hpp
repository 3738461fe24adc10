// An FMU is a zip archive (FMI 2 §2.4, FMI 3 §2.5). Reading one is two passes with libarchive:
// list_fmu_archive() names the members and reads modelDescription.xml into memory, and
// unpack_fmu() streams the platform binary and resources/ to a private directory, in blocks of
// 64 KiB (no member is held in memory whole). An archive is untrusted input: its sizes are those
// of the data actually inflated, not those it declares, and both passes stop at ArchiveLimits.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace macrostep::fmu {

// What one FMU may unpack to. Every process that builds the subsystem (the master and each
// worker) unpacks its own copy, so these bound the disk that one FMU takes per process. The
// defaults are far above real FMUs (binaries and resource files of a few hundred MiB at most) and
// far below what a zip bomb inflates to; each can be overridden by the environment variable named
// beside it (a number of bytes, or of members, with an optional suffix K, M, G or T for powers of
// 1024, e.g. MACROSTEP_FMU_MAX_UNPACKED=16G).
struct ArchiveLimits {
  // The bytes written for the binary and resources/ together: MACROSTEP_FMU_MAX_UNPACKED.
  std::uint64_t max_total_bytes = std::uint64_t{4} << 30;
  // The bytes of any one member read or written: MACROSTEP_FMU_MAX_MEMBER.
  std::uint64_t max_member_bytes = std::uint64_t{512} << 20;
  // The entries (files and directories) of the archive: MACROSTEP_FMU_MAX_MEMBERS.
  std::uint64_t max_members = 100'000;

  // The defaults, overridden by the environment; std::invalid_argument naming the variable for
  // a value that is not a positive number.
  static ArchiveLimits from_environment();
};

// modelDescription.xml is parsed from memory: it may have at most this many bytes (and at most
// ArchiveLimits::max_member_bytes). 128 MiB describes millions of variables.
inline constexpr std::uint64_t kMaxModelDescriptionBytes = std::uint64_t{128} << 20;

struct ArchiveListing {
  // The file entries' paths in archive order, a leading "./" removed.
  std::vector<std::string> files;
  // The contents of modelDescription.xml, if the archive has it.
  std::optional<std::string> model_description;
};

// Pass 1. Throws std::invalid_argument: "not a zip archive (<libarchive's reason>)" for a file
// that libarchive cannot read as zip, "a damaged zip archive: cannot read <member> (...)", or a
// limit exceeded (naming the member, the limit and its variable).
ArchiveListing list_fmu_archive(const std::string& path, const ArchiveLimits& limits);

// A directory "macrostep-fmu-XXXXXX" under $TMPDIR (mkdtemp: private to this user), removed with
// everything in it when the object is destroyed. Movable; a moved-from object owns nothing.
class UnpackDirectory {
 public:
  UnpackDirectory() = default;
  // Creates the directory; std::invalid_argument with the system's reason if it cannot.
  static UnpackDirectory create();
  UnpackDirectory(UnpackDirectory&& other) noexcept;
  UnpackDirectory& operator=(UnpackDirectory&& other) noexcept;
  UnpackDirectory(const UnpackDirectory&) = delete;
  UnpackDirectory& operator=(const UnpackDirectory&) = delete;
  ~UnpackDirectory();

  const std::filesystem::path& path() const { return path_; }
  bool empty() const { return path_.empty(); }
  // Removes the directory now (errors ignored: it is private and under $TMPDIR).
  void remove();

 private:
  std::filesystem::path path_;
};

// Pass 2: the member named `binary` and every member under resources/ written to a new
// UnpackDirectory, at the same relative paths (members whose path has a ".." component are
// skipped). Every write and close is checked. Throws std::invalid_argument, the directory already
// removed, for: the reasons of list_fmu_archive; a limit exceeded ("member M unpacks to more than
// N, the limit per member (MACROSTEP_FMU_MAX_MEMBER)", likewise for the total and the member
// count); conflicting entries (a member twice, or a file where a directory is needed: "cannot
// create M: <reason>"); a failed write ("cannot write M: <system's reason>", e.g. "No space left
// on device" or "File too large").
UnpackDirectory unpack_fmu(const std::string& path, const std::string& binary,
                           const ArchiveLimits& limits);

}  // namespace macrostep::fmu

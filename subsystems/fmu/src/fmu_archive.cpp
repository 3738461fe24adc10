// Reading and unpacking FMU archives (macrostep/fmu/archive.hpp).
#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <stdlib.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <utility>

#include "macrostep/fmu/archive.hpp"

namespace macrostep::fmu {

namespace {

namespace fs = std::filesystem;

constexpr std::size_t kBlockBytes = 1 << 16;

[[noreturn]] void unzip_error(const std::string& why) {
  throw std::invalid_argument(why);
}

// "512 MiB" for a whole number of KiB / MiB / GiB / TiB, else "N bytes".
std::string bytes_text(std::uint64_t n) {
  static constexpr const char* kUnits[] = {"TiB", "GiB", "MiB", "KiB"};
  for (int i = 0; i < 4; ++i) {
    const std::uint64_t unit = std::uint64_t{1} << (10 * (4 - i));
    if (n >= unit && n % unit == 0) return fmt::format("{} {}", n / unit, kUnits[i]);
  }
  return fmt::format("{} bytes", n);
}

// The variable's value, or `fallback` if it is unset or empty.
std::uint64_t limit_from(const char* variable, std::uint64_t fallback, const char* what) {
  const char* text = std::getenv(variable);
  if (text == nullptr || *text == '\0') return fallback;
  const std::string_view s(text);
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  int shift = 0;
  const std::string_view suffix(end, static_cast<std::size_t>(s.data() + s.size() - end));
  if (suffix.size() == 1) {
    const auto at = std::string_view("KMGT").find(
        static_cast<char>(std::toupper(static_cast<unsigned char>(suffix[0]))));
    shift = at == std::string_view::npos ? -1 : 10 * static_cast<int>(at + 1);
  }
  const bool ok = ec == std::errc() && value > 0 && suffix.size() <= 1 && shift >= 0 &&
                  value <= (~std::uint64_t{0} >> shift);
  if (!ok) {
    unzip_error(
        fmt::format("{}=\"{}\": must be a positive number of {}, optionally followed by K, M, "
                    "G or T (powers of 1024)",
                    variable, s, what));
  }
  return value << shift;
}

bool under(const std::string& name, const char* prefix) {
  return name.rfind(prefix, 0) == 0;
}

// Whether a member's path leaves the directory it is unpacked into.
bool escapes(const std::string& name) {
  return name.empty() || name.front() == '/' || name.back() == '/' || name == ".." ||
         under(name, "../") || name.find("/../") != std::string::npos || name.ends_with("/..");
}

// The entries of an archive in order: the member count checked, data read in blocks with a limit.
class Reader {
 public:
  Reader(const std::string& path, const ArchiveLimits& limits)
      : archive_(archive_read_new(), &archive_read_free), limits_(limits) {
    if (!archive_) throw std::bad_alloc();
    archive_read_support_format_zip(archive_.get());
    if (archive_read_open_filename(archive_.get(), path.c_str(), kBlockBytes) != ARCHIVE_OK) {
      fail("not a zip archive");
    }
  }

  // The next file entry's path (without a leading "./"), or nothing at the archive's end.
  std::optional<std::string> next() {
    for (;;) {
      archive_entry* entry = nullptr;
      const int r = archive_read_next_header(archive_.get(), &entry);
      if (r == ARCHIVE_EOF) return std::nullopt;
      if (r != ARCHIVE_OK && r != ARCHIVE_WARN) fail("not a zip archive");
      const char* raw = archive_entry_pathname(entry);
      std::string name = raw ? raw : "";
      while (under(name, "./")) name.erase(0, 2);
      if (++members_ > limits_.max_members) {
        unzip_error(
            fmt::format("has more than {} members, the limit (MACROSTEP_FMU_MAX_MEMBERS); the "
                        "next is {}",
                        limits_.max_members, name));
      }
      if (archive_entry_filetype(entry) == AE_IFREG) return name;
    }
  }

  // The current entry's data, handed to sink(const char*, std::size_t) in blocks; at most
  // `limit` bytes (`limit_text` names it in the refusal).
  template <class Sink>
  void read(const std::string& name, std::uint64_t limit, const char* limit_text, Sink&& sink) {
    std::uint64_t size = 0;
    for (la_ssize_t n; (n = archive_read_data(archive_.get(), buffer_.get(), kBlockBytes)) != 0;) {
      if (n < 0) fail(fmt::format("a damaged zip archive: cannot read {}", name));
      size += static_cast<std::uint64_t>(n);
      if (size > limit) {
        unzip_error(fmt::format("member {} unpacks to more than {}, {}", name, bytes_text(limit),
                                limit_text));
      }
      sink(buffer_.get(), static_cast<std::size_t>(n));
    }
  }

 private:
  [[noreturn]] void fail(const std::string& what) {
    const char* why = archive_error_string(archive_.get());
    unzip_error(fmt::format("{} ({})", what, why ? why : "unknown reason"));
  }

  std::unique_ptr<archive, decltype(&archive_read_free)> archive_;
  const ArchiveLimits& limits_;
  std::uint64_t members_ = 0;
  std::unique_ptr<char[]> buffer_ = std::make_unique<char[]>(kBlockBytes);
};

// A file being written; closed (unchecked) if an error leaves it open.
class OutputFile {
 public:
  OutputFile(const fs::path& path, const std::string& name) : name_(name) {
    std::error_code ec;
    fs::create_directories(path.parent_path(), ec);
    if (ec) unzip_error(fmt::format("cannot create {}: {}{}", name, ec.message(), kConflict));
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd_ < 0) {
      const int err = errno;
      unzip_error(fmt::format("cannot create {}: {}{}", name, std::strerror(err),
                              err == EEXIST ? kConflict : ""));
    }
  }
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  ~OutputFile() {
    if (fd_ >= 0) ::close(fd_);
  }

  // write(2) until all is written: a short write is continued, an error refused.
  void write(const char* data, std::size_t size) {
    while (size > 0) {
      const ssize_t n = ::write(fd_, data, size);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) fail(n < 0 ? errno : EIO);
      data += n;
      size -= static_cast<std::size_t>(n);
    }
  }

  void close() {
    const int fd = std::exchange(fd_, -1);
    if (::close(fd) != 0) fail(errno);
  }

 private:
  static constexpr const char* kConflict =
      " (the archive has conflicting entries: a member twice, or a file where a directory is)";

  [[noreturn]] void fail(int err) {
    unzip_error(fmt::format("cannot write {}: {}", name_, std::strerror(err)));
  }

  const std::string& name_;
  int fd_ = -1;
};

}  // namespace

ArchiveLimits ArchiveLimits::from_environment() {
  const ArchiveLimits defaults;
  ArchiveLimits l;
  l.max_total_bytes = limit_from("MACROSTEP_FMU_MAX_UNPACKED", defaults.max_total_bytes, "bytes");
  l.max_member_bytes = limit_from("MACROSTEP_FMU_MAX_MEMBER", defaults.max_member_bytes, "bytes");
  l.max_members = limit_from("MACROSTEP_FMU_MAX_MEMBERS", defaults.max_members, "members");
  return l;
}

ArchiveListing list_fmu_archive(const std::string& path, const ArchiveLimits& limits) {
  ArchiveListing listing;
  Reader reader(path, limits);
  while (auto name = reader.next()) {
    if (*name == "modelDescription.xml" && !listing.model_description) {
      const bool own = kMaxModelDescriptionBytes < limits.max_member_bytes;
      std::string text;
      reader.read(*name, own ? kMaxModelDescriptionBytes : limits.max_member_bytes,
                  own ? "the limit for modelDescription.xml (it is parsed in memory)"
                      : "the limit per member (MACROSTEP_FMU_MAX_MEMBER)",
                  [&](const char* data, std::size_t n) { text.append(data, n); });
      listing.model_description = std::move(text);
    }
    listing.files.push_back(std::move(*name));
  }
  return listing;
}

UnpackDirectory UnpackDirectory::create() {
  std::error_code ec;
  const fs::path tmp = fs::temp_directory_path(ec);
  if (ec) unzip_error("cannot create a directory to unzip it into: " + ec.message());
  std::string pattern = (tmp / "macrostep-fmu-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) {
    unzip_error(fmt::format("cannot create a directory to unzip it into ({}): {}", pattern,
                            std::strerror(errno)));
  }
  UnpackDirectory d;
  d.path_ = pattern;
  return d;
}

UnpackDirectory::UnpackDirectory(UnpackDirectory&& other) noexcept
    : path_(std::exchange(other.path_, {})) {}

UnpackDirectory& UnpackDirectory::operator=(UnpackDirectory&& other) noexcept {
  if (this != &other) {
    remove();
    path_ = std::exchange(other.path_, {});
  }
  return *this;
}

UnpackDirectory::~UnpackDirectory() {
  remove();
}

void UnpackDirectory::remove() {
  if (path_.empty()) return;
  std::error_code ignored;
  fs::remove_all(path_, ignored);
  path_.clear();
}

UnpackDirectory unpack_fmu(const std::string& path, const std::string& binary,
                           const ArchiveLimits& limits) {
  UnpackDirectory dir = UnpackDirectory::create();
  Reader reader(path, limits);
  std::uint64_t total = 0;
  while (auto name = reader.next()) {
    if ((*name != binary && !under(*name, "resources/")) || escapes(*name)) continue;
    OutputFile out(dir.path() / *name, *name);
    reader.read(*name, limits.max_member_bytes, "the limit per member (MACROSTEP_FMU_MAX_MEMBER)",
                [&](const char* data, std::size_t n) {
                  total += n;
                  if (total > limits.max_total_bytes) {
                    unzip_error(
                        fmt::format("member {} takes the unpacked files beyond {}, the limit "
                                    "for one FMU (MACROSTEP_FMU_MAX_UNPACKED)",
                                    *name, bytes_text(limits.max_total_bytes)));
                  }
                  out.write(data, n);
                });
    out.close();
  }
  return dir;
}

}  // namespace macrostep::fmu

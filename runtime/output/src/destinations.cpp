// Every file a command writes, checked together (destinations.hpp).
#include "macrostep/output/destinations.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <utility>

#include "macrostep/output/csv.hpp"

namespace macrostep::output {

namespace {

// The normal form of a path for comparing names of files that do not exist yet.
std::string normal(const std::string& path) {
  std::error_code ignored;
  return std::filesystem::weakly_canonical(std::filesystem::absolute(path), ignored)
      .lexically_normal()
      .string();
}

// A file can be created in `path`'s directory (a probe file, removed at once).
void check_creatable(const std::string& role, const std::string& path) {
  const std::string probe = fmt::format("{}.tmp.{}", path, ::getpid());
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) {
    throw OutputError(
        fmt::format("{}: cannot create {} there: {}", path, role, std::strerror(errno)));
  }
  ::close(fd);
  ::unlink(probe.c_str());
}

}  // namespace

WriteLock::WriteLock(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0) {
    throw OutputError(fmt::format("{}: cannot create: {}", path, std::strerror(errno)));
  }
  struct flock whole {};
  whole.l_type = F_WRLCK;
  whole.l_whence = SEEK_SET;  // l_start = l_len = 0: the whole file, however long it grows
  if (::fcntl(fd, F_OFD_SETLK, &whole) != 0) {
    const int err = errno;
    ::close(fd);
    if (err == EAGAIN || err == EACCES) {
      throw OutputError(fmt::format(
          "{}: another macrostep command writes this file now; wait until it ends, or name "
          "another file",
          path));
    }
    throw OutputError(fmt::format("{}: cannot lock it for writing: {}", path, std::strerror(err)));
  }
  fd_ = fd;
}

WriteLock::WriteLock(WriteLock&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}

WriteLock& WriteLock::operator=(WriteLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

WriteLock::~WriteLock() {
  if (fd_ >= 0) ::close(fd_);
}

bool same_path(const std::string& a, const std::string& b) {
  return a == b || same_file(a, b) || normal(a) == normal(b);
}

bool same_file(const std::string& a, const std::string& b) {
  struct stat sa {
  }, sb{};
  return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

Destinations::Destinations(std::vector<Destination> inputs) : inputs_(std::move(inputs)) {}

bool Destinations::is_special(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISCHR(st.st_mode);
}

void Destinations::add(const std::string& role, const std::string& path, bool directory) {
  if (path.empty()) throw OutputError(fmt::format("{} has no file name", role));
  for (const Destination& input : inputs_) {
    if (same_path(path, input.path)) {
      throw OutputError(fmt::format("{}: {} is {} {} itself; choose another file name", path, role,
                                    input.role, input.path));
    }
  }
  for (const Destination& d : list_) {
    if (same_path(path, d.path)) {
      throw OutputError(
          fmt::format("{}: {} would be the same file as {} ({})", path, role, d.role, d.path));
    }
  }
  struct stat st {};
  const bool exists = ::stat(path.c_str(), &st) == 0;
  if (exists && S_ISDIR(st.st_mode) && !directory) {
    throw OutputError(fmt::format("{}: is a directory; {} goes there", path, role));
  }
  if (exists && directory && !S_ISDIR(st.st_mode)) {
    throw OutputError(
        fmt::format("{}: {} is a directory, but a file of that name exists", path, role));
  }
  if (exists && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) || S_ISBLK(st.st_mode))) {
    throw OutputError(fmt::format(
        "{}: is a {}; {} is written to a regular file (or a character device such as /dev/null)",
        path,
        S_ISFIFO(st.st_mode)   ? "FIFO"
        : S_ISSOCK(st.st_mode) ? "socket"
                               : "block device",
        role));
  }
  if (!(exists && (S_ISCHR(st.st_mode) || directory))) check_creatable(role, path);
  list_.push_back({role, path, directory});
}

}  // namespace macrostep::output

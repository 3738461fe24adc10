// Checkpoint files (checkpoint.hpp; ipc/schema/checkpoint.capnp).
#include "macrostep/checkpoint/checkpoint.hpp"

#include <capnp/message.h>
#include <capnp/serialize.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <kj/exception.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "macrostep/ipc/capnp_bytes.hpp"
#include "macrostep/ipc/schema/checkpoint.capnp.h"

namespace macrostep::checkpoint {
namespace {

namespace schema = ipc::schema;

std::uint64_t fnv1a(const capnp::Data::Reader& bytes) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (const auto b : bytes) {
    h ^= b;
    h *= 0x100000001b3ULL;
  }
  return h;
}

capnp::ReaderOptions limits(std::size_t words) {
  capnp::ReaderOptions options;
  options.traversalLimitInWords = std::max<std::uint64_t>(4 * words, 8u << 20);
  return options;
}

template <class T>
void write_list(auto list, const std::vector<T>& v) {
  for (unsigned i = 0; i < list.size(); ++i) list.set(i, v[i]);
}

void write_body(schema::Checkpoint::Builder b, const Checkpoint& c) {
  b.setConfigPath(c.config_path);
  b.setConfigText(c.config_text);
  auto arguments = b.initArguments(static_cast<unsigned>(c.arguments.size()));
  for (unsigned i = 0; i < arguments.size(); ++i) arguments.set(i, c.arguments[i]);
  b.setCsvPath(c.csv_path);
  b.setCsvBytes(c.csv_bytes);
  b.setCsvRows(c.csv_rows);
  b.setStepsBytes(c.steps_bytes);
  b.setStepsRows(c.steps_rows);
  b.setCsvHash(c.csv_hash);
  b.setStepsHash(c.steps_hash);
  write_list(b.initLastRow(static_cast<unsigned>(c.last_row.size())), c.last_row);
  b.setLastRowTime(c.last_row_time);
  b.setLastRowPending(c.last_row_pending);
  b.setTime(c.time);
  b.setAcceptedSteps(c.accepted_steps);
  b.setRejectedSteps(c.rejected_steps);
  write_list(b.initAcceptedByKappa(static_cast<unsigned>(c.accepted_by_kappa.size())),
             c.accepted_by_kappa);
  write_list(b.initTimeByKappa(static_cast<unsigned>(c.time_by_kappa.size())), c.time_by_kappa);
  b.setController(capnp::Data::Reader(reinterpret_cast<const kj::byte*>(c.controller.data()),
                                      c.controller.size()));
  auto scheme = b.initScheme(static_cast<unsigned>(c.scheme.size()));
  for (unsigned i = 0; i < scheme.size(); ++i) {
    write_list(scheme.init(i, static_cast<unsigned>(c.scheme[i].size())), c.scheme[i]);
  }
  auto laws = b.initLaws(static_cast<unsigned>(c.laws.size()));
  for (unsigned i = 0; i < laws.size(); ++i) {
    write_list(laws.init(i, static_cast<unsigned>(c.laws[i].size())), c.laws[i]);
  }
  auto subsystems = b.initSubsystems(static_cast<unsigned>(c.subsystems.size()));
  for (unsigned i = 0; i < subsystems.size(); ++i) {
    subsystems.set(i, capnp::Data::Reader(reinterpret_cast<const kj::byte*>(c.subsystems[i].data()),
                                          c.subsystems[i].size()));
  }
}

template <class T>
std::vector<T> read_list(auto list) {
  std::vector<T> v(list.size());
  for (unsigned i = 0; i < list.size(); ++i) v[i] = list[i];
  return v;
}

std::vector<std::byte> read_data(capnp::Data::Reader d) {
  const auto* p = reinterpret_cast<const std::byte*>(d.begin());
  return {p, p + d.size()};
}

Checkpoint read_body(schema::Checkpoint::Reader r) {
  Checkpoint c;
  c.config_path = r.getConfigPath();
  c.config_text = r.getConfigText();
  for (const auto a : r.getArguments()) c.arguments.emplace_back(a);
  c.csv_path = r.getCsvPath();
  c.csv_bytes = r.getCsvBytes();
  c.csv_rows = r.getCsvRows();
  c.steps_bytes = r.getStepsBytes();
  c.steps_rows = r.getStepsRows();
  c.csv_hash = r.getCsvHash();
  c.steps_hash = r.getStepsHash();
  c.last_row = read_list<double>(r.getLastRow());
  c.last_row_time = r.getLastRowTime();
  c.last_row_pending = r.getLastRowPending();
  c.time = r.getTime();
  c.accepted_steps = r.getAcceptedSteps();
  c.rejected_steps = r.getRejectedSteps();
  c.accepted_by_kappa = read_list<std::uint64_t>(r.getAcceptedByKappa());
  c.time_by_kappa = read_list<double>(r.getTimeByKappa());
  c.controller = read_data(r.getController());
  for (const auto list : r.getScheme()) c.scheme.push_back(read_list<double>(list));
  for (const auto d : r.getSubsystems()) c.subsystems.push_back(read_data(d));
  for (const auto list : r.getLaws()) c.laws.push_back(read_list<double>(list));
  return c;
}

// Writes all of `bytes` to `fd` or returns false (errno set).
bool write_all(int fd, const std::vector<std::byte>& bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

[[noreturn]] void refuse(const std::string& path, const std::string& why) {
  throw CheckpointError(fmt::format("{}: not a usable checkpoint: {}", path, why));
}

}  // namespace

std::vector<std::byte> encode(const Checkpoint& c) {
  capnp::MallocMessageBuilder body;
  write_body(body.initRoot<schema::Checkpoint>(), c);
  const std::vector<std::byte> body_bytes = ipc::to_flat_bytes(body);
  capnp::MallocMessageBuilder file;
  auto root = file.initRoot<schema::CheckpointFile>();
  root.setMagic(kMagic);
  root.setFormatVersion(kFormatVersion);
  const capnp::Data::Reader data(reinterpret_cast<const kj::byte*>(body_bytes.data()),
                                 body_bytes.size());
  root.setBodyHash(fnv1a(data));
  root.setBody(data);
  return ipc::to_flat_bytes(file);
}

void write(const std::string& path, const Checkpoint& c) {
  const std::vector<std::byte> bytes = encode(c);
  const std::filesystem::path target = std::filesystem::absolute(path);
  // A fixed name: a writer killed half-way leaves a file the next write replaces.
  const std::string temporary = target.string() + ".tmp";
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) {
    throw std::runtime_error(
        fmt::format("checkpoint {}: cannot create {}: {}", path, temporary, std::strerror(errno)));
  }
  const bool written = write_all(fd, bytes) && ::fsync(fd) == 0;
  const int err = errno;
  if (::close(fd) != 0 || !written) {
    ::unlink(temporary.c_str());
    throw std::runtime_error(fmt::format("checkpoint {}: cannot write {}: {}", path, temporary,
                                         std::strerror(written ? errno : err)));
  }
  if (::rename(temporary.c_str(), target.c_str()) != 0) {
    const int rename_err = errno;
    ::unlink(temporary.c_str());
    throw std::runtime_error(fmt::format("checkpoint {}: cannot rename {}: {}", path, temporary,
                                         std::strerror(rename_err)));
  }
  // The rename itself is durable only once the directory is.
  const int dir = ::open(target.parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
}

namespace {

// The file's bytes, after the checks that need no more than its first words: a regular file
// (not a directory, FIFO or device, which would block or never end), at most kMaxFileBytes,
// and exactly as long as the message its segment table announces.
std::string checked_contents(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    refuse(path, fmt::format("cannot open it: {}", std::strerror(errno)));
  }
  if (!S_ISREG(st.st_mode)) {
    refuse(path, S_ISDIR(st.st_mode) ? "it is a directory" : "it is not a regular file");
  }
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (size > kMaxFileBytes) {
    refuse(path,
           fmt::format("{} bytes, more than a checkpoint has (at most {})", size, kMaxFileBytes));
  }
  if (size < 16) refuse(path, fmt::format("{} bytes: empty or truncated", size));
  if (size % sizeof(capnp::word) != 0) {
    refuse(path, fmt::format("{} bytes is not a whole number of 8-byte words: truncated", size));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) refuse(path, fmt::format("cannot open it: {}", std::strerror(errno)));
  // The segment table: at most 512 segments are read (Cap'n Proto's own limit).
  std::vector<capnp::word> prefix(std::min<std::uint64_t>(size / sizeof(capnp::word), 257));
  in.read(reinterpret_cast<char*>(prefix.data()),
          static_cast<std::streamsize>(prefix.size() * sizeof(capnp::word)));
  if (!in) refuse(path, "cannot read it");
  const std::uint64_t announced =
      capnp::expectedSizeInWordsFromPrefix(kj::arrayPtr(prefix.data(), prefix.size()));
  if (announced * sizeof(capnp::word) != size) {
    refuse(path, fmt::format("{} bytes, but its message announces {} bytes ({})", size,
                             announced * sizeof(capnp::word),
                             announced * sizeof(capnp::word) < size ? "something follows it"
                                                                    : "truncated"));
  }
  std::string text(size, '\0');
  in.seekg(0);
  in.read(text.data(), static_cast<std::streamsize>(size));
  if (!in) refuse(path, "cannot read it");
  return text;
}

}  // namespace

Checkpoint read(const std::string& path) {
  return decode(checked_contents(path), path);
}

Checkpoint decode(std::string_view text, const std::string& path) {
  if (text.size() < 16) refuse(path, fmt::format("{} bytes: empty or truncated", text.size()));
  if (text.size() % sizeof(capnp::word) != 0) {
    refuse(path,
           fmt::format("{} bytes is not a whole number of 8-byte words: truncated", text.size()));
  }
  const std::vector<capnp::word> words =
      ipc::aligned_words(std::span(reinterpret_cast<const std::byte*>(text.data()), text.size()));
  const std::uint64_t announced =
      capnp::expectedSizeInWordsFromPrefix(kj::arrayPtr(words.data(), words.size()));
  if (announced != words.size()) {
    refuse(path, fmt::format("{} bytes, but its message announces {} bytes ({})", text.size(),
                             announced * sizeof(capnp::word),
                             announced < words.size() ? "something follows it" : "truncated"));
  }
  try {
    capnp::FlatArrayMessageReader file(kj::arrayPtr(words.data(), words.size()),
                                       limits(words.size()));
    const auto root = file.getRoot<schema::CheckpointFile>();
    if (root.getMagic() != kMagic) refuse(path, "no checkpoint frame (wrong magic number)");
    if (root.getFormatVersion() != kFormatVersion) {
      refuse(path, fmt::format("format version {}, this build reads version {}",
                               root.getFormatVersion(), kFormatVersion));
    }
    const auto body = root.getBody();
    if (fnv1a(body) != root.getBodyHash() || body.size() % sizeof(capnp::word) != 0) {
      refuse(path, "its contents do not match their hash (corrupted)");
    }
    const std::vector<capnp::word> body_words = ipc::aligned_words(
        std::span(reinterpret_cast<const std::byte*>(body.begin()), body.size()));
    capnp::FlatArrayMessageReader message(kj::arrayPtr(body_words.data(), body_words.size()),
                                          limits(body_words.size()));
    return read_body(message.getRoot<schema::Checkpoint>());
  } catch (const kj::Exception& e) {
    refuse(path, fmt::format("malformed or truncated ({})", e.getDescription().cStr()));
  }
}

Interval parse_interval(const std::string& text, std::string_view source) {
  const auto bad = [&text, source] {
    return std::invalid_argument(
        fmt::format("{} '{}': give seconds (30, 30s, 0.5s) or accepted macro steps (500steps)",
                    source, text.size() <= 40 ? text : text.substr(0, 40) + "..."));
  };
  Interval interval;
  const char* first = text.data();
  const char* last = text.data() + text.size();
  if (text.ends_with("steps")) {
    last -= 5;
    const auto [end, ec] = std::from_chars(first, last, interval.steps);
    if (ec != std::errc() || end != last || first == last || interval.steps == 0) throw bad();
    return interval;
  }
  if (text.ends_with("s")) --last;
  const auto [end, ec] = std::from_chars(first, last, interval.seconds);
  if (ec != std::errc() || end != last || first == last || !(interval.seconds > 0.0) ||
      !std::isfinite(interval.seconds)) {
    throw bad();
  }
  return interval;
}

std::string default_path(const std::string& csv_path) {
  const std::filesystem::path p(csv_path);
  if (p.extension() == ".csv") return std::filesystem::path(p).replace_extension(".ckpt").string();
  return csv_path + ".ckpt";
}

}  // namespace macrostep::checkpoint

#include "macrostep/output/csv.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <iterator>
#include <set>
#include <utility>
#include <vector>

#include "write_all.hpp"

namespace macrostep::output {

CsvWriter::CsvWriter(std::string path, std::vector<std::string> columns, std::string key_column)
    : path_(std::move(path)), columns_(std::move(columns)), key_(std::move(key_column)) {
  check_columns();
  // Close-on-exec: worker processes started during the run must not hold the result file.
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd_ < 0) {
    throw OutputError(fmt::format("{}: cannot create: {}", path_, std::strerror(errno)));
  }
  buffer_ = header();
  append(buffer_);
}

CsvWriter::CsvWriter(std::string path, std::vector<std::string> columns, std::string key_column,
                     int fd)
    : path_(std::move(path)), columns_(std::move(columns)), key_(std::move(key_column)), fd_(fd) {}

CsvWriter::CsvWriter(CsvWriter&& other) noexcept
    : path_(std::move(other.path_)),
      columns_(std::move(other.columns_)),
      key_(std::move(other.key_)),
      fd_(std::exchange(other.fd_, -1)),
      bytes_(other.bytes_),
      hash_(other.hash_),
      rows_(other.rows_),
      buffer_(std::move(other.buffer_)) {}

void CsvWriter::check_columns() const {
  check_column_names(columns_, key_);
}

void CsvWriter::check_column_names(const std::vector<std::string>& columns,
                                   const std::string& key_column) {
  std::set<std::string_view> seen;
  for (const auto& name : columns) {
    if (name.empty() || name == key_column || name.find_first_of(",\"\r\n") != std::string::npos) {
      throw std::invalid_argument(fmt::format("invalid CSV column name '{}'", name));
    }
    if (!seen.insert(name).second) {
      throw std::invalid_argument(fmt::format("duplicate CSV column name '{}'", name));
    }
  }
}

std::string CsvWriter::header() const {
  std::string text = key_;
  for (const auto& name : columns_) {
    text += ',';
    text += name;
  }
  text += '\n';
  return text;
}

namespace {

// FNV-1a 64 of the first `bytes` bytes of `in`, read in blocks; false if the file is shorter.
bool prefix_hash(std::ifstream& in, std::uint64_t bytes, std::uint64_t& hash) {
  std::vector<char> block(1 << 16);
  hash = kFnvOffset;
  in.seekg(0);
  while (bytes > 0) {
    const auto n = static_cast<std::streamsize>(std::min<std::uint64_t>(bytes, block.size()));
    in.read(block.data(), n);
    if (in.gcount() != n) return false;
    hash = fnv1a(hash, std::string_view(block.data(), static_cast<std::size_t>(n)));
    bytes -= static_cast<std::uint64_t>(n);
  }
  return true;
}

}  // namespace

CsvWriter CsvWriter::continue_file(std::string path, std::vector<std::string> columns,
                                   std::uint64_t bytes, std::size_t rows, std::uint64_t hash,
                                   std::string key_column) {
  CsvWriter w(std::move(path), std::move(columns), std::move(key_column), -1);
  w.check_columns();
  const std::string header = w.header();
  struct stat st {};
  if (::stat(w.path_.c_str(), &st) != 0) {
    throw OutputError(fmt::format("{}: cannot open the result file to continue it: {}", w.path_,
                                  std::strerror(errno)));
  }
  if (!S_ISREG(st.st_mode)) {
    throw OutputError(
        fmt::format("{}: not a regular file; a checkpoint continues its CSV", w.path_));
  }
  if (static_cast<std::uint64_t>(st.st_size) < bytes || bytes < header.size()) {
    throw OutputError(fmt::format("{}: {} bytes, shorter than the {} bytes to continue from",
                                  w.path_, static_cast<std::uint64_t>(st.st_size), bytes));
  }
  {
    std::ifstream in(w.path_, std::ios::binary);
    if (!in) {
      throw OutputError(fmt::format("{}: cannot open the result file to continue it: {}", w.path_,
                                    std::strerror(errno)));
    }
    std::string first(header.size(), '\0');
    in.read(first.data(), static_cast<std::streamsize>(first.size()));
    if (first != header) {
      throw OutputError(fmt::format("{}: its header is not that of this run's columns", w.path_));
    }
    std::uint64_t found = 0;
    if (!prefix_hash(in, bytes, found) || found != hash) {
      throw OutputError(fmt::format(
          "{}: its first {} bytes are not those the checkpoint's run wrote (another run's file, "
          "or changed since)",
          w.path_, bytes));
    }
  }
  w.fd_ = ::open(w.path_.c_str(), O_WRONLY | O_CLOEXEC);
  if (w.fd_ < 0) {
    throw OutputError(fmt::format("{}: cannot open: {}", w.path_, std::strerror(errno)));
  }
  if (::ftruncate(w.fd_, static_cast<off_t>(bytes)) != 0 ||
      ::lseek(w.fd_, static_cast<off_t>(bytes), SEEK_SET) < 0) {
    throw OutputError(
        fmt::format("{}: cannot cut it to {} bytes: {}", w.path_, bytes, std::strerror(errno)));
  }
  w.bytes_ = bytes;
  w.hash_ = hash;
  w.rows_ = rows;
  return w;
}

CsvWriter::~CsvWriter() {
  if (fd_ >= 0) ::close(fd_);
}

std::uint64_t fnv1a(std::uint64_t h, std::string_view bytes) {
  for (const char c : bytes) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  return h;
}

void CsvWriter::append(std::string_view text) {
  if (detail::write_all(fd_, text)) {
    bytes_ += text.size();
    hash_ = fnv1a(hash_, text);
    return;
  }
  const int err = errno;
  // A part of the line may have reached the file: cut it off, so that the file ends with the
  // last complete row (a full disk must not leave a torn row).
  const bool cut = ::ftruncate(fd_, static_cast<off_t>(bytes_)) == 0 &&
                   ::lseek(fd_, static_cast<off_t>(bytes_), SEEK_SET) >= 0;
  throw OutputError(fmt::format("{}: write failed: {} ({} complete row{} {})", path_,
                                std::strerror(err), rows_, rows_ == 1 ? "" : "s",
                                cut ? "kept" : "written; the last one may be torn"));
}

void CsvWriter::write_row(double time, std::span<const double> values) {
  if (fd_ < 0) throw OutputError(fmt::format("{}: write after close", path_));
  if (values.size() != columns_.size()) {
    throw std::invalid_argument(
        fmt::format("{}: row has {} values for {} columns", path_, values.size(), columns_.size()));
  }
  buffer_.clear();
  auto out = std::back_inserter(buffer_);
  fmt::format_to(out, "{}", time);
  for (double v : values) fmt::format_to(out, ",{}", v);
  buffer_ += '\n';
  append(buffer_);
  ++rows_;
}

void CsvWriter::close() {
  if (fd_ < 0) return;
  if (::close(std::exchange(fd_, -1)) != 0) {
    throw OutputError(fmt::format("{}: close failed: {}", path_, std::strerror(errno)));
  }
}

std::optional<std::size_t> CsvTable::column_index(std::string_view name) const {
  for (std::size_t j = 0; j < columns.size(); ++j) {
    if (columns[j] == name) return j;
  }
  return std::nullopt;
}

namespace {

std::vector<std::string_view> split(std::string_view line) {
  std::vector<std::string_view> fields;
  std::size_t start = 0;
  while (true) {
    const auto comma = line.find(',', start);
    fields.push_back(line.substr(start, comma - start));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return fields;
}

}  // namespace

CsvTable read_csv(const std::string& path, std::string_view key_column) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw OutputError(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  const auto fail = [&path](std::size_t line, const std::string& problem) {
    return OutputError(fmt::format("{}:{}: {}", path, line, problem));
  };

  CsvTable table;
  std::string line;
  std::size_t line_no = 0;
  const auto next_line = [&]() {
    if (!std::getline(in, line)) return false;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    return true;
  };

  if (!next_line()) throw fail(1, "empty file: no header line");
  const auto header = split(line);
  if (header.front() != key_column) {
    throw fail(1,
               fmt::format("the first column must be '{}' (got '{}')", key_column, header.front()));
  }
  std::set<std::string_view> seen;
  for (std::size_t j = 1; j < header.size(); ++j) {
    if (header[j].empty()) throw fail(1, fmt::format("column {} has no name", j + 1));
    if (!seen.insert(header[j]).second) {
      throw fail(1, fmt::format("duplicate column '{}'", header[j]));
    }
    table.columns.emplace_back(header[j]);
  }
  table.values.resize(table.columns.size());

  while (next_line()) {
    if (line.empty()) continue;  // tolerate blank lines (e.g. a trailing one)
    const auto fields = split(line);
    if (fields.size() != header.size()) {
      throw fail(line_no,
                 fmt::format("{} fields, but the header has {}", fields.size(), header.size()));
    }
    for (std::size_t j = 0; j < fields.size(); ++j) {
      double v = 0.0;
      const auto f = fields[j];
      const auto [end, ec] = std::from_chars(f.data(), f.data() + f.size(), v);
      if (ec != std::errc() || end != f.data() + f.size() || f.empty()) {
        throw fail(line_no,
                   fmt::format("column '{}': '{}' is not a number",
                               j == 0 ? std::string(key_column) : table.columns[j - 1], f));
      }
      if (j == 0) {
        table.time.push_back(v);
      } else {
        table.values[j - 1].push_back(v);
      }
    }
  }
  if (in.bad()) throw OutputError(fmt::format("{}: read failed", path));
  return table;
}

}  // namespace macrostep::output

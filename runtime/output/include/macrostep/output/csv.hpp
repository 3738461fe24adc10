// Result files in CSV (DESIGN.md "Results"): a header line "time,<name>,<name>,...", then one
// row per output point (the steps file of a co-simulation has "attempt" for "time"). Numbers are
// written in the shortest form that reads back to the same double (fmt "{}"), so a round trip is
// exact and no precision is lost.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "macrostep/output/table_writer.hpp"

namespace macrostep::output {

// I/O failures and malformed files. Messages name the file (and line when reading).
class OutputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// FNV-1a 64 (Fowler-Noll-Vo): a running hash of a byte stream, `h` continued by `bytes`.
inline constexpr std::uint64_t kFnvOffset = 0xcbf29ce484222325ULL;
std::uint64_t fnv1a(std::uint64_t h, std::string_view bytes);

class CsvWriter final : public TableWriter {
 public:
  // Creates or truncates `path` (close-on-exec) and writes the header: `key_column` (the first
  // column, "time" for results), then `columns`. Column names must be non-empty, must not be
  // the key column and must not contain ',', '"', CR or LF (names are written unquoted). Throws
  // OutputError if the file cannot be opened, std::invalid_argument for a bad name.
  CsvWriter(std::string path, std::vector<std::string> columns, std::string key_column = "time");
  // The constructor's check of the column names alone, before any file is touched:
  // std::invalid_argument naming the first bad name.
  static void check_column_names(const std::vector<std::string>& columns,
                                 const std::string& key_column = "time");
  // Continues a file this writer wrote (a resumed checkpoint): `path` must be a regular file,
  // start with the header of `columns` and hold at least `bytes` bytes whose content_hash() is
  // `hash` (what the writer had written when the checkpoint was taken: another run's file, or
  // one changed since, is refused rather than spliced); it is cut to `bytes` (the header and
  // `rows` complete rows) and further rows are appended. Throws OutputError naming the file and
  // what does not fit.
  static CsvWriter continue_file(std::string path, std::vector<std::string> columns,
                                 std::uint64_t bytes, std::size_t rows, std::uint64_t hash,
                                 std::string key_column = "time");
  CsvWriter(CsvWriter&& other) noexcept;
  // Closes the file; errors at this point are swallowed (call close() to see them).
  ~CsvWriter() override;
  CsvWriter(const CsvWriter&) = delete;
  CsvWriter& operator=(const CsvWriter&) = delete;

  // Appends one row (values.size() == columns().size()) and hands it to the OS before
  // returning (one write(2), no user-space buffer), so that a run that fails later leaves a
  // file of complete rows. If the system takes only part of the row (a full disk, a file-size
  // limit), the part is cut off again: the file then ends with the last complete row. Throws
  // OutputError naming the file and the system's reason on a write error,
  // std::invalid_argument on a size mismatch.
  void write_row(double time, std::span<const double> values) override;

  // Flushes and closes; throws OutputError if that fails. Further writes are errors.
  void close();

  const std::string& path() const override { return path_; }
  const std::vector<std::string>& columns() const { return columns_; }
  std::size_t rows() const override { return rows_; }
  // The length of the file: the header and the complete rows (a checkpoint's output position).
  std::uint64_t bytes() const { return bytes_; }
  // FNV-1a 64 of those bytes(): what continue_file() checks the file against.
  std::uint64_t content_hash() const { return hash_; }

 private:
  std::string path_;
  std::vector<std::string> columns_;
  std::string key_;
  // Writes `text` completely or throws OutputError, leaving the file at bytes_.
  void append(std::string_view text);
  std::string header() const;
  // Checks the column names (std::invalid_argument).
  void check_columns() const;
  CsvWriter(std::string path, std::vector<std::string> columns, std::string key_column, int fd);

  int fd_ = -1;
  std::uint64_t bytes_ = 0;          // length of the file: the header and the complete rows
  std::uint64_t hash_ = kFnvOffset;  // FNV-1a 64 of the file's bytes_ bytes
  std::size_t rows_ = 0;
  std::string buffer_;
};

// A CSV result read back: column-major values, time (the key column) separate.
struct CsvTable {
  std::vector<std::string> columns;         // without "time"
  std::vector<double> time;                 // one entry per row (of the key column)
  std::vector<std::vector<double>> values;  // values[column][row]
  // The unit of every column ("" where not known), or empty where the file records none
  // (read_result_table fills it; read_csv does not: a CSV's header holds names only).
  std::vector<std::string> units;
  // Likewise every column's description (read_result_table: the HDF5 attribute or the JSON).
  std::vector<std::string> descriptions;

  std::size_t rows() const { return time.size(); }
  std::optional<std::size_t> column_index(std::string_view name) const;
};

// Reads a file written by CsvWriter (or any CSV with a "time" first column, unquoted
// numeric fields, optional trailing newline). Throws OutputError "path:line: problem" for a
// missing file, a header without "time" (`key_column`) first, duplicate column names, a row
// with the wrong number of fields or a field that is not a number ("nan" is one).
CsvTable read_csv(const std::string& path, std::string_view key_column = "time");

}  // namespace macrostep::output

// Result files in HDF5 (DESIGN.md "Results"), through the HDF5 C API (serial).
//
// Layout of a file written by Hdf5File:
//   /<table>   2-D double dataset, rows × (1 + columns): the key column first ("time" for
//              /results, "attempt" for /steps), then the named columns; chunked and extendible
//              along the rows; string-array attribute "columns" with every column name, key first,
//              and, where the writer knows them, "units" and "descriptions" with every
//              column's unit and description in the same order ("" for a column without one).
//   /          attributes: "metadata_json" (the run's JSON metadata, the whole document as one
//              UTF-8 string) and one scalar attribute per number, string or bool of the metadata
//              it is given (e.g. "statistics.macro_steps", "status").
// Rows are flushed to the OS as they are written (H5Fflush), so a run that stops (a failure, an
// interrupt, a killed process after the flush) leaves a file that h5dump and h5py read, holding
// every row written so far.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "macrostep/output/csv.hpp"
#include "macrostep/output/table_writer.hpp"

namespace macrostep::output {

// Whether `path` names an HDF5 result (".h5" or ".hdf5", any case).
bool is_hdf5_path(const std::string& path);

class Hdf5File {
 public:
  // Creates or truncates `path`. Throws OutputError naming the file if it cannot be created.
  explicit Hdf5File(std::string path);
  // Closes the file; errors at this point are swallowed (call close() to see them).
  ~Hdf5File();
  Hdf5File(const Hdf5File&) = delete;
  Hdf5File& operator=(const Hdf5File&) = delete;

  // Adds the empty table /<name> (layout above). The returned writer belongs to this file and
  // is valid until close(); its write_row appends a row and flushes the file. Column names must
  // be non-empty and distinct from each other and from `key_column` (std::invalid_argument).
  // `units`, if not empty, is the attribute "units": one per column, key column first
  // (columns.size() + 1 entries, std::invalid_argument otherwise); `descriptions` likewise the
  // attribute "descriptions". Throws OutputError if HDF5 refuses.
  TableWriter& add_table(const std::string& name, const std::string& key_column,
                         const std::vector<std::string>& columns,
                         const std::vector<std::string>& units = {},
                         const std::vector<std::string>& descriptions = {});

  // Writes the metadata attributes of the root group (layout above), replacing those of an
  // earlier call: "metadata_json" = document.dump(1), and for every member of `scalars` (a
  // flat JSON object of numbers, strings and bools) an attribute of that name. Throws
  // OutputError.
  void write_metadata(const nlohmann::ordered_json& document,
                      const nlohmann::ordered_json& scalars);

  // Flushes and closes; throws OutputError if that fails. Further writes are errors.
  void close();

  const std::string& path() const { return path_; }

 private:
  class Table;
  std::string path_;
  std::int64_t file_ = -1;  // hid_t
  std::vector<std::unique_ptr<Table>> tables_;
};

// Reads the table /<name> of an HDF5 result file (as written by Hdf5File: a 2-D double dataset
// with attribute "columns", key column first) into a CsvTable (key column in `time`). Throws
// OutputError "path: problem" for a missing or unreadable file, a missing dataset or attribute,
// a first column other than `key_column`, or a column count that does not fit. The attribute
// "units" ("descriptions"), where the table has one of the right size, fills CsvTable::units
// (::descriptions).
CsvTable read_hdf5_table(const std::string& path, const std::string& name = "results",
                         const std::string& key_column = "time");

// A result or reference for `macrostep compare`: read_hdf5_table(path) for an HDF5 path,
// read_csv(path) otherwise, with the units that the metadata beside it records
// (recorded_labels, metadata.hpp), and their descriptions.
CsvTable read_result_table(const std::string& path);

}  // namespace macrostep::output

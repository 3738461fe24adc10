// A result table written row by row as a run goes: a key column (the result's
// "time", the steps table's "attempt") and named columns of doubles. CsvWriter and the tables of
// an Hdf5File implement it, so that a run driver fills the same rows into either file.
#pragma once

#include <cstddef>
#include <span>
#include <string>

namespace macrostep::output {

class TableWriter {
 public:
  virtual ~TableWriter() = default;
  // Appends one row (values.size() == the column count without the key) so that it survives a
  // run that stops later (each implementation says how). Throws OutputError naming the file on
  // an I/O error, std::invalid_argument on a size mismatch.
  virtual void write_row(double key, std::span<const double> values) = 0;
  virtual std::size_t rows() const = 0;
  virtual const std::string& path() const = 0;  // the file the table is in
};

}  // namespace macrostep::output

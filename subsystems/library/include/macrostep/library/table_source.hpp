// A source of tabulated outputs: y(t) interpolated in a CSV file's columns.
//
// The file: a header line naming the columns (the first is time, whatever its name; the others
// name the outputs), then one row per time, comma-separated numbers, times strictly increasing,
// at least two rows. Blank lines and lines starting with '#' are skipped. Every error names the
// file and the line.
//
// Interpolation between rows:
//  - linear: the straight line through the two neighbouring rows; reproduces linear data exactly.
//  - hermite: piecewise cubic Hermite (C1) whose slope at each row is that of the parabola through
//    the row and its two neighbours (at the first and last row, through the first or last three
//    rows; with two rows, the secant); on equally spaced times this is Catmull-Rom. It
//    reproduces quadratic data exactly (from three rows on) and passes through every row; it is
//    not monotone: between rows of a sharp change it may overshoot.
// Outside the table's times:
//  - hold: the first row's values before it, the last row's after it;
//  - extrapolate: the straight line with the interpolant's slope at the first or last row.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "macrostep/library/sources.hpp"

namespace macrostep::library {

enum class Interpolation : std::uint8_t { kLinear, kHermite };
enum class TableEnd : std::uint8_t { kHold, kExtrapolate };

struct TableData {
  std::vector<std::string> names;           // one per output column
  std::vector<double> time;                 // strictly increasing, size >= 2
  std::vector<std::vector<double>> values;  // values[column][row]
};

// Reads a table file as described above. Throws std::invalid_argument "<path>:<line>: <what>"
// (or "<path>: <what>" for a file that cannot be read or has no rows).
TableData read_table_csv(const std::string& path);

// The interpolant of every column of a table.
class Table {
 public:
  // Throws std::invalid_argument for fewer than two rows, times not strictly increasing or
  // non-finite, or a column of another length.
  Table(TableData data, Interpolation interpolation, TableEnd end);
  std::size_t columns() const { return data_.values.size(); }
  const std::string& name(std::size_t c) const { return data_.names.at(c); }
  // "column <name> of a table of <rows> rows, <interpolation> interpolation, <end> outside".
  std::string describe(std::size_t c) const;
  // y[c] = column c at t (y.size() == columns()).
  void evaluate(double t, std::span<double> y) const;

 private:
  // Column c at t inside [time[k], time[k + 1]].
  double inside(std::size_t c, std::size_t k, double t) const;

  TableData data_;
  Interpolation interpolation_;
  TableEnd end_;
  // slopes_[c][row]: the interpolant's derivative at each row (the secants' for linear at the
  // ends, used to extrapolate).
  std::vector<std::vector<double>> slopes_;
};

// The table as a source: outputs named by the header, no inputs.
class TableSource final : public StatelessSubsystem {
 public:
  TableSource(Table table, std::string unit);
  std::size_t input_size() const override { return 0; }
  std::size_t output_size() const override { return table_.columns(); }
  std::string output_name(std::size_t i) const override;
  std::string output_description(std::size_t i) const override { return table_.describe(i); }
  std::string input_name(std::size_t i) const override;
  void outputs(double t, std::span<const double> z, std::span<const double> u,
               std::span<double> y) const override;

 private:
  Table table_;
};

}  // namespace macrostep::library

// The table source (table_source.hpp): the CSV reader, the interpolant and the registry entry.
#include "macrostep/library/table_source.hpp"

#include <algorithm>
#include <cassert>
#include <charconv>
#include <cmath>
#include <fstream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "builtin_models.hpp"
#include "macrostep/model/names.hpp"

namespace macrostep::library {

namespace {

std::string_view trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(" \t\r") - first + 1);
}

std::vector<std::string_view> split(std::string_view line) {
  std::vector<std::string_view> fields;
  for (;;) {
    const auto comma = line.find(',');
    fields.push_back(trim(line.substr(0, comma)));
    if (comma == std::string_view::npos) return fields;
    line.remove_prefix(comma + 1);
  }
}

// The whole of `field` as a finite number, if it is one.
std::optional<double> parse_number(std::string_view field) {
  if (!field.empty() && field.front() == '+') field.remove_prefix(1);
  double v = 0.0;
  const auto [end, error] = std::from_chars(field.data(), field.data() + field.size(), v);
  if (field.empty() || error != std::errc() || end != field.data() + field.size() ||
      !std::isfinite(v)) {
    return std::nullopt;
  }
  return v;
}

// The header's output names (every field but the first).
std::vector<std::string> header_names(const std::vector<std::string_view>& fields,
                                      const std::string& at) {
  if (fields.size() < 2) {
    throw std::invalid_argument(at +
                                ": the header must name the time column and at least one "
                                "output (comma-separated)");
  }
  if (parse_number(fields[1])) {
    throw std::invalid_argument(at +
                                ": the first line must name the columns (time, then one name "
                                "per output), not hold numbers");
  }
  std::vector<std::string> names;
  for (std::size_t c = 1; c < fields.size(); ++c) {
    const std::string name(fields[c]);
    if (name.empty())
      throw std::invalid_argument(fmt::format("{}: column {} has no name", at, c + 1));
    if (model::control_character(name)) {
      throw std::invalid_argument(
          fmt::format("{}: column name {} contains a control character", at, model::quoted(name)));
    }
    if (std::find(names.begin(), names.end(), name) != names.end()) {
      throw std::invalid_argument(
          fmt::format("{}: column name {} appears twice", at, model::quoted(name)));
    }
    names.push_back(name);
  }
  return names;
}

// Appends one data row to `data`, checking its fields and its time.
void add_row(const std::vector<std::string_view>& fields, const std::string& at, TableData& data) {
  if (fields.size() != data.names.size() + 1) {
    throw std::invalid_argument(
        fmt::format("{}: {} fields, the header has {}", at, fields.size(), data.names.size() + 1));
  }
  for (std::size_t c = 0; c < fields.size(); ++c) {
    const auto v = parse_number(fields[c]);
    if (!v) {
      throw std::invalid_argument(fmt::format("{}: field {} ({}) is not a finite number", at, c + 1,
                                              model::quoted(fields[c])));
    }
    if (c == 0) {
      if (!data.time.empty() && !(*v > data.time.back())) {
        throw std::invalid_argument(
            fmt::format("{}: time {} is not greater than the previous row's {} (times must "
                        "increase strictly)",
                        at, *v, data.time.back()));
      }
      data.time.push_back(*v);
    } else {
      data.values[c - 1].push_back(*v);
    }
  }
}

}  // namespace

TableData read_table_csv(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::invalid_argument(path + ": cannot be read (no such file?)");
  TableData data;
  bool header = true;
  std::string line;
  for (std::size_t number = 1; std::getline(in, line); ++number) {
    const std::string_view text = trim(line);
    if (text.empty() || text.front() == '#') continue;
    const std::string at = fmt::format("{}:{}", path, number);
    if (header) {
      data.names = header_names(split(text), at);
      data.values.resize(data.names.size());
      header = false;
    } else {
      add_row(split(text), at, data);
    }
  }
  if (in.bad()) throw std::invalid_argument(path + ": read error");
  if (header) throw std::invalid_argument(path + ": no header line and no rows");
  if (data.time.size() < 2) {
    throw std::invalid_argument(
        fmt::format("{}: {} data rows; a table needs at least two", path, data.time.size()));
  }
  return data;
}

Table::Table(TableData data, Interpolation interpolation, TableEnd end)
    : data_(std::move(data)), interpolation_(interpolation), end_(end) {
  const auto& t = data_.time;
  const std::size_t n = t.size();
  if (n < 2) throw std::invalid_argument("Table: needs at least two rows");
  for (std::size_t k = 0; k < n; ++k) {
    if (!std::isfinite(t[k]) || (k > 0 && !(t[k] > t[k - 1]))) {
      throw std::invalid_argument("Table: times must be finite and increase strictly");
    }
  }
  if (data_.names.size() != data_.values.size()) throw std::invalid_argument("Table: names");
  for (const auto& column : data_.values) {
    if (column.size() != n) throw std::invalid_argument("Table: a column of another length");
    std::vector<double> d(n);
    const auto secant = [&](std::size_t k) {
      return (column[k + 1] - column[k]) / (t[k + 1] - t[k]);
    };
    if (interpolation_ == Interpolation::kLinear || n == 2) {
      d.front() = secant(0);
      d.back() = secant(n - 2);
    } else {
      // The slope of the parabola through rows k − 1, k, k + 1 (ends: the first or last three).
      for (std::size_t k = 1; k + 1 < n; ++k) {
        const double h0 = t[k] - t[k - 1], h1 = t[k + 1] - t[k];
        d[k] = (h1 * secant(k - 1) + h0 * secant(k)) / (h0 + h1);
      }
      const double h0 = t[1] - t[0], h1 = t[2] - t[1];
      d[0] = secant(0) - h0 * (secant(1) - secant(0)) / (h0 + h1);
      const double g0 = t[n - 2] - t[n - 3], g1 = t[n - 1] - t[n - 2];
      d[n - 1] = secant(n - 2) + g1 * (secant(n - 2) - secant(n - 3)) / (g0 + g1);
    }
    slopes_.push_back(std::move(d));
  }
}

double Table::inside(std::size_t c, std::size_t k, double t) const {
  const auto& y = data_.values[c];
  const double t0 = data_.time[k], h = data_.time[k + 1] - t0;
  if (interpolation_ == Interpolation::kLinear) {
    return y[k] + (t - t0) * ((y[k + 1] - y[k]) / h);
  }
  const double s = (t - t0) / h, s2 = s * s, s3 = s2 * s;
  const auto& d = slopes_[c];
  return (2.0 * s3 - 3.0 * s2 + 1.0) * y[k] + (s3 - 2.0 * s2 + s) * h * d[k] +
         (3.0 * s2 - 2.0 * s3) * y[k + 1] + (s3 - s2) * h * d[k + 1];
}

void Table::evaluate(double t, std::span<double> y) const {
  assert(y.size() == columns());
  const auto& time = data_.time;
  const std::size_t n = time.size();
  if (t <= time.front() || t >= time.back()) {
    const std::size_t k = t <= time.front() ? 0 : n - 1;
    for (std::size_t c = 0; c < columns(); ++c) {
      const double v = data_.values[c][k];
      y[c] = end_ == TableEnd::kHold ? v : v + (t - time[k]) * slopes_[c][k];
    }
    return;
  }
  // One search for every column: they share the time column.
  const auto above = std::upper_bound(time.begin(), time.end(), t);
  const std::size_t row = static_cast<std::size_t>(above - time.begin()) - 1;
  for (std::size_t c = 0; c < columns(); ++c) y[c] = inside(c, row, t);
}

TableSource::TableSource(Table table, std::string unit)
    : StatelessSubsystem(std::move(unit)), table_(std::move(table)) {}

std::string Table::describe(std::size_t c) const {
  return fmt::format("column {} of a table of {} rows, {} interpolation, {} outside its times",
                     name(c), data_.time.size(),
                     interpolation_ == Interpolation::kLinear ? "linear" : "hermite",
                     end_ == TableEnd::kHold ? "held" : "extrapolated");
}

std::string TableSource::output_name(std::size_t i) const {
  return table_.name(i);
}

std::string TableSource::input_name(std::size_t) const {
  throw std::out_of_range("a table source has no inputs");
}

void TableSource::outputs(double t, std::span<const double>, std::span<const double>,
                          std::span<double> y) const {
  table_.evaluate(t, y);
}

// ---- registry entry ----

namespace {

std::optional<Interpolation> interpolation_of(const std::string& s) {
  if (s == "linear") return Interpolation::kLinear;
  if (s == "hermite") return Interpolation::kHermite;
  return std::nullopt;
}

std::optional<TableEnd> end_of(const std::string& s) {
  if (s == "hold") return TableEnd::kHold;
  if (s == "extrapolate") return TableEnd::kExtrapolate;
  return std::nullopt;
}

ParameterSpec string_spec(std::string name, std::string default_value, bool required,
                          std::string doc, bool path = false) {
  return {std::move(name),
          ParameterType::kString,
          required,
          std::move(default_value),
          Bound::kAny,
          0,
          "",
          "",
          std::move(doc),
          path};
}

}  // namespace

ModelEntry detail::table_entry() {
  ModelEntry e;
  e.name = "table";
  e.summary = "source: the columns of a CSV file interpolated in time (linear or cubic Hermite)";
  e.parameters = {
      string_spec("file", "", true,
                  "the CSV file: a header (time, output names), then rows of numbers; relative to "
                  "the configuration's directory",
                  true),
      string_spec("interpolation", "linear", false,
                  "linear | hermite (C1 cubic, parabolic slopes: exact on quadratics)"),
      string_spec("end", "hold", false,
                  "hold | extrapolate: outside the table's times, its end values or the straight "
                  "line with its end slope"),
      string_spec("unit", "", false, "the unit of the outputs, as the results show it")};
  e.check = [](const ParameterValues& v) -> std::optional<ParameterProblem> {
    if (!interpolation_of(v.string("interpolation"))) {
      return ParameterProblem{"interpolation", "must be linear or hermite (got {got})"};
    }
    if (!end_of(v.string("end"))) {
      return ParameterProblem{"end", "must be hold or extrapolate (got {got})"};
    }
    try {
      (void)read_table_csv(v.string("file"));
    } catch (const std::invalid_argument& error) {
      return ParameterProblem{"file", error.what()};
    }
    return std::nullopt;
  };
  e.build = [](const ParameterValues& v) -> std::unique_ptr<model::Subsystem> {
    const auto interpolation = interpolation_of(v.string("interpolation"));
    const auto end = end_of(v.string("end"));
    if (!interpolation || !end) throw std::invalid_argument("table: interpolation or end");
    return std::make_unique<TableSource>(
        Table(read_table_csv(v.string("file")), *interpolation, *end), v.string("unit"));
  };
  return e;
}

}  // namespace macrostep::library

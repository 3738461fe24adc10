#include "macrostep/output/nrmse.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>

namespace macrostep::output {

double InterpolationStencil::apply(std::span<const double> y) const {
  double v = 0.0;
  for (std::size_t k = 0; k < count; ++k) v += weight[k] * y[first + k];
  return v;
}

InterpolationStencil interpolation_stencil(std::span<const double> grid, double t) {
  if (grid.empty() || t < grid.front() || t > grid.back()) {
    throw std::invalid_argument(fmt::format("time {} outside the interpolation grid", t));
  }
  InterpolationStencil s;
  // First grid point > t; the interval is [j, j+1].
  const auto upper = std::upper_bound(grid.begin(), grid.end(), t);
  const std::size_t j = static_cast<std::size_t>(upper - grid.begin()) - 1;
  if (grid[j] == t) {
    s.first = j;
    s.count = 1;
    s.weight[0] = 1.0;
    return s;
  }
  const std::size_t n = grid.size();  // t < grid.back(), so j + 1 < n
  if (j == 0 || j + 2 >= n) {
    const double w = (t - grid[j]) / (grid[j + 1] - grid[j]);
    s.first = j;
    s.count = 2;
    s.weight[0] = 1.0 - w;
    s.weight[1] = w;
    return s;
  }
  s.first = j - 1;
  s.count = 4;
  for (std::size_t a = 0; a < 4; ++a) {
    double w = 1.0;
    for (std::size_t b = 0; b < 4; ++b) {
      if (a != b) w *= (t - grid[s.first + b]) / (grid[s.first + a] - grid[s.first + b]);
    }
    s.weight[a] = w;
  }
  return s;
}

std::size_t NrmseReport::varying() const {
  return static_cast<std::size_t>(std::count_if(
      variables.begin(), variables.end(), [](const VariableError& v) { return !v.near_constant; }));
}

double NrmseReport::norm_of(const std::function<bool(const std::string&)>& select) const {
  double sum = 0.0;
  for (const auto& v : variables) {
    if (!v.near_constant && select(v.name)) sum += v.nrmse * v.nrmse;
  }
  return std::sqrt(sum);
}

bool NrmseReport::has_varying(const std::function<bool(const std::string&)>& select) const {
  return std::any_of(variables.begin(), variables.end(),
                     [&](const VariableError& v) { return !v.near_constant && select(v.name); });
}

const VariableError& NrmseReport::largest_nrmse() const {
  const VariableError* largest = nullptr;
  for (const auto& v : variables) {
    if (!v.near_constant && (largest == nullptr || v.nrmse > largest->nrmse)) largest = &v;
  }
  if (largest == nullptr) throw std::logic_error("an NRMSE report without a varying variable");
  return *largest;
}

const VariableError* NrmseReport::largest_near_constant_difference() const {
  const VariableError* largest = nullptr;
  for (const auto& v : variables) {
    if (v.near_constant &&
        (largest == nullptr || v.max_abs_difference > largest->max_abs_difference)) {
      largest = &v;
    }
  }
  return largest;
}

namespace {

void check_increasing(const std::vector<double>& time, const char* which) {
  for (std::size_t i = 1; i < time.size(); ++i) {
    if (!(time[i] > time[i - 1])) {
      throw OutputError(
          fmt::format("the {}'s time column is not strictly increasing at row {} "
                      "(t = {} after {})",
                      which, i + 1, time[i], time[i - 1]));
    }
  }
}

// NaN or an infinity in either table makes every NRMSE that uses it meaningless; `which` is
// "result" or "reference", `file` its path (empty: not named).
void check_finite(const CsvTable& table, const char* which, const std::string& file) {
  const std::string in = file.empty() ? std::string() : file + ": ";
  for (std::size_t i = 0; i < table.rows(); ++i) {
    if (!std::isfinite(table.time[i])) {
      throw OutputError(fmt::format("{}the {} has time {} at row {}: not a finite number", in,
                                    which, table.time[i], i + 1));
    }
  }
  for (std::size_t j = 0; j < table.columns.size(); ++j) {
    for (std::size_t i = 0; i < table.rows(); ++i) {
      const double v = table.values[j][i];
      if (!std::isfinite(v)) {
        throw OutputError(
            fmt::format("{}the {}'s column '{}' is {} at row {} (t = {}): a {} must be finite", in,
                        which, table.columns[j], v, i + 1, table.time[i], which));
      }
    }
  }
}

// The result's column j against the reference's values at the result's times.
// `unit_size`: the largest magnitude of the variables with the variable's unit (0: none known).
// `weight`: each row's weight (empty: 1 each).
VariableError measure(const std::string& name, const std::vector<double>& ref,
                      const std::vector<double>& res, double unit_size,
                      const std::vector<double>& weight) {
  VariableError e;
  e.name = name;
  const auto w = [&weight](std::size_t i) { return weight.empty() ? 1.0 : weight[i]; };
  double mean = 0.0, total = 0.0, low = ref.front(), high = ref.front(), size = 0.0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    mean += w(i) * ref[i];
    total += w(i);
    low = std::min(low, ref[i]);
    high = std::max(high, ref[i]);
    size = std::max({size, std::abs(ref[i]), std::abs(res[i])});
    e.max_abs_difference = std::max(e.max_abs_difference, std::abs(ref[i] - res[i]));
  }
  mean /= total;
  e.reference_range = high - low;
  e.near_constant = e.reference_range <= kNearConstant * std::max(size, unit_size);
  if (e.near_constant) {
    e.nrmse = std::numeric_limits<double>::quiet_NaN();
    return e;
  }
  double numerator = 0.0, denominator = 0.0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    numerator += w(i) * (ref[i] - res[i]) * (ref[i] - res[i]);
    denominator += w(i) * (ref[i] - mean) * (ref[i] - mean);
  }
  e.nrmse = std::sqrt(numerator / denominator);
  return e;
}

// One stencil per result row (shared by all columns) that interpolates the reference to the
// result's times; OutputError if they lie outside the reference's.
std::vector<InterpolationStencil> reference_stencils(const CsvTable& result,
                                                     const CsvTable& reference) {
  const double t0 = reference.time.front(), t1 = reference.time.back();
  // Times that miss an end of the reference by rounding only (a sum of macro steps that should
  // equal end_time) count as that end.
  const double slack = 1e-9 * (t1 - t0);
  if (result.time.front() < t0 - slack || result.time.back() > t1 + slack) {
    throw OutputError(fmt::format(
        "the result's times [{}, {}] lie outside the reference's [{}, {}]; cannot interpolate",
        result.time.front(), result.time.back(), t0, t1));
  }
  std::vector<InterpolationStencil> stencils;
  for (double t : result.time) {
    stencils.push_back(interpolation_stencil(reference.time, std::clamp(t, t0, t1)));
  }
  return stencils;
}

// The reference's column for each result column; OutputError naming one that it lacks.
std::vector<std::size_t> matched_columns(const CsvTable& result, const CsvTable& reference) {
  if (result.columns.empty()) throw OutputError("the result has no variables to compare");
  std::vector<std::size_t> ref_column(result.columns.size());
  for (std::size_t j = 0; j < result.columns.size(); ++j) {
    const auto k = reference.column_index(result.columns[j]);
    if (!k) {
      throw OutputError(
          fmt::format("column '{}' of the result is not in the reference", result.columns[j]));
    }
    ref_column[j] = *k;
  }
  return ref_column;
}

// The unit of every result column: the result's where its files record one, else the matched
// reference column's; "" where neither does.
std::vector<std::string> column_units(const CsvTable& result, const CsvTable& reference,
                                      const std::vector<std::size_t>& ref_column) {
  std::vector<std::string> units(result.columns.size());
  for (std::size_t j = 0; j < units.size(); ++j) {
    if (j < result.units.size()) units[j] = result.units[j];
    if (units[j].empty() && ref_column[j] < reference.units.size()) {
      units[j] = reference.units[ref_column[j]];
    }
  }
  return units;
}

// Per unit (not ""), the largest magnitude of its compared variables in the reference: the scale
// of that quantity in this system, against which a variable's rounding noise is judged. (Not the
// result's: a result that diverges in one variable would make its unit's others look constant.)
std::map<std::string, double> largest_magnitude_by_unit(const CsvTable& reference,
                                                        const std::vector<std::size_t>& ref_column,
                                                        const std::vector<std::string>& units) {
  std::map<std::string, double> sizes;
  for (std::size_t j = 0; j < units.size(); ++j) {
    if (units[j].empty()) continue;
    double& size = sizes[units[j]];
    for (double v : reference.values[ref_column[j]]) size = std::max(size, std::abs(v));
  }
  return sizes;
}

// The trapezoid rule's weight of each of the (strictly increasing) times: half of each interval
// next to it.
std::vector<double> time_weights(const std::vector<double>& time) {
  std::vector<double> w(time.size(), 0.0);
  for (std::size_t i = 0; i + 1 < time.size(); ++i) {
    const double half = 0.5 * (time[i + 1] - time[i]);
    w[i] += half;
    w[i + 1] += half;
  }
  return w;
}

}  // namespace

RowWeights parse_row_weights(std::string_view name) {
  if (const auto weights = model::parse_name(kRowWeightNames, name)) return *weights;
  throw std::invalid_argument(fmt::format("'{}' is not a weighting of the rows; allowed: {}", name,
                                          model::joined_names(model::names_of(kRowWeightNames))));
}

NrmseReport compute_nrmse(const CsvTable& result, const CsvTable& reference,
                          const NrmseFiles& files, RowWeights weights) {
  if (result.rows() == 0) throw OutputError("the result has no rows");
  if (reference.rows() == 0) throw OutputError("the reference has no rows");
  // One row has no deviation from its mean: the normalisation below would call every variable
  // constant, which is about the result's rows, not the reference.
  if (result.rows() < 2) {
    throw OutputError(fmt::format("the result has one row (t = {}); an NRMSE needs two or more",
                                  result.time.front()));
  }
  check_finite(result, "result", files.result);
  check_finite(reference, "reference", files.reference);
  check_increasing(result.time, "result");
  check_increasing(reference.time, "reference");
  const std::vector<std::size_t> ref_column = matched_columns(result, reference);

  NrmseReport report;
  report.time_points = result.rows();
  report.interpolated = result.time != reference.time;
  report.weights = weights;
  const std::vector<double> row_weight =
      weights == RowWeights::kTime ? time_weights(result.time) : std::vector<double>{};
  const std::vector<InterpolationStencil> stencils = report.interpolated
                                                         ? reference_stencils(result, reference)
                                                         : std::vector<InterpolationStencil>{};

  const std::vector<std::string> units = column_units(result, reference, ref_column);
  const std::map<std::string, double> unit_sizes =
      largest_magnitude_by_unit(reference, ref_column, units);
  double sum = 0.0;
  std::vector<double> ref(result.rows());
  for (std::size_t j = 0; j < result.columns.size(); ++j) {
    const auto& r = reference.values[ref_column[j]];
    for (std::size_t i = 0; i < ref.size(); ++i) {
      ref[i] = report.interpolated ? stencils[i].apply(r) : r[i];
    }
    const auto size = unit_sizes.find(units[j]);
    const VariableError& e = report.variables.emplace_back(
        measure(result.columns[j], ref, result.values[j],
                size == unit_sizes.end() ? 0.0 : size->second, row_weight));
    if (!e.near_constant) sum += e.nrmse * e.nrmse;
  }
  if (report.varying() == 0) {
    throw OutputError(fmt::format(
        "every compared variable of the reference is constant or nearly so (all zero, for "
        "instance): the NRMSE, normalised by the reference's deviation from its mean, is "
        "undefined ({} variable{})",
        report.variables.size(), report.variables.size() == 1 ? "" : "s"));
  }
  report.norm = std::sqrt(sum);
  return report;
}

}  // namespace macrostep::output

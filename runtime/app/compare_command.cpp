// `macrostep compare` (compare_command.hpp).
#include "compare_command.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "macrostep/output/csv.hpp"
#include "macrostep/output/hdf5.hpp"
#include "macrostep/output/nrmse.hpp"
#include "usage.hpp"

namespace macrostep::app {

namespace {

using macrostep::output::NrmseReport;
using Select = std::function<bool(const std::string&)>;

Select starts(const char* prefix) {
  return [prefix](const std::string& name) { return name.rfind(prefix, 0) == 0; };
}

// The unit of every column of `result` by name: the result's own where its files record units,
// else the reference's (a result of an older version compared with a new reference). Empty if
// neither records any.
std::map<std::string, std::string> column_units(const macrostep::output::CsvTable& result,
                                                const macrostep::output::CsvTable& reference) {
  std::map<std::string, std::string> units;
  for (const auto* t : {&reference, &result}) {  // the result's last: it wins
    for (std::size_t j = 0; j < t->units.size() && j < t->columns.size(); ++j) {
      if (!t->units[j].empty()) units[t->columns[j]] = t->units[j];
    }
  }
  return units;
}

std::string unit_of(const std::map<std::string, std::string>& units, const std::string& name) {
  const auto it = units.find(name);
  return it == units.end() ? std::string() : it->second;
}

// One row per variable, in the result's column order: its unit (where the files record units),
// its largest difference in that unit and its NRMSE, or "near-constant" where the reference has
// no spread to normalise by.
void print_table(const NrmseReport& report, const std::map<std::string, std::string>& units) {
  std::size_t width = 8, unit_width = 4;
  for (const auto& v : report.variables) width = std::max(width, v.name.size());
  for (const auto& [name, unit] : units) unit_width = std::max(unit_width, unit.size());
  // "  NAME  " or, with units, "  NAME  UNIT  ".
  const auto lead = [&](const std::string& name, const std::string& unit) {
    if (units.empty()) return fmt::format("  {:<{}}  ", name, width);
    return fmt::format("  {:<{}}  {:<{}}  ", name, width, unit, unit_width);
  };
  fmt::print("{}{:<12}  {}\n", lead("variable", "unit"), "max |diff|", "NRMSE");
  for (const auto& v : report.variables) {
    const std::string start = lead(v.name, unit_of(units, v.name));
    if (v.near_constant) {
      fmt::print("{}{:.6e}  near-constant\n", start, v.max_abs_difference);
    } else {
      fmt::print("{}{:.6e}  {:.6e}\n", start, v.max_abs_difference, v.nrmse);
    }
  }
  if (report.varying() < report.variables.size()) {
    fmt::print(
        "  near-constant: reference range <= {:g} of the largest magnitude of the variable or "
        "of the reference's variables in its unit; measured by max |diff|, left out of every "
        "NRMSE\n",
        macrostep::output::kNearConstant);
  }
}

// The groups of a chain's columns (x_*, v_*, lambda_*), each only where it has a varying
// variable: a system without such columns would read 0 as an error of zero.
void print_chain_groups(const NrmseReport& report) {
  const Select x = starts("x_"), v = starts("v_"), lambda = starts("lambda_");
  const Select states = [&](const std::string& n) { return x(n) || v(n); };
  std::vector<std::string> parts;
  if (report.has_varying(x)) {
    parts.push_back(fmt::format("positions (x_*): {:.6e}", report.norm_of(x)));
  }
  if (report.has_varying(v)) {
    parts.push_back(fmt::format("velocities (v_*): {:.6e}", report.norm_of(v)));
  }
  if (!parts.empty()) fmt::print("{}\n", fmt::join(parts, ", "));
  if (!report.has_varying(lambda)) return;
  // States alone: the ERR of seed 000 §5.8 when the CSVs hold the coupling bodies.
  parts.clear();
  if (report.has_varying(states)) {
    parts.push_back(fmt::format("states (x_*, v_*): {:.6e}", report.norm_of(states)));
  }
  parts.push_back(fmt::format("coupling variables (lambda_*): {:.6e}", report.norm_of(lambda)));
  fmt::print("{}\n", fmt::join(parts, ", "));
}

// The summary (docs/reference/commands.md, `compare`): the largest NRMSE over the varying
// variables, which does not grow with their number, and the near-constant ones by their largest
// difference; before it the 2-norm of seed 000 Eq. 5.2 that the studies report.
void print_summary(const NrmseReport& report, const std::map<std::string, std::string>& units) {
  fmt::print("NRMSE (2-norm over {} variables): {:.6e}\n", report.varying(), report.norm);
  const auto& largest = report.largest_nrmse();
  fmt::print("largest NRMSE: {:.6e} ({}), of {} variable{} with a varying reference\n",
             largest.nrmse, largest.name, report.varying(), report.varying() == 1 ? "" : "s");
  std::vector<std::string> names;
  for (const auto& v : report.variables) {
    if (v.near_constant) names.push_back(v.name);
  }
  const auto* worst = report.largest_near_constant_difference();
  if (worst == nullptr) {
    fmt::print("near-constant reference: none\n");
    return;
  }
  const std::size_t count = names.size();
  if (count > 10) names.resize(10);
  const std::string unit = unit_of(units, worst->name);
  fmt::print("near-constant reference: {} variable{} ({}{}), largest |difference| {:.6e}{} ({})\n",
             count, count == 1 ? "" : "s", fmt::join(names, ", "), count > 10 ? ", ..." : "",
             worst->max_abs_difference, unit.empty() ? "" : " " + unit, worst->name);
}

}  // namespace

output::RowWeights parse_row_weights(const std::string& name) {
  try {
    return output::parse_row_weights(name);
  } catch (const std::invalid_argument& e) {
    throw UsageError(fmt::format("--weights {}", e.what()));
  }
}

int compare(const CompareArgs& args) {
  using macrostep::output::RowWeights;
  const RowWeights weights = parse_row_weights(args.weights);
  const auto result = macrostep::output::read_result_table(args.result);
  const auto reference = macrostep::output::read_result_table(args.reference);
  const auto report =
      macrostep::output::compute_nrmse(result, reference, {args.result, args.reference}, weights);

  fmt::print(
      "NRMSE of {} against {}: {} time points{}{}\n", args.result, args.reference,
      report.time_points,
      report.interpolated ? " (reference interpolated to the result's times)" : "",
      report.weights == RowWeights::kTime ? ", each weighted by the time it stands for" : "");
  // A reference interpolated between rows not much denser than the result's has an
  // interpolation error of its own that can rival the run's (a co-simulation writes a row at
  // every macro point; cubic interpolation's error falls with the fourth power of the spacing, so
  // ten times denser rows make it negligible).
  if (report.interpolated && reference.time.size() < 10 * result.time.size()) {
    fmt::print(
        "note: the reference has {} rows for the result's {} times, and its interpolation error "
        "enters the NRMSE; write it at the result's times (macrostep reference CONFIG --at {}) "
        "or denser (--set simulation.output_interval=...), or run with rows on the grid (--set "
        "output.rows=grid)\n",
        reference.time.size(), result.time.size(), args.result);
  }
  const auto units = column_units(result, reference);
  print_table(report, units);
  print_chain_groups(report);
  print_summary(report, units);
  return 0;
}

}  // namespace macrostep::app

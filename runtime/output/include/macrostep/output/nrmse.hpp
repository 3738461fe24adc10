// Normalized root-mean-square error of a result against a reference (seed 000 Eqs. 5.1-5.2;
// spec/MODELS.md §4.1):
//   nrmse_j = sqrt( sum_i (ref_ij - res_ij)^2 / sum_i (ref_ij - mean_i(ref_ij))^2 )
//   NRMSE   = || [nrmse_1 ... nrmse_nz] ||_2
// Columns are matched by name (DESIGN.md column naming); every result column must exist in
// the reference, reference columns absent from the result are ignored.
//
// A variable whose reference is constant or nearly so, range_j = max_i ref_ij - min_i ref_ij
// <= kNearConstant * max(max_i max(|ref_ij|, |res_ij|), size of its unit), has no spread to
// normalise by: its nrmse would measure the reference's rounding noise (a joint's multiplier that
// is 1e-24 in the reference and 1e-6 in a co-simulation gives 1e18). It is measured by its
// largest absolute difference instead and left out of every NRMSE (MODELS.md §4.1 leaves out zero
// variance). The size of a unit is the largest magnitude in the reference of the compared
// variables with that unit (the tables' `units`; none where they record none): a solver's noise
// on a quantity that should stay zero scales with the quantities of its kind, not with itself (a
// multiplier in m/s that the reference holds at ±6e-12 beside velocities of about 1 m/s).
//
// If the two time columns are not identical, the reference is interpolated to the result's
// time points: cubic Lagrange on the four nearest points, linear in the first and last
// interval. The result's time range must lie inside the reference's.
//
// The sums run over the result's rows, each counting alike (the equation above) or by the time
// it stands for (RowWeights::kTime: the weight w_i of row i is half of each interval next to it,
// the trapezoid rule over the result's times, in both sums and in the reference's mean): the
// limit of a uniform output grid. A variable-step run writes a row at every macro point, densely
// where its steps are short; with equal weights such a stretch counts by its number of steps,
// with time weights by its duration, so that two runs that differ in where their short steps
// fall compare by their errors over time (the time-weighted ERR_t of the S-5.8 benchmark).
//
// All sums run in row order, then column order, so the numbers are reproducible.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "macrostep/model/name_table.hpp"
#include "macrostep/output/csv.hpp"

namespace macrostep::output {

// A reference whose range is at most this share of the variable's largest magnitude (in the
// reference or the result) counts as near-constant: 1e-9 lies far above the rounding noise of a
// double computation and only ten times above the reference's rtol of 1e-10, so a smaller
// variation carries at most one digit worth normalising by. A result that strays 1e9 times the
// reference's range from it counts too: its largest difference says how far.
inline constexpr double kNearConstant = 1e-9;

// How the result's rows count in the sums (above).
enum class RowWeights : std::uint8_t { kEqual, kTime };
inline constexpr model::NameTable<RowWeights, 2> kRowWeightNames{{
    {RowWeights::kEqual, "equal"},
    {RowWeights::kTime, "time"},
}};
// The weighting `name` names; std::invalid_argument "'NAME' is not a weighting of the rows;
// allowed: equal, time" otherwise (callers put their option's name before it).
RowWeights parse_row_weights(std::string_view name);

struct VariableError {
  std::string name;
  double max_abs_difference = 0.0;  // max_i |ref_ij - res_ij|
  double reference_range = 0.0;     // max_i ref_ij - min_i ref_ij
  bool near_constant = false;       // see above; then nrmse is NaN (not measured)
  double nrmse = 0.0;
};

struct NrmseReport {
  std::vector<VariableError> variables;  // every compared variable, in result column order
  double norm = 0.0;                     // 2-norm of nrmse over the varying variables
  bool interpolated = false;             // reference interpolated to the result's times
  RowWeights weights = RowWeights::kEqual;
  std::size_t time_points = 0;

  // The variables whose reference varies (their nrmse is measured).
  std::size_t varying() const;
  // 2-norm of nrmse over the varying variables whose name satisfies `select` (e.g. positions
  // "x_*"); 0 if there is none (has_varying tells the two apart).
  double norm_of(const std::function<bool(const std::string&)>& select) const;
  bool has_varying(const std::function<bool(const std::string&)>& select) const;
  // The varying variable with the largest nrmse (the first of equals).
  const VariableError& largest_nrmse() const;
  // The near-constant variable with the largest difference; nullptr if there is none.
  const VariableError* largest_near_constant_difference() const;
};

// The files the two tables come from, for the messages (empty: not named).
struct NrmseFiles {
  std::string result, reference;
};

// Throws OutputError if a result column is missing from the reference, if there is no
// variable to compare, if either time column is not strictly increasing, if the result's
// times lie outside the reference's, if either table holds NaN or an infinity (the message
// names the file, the column, the row and the time), or if every variable's reference is
// constant or nearly so (the NRMSE undefined: an all-zero reference).
NrmseReport compute_nrmse(const CsvTable& result, const CsvTable& reference,
                          const NrmseFiles& files = {}, RowWeights weights = RowWeights::kEqual);

// Interpolation weights of the reference grid `grid` (strictly increasing) at time t inside
// [grid.front(), grid.back()]: value = sum_k weight[k] * y[first + k], k < count.
struct InterpolationStencil {
  std::size_t first = 0;
  std::size_t count = 0;
  double weight[4] = {0.0, 0.0, 0.0, 0.0};

  double apply(std::span<const double> y) const;
};
// A time equal to a grid point gets weight 1 on that point; otherwise linear in the first and
// last interval and cubic Lagrange elsewhere. Throws std::invalid_argument outside the grid.
InterpolationStencil interpolation_stencil(std::span<const double> grid, double t);

}  // namespace macrostep::output

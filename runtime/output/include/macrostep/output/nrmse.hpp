// Normalized root-mean-square error of a result against a reference (seed 000 Eqs. 5.1-5.2;
// spec/MODELS.md §4.1):
//   nrmse_j = sqrt( sum_i (ref_ij - res_ij)^2 / sum_i (ref_ij - mean_i(ref_ij))^2 )
//   NRMSE   = || [nrmse_1 ... nrmse_nz] ||_2
// Columns are matched by name (DESIGN.md column naming); every result column must exist in
// the reference, reference columns absent from the result are ignored. Variables whose
// reference has zero variance are excluded and listed ([SI] MODELS.md §4.1).
//
// If the two time columns are not identical, the reference is interpolated to the result's
// time points: cubic Lagrange on the four nearest points, linear in the first and last
// interval. The result's time range must lie inside the reference's.
//
// All sums run in row order, then column order, so the numbers are reproducible.
#pragma once

#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "macrostep/output/csv.hpp"

namespace macrostep::output {

struct VariableError {
  std::string name;
  double nrmse = 0.0;
};

struct NrmseReport {
  std::vector<VariableError> variables;  // result column order, excluded ones left out
  std::vector<std::string> excluded;     // zero reference variance
  double norm = 0.0;                     // 2-norm over `variables`
  bool interpolated = false;             // reference interpolated to the result's times
  std::size_t time_points = 0;

  // 2-norm over the variables whose name satisfies `select` (e.g. positions "x_*").
  double norm_of(const std::function<bool(const std::string&)>& select) const;
};

// The files the two tables come from, for the messages (empty: not named).
struct NrmseFiles {
  std::string result, reference;
};

// Throws OutputError if a result column is missing from the reference, if there is no
// variable to compare, if either time column is not strictly increasing, if the result's
// times lie outside the reference's, if either table holds NaN or an infinity (the message
// names the file, the column, the row and the time), or if every variable's reference is
// constant (its NRMSE undefined: an all-zero reference).
NrmseReport compute_nrmse(const CsvTable& result, const CsvTable& reference,
                          const NrmseFiles& files = {});

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

// Shared check of a coupling law's analytic ∂φ/∂y (CouplingLaw::jacobian) against central finite
// differences of its evaluate().
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "macrostep/system/coupling_law.hpp"

namespace macrostep::testing {

// Perturbs each read j by h_j = relative_step·max(|y_j|, scale_j) (scale: the read's typical
// magnitude, so that a read at zero gets a sensible step) and compares every entry with
// tolerance·max(|entry|, row scale), where the row scale is the largest analytic entry of the row.
inline void expect_law_jacobian_matches_central_differences(const system::CouplingLaw& law,
                                                            const std::vector<double>& y0,
                                                            const std::vector<double>& scale,
                                                            double relative_step,
                                                            double tolerance) {
  const std::size_t n_in = law.reads().size(), n_out = law.write_count();
  ASSERT_EQ(y0.size(), n_in);
  ASSERT_EQ(scale.size(), n_in);
  std::vector<double> analytic(n_out * n_in, std::nan(""));
  law.jacobian(y0, analytic);
  std::vector<double> row_scale(n_out, 0.0);
  for (std::size_t r = 0; r < n_out; ++r) {
    for (std::size_t j = 0; j < n_in; ++j) {
      ASSERT_TRUE(std::isfinite(analytic[r * n_in + j])) << "entry " << r << "," << j;
      row_scale[r] = std::max(row_scale[r], std::fabs(analytic[r * n_in + j]));
    }
  }
  std::vector<double> y = y0, up(n_out), down(n_out);
  for (std::size_t j = 0; j < n_in; ++j) {
    const double h = relative_step * std::max(std::fabs(y0[j]), scale[j]);
    y[j] = y0[j] + h;
    law.evaluate(y, up);
    y[j] = y0[j] - h;
    law.evaluate(y, down);
    y[j] = y0[j];
    for (std::size_t r = 0; r < n_out; ++r) {
      const double fd = (up[r] - down[r]) / (2.0 * h);
      const double entry = analytic[r * n_in + j];
      EXPECT_NEAR(entry, fd, tolerance * std::max(std::fabs(entry), row_scale[r]))
          << "d(" << law.variable_names()[r] << ")/d(read " << j << ")";
    }
  }
}

}  // namespace macrostep::testing

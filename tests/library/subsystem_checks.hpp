// Checks every built-in model must pass (model::Subsystem contract): a well-formed CSC pattern,
// the analytic Jacobian dF/dz + cj·dF/dz' against central finite differences of residual()
// (entries outside the pattern exactly zero in the FD matrix), and a consistent initial state.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "macrostep/ida/integrator.hpp"
#include "macrostep/model/subsystem.hpp"

namespace macrostep::testing {

struct SubsystemPoint {
  double t = 0.0;
  std::vector<double> z, zp, u;
};

inline void expect_pattern_well_formed(const model::Subsystem& s) {
  const auto& p = s.jacobian_pattern();
  ASSERT_EQ(p.n, s.state_size());
  ASSERT_EQ(p.column_start.size(), p.n + 1);
  ASSERT_EQ(p.column_start.front(), 0);
  ASSERT_EQ(static_cast<std::size_t>(p.column_start.back()), p.row_index.size());
  for (std::size_t c = 0; c < p.n; ++c) {
    for (auto k = p.column_start[c]; k < p.column_start[c + 1]; ++k) {
      ASSERT_GE(p.row_index[k], 0);
      ASSERT_LT(static_cast<std::size_t>(p.row_index[k]), p.n);
      if (k > p.column_start[c]) {
        ASSERT_LT(p.row_index[k - 1], p.row_index[k]);
      }
    }
  }
  ASSERT_EQ(s.state_roles().size(), s.state_size());
}

inline std::vector<double> residual_at(const model::Subsystem& s, double t,
                                       const std::vector<double>& z, const std::vector<double>& zp,
                                       const std::vector<double>& u) {
  std::vector<double> r(s.state_size());
  s.residual(t, z, zp, u, r);
  return r;
}

// Central differences with step relative_step·max(1, |z_c|) (resp. z'_c); each entry compared
// with tolerance·max(1, largest analytic entry of its row).
inline void expect_jacobian_matches_central_differences(const model::Subsystem& s,
                                                        const SubsystemPoint& at, double cj,
                                                        double relative_step = 1e-6,
                                                        double tolerance = 1e-6) {
  expect_pattern_well_formed(s);
  const auto& p = s.jacobian_pattern();
  const std::size_t n = s.state_size();
  std::vector<double> values(p.nonzeros(), std::nan(""));
  s.jacobian(at.t, at.z, at.zp, at.u, cj, values);
  std::vector<double> dense(n * n, 0.0), row_scale(n, 1.0);
  std::vector<bool> structural(n * n, false);
  for (std::size_t c = 0; c < n; ++c) {
    for (auto k = p.column_start[c]; k < p.column_start[c + 1]; ++k) {
      const auto r = static_cast<std::size_t>(p.row_index[k]);
      ASSERT_TRUE(std::isfinite(values[k])) << "value " << k << " not written";
      dense[r * n + c] = values[k];
      structural[r * n + c] = true;
      row_scale[r] = std::max(row_scale[r], std::fabs(values[k]));
    }
  }
  for (std::size_t c = 0; c < n; ++c) {
    const double h = relative_step * std::max(1.0, std::fabs(at.z[c]));
    const double hp = relative_step * std::max(1.0, std::fabs(at.zp[c]));
    auto z_up = at.z, z_down = at.z, zp_up = at.zp, zp_down = at.zp;
    z_up[c] += h;
    z_down[c] -= h;
    zp_up[c] += hp;
    zp_down[c] -= hp;
    const auto rz_up = residual_at(s, at.t, z_up, at.zp, at.u);
    const auto rz_down = residual_at(s, at.t, z_down, at.zp, at.u);
    const auto rp_up = residual_at(s, at.t, at.z, zp_up, at.u);
    const auto rp_down = residual_at(s, at.t, at.z, zp_down, at.u);
    for (std::size_t r = 0; r < n; ++r) {
      const double fd =
          (rz_up[r] - rz_down[r]) / (2.0 * h) + cj * (rp_up[r] - rp_down[r]) / (2.0 * hp);
      if (!structural[r * n + c]) {
        EXPECT_EQ(fd, 0.0) << "nonzero outside the pattern at row " << r << ", column " << c;
      } else {
        EXPECT_NEAR(dense[r * n + c], fd, tolerance * row_scale[r])
            << "row " << r << " (" << s.state_name(r) << "), column " << c << " ("
            << s.state_name(c) << ")";
      }
    }
  }
}

// residual(t0, z0, z0', u0) == 0 (to rounding relative to the row's terms) for the given inputs.
inline void expect_consistent_initial_state(const model::Subsystem& s,
                                            const std::vector<double>& u0, double tolerance) {
  std::vector<double> z0(s.state_size()), zp0(s.state_size());
  s.initial_state(u0, z0, zp0);
  const auto r = residual_at(s, s.initial_time(), z0, zp0, u0);
  for (std::size_t i = 0; i < r.size(); ++i) {
    EXPECT_NEAR(r[i], 0.0, tolerance) << "row " << i << " (" << s.state_name(i) << ")";
  }
}

// A constant input function for integrating a model alone.
class ConstantInput final : public model::InputFunction {
 public:
  explicit ConstantInput(std::vector<double> u) : u_(std::move(u)) {}
  void evaluate(double, std::span<double> u) const override {
    std::copy(u_.begin(), u_.end(), u.begin());
  }

 private:
  std::vector<double> u_;
};

// Dense row-major rows × columns matrix from an entry pattern and its values (summing repeats).
inline std::vector<double> dense_from_entries(const model::EntryPattern& pattern,
                                              const std::vector<double>& values, std::size_t rows,
                                              std::size_t columns) {
  std::vector<double> dense(rows * columns, 0.0);
  for (std::size_t k = 0; k < pattern.nonzeros(); ++k) {
    EXPECT_LT(pattern.row[k], rows);
    EXPECT_LT(pattern.column[k], columns);
    dense[pattern.row[k] * columns + pattern.column[k]] += values[k];
  }
  return dense;
}

// A model's analytic ∂y/∂z and ∂F/∂u against the base class's documented finite-difference
// defaults (model::Subsystem::output_jacobian / input_jacobian); entries the analytic pattern
// leaves out must be zero in the FD matrix.
inline void expect_coupling_jacobians_match_differences(const model::Subsystem& s,
                                                        const SubsystemPoint& at,
                                                        double tolerance = 1e-6) {
  const std::size_t n = s.state_size(), ny = s.output_size(), nu = s.input_size();
  const auto compare = [&](const std::vector<double>& analytic, const std::vector<double>& fd,
                           const char* what) {
    for (std::size_t k = 0; k < analytic.size(); ++k) {
      EXPECT_NEAR(analytic[k], fd[k], tolerance * std::max(1.0, std::fabs(analytic[k])))
          << what << " entry " << k;
    }
  };
  const auto y_pattern = s.output_jacobian_pattern();
  std::vector<double> y_values(y_pattern.nonzeros()), y_fd(ny * n);
  s.output_jacobian(at.t, at.z, at.u, y_values);
  s.model::Subsystem::output_jacobian(at.t, at.z, at.u, y_fd);
  const auto y_dense_fd =
      dense_from_entries(s.model::Subsystem::output_jacobian_pattern(), y_fd, ny, n);
  compare(dense_from_entries(y_pattern, y_values, ny, n), y_dense_fd, "dy/dz");
  const auto u_pattern = s.input_jacobian_pattern();
  std::vector<double> u_values(u_pattern.nonzeros()), u_fd(n * nu);
  s.input_jacobian(at.t, at.z, at.zp, at.u, u_values);
  s.model::Subsystem::input_jacobian(at.t, at.z, at.zp, at.u, u_fd);
  const auto u_dense_fd =
      dense_from_entries(s.model::Subsystem::input_jacobian_pattern(), u_fd, n, nu);
  compare(dense_from_entries(u_pattern, u_values, n, nu), u_dense_fd, "dF/du");
}

// Tight IDA tolerances for comparisons with closed forms.
inline ida::IntegratorOptions tight_options() {
  ida::IntegratorOptions o;
  o.rtol = 1e-10;
  o.atol_pos = 1e-13;
  o.atol_vel = 1e-12;
  return o;
}

// The state of `s` integrated by IDA+KLU from its initial state to each of `times` (increasing,
// > 0), with inputs from `input`.
inline std::vector<std::vector<double>> integrate_states(const model::Subsystem& s,
                                                         const model::InputFunction& input,
                                                         const std::vector<double>& times) {
  ida::Integrator integrator(s, tight_options(), &input);
  std::vector<std::vector<double>> states;
  std::vector<double> z(s.state_size()), zp(s.state_size());
  for (double t : times) {
    integrator.advance_to(t);
    integrator.state(z, zp);
    states.push_back(z);
  }
  return states;
}

}  // namespace macrostep::testing

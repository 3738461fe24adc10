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

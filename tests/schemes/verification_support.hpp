// Shared helpers of the issue-3 verification tests (test_convergence, test_estimators,
// test_safety_factor): local reference runs restarted from a co-simulation state
// (spec/MODELS.md §4.2 "local reference"), the full chain state of a co-simulation, and a
// least-squares slope in log-log coordinates.
#pragma once

#include <cmath>
#include <cstddef>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "macrostep/executors/executor.hpp"
#include "macrostep/model/subsystem.hpp"
#include "macrostep/system/coupled_system.hpp"

namespace macrostep::verification {

// A model that starts at (t0, z0) instead of its own initial point: every evaluation is
// forwarded to `inner` with the true time t, so time-dependent forces (harmonic, modified
// sine) see the same t as in the co-simulation - no time shift is needed. z0' is computed
// from the residual, which for the chain (and any model whose residual is linear in z' with a
// diagonal coefficient: F = D z' - g(t, z, u)) gives z0'_i = -F_i(z0, 0) / (F_i(z0, 1) - F_i(z0,
// 0)).
class RestartedModel final : public model::Subsystem {
 public:
  RestartedModel(const model::Subsystem& inner, double t0, std::vector<double> z0)
      : inner_(inner), t0_(t0), z0_(std::move(z0)) {
    if (z0_.size() != inner_.state_size()) {
      throw std::invalid_argument("RestartedModel: state size mismatch");
    }
  }
  std::size_t state_size() const override { return inner_.state_size(); }
  std::size_t input_size() const override { return inner_.input_size(); }
  std::size_t output_size() const override { return inner_.output_size(); }
  bool has_feedthrough() const override { return inner_.has_feedthrough(); }
  std::span<const model::StateRole> state_roles() const override { return inner_.state_roles(); }
  std::string state_name(std::size_t i) const override { return inner_.state_name(i); }
  std::string output_name(std::size_t i) const override { return inner_.output_name(i); }
  std::string input_name(std::size_t i) const override { return inner_.input_name(i); }
  double initial_time() const override { return t0_; }
  void initial_state(std::span<const double> u0, std::span<double> z0,
                     std::span<double> zp0) const override {
    const std::size_t n = z0_.size();
    std::vector<double> zero(n, 0.0), one(n, 1.0), r0(n), r1(n);
    inner_.residual(t0_, z0_, zero, u0, r0);
    inner_.residual(t0_, z0_, one, u0, r1);
    for (std::size_t i = 0; i < n; ++i) {
      z0[i] = z0_[i];
      zp0[i] = -r0[i] / (r1[i] - r0[i]);
    }
  }
  void residual(double t, std::span<const double> z, std::span<const double> zp,
                std::span<const double> u, std::span<double> r) const override {
    inner_.residual(t, z, zp, u, r);
  }
  const model::SparsityPattern& jacobian_pattern() const override {
    return inner_.jacobian_pattern();
  }
  void jacobian(double t, std::span<const double> z, std::span<const double> zp,
                std::span<const double> u, double cj, std::span<double> values) const override {
    inner_.jacobian(t, z, zp, u, cj, values);
  }
  void outputs(double t, std::span<const double> z, std::span<const double> u,
               std::span<double> y) const override {
    inner_.outputs(t, z, u, y);
  }

 private:
  const model::Subsystem& inner_;
  double t0_;
  std::vector<double> z0_;
};

// The state of the whole chain at the executor's accepted time: the subsystems hold
// consecutive mass ranges with the interleaved layout [x, v, x, v, ...], so concatenating
// them in subsystem order gives the monolithic layout.
inline std::vector<double> chain_state(const system::CoupledSystem& sys,
                                       const executors::Executor& ex) {
  std::vector<double> z;
  for (std::size_t i = 0; i < sys.subsystem_count(); ++i) {
    std::vector<double> zi(sys.subsystem(i).state_size());
    ex.accepted_state(i, zi);
    z.insert(z.end(), zi.begin(), zi.end());
  }
  return z;
}

// 0-based global mass index of a monitored chain output from its name "x_17" / "v_17" (1-based).
inline std::size_t body_mass(const system::MonitoredOutput& m) {
  return static_cast<std::size_t>(std::stoul(m.name.substr(2))) - 1;
}

// Index of a monitored chain output in the whole chain's state vector (ChainSegment's
// interleaved layout: x_k at 2k, v_k at 2k+1).
inline std::size_t chain_state_index(const system::MonitoredOutput& m) {
  return 2 * body_mass(m) + (m.group == control::WeightGroup::kVelocity ? 1 : 0);
}

// Least-squares slope of log(y) over log(x).
inline double loglog_slope(const std::vector<double>& x, const std::vector<double>& y) {
  const std::size_t n = x.size();
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double lx = std::log(x[i]), ly = std::log(y[i]);
    sx += lx;
    sy += ly;
    sxx += lx * lx;
    sxy += lx * ly;
  }
  const double dn = static_cast<double>(n);
  return (dn * sxy - sx * sy) / (dn * sxx - sx * sx);
}

}  // namespace macrostep::verification

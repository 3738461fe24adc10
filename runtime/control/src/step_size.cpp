#include "macrostep/control/step_size.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "macrostep/polynomials/builders.hpp"
#include "macrostep/polynomials/lagrange.hpp"

namespace macrostep::control {

void StepSizeOptions::validate() const {
  auto fail = [](const std::string& what) {
    throw std::invalid_argument("step-size options: " + what);
  };
  if (!(safety > 0.0) || !std::isfinite(safety)) fail("safety factor must be > 0");
  if (!(r_min > 0.0 && r_min <= 1.0)) fail("r_min must lie in (0, 1]");
  if (!(r_max >= 1.0) || !std::isfinite(r_max)) fail("r_max must be finite and >= 1");
  if (!(h_max > 0.0)) fail("h_max must be > 0");
}

StepSizeUnderflow::StepSizeUnderflow(double time, double step, double minimum)
    : std::runtime_error(
          fmt::format("macro step size {:.3g} s at T = {:.9g} s is below H_min = {:.3g} s; the "
                      "error test cannot be met",
                      step, time, minimum)),
      time_(time),
      step_(step),
      minimum_(minimum) {}

StepSizeController::StepSizeController(StepSizeOptions options) : options_(options) {
  options_.validate();
}

double StepSizeController::factor(double norm, int order) const {
  if (order < 1) throw std::invalid_argument("StepSizeController::factor: order < 1");
  if (norm == 0.0) return options_.r_max;
  if (!std::isfinite(norm) || norm < 0.0) return 0.0;
  return std::pow(options_.safety * norm, -1.0 / static_cast<double>(order));
}

double StepSizeController::a_posteriori_factor(const ErrorEstimate& estimate, int kappa) const {
  switch (estimate.kind) {
    case ErrorEstimate::Kind::kStates:
      return std::min(factor(estimate.pos, kappa + 3), factor(estimate.vel, kappa + 2));
    case ErrorEstimate::Kind::kCouplingVariables:
      return factor(estimate.u, kappa + 1);
    case ErrorEstimate::Kind::kNone:
      break;
  }
  throw std::invalid_argument("StepSizeController: no error estimate to derive a step size from");
}

double StepSizeController::limit(double r, int n_fail, bool corrector_failed) const {
  if (std::isnan(r)) r = 0.0;
  if (n_fail == 0) {
    if (r >= options_.r_max) {
      r = options_.r_max;
    } else if (r < 1.0) {
      r = std::min(0.9, std::max(options_.r_min, r));
    } else if (options_.dead_zone) {
      r = 1.0;
    }
  }
  if (n_fail == 1) r = std::min(0.9, std::max(0.25, 0.9 * r));
  if (n_fail > 1 || corrector_failed) r = 0.25;
  return r;
}

double StepSizeController::next_step(double h, double r, double t) const {
  const double h_new = std::min(r * h, options_.h_max);
  const double h_min = min_step(t);
  if (!(h_new >= h_min)) throw StepSizeUnderflow(t, h_new, h_min);
  return h_new;
}

double StepSizeController::min_step(double t) {
  return std::abs(t) < kMinStepStartWindow ? 1e-22 : 1e-14 * std::max(1.0, std::abs(t));
}

void a_priori_error(const polynomials::CouplingHistory& history, int kappa_new, double t_next,
                    std::span<double> eps) {
  if (kappa_new < 0) throw std::invalid_argument("a_priori_error: negative degree");
  if (eps.size() != history.channels()) throw std::invalid_argument("a_priori_error: size");
  if (history.size() < static_cast<std::size_t>(kappa_new) + 2) {
    throw std::invalid_argument("a_priori_error: needs " + std::to_string(kappa_new + 2) +
                                " accepted points, history holds " +
                                std::to_string(history.size()));
  }
  polynomials::newest_divided_difference(history, kappa_new + 1, eps);
  double prod = 1.0;
  for (std::size_t j = 0; j <= static_cast<std::size_t>(kappa_new); ++j) {
    prod *= t_next - history.time_back(j);
  }
  for (double& e : eps) e *= prod;
}

double a_priori_error_norm(const polynomials::CouplingHistory& history, int kappa_new,
                           double t_next, const ErrorTolerances& tol) {
  if (kappa_new < 0 || kappa_new + 2 > static_cast<int>(polynomials::kMaxLagrangeNodes)) {
    throw std::invalid_argument("a_priori_error_norm: degree out of range");
  }
  const std::size_t n = static_cast<std::size_t>(kappa_new) + 2;
  if (history.size() < n) {
    throw std::invalid_argument("a_priori_error_norm: needs " + std::to_string(n) +
                                " accepted points, history holds " +
                                std::to_string(history.size()));
  }
  std::array<double, polynomials::kMaxLagrangeNodes> nodes{};
  std::array<double, polynomials::kMaxLagrangeNodes> vals{};
  for (std::size_t m = 0; m < n; ++m) nodes[m] = history.time_back(n - 1 - m);
  double prod = 1.0;
  for (std::size_t j = 0; j + 1 < n; ++j) prod *= t_next - history.time_back(j);
  // Per channel: ε̃_c = prod·u_c[T_M..T_{M−κ−1}], weighted at u_M (D-25), summed in channel
  // order; the same arithmetic as a_priori_error() followed by wrms_norm().
  const std::span<const double> u_m = history.newest_values();
  std::vector<double> eps(history.channels());
  std::vector<double> w(history.channels());
  for (std::size_t c = 0; c < history.channels(); ++c) {
    for (std::size_t m = 0; m < n; ++m) vals[m] = history.values_back(n - 1 - m)[c];
    eps[c] = prod * polynomials::divided_difference(std::span<const double>(nodes.data(), n),
                                                    std::span<const double>(vals.data(), n));
  }
  error_weights(u_m, tol, WeightGroup::kCouplingVariable, w);
  return wrms_norm(eps, w);
}

}  // namespace macrostep::control

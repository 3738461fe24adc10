#include "macrostep/control/estimators.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace macrostep::control {

namespace {

void check_sizes(std::size_t a, std::size_t b, std::size_t c, const char* who) {
  if (a != b || a != c) throw std::invalid_argument(std::string(who) + ": size mismatch");
}

void scaled_abs_difference(std::span<const double> a, std::span<const double> b, double scale,
                           std::span<double> eps, const char* who) {
  check_sizes(a.size(), b.size(), eps.size(), who);
  for (std::size_t i = 0; i < a.size(); ++i) eps[i] = scale * std::abs(a[i] - b[i]);
}

}  // namespace

std::optional<Estimator> parse_estimator(std::string_view name) {
  return model::parse_name(kEstimatorNames, name);
}

const char* to_string(Estimator e) {
  return model::name_of(kEstimatorNames, e);
}

std::vector<std::string_view> estimator_names() {
  return model::names_of(kEstimatorNames);
}

bool monitors_states(Estimator e) {
  return e == Estimator::kExLE || e == Estimator::kExMD || e == Estimator::kImMD;
}

bool monitors_coupling_variables(Estimator e) {
  return e == Estimator::kExCV || e == Estimator::kImCV;
}

int comparison_runs(Estimator e) {
  return (e == Estimator::kExLE || e == Estimator::kExMD) ? 1 : 0;
}

std::size_t history_points_required(Estimator e, int kappa) {
  if (kappa < 0) throw std::invalid_argument("history_points_required: negative degree");
  return monitors_states(e) ? static_cast<std::size_t>(kappa) + 2 : 1;
}

Estimator effective_estimator(Estimator e, int kappa, std::size_t history_points) {
  if (!monitors_states(e) || history_points >= history_points_required(e, kappa)) return e;
  return e == Estimator::kImMD ? Estimator::kImCV : Estimator::kExCV;
}

void local_extrapolation_error(std::span<const double> nominal, std::span<const double> comparison,
                               std::span<double> eps) {
  scaled_abs_difference(nominal, comparison, 1.0, eps, "local_extrapolation_error");
}

void explicit_milne_error(std::span<const double> nominal, std::span<const double> comparison,
                          double ratio, std::span<double> eps) {
  scaled_abs_difference(nominal, comparison, ratio, eps, "explicit_milne_error");
}

void implicit_milne_error(std::span<const double> predictor, std::span<const double> corrected,
                          double ratio, std::span<double> eps) {
  scaled_abs_difference(predictor, corrected, 1.0 - ratio, eps, "implicit_milne_error");
}

void coupling_variable_error(std::span<const double> u_pre, std::span<const double> u_new,
                             std::span<double> eps) {
  scaled_abs_difference(u_pre, u_new, 1.0, eps, "coupling_variable_error");
}

ErrorEstimate estimate_states(Estimator e, std::span<const double> nominal,
                              std::span<const double> other, std::span<const WeightGroup> groups,
                              MilneRatios ratios, const ErrorTolerances& tol) {
  constexpr auto kPos = static_cast<std::size_t>(WeightGroup::kPosition);
  constexpr auto kVel = static_cast<std::size_t>(WeightGroup::kVelocity);
  PerWeightGroup scale{1.0, 1.0, 1.0};
  switch (e) {
    case Estimator::kExLE:
      break;
    case Estimator::kExMD:
      scale[kPos] = ratios.pos;
      scale[kVel] = ratios.vel;
      break;
    case Estimator::kImMD:
      scale[kPos] = 1.0 - ratios.pos;
      scale[kVel] = 1.0 - ratios.vel;
      break;
    default:
      throw std::invalid_argument(std::string("estimate_states: ") + to_string(e) +
                                  " does not monitor states");
  }
  for (WeightGroup g : groups) {
    if (g != WeightGroup::kPosition && g != WeightGroup::kVelocity) {
      throw std::invalid_argument("estimate_states: monitored outputs are positions or velocities");
    }
  }
  const PerWeightGroup norm = grouped_difference_norms(nominal, other, groups, scale, nominal, tol);
  return ErrorEstimate::states(norm[kPos], norm[kVel]);
}

ErrorEstimate estimate_coupling_variables(std::span<const double> u_pre,
                                          std::span<const double> u_new,
                                          const ErrorTolerances& tol) {
  return ErrorEstimate::coupling_variables(
      scaled_difference_norm(u_pre, u_new, 1.0, u_new, tol, WeightGroup::kCouplingVariable));
}

double prediction_ratio(std::span<const double> u_pre, std::span<const double> u_hat,
                        std::span<const double> u_new, const ErrorTolerances& tol) {
  if (u_hat.size() != u_pre.size()) {
    throw std::invalid_argument("prediction_ratio: u_hat and u_pre differ in size");
  }
  // Both norms with the weights at u_{N+1}, so that ρ compares the two distances alone.
  const double actual =
      scaled_difference_norm(u_pre, u_new, 1.0, u_new, tol, WeightGroup::kCouplingVariable);
  const double assumed =
      scaled_difference_norm(u_pre, u_hat, 1.0, u_new, tol, WeightGroup::kCouplingVariable);
  if (!(assumed > 0.0) || !std::isfinite(assumed) || !std::isfinite(actual)) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  return actual / assumed;
}

double raise_for_prediction_ratio(ErrorEstimate& estimate, double ratio, double limit) {
  if (!(limit > 0.0) || !(ratio > limit)) return 1.0;  // also for a NaN ratio
  const double factor = ratio / limit;
  estimate.pos *= factor;
  estimate.vel *= factor;
  estimate.u *= factor;
  return factor;
}

}  // namespace macrostep::control

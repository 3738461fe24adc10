#include "macrostep/control/order.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "macrostep/polynomials/lagrange.hpp"

namespace macrostep::control {

std::optional<OrderStrategy> parse_order_strategy(std::string_view name) {
  return model::parse_name(kOrderStrategyNames, name);
}

const char* to_string(OrderStrategy s) {
  return model::name_of(kOrderStrategyNames, s);
}

std::vector<std::string_view> order_strategy_names() {
  return model::names_of(kOrderStrategyNames);
}

void OrderOptions::validate() const {
  if (kappa_max < 0 || kappa_max > kMaxKappa) {
    throw std::invalid_argument("order options: kappa_max " + std::to_string(kappa_max) +
                                " outside 0.." + std::to_string(kMaxKappa));
  }
}

ScaledDerivativeNorms ScaledDerivativeNorms::from_values(std::initializer_list<double> values) {
  ScaledDerivativeNorms s;
  int j = 0;
  for (double v : values) s.set(j++, v);
  return s;
}

double ScaledDerivativeNorms::operator[](int j) const {
  if (!available(j)) {
    throw std::out_of_range("SDN(" + std::to_string(j) + ") not available (highest " +
                            std::to_string(highest_) + ")");
  }
  return value_[static_cast<std::size_t>(j)];
}

void ScaledDerivativeNorms::set(int j, double value) {
  if (j < 0 || j > kMaxOrder) throw std::out_of_range("SDN order beyond kMaxOrder");
  value_[static_cast<std::size_t>(j)] = value;
  highest_ = std::max(highest_, j);
}

ScaledDerivativeNorms scaled_derivative_norms(const polynomials::CouplingHistory& history, double h,
                                              int max_order, const ErrorTolerances& tol) {
  if (history.empty()) throw std::invalid_argument("scaled_derivative_norms: empty history");
  if (!(h > 0.0)) throw std::invalid_argument("scaled_derivative_norms: H must be > 0");
  const int highest =
      std::min({max_order, ScaledDerivativeNorms::kMaxOrder, static_cast<int>(history.size()) - 1});
  const std::size_t nc = history.channels();
  std::vector<double> w(nc);
  std::vector<double> e(nc);
  error_weights(history.newest_values(), tol, WeightGroup::kCouplingVariable, w);
  std::array<double, ScaledDerivativeNorms::kMaxOrder + 1> nodes{};
  std::array<double, ScaledDerivativeNorms::kMaxOrder + 1> vals{};
  ScaledDerivativeNorms sdn;
  double scale = 1.0;  // H^j·j!
  for (int j = 0; j <= highest; ++j) {
    if (j > 0) scale *= h * static_cast<double>(j);
    const std::size_t n = static_cast<std::size_t>(j) + 1;
    for (std::size_t m = 0; m < n; ++m) nodes[m] = history.time_back(n - 1 - m);
    for (std::size_t c = 0; c < nc; ++c) {
      for (std::size_t m = 0; m < n; ++m) vals[m] = history.values_back(n - 1 - m)[c];
      e[c] = scale * polynomials::divided_difference(std::span<const double>(nodes.data(), n),
                                                     std::span<const double>(vals.data(), n));
    }
    sdn.set(j, wrms_norm(e, w));
  }
  return sdn;
}

int apply_failure_overrides(int kappa, int n_fail) {
  if (n_fail > 3) kappa = std::min(1, kappa);
  if (n_fail > 5) kappa = 0;
  return kappa;
}

OrderController::OrderController(OrderOptions options) : options_(options) {
  options_.validate();
}

int OrderController::cap(int kappa, std::size_t history_points) const {
  const int by_history = history_points == 0 ? 0 : static_cast<int>(history_points) - 1;
  return std::max(0, std::min({kappa, options_.kappa_max, by_history}));
}

int OrderController::select(int kappa, const ScaledDerivativeNorms& sdn, int n_fail,
                            std::size_t history_points) const {
  if (kappa < 0 || kappa > options_.kappa_max) {
    throw std::invalid_argument("OrderController::select: degree " + std::to_string(kappa) +
                                " outside 0..kappa_max");
  }
  if (options_.strategy == OrderStrategy::kFixed) return cap(options_.kappa_max, history_points);
  const int k = options_.strategy == OrderStrategy::kIdaLike
                    ? select_ida_like(kappa, sdn, n_fail)
                    : select_conservative(kappa, sdn, n_fail);
  return cap(k, history_points);
}

int OrderController::overrides_only(int kappa, int n_fail, std::size_t history_points) const {
  if (options_.strategy == OrderStrategy::kFixed) return cap(options_.kappa_max, history_points);
  return cap(apply_failure_overrides(kappa, n_fail), history_points);
}

int OrderController::select_ida_like(int kappa, const ScaledDerivativeNorms& s, int n_fail) const {
  int knew = kappa;
  // D-49: a hold stops the lowering to κ = 0 only (the one that was refuted); from κ ≥ 2
  // lowering is what a stiff interface needs.
  const bool may_lower = check_.lower_hold == 0 || kappa >= 2;
  // Lowering (each test only with its SDNs available, D-29).
  if (may_lower && knew == 1) {
    if (s.available(2) && s[1] <= s[2] / 2.0) knew = 0;
  } else if (may_lower && knew > 1) {
    if (s.available(knew + 1) && std::max(s[knew], s[knew - 1]) <= s[knew + 1]) knew = kappa - 1;
  }
  knew = apply_failure_overrides(knew, n_fail);
  // Raising (or a late lowering) after more than κ successes with this κ.
  if (kappa < options_.kappa_max && n_succ_ > kappa && knew == kappa && s.available(kappa + 2)) {
    if (knew == 0) {
      if (s[2] < s[1] / 2.0) knew = 1;
    } else {
      if (s[knew] <= std::min(s[knew + 1], s[knew + 2])) {
        if (may_lower) knew = kappa - 1;
      } else if (s[knew + 2] < s[knew + 1]) {
        knew = kappa + 1;
      }
    }
  }
  return knew;
}

int OrderController::select_conservative(int kappa, const ScaledDerivativeNorms& s,
                                         int n_fail) const {
  // True if SDN(k+1) < SDN(k) < … < SDN(1); a missing SDN(k+1) skips the test (D-29).
  auto decreasing_or_skipped = [&s](int k) {
    if (!s.available(k + 1)) return true;
    for (int j = 1; j <= k; ++j) {
      if (!(s[j + 1] < s[j])) return false;
    }
    return true;
  };
  int knew = kappa;
  // D-49: a hold stops the lowering to κ = 0 only.
  while (knew > (check_.lower_hold == 0 ? 0 : 1) && !decreasing_or_skipped(knew)) --knew;
  knew = apply_failure_overrides(knew, n_fail);
  if (kappa < options_.kappa_max && n_succ_ > kappa && knew == kappa && s.available(kappa + 2)) {
    if (s[knew + 2] < s[knew + 1]) knew = knew + 1;
  }
  return knew;
}

void OrderController::record_attempt(bool accepted, double h, int kappa) {
  n_succ_ = accepted ? n_succ_ + 1 : 0;
  if (accepted) {
    check_.steps_at_zero = kappa == 0 ? check_.steps_at_zero + 1 : 0;
    if (check_.steps_at_zero >= OrderChangeCheck::kLoweringKeptSteps) check_.failed_lowerings = 0;
  }
  if (!accepted || h < 0.25 * check_.refuted_h) {
    check_.lower_hold = 0;
  } else if (check_.lower_hold > 0) {
    --check_.lower_hold;
  }
}

namespace {
int doubled_hold(int hold) {
  return std::min(2 * hold, OrderController::OrderChangeCheck::kLongestHold);
}
}  // namespace

void OrderController::note_lowering(int kappa_from, double fallback_h) {
  if (options_.strategy == OrderStrategy::kFixed) return;
  if (kappa_from != 1) return;
  check_.lowered_from = kappa_from;
  check_.fallback_h = fallback_h;
}

void OrderController::confirm_lowering(bool kept) {
  check_.lowered_from = -1;
  if (kept) {
    check_.failed_lowerings = 0;
    check_.next_lower_hold = OrderChangeCheck::kFirstHold;
  }
}

int OrderController::lowering_failed(double h) {
  const int kappa = check_.lowered_from;
  check_.lowered_from = -1;
  if (++check_.failed_lowerings < 2) return -1;
  check_.refuted_h = h;
  check_.lower_hold = check_.next_lower_hold;
  check_.next_lower_hold = doubled_hold(check_.next_lower_hold);
  return kappa;
}

}  // namespace macrostep::control

#include "macrostep/control/error_constants.hpp"

#include <array>
#include <cmath>
#include <stdexcept>
#include <string>

namespace macrostep::control {

namespace {

void check_kappa(int kappa, int max, const char* who) {
  if (kappa < 0 || kappa > max) {
    throw std::invalid_argument(std::string(who) + ": degree " + std::to_string(kappa) +
                                " outside 0.." + std::to_string(max));
  }
}

// α_j = (T_{N+1} − T_{N−j})/H for j = 0..count−1 from the history.
std::array<double, kMaxErrorConstantDegree> alphas(const polynomials::CouplingHistory& history,
                                                   std::size_t count, double t_next,
                                                   const char* who) {
  if (history.size() < std::max<std::size_t>(count, 1)) {
    throw std::invalid_argument(std::string(who) + ": needs " + std::to_string(count) +
                                " accepted points, history holds " +
                                std::to_string(history.size()));
  }
  const double t_n = history.newest_time();
  const double h = t_next - t_n;
  if (!(h > 0.0) || !std::isfinite(h)) {
    throw std::invalid_argument(std::string(who) + ": T_{N+1} does not follow T_N");
  }
  std::array<double, kMaxErrorConstantDegree> a{};
  for (std::size_t j = 0; j < count; ++j) a[j] = (t_next - history.time_back(j)) / h;
  if (count > 0) a[0] = 1.0;  // exact by definition
  return a;
}

}  // namespace

ErrorConstants error_constants(int kappa, std::span<const double> alpha) {
  check_kappa(kappa, kMaxErrorConstantDegree, "error_constants");
  const std::size_t k = static_cast<std::size_t>(kappa);
  if (alpha.size() < k) throw std::invalid_argument("error_constants: fewer than kappa alphas");
  // c[m]: coefficient of s^m in L^κ(s) = Π_j (s + α_j − 1)/α_j.
  std::array<double, kMaxErrorConstantDegree + 1> c{};
  c[0] = 1.0;
  for (std::size_t j = 0; j < k; ++j) {
    const double a = alpha[j];
    if (!(a > 0.0) || !std::isfinite(a)) {
      throw std::invalid_argument("error_constants: alpha must be positive and finite");
    }
    const double shift = (a - 1.0) / a;
    const double lead = 1.0 / a;
    // Multiply by (lead·s + shift), highest power first so c[m−1] is still the old value.
    for (std::size_t m = j + 1; m > 0; --m) c[m] = c[m] * shift + c[m - 1] * lead;
    c[0] *= shift;
  }
  ErrorConstants e;
  for (std::size_t m = 0; m <= k; ++m) {
    const double mp1 = static_cast<double>(m + 1);
    e.vel += c[m] / mp1;
    e.pos += c[m] / (mp1 * (mp1 + 1.0));
  }
  return e;
}

ErrorConstants constant_step_error_constants(int kappa) {
  check_kappa(kappa, kMaxErrorConstantDegree, "constant_step_error_constants");
  std::array<double, kMaxErrorConstantDegree> a{};
  for (std::size_t j = 0; j < a.size(); ++j) a[j] = static_cast<double>(j + 1);
  return error_constants(kappa, a);
}

ErrorConstants error_constants(const polynomials::CouplingHistory& history, int kappa,
                               double t_next) {
  check_kappa(kappa, kMaxErrorConstantDegree, "error_constants");
  const auto a = alphas(history, static_cast<std::size_t>(kappa), t_next, "error_constants");
  return error_constants(kappa, a);
}

MilneRatios milne_ratios(const polynomials::CouplingHistory& history, int kappa, double t_next) {
  check_kappa(kappa, kMaxErrorConstantDegree - 1, "milne_ratios");
  const auto a = alphas(history, static_cast<std::size_t>(kappa) + 1, t_next, "milne_ratios");
  const ErrorConstants lo = error_constants(kappa, a);
  const ErrorConstants hi = error_constants(kappa + 1, a);
  return {hi.pos / lo.pos, hi.vel / lo.vel};
}

MilneRatios constant_step_milne_ratios(int kappa) {
  check_kappa(kappa, kMaxErrorConstantDegree - 1, "constant_step_milne_ratios");
  const ErrorConstants lo = constant_step_error_constants(kappa);
  const ErrorConstants hi = constant_step_error_constants(kappa + 1);
  return {hi.pos / lo.pos, hi.vel / lo.vel};
}

}  // namespace macrostep::control

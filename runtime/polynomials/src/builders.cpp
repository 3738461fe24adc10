#include "macrostep/polynomials/builders.hpp"

#include <array>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>

#include "macrostep/polynomials/lagrange.hpp"

namespace macrostep::polynomials {

namespace {

using std::to_string;

void require(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument(what);
}

void check_points(const CouplingHistory& h, std::size_t needed, const char* who) {
  require(h.size() >= needed, std::string(who) + ": needs " + to_string(needed) +
                                  " accepted points, history holds " + to_string(h.size()));
}

void check_next(const CouplingHistory& h, double t_next, const char* who) {
  require(!h.empty(), std::string(who) + ": empty history");
  require(std::isfinite(t_next) && t_next > h.newest_time(),
          std::string(who) + ": T_{N+1} = " + to_string(t_next) +
              " does not follow T_N = " + to_string(h.newest_time()));
}

void check_kappa(int kappa, int max, const char* who) {
  require(kappa >= 0 && kappa <= max,
          std::string(who) + ": degree " + to_string(kappa) + " outside 0.." + to_string(max));
}

void check_out(std::span<double> out, const CouplingHistory& h, const char* who) {
  require(out.size() == h.channels(), std::string(who) + ": output has " + to_string(out.size()) +
                                          " entries for " + to_string(h.channels()) + " channels");
}

// P_d(t_eval) through the d+1 newest points, per channel.
void newest_extrapolation(const CouplingHistory& h, int d, double t_eval, std::span<double> out) {
  const std::size_t n = static_cast<std::size_t>(d) + 1;
  std::array<double, kMaxLagrangeNodes> nodes{};
  std::array<double, kMaxLagrangeNodes> basis{};
  for (std::size_t m = 0; m < n; ++m) nodes[m] = h.time_back(n - 1 - m);  // ascending
  lagrange_basis(std::span<const double>(nodes.data(), n), t_eval,
                 std::span<double>(basis.data(), n));
  for (std::size_t c = 0; c < h.channels(); ++c) {
    double p = 0.0;
    for (std::size_t m = 0; m < n; ++m) p += h.values_back(n - 1 - m)[c] * basis[m];
    out[c] = p;
  }
}

SupportPoints make_polynomial(const CouplingHistory& h, int degree, double t_next,
                              std::span<const double> end_values,
                              std::span<const std::size_t> channels, const char* who) {
  check_kappa(degree, SupportPoints::kMaxDegree, who);
  check_next(h, t_next, who);
  check_points(h, static_cast<std::size_t>(std::max(degree, 1)), who);
  // An empty end_values leaves the end values zero for the caller to fill in.
  require(end_values.empty() || end_values.size() == h.channels(),
          std::string(who) + ": " + to_string(end_values.size()) + " end values for " +
              to_string(h.channels()) + " channels");
  require(channels.size() <= SupportPoints::kMaxChannels,
          std::string(who) + ": " + to_string(channels.size()) +
              " input channels selected (allowed 0.." + to_string(SupportPoints::kMaxChannels) +
              "; raise SupportPoints::kMaxChannels for wider subsystems)");
  SupportPoints sp{};
  sp.degree = degree;
  sp.channels = static_cast<std::uint32_t>(channels.size());
  sp.step_begin = h.newest_time();
  const std::size_t d = static_cast<std::size_t>(degree);
  for (std::size_t m = 0; m < d; ++m) sp.time[m] = h.time_back(d - 1 - m);
  sp.time[d] = t_next;
  for (std::size_t k = 0; k < channels.size(); ++k) {
    const std::size_t c = channels[k];
    require(c < h.channels(), std::string(who) + ": channel " + to_string(c) + " beyond the " +
                                  to_string(h.channels()) + " coupling channels");
    for (std::size_t m = 0; m < d; ++m) sp.value[k][m] = h.values_back(d - 1 - m)[c];
    sp.value[k][d] = end_values.empty() ? 0.0 : end_values[c];
  }
  return sp;
}

}  // namespace

void lagrange_prediction(const CouplingHistory& history, int kappa, double t_next,
                         std::span<double> u_pre) {
  const char* who = "lagrange_prediction";
  check_kappa(kappa, static_cast<int>(kMaxLagrangeNodes) - 1, who);
  check_next(history, t_next, who);
  check_points(history, static_cast<std::size_t>(kappa) + 1, who);
  check_out(u_pre, history, who);
  newest_extrapolation(history, kappa, t_next, u_pre);
}

void least_squares_weights(const CouplingHistory& history, int kappa, int n_sp, double t_next,
                           std::span<double> g) {
  const char* who = "least_squares_weights";
  constexpr std::size_t kMaxCols = 8;
  check_kappa(kappa, static_cast<int>(kMaxCols) - 1, who);
  require(n_sp >= kappa + 1 && static_cast<std::size_t>(n_sp) <= kMaxLagrangeNodes,
          std::string(who) + ": N_sp = " + to_string(n_sp) + " must lie in kappa+1.." +
              to_string(kMaxLagrangeNodes));
  check_next(history, t_next, who);
  check_points(history, static_cast<std::size_t>(n_sp), who);
  require(g.size() == static_cast<std::size_t>(n_sp), std::string(who) + ": g size != N_sp");

  const std::size_t n = static_cast<std::size_t>(n_sp);
  const std::size_t p = static_cast<std::size_t>(kappa) + 1;
  const double t_n = history.newest_time();
  const double h = t_next - t_n;
  // A = V (n × p, column-major), V[i][m] = τ_i^m, τ_i = (T_{N−i} − T_N)/H.
  std::array<double, kMaxLagrangeNodes * kMaxCols> a{};
  for (std::size_t i = 0; i < n; ++i) {
    const double tau = (history.time_back(i) - t_n) / h;
    double pw = 1.0;
    for (std::size_t m = 0; m < p; ++m) {
      a[m * n + i] = pw;
      pw *= tau;
    }
  }
  // Householder QR: A = Q R; the reflector of column k is stored in v (length n − k).
  std::array<double, kMaxLagrangeNodes * kMaxCols> v{};
  std::array<double, kMaxCols> r_diag{};
  for (std::size_t k = 0; k < p; ++k) {
    double norm2 = 0.0;
    for (std::size_t i = k; i < n; ++i) norm2 += a[k * n + i] * a[k * n + i];
    const double norm = std::sqrt(norm2);
    require(norm > 0.0, std::string(who) + ": rank-deficient fit");
    const double x0 = a[k * n + k];
    const double alpha = x0 >= 0.0 ? -norm : norm;
    double vnorm2 = 0.0;
    for (std::size_t i = k; i < n; ++i) {
      const double vi = a[k * n + i] - (i == k ? alpha : 0.0);
      v[k * n + i] = vi;
      vnorm2 += vi * vi;
    }
    r_diag[k] = alpha;
    if (vnorm2 == 0.0) continue;  // column already reduced; reflector is the identity
    const double vnorm = std::sqrt(vnorm2);
    for (std::size_t i = k; i < n; ++i) v[k * n + i] /= vnorm;
    for (std::size_t col = k + 1; col < p; ++col) {
      double dot = 0.0;
      for (std::size_t i = k; i < n; ++i) dot += v[k * n + i] * a[col * n + i];
      for (std::size_t i = k; i < n; ++i) a[col * n + i] -= 2.0 * dot * v[k * n + i];
    }
  }
  // z = R^{−T} e with e_m = 1^m = 1 (the monomials at τ = 1); R[k][col] = a[col*n + k].
  std::array<double, kMaxLagrangeNodes> z{};
  for (std::size_t m = 0; m < p; ++m) {
    double s = 1.0;
    for (std::size_t k = 0; k < m; ++k) s -= a[m * n + k] * z[k];
    z[m] = s / r_diag[m];
  }
  // g = Q [z; 0] = H_0 H_1 … H_{p−1} [z; 0].
  for (std::size_t kk = p; kk-- > 0;) {
    double dot = 0.0;
    for (std::size_t i = kk; i < n; ++i) dot += v[kk * n + i] * z[i];
    for (std::size_t i = kk; i < n; ++i) z[i] -= 2.0 * dot * v[kk * n + i];
  }
  for (std::size_t i = 0; i < n; ++i) g[i] = z[i];
}

void least_squares_prediction(const CouplingHistory& history, int kappa, int n_sp, double t_next,
                              std::span<double> u_pre) {
  check_out(u_pre, history, "least_squares_prediction");
  std::array<double, kMaxLagrangeNodes> g{};
  if (n_sp < 0 || static_cast<std::size_t>(n_sp) > kMaxLagrangeNodes) {
    throw std::invalid_argument("least_squares_prediction: N_sp = " + to_string(n_sp) +
                                " outside 1.." + to_string(kMaxLagrangeNodes));
  }
  const std::size_t n = static_cast<std::size_t>(n_sp);
  least_squares_weights(history, kappa, n_sp, t_next, std::span<double>(g.data(), n));
  for (std::size_t c = 0; c < history.channels(); ++c) {
    double s = 0.0;
    for (std::size_t i = n; i-- > 0;) s += g[i] * history.values_back(i)[c];  // oldest first
    u_pre[c] = s;
  }
}

void milne_comparison_prediction(const CouplingHistory& history, int kappa, double t_next,
                                 std::span<double> u_hat) {
  const char* who = "milne_comparison_prediction";
  check_kappa(kappa, static_cast<int>(kMaxLagrangeNodes) - 2, who);
  check_next(history, t_next, who);
  check_points(history, static_cast<std::size_t>(kappa) + 2, who);
  check_out(u_hat, history, who);
  newest_extrapolation(history, kappa + 1, t_next, u_hat);
}

SupportPoints step_polynomial(const CouplingHistory& history, int kappa, double t_next,
                              std::span<const double> end_values,
                              std::span<const std::size_t> channels) {
  return make_polynomial(history, kappa, t_next, end_values, channels, "step_polynomial");
}

SupportPoints step_polynomial(const CouplingHistory& history, int kappa, double t_next,
                              std::span<const double> end_values) {
  std::array<std::size_t, SupportPoints::kMaxChannels> all{};
  require(history.channels() <= SupportPoints::kMaxChannels,
          "step_polynomial: " + to_string(history.channels()) +
              " channels exceed SupportPoints::kMaxChannels = " +
              to_string(SupportPoints::kMaxChannels) + "; select a subsystem's inputs");
  std::iota(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(history.channels()),
            std::size_t{0});
  return make_polynomial(history, kappa, t_next, end_values,
                         std::span<const std::size_t>(all.data(), history.channels()),
                         "step_polynomial");
}

SupportPoints extrapolation_comparison_polynomial(const CouplingHistory& history, int kappa,
                                                  double t_next,
                                                  std::span<const std::size_t> channels) {
  const char* who = "extrapolation_comparison_polynomial";
  check_kappa(kappa, SupportPoints::kMaxDegree - 1, who);
  check_next(history, t_next, who);
  check_points(history, static_cast<std::size_t>(kappa) + 2, who);
  SupportPoints sp = make_polynomial(history, kappa + 1, t_next, {}, channels, who);
  // û^pre = P_{κ+1}(T_{N+1}) through the κ+2 newest points (Eq. 3.3), selected channels only.
  const std::size_t n = static_cast<std::size_t>(kappa) + 2;
  std::array<double, kMaxLagrangeNodes> nodes{};
  std::array<double, kMaxLagrangeNodes> basis{};
  for (std::size_t m = 0; m < n; ++m) nodes[m] = history.time_back(n - 1 - m);
  lagrange_basis(std::span<const double>(nodes.data(), n), t_next,
                 std::span<double>(basis.data(), n));
  for (std::size_t k = 0; k < channels.size(); ++k) {
    double u_hat = 0.0;
    for (std::size_t m = 0; m < n; ++m)
      u_hat += history.values_back(n - 1 - m)[channels[k]] * basis[m];
    sp.set_end_value(k, u_hat);
  }
  return sp;
}

double end_basis(const CouplingHistory& history, int kappa, double t_next, double t) {
  const char* who = "end_basis";
  check_kappa(kappa, SupportPoints::kMaxDegree, who);
  check_next(history, t_next, who);
  check_points(history, static_cast<std::size_t>(kappa), who);
  double b = 1.0;
  for (std::size_t j = 0; j < static_cast<std::size_t>(kappa); ++j) {
    const double tj = history.time_back(j);
    b *= (t - tj) / (t_next - tj);
  }
  return b;
}

void newest_divided_difference(const CouplingHistory& history, int order, std::span<double> out) {
  const char* who = "newest_divided_difference";
  check_kappa(order, static_cast<int>(kMaxLagrangeNodes) - 1, who);
  check_points(history, static_cast<std::size_t>(order) + 1, who);
  check_out(out, history, who);
  const std::size_t n = static_cast<std::size_t>(order) + 1;
  std::array<double, kMaxLagrangeNodes> nodes{};
  std::array<double, kMaxLagrangeNodes> vals{};
  for (std::size_t m = 0; m < n; ++m) nodes[m] = history.time_back(n - 1 - m);
  for (std::size_t c = 0; c < history.channels(); ++c) {
    for (std::size_t m = 0; m < n; ++m) vals[m] = history.values_back(n - 1 - m)[c];
    out[c] = divided_difference(std::span<const double>(nodes.data(), n),
                                std::span<const double>(vals.data(), n));
  }
}

}  // namespace macrostep::polynomials

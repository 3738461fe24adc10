// Continuous and seed-003 approximations (approximation.hpp; METHODS.md §2.4, §2.5).
#include "macrostep/polynomials/approximation.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <stdexcept>
#include <string>

#include "macrostep/polynomials/lagrange.hpp"

namespace macrostep::polynomials {

namespace {

using std::to_string;

constexpr std::string_view kNames =
    "lagrange, c0, c1, const-1-1, const-1-2, const-2-2-b0, const-3-3-b0, const-2-4, const-3-6, "
    "const-2-3-opt, const-2-2-opt, the same with lin-, const-2-3:p=P, lin-2-3:p=P, "
    "const-2-2:p1=P1,p2=P2, lin-2-2:p1=P1,p2=P2";

LinearCombination combination(std::initializer_list<double> a, std::initializer_list<double> b) {
  LinearCombination w;
  w.points = static_cast<int>(a.size());
  std::copy(a.begin(), a.end(), w.a.begin());
  std::copy(b.begin(), b.end(), w.b.begin());
  return w;
}

// The fixed sets of METHODS §2.5 (Eq. 2.30–2.32, 2.64, 2.67), by the name after "const-"/"lin-".
bool fixed_set(std::string_view set, LinearCombination& w) {
  if (set == "1-1")
    w = combination({1.0}, {});
  else if (set == "1-2")
    w = combination({1.0}, {0.5});
  else if (set == "2-2-b0")
    w = combination({1.5, -0.5}, {});
  else if (set == "3-3-b0")
    w = combination({23.0 / 12, -16.0 / 12, 5.0 / 12}, {});
  else if (set == "2-4")
    w = combination({-6.0 / 12, 18.0 / 12}, {17.0 / 12, 7.0 / 12});
  else if (set == "3-6")
    w = combination({-949.0 / 240, 608.0 / 240, 581.0 / 240},
                    {637.0 / 240, 1080.0 / 240, 173.0 / 240});
  else if (set == "2-3-opt")
    w = family_r3(0.0);  // Const 2,3,Opt (Eq. 2.64)
  else if (set == "2-2-opt")
    w = family_r2(-0.2, 0.363);  // Const 2,2,Opt (Eq. 2.67)
  else
    return false;
  return true;
}

double parse_number(std::string_view text, std::string_view whole) {
  double x = 0.0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), x);
  if (ec != std::errc{} || end != text.data() + text.size() || !std::isfinite(x)) {
    throw std::invalid_argument("approximation \"" + std::string(whole) + "\": \"" +
                                std::string(text) + "\" is not a number");
  }
  return x;
}

// "key=VALUE" at the front of text; the rest after an optional ',' stays in text.
double take_parameter(std::string_view& text, std::string_view key, std::string_view whole) {
  const std::string prefix = std::string(key) + "=";
  if (text.substr(0, prefix.size()) != prefix) {
    throw std::invalid_argument("approximation \"" + std::string(whole) + "\": expected " + prefix +
                                "VALUE");
  }
  const std::size_t comma = text.find(',');
  const std::string_view value = text.substr(prefix.size(), comma - std::min(comma, prefix.size()));
  text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
  return parse_number(value, whole);
}

// The parameterised families: "2-3:p=P" and "2-2:p1=P1,p2=P2".
bool family_set(std::string_view set, std::string_view whole, LinearCombination& w) {
  if (set.substr(0, 4) == "2-3:") {
    std::string_view rest = set.substr(4);
    w = family_r3(take_parameter(rest, "p", whole));
    return rest.empty();
  }
  if (set.substr(0, 4) == "2-2:") {
    std::string_view rest = set.substr(4);
    const double p1 = take_parameter(rest, "p1", whole);
    const double p2 = take_parameter(rest, "p2", whole);
    w = family_r2(p1, p2);
    return rest.empty();
  }
  return false;
}

std::span<const double> first(const std::array<double, kMaxLagrangeNodes>& a, std::size_t n) {
  return std::span<const double>(a.data(), n);
}

// Lagrange κ (METHODS §2.2): the κ newest history values at their own times, and the end node
// u_pre = P_κ(t_next) through the κ+1 newest points (Eq. 2.23).
void lagrange_stencil(int kappa, std::span<const double> tb, double t_next, Stencil& s) {
  const std::size_t k = static_cast<std::size_t>(kappa);
  s.degree = kappa;
  s.points = kappa + 1;
  for (std::size_t m = 0; m < k; ++m) {
    s.time[m] = tb[k - 1 - m];
    s.w[m][k - 1 - m] = 1.0;
  }
  std::array<double, kMaxLagrangeNodes> nodes{}, basis{};
  for (std::size_t m = 0; m <= k; ++m) nodes[m] = tb[k - m];  // ascending: T_{N−κ} .. T_N
  lagrange_basis(first(nodes, k + 1), t_next, std::span<double>(basis.data(), k + 1));
  for (std::size_t m = 0; m <= k; ++m) s.w[k][k - m] = basis[m];
  s.time[k] = t_next;
}

// Φ at t_eval through the k+1 history points starting `back` points behind T_N (value weights
// into row[back..back+k], or H-scaled slope weights with `slope`).
void extrapolation_weights(std::span<const double> tb, std::size_t back, std::size_t k,
                           double t_eval, bool slope, double h,
                           std::array<double, Stencil::kMaxPoints>& row) {
  std::array<double, kMaxLagrangeNodes> nodes{}, basis{};
  for (std::size_t m = 0; m <= k; ++m) nodes[m] = tb[back + k - m];
  const std::span<double> out(basis.data(), k + 1);
  if (slope)
    lagrange_basis_derivative(first(nodes, k + 1), t_eval, out);
  else
    lagrange_basis(first(nodes, k + 1), t_eval, out);
  for (std::size_t m = 0; m <= k; ++m) row[back + k - m] = slope ? h * basis[m] : basis[m];
}

// C0 / C1 (seed 001 Eq. 12a/12b with D-6): Φ_N, Φ_{N+1} (and H·Φ̇_N, H·Φ̇_{N+1}) as weights, then
// the node values of the linear (C0) or cubic Hermite (C1) polynomial at θ = …, −1, 0, 1.
void continuous_stencil(bool c1, int k, std::span<const double> tb, double t_next, Stencil& s) {
  const std::size_t kk = static_cast<std::size_t>(k);
  const double h = t_next - tb[0];
  std::array<double, Stencil::kMaxPoints> phi_n{}, phi_n1{}, dphi_n{}, dphi_n1{};
  extrapolation_weights(tb, 0, kk, t_next, false, h, phi_n1);
  extrapolation_weights(tb, 1, kk, tb[0], false, h, phi_n);
  if (c1) {
    extrapolation_weights(tb, 0, kk, t_next, true, h, dphi_n1);
    extrapolation_weights(tb, 1, kk, tb[0], true, h, dphi_n);
  }
  s.degree = c1 ? 3 : 1;
  s.points = k + 2;
  for (int m = 0; m <= s.degree; ++m) {
    const std::size_t mi = static_cast<std::size_t>(m);
    const double th = static_cast<double>(m - s.degree + 1);  // …, −1, 0, 1
    s.theta[mi] = th;
    s.time[mi] = m == s.degree ? t_next : (m == s.degree - 1 ? tb[0] : tb[0] + th * h);
    double g00 = 1.0 - th, g01 = th, g10 = 0.0, g11 = 0.0;  // C0 (Eq. 12a)
    if (c1) {                                               // Hermite basis (Eq. 12b)
      g00 = (1.0 - th) * (1.0 - th) * (1.0 + 2.0 * th);
      g01 = th * th * (3.0 - 2.0 * th);
      g10 = th * (1.0 - th) * (1.0 - th);
      g11 = -th * th * (1.0 - th);
    }
    for (std::size_t j = 0; j < Stencil::kMaxPoints; ++j) {
      s.w[mi][j] = g00 * phi_n[j] + g01 * phi_n1[j] + g10 * dphi_n[j] + g11 * dphi_n1[j];
    }
  }
}

// Const / Lin (seed 003 Eq. 2.10, 2.33–2.35): e_0 = Σ a_k u^{l−k} + b_k u̇^{l−k} H held on the step,
// or u^l + e_1 τ, whose end value u^l + e_1 H is 2·e_0 − u^l.
void combination_stencil(bool lin, const LinearCombination& wc, double t_next,
                         std::span<const double> tb, Stencil& s) {
  s.points = wc.points;
  s.uses_rates = wc.uses_rates();
  const std::size_t end = lin ? 1 : 0;
  s.degree = static_cast<int>(end);
  for (std::size_t j = 0; j < static_cast<std::size_t>(wc.points); ++j) {
    s.w[end][j] = lin ? 2.0 * wc.a[j] : wc.a[j];
    s.v[end][j] = lin ? 2.0 * wc.b[j] : wc.b[j];
  }
  if (lin) {
    s.w[1][0] -= 1.0;
    s.w[0][0] = 1.0;
    s.time[0] = tb[0];
  }
  s.time[end] = t_next;
}

}  // namespace

bool LinearCombination::uses_rates() const {
  return std::any_of(b.begin(), b.end(), [](double x) { return x != 0.0; });
}

LinearCombination family_r3(double p) {
  return combination({-(6.0 * p - 2.0) / 3.0, (6.0 * p + 1.0) / 3.0}, {(6.0 * p + 5.0) / 6.0, p});
}

LinearCombination family_r2(double p1, double p2) {
  return combination({-(2.0 * p2 + 2.0 * p1 - 3.0) / 2.0, (2.0 * p2 + 2.0 * p1 - 1.0) / 2.0},
                     {p2, p1});
}

bool Approximation::uses_rates() const {
  return (kind == ApproximationKind::kConst || kind == ApproximationKind::kLin) &&
         weights.uses_rates();
}

std::string_view approximation_names() {
  return kNames;
}

Approximation parse_approximation(std::string_view name) {
  Approximation a;
  a.name = std::string(name);
  if (name == "lagrange") return a;
  if (name == "c0" || name == "c1") {
    a.kind = name == "c0" ? ApproximationKind::kC0 : ApproximationKind::kC1;
    return a;
  }
  const bool is_const = name.substr(0, 6) == "const-";
  const bool is_lin = name.substr(0, 4) == "lin-";
  if (is_const || is_lin) {
    a.kind = is_const ? ApproximationKind::kConst : ApproximationKind::kLin;
    const std::string_view set = name.substr(is_const ? 6 : 4);
    if (fixed_set(set, a.weights) || family_set(set, name, a.weights)) {
      // Lin 2,3,Opt and Lin 2,2,Opt have their own optima (Eq. 2.65, 2.68).
      if (is_lin && set == "2-3-opt") a.weights = family_r3(-0.20322);
      if (is_lin && set == "2-2-opt") a.weights = family_r2(-0.0069, 0.667);
      return a;
    }
  }
  throw std::invalid_argument("unknown approximation \"" + std::string(name) +
                              "\" (allowed: " + std::string(kNames) + ")");
}

Stencil make_stencil(const Approximation& approximation, int order,
                     std::span<const double> times_back, double t_next) {
  if (times_back.empty()) throw std::invalid_argument("make_stencil: empty history");
  if (!(std::isfinite(t_next) && t_next > times_back[0])) {
    throw std::invalid_argument("make_stencil: T_{N+1} = " + to_string(t_next) +
                                " does not follow T_N = " + to_string(times_back[0]));
  }
  const bool continuous =
      approximation.kind == ApproximationKind::kC0 || approximation.kind == ApproximationKind::kC1;
  const int max_order = continuous ? 3 : SupportPoints::kMaxDegree - 1;
  if (order < 0 || order > max_order) {
    throw std::invalid_argument("approximation " + approximation.name + ": degree " +
                                to_string(order) + " outside 0.." + to_string(max_order));
  }
  const int n = static_cast<int>(std::min(times_back.size(), Stencil::kMaxPoints));
  Stencil s;
  s.theta.fill(0.0);
  const double h = t_next - times_back[0];
  const auto finish = [&] {
    for (int m = 0; m <= s.degree; ++m) {
      const std::size_t mi = static_cast<std::size_t>(m);
      s.theta[mi] = m == s.degree ? 1.0 : (s.time[mi] - times_back[0]) / h;
    }
    return s;
  };
  switch (approximation.kind) {
    case ApproximationKind::kLagrange:
      lagrange_stencil(std::min(order, n - 1), times_back, t_next, s);
      return finish();
    case ApproximationKind::kC0:
    case ApproximationKind::kC1:
      if (n < 2) {
        lagrange_stencil(0, times_back, t_next, s);
      } else {
        continuous_stencil(approximation.kind == ApproximationKind::kC1, std::min(order, n - 2),
                           times_back, t_next, s);
      }
      return finish();
    case ApproximationKind::kConst:
    case ApproximationKind::kLin: {
      const bool lin = approximation.kind == ApproximationKind::kLin;
      const LinearCombination& wc = approximation.weights;
      if (n >= wc.points) {
        combination_stencil(lin, wc, t_next, times_back, s);
      } else {  // D-9: K = 1
        const bool rates = lin && wc.uses_rates();
        combination_stencil(rates, rates ? combination({1.0}, {0.5}) : combination({1.0}, {}),
                            t_next, times_back, s);
      }
      return finish();
    }
  }
  throw std::invalid_argument("make_stencil: unknown approximation");
}

SupportPoints approximation_polynomial(const CouplingHistory& history, const CouplingHistory* rates,
                                       std::span<const Approximation* const> approximations,
                                       int order, double t_next,
                                       std::span<const std::size_t> channels) {
  const char* who = "approximation_polynomial";
  if (history.empty()) throw std::invalid_argument(std::string(who) + ": empty history");
  if (channels.size() > SupportPoints::kMaxChannels) {
    throw std::invalid_argument(std::string(who) + ": " + to_string(channels.size()) +
                                " input channels selected (allowed 0.." +
                                to_string(SupportPoints::kMaxChannels) + ")");
  }
  std::array<double, Stencil::kMaxPoints> tb{};
  const std::size_t n = std::min(history.size(), Stencil::kMaxPoints);
  for (std::size_t j = 0; j < n; ++j) tb[j] = history.time_back(j);
  const std::span<const double> times(tb.data(), n);
  std::array<Stencil, SupportPoints::kMaxChannels> st{};
  std::size_t widest = 0;
  for (std::size_t k = 0; k < channels.size(); ++k) {
    const std::size_t c = channels[k];
    if (c >= history.channels() || c >= approximations.size()) {
      throw std::invalid_argument(std::string(who) + ": channel " + to_string(c) +
                                  " beyond the coupling channels");
    }
    st[k] = make_stencil(*approximations[c], order, times, t_next);
    if (st[k].uses_rates && (rates == nullptr || rates->size() < n)) {
      throw std::invalid_argument(std::string(who) + ": " + approximations[c]->name +
                                  " needs the coupling variables' rates");
    }
    if (st[k].degree > st[widest].degree) widest = k;
  }
  SupportPoints sp{};
  sp.degree = st[widest].degree;
  sp.channels = static_cast<std::uint32_t>(channels.size());
  sp.step_begin = history.newest_time();
  for (std::size_t m = 0; m <= sp.end_node(); ++m) sp.time[m] = st[widest].time[m];
  const double h = t_next - history.newest_time();
  for (std::size_t k = 0; k < channels.size(); ++k) {
    const Stencil& s = st[k];
    const std::size_t c = channels[k];
    std::array<double, Stencil::kMaxNodes> own{};
    for (std::size_t m = 0; m <= static_cast<std::size_t>(s.degree); ++m) {
      double x = 0.0;
      for (std::size_t j = 0; j < static_cast<std::size_t>(s.points); ++j) {
        x += s.w[m][j] * history.values_back(j)[c];
        if (s.uses_rates) x += s.v[m][j] * h * rates->values_back(j)[c];
      }
      own[m] = x;
    }
    const std::size_t own_n = static_cast<std::size_t>(s.degree) + 1;
    for (std::size_t m = 0; m <= sp.end_node(); ++m) {
      sp.value[k][m] = s.degree == sp.degree
                           ? own[m]
                           : lagrange_value(std::span<const double>(s.time.data(), own_n),
                                            std::span<const double>(own.data(), own_n), sp.time[m]);
    }
  }
  return sp;
}

}  // namespace macrostep::polynomials

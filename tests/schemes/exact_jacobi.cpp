// Exact-integration explicit Jacobi (exact_jacobi.hpp; seed 000 App. C / METHODS §7.1, D-37).
#include "exact_jacobi.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <deque>
#include <functional>
#include <stdexcept>
#include <utility>

namespace macrostep::exact {
namespace {

// Index layout of the augmented state: chain [0, 2n), force generators (s, c) per harmonic
// force, then κ+1 polynomial states per coupling variable.
struct Layout {
  std::size_t n = 0;       // masses
  std::size_t forces = 0;  // harmonic forces
  std::size_t cuts = 0;    // coupling variables
  std::size_t degree = 0;  // κ
  std::size_t chain() const { return 2 * n; }
  std::size_t force(std::size_t f) const { return 2 * n + 2 * f; }
  std::size_t poly(std::size_t j) const { return 2 * n + 2 * forces + j * (degree + 1); }
  std::size_t size() const { return poly(cuts); }
};

void check_linear(const library::ChainParameters& chain) {
  for (const auto& e : chain.element) {
    if (e.C != 0.0 || e.D != 0.0) throw std::invalid_argument("exact: nonlinear element");
  }
  for (const auto& f : chain.forces) {
    if (!f.contact.empty() || !f.impulse.empty() || !f.modified_sine.empty()) {
      throw std::invalid_argument("exact: only harmonic forces");
    }
  }
}

// The generator matrix (times h) of the chain with elements `keep` only, its harmonic forces,
// and the cut elements `cuts` as polynomial inputs of degree layout.degree.
Matrix generator(const library::ChainParameters& chain, const std::vector<bool>& keep,
                 const std::vector<std::size_t>& cuts, const Layout& L, double h) {
  Matrix g(L.size(), L.size());
  const std::size_t n = chain.size();
  auto add_element = [&](std::size_t k, double sign_scale) {  // element k: mass k−1 | mass k
    const auto& e = chain.element[k];
    for (int side = 0; side < 2; ++side) {  // the body left (k−1) and right (k) of it
      if ((side == 0 && k == 0) || (side == 1 && k == n)) continue;
      const std::size_t body = side == 0 ? k - 1 : k;
      const double s = (side == 0 ? 1.0 : -1.0) * sign_scale / chain.mass[body];  // ±F on body
      if (k < n) {
        g(2 * body + 1, 2 * k) += s * e.c;
        g(2 * body + 1, 2 * k + 1) += s * e.d;
      }
      if (k > 0) {
        g(2 * body + 1, 2 * (k - 1)) -= s * e.c;
        g(2 * body + 1, 2 * (k - 1) + 1) -= s * e.d;
      }
    }
  };
  for (std::size_t i = 0; i < n; ++i) g(2 * i, 2 * i + 1) = 1.0;
  for (std::size_t k = 0; k <= n; ++k) {
    if (keep[k]) add_element(k, 1.0);
  }
  std::size_t f = 0;
  for (std::size_t i = 0; i < n; ++i) {
    for (const auto& hf : chain.forces[i].harmonic) {
      const std::size_t s = L.force(f++);
      g(2 * i + 1, s) += hf.amplitude / chain.mass[i];
      g(s, s + 1) = hf.omega;
      g(s + 1, s) = -hf.omega;
    }
  }
  for (std::size_t j = 0; j < cuts.size(); ++j) {
    const std::size_t k = cuts[j], q = L.poly(j);
    g(2 * (k - 1) + 1, q) += 1.0 / chain.mass[k - 1];
    g(2 * k + 1, q) -= 1.0 / chain.mass[k];
    for (std::size_t i = 0; i < L.degree; ++i) g(q + i, q + i + 1) = 1.0;
  }
  g = h * g;
  return g;
}

void set_forces(const library::ChainParameters& chain, const Layout& L, double t,
                std::vector<double>& w) {
  std::size_t f = 0;
  for (std::size_t i = 0; i < chain.size(); ++i) {
    for (const auto& hf : chain.forces[i].harmonic) {
      const std::size_t s = L.force(f++);
      w[s] = std::sin(hf.omega * t + hf.phase);
      w[s + 1] = std::cos(hf.omega * t + hf.phase);
    }
  }
}

std::vector<double> multiply(const Matrix& e, const std::vector<double>& w) {
  std::vector<double> r(e.rows(), 0.0);
  for (std::size_t i = 0; i < e.rows(); ++i) {
    double s = 0.0;
    for (std::size_t j = 0; j < e.rows(); ++j) s += e(i, j) * w[j];
    r[i] = s;
  }
  return r;
}

// Derivatives q_i = p^(i)(T_N), i = 0..degree, of the Lagrange polynomial through the k + 1
// newest points (times t, values v; k = min(kappa, points − 1)), in s = (t − T_N)/h for
// conditioning.
std::vector<double> polynomial_derivatives(const std::vector<double>& t,
                                           const std::vector<double>& v, int kappa,
                                           std::size_t degree, double h) {
  const std::size_t k = std::min(static_cast<std::size_t>(kappa), t.size() - 1);
  const double t_n = t.back();
  Matrix m(k + 1, k + 1), rhs(k + 1, 1);
  for (std::size_t j = 0; j <= k; ++j) {  // p(s) = Σ b_i s^i at s_j = (T_{N−j} − T_N)/h
    const double sj = (t[t.size() - 1 - j] - t_n) / h;
    double p = 1.0;
    for (std::size_t i = 0; i <= k; ++i) {
      m(j, i) = p;
      p *= sj;
    }
    rhs(j, 0) = v[v.size() - 1 - j];
  }
  const Matrix coefficients = analysis::solve(m, rhs);
  std::vector<double> q(degree + 1, 0.0);
  double fact = 1.0, hp = 1.0;
  for (std::size_t i = 0; i <= k; ++i) {
    if (i > 0) {
      fact *= static_cast<double>(i);
      hp *= h;
    }
    q[i] = fact * coefficients(i, 0) / hp;
  }
  return q;
}

// e^{h G} for the step sizes of a grid: one exponential per distinct h (equal within 1e-9
// relative: grid points carry rounding).
class Exponentials {
 public:
  explicit Exponentials(std::function<Matrix(double)> generator)
      : generator_(std::move(generator)) {}
  const Matrix& at(double h) {
    for (const auto& [hh, e] : cache_)
      if (std::abs(hh - h) <= 1e-9 * h) return e;
    cache_.emplace_back(h, expm(generator_(h)));
    return cache_.back().second;
  }

 private:
  std::function<Matrix(double)> generator_;
  std::deque<std::pair<double, Matrix>> cache_;
};

void check_grid(const std::vector<double>& times) {
  if (times.size() < 2) throw std::invalid_argument("exact: a grid needs two points");
  for (std::size_t n = 0; n + 1 < times.size(); ++n)
    if (!(times[n + 1] > times[n])) throw std::invalid_argument("exact: grid not increasing");
}

double cut_force(const library::ChainParameters& chain, std::size_t k,
                 const std::vector<double>& z) {
  const auto& e = chain.element[k];
  return e.c * (z[2 * k] - z[2 * (k - 1)]) + e.d * (z[2 * k + 1] - z[2 * (k - 1) + 1]);
}

std::size_t harmonic_count(const library::ChainParameters& chain) {
  std::size_t f = 0;
  for (const auto& m : chain.forces) f += m.harmonic.size();
  return f;
}

std::vector<double> initial_chain(const library::ChainParameters& chain) {
  std::vector<double> z(2 * chain.size());
  for (std::size_t i = 0; i < chain.size(); ++i) {
    z[2 * i] = chain.x0[i];
    z[2 * i + 1] = chain.v0[i];
  }
  return z;
}

}  // namespace

std::vector<double> uniform(double h, std::size_t steps) {
  std::vector<double> t(steps + 1);
  for (std::size_t n = 0; n <= steps; ++n) t[n] = static_cast<double>(n) * h;
  return t;
}

Trajectory exact_monolithic(const library::ChainParameters& chain, double h, std::size_t steps) {
  return exact_monolithic(chain, uniform(h, steps));
}

Trajectory exact_monolithic(const library::ChainParameters& chain,
                            const std::vector<double>& times) {
  check_linear(chain);
  check_grid(times);
  const Layout L{chain.size(), harmonic_count(chain), 0, 0};
  Exponentials e([&](double h) {
    return generator(chain, std::vector<bool>(chain.size() + 1, true), {}, L, h);
  });
  Trajectory out{initial_chain(chain)};
  std::vector<double> w(L.size(), 0.0);
  for (std::size_t step = 0; step + 1 < times.size(); ++step) {
    std::copy(out.back().begin(), out.back().end(), w.begin());
    set_forces(chain, L, times[step], w);
    const auto next = multiply(e.at(times[step + 1] - times[step]), w);
    out.emplace_back(next.begin(), next.begin() + static_cast<std::ptrdiff_t>(L.chain()));
  }
  return out;
}

Trajectory exact_jacobi(const library::ChainParameters& chain,
                        const std::vector<std::size_t>& boundaries, double h, int kappa,
                        std::size_t steps) {
  Grid grid{uniform(h, steps), std::vector<int>(steps, kappa)};
  return exact_jacobi(chain, boundaries, grid);
}

Trajectory exact_jacobi(const library::ChainParameters& chain,
                        const std::vector<std::size_t>& boundaries, const Grid& grid) {
  check_linear(chain);
  check_grid(grid.times);
  if (grid.kappa.size() + 1 != grid.times.size()) {
    throw std::invalid_argument("exact: one degree per step");
  }
  const int max_kappa = *std::max_element(grid.kappa.begin(), grid.kappa.end());
  if (*std::min_element(grid.kappa.begin(), grid.kappa.end()) < 0 || max_kappa > 5) {
    throw std::invalid_argument("exact: kappa out of 0..5");
  }
  if (boundaries.size() < 2 || boundaries.front() != 0 || boundaries.back() != chain.size()) {
    throw std::invalid_argument("exact: partition boundaries");
  }
  // Element index of every cut: element b joins masses b−1 and b.
  const std::vector<std::size_t> cuts(boundaries.begin() + 1, boundaries.end() - 1);
  std::vector<bool> keep(chain.size() + 1, true);
  for (const std::size_t k : cuts) keep[k] = false;
  const Layout L{chain.size(), harmonic_count(chain), cuts.size(),
                 static_cast<std::size_t>(max_kappa)};
  Exponentials e([&](double h) { return generator(chain, keep, cuts, L, h); });
  Trajectory out{initial_chain(chain)};
  std::vector<std::vector<double>> lambda(cuts.size());  // λ_j history, one value per T_N
  for (std::size_t j = 0; j < cuts.size(); ++j)
    lambda[j].push_back(cut_force(chain, cuts[j], out[0]));
  std::vector<double> w(L.size(), 0.0), t_hist{grid.times[0]};
  for (std::size_t step = 0; step + 1 < grid.times.size(); ++step) {
    const double h = grid.times[step + 1] - grid.times[step];
    std::copy(out.back().begin(), out.back().end(), w.begin());
    set_forces(chain, L, grid.times[step], w);
    for (std::size_t j = 0; j < cuts.size(); ++j) {
      const auto q = polynomial_derivatives(t_hist, lambda[j], grid.kappa[step], L.degree, h);
      std::copy(q.begin(), q.end(), w.begin() + static_cast<std::ptrdiff_t>(L.poly(j)));
    }
    const auto next = multiply(e.at(h), w);
    out.emplace_back(next.begin(), next.begin() + static_cast<std::ptrdiff_t>(L.chain()));
    t_hist.push_back(grid.times[step + 1]);
    for (std::size_t j = 0; j < cuts.size(); ++j) {
      lambda[j].push_back(cut_force(chain, cuts[j], out.back()));
    }
  }
  return out;
}

}  // namespace macrostep::exact

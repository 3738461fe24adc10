// IQN-ILS quasi-Newton corrector (secant_history.hpp).
#include "macrostep/corrector/secant_history.hpp"

#include <cmath>
#include <stdexcept>

namespace macrostep::corrector {

SecantHistory::SecantHistory(std::size_t size, std::size_t max_columns, std::size_t reuse_attempts)
    : n_(size), max_columns_(max_columns), reuse_attempts_(reuse_attempts) {
  if (max_columns == 0) throw std::invalid_argument("SecantHistory: max_columns must be >= 1");
}

void SecantHistory::begin_attempt() {
  ++attempt_;
  has_previous_ = false;
  while (!columns_.empty() && attempt_ - columns_.back().attempt > reuse_attempts_) {
    columns_.pop_back();
  }
}

void SecantHistory::clear() {
  columns_.clear();
  has_previous_ = false;
}

void SecantHistory::add(std::span<const double> r, std::span<const double> x_tilde) {
  if (r.size() != n_ || x_tilde.size() != n_) throw std::invalid_argument("SecantHistory: size");
  if (has_previous_) {
    Column c{std::vector<double>(n_), std::vector<double>(n_), attempt_};
    double norm = 0.0;
    for (std::size_t k = 0; k < n_; ++k) {
      c.dr[k] = r[k] - r_[k];
      c.dx[k] = x_tilde[k] - x_[k];
      norm += c.dr[k] * c.dr[k];
    }
    if (norm > 0.0 && std::isfinite(norm)) {
      columns_.push_front(std::move(c));
      if (columns_.size() > max_columns_) columns_.pop_back();
    }
  }
  r_.assign(r.begin(), r.end());
  x_.assign(x_tilde.begin(), x_tilde.end());
  has_previous_ = true;
}

bool SecantHistory::step(std::span<double> s_next) {
  if (!has_previous_ || columns_.empty()) return false;
  // Modified Gram-Schmidt on V (newest column first): V_used = Q R, then R α = −Qᵀ r.
  std::vector<std::size_t> used;
  q_.clear();
  std::vector<std::vector<double>> rmat;  // upper triangle, row i: R[i][*]
  for (std::size_t c = 0; c < columns_.size() && used.size() < n_; ++c) {
    std::vector<double> v = columns_[c].dr;
    const double original = std::sqrt([&] {
      double s = 0.0;
      for (double x : v) s += x * x;
      return s;
    }());
    rcol_.assign(q_.size() + 1, 0.0);
    for (std::size_t i = 0; i < q_.size(); ++i) {
      double dot = 0.0;
      for (std::size_t k = 0; k < n_; ++k) dot += q_[i][k] * v[k];
      rcol_[i] = dot;
      for (std::size_t k = 0; k < n_; ++k) v[k] -= dot * q_[i][k];
    }
    double norm = 0.0;
    for (double x : v) norm += x * x;
    norm = std::sqrt(norm);
    if (!(norm > 1e-10 * original)) continue;  // (nearly) dependent on newer columns: skip
    for (double& x : v) x /= norm;
    rcol_.back() = norm;
    q_.push_back(std::move(v));
    used.push_back(c);
    rmat.push_back(rcol_);  // column of R, stored by column
  }
  const std::size_t m = used.size();
  if (m == 0) return false;
  rhs_.assign(m, 0.0);
  for (std::size_t i = 0; i < m; ++i) {
    double dot = 0.0;
    for (std::size_t k = 0; k < n_; ++k) dot += q_[i][k] * r_[k];
    rhs_[i] = -dot;
  }
  // Back substitution with R stored by columns: R[i][j] = rmat[j][i] (i ≤ j).
  alpha_.assign(m, 0.0);
  for (std::size_t i = m; i-- > 0;) {
    double s = rhs_[i];
    for (std::size_t j = i + 1; j < m; ++j) s -= rmat[j][i] * alpha_[j];
    alpha_[i] = s / rmat[i][i];
  }
  for (std::size_t k = 0; k < n_; ++k) {
    double s = x_[k];
    for (std::size_t j = 0; j < m; ++j) s += columns_[used[j]].dx[k] * alpha_[j];
    s_next[k] = s;
  }
  return true;
}

}  // namespace macrostep::corrector

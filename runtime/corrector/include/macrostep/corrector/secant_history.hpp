// A quasi-Newton corrector in the spirit of preCICE's IQN-ILS (Degroote et al. 2009; beyond the
// seeds): the inverse interface Jacobian is never formed; it is replaced by the secant
// information of earlier corrector iterates of the fixed-point map s ↦ x̃ = φ(y(s)) with the
// residual r = x̃ − s (= −g of METHODS §4.1):
//
//   V = [Δr_1 … Δr_m],  W = [Δx̃_1 … Δx̃_m]   (differences of consecutive iterates of one attempt)
//   α = argmin ‖V α + r‖₂,   s_next = x̃ + W α
//
// Columns are kept across macro steps (the last `reuse_attempts` attempts, newest first, at most
// `max_columns`), so that after a first step with a finite-difference Jacobian no perturbed runs
// are needed. The least-squares problem is solved by modified Gram-Schmidt on the columns newest
// first; a column that is (nearly) a combination of newer ones is skipped. Everything runs in a
// fixed order (contract 1).
//
// Call order: begin_attempt() at the start of every attempt; after every pass add(r, x̃); then
// step() for the next iterate. clear() forgets everything (after a corrector failure).
#pragma once

#include <cstddef>
#include <deque>
#include <span>
#include <vector>

namespace macrostep::corrector {

class SecantHistory {
 public:
  SecantHistory(std::size_t size, std::size_t max_columns, std::size_t reuse_attempts);

  void begin_attempt();
  // The residual r = x̃ − s and the image x̃ of the pass just run.
  void add(std::span<const double> r, std::span<const double> x_tilde);
  // s_next = x̃ + W α for the last add(); false if no usable column exists (then s_next is
  // untouched).
  bool step(std::span<double> s_next);
  void clear();
  std::size_t columns() const { return columns_.size(); }

 private:
  struct Column {
    std::vector<double> dr, dx;
    std::size_t attempt;
  };
  std::size_t n_, max_columns_, reuse_attempts_;
  std::size_t attempt_ = 0;
  bool has_previous_ = false;
  std::vector<double> r_, x_;   // of the last add()
  std::deque<Column> columns_;  // newest first
  std::vector<std::vector<double>> q_;
  std::vector<double> rhs_, alpha_, rcol_;
};

}  // namespace macrostep::corrector

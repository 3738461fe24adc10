// The oscillator chain segment (spec/MODELS.md §1.1, §1.5; seed 000 Eq. 2.15-2.20).
//
// residual() and jacobian() are the hot path: one sweep over the bodies, every element law
// evaluated once (its force is shared by its two bodies), no allocation, no virtual or indirect
// calls per body, and unforced bodies skipped by comparing against the next entry of forced_.
#include "macrostep/library/chain.hpp"

#include <algorithm>
#include <cassert>
#include <limits>
#include <stdexcept>
#include <string>

namespace macrostep::library {
namespace {

constexpr std::size_t kNoBody = std::numeric_limits<std::size_t>::max();

// Calls sink(k, f_k) for every local body k in order, where f_k = -F_SD,k + F_SD,k+1 + F_EXT,k
// is the net force on the body (seed 000 Eq. 2.15/2.16). Element k (local) is left of body k;
// walls are at x = v = 0; a cut end uses its input instead of the element force.
template <class Sink>
inline void sweep_body_forces(std::size_t m, const ElementLaw* element, const MassForces* forces,
                              const std::size_t* forced, bool has_left, bool has_right, double t,
                              const double* z, const double* u, Sink&& sink) {
  double f_prev = has_left ? u[0] : element[0].force(z[0] - 0.0, z[1] - 0.0);
  const std::size_t* next_forced = forced;
  const std::size_t last = m - 1;
  for (std::size_t k = 0; k < last; ++k) {
    const double* zk = z + 2 * k;
    const double f_next = element[k + 1].force(zk[2] - zk[0], zk[3] - zk[1]);
    double f = -f_prev + f_next;
    if (k == *next_forced) {
      f += forces[k].force(t, zk[0]);
      ++next_forced;
    }
    sink(k, f);
    f_prev = f_next;
  }
  const double* zl = z + 2 * last;
  const double f_next =
      has_right ? u[has_left ? 1 : 0] : element[m].force(0.0 - zl[0], 0.0 - zl[1]);
  double f = -f_prev + f_next;
  if (last == *next_forced) f += forces[last].force(t, zl[0]);
  sink(last, f);
}

}  // namespace

ChainSegment::ChainSegment(const ChainParameters& params, std::size_t first, std::size_t last)
    : first_(first), last_(last), has_left_(first > 0), has_right_(false) {
  const std::size_t n = params.size();
  if (!(first < last && last <= n)) {
    throw std::invalid_argument(
        "ChainSegment: need 0 <= first < last <= masses, got first = " + std::to_string(first) +
        ", last = " + std::to_string(last) + ", masses = " + std::to_string(n));
  }
  if (params.element.size() != n + 1 || params.forces.size() != n || params.x0.size() != n ||
      params.v0.size() != n) {
    throw std::invalid_argument(
        "ChainSegment: inconsistent ChainParameters (need element.size() == masses + 1 and "
        "forces, x0, v0 of size masses)");
  }
  has_right_ = last < n;
  const auto f = static_cast<std::ptrdiff_t>(first);
  const auto l = static_cast<std::ptrdiff_t>(last);
  mass_.assign(params.mass.begin() + f, params.mass.begin() + l);
  element_.assign(params.element.begin() + f, params.element.begin() + l + 1);
  forces_.assign(params.forces.begin() + f, params.forces.begin() + l);
  x0_.assign(params.x0.begin() + f, params.x0.begin() + l);
  v0_.assign(params.v0.begin() + f, params.v0.begin() + l);

  const std::size_t m = masses();
  for (std::size_t k = 0; k < m; ++k) {
    if (!forces_[k].empty()) forced_.push_back(k);
  }
  forced_.push_back(kNoBody);

  roles_.resize(2 * m);
  for (std::size_t k = 0; k < m; ++k) {
    roles_[2 * k] = model::StateRole::kPosition;
    roles_[2 * k + 1] = model::StateRole::kVelocity;
  }

  // Columns x_j and v_j have the same rows: F_v,j-1 (if j > 0), F_x,j, F_v,j, F_v,j+1 (if
  // j < m-1), i.e. rows 2j-1, 2j, 2j+1, 2j+3. Structural entries do not depend on values.
  pattern_.n = 2 * m;
  pattern_.column_start.assign(1, 0);
  pattern_.row_index.reserve(8 * m);
  for (std::size_t j = 0; j < m; ++j) {
    const auto r = static_cast<std::int64_t>(2 * j);
    for (int col = 0; col < 2; ++col) {
      if (j > 0) pattern_.row_index.push_back(r - 1);
      pattern_.row_index.push_back(r);
      pattern_.row_index.push_back(r + 1);
      if (j + 1 < m) pattern_.row_index.push_back(r + 3);
      pattern_.column_start.push_back(static_cast<std::int64_t>(pattern_.row_index.size()));
    }
  }
}

std::size_t ChainSegment::input_size() const {
  return (has_left_ ? 1u : 0u) + (has_right_ ? 1u : 0u);
}

std::string ChainSegment::state_name(std::size_t i) const {
  if (i >= state_size()) throw std::out_of_range("ChainSegment::state_name: index out of range");
  return (i % 2 == 0 ? "x_" : "v_") + std::to_string(first_ + i / 2 + 1);
}

std::string ChainSegment::output_name(std::size_t i) const {
  switch (i) {
    case 0:
      return "x_" + std::to_string(first_ + 1);
    case 1:
      return "x_" + std::to_string(last_);
    case 2:
      return "v_" + std::to_string(first_ + 1);
    case 3:
      return "v_" + std::to_string(last_);
    default:
      throw std::out_of_range("ChainSegment::output_name: index out of range");
  }
}

std::string ChainSegment::output_unit(std::size_t i) const {
  if (i >= output_size()) throw std::out_of_range("ChainSegment::output_unit: index out of range");
  return i < 2 ? "m" : "m/s";
}

std::string ChainSegment::state_unit(std::size_t i) const {
  if (i >= state_size()) throw std::out_of_range("ChainSegment::state_unit: index out of range");
  return i % 2 == 0 ? "m" : "m/s";
}

std::string ChainSegment::state_description(std::size_t i) const {
  if (i >= state_size()) throw std::out_of_range("ChainSegment::state_description: out of range");
  return (i % 2 == 0 ? "position of mass " : "velocity of mass ") +
         std::to_string(first_ + i / 2 + 1);
}

std::string ChainSegment::output_description(std::size_t i) const {
  if (i >= output_size()) throw std::out_of_range("ChainSegment::output_description: out of range");
  const std::size_t mass = i % 2 == 0 ? first_ : last_ - 1;  // 0-based
  return state_description(2 * (mass - first_) + (i < 2 ? 0 : 1));
}

std::string ChainSegment::input_name(std::size_t i) const {
  if (i >= input_size()) throw std::out_of_range("ChainSegment::input_name: index out of range");
  // Left cut element: global 0-based element first_ (1-based first_+1); right: last_ (last_+1).
  const bool left = has_left_ && i == 0;
  return "lambda@" + std::to_string((left ? first_ : last_) + 1);
}

bool ChainSegment::input_is_effort(std::size_t i) const {
  // λ at a cut element: a force on the segment's end body.
  return i < input_size();
}

void ChainSegment::body_forces(double t, std::span<const double> z, std::span<const double> u,
                               std::span<double> f) const {
  assert(z.size() == state_size() && u.size() >= input_size() && f.size() == masses());
  double* out = f.data();
  sweep_body_forces(masses(), element_.data(), forces_.data(), forced_.data(), has_left_,
                    has_right_, t, z.data(), u.data(),
                    [out](std::size_t k, double fk) { out[k] = fk; });
}

void ChainSegment::initial_state(std::span<const double> u0, std::span<double> z0,
                                 std::span<double> zp0) const {
  assert(z0.size() == state_size() && zp0.size() == state_size());
  const std::size_t m = masses();
  for (std::size_t k = 0; k < m; ++k) {
    z0[2 * k] = x0_[k];
    z0[2 * k + 1] = v0_[k];
  }
  const double* mass = mass_.data();
  double* zp = zp0.data();
  const double* z = z0.data();
  sweep_body_forces(m, element_.data(), forces_.data(), forced_.data(), has_left_, has_right_,
                    initial_time(), z, u0.data(), [mass, zp, z](std::size_t k, double fk) {
                      zp[2 * k] = z[2 * k + 1];
                      zp[2 * k + 1] = fk / mass[k];
                    });
}

void ChainSegment::residual(double t, std::span<const double> z, std::span<const double> zp,
                            std::span<const double> u, std::span<double> r) const {
  assert(z.size() == state_size() && zp.size() == state_size() && r.size() == state_size() &&
         u.size() >= input_size());
  const double* mass = mass_.data();
  const double* zd = z.data();
  const double* zpd = zp.data();
  double* rd = r.data();
  sweep_body_forces(masses(), element_.data(), forces_.data(), forced_.data(), has_left_,
                    has_right_, t, zd, u.data(), [=](std::size_t k, double fk) {
                      rd[2 * k] = zpd[2 * k] - zd[2 * k + 1];
                      rd[2 * k + 1] = mass[k] * zpd[2 * k + 1] - fk;
                    });
}

void ChainSegment::jacobian(double t, std::span<const double> z, std::span<const double> /*zp*/,
                            std::span<const double> /*u*/, double cj,
                            std::span<double> values) const {
  assert(z.size() == state_size() && values.size() == pattern_.nonzeros());
  const std::size_t m = masses();
  const double* zd = z.data();
  const ElementLaw* element = element_.data();
  double* p = values.data();
  // Stiffness and damping of the element left of body j (zero where an input replaces it).
  double k_prev = 0.0, d_prev = 0.0;
  if (!has_left_) {
    k_prev = element[0].stiffness(zd[0] - 0.0);
    d_prev = element[0].damping(zd[1] - 0.0);
  }
  const std::size_t* next_forced = forced_.data();
  for (std::size_t j = 0; j < m; ++j) {
    const double* zj = zd + 2 * j;
    const bool interior_right = j + 1 < m;
    double k_next = 0.0, d_next = 0.0;
    if (interior_right) {
      k_next = element[j + 1].stiffness(zj[2] - zj[0]);
      d_next = element[j + 1].damping(zj[3] - zj[1]);
    } else if (!has_right_) {
      k_next = element[m].stiffness(0.0 - zj[0]);
      d_next = element[m].damping(0.0 - zj[1]);
    }
    double dfext = 0.0;
    if (j == *next_forced) {
      dfext = forces_[j].dforce_dx(t, zj[0]);
      ++next_forced;
    }
    // Column x_j: rows F_v,j-1 | F_x,j | F_v,j | F_v,j+1.
    if (j > 0) *p++ = -k_prev;
    *p++ = cj;
    *p++ = k_prev + k_next - dfext;
    if (interior_right) *p++ = -k_next;
    // Column v_j.
    if (j > 0) *p++ = -d_prev;
    *p++ = -1.0;
    *p++ = cj * mass_[j] + d_prev + d_next;
    if (interior_right) *p++ = -d_next;
    k_prev = k_next;
    d_prev = d_next;
  }
  assert(p == values.data() + values.size());
}

void ChainSegment::outputs(double /*t*/, std::span<const double> z, std::span<const double> /*u*/,
                           std::span<double> y) const {
  assert(z.size() == state_size() && y.size() == 4);
  const std::size_t l = 2 * (masses() - 1);
  y[0] = z[0];
  y[1] = z[l];
  y[2] = z[1];
  y[3] = z[l + 1];
}

bool ChainSegment::input_acceleration(std::span<double> accel,
                                      std::span<model::StateRole> roles) const {
  const std::size_t n_in = input_size();
  if (accel.size() != 4 * n_in || roles.size() != 4) {
    throw std::invalid_argument("ChainSegment::input_acceleration: wrong sizes");
  }
  std::fill(accel.begin(), accel.end(), 0.0);
  // Outputs [x_first, x_last, v_first, v_last]; with one mass first and last are one body.
  roles[0] = roles[1] = model::StateRole::kPosition;
  roles[2] = roles[3] = model::StateRole::kVelocity;
  if (has_left_) {
    const double a = -1.0 / mass_.front();
    accel[0 * n_in + 0] = a;
    accel[2 * n_in + 0] = a;
    if (masses() == 1) accel[1 * n_in + 0] = accel[3 * n_in + 0] = a;
  }
  if (has_right_) {
    const std::size_t k = has_left_ ? 1 : 0;
    const double a = 1.0 / mass_.back();
    accel[1 * n_in + k] = a;
    accel[3 * n_in + k] = a;
    if (masses() == 1) accel[0 * n_in + k] = accel[2 * n_in + k] = a;
  }
  return true;
}

model::EntryPattern ChainSegment::output_jacobian_pattern() const {
  const std::size_t last = 2 * (masses() - 1);
  return {{0, 1, 2, 3}, {0, last, 1, last + 1}};  // y = [x_first, x_last, v_first, v_last]
}

void ChainSegment::output_jacobian(double /*t*/, std::span<const double> /*z*/,
                                   std::span<const double> /*u*/, std::span<double> values) const {
  assert(values.size() == 4);
  std::fill(values.begin(), values.end(), 1.0);
}

model::EntryPattern ChainSegment::input_jacobian_pattern() const {
  // F_v,first = m v' − (−λ_left + ...), F_v,last = m v' − (... + λ_right) (Eq. 2.16).
  model::EntryPattern pattern;
  std::size_t input = 0;
  if (has_left_) {
    pattern.row.push_back(1);
    pattern.column.push_back(input++);
  }
  if (has_right_) {
    pattern.row.push_back(2 * masses() - 1);
    pattern.column.push_back(input);
  }
  return pattern;
}

void ChainSegment::input_jacobian(double /*t*/, std::span<const double> /*z*/,
                                  std::span<const double> /*zp*/, std::span<const double> /*u*/,
                                  std::span<double> values) const {
  assert(values.size() == input_size());
  std::size_t k = 0;
  if (has_left_) values[k++] = 1.0;
  if (has_right_) values[k] = -1.0;
}

std::vector<std::size_t> equal_partition(std::size_t n, std::size_t s) {
  if (s < 1 || s > n) {
    throw std::invalid_argument("equal_partition: need 1 <= subsystems <= masses, got " +
                                std::to_string(s) + " subsystems for " + std::to_string(n) +
                                " masses");
  }
  std::vector<std::size_t> b(s + 1, 0);
  const std::size_t base = n / s, extra = n % s;
  for (std::size_t l = 0; l < s; ++l) b[l + 1] = b[l] + base + (l < extra ? 1 : 0);
  return b;
}

std::vector<std::size_t> sized_partition(std::size_t n, const std::vector<std::size_t>& sizes) {
  if (sizes.empty()) throw std::invalid_argument("sized_partition: sizes is empty");
  std::vector<std::size_t> b(sizes.size() + 1, 0);
  for (std::size_t l = 0; l < sizes.size(); ++l) {
    if (sizes[l] == 0) {
      throw std::invalid_argument("sized_partition: sizes[" + std::to_string(l) +
                                  "] is zero (every subsystem needs at least one mass)");
    }
    b[l + 1] = b[l] + sizes[l];
  }
  if (b.back() != n) {
    throw std::invalid_argument("sized_partition: sizes sum to " + std::to_string(b.back()) +
                                ", expected " + std::to_string(n) + " masses");
  }
  return b;
}

}  // namespace macrostep::library

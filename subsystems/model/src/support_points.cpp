#include "macrostep/model/support_points.hpp"

#include <cassert>
#include <cmath>
#include <stdexcept>
#include <string>

namespace macrostep::model {

void SupportPoints::evaluate(double t, std::span<double> u) const noexcept {
  assert(u.size() == channels);
  assert(degree >= 0 && degree <= kMaxDegree);
  const std::size_t n = node_count();
  std::array<double, kMaxNodes> basis;
  for (std::size_t m = 0; m < n; ++m) {
    double b = 1.0;
    for (std::size_t k = 0; k < n; ++k) {
      if (k != m) b *= (t - time[k]) / (time[m] - time[k]);
    }
    basis[m] = b;
  }
  for (std::size_t c = 0; c < channels; ++c) {
    double p = 0.0;
    for (std::size_t m = 0; m < n; ++m) p += value[c][m] * basis[m];
    u[c] = p;
  }
}

double SupportPoints::end_basis(double t) const noexcept {
  const std::size_t e = end_node();
  double b = 1.0;
  for (std::size_t j = 0; j < e; ++j) b *= (t - time[j]) / (time[e] - time[j]);
  return b;
}

void SupportPoints::validate() const {
  if (degree < 0 || degree > kMaxDegree) {
    throw std::invalid_argument("SupportPoints: degree " + std::to_string(degree) + " outside 0.." +
                                std::to_string(kMaxDegree));
  }
  if (channels > kMaxChannels) {
    throw std::invalid_argument("SupportPoints: " + std::to_string(channels) +
                                " input channels (allowed 0.." + std::to_string(kMaxChannels) +
                                "; raise SupportPoints::kMaxChannels for wider subsystems)");
  }
  const std::size_t n = node_count();
  for (std::size_t m = 0; m < n; ++m) {
    if (!std::isfinite(time[m])) throw std::invalid_argument("SupportPoints: non-finite node time");
    if (m > 0 && !(time[m] > time[m - 1])) {
      throw std::invalid_argument("SupportPoints: node times not strictly increasing");
    }
    for (std::size_t c = 0; c < channels; ++c) {
      if (!std::isfinite(value[c][m])) {
        throw std::invalid_argument("SupportPoints: non-finite value in channel " +
                                    std::to_string(c));
      }
    }
  }
  const bool begin_ok = degree == 0 ? (std::isfinite(step_begin) && step_begin < time[0])
                                    : step_begin == time[static_cast<std::size_t>(degree) - 1];
  if (!begin_ok) {
    throw std::invalid_argument("SupportPoints: step_begin is not T_N (the newest old node)");
  }
}

SupportPointInput::SupportPointInput(const SupportPoints& points, std::size_t input_size)
    : points_(&points) {
  points.validate();
  if (points.channels != input_size) {
    throw std::invalid_argument("SupportPointInput: support points carry " +
                                std::to_string(points.channels) + " channels, subsystem has " +
                                std::to_string(input_size) + " inputs");
  }
}

}  // namespace macrostep::model

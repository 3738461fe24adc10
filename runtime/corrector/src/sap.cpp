// sap interface Jacobian (sap.hpp; METHODS.md §4.5, D-19, D-20; seed 000 App. A, Table A.1).
#include "macrostep/corrector/sap.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace macrostep::corrector {

namespace {

// Subsystem i's M⁻¹B and output roles into `accel` and `roles` (resized); false if its model
// cannot give them.
bool input_accelerations(const system::CoupledSystem& system, std::size_t i,
                         std::vector<double>& accel, std::vector<model::StateRole>& roles) {
  const auto& s = system.subsystem(i);
  accel.assign(s.output_size() * s.input_size(), 0.0);
  roles.assign(s.output_size(), model::StateRole::kOther);
  return s.input_acceleration(accel, roles);
}

}  // namespace

std::optional<std::size_t> subsystem_without_input_accelerations(
    const system::CoupledSystem& system) {
  std::vector<double> accel;
  std::vector<model::StateRole> roles;
  for (std::size_t i = 0; i < system.subsystem_count(); ++i) {
    if (!input_accelerations(system, i, accel, roles)) return i;
  }
  return std::nullopt;
}

SapSensitivities::SapSensitivities(const system::CoupledSystem& system) {
  for (std::size_t i = 0; i < system.subsystem_count(); ++i) {
    acceleration_.emplace_back();
    roles_.emplace_back();
    if (!input_accelerations(system, i, acceleration_.back(), roles_.back())) {
      // The run's settings refuse such a system first, naming the subsystem
      // (run/settings.cpp); this guards other callers.
      throw std::invalid_argument(
          fmt::format("the sap Jacobian needs every subsystem's input accelerations (M⁻¹B, "
                      "METHODS §4.5), and subsystem {} cannot give them; use the fd Jacobian",
                      i + 1));
    }
  }
}

void SapSensitivities::fill(const control::ErrorConstants& constants, double h,
                            InputSensitivities& dyds) const {
  for (std::size_t i = 0; i < roles_.size(); ++i) {
    const std::size_t n_in = dyds.inputs(i);
    for (std::size_t o = 0; o < roles_[i].size(); ++o) {
      const double scale = roles_[i][o] == model::StateRole::kPosition   ? constants.pos * h * h
                           : roles_[i][o] == model::StateRole::kVelocity ? constants.vel * h
                                                                         : 0.0;
      for (std::size_t k = 0; k < n_in; ++k) {
        dyds.at(i, o, k) = scale * acceleration_[i][o * n_in + k];
      }
    }
  }
}

}  // namespace macrostep::corrector

// The kinematic half of displacement coupling as a coupling law (METHODS.md §1.2; seed 000
// Eq. 2.6/2.8; seed 001): the master hands one body's position and velocity to a subsystem that
// holds the coupling element itself and is driven by them,
//   [x̃, ṽ] = φ(y) = [x, v].
// Displacement/displacement (Eq. 2.8) is two such laws, one per direction
// (u = [x̃2, ṽ2, x̃1, ṽ1], φ = [x2, v2, x1, v1]); the same law passes angle and speed for a
// rotational body. Neither side has feed-through, so the CoupledSystem takes it as it is.
//
// The force/displacement variant with feed-through (Eq. 2.7: the subsystem outputs the element
// force, which depends on its input x̃) is this law plus a SignalLaw from that force output
// (library::OscillatorMass, configs/two-mass-fd.toml); the master's consistent update (D-1,
// CoupledSystem::consistent_update) solves its coupling equations. Force/displacement without
// feed-through (Eq. 2.6) is this law plus a SpringDamperLaw.
#pragma once

#include <array>
#include <span>
#include <string>

#include "macrostep/system/coupling_law.hpp"

namespace macrostep::system {

class DisplacementLaw final : public CouplingLaw {
 public:
  // position_name, velocity_name: the two coupling variables it writes (result columns, e.g.
  // "x_tilde_2", "v_tilde_2"). Reads [x, v] in this order.
  DisplacementLaw(std::string position_name, std::string velocity_name, OutputRef position,
                  OutputRef velocity);

  std::span<const OutputRef> reads() const override { return reads_; }
  std::span<const std::string> variable_names() const override { return names_; }
  // u_out = [x, v], bit for bit.
  void evaluate(std::span<const double> y_read, std::span<double> u_out) const override;
  // The 2×2 identity.
  void jacobian(std::span<const double> y_read, std::span<double> dphi_dy) const override;
  bool has_feedthrough() const override { return false; }
  // The units of the position and the velocity it copies.
  std::vector<std::string> variable_units(std::span<const std::string> read_units) const override {
    return {read_units.size() > 0 ? read_units[0] : "", read_units.size() > 1 ? read_units[1] : ""};
  }
  std::vector<std::string> variable_descriptions() const override {
    return {"position handed to the displacement-driven body", "velocity handed to it"};
  }

 private:
  std::array<std::string, 2> names_;
  std::array<OutputRef, 2> reads_;
};

}  // namespace macrostep::system

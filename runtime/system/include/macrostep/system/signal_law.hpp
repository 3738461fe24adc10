// A signal connection as a coupling law (seed 003 §2.5.1, Fig. 2.20): the master feeds one
// subsystem output through to one input of another subsystem, scaled and shifted,
//   u = gain·y + offset,
// e.g. a measured speed into a controller, a controller command into an actuator (a negative
// gain flips a sign convention). Control couplings carry information one way; the law has no
// feed-through of its own (it reads outputs only).
#pragma once

#include <span>
#include <string>

#include "macrostep/system/coupling_law.hpp"
#include "macrostep/system/law_registry.hpp"

namespace macrostep::system {

// The parameters of the signal law (law_registry.hpp).
struct SignalParameters final : LawParameters {
  double gain = 1.0, offset = 0.0;
};

class SignalLaw final : public CouplingLaw {
 public:
  // name: the coupling variable it writes (the result column). Throws std::invalid_argument
  // for a gain or offset that is not finite.
  SignalLaw(std::string name, OutputRef source, double gain = 1.0, double offset = 0.0);

  std::span<const OutputRef> reads() const override { return {&source_, 1}; }
  std::span<const std::string> variable_names() const override {
    return std::span<const std::string>(&name_, 1);
  }
  // u_out[0] = gain·y_read[0] + offset.
  void evaluate(std::span<const double> y_read, std::span<double> u_out) const override;
  // [gain].
  void jacobian(std::span<const double> y_read, std::span<double> dphi_dy) const override;
  bool has_feedthrough() const override { return false; }
  // The source's unit (a gain that converts it to another quantity is not seen).
  std::vector<std::string> variable_units(std::span<const std::string> read_units) const override {
    return {read_units.empty() ? std::string() : read_units[0]};
  }
  // "signal: gain·y + offset of the source output".
  std::vector<std::string> variable_descriptions() const override;

  double gain() const { return gain_; }
  double offset() const { return offset_; }

 private:
  std::string name_;
  OutputRef source_;
  double gain_, offset_;
};

}  // namespace macrostep::system

// Seed 003 §2.5.1 (control couplings fed through by the master).
#include "macrostep/system/signal_law.hpp"

#include <cmath>
#include <stdexcept>
#include <utility>

namespace macrostep::system {

SignalLaw::SignalLaw(std::string name, OutputRef source, double gain, double offset)
    : name_(std::move(name)), source_(source), gain_(gain), offset_(offset) {
  if (!std::isfinite(gain_) || !std::isfinite(offset_)) {
    throw std::invalid_argument("SignalLaw " + name_ + ": gain and offset must be finite");
  }
}

void SignalLaw::evaluate(std::span<const double> y_read, std::span<double> u_out) const {
  if (y_read.size() != 1 || u_out.size() != 1) {
    throw std::invalid_argument("SignalLaw::evaluate: size mismatch");
  }
  u_out[0] = gain_ * y_read[0] + offset_;
}

void SignalLaw::jacobian(std::span<const double> y_read, std::span<double> dphi_dy) const {
  if (y_read.size() != 1 || dphi_dy.size() != 1) {
    throw std::invalid_argument("SignalLaw::jacobian: size mismatch");
  }
  dphi_dy[0] = gain_;
}

}  // namespace macrostep::system

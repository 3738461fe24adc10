// Seed 003 §2.5.1 (control couplings fed through by the master).
#include "macrostep/system/signal_law.hpp"

#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "builtin_laws.hpp"

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

std::vector<std::string> SignalLaw::variable_descriptions() const {
  if (gain_ == 1.0 && offset_ == 0.0) return {"signal: the source output"};
  return {fmt::format("signal: {}·(source output) + {}", gain_, offset_)};
}

void SignalLaw::jacobian(std::span<const double> y_read, std::span<double> dphi_dy) const {
  if (y_read.size() != 1 || dphi_dy.size() != 1) {
    throw std::invalid_argument("SignalLaw::jacobian: size mismatch");
  }
  dphi_dy[0] = gain_;
}

LawEntry detail::signal_entry() {
  LawEntry e;
  e.name = "signal";
  e.reads = 1;
  e.read_order = "[source]";
  e.writes = {{"", ""}};
  e.keys = {{"gain", "factor on the source (default 1)"},
            {"offset", "added after the gain (default 0)"}};
  e.parse = [](const LawTable& table, std::size_t) -> std::shared_ptr<const LawParameters> {
    auto p = std::make_shared<SignalParameters>();
    if (table.has("gain")) p->gain = table.number("gain");
    if (table.has("offset")) p->offset = table.number("offset");
    return p;
  };
  e.make = [](std::vector<std::string> names, std::span<const OutputRef> reads,
              const LawParameters& p) -> std::unique_ptr<CouplingLaw> {
    const auto& s = law_parameters<SignalParameters>(p, "signal");
    return std::make_unique<SignalLaw>(std::move(names[0]), reads[0], s.gain, s.offset);
  };
  return e;
}

}  // namespace macrostep::system

// METHODS.md §1.3 (cut element law, D-2), seed 000 Eq. 2.9, 2.20, 2.26.
#include "macrostep/system/spring_damper_law.hpp"

#include <stdexcept>
#include <string>
#include <utility>

namespace macrostep::system {

namespace {

// Positions in y_read of the four reads.
constexpr std::size_t kXLeft = 0, kVLeft = 1, kXRight = 2, kVRight = 3;

void check_sizes(bool match, const char* who) {
  if (!match)
    throw std::invalid_argument(std::string("SpringDamperLaw::") + who + ": size mismatch");
}

}  // namespace

SpringDamperLaw::SpringDamperLaw(std::string name, const library::ElementLaw& element,
                                 OutputRef x_left, OutputRef v_left, OutputRef x_right,
                                 OutputRef v_right)
    : name_(std::move(name)), element_(element), reads_{x_left, v_left, x_right, v_right} {}

void SpringDamperLaw::evaluate(std::span<const double> y_read, std::span<double> u_out) const {
  check_sizes(y_read.size() == 4 && u_out.size() == 1, "evaluate");
  // Exactly the operations of ElementLaw::force on Δ = right − left, as the monolithic model
  // evaluates the element (contract 1).
  const double dx = y_read[kXRight] - y_read[kXLeft];
  const double dv = y_read[kVRight] - y_read[kVLeft];
  u_out[0] = element_.force(dx, dv);
}

void SpringDamperLaw::rate(std::span<const double> y_read, std::span<double> u_dot) const {
  check_sizes(y_read.size() == 4 && u_dot.size() == 1 && has_rate(), "rate");
  u_dot[0] =
      element_.stiffness(y_read[kXRight] - y_read[kXLeft]) * (y_read[kVRight] - y_read[kVLeft]);
}

void SpringDamperLaw::jacobian(std::span<const double> y_read, std::span<double> dphi_dy) const {
  check_sizes(y_read.size() == 4 && dphi_dy.size() == 4, "jacobian");
  const double k = element_.stiffness(y_read[kXRight] - y_read[kXLeft]);
  const double d = element_.damping(y_read[kVRight] - y_read[kVLeft]);
  dphi_dy[kXLeft] = -k;
  dphi_dy[kVLeft] = -d;
  dphi_dy[kXRight] = k;
  dphi_dy[kVRight] = d;
}

}  // namespace macrostep::system

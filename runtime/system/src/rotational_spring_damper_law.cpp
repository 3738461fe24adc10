// Seed 003 §2.6 (rotational coupling element), seed 000 Eq. 2.9 / 2.26 (law shape, D-2).
#include "macrostep/system/rotational_spring_damper_law.hpp"

#include <stdexcept>
#include <string>
#include <utility>

namespace macrostep::system {

namespace {

// Positions in y_read of the four reads.
constexpr std::size_t kAngleLeft = 0, kSpeedLeft = 1, kAngleRight = 2, kSpeedRight = 3;

void check_sizes(bool match, const char* who) {
  if (!match) {
    throw std::invalid_argument(std::string("RotationalSpringDamperLaw::") + who +
                                ": size mismatch");
  }
}

}  // namespace

RotationalSpringDamperLaw::RotationalSpringDamperLaw(std::string name,
                                                     const library::ElementLaw& shaft,
                                                     OutputRef angle_left, OutputRef speed_left,
                                                     OutputRef angle_right, OutputRef speed_right)
    : name_(std::move(name)),
      shaft_(shaft),
      reads_{angle_left, speed_left, angle_right, speed_right} {}

void RotationalSpringDamperLaw::evaluate(std::span<const double> y_read,
                                         std::span<double> u_out) const {
  check_sizes(y_read.size() == 4 && u_out.size() == 1, "evaluate");
  const double twist = y_read[kAngleRight] - y_read[kAngleLeft];
  const double twist_rate = y_read[kSpeedRight] - y_read[kSpeedLeft];
  u_out[0] = shaft_.force(twist, twist_rate);
}

void RotationalSpringDamperLaw::jacobian(std::span<const double> y_read,
                                         std::span<double> dphi_dy) const {
  check_sizes(y_read.size() == 4 && dphi_dy.size() == 4, "jacobian");
  const double k = shaft_.stiffness(y_read[kAngleRight] - y_read[kAngleLeft]);
  const double d = shaft_.damping(y_read[kSpeedRight] - y_read[kSpeedLeft]);
  dphi_dy[kAngleLeft] = -k;
  dphi_dy[kSpeedLeft] = -d;
  dphi_dy[kAngleRight] = k;
  dphi_dy[kSpeedRight] = d;
}

}  // namespace macrostep::system

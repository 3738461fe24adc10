// METHODS.md §1.3 (cut element law, D-2), seed 000 Eq. 2.9, 2.20, 2.26.
#include "macrostep/system/spring_damper_law.hpp"

#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "builtin_laws.hpp"

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

ElementKeys read_element_keys(const LawTable& table) {
  ElementKeys e;
  for (auto [key, out] :
       {std::pair{"c", &e.c}, std::pair{"d", &e.d}, std::pair{"C", &e.C}, std::pair{"D", &e.D}}) {
    if (table.has(key)) *out = non_negative(table, key);
  }
  for (auto [key, out] : {std::pair{"ex", &e.ex}, std::pair{"ev", &e.ev}}) {
    if (!table.has(key)) continue;
    *out = table.number(key);
    if (!(**out >= 1.0)) table.fail(key, "must be >= 1 (got " + table.source_text(key) + ")");
  }
  return e;
}

library::ElementLaw read_element_law(const LawTable& table) {
  table.require("c");
  const ElementKeys keys = read_element_keys(table);
  library::ElementLaw e;
  e.c = *keys.c;
  e.d = keys.d.value_or(e.d);
  e.C = keys.C.value_or(e.C);
  e.D = keys.D.value_or(e.D);
  e.ex = keys.ex.value_or(e.ex);
  e.ev = keys.ev.value_or(e.ev);
  return e;
}

std::string detail::effort_unit(std::string_view position_unit) {
  if (position_unit == "m") return "N";
  if (position_unit == "rad") return "N m";
  return "";
}

std::vector<std::string> SpringDamperLaw::variable_units(
    std::span<const std::string> read_units) const {
  return {detail::effort_unit(read_units.empty() ? std::string_view() : read_units[0])};
}

std::vector<std::string> SpringDamperLaw::variable_descriptions() const {
  std::string law = fmt::format("c = {}, d = {}", element_.c, element_.d);
  if (element_.C != 0.0) law.append(fmt::format(", C = {} (exponent {})", element_.C, element_.ex));
  if (element_.D != 0.0) law.append(fmt::format(", D = {} (exponent {})", element_.D, element_.ev));
  return {
      fmt::format("spring-damper force or torque of Δ = right − left, {}; acts + on the left "
                  "body, − on the right",
                  law)};
}

namespace detail {

namespace {

// The two spring/damper laws differ only in their names and in the quantities they read.
LawEntry element_law_entry(std::string name, std::string read_order) {
  LawEntry e;
  e.name = std::move(name);
  e.reads = 4;
  e.read_order = std::move(read_order);
  e.writes = {{"", ""}};
  e.keys = {{"c", "linear stiffness c >= 0 (required)"},
            {"d", "linear damping d >= 0 (default 0)"},
            {"C", "nonlinear stiffness C >= 0 (default 0)"},
            {"D", "nonlinear damping D >= 0 (default 0)"},
            {"ex", "stiffness exponent e_x >= 1 (default 3)"},
            {"ev", "damping exponent e_v >= 1 (default 3)"}};
  e.parse = [](const LawTable& table, std::size_t) -> std::shared_ptr<const LawParameters> {
    return std::make_shared<const SpringDamperParameters>(read_element_law(table));
  };
  e.make = [law = e.name](std::vector<std::string> names, std::span<const OutputRef> reads,
                          const LawParameters& p) -> std::unique_ptr<CouplingLaw> {
    const auto& element = law_parameters<SpringDamperParameters>(p, law).element;
    return std::make_unique<SpringDamperLaw>(std::move(names[0]), element, reads[0], reads[1],
                                             reads[2], reads[3]);
  };
  return e;
}

}  // namespace

LawEntry spring_damper_entry() {
  return element_law_entry("spring_damper", "[x_left, v_left, x_right, v_right]");
}

LawEntry rotational_spring_damper_entry() {
  return element_law_entry("rotational_spring_damper",
                           "[angle_left, speed_left, angle_right, speed_right]");
}

}  // namespace detail

}  // namespace macrostep::system

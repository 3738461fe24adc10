// Seed 003 §2.4 (Eq. 2.86-2.96), MODELS.md F-HYD: the hydraulic volume node.
#include "macrostep/system/hydraulic_node_law.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <stdexcept>
#include <utility>

#include "builtin_laws.hpp"

namespace macrostep::system {

namespace {

constexpr double kRelativeTolerance = 1e-12;
constexpr int kMaxCorrections = 100;
// Guard of the Newton iteration: a step to p <= 0 becomes p/kGuardDivisor.
constexpr double kGuardDivisor = 10.0;

void check_modulus(const PressureDependentBulkModulus& e, const std::string& who) {
  if (!(e.a > 0.0) || !(e.b >= 0.0) || !(e.c < -1.0) || !std::isfinite(e.a) ||
      !std::isfinite(e.b)) {
    throw std::invalid_argument(who +
                                ": pressure-dependent bulk modulus needs a > 0, b >= 0 and "
                                "c < -1 (seed 003 Eq. 2.94 with kappa > 0)");
  }
}

void check_parameters(const HydraulicNodeLaw::Parameters& p, const std::string& who) {
  if (!(p.node_volume > 0.0) || !std::isfinite(p.node_volume)) {
    throw std::invalid_argument(who + ": node volume must be > 0");
  }
  if (!std::isfinite(p.initial_pressure)) {
    throw std::invalid_argument(who + ": initial pressure must be finite");
  }
  if (p.model == HydraulicNodeLaw::Model::kConstant) {
    if (!(p.constant_modulus > 0.0) || !std::isfinite(p.constant_modulus)) {
      throw std::invalid_argument(who + ": constant bulk modulus must be > 0");
    }
    return;
  }
  check_modulus(p.pressure_dependent, who);
  if (!(p.initial_pressure > 0.0)) {
    throw std::invalid_argument(who + ": a pressure-dependent bulk modulus needs p0 > 0");
  }
}

// A start for Newton computed from s alone (the law is a pure function of y, so it cannot start
// from the previous macro point as seed 003 does). g = g_lin + g_air with both terms increasing
// and zero at p0: g_lin(p) = (p − p0)/a, g_air(p) = b/(a(c+1))·(p^(c+1) − p0^(c+1)). For s ≥ 0
// both are ≥ 0 at the root, so each alone reaches s no earlier: the root is at most the smaller
// one-term inverse; for s < 0 it is at least the larger one. Both inverses are explicit.
double initial_guess(const PressureDependentBulkModulus& e, double p0, double s) {
  const double p_linear = p0 + e.a * s;
  if (e.b == 0.0) return p_linear;  // constant modulus a: exact
  const double cp1 = e.c + 1.0;
  const double inner = std::pow(p0, cp1) + s * e.a * cp1 / e.b;
  const double p_air =
      inner > 0.0 ? std::pow(inner, 1.0 / cp1) : std::numeric_limits<double>::infinity();
  return s >= 0.0 ? std::min(p_linear, p_air) : std::max(p_linear, p_air);
}

}  // namespace

PressureDependentBulkModulus PressureDependentBulkModulus::from_fluid(double airless_modulus,
                                                                      double air_fraction,
                                                                      double isentropic_exponent,
                                                                      double reference_pressure) {
  if (!(airless_modulus > 0.0) || !(air_fraction >= 0.0) || !(isentropic_exponent > 0.0) ||
      !(reference_pressure > 0.0)) {
    throw std::invalid_argument(
        "PressureDependentBulkModulus::from_fluid: need E > 0, nu >= 0, kappa > 0, p_ref > 0");
  }
  PressureDependentBulkModulus e;
  e.a = airless_modulus * (1.0 + air_fraction);
  e.b = airless_modulus * air_fraction * std::pow(reference_pressure, 1.0 / isentropic_exponent) /
        isentropic_exponent;
  e.c = -(1.0 + 1.0 / isentropic_exponent);
  return e;
}

double PressureDependentBulkModulus::modulus(double p) const {
  return a / (1.0 + b * std::pow(p, c));
}

double PressureDependentBulkModulus::compliance_integral(double p0, double p) const {
  const double cp1 = c + 1.0;
  return (p - p0 + b / cp1 * (std::pow(p, cp1) - std::pow(p0, cp1))) / a;
}

NodePressureSolution solve_node_pressure(const PressureDependentBulkModulus& modulus, double p0,
                                         double s, double p_start) {
  if (!std::isfinite(s) || !(p_start > 0.0) || !std::isfinite(p_start)) {
    throw std::invalid_argument("solve_node_pressure: need a finite s and a start > 0");
  }
  NodePressureSolution solution{p_start, 0};
  double& p = solution.pressure;
  for (;;) {
    // f(p) = g(p) − s, f'(p) = 1/E(p) (Eq. 2.96a/b).
    const double correction = -(modulus.compliance_integral(p0, p) - s) * modulus.modulus(p);
    if (std::fabs(correction) <= kRelativeTolerance * p) {
      p += correction;
      return solution;
    }
    if (solution.iterations == kMaxCorrections) {
      throw std::runtime_error("solve_node_pressure: Newton did not converge in 100 corrections");
    }
    const double next = p + correction;
    p = next > 0.0 ? next : p / kGuardDivisor;
    ++solution.iterations;
  }
}

HydraulicNodeLaw::HydraulicNodeLaw(std::string name, const Parameters& parameters,
                                   std::vector<OutputRef> volumes,
                                   std::vector<double> initial_volumes)
    : name_(std::move(name)),
      parameters_(parameters),
      volumes_(std::move(volumes)),
      initial_volumes_(std::move(initial_volumes)) {
  const std::string who = "HydraulicNodeLaw " + name_;
  check_parameters(parameters_, who);
  if (volumes_.empty()) throw std::invalid_argument(who + ": reads no volumes");
  if (initial_volumes_.empty()) initial_volumes_.assign(volumes_.size(), 0.0);
  if (initial_volumes_.size() != volumes_.size()) {
    throw std::invalid_argument(who + ": one initial volume per volume read required");
  }
}

double HydraulicNodeLaw::modulus(double p) const {
  return parameters_.model == Model::kConstant ? parameters_.constant_modulus
                                               : parameters_.pressure_dependent.modulus(p);
}

double HydraulicNodeLaw::relative_volume(std::span<const double> volumes) const {
  if (volumes.size() != volumes_.size()) {
    throw std::invalid_argument("HydraulicNodeLaw::relative_volume: size mismatch");
  }
  double sum = 0.0;
  for (std::size_t i = 0; i < volumes.size(); ++i) sum += volumes[i] - initial_volumes_[i];
  return sum / parameters_.node_volume;
}

NodePressureSolution HydraulicNodeLaw::pressure(double s) const {
  const double p0 = parameters_.initial_pressure;
  if (!std::isfinite(s)) return {std::numeric_limits<double>::quiet_NaN(), 0};
  if (parameters_.model == Model::kConstant) {
    return {p0 + parameters_.constant_modulus * s, 0};  // Eq. 2.89
  }
  const auto& e = parameters_.pressure_dependent;
  return solve_node_pressure(e, p0, s, initial_guess(e, p0, s));
}

void HydraulicNodeLaw::evaluate(std::span<const double> y_read, std::span<double> u_out) const {
  if (u_out.size() != 1) throw std::invalid_argument("HydraulicNodeLaw::evaluate: size mismatch");
  u_out[0] = pressure(relative_volume(y_read)).pressure;
}

void HydraulicNodeLaw::jacobian(std::span<const double> y_read, std::span<double> dphi_dy) const {
  if (dphi_dy.size() != volumes_.size()) {
    throw std::invalid_argument("HydraulicNodeLaw::jacobian: size mismatch");
  }
  const double p = pressure(relative_volume(y_read)).pressure;
  const double stiffness = modulus(p) / parameters_.node_volume;
  for (double& entry : dphi_dy) entry = stiffness;
}

double HydraulicNodeLaw::pressure_rate(double p, std::span<const double> flows) const {
  double sum = 0.0;
  for (double q : flows) sum += q;
  return modulus(p) / parameters_.node_volume * sum;
}

SteppedNodePressure::SteppedNodePressure(const HydraulicNodeLaw::Parameters& parameters,
                                         std::vector<double> initial_volumes)
    : parameters_(parameters),
      volumes_(std::move(initial_volumes)),
      pressure_(parameters.initial_pressure) {
  HydraulicNodeLaw::Parameters checked = parameters_;
  checked.model = HydraulicNodeLaw::Model::kPressureDependent;
  check_parameters(checked, "SteppedNodePressure");
  if (volumes_.empty()) throw std::invalid_argument("SteppedNodePressure: no volumes");
}

double SteppedNodePressure::pressure_at(std::span<const double> volumes) const {
  if (volumes.size() != volumes_.size()) {
    throw std::invalid_argument("SteppedNodePressure::pressure_at: size mismatch");
  }
  double sum = 0.0;
  for (std::size_t i = 0; i < volumes.size(); ++i) sum += volumes[i] - volumes_[i];
  // Eq. 2.93: E frozen at the accepted pressure over the step.
  return parameters_.pressure_dependent.modulus(pressure_) / parameters_.node_volume * sum +
         pressure_;
}

void SteppedNodePressure::accept(std::span<const double> volumes) {
  pressure_ = pressure_at(volumes);
  volumes_.assign(volumes.begin(), volumes.end());
}

namespace {

// The bulk-modulus keys of a hydraulic_node connection into `node`.
void read_bulk_modulus(const LawTable& table, HydraulicNodeLaw::Parameters& node) {
  const bool dependent =
      table.has("bulk_modulus") &&
      table.choice("bulk_modulus", {"constant", "pressure_dependent"}) == "pressure_dependent";
  if (!dependent) {
    node.model = HydraulicNodeLaw::Model::kConstant;
    node.constant_modulus = positive(table, "modulus");
    return;
  }
  node.model = HydraulicNodeLaw::Model::kPressureDependent;
  if (!(node.initial_pressure > 0.0)) {
    table.fail("initial_pressure", "must be > 0 with bulk_modulus = \"pressure_dependent\"");
  }
  node.pressure_dependent.a = positive(table, "modulus_a");
  node.pressure_dependent.b = non_negative(table, "modulus_b");
  node.pressure_dependent.c = table.number("modulus_c");
  if (!(node.pressure_dependent.c < -1.0)) {
    table.fail("modulus_c", "must be < -1 (got " + table.source_text("modulus_c") + ")");
  }
}

}  // namespace

LawEntry detail::hydraulic_node_entry() {
  LawEntry e;
  e.name = "hydraulic_node";
  e.reads = 0;
  e.read_order = "[volume_1, ..., volume_N]";
  e.writes = {{"", ""}};
  e.keys = {{"volume", "node volume V_K > 0 [m^3] (required)"},
            {"initial_pressure", "pressure p0 at the initial volumes [Pa] (required)"},
            {"bulk_modulus", "\"constant\" (default) or \"pressure_dependent\""},
            {"modulus", "constant bulk modulus E > 0 [Pa]"},
            {"modulus_a", "pressure-dependent modulus: a > 0 [Pa]"},
            {"modulus_b", "pressure-dependent modulus: b >= 0"},
            {"modulus_c", "pressure-dependent modulus: exponent c < -1"},
            {"initial_volumes", "V_i at p0, one per read (default all 0)"}};
  e.parse = [](const LawTable& table, std::size_t reads) -> std::shared_ptr<const LawParameters> {
    auto p = std::make_shared<HydraulicNodeConnection>();
    p->node.node_volume = positive(table, "volume");
    p->node.initial_pressure = table.number("initial_pressure");
    read_bulk_modulus(table, p->node);
    if (table.has("initial_volumes")) {
      p->initial_volumes = table.numbers("initial_volumes", reads, "volume read in 'from'");
    }
    return p;
  };
  e.make = [](std::vector<std::string> names, std::span<const OutputRef> reads,
              const LawParameters& p) -> std::unique_ptr<CouplingLaw> {
    const auto& h = law_parameters<HydraulicNodeConnection>(p, "hydraulic_node");
    return std::make_unique<HydraulicNodeLaw>(std::move(names[0]), h.node,
                                              std::vector<OutputRef>(reads.begin(), reads.end()),
                                              h.initial_volumes);
  };
  return e;
}

}  // namespace macrostep::system

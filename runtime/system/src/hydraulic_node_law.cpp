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

// A start for Newton from s alone, where no accepted pressure is at hand (a monolithic run has no
// macro points; a co-simulation's u0 comes before its first). g = g_lin + g_air with both terms
// increasing and zero at p0: g_lin(p) = (p − p0)/a, g_air(p) = b/(a(c+1))·(p^(c+1) − p0^(c+1)).
// For s ≥ 0 both are ≥ 0 at the root, so each alone reaches s no earlier: the root is at most the
// smaller one-term inverse; for s < 0 it is at least the larger one. Both inverses are explicit.
// From p0 instead, Newton took about twice the corrections (2 to 1000 bar on drivetrain-belt's
// fluid: 6-9 against 3-6), on every residual of a monolithic run.
double bound_guess(const PressureDependentBulkModulus& e, double p0, double s) {
  const double p_linear = p0 + e.a * s;
  if (e.b == 0.0) return p_linear;  // constant modulus a: exact
  const double cp1 = e.c + 1.0;
  const double inner = std::pow(p0, cp1) + s * e.a * cp1 / e.b;
  const double p_air =
      inner > 0.0 ? std::pow(inner, 1.0 / cp1) : std::numeric_limits<double>::infinity();
  return s >= 0.0 ? std::min(p_linear, p_air) : std::max(p_linear, p_air);
}

// Sum of a[i] − b[i] in index order (the node's volume balances).
double difference_sum(std::span<const double> a, std::span<const double> b) {
  double sum = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) sum += a[i] - b[i];
  return sum;
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
                                   std::vector<OutputRef> read_outputs,
                                   std::vector<double> initial_volumes)
    : name_(std::move(name)),
      parameters_(parameters),
      reads_(std::move(read_outputs)),
      initial_volumes_(std::move(initial_volumes)) {
  const std::string who = "HydraulicNodeLaw " + name_;
  check_parameters(parameters_, who);
  if (reads_.empty()) throw std::invalid_argument(who + ": reads no volumes");
  if (parameters_.reads_flows && reads_.size() % 2 != 0) {
    throw std::invalid_argument(who + ": reads N volumes and their N flows: an even count");
  }
  const std::size_t n = parameters_.reads_flows ? reads_.size() / 2 : reads_.size();
  if (initial_volumes_.empty()) initial_volumes_.assign(n, 0.0);
  if (initial_volumes_.size() != n) {
    throw std::invalid_argument(who + ": one initial volume per volume read required");
  }
  reset_state();
}

std::span<const double> HydraulicNodeLaw::volumes_of(std::span<const double> y_read) const {
  if (y_read.size() != reads_.size()) {
    throw std::invalid_argument("HydraulicNodeLaw " + name_ + ": " + std::to_string(y_read.size()) +
                                " values read, expected " + std::to_string(reads_.size()));
  }
  return y_read.first(initial_volumes_.size());
}

double HydraulicNodeLaw::modulus(double p) const {
  return parameters_.model == Model::kConstant ? parameters_.constant_modulus
                                               : parameters_.pressure_dependent.modulus(p);
}

double HydraulicNodeLaw::relative_volume(std::span<const double> volumes) const {
  if (volumes.size() != initial_volumes_.size()) {
    throw std::invalid_argument("HydraulicNodeLaw::relative_volume: size mismatch");
  }
  return difference_sum(volumes, initial_volumes_) / parameters_.node_volume;
}

NodePressureSolution HydraulicNodeLaw::pressure(double s) const {
  const double p0 = parameters_.initial_pressure;
  if (!std::isfinite(s)) return {std::numeric_limits<double>::quiet_NaN(), 0};
  if (parameters_.model == Model::kConstant) return {p0 + parameters_.constant_modulus * s, 0};
  if (parameters_.model == Model::kStepped && has_accepted_point_) {
    throw std::logic_error("HydraulicNodeLaw::pressure: the stepped model is not a function of s");
  }
  // Eq. 2.96 from p^(l−1), as seed 003 does (the guard handles a start far above the root); the
  // stepped node's t0 value is the pressure-dependent one (header).
  return solve_node_pressure(parameters_.pressure_dependent, p0, s,
                             has_accepted_point_
                                 ? accepted_pressure_
                                 : bound_guess(parameters_.pressure_dependent, p0, s));
}

void HydraulicNodeLaw::evaluate(std::span<const double> y_read, std::span<double> u_out) const {
  if (u_out.size() != 1) throw std::invalid_argument("HydraulicNodeLaw::evaluate: size mismatch");
  u_out[0] = pressure_at(volumes_of(y_read));
}

double HydraulicNodeLaw::pressure_at(std::span<const double> volumes) const {
  if (parameters_.model != Model::kStepped || !has_accepted_point_) {
    return pressure(relative_volume(volumes)).pressure;
  }
  // Eq. 2.93: E frozen at the accepted pressure over the step. A pressure at or below zero is
  // outside E(p) (p^c with c < −1 needs p > 0) and would poison every later step: it is NaN, so
  // that the pipeline rejects the step and retries a smaller one (a step too large for the
  // explicit recursion).
  const double p = modulus(accepted_pressure_) / parameters_.node_volume *
                       difference_sum(volumes, accepted_volumes_) +
                   accepted_pressure_;
  return p > 0.0 ? p : std::numeric_limits<double>::quiet_NaN();
}

void HydraulicNodeLaw::jacobian(std::span<const double> y_read, std::span<double> dphi_dy) const {
  if (dphi_dy.size() != reads_.size()) {
    throw std::invalid_argument("HydraulicNodeLaw::jacobian: size mismatch");
  }
  const auto volumes = volumes_of(y_read);
  const double p = parameters_.model == Model::kStepped ? accepted_pressure_ : pressure_at(volumes);
  const double stiffness = modulus(p) / parameters_.node_volume;
  std::fill(dphi_dy.begin(), dphi_dy.end(), 0.0);  // the flows (if read) do not enter p
  std::fill(dphi_dy.begin(), dphi_dy.begin() + static_cast<std::ptrdiff_t>(volumes.size()),
            stiffness);
}

void HydraulicNodeLaw::rate(std::span<const double> y_read, std::span<double> u_dot) const {
  if (!has_rate() || u_dot.size() != 1) {
    throw std::logic_error("HydraulicNodeLaw::rate: the node reads no flows (reads_flows)");
  }
  const auto volumes = volumes_of(y_read);
  const double p = parameters_.model == Model::kStepped ? accepted_pressure_ : pressure_at(volumes);
  // Eq. 2.91: ṗ = E(p)/V_K·Σ Q_i (stepped: E frozen, so ṗ of Eq. 2.93 in time).
  u_dot[0] = pressure_rate(p, y_read.subspan(volumes.size()));
}

void HydraulicNodeLaw::reset_state() {
  accepted_pressure_ = parameters_.initial_pressure;
  accepted_volumes_ = initial_volumes_;
  has_accepted_point_ = false;
  newton_bins_.assign(parameters_.model == Model::kPressureDependent ? kNewtonBins : 0, 0);
}

void HydraulicNodeLaw::start(std::span<const double> y_read, std::span<const double> u_law) {
  const auto volumes = volumes_of(y_read);
  if (u_law.size() != 1) throw std::invalid_argument("HydraulicNodeLaw::start: size mismatch");
  if (parameters_.model == Model::kConstant) return;
  accepted_pressure_ = u_law[0];
  has_accepted_point_ = true;
  if (parameters_.model == Model::kStepped) {
    accepted_volumes_.assign(volumes.begin(), volumes.end());
  }
}

void HydraulicNodeLaw::accept(std::span<const double> y_read, std::span<const double> u_law) {
  const auto volumes = volumes_of(y_read);
  if (u_law.size() != 1) throw std::invalid_argument("HydraulicNodeLaw::accept: size mismatch");
  if (parameters_.model == Model::kConstant) return;
  if (parameters_.model == Model::kPressureDependent) {
    const NodePressureSolution solved = pressure(relative_volume(volumes));
    ++newton_bins_[std::min<std::size_t>(static_cast<std::size_t>(solved.iterations),
                                         kNewtonBins - 1)];
  } else {
    accepted_volumes_.assign(volumes.begin(), volumes.end());
  }
  // The value the run reported: for kStepped the recursion continues from exactly it.
  accepted_pressure_ = u_law[0];
  has_accepted_point_ = true;
}

std::vector<double> HydraulicNodeLaw::export_state() const {
  if (parameters_.model == Model::kConstant) return {};
  std::vector<double> state{accepted_pressure_};
  state.insert(state.end(), accepted_volumes_.begin(), accepted_volumes_.end());
  for (const std::uint64_t n : newton_bins_) state.push_back(static_cast<double>(n));
  return state;
}

void HydraulicNodeLaw::import_state(std::span<const double> state) {
  const std::size_t expected = parameters_.model == Model::kConstant
                                   ? 0
                                   : 1 + accepted_volumes_.size() + newton_bins_.size();
  if (state.size() != expected) {
    throw std::invalid_argument("hydraulic node " + name_ + ": state of " +
                                std::to_string(state.size()) + " numbers, expected " +
                                std::to_string(expected));
  }
  if (expected == 0) return;
  accepted_pressure_ = state[0];
  has_accepted_point_ = true;
  const std::size_t n = accepted_volumes_.size();
  accepted_volumes_.assign(state.begin() + 1, state.begin() + 1 + static_cast<std::ptrdiff_t>(n));
  const auto bins = state.subspan(1 + n);
  for (std::size_t k = 0; k < bins.size(); ++k) {
    newton_bins_[k] = static_cast<std::uint64_t>(bins[k]);
  }
}

std::vector<CouplingLaw::Histogram> HydraulicNodeLaw::histograms() const {
  if (parameters_.model != Model::kPressureDependent) return {};
  return {Histogram{"newton_iterations", newton_bins_}};
}

double HydraulicNodeLaw::pressure_rate(double p, std::span<const double> flows) const {
  double sum = 0.0;
  for (double q : flows) sum += q;
  return modulus(p) / parameters_.node_volume * sum;
}

namespace {

// The bulk-modulus keys of a hydraulic_node connection into `node`.
void read_bulk_modulus(const LawTable& table, HydraulicNodeLaw::Parameters& node) {
  const std::string model =
      table.has("bulk_modulus")
          ? table.choice("bulk_modulus", {"constant", "pressure_dependent", "stepped"})
          : std::string("constant");
  if (model == "constant") {
    node.model = HydraulicNodeLaw::Model::kConstant;
    node.constant_modulus = positive(table, "modulus");
    return;
  }
  node.model = model == "stepped" ? HydraulicNodeLaw::Model::kStepped
                                  : HydraulicNodeLaw::Model::kPressureDependent;
  if (!(node.initial_pressure > 0.0)) {
    table.fail("initial_pressure", "must be > 0 with bulk_modulus = \"" + model + "\"");
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
  e.read_order = "[volume_1, ..., volume_N] (reads_flows: then [flow_1, ..., flow_N])";
  e.writes = {{"", ""}};
  e.keys = {{"volume", "node volume V_K > 0 [m^3] (required)"},
            {"initial_pressure", "pressure p0 at the initial volumes [Pa] (required)"},
            {"bulk_modulus",
             "\"constant\" (default), \"pressure_dependent\" or \"stepped\" (E(p) frozen at "
             "the last accepted pressure over a macro step)"},
            {"modulus", "constant bulk modulus E > 0 [Pa]"},
            {"modulus_a", "pressure-dependent or stepped modulus: a > 0 [Pa]"},
            {"modulus_b", "pressure-dependent or stepped modulus: b >= 0"},
            {"modulus_c", "pressure-dependent or stepped modulus: exponent c < -1"},
            {"initial_volumes", "V_i at p0, one per volume read (default all 0)"},
            {"reads_flows",
             "true: 'from' lists the N volumes, then their N flows Q_i; the node then has the "
             "rate dp/dt = E/V_K sum Q_i (for extrapolations with b != 0)"}};
  e.parse = [](const LawTable& table, std::size_t reads) -> std::shared_ptr<const LawParameters> {
    auto p = std::make_shared<HydraulicNodeConnection>();
    p->node.node_volume = positive(table, "volume");
    p->node.initial_pressure = table.number("initial_pressure");
    read_bulk_modulus(table, p->node);
    p->node.reads_flows = table.has("reads_flows") && table.boolean("reads_flows");
    if (p->node.reads_flows && reads % 2 != 0) {
      table.fail("reads_flows", "needs 'from' to list N volumes and their N flows (got " +
                                    std::to_string(reads) + " outputs)");
    }
    const std::size_t volumes = p->node.reads_flows ? reads / 2 : reads;
    if (table.has("initial_volumes")) {
      p->initial_volumes = table.numbers("initial_volumes", volumes, "volume read in 'from'");
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

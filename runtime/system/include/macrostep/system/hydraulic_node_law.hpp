// The elastic hydraulic volume node of seed 003 §2.4 (MODELS.md F-HYD) as a coupling law.
//
// The node (volume V_K, fluid bulk modulus E(p)) obeys ṗ = E(p)/V_K·Σ Q_i (Eq. 2.86), Q_i the
// flow of line i into the node. Every connected subsystem integrates its line's abstract volume
// V_i with V̇_i = Q_i and outputs it; separating variables gives the pressure as an algebraic
// function of those outputs (Eq. 2.87-2.88):
//   ∫_{p0}^{p} dp'/E(p') = Σ_i (V_i − V_i⁰)/V_K =: s,
// so the node is a law u = p = φ(V_1..V_N), no feed-through, like a mechanical spring
// (V ↔ x, p ↔ force, E/V_K ↔ stiffness). Bulk-modulus models:
//  - kConstant (§2.4.1, Eq. 2.89): p = p0 + (E/V_K)·Σ(V_i − V_i⁰). Stateless.
//  - kPressureDependent (§2.4.3, Eq. 2.94-2.96): E(p) = a/(1 + b·p^c); g(p) = s with
//    g(p) = [p − p0 + b/(c+1)·(p^(c+1) − p0^(c+1))]/a, solved by guarded Newton (g' = 1/E)
//    started, as seed 003 does, at the last accepted pressure p^(l−1) (t0: p0). The value is a
//    function of y up to the Newton tolerance; the start is accepted state (CouplingLaw
//    "Accepted state"), so the bits follow the accepted path, the same under every executor.
//    The law counts the corrections of the solve at every accepted point (histograms()).
//  - kStepped (§2.4.2, Eq. 2.93): p^l = E(p^(l−1))/V_K·Σ(V_i^l − V_i^(l−1)) + p^(l−1) with the
//    pressure-dependent E frozen at the accepted pressure over the step: an explicit Euler step
//    of dp/dV = E(p)/V_K in the volume increment, so it depends on the macro grid (which points
//    were accepted), and a monolithic run refuses it. State: p^(l−1) and V^(l−1), advanced by
//    accept() with the accepted pressure the run reported, kept on a rejected step. The
//    recursion starts at t0 from the pressure-dependent node's p(V(t0)) (Newton, as that model):
//    one Euler step from the reference point (p0, V⁰) instead would carry its error in the
//    whole initial offset V(t0) − V⁰ through the run at every H (the line pair's pressure swing
//    settled 1.6 % below the monolithic one). t0 is the first accepted point (start()). Being
//    explicit, the recursion needs volume increments small against the pressure swing; a step
//    to p ≤ 0 leaves E undefined (NaN from there on).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "macrostep/system/coupling_law.hpp"
#include "macrostep/system/law_registry.hpp"

namespace macrostep::system {

// E(p) = a/(1 + b·p^c) (seed 003 Eq. 2.94). Requires a > 0, b ≥ 0, c < −1 (then g maps
// (0, ∞) onto all reals, so every volume balance has exactly one positive pressure).
struct PressureDependentBulkModulus {
  double a = 0.0, b = 0.0, c = -2.0;

  // From the fluid data of Eq. 2.94: a = Ẽ(1+ν), b = Ẽ·ν·p̃^(1/κ)/κ, c = −(1 + 1/κ); Ẽ bulk
  // modulus of the airless fluid [Pa], ν volume fraction of air at p̃, κ isentropic exponent,
  // p̃ reference pressure [Pa].
  static PressureDependentBulkModulus from_fluid(double airless_modulus, double air_fraction,
                                                 double isentropic_exponent,
                                                 double reference_pressure);
  // E(p) [Pa] for p > 0.
  double modulus(double p) const;
  // g(p) − g(p0) of Eq. 2.95: ∫_{p0}^{p} dp'/E(p'), p, p0 > 0.
  double compliance_integral(double p0, double p) const;
};

struct NodePressureSolution {
  double pressure = 0.0;
  // Newton corrections applied before the convergence test passed (the test itself evaluates
  // g and E once more and applies that last, tiny correction).
  int iterations = 0;
};

// Solves compliance_integral(p0, p) = s for p > 0 by Newton from p_start > 0 (Eq. 2.96): a step
// to p ≤ 0 is replaced by p/10 (the guard: from far above the root a Newton step can land at a
// negative pressure, MODELS.md F-HYD; g is concave, so from below the root Newton increases
// monotonically). Converged when the correction is ≤ 1e-12·p (relative; quadratic convergence
// makes the result far more accurate). Throws std::runtime_error after 100 corrections and
// std::invalid_argument for a non-finite s or a start ≤ 0.
NodePressureSolution solve_node_pressure(const PressureDependentBulkModulus& modulus, double p0,
                                         double s, double p_start);

class HydraulicNodeLaw final : public CouplingLaw {
 public:
  enum class Model { kConstant, kPressureDependent, kStepped };
  // Bins of the Newton-correction histogram: 0 .. kNewtonBins − 2, the last bin that many or more.
  static constexpr std::size_t kNewtonBins = 12;

  struct Parameters {
    double node_volume = 0.0;       // V_K [m³] > 0
    double initial_pressure = 0.0;  // p0 [Pa]: the pressure at V_i = V_i⁰; > 0 if pressure dep.
    Model model = Model::kConstant;
    double constant_modulus = 0.0;                    // E [Pa] > 0 (kConstant)
    PressureDependentBulkModulus pressure_dependent;  // (kPressureDependent, kStepped)
    // The law reads N volumes and then their N flows Q_i (in the same order): it then has the
    // rate u̇ = ṗ, which extrapolations with derivative terms (seed 003 b ≠ 0) need.
    bool reads_flows = false;
  };

  // name: the pressure variable (result column). read_outputs: the abstract volumes V_i it reads
  // (one per connected line, any subsystems), then with reads_flows their flows Q_i;
  // initial_volumes: V_i⁰ (one per volume; empty means all zero). Throws std::invalid_argument for
  // no volumes, a size mismatch or invalid parameters.
  HydraulicNodeLaw(std::string name, const Parameters& parameters,
                   std::vector<OutputRef> read_outputs, std::vector<double> initial_volumes = {});

  std::span<const OutputRef> reads() const override { return reads_; }
  std::span<const std::string> variable_names() const override {
    return std::span<const std::string>(&name_, 1);
  }
  // u_out[0] = p(V_1..V_N) from the accepted state. A non-finite volume gives NaN (reported by
  // the caller's NaN checks).
  void evaluate(std::span<const double> y_read, std::span<double> u_out) const override;
  // ∂p/∂V_i = E(p)/V_K for every i (the inverse of g' = 1/E, Eq. 2.96b); kStepped: E(p^(l−1))/V_K.
  // 0 for the flows (if read).
  void jacobian(std::span<const double> y_read, std::span<double> dphi_dy) const override;
  // With reads_flows: u̇ = E(p)/V_K·Σ Q_i (Eq. 2.91; kStepped: E(p^(l−1))).
  bool has_rate() const override { return parameters_.reads_flows; }
  void rate(std::span<const double> y_read, std::span<double> u_dot) const override;
  bool has_feedthrough() const override { return false; }
  // The node pressure, "Pa" (the law's keys are in SI: volume in m^3, pressures in Pa).
  std::vector<std::string> variable_units(std::span<const std::string> read_units) const override {
    (void)read_units;
    return {"Pa"};
  }
  std::vector<std::string> variable_descriptions() const override {
    return {"pressure of the hydraulic volume node"};
  }

  // Accepted state (CouplingLaw "Accepted state"): kPressureDependent and kStepped have one.
  bool is_stateful() const override { return parameters_.model != Model::kConstant; }
  bool depends_on_macro_grid() const override { return parameters_.model == Model::kStepped; }
  // Reference point (p0, V⁰), an empty histogram.
  void reset_state() override;
  // t0's point: (u0, V(t0)); not counted in the histogram (a first solve from p0, no step).
  void start(std::span<const double> y_read, std::span<const double> u_law) override;
  // u_law[0] becomes p^(l−1) (and y_read V^(l−1) for kStepped); kPressureDependent first counts
  // the corrections its solve at y_read needs from the previous p^(l−1).
  void accept(std::span<const double> y_read, std::span<const double> u_law) override;
  // [p^(l−1), V^(l−1) (N values), histogram (kNewtonBins counts)]; empty for kConstant.
  std::vector<double> export_state() const override;
  void import_state(std::span<const double> state) override;
  // kPressureDependent: "newton_iterations", the corrections per accepted macro step.
  std::vector<Histogram> histograms() const override;

  const Parameters& parameters() const { return parameters_; }
  // E at pressure p for this node's model (kStepped: the pressure-dependent E).
  double modulus(double p) const;
  // The relative volume balance s = Σ(V_i − V_i⁰)/V_K of Eq. 2.88, summed in read order.
  double relative_volume(std::span<const double> volumes) const;
  // p(s) with the Newton iteration count (0 for kConstant): from the accepted pressure once the
  // law has an accepted point (start(), accept() or import_state()), else (a monolithic run, u0)
  // from a bound computed from s alone. kStepped: only before its first accepted point (its
  // t0 value, the pressure-dependent one), else std::logic_error (p is not a function of s).
  NodePressureSolution pressure(double s) const;
  double accepted_pressure() const { return accepted_pressure_; }
  // u̇ = ṗ = E(p)/V_K·Σ Q_i (Eq. 2.91) for a caller that extrapolates with derivatives; the law
  // itself writes p only, so it does not read the flows.
  double pressure_rate(double p, std::span<const double> flows) const;

 private:
  // The volumes of y_read (its first N entries), after checking its size.
  std::span<const double> volumes_of(std::span<const double> y_read) const;
  // p at the N volumes from the accepted state.
  double pressure_at(std::span<const double> volumes) const;

  std::string name_;
  Parameters parameters_;
  std::vector<OutputRef> reads_;
  std::vector<double> initial_volumes_;
  // Accepted state: p^(l−1), V^(l−1) (kStepped), the Newton histogram (kPressureDependent).
  double accepted_pressure_ = 0.0;
  bool has_accepted_point_ = false;  // start(), accept() or import_state() since reset_state()
  std::vector<double> accepted_volumes_;
  std::vector<std::uint64_t> newton_bins_;
};

// The parameters of a hydraulic_node connection (law_registry.hpp).
struct HydraulicNodeConnection final : LawParameters {
  HydraulicNodeLaw::Parameters node;
  std::vector<double> initial_volumes;  // V_i⁰, one per read (empty: all zero)
};

}  // namespace macrostep::system

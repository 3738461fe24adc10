// Error weights, the WRMS norm and the local error test (METHODS §0, §6.1; seed 000
// Eq. 3.21–3.24).
//
//   ‖e‖_W = sqrt((1/n) Σ_i (e_i W_i)²)
//   concept 1 (exLE, exMD, imMD) over the monitored outputs, one norm per weight group:
//                                 W^pos_i = 1/(atol^pos_i + rtol·|x_{i,N+1}|),
//                                 W^vel_i = 1/(atol^vel_i + rtol·|v_{i,N+1}|)
//   concept 2 (exCV, imCV) and SDN / a-priori estimate: W^u_i = 1/(atol^u_i + rtol·|u_i|)
//   test: concept 1 max(‖ε^pos‖_W, ‖ε^vel‖_W) ≤ 1, concept 2 ‖ε^u‖_W ≤ 1.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace macrostep::control {

// Controller tolerances (METHODS §9): rtol is one scalar; atol may differ per component.
// An empty per-component vector means the scalar applies to every component.
struct ErrorTolerances {
  double rtol = 1e-4;
  double atol_pos = 1e-7;  // 1e-3·rtol
  double atol_vel = 1e-4;  // rtol
  double atol_u = 1.0;     // 1e4·rtol
  std::vector<double> atol_pos_each;
  std::vector<double> atol_vel_each;
  std::vector<double> atol_u_each;

  // The §9 defaults scaled to the given rtol (atol_pos = 1e-3·rtol, atol_vel = rtol,
  // atol_u = 1e4·rtol).
  static ErrorTolerances for_rtol(double rtol);

  // Throws std::invalid_argument naming the offending field: rtol negative or not finite, or
  // an atol not positive or not finite (atol > 0 keeps every weight finite, even at a zero
  // state; D-25 requires atol^u to be configured always).
  void validate() const;
};

enum class WeightGroup : std::uint8_t { kPosition, kVelocity, kCouplingVariable };

// The atol of component `index` of a group (its position among the group's components): its
// entry of the group's per-component list, or the group's scalar where the list is empty. And
// the [cosim] key that sets the scalar ("atol_pos", "atol_vel", "atol_u").
double component_atol(const ErrorTolerances& tol, WeightGroup group, std::size_t index);
const char* atol_key(WeightGroup group);

// One value per weight group, indexed by static_cast<std::size_t>(WeightGroup).
inline constexpr std::size_t kWeightGroupCount = 3;
using PerWeightGroup = std::array<double, kWeightGroupCount>;

// w_i = 1/(atol_i + rtol·|x_i|) for the group. Throws std::invalid_argument if a
// per-component atol vector of the group has a size other than x.size().
void error_weights(std::span<const double> x, const ErrorTolerances& tol, WeightGroup group,
                   std::span<double> w);

// sqrt((1/n) Σ (e_i w_i)²); 0 for n = 0. Sizes must match (std::invalid_argument).
double wrms_norm(std::span<const double> e, std::span<const double> w);

// ‖scale·|a − b|‖_W with W from `reference` for `group`, without temporary vectors
// (the estimators' norms). All spans have the same size.
double scaled_difference_norm(std::span<const double> a, std::span<const double> b, double scale,
                              std::span<const double> reference, const ErrorTolerances& tol,
                              WeightGroup group);

// One norm per weight group g: ‖scale[g]·|a − b|‖_W over the components i with groups[i] == g,
// in index order, W from `reference`; a per-component atol vector of g is indexed by the
// position within g (and must have g's component count). 0 for a group without components. Per
// group these are exactly the operations of scaled_difference_norm on the group's components.
// All spans have the same size (std::invalid_argument otherwise).
PerWeightGroup grouped_difference_norms(std::span<const double> a, std::span<const double> b,
                                        std::span<const WeightGroup> groups,
                                        const PerWeightGroup& scale,
                                        std::span<const double> reference,
                                        const ErrorTolerances& tol);

// The norms of one a-posteriori error estimate, and the local error test on them.
struct ErrorEstimate {
  enum class Kind : std::uint8_t {
    kNone,               // no estimator (fixed-H mode): always passes
    kStates,             // concept 1: positions and velocities of the monitored outputs
    kCouplingVariables,  // concept 2: the coupling variables
  };
  Kind kind = Kind::kNone;
  double pos = 0.0;  // ‖ε^pos‖_W (kStates)
  double vel = 0.0;  // ‖ε^vel‖_W (kStates)
  double u = 0.0;    // ‖ε^u‖_W (kCouplingVariables)

  static ErrorEstimate none() { return {}; }
  static ErrorEstimate states(double pos_norm, double vel_norm) {
    return {Kind::kStates, pos_norm, vel_norm, 0.0};
  }
  static ErrorEstimate coupling_variables(double u_norm) {
    return {Kind::kCouplingVariables, 0.0, 0.0, u_norm};
  }

  // max(pos, vel) for kStates, u for kCouplingVariables, 0 for kNone (NaN propagates).
  double norm() const;
  // The local error test (§6.1): norm() ≤ 1. A NaN norm fails.
  bool passed() const;
};

}  // namespace macrostep::control

// The a-posteriori error estimators of METHODS §5.1 (seed 000 §3.1) as functions of their
// inputs. The runs themselves (nominal, comparison, predictor) are the scheme's business;
// these functions only turn their results at T_{N+1} into ε vectors and WRMS norms.
//
//   id    extra run                     ε_i
//   exLE  comparison with p̂ (deg κ+1)   |x_i − x̂_i|                           (Eq. 3.6)
//   exMD  comparison with p(t; û^pre)   (C^{κ+1}/C^κ)·|x_i − x̂_i|             (Eq. 3.13/3.14)
//   exCV  none                          |u^pre_i − u_{i,N+1}|                  (Eq. 3.16)
//   imMD  none (predictor run)          (1 − C^{κ+1}/C^κ)·|x^pre_i − x_i|      (Eq. 3.18/3.19)
//   imCV  none                          |u^pre_i − u_{i,N+1}| (converged)      (Eq. 3.20)
// x stands for the monitored outputs, each a position (constants C_pos) or a velocity (C_vel).
// Weights are taken at the continuing solution (x_{N+1}, u_{N+1}) (§6.1).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "macrostep/control/error_constants.hpp"
#include "macrostep/control/error_norm.hpp"
#include "macrostep/model/name_table.hpp"

namespace macrostep::control {

// kNone: no estimate, a fixed macro step H (exH).
enum class Estimator : std::uint8_t { kNone, kExLE, kExMD, kExCV, kImMD, kImCV };

// The names of the configuration ([cosim] estimator), the command line (--estimator), the run
// metadata and the messages, in the order that messages list them.
inline constexpr model::NameTable<Estimator, 6> kEstimatorNames{{
    {Estimator::kNone, "none"},
    {Estimator::kExLE, "exLE"},
    {Estimator::kExMD, "exMD"},
    {Estimator::kExCV, "exCV"},
    {Estimator::kImMD, "imMD"},
    {Estimator::kImCV, "imCV"},
}};
std::optional<Estimator> parse_estimator(std::string_view name);
const char* to_string(Estimator e);
std::vector<std::string_view> estimator_names();

// Concept 1 (positions/velocities of the monitored outputs): exLE, exMD, imMD.
bool monitors_states(Estimator e);
// Concept 2 (coupling variables): exCV, imCV.
bool monitors_coupling_variables(Estimator e);
// Extra parallel integrations per subsystem from z_N: 1 for exLE and exMD, 0 otherwise.
int comparison_runs(Estimator e);
// Accepted history points the estimator needs at degree κ: κ+2 for exLE, exMD, imMD
// (METHODS §5.1, D-33), 1 for the others.
std::size_t history_points_required(Estimator e, int kappa);

// D-33: while the history holds fewer than κ+2 points, exLE and exMD fall back to exCV and
// imMD to imCV (with the u tolerances); otherwise the estimator itself.
Estimator effective_estimator(Estimator e, int kappa, std::size_t history_points);

// ε vectors (all spans the same size; std::invalid_argument otherwise).
// exLE: ε_i = |nominal_i − comparison_i|.
void local_extrapolation_error(std::span<const double> nominal, std::span<const double> comparison,
                               std::span<double> eps);
// exMD: ε_i = ratio·|nominal_i − comparison_i|, ratio = C^{κ+1}/C^κ of the group.
void explicit_milne_error(std::span<const double> nominal, std::span<const double> comparison,
                          double ratio, std::span<double> eps);
// imMD: ε_i = (1 − ratio)·|predictor_i − corrected_i|.
void implicit_milne_error(std::span<const double> predictor, std::span<const double> corrected,
                          double ratio, std::span<double> eps);
// exCV / imCV: ε_i = |u_pre_i − u_new_i|.
void coupling_variable_error(std::span<const double> u_pre, std::span<const double> u_new,
                             std::span<double> eps);

// Concept-1 estimate (METHODS §5.1, §6.1): `nominal` and `other` hold the monitored outputs of
// two runs at T_{N+1} (same order), groups[i] the weight group of output i (kPosition or
// kVelocity). One WRMS norm per group over its outputs in index order, with weights at
// `nominal` (the continuing solution) and per-component atol indexed within the group; the
// test takes the max over the groups (ErrorEstimate::norm):
//  - exLE: `other` is the comparison run, ratios ignored;
//  - exMD: `other` is the comparison run, ratios = milne_ratios(history, κ, T_{N+1});
//  - imMD: `other` is the predictor run, `nominal` the converged corrector.
// Throws std::invalid_argument for a concept-2 estimator, a kCouplingVariable group or
// mismatched sizes.
ErrorEstimate estimate_states(Estimator e, std::span<const double> nominal,
                              std::span<const double> other, std::span<const WeightGroup> groups,
                              MilneRatios ratios, const ErrorTolerances& tol);

// Concept-2 estimate (exCV, imCV, and the D-33 fallback): ‖u_pre − u_new‖ with W^u at u_new.
ErrorEstimate estimate_coupling_variables(std::span<const double> u_pre,
                                          std::span<const double> u_new,
                                          const ErrorTolerances& tol);

// The premise of exLE and exMD (METHODS §5.3, D-52). Both estimates are linear in the
// predictor's error Δp at T_{N+1}, which their comparison run takes to be û^pre − u^pre (the
// extrapolation one degree higher, Eq. 3.3 / 3.8). After the step, u_{N+1} − u^pre is Δp
// itself up to the step's own coupling error, one order higher. Returns
// ρ = ‖u_{N+1} − u^pre‖ / ‖û^pre − u^pre‖ (WRMS norms, W^u at u_{N+1}): about 1 where the
// coupling variables are smooth, far above it where an event inside a subsystem (a contact, a
// switch) moved them within the step. NaN where the comparison moved nothing
// (‖û^pre − u^pre‖ = 0) or a value is not finite. Throws std::invalid_argument for mismatched
// sizes.
double prediction_ratio(std::span<const double> u_pre, std::span<const double> u_hat,
                        std::span<const double> u_new, const ErrorTolerances& tol);

// Scales a concept-1 estimate by ρ/limit where ρ > limit > 0, so that it measures the error of
// the predictor's actual miss instead of the comparison's; returns the factor applied (1 where
// nothing changes: ρ ≤ limit, limit = 0, or ρ NaN).
double raise_for_prediction_ratio(ErrorEstimate& estimate, double ratio, double limit);

}  // namespace macrostep::control

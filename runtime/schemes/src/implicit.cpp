// Iterative schemes: implicit, semi-implicit, waveform (implicit.hpp; METHODS.md §4.1-4.6,
// §5.1, D-13 to D-22; seed 000 §2.4.2-2.4.3, App. A; seed 002 §2.4).
#include "macrostep/schemes/implicit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "macrostep/control/error_constants.hpp"
#include "macrostep/control/estimators.hpp"
#include "macrostep/coupling/builders.hpp"

namespace macrostep::schemes {

using corrector::ConvergenceVerdict;
using corrector::IterationKind;
using corrector::JacobianKind;

IterativeScheme::IterativeScheme(corrector::CorrectorOptions options) : copt_(options) {
  copt_.validate();
  test_ = corrector::ConvergenceTest(copt_.tau, copt_.divergence);
}

void IterativeScheme::start(const system::CoupledSystem& system, const SchemeOptions& options) {
  using control::Estimator;
  const Estimator estimator = options.control.estimator;
  if (estimator == Estimator::kExLE || estimator == Estimator::kExMD ||
      estimator == Estimator::kExCV) {
    throw std::invalid_argument(fmt::format(
        "estimator {} belongs to the explicit scheme; the {} scheme takes imMD, imCV (or none "
        "with a fixed step size)",
        control::estimator_name(estimator), corrector::iteration_name(copt_.iteration)));
  }
  if (options.control.mode == control::StepSizeMode::kVariable && estimator == Estimator::kNone) {
    throw std::invalid_argument("a controlled step size needs an error estimator (imMD or imCV)");
  }
  if (system.has_constraints() &&
      (copt_.iteration == IterationKind::kWaveform || copt_.jacobian == JacobianKind::kSap ||
       copt_.jacobian == JacobianKind::kQuasiNewton)) {
    // A multiplier has no fixed-point map u = φ(y) for waveform relaxation or the secant update
    // to work on, and sap's series knows no constraint (METHODS §8, D-45: Newton with ∂y/∂u).
    throw std::invalid_argument(
        "a constraint coupling (joint) needs the implicit or semi-implicit scheme with jacobian "
        "fd, reuse or heun");
  }
  if ((copt_.jacobian == JacobianKind::kSap || copt_.jacobian == JacobianKind::kHeun) &&
      system.has_feedthrough()) {
    // sap's series term sees inputs only through the accelerations (§4.5): it would miss the
    // direct ∂y/∂u that the FD Jacobian's perturbed runs contain.
    throw std::invalid_argument(
        "the sap and heun interface Jacobians miss direct feed-through (∂y/∂u); with "
        "feed-through subsystems use jacobian fd, reuse or quasi-newton");
  }
  system_ = &system;
  options_ = options;
  const std::size_t ns = system.subsystem_count(), nc = system.coupling_count();
  jacobian_ = std::make_unique<corrector::InterfaceJacobian>(system);
  dyds_ = std::make_unique<corrector::InputSensitivities>(system);
  commands_.assign(ns, {});
  y_.assign(ns, {});
  for (std::size_t i = 0; i < ns; ++i) y_[i].assign(system.subsystem(i).output_size(), 0.0);
  for (auto* v : {&u_pre_, &s_, &s_prev_, &delta_, &phi_, &step_}) v->assign(nc, 0.0);
  mon_.assign(system.monitored_outputs().size(), 0.0);
  mon_prev_ = mon_pre_ = mon_;
  correction_.clear();
  pending_correction_.clear();
  jacobian_valid_ = false;
  secant_.reset();
  if (copt_.jacobian == JacobianKind::kQuasiNewton) {
    secant_ = std::make_unique<corrector::SecantHistory>(
        nc, std::max<std::size_t>(nc, 1), static_cast<std::size_t>(copt_.quasi_newton_reuse));
  }
  sap_.reset();
  if (copt_.jacobian == JacobianKind::kSap && copt_.iteration != IterationKind::kWaveform) {
    sap_ = std::make_unique<corrector::SapSensitivities>(system);
  }
  heun_.reset();
  if (copt_.jacobian == JacobianKind::kHeun && copt_.iteration != IterationKind::kWaveform) {
    heun_ = std::make_unique<corrector::HeunSensitivities>(system);
    z_n_.assign(ns, {});
    u_n_.assign(ns, {});
    for (std::size_t i = 0; i < ns; ++i) {
      z_n_[i].assign(system.subsystem(i).state_size(), 0.0);
      u_n_[i].assign(system.subsystem(i).input_size(), 0.0);
    }
  }
}

// Δ^0 (METHODS §4.2, D-13) and the predictor s^0 = u^pre.
void IterativeScheme::begin(const control::StepPlan& plan,
                            const coupling::CouplingHistory& history) {
  predict(options_, history, plan.kappa, plan.t_end, u_pre_);
  s_ = u_pre_;
  for (std::size_t k = 0; k < delta_.size(); ++k) {
    delta_[k] = correction_.empty() ? copt_.perturbation_min
                                    : std::max(correction_[k], copt_.perturbation_min);
  }
  test_.reset();
  if (secant_) secant_->begin_attempt();
  passes_ = 0;
  jacobians_ = 0;
}

// Step polynomials p(t; s) and, if asked, one perturbed run per input (end value s_k + Δ_k).
void IterativeScheme::build_commands(const control::StepPlan& plan,
                                     const coupling::CouplingHistory& history, bool perturbed) {
  const system::CoupledSystem& system = *system_;
  for (std::size_t i = 0; i < system.subsystem_count(); ++i) {
    const auto in = system.input_couplings(i);
    sel_.assign(in.begin(), in.end());
    auto& cmd = commands_[i];
    cmd.nominal = coupling::step_polynomial(history, plan.kappa, plan.t_end, s_, sel_);
    cmd.extra.clear();
    if (!perturbed) continue;
    for (std::size_t c = 0; c < in.size(); ++c) {
      cmd.extra.push_back(
          runner::ExtraRun::perturbed(static_cast<std::uint32_t>(c), s_[in[c]] + delta_[in[c]]));
    }
  }
}

// ‖s^j − s^{j−1}‖ with W^u at the predicted u^pre (METHODS §4.3).
double IterativeScheme::iterate_difference() const {
  return control::scaled_difference_norm(s_, s_prev_, 1.0, u_pre_, options_.control.tolerances,
                                         control::WeightGroup::kCouplingVariable);
}

// max over the groups of ‖y^j − y^{j−1}‖ on the monitored outputs, weights at the predictor
// outputs (D-15).
double IterativeScheme::output_difference() const {
  const auto norms =
      control::grouped_difference_norms(mon_, mon_prev_, system_->monitored_groups(),
                                        {1.0, 1.0, 1.0}, mon_pre_, options_.control.tolerances);
  return std::max(norms[0], norms[1]);
}

// ∂y/∂s from the pass's perturbed runs (forward differences, METHODS §4.2), from sap (§4.5) or
// heun's of the attempt (seed 004 Eq. 49), then J assembled and factorised (§4.1). False if J is
// singular (D-11).
bool IterativeScheme::refresh_jacobian(const control::StepPlan& plan,
                                       const coupling::CouplingHistory& history,
                                       const executors::PassOutcome& outcome) {
  const system::CoupledSystem& system = *system_;
  if (sap_) {
    sap_->fill(control::error_constants(history, plan.kappa, plan.t_end), plan.h(), *dyds_);
  } else if (!heun_) {  // heun: dyds_ holds this attempt's sensitivities (heun_sensitivities)
    for (std::size_t i = 0; i < system.subsystem_count(); ++i) {
      const auto in = system.input_couplings(i);
      const auto& so = outcome.subsystems[i];
      perturbed_.resize(in.size());
      channel_delta_.resize(in.size());
      for (std::size_t c = 0; c < in.size(); ++c) {
        perturbed_[c] = so.extra[c].outputs;
        channel_delta_[c] = delta_[in[c]];
      }
      dyds_->set_forward_difference(i, so.nominal.outputs, perturbed_, channel_delta_);
    }
  }
  ++jacobians_;
  jacobian_valid_ = jacobian_->assemble(y_, *dyds_);
  jacobian_h_ = plan.h();
  jacobian_kappa_ = plan.kappa;
  return jacobian_valid_;
}

// heun (seed 004 Eq. 49): ∂y/∂s from the subsystems linearised at the accepted T_N state and
// inputs, for this attempt's H and κ (κ = 0: the step polynomial is constant).
void IterativeScheme::heun_sensitivities(const control::StepPlan& plan,
                                         const coupling::CouplingHistory& history,
                                         const PassRunner& runner) {
  const system::CoupledSystem& system = *system_;
  const std::span<const double> u = history.newest_values();
  for (std::size_t i = 0; i < system.subsystem_count(); ++i) {
    runner.accepted_state(i, z_n_[i]);
    system.gather_inputs(i, u, u_n_[i]);
  }
  heun_->fill(plan.t_begin, plan.h(), plan.kappa == 0, z_n_, u_n_, *dyds_);
}

// Whether this pass must run the perturbed runs of the fd Jacobian (when a next iterate follows).
bool IterativeScheme::wants_perturbed_runs(const control::StepPlan& plan) const {
  if (copt_.iteration == IterationKind::kWaveform) return false;
  switch (copt_.jacobian) {
    case JacobianKind::kFiniteDifference:
      return true;
    case JacobianKind::kSap:
    case JacobianKind::kHeun:
      return false;
    case JacobianKind::kReuse: {  // a J of the same κ and a near H, not yet found too slow
      const double ratio = plan.h() / jacobian_h_;
      return !(jacobian_valid_ && jacobian_kappa_ == plan.kappa &&
               ratio <= copt_.reuse_step_ratio && ratio * copt_.reuse_step_ratio >= 1.0);
    }
    case JacobianKind::kQuasiNewton:  // first step, and after a corrector failure
      return secant_->columns() == 0;
  }
  return true;
}

// s^{j+1} from the pass just run (METHODS §4.1, §4.6; IQN-ILS for quasi-Newton): false if no
// step can be made (a singular J).
bool IterativeScheme::next_iterate(const control::StepPlan& plan,
                                   const coupling::CouplingHistory& history,
                                   const executors::PassOutcome& outcome, bool perturbed) {
  const system::CoupledSystem& system = *system_;
  system.evaluate_couplings(y_, phi_);
  step_.resize(s_.size());
  for (std::size_t k = 0; k < s_.size(); ++k) {
    // r = −g: φ − s, or a constraint's own residual −g(y) (METHODS §8)
    step_[k] = system.is_constraint(k) ? phi_[k] : phi_[k] - s_[k];
  }
  s_prev_ = s_;
  if (copt_.iteration == IterationKind::kWaveform) {
    for (std::size_t k = 0; k < s_.size(); ++k) {
      s_[k] = (1.0 - copt_.omega) * phi_[k] + copt_.omega * s_[k];
    }
    return true;
  }
  if (secant_) secant_->add(step_, phi_);
  if (copt_.jacobian == JacobianKind::kQuasiNewton && !perturbed) {
    if (!secant_->step(s_)) {  // no secant information: a relaxed fixed-point step
      for (std::size_t k = 0; k < s_.size(); ++k) s_[k] += copt_.omega * step_[k];
    }
  } else {
    if (perturbed || copt_.jacobian == JacobianKind::kSap ||
        copt_.jacobian == JacobianKind::kHeun) {
      if (!refresh_jacobian(plan, history, outcome)) return false;
    } else if (!jacobian_valid_) {
      return false;
    }
    jacobian_->solve(step_);  // J d = −g
    for (std::size_t k = 0; k < s_.size(); ++k) s_[k] += step_[k];
  }
  for (std::size_t k = 0; k < s_.size(); ++k) {
    const double d = s_[k] - s_prev_[k];
    if (!std::isfinite(d)) return false;
    delta_[k] = std::max(std::abs(d), copt_.perturbation_min);
  }
  return true;
}

// The §4.3 test. Fixed-H mode has no rejection to fall back on: like seed 000 §5.1 it iterates
// on through a slow or diverging phase up to n_cor^max passes, then continues regardless.
ConvergenceVerdict IterativeScheme::judge(double difference, bool fixed) {
  const ConvergenceVerdict v = test_.add(difference);
  // Jacobian reuse: a contraction slower than reuse_rate asks for a fresh J on the next pass.
  if (copt_.jacobian == JacobianKind::kReuse && test_.rate() >= copt_.reuse_rate) {
    jacobian_valid_ = false;
  }
  return fixed && v == ConvergenceVerdict::kDiverged ? ConvergenceVerdict::kContinue : v;
}

AttemptResult IterativeScheme::attempt(const control::StepPlan& plan,
                                       const coupling::CouplingHistory& history,
                                       PassRunner& runner) {
  const system::CoupledSystem& system = *system_;
  const bool fixed = options_.control.mode == control::StepSizeMode::kFixed;
  const bool semi = copt_.iteration == IterationKind::kSemiImplicit;
  const int last_pass = semi ? 1 : copt_.max_passes;
  test_kind_ =
      plan.estimator == control::Estimator::kImMD && !semi ? Test::kOutputs : Test::kIterates;
  begin(plan, history);
  if (heun_) heun_sensitivities(plan, history, runner);
  ConvergenceVerdict verdict = ConvergenceVerdict::kContinue;
  for (int j = 0;; ++j) {
    // A test on the iterates is known before their pass (D-17: that pass needs no perturbed
    // runs; a divergence needs no pass at all unless fixed-H mode continues regardless).
    if (test_kind_ == Test::kIterates && j >= 1 && !semi) {
      verdict = judge(iterate_difference(), fixed);
    }
    if (verdict == ConvergenceVerdict::kDiverged) return finish(plan, history, runner, true);
    const bool final_known = verdict != ConvergenceVerdict::kContinue || j == last_pass;
    const bool perturbed = !final_known && wants_perturbed_runs(plan);
    build_commands(plan, history, perturbed);
    const executors::PassOutcome& outcome = runner.pass(plan.t_end, commands_);
    passes_ = j;
    if (!outcome.ok) return subsystem_failure(outcome);
    for (std::size_t i = 0; i < system.subsystem_count(); ++i) {
      y_[i] = outcome.subsystems[i].nominal.outputs;
    }
    mon_prev_.swap(mon_);
    system.gather_monitored(y_, mon_);
    if (j == 0) mon_pre_ = mon_;
    if (test_kind_ == Test::kOutputs && j >= 1) verdict = judge(output_difference(), fixed);
    if (verdict == ConvergenceVerdict::kConverged || (semi && j == last_pass)) {
      return finish(plan, history, runner, false);
    }
    if (verdict == ConvergenceVerdict::kDiverged || j == last_pass) {
      return finish(plan, history, runner, true);
    }
    if (!next_iterate(plan, history, outcome, perturbed)) {
      return finish(plan, history, runner, true);  // a singular J (D-11)
    }
  }
}

AttemptResult IterativeScheme::subsystem_failure(const executors::PassOutcome& outcome) const {
  AttemptResult r;
  r.iterative = true;
  r.corrector_passes = passes_;
  r.jacobian_evaluations = jacobians_;
  r.subsystem_failed = true;
  r.failed_subsystem = outcome.failed_subsystem;
  r.error = outcome.error;
  return r;
}

// u_{N+1}, the outputs and the estimate of a finished iteration (METHODS §4.1, §4.4, §5.1).
AttemptResult IterativeScheme::finish(const control::StepPlan& plan,
                                      const coupling::CouplingHistory& history, PassRunner& runner,
                                      bool corrector_failed) {
  const system::CoupledSystem& system = *system_;
  AttemptResult r;
  r.iterative = true;
  r.corrector_passes = passes_;
  r.jacobian_evaluations = jacobians_;
  r.corrector_failed = corrector_failed;
  const bool fixed = options_.control.mode == control::StepSizeMode::kFixed;
  if (corrector_failed) {  // the next attempt starts with a fresh Jacobian
    jacobian_valid_ = false;
    if (secant_) secant_->clear();
  }
  if (corrector_failed && !fixed) return r;  // rejected: r = 0.25 (D-26)
  auto& u_next = runner.u_next();
  if (copt_.iteration == IterationKind::kSemiImplicit) {
    u_next.resize(system.coupling_count());
    system.evaluate_couplings(y_, u_next);  // u_{N+1} = φ(y^c) (§4.4 step 4)
    // A multiplier has no φ: it keeps the corrected value (seed 004: one corrector pass).
    for (std::size_t k = 0; k < u_next.size(); ++k) {
      if (system.is_constraint(k)) u_next[k] = s_[k];
    }
  } else {
    u_next = s_;  // the end value of the last pass (§4.1 result, D-22)
  }
  auto& outputs = runner.outputs();
  for (std::size_t i = 0; i < system.subsystem_count(); ++i) outputs[i] = y_[i];
  const control::ErrorTolerances& tol = options_.control.tolerances;
  if (plan.estimator == control::Estimator::kImCV) {
    r.estimate = control::estimate_coupling_variables(u_pre_, u_next, tol);
  } else if (plan.estimator == control::Estimator::kImMD) {
    r.estimate = control::estimate_states(
        control::Estimator::kImMD, mon_, mon_pre_, system.monitored_groups(),
        control::milne_ratios(history, plan.kappa, plan.t_end), tol);
  }
  pending_correction_.resize(u_next.size());
  for (std::size_t k = 0; k < u_next.size(); ++k) {
    pending_correction_[k] = std::abs(u_next[k] - u_pre_[k]);
  }
  return r;
}

void IterativeScheme::concluded(bool accepted) {
  if (accepted && !pending_correction_.empty()) correction_ = pending_correction_;
  pending_correction_.clear();
}

std::vector<std::vector<double>> IterativeScheme::export_state() const {
  return {correction_};
}

void IterativeScheme::import_state(const std::vector<std::vector<double>>& state) {
  if (state.size() != 1 || (!state[0].empty() && state[0].size() != s_.size())) {
    throw std::invalid_argument("iterative scheme state: expected one correction of " +
                                std::to_string(s_.size()) + " values");
  }
  correction_ = state[0];
  pending_correction_.clear();
}

}  // namespace macrostep::schemes

// Iterative schemes: implicit, semi-implicit, waveform (implicit.hpp; METHODS.md §4.1-4.6,
// §5.1, D-13 to D-22; seed 000 §2.4.2-2.4.3, App. A; seed 002 §2.4).
#include "macrostep/schemes/implicit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "macrostep/control/error_constants.hpp"
#include "macrostep/control/estimators.hpp"
#include "macrostep/corrector/jacobian_registry.hpp"
#include "macrostep/polynomials/builders.hpp"

namespace macrostep::schemes {

using corrector::ConvergenceVerdict;
using corrector::IterationKind;

IterativeScheme::IterativeScheme(corrector::CorrectorOptions options) : copt_(std::move(options)) {
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
        control::to_string(estimator), corrector::iteration_name(copt_.iteration)));
  }
  if (options.control.mode == control::StepSizeMode::kVariable && estimator == Estimator::kNone) {
    throw std::invalid_argument("a controlled step size needs an error estimator (imMD or imCV)");
  }
  const auto& registry = corrector::JacobianRegistry::instance();
  strategy_ = registry.make(copt_.jacobian, copt_);
  const corrector::JacobianTraits traits = strategy_->traits();
  if (system.has_constraints() &&
      (copt_.iteration == IterationKind::kWaveform || !traits.constraints)) {
    // A multiplier has no fixed-point map u = φ(y) for waveform relaxation to work on (METHODS
    // §8, D-45: Newton with ∂y/∂u); the strategy says whether it can give that ∂y/∂u.
    throw std::invalid_argument(fmt::format(
        "a constraint coupling (joint) needs the implicit or semi-implicit scheme with jacobian "
        "{}",
        registry.names_where([](const corrector::JacobianTraits& t) { return t.constraints; })));
  }
  if (!traits.feedthrough && system.has_feedthrough()) {
    // Jacobians made without perturbed runs see the inputs only through the subsystems' states
    // (§4.5): they would miss the direct ∂y/∂u that the perturbed runs contain.
    throw std::invalid_argument(fmt::format(
        "the {} interface Jacobians miss direct feed-through (∂y/∂u); with feed-through "
        "subsystems use jacobian {}",
        registry.names_where([](const corrector::JacobianTraits& t) { return !t.feedthrough; },
                             "and"),
        registry.names_where([](const corrector::JacobianTraits& t) { return t.feedthrough; })));
  }
  system_ = &system;
  options_ = options;
  const std::size_t ns = system.subsystem_count(), nc = system.coupling_count();
  commands_.assign(ns, {});
  y_.assign(ns, {});
  for (std::size_t i = 0; i < ns; ++i) y_[i].assign(system.subsystem(i).output_size(), 0.0);
  for (auto* v : {&u_pre_, &s_, &s_prev_, &delta_, &phi_, &step_}) v->assign(nc, 0.0);
  mon_.assign(system.monitored_outputs().size(), 0.0);
  mon_prev_ = mon_pre_ = mon_;
  correction_.clear();
  pending_correction_.clear();
  newton_ = copt_.iteration != IterationKind::kWaveform;
  if (newton_) strategy_->start(system);
}

// Δ^0 (METHODS §4.2, D-13) and the predictor s^0 = u^pre.
void IterativeScheme::begin(const control::StepPlan& plan,
                            const polynomials::CouplingHistory& history) {
  predict(options_, history, plan.kappa, plan.t_end, u_pre_);
  s_ = u_pre_;
  for (std::size_t k = 0; k < delta_.size(); ++k) {
    delta_[k] = correction_.empty() ? copt_.perturbation_min
                                    : std::max(correction_[k], copt_.perturbation_min);
  }
  test_.reset();
  last_iterate_difference_ = last_output_difference_ = 0.0;
  passes_ = 0;
}

// Step polynomials p(t; s) and, if asked, one perturbed run per input (end value s_k + Δ_k).
void IterativeScheme::build_commands(const control::StepPlan& plan,
                                     const polynomials::CouplingHistory& history, bool perturbed) {
  const system::CoupledSystem& system = *system_;
  for (std::size_t i = 0; i < system.subsystem_count(); ++i) {
    const auto in = system.feed_channels(i);
    sel_.assign(in.begin(), in.end());
    auto& cmd = commands_[i];
    cmd.nominal = polynomials::step_polynomial(history, plan.kappa, plan.t_end, s_, sel_);
    system.sum_feeds(i, cmd.nominal);
    cmd.extra.clear();
    if (!perturbed) continue;
    // A summed input is perturbed once, by the largest of its feeds' Δ; the Jacobian column
    // serves each feed (∂input/∂u_c = 1).
    for (std::size_t c = 0; c < cmd.nominal.channels; ++c) {
      cmd.extra.push_back(runner::ExtraRun::perturbed(
          static_cast<std::uint32_t>(c), cmd.nominal.end_value(c) + system.feed_max(i, c, delta_)));
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

// Whether this pass must run the perturbed runs the Jacobian strategy asks for (when a next
// iterate follows; the waveform relaxation needs none).
bool IterativeScheme::wants_perturbed_runs(const control::StepPlan& plan) const {
  return newton_ && strategy_->wants_perturbed_runs(plan);
}

// s^{j+1} from the pass just run (METHODS §4.1 by the Jacobian strategy, §4.6): false if no
// step can be made (a singular J).
bool IterativeScheme::next_iterate(const control::StepPlan& plan,
                                   const polynomials::CouplingHistory& history,
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
  const corrector::PassView pass{plan, history, outcome, perturbed, delta_, y_, phi_};
  if (!strategy_->next_iterate(pass, step_, s_)) return false;
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
  if (newton_) strategy_->observe_rate(test_.rate());  // e.g. reuse's staleness rule
  return fixed && v == ConvergenceVerdict::kDiverged ? ConvergenceVerdict::kContinue : v;
}

AttemptResult IterativeScheme::attempt(const control::StepPlan& plan,
                                       const polynomials::CouplingHistory& history,
                                       PassRunner& runner) {
  const system::CoupledSystem& system = *system_;
  const bool fixed = options_.control.mode == control::StepSizeMode::kFixed;
  const bool semi = copt_.iteration == IterationKind::kSemiImplicit;
  const int last_pass = semi ? 1 : copt_.max_passes;
  test_kind_ =
      plan.estimator == control::Estimator::kImMD && !semi ? Test::kOutputs : Test::kIterates;
  begin(plan, history);
  if (newton_) {
    strategy_->begin_attempt({plan, history, [&runner](std::size_t i, std::span<double> z) {
                                runner.accepted_state(i, z);
                              }});
  }
  ConvergenceVerdict verdict = ConvergenceVerdict::kContinue;
  for (int j = 0;; ++j) {
    // A test on the iterates is known before their pass (D-17: that pass needs no perturbed
    // runs; a divergence needs no pass at all unless fixed-H mode continues regardless).
    if (test_kind_ == Test::kIterates && j >= 1 && !semi) {
      verdict = judge(last_iterate_difference_, fixed);  // ‖s^j − s^{j−1}‖
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
    if (test_kind_ == Test::kOutputs && j >= 1) {
      last_output_difference_ = output_difference();
      verdict = judge(last_output_difference_, fixed);
    }
    if (verdict == ConvergenceVerdict::kConverged || (semi && j == last_pass)) {
      return finish(plan, history, runner, false);
    }
    if (verdict == ConvergenceVerdict::kDiverged || j == last_pass) {
      return finish(plan, history, runner, true);
    }
    if (!next_iterate(plan, history, outcome, perturbed)) {
      return finish(plan, history, runner, true);  // a singular J (D-11)
    }
    const double previous = last_iterate_difference_;
    if (test_kind_ == Test::kIterates || !copt_.final_pass) {
      last_iterate_difference_ = iterate_difference();  // ‖s^{j+1} − s^j‖, once per iterate
    }
    if (integrated_iterate_accepted(previous)) return finish(plan, history, runner, false);
  }
}

// D-50 (final_pass = false): after a Newton step, whether the iterate whose pass just ran is the
// result. Then s^j becomes u_{N+1} again: the subsystems' states are those of the inputs they
// integrated, and no pass with s^{j+1} follows. The iterates decide, and under imMD's output test
// the monitored outputs too, whose next difference is predicted as R·‖y^j − y^{j−1}‖ with the
// iterates' rate R (the outputs follow the inputs' end values linearly within a step; where the
// Newton steps turn, as with a kept J, the prediction is low, hence both).
bool IterativeScheme::integrated_iterate_accepted(double previous) {
  if (copt_.final_pass || !newton_ || copt_.iteration != IterationKind::kNewton) return false;
  const double next = last_iterate_difference_;
  if (!(previous > 0.0)) return false;  // R undefined before the first corrector pass (D-16)
  const double rate = next / previous;
  if (!corrector::integrated_iterate_converged(previous, next, copt_.tau, copt_.divergence)) {
    return false;
  }
  if (test_kind_ == Test::kOutputs &&
      !corrector::integrated_iterate_converged(
          last_output_difference_, rate * last_output_difference_, copt_.tau, copt_.divergence)) {
    return false;
  }
  strategy_->observe_rate(rate);
  s_ = s_prev_;
  return true;
}

AttemptResult IterativeScheme::subsystem_failure(const executors::PassOutcome& outcome) {
  if (newton_) strategy_->end_attempt(false);
  AttemptResult r;
  r.iterative = true;
  r.semi_implicit = copt_.iteration == IterationKind::kSemiImplicit;
  r.corrector_passes = passes_;
  r.jacobian_evaluations = strategy_->evaluations();
  r.subsystem_failed = true;
  r.failed_subsystem = outcome.failed_subsystem;
  r.error = outcome.error;
  r.model_terminated = outcome.terminated;
  return r;
}

// u_{N+1}, the outputs and the estimate of a finished iteration (METHODS §4.1, §4.4, §5.1).
AttemptResult IterativeScheme::finish(const control::StepPlan& plan,
                                      const polynomials::CouplingHistory& history,
                                      PassRunner& runner, bool corrector_failed) {
  const system::CoupledSystem& system = *system_;
  AttemptResult r;
  r.iterative = true;
  r.semi_implicit = copt_.iteration == IterationKind::kSemiImplicit;
  r.corrector_passes = passes_;
  r.jacobian_evaluations = strategy_->evaluations();
  r.corrector_failed = corrector_failed;
  const bool fixed = options_.control.mode == control::StepSizeMode::kFixed;
  if (newton_) strategy_->end_attempt(corrector_failed);
  if (corrector_failed && !fixed) return r;  // rejected: r = 0.25 (D-26)
  auto& u_next = runner.u_next();
  if (copt_.iteration == IterationKind::kSemiImplicit) {
    u_next.resize(system.coupling_count());
    system.evaluate_couplings(y_, u_next);  // u_{N+1} = φ(y^c) (§4.4 step 4)
    // A multiplier has no φ: it keeps the corrected value (seed 004: one corrector pass).
    for (std::size_t k = 0; k < u_next.size(); ++k) {
      if (system.is_constraint(k)) u_next[k] = s_[k];
    }
    // What a second corrector pass would start from: ‖φ(y^c) − s^c‖ in the weights of the
    // iterate test (near 0 where one Newton step solves the coupling).
    r.iteration_residual =
        control::scaled_difference_norm(u_next, s_, 1.0, u_pre_, options_.control.tolerances,
                                        control::WeightGroup::kCouplingVariable);
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
  std::vector<std::vector<double>> state{correction_};
  if (newton_) {
    auto kept = strategy_->export_state();
    for (auto& a : kept) state.push_back(std::move(a));
  }
  return state;
}

void IterativeScheme::import_state(const std::vector<std::vector<double>>& state) {
  if (state.empty() || (!state[0].empty() && state[0].size() != s_.size())) {
    throw std::invalid_argument("iterative scheme state: expected one correction of " +
                                std::to_string(s_.size()) + " values");
  }
  if (state.size() > 1) {
    if (!newton_) throw std::invalid_argument("iterative scheme state: waveform keeps no J");
    strategy_->import_state({state.begin() + 1, state.end()});
  }
  correction_ = state[0];
  pending_correction_.clear();
}

}  // namespace macrostep::schemes

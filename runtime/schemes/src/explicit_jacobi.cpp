// Explicit Jacobi scheme (explicit_jacobi.hpp; METHODS.md §3.1, §5.1, §6.4; seed 000 §2.4.1, §3).
#include "macrostep/schemes/explicit_jacobi.hpp"

#include <fmt/format.h>

#include "macrostep/control/error_constants.hpp"
#include "macrostep/control/estimators.hpp"
#include "macrostep/polynomials/builders.hpp"

namespace macrostep::schemes {

void ExplicitJacobi::start(const system::CoupledSystem& system, const SchemeOptions& options) {
  if (system.has_constraints()) {
    throw std::invalid_argument(
        "the explicit scheme cannot solve a constraint coupling (joint): its multipliers have no "
        "u = φ(y); use the implicit or semi-implicit scheme");
  }
  using control::Estimator;
  const Estimator estimator = options.control.estimator;
  if (estimator == Estimator::kImMD || estimator == Estimator::kImCV) {
    throw std::invalid_argument(fmt::format(
        "estimator {} belongs to the implicit scheme; the explicit scheme takes exLE, exMD, "
        "exCV (or none with a fixed step size)",
        control::to_string(estimator)));
  }
  if (options.control.mode == control::StepSizeMode::kVariable && estimator == Estimator::kNone) {
    throw std::invalid_argument(
        "a controlled step size needs an error estimator (exLE, exMD or exCV)");
  }
  system_ = &system;
  options_ = options;
  const std::size_t ns = system.subsystem_count();
  commands_.assign(ns, {});
  extra_outputs_.assign(ns, {});
  u_pre_.assign(system.coupling_count(), 0.0);
  u_hat_.assign(system.coupling_count(), 0.0);
  monitored_.assign(system.monitored_outputs().size(), 0.0);
  monitored_hat_ = monitored_;
  start_approximations(system);
}

void ExplicitJacobi::start_approximations(const system::CoupledSystem& system) {
  approximation_.clear();
  non_lagrange_.assign(system.subsystem_count(), false);
  rates_.reset();
  const auto& approximations = options_.approximations;
  check_approximations(system, approximations);
  if (approximations.empty()) return;
  bool rates = false;
  for (const auto& a : approximations) {
    approximation_.push_back(&a);
    rates = rates || a.uses_rates();
  }
  for (std::size_t i = 0; i < system.subsystem_count(); ++i) {
    for (const std::size_t c : system.feed_channels(i))
      if (!approximations[c].is_lagrange()) non_lagrange_[i] = true;
  }
  if (!rates) return;
  // u̇_0 from the initial outputs, beside u_0 at t_start.
  std::vector<std::vector<double>> outputs;
  const std::vector<double> u0 = system.initial_couplings();
  initial_outputs(system, u0, outputs);
  rates_next_.assign(system.coupling_count(), 0.0);
  system.evaluate_rates(outputs, rates_next_);
  rates_.emplace(system.coupling_count());
  rates_->push(options_.control.t_start, rates_next_);
}

void ExplicitJacobi::concluded(bool accepted) {
  if (accepted && rates_) rates_->push(t_next_, rates_next_);
}

std::vector<std::vector<double>> ExplicitJacobi::export_state() const {
  std::vector<std::vector<double>> state;
  if (!rates_) return state;
  state.emplace_back();
  for (std::size_t i = 0; i < rates_->size(); ++i) {
    state.front().push_back(rates_->time(i));
    const auto values = rates_->values(i);
    state.emplace_back(values.begin(), values.end());
  }
  return state;
}

void ExplicitJacobi::import_state(const std::vector<std::vector<double>>& state) {
  if (!rates_) {
    MacroStepScheme::import_state(state);
    return;
  }
  if (state.empty() || state.front().empty() || state.size() != state.front().size() + 1) {
    throw std::invalid_argument("explicit scheme state: the rate history is malformed");
  }
  rates_->clear();
  for (std::size_t i = 0; i + 1 < state.size(); ++i) {
    if (state[i + 1].size() != rates_->channels()) {
      throw std::invalid_argument("explicit scheme state: a rate point of the wrong size");
    }
    rates_->push(state.front()[i], state[i + 1]);  // throws for times out of order
  }
}

void ExplicitJacobi::assume_exact_past(std::span<const double> times,
                                       std::span<const std::vector<std::vector<double>>> outputs) {
  if (!rates_) return;
  if (times.size() != outputs.size()) {
    throw std::invalid_argument("explicit scheme: one set of outputs per past point");
  }
  rates_->clear();
  for (std::size_t j = 0; j < times.size(); ++j) {
    system_->evaluate_rates(outputs[j], rates_next_);
    rates_->push(times[j], rates_next_);  // throws for times out of order
  }
}

void ExplicitJacobi::at_event(std::span<const std::vector<double>> outputs_after) {
  if (!rates_) return;
  system_->evaluate_rates(outputs_after, rates_next_);
  rates_->jump_newest(rates_next_);
}

AttemptResult ExplicitJacobi::attempt(const control::StepPlan& plan,
                                      const polynomials::CouplingHistory& hist,
                                      PassRunner& runner) {
  using control::Estimator;
  const system::CoupledSystem& system = *system_;
  const std::size_t ns = system.subsystem_count();
  const int kappa = plan.kappa;
  const double t1 = plan.t_end;
  const Estimator effective = plan.estimator;

  // 1. Predictor and step polynomials (METHODS §2.2 table).
  predict(options_, hist, kappa, t1, u_pre_);
  // û^pre: exMD's comparison end value, and the end value of exLE's comparison polynomial
  // (both P_{κ+1}(T_{N+1}) through the κ+2 newest points), which the premise check reads.
  const bool check_premise = (effective == Estimator::kExMD || effective == Estimator::kExLE) &&
                             options_.prediction_ratio_limit > 0.0;
  if (effective == Estimator::kExMD || check_premise)
    polynomials::milne_comparison_prediction(hist, kappa, t1, u_hat_);
  // Built over the coupling variables feeding the inputs, then summed into inputs (sum_feeds).
  feed_nominal_.resize(ns);
  for (std::size_t i = 0; i < ns; ++i) {
    const auto in = system.feed_channels(i);
    sel_.assign(in.begin(), in.end());
    auto& cmd = commands_[i];
    feed_nominal_[i] =
        non_lagrange_.empty() || !non_lagrange_[i]
            ? polynomials::step_polynomial(hist, kappa, t1, u_pre_, sel_)
            : polynomials::approximation_polynomial(hist, rates_ ? &*rates_ : nullptr,
                                                    approximation_, kappa, t1, sel_);
    cmd.nominal = feed_nominal_[i];
    system.sum_feeds(i, cmd.nominal);
    cmd.extra.clear();
    model::SupportPoints comparison;
    if (effective == Estimator::kExMD) {
      comparison = polynomials::step_polynomial(hist, kappa, t1, u_hat_, sel_);
    } else if (effective == Estimator::kExLE) {
      comparison = polynomials::extrapolation_comparison_polynomial(hist, kappa, t1, sel_);
    } else {
      continue;
    }
    system.sum_feeds(i, comparison);
    cmd.extra.push_back(runner::ExtraRun::comparison(comparison));
  }

  // 2. One pass (step 3 of §3.1).
  const executors::PassOutcome& outcome = runner.pass(t1, commands_);
  AttemptResult result;
  if (!outcome.ok) {
    result.subsystem_failed = true;
    result.failed_subsystem = outcome.failed_subsystem;
    result.error = outcome.error;
    result.model_terminated = outcome.terminated;
    return result;
  }

  // 3. The consistent update u_{N+1} = φ(y_{N+1}(u_{N+1})) (Eq. 2.22, D-1; without feed-through
  // Eq. 2.25). The runs ended with u_pre only where the polynomial is Lagrange's; the others
  // ended with their own end values.
  auto& outputs = runner.outputs();
  for (std::size_t i = 0; i < ns; ++i) outputs[i] = outcome.subsystems[i].nominal.outputs;
  auto& u_new = runner.u_next();
  u_new.resize(system.coupling_count());
  if (!update_.update(system, outcome, feed_nominal_, t1, options_.control.tolerances, runner,
                      u_new, outputs, result)) {
    return result;
  }
  if (rates_) {
    system.evaluate_rates(outputs, rates_next_);
    t_next_ = t1;
  }

  // 4. The estimate.
  const control::ErrorTolerances& tol = options_.control.tolerances;
  if (effective == Estimator::kExCV) {
    result.estimate = control::estimate_coupling_variables(u_pre_, u_new, tol);
  } else if (effective == Estimator::kExMD || effective == Estimator::kExLE) {
    for (std::size_t i = 0; i < ns; ++i) extra_outputs_[i] = outcome.subsystems[i].extra[0].outputs;
    system.gather_monitored(outputs, monitored_);
    system.gather_monitored(extra_outputs_, monitored_hat_);
    const control::MilneRatios ratios = effective == Estimator::kExMD
                                            ? control::milne_ratios(hist, kappa, t1)
                                            : control::MilneRatios{};
    result.estimate = control::estimate_states(effective, monitored_, monitored_hat_,
                                               system.monitored_groups(), ratios, tol);
    // The comparison measured the predictor's miss as û^pre − u^pre; where the coupling
    // variables landed farther away, the estimate follows the actual miss (D-52).
    if (check_premise) {
      const double rho = control::prediction_ratio(u_pre_, u_hat_, u_new, tol);
      result.estimate_raise = control::raise_for_prediction_ratio(result.estimate, rho,
                                                                  options_.prediction_ratio_limit);
      // A comparison that moved nothing (a history of equal values) gives 0, which no raise can
      // scale: where the coupling variables missed their prediction by more than their
      // tolerance all the same, that miss judges the step (exCV's estimate, D-52).
      if (result.estimate.norm() == 0.0) {
        const control::ErrorEstimate miss =
            control::estimate_coupling_variables(u_pre_, u_new, tol);
        if (miss.norm() > 1.0) {
          result.unseen_miss = true;
          result.estimate = miss;
        }
      }
    }
  }
  return result;
}

bool FeedthroughUpdate::update(const system::CoupledSystem& system,
                               const executors::PassOutcome& outcome,
                               std::span<const model::SupportPoints> feed_polynomials, double t1,
                               const control::ErrorTolerances& tol, PassRunner& runner,
                               std::vector<double>& u_new,
                               std::vector<std::vector<double>>& outputs, AttemptResult& result) {
  if (!system.has_feedthrough()) {
    system.evaluate_couplings(outputs, u_new);  // Eq. 2.25, bit for bit as before
    return true;
  }
  feedthrough_.resize(system.subsystem_count());
  u_end_.assign(system.coupling_count(), 0.0);
  for (std::size_t i = 0; i < system.subsystem_count(); ++i) {
    feedthrough_[i] = outcome.subsystems[i].nominal.feedthrough;
    const auto in = system.feed_channels(i);
    // What the integrator evaluated its outputs with: p(T_{N+1}) (Lagrange: u_pre), per feed.
    end_inputs_.resize(in.size());
    feed_polynomials[i].evaluate(t1, end_inputs_);
    for (std::size_t j = 0; j < in.size(); ++j) u_end_[in[j]] = end_inputs_[j];
  }
  // The executor's evaluation of the subsystems consistent_update asks (outputs not affine in
  // u); a failure is kept to name the subsystem and the reason.
  const executors::EvaluationOutcome* failed = nullptr;
  const system::OutputEvaluator evaluate = [&](std::span<const std::vector<double>> inputs,
                                               std::span<std::vector<double>> y,
                                               std::span<std::vector<double>> d) {
    failed = runner.evaluate_outputs_into(inputs, y, d);
    return failed == nullptr;
  };
  const system::ConsistentUpdate update =
      system.consistent_update(outputs, feedthrough_, u_end_, tol, u_new, evaluate);
  runner.consistent_update_statistics().newton_iterations +=
      static_cast<std::uint64_t>(update.iterations);
  if (update.converged) return true;
  // D-26: rejected with r = 0.25 like a failed subsystem; the pipeline stops after
  // max_consecutive_failures and names subsystem and time.
  result.subsystem_failed = true;
  if (failed != nullptr) {
    result.failed_subsystem = failed->failed_subsystem;
    result.error = failed->error;
    return false;
  }
  result.failed_subsystem = feedthrough_subsystem(system, update.worst);
  result.error = fmt::format(
      "the consistent update (D-1: coupling equations with feed-through) did not converge at "
      "t = {:.9g}: coupling variable {} keeps the weighted residual {:.3g} after {} Newton steps",
      t1, system.coupling_name(update.worst), update.residual, update.iterations);
  return false;
}

std::size_t feedthrough_subsystem(const system::CoupledSystem& system, std::size_t c) {
  for (std::size_t k = 0; k < system.law_count(); ++k) {
    const auto& law = system.law(k);
    if (c < system.law_offset(k) || c >= system.law_offset(k) + law.write_count()) continue;
    for (const auto& r : law.reads()) {
      if (system.subsystem(r.subsystem).has_feedthrough()) return r.subsystem;
    }
    return law.reads().empty() ? 0 : law.reads().front().subsystem;
  }
  return 0;
}

void check_approximations(const system::CoupledSystem& system,
                          std::span<const polynomials::Approximation> approximations) {
  if (approximations.empty()) return;
  if (approximations.size() != system.coupling_count()) {
    throw std::invalid_argument(fmt::format("{} approximations for {} coupling variables",
                                            approximations.size(), system.coupling_count()));
  }
  for (std::size_t c = 0; c < approximations.size(); ++c) {
    if (approximations[c].uses_rates() && !system.has_rate(c)) {
      throw std::invalid_argument(fmt::format(
          "approximation \"{}\" of {} needs the rate du/dt from the outputs, and its coupling law "
          "has a damper (the rate would need accelerations; seed 003 §2.2.2): use a b = 0 set such "
          "as \"const-2-2-b0\", or an undamped coupling",
          approximations[c].name, system.coupling_name(c)));
    }
  }
}

SchemeResult run_explicit(const system::CoupledSystem& system, executors::Executor& executor,
                          const SchemeOptions& options, const AcceptedObserver& on_accepted,
                          const ProgressObserver& on_progress) {
  SchemeResult result;
  run_explicit(system, executor, options, on_accepted, on_progress, result);
  return result;
}

void run_explicit(const system::CoupledSystem& system, executors::Executor& executor,
                  const SchemeOptions& options, const AcceptedObserver& on_accepted,
                  const ProgressObserver& on_progress, SchemeResult& result) {
  ExplicitJacobi scheme;
  run_scheme(system, executor, scheme, options, on_accepted, on_progress, result);
}

}  // namespace macrostep::schemes

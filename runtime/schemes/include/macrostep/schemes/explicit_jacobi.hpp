// Explicit Jacobi co-simulation with extrapolated coupling variables, fixed (exH) or
// error-controlled macro-step size and order (METHODS.md §3.1, §5, §6; seed 000 §2.4.1, §3): the
// first scheme on the macro-step pipeline (pipeline.hpp).
//
// One attempt (METHODS §3.1, §6.4):
//   1. u_pre = P_κ(T_{N+1}) from the accepted history (Lagrange, or least squares §2.3); a
//      subsystem with an input approximated otherwise (SchemeOptions::approximations: C0/C1,
//      seed-003 sets; §2.4, §2.5) gets that approximation's polynomial in the same support-point
//      form, and the seed-003 sets with b ≠ 0 read the rates u̇ the scheme keeps beside the
//      history (evaluated from the outputs at every accepted point, CouplingLaw::rate)
//   2. one pass: every subsystem integrates [T_N, T_{N+1}] from its T_N workspace with the step
//      polynomial p(t; u_pre) of its inputs; exLE/exMD add one comparison run per subsystem
//      (same T_N workspace, comparison polynomial) executed beside the nominal one
//   3. the consistent update u_{N+1} = phi(y_{N+1}(u_{N+1})) (Eq. 2.22, D-1): without
//      feed-through u_{N+1} = phi(y_{N+1}) (Eq. 2.25); with it Newton on the coupling equations
//      from the runs' end inputs (system::CoupledSystem::consistent_update, the replies' ∂y/∂u;
//      outputs not affine in the inputs evaluated at every iterate, FeedthroughUpdate), to 1e-3
//      in the coupling-variable weights. Not converged: the attempt is rejected like a
//      failed subsystem (r = 0.25, D-26), the error naming the coupling variable and time.
//   4. error estimate (exLE / exMD on the monitored outputs, exCV on u; D-33 fallback)
#pragma once

#include <optional>

#include "macrostep/schemes/pipeline.hpp"

namespace macrostep::schemes {

// The consistent update u_{N+1} = φ(y_{N+1}(u_{N+1})) after the last pass of an attempt
// (METHODS §1.1 Eq. 2.22, D-1), shared by the explicit Jacobi and the Gauss–Seidel schemes so
// that both solve the coupling equations alike. Without feed-through u_{N+1} = φ(y_{N+1})
// (Eq. 2.25, bit for bit evaluate_couplings); with it Newton on the coupling equations
// (system::CoupledSystem::consistent_update) from the inputs each subsystem's run ended with
// (feed_polynomials[i] at t1, per coupling variable feeding subsystem i: the Lagrange
// predictor's u_pre, another approximation's end value, or Gauss–Seidel's interpolated new
// value) and the replies' ∂y/∂u, to 1e-3 in the coupling-variable weights of `tol`. A feed-through
// subsystem whose outputs are not affine in its inputs (system::CoupledSystem::evaluated) is asked
// for its true outputs and ∂y/∂u at every Newton iterate (PassRunner::evaluate_outputs: one output
// evaluation per Newton step, only those subsystems asked); affine ones are moved with their D,
// exactly and without a message.
class FeedthroughUpdate {
 public:
  // outputs[i]: subsystem i's outputs from `outcome` (on return y_i(u_new) for feed-through
  // subsystems). False if Newton did not converge or an output evaluation failed: `result` then
  // carries a subsystem failure (rejected with r = 0.25 like one, D-26) naming the subsystem,
  // and the coupling variable and t1 or the evaluation's reason. `runner` evaluates outputs
  // after `outcome`'s pass, the attempt's last. Statistics go to runner's
  // consistent_update_statistics(). feed_polynomials[i]: subsystem i's nominal step polynomial
  // over system.feed_channels(i), before sum_feeds (the command's own when single_feeds(i)).
  bool update(const system::CoupledSystem& system, const executors::PassOutcome& outcome,
              std::span<const model::SupportPoints> feed_polynomials, double t1,
              const control::ErrorTolerances& tol, PassRunner& runner, std::vector<double>& u_new,
              std::vector<std::vector<double>>& outputs, AttemptResult& result);

 private:
  // The replies' ∂y/∂u and the runs' end inputs.
  std::vector<std::vector<double>> feedthrough_;
  std::vector<double> u_end_, end_inputs_;
};

class ExplicitJacobi final : public MacroStepScheme {
 public:
  void start(const system::CoupledSystem& system, const SchemeOptions& options) override;
  AttemptResult attempt(const control::StepPlan& plan, const polynomials::CouplingHistory& history,
                        PassRunner& runner) override;
  void concluded(bool accepted) override;
  // The rates u̇ kept beside the history (only for approximations that use rates): the times of
  // the points, then one array of values per point, oldest first. Empty otherwise.
  std::vector<std::vector<double>> export_state() const override;
  void import_state(const std::vector<std::vector<double>>& state) override;
  // The rates at the given points from the laws (CouplingLaw::rate of their outputs).
  void assume_exact_past(std::span<const double> times,
                         std::span<const std::vector<std::vector<double>>> outputs) override;
  void at_event(std::span<const std::vector<double>> outputs_after) override;

 private:
  const system::CoupledSystem* system_ = nullptr;
  SchemeOptions options_;
  std::vector<executors::SubsystemCommand> commands_;
  std::vector<model::SupportPoints> feed_nominal_;  // the nominal polynomials over the feeds
  std::vector<double> u_pre_, u_hat_;
  std::vector<std::vector<double>> extra_outputs_;
  std::vector<double> monitored_, monitored_hat_;
  std::vector<std::size_t> sel_;
  // Per coupling variable (empty: Lagrange everywhere), and per subsystem whether any input
  // is approximated otherwise.
  std::vector<const polynomials::Approximation*> approximation_;
  std::vector<bool> non_lagrange_;
  // u̇ at the accepted points (only when some approximation uses rates) and at the attempt's end.
  std::optional<polynomials::CouplingHistory> rates_;
  std::vector<double> rates_next_;
  double t_next_ = 0.0;
  FeedthroughUpdate update_;

  void start_approximations(const system::CoupledSystem& system);
};

// The subsystem to blame for coupling variable c's equation: the first feed-through subsystem
// its law reads (else the first it reads).
std::size_t feedthrough_subsystem(const system::CoupledSystem& system, std::size_t c);

// Throws std::invalid_argument unless `approximations` (SchemeOptions::approximations) fit the
// system: one per coupling variable (or none), and a rate u̇ from the law of every variable whose
// approximation uses rates (CouplingLaw::has_rate; a damper has none, seed 003 §2.2.2).
void check_approximations(const system::CoupledSystem& system,
                          std::span<const polynomials::Approximation> approximations);

// run_scheme with ExplicitJacobi. Throws std::invalid_argument also for an implicit estimator
// or a controlled step size without an estimator (a comparison estimator in fixed mode is
// allowed as monitoring only).
SchemeResult run_explicit(const system::CoupledSystem& system, executors::Executor& executor,
                          const SchemeOptions& options, const AcceptedObserver& on_accepted,
                          const ProgressObserver& on_progress = {});
void run_explicit(const system::CoupledSystem& system, executors::Executor& executor,
                  const SchemeOptions& options, const AcceptedObserver& on_accepted,
                  const ProgressObserver& on_progress, SchemeResult& result);

}  // namespace macrostep::schemes

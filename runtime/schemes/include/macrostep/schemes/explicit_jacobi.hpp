// Explicit Jacobi co-simulation with extrapolated coupling variables, fixed (exH) or
// error-controlled macro-step size and order (METHODS.md §3.1, §5, §6; seed 000 §2.4.1, §3): the
// first scheme on the macro-step pipeline (pipeline.hpp).
//
// One attempt (METHODS §3.1, §6.4):
//   1. u_pre = P_κ(T_{N+1}) from the accepted history (Lagrange, or least squares §2.3)
//   2. one pass: every subsystem integrates [T_N, T_{N+1}] from its T_N workspace with the step
//      polynomial p(t; u_pre) of its inputs; exLE/exMD add one comparison run per subsystem
//      (same T_N workspace, comparison polynomial) executed beside the nominal one
//   3. u_{N+1} = phi(y_{N+1}) (consistent update, D-1: no feed-through)
//   4. error estimate (exLE / exMD on the monitored outputs, exCV on u; D-33 fallback)
#pragma once

#include "macrostep/schemes/pipeline.hpp"

namespace macrostep::schemes {

class ExplicitJacobi final : public MacroStepScheme {
 public:
  void start(const system::CoupledSystem& system, const SchemeOptions& options) override;
  AttemptResult attempt(const control::StepPlan& plan, const coupling::CouplingHistory& history,
                        PassRunner& runner) override;

 private:
  const system::CoupledSystem* system_ = nullptr;
  SchemeOptions options_;
  std::vector<executors::SubsystemCommand> commands_;
  std::vector<double> u_pre_, u_hat_;
  std::vector<std::vector<double>> extra_outputs_;
  std::vector<double> monitored_, monitored_hat_;
  std::vector<std::size_t> sel_;
};

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

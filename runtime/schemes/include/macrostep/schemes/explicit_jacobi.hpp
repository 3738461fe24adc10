// Explicit Jacobi co-simulation with extrapolated coupling variables, fixed (exH) or
// error-controlled macro-step size and order (METHODS.md §3.1, §5, §6; seed 000 §2.4.1, §3).
//
// One macro step (METHODS §3.1, §6.4):
//   1. u_pre = P_κ(T_{N+1}) from the accepted history (Lagrange, or least squares §2.3)
//   2. every subsystem integrates [T_N, T_{N+1}] from its T_N workspace with the step
//      polynomial p(t; u_pre) of its inputs; exLE/exMD add one comparison run per subsystem
//      (same T_N workspace, comparison polynomial) executed beside the nominal one
//   3. u_{N+1} = phi(y_{N+1}) (consistent update, D-1: the system has no feed-through)
//   4. error estimate (exLE / exMD / exCV, D-33 fallback), accept or reject, next κ and H
//      (control::MacroStepController)
//   A subsystem failure (IDA error) counts as a failed attempt (r = 0.25, like a corrector
//   failure, D-26) in controlled mode and is an error in fixed mode; after
//   kMaxConsecutiveFailures failed attempts of one step the run stops with that error.
//
// The scheme owns nothing but the controller; the Executor runs the subsystems (in-process or,
// later, processes) and the observer receives every accepted macro point.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "macrostep/control/macro_step_controller.hpp"
#include "macrostep/executors/executor.hpp"
#include "macrostep/system/coupled_system.hpp"

namespace macrostep::schemes {

struct ExplicitOptions {
  control::MacroStepOptions control;  // mode, t_start/t_end, H, κ, estimator, tolerances
  bool least_squares = false;         // least-squares predictor (METHODS §2.3)
  int least_squares_points = 8;       // N_sp > κ+1
  int max_consecutive_failures = 25;
};

// A subsystem could not integrate a step (fixed mode) or failed too often (controlled mode).
class SubsystemFailure : public std::runtime_error {
 public:
  SubsystemFailure(const std::string& what, std::size_t subsystem, double time)
      : std::runtime_error(what), subsystem_(subsystem), time_(time) {}
  std::size_t subsystem() const { return subsystem_; }
  double time() const { return time_; }

 private:
  std::size_t subsystem_;
  double time_;
};

// One accepted macro point, handed to the observer: outputs[i] are subsystem i's outputs at
// time, u the coupling variables u_M. The spans are valid during the call only.
struct AcceptedPoint {
  std::uint64_t step = 0;  // N after acceptance (0 for the initial point)
  double time = 0.0;
  int kappa = 0;   // degree used for the step that ended here
  double h = 0.0;  // its size
  std::span<const std::vector<double>> outputs;
  std::span<const double> u;
};

// Time breakdown of seed 000 §4.4 / Eq. 4.5 (nanoseconds of wall time).
struct TimeBreakdown {
  std::int64_t solver_ns = 0;      // max over L of Σ_N T_{L,N} (nominal runs, every attempt)
  std::int64_t idle_ns = 0;        // Σ_N max_L T_{L,N} − solver (Eq. 4.5)
  std::int64_t extra_runs_ns = 0;  // comparison runs (summed over subsystems)
  std::int64_t interface_ns = 0;   // predictor, polynomials, coupling update, estimate, control
  std::int64_t snapshot_ns = 0;    // max over L of its snapshot time
  std::int64_t executor_ns = 0;    // wall time inside Executor::step (all runs, parallel)
  // Σ_N (slowest subsystem's send-to-reply time − its busy time); process executor only.
  std::int64_t communication_ns = 0;
  std::int64_t observer_ns = 0;  // output
  std::int64_t total_ns = 0;
};

struct ExplicitResult {
  control::MacroStepStatistics steps;
  std::vector<ida::AdvanceStats> subsystem_stats;
  std::vector<double> subsystem_solver_ns;  // Σ_N T_{L,N} per subsystem
  TimeBreakdown time;
  double end_time = 0.0;  // t_end, or the last accepted point of a run that failed
  double mean_h() const;
};

using AcceptedObserver = std::function<void(const AcceptedPoint&)>;
// Called after every attempt (accepted or not) for progress reporting; may be empty.
using ProgressObserver = std::function<void(const control::StepPlan&, bool accepted)>;

// Runs the co-simulation from options.control.t_start to t_end. The executor must have been
// created for `system` at t_start with u0 = system.initial_couplings(), with rollback enabled
// unless fixed mode without an estimator. Throws std::invalid_argument for options that make
// no sense (a comparison estimator in fixed mode is allowed as monitoring only; LS points
// <= κ+1), SubsystemFailure, control::StepSizeUnderflow.
ExplicitResult run_explicit(const system::CoupledSystem& system, executors::Executor& executor,
                            const ExplicitOptions& options, const AcceptedObserver& on_accepted,
                            const ProgressObserver& on_progress = {});

// The same, filling `result` in place: when the run stops with an exception, `result` holds
// the statistics and time breakdown up to the last attempt (end_time = the last accepted
// macro point), so that a failed run's metadata can report them.
void run_explicit(const system::CoupledSystem& system, executors::Executor& executor,
                  const ExplicitOptions& options, const AcceptedObserver& on_accepted,
                  const ProgressObserver& on_progress, ExplicitResult& result);

// Whether a run with these options needs executor rollback (snapshots).
bool needs_rollback(const ExplicitOptions& options);

}  // namespace macrostep::schemes

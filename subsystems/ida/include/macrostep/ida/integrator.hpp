// IDA (SUNDIALS 6.4.1) with KLU or dense LU, advancing one Subsystem exactly to macro-time
// points, with exact workspace snapshots (DESIGN.md contract 2; METHODS.md §4.7, §6.6).
//
// Ownership and lifetime:
//  - The integrator references a Subsystem it does not own; the subsystem must outlive it.
//  - The InputFunction passed to set_input() is referenced, not copied; it must stay valid
//    until the next set_input() or the end of the last advance_to() that uses it.
//  - A WorkspaceSnapshot is created by make_snapshot() of one integrator and can be restored
//    into that integrator or into any integrator built for the same subsystem with the same
//    options (a clone). Its buffers are allocated once; save()/restore() do not allocate
//    unless a KLU factorization grew (pivoting changed the fill).
//
//  - export_snapshot() returns bytes the caller owns; import_snapshot() reads the caller's bytes
//    only during the call (any alignment) and keeps no reference to them.
//
// Call order: construct (consistent initial state from the model at u(t0)) -> set_input()
// -> advance_to(T1) -> ... Every advance_to() starts from time() and ends exactly at its
// argument. save()/restore()/copy_state_from() may be called between advances. After a
// restore, time() and state() describe the restored point and the next advance continues
// bit-identically to the integrator the snapshot was taken from.
//
// Thread safety: one integrator per thread; distinct integrators on the same const Subsystem
// may run concurrently.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "macrostep/model/name_table.hpp"
#include "macrostep/model/subsystem.hpp"

namespace macrostep::ida {

// IDA's linear solver: sparse KLU, or SUNDIALS' dense LU.
enum class LinearSolver : std::uint8_t { kKlu, kDense };

// The names of the configuration ([solver] linear_solver) and the messages.
inline constexpr model::NameTable<LinearSolver, 2> kLinearSolverNames{{
    {LinearSolver::kKlu, "klu"},
    {LinearSolver::kDense, "dense"},
}};
constexpr std::optional<LinearSolver> parse_linear_solver(std::string_view name) {
  return model::parse_name(kLinearSolverNames, name);
}
constexpr const char* to_string(LinearSolver s) {
  return model::name_of(kLinearSolverNames, s);
}
inline std::vector<std::string_view> linear_solver_names() {
  return model::names_of(kLinearSolverNames);
}

struct IntegratorOptions {
  double rtol = 1e-6;
  double atol_pos = 1e-9;  // for StateRole::kPosition (seed 000 §5: 1e-3 * rtol)
  double atol_vel = 1e-6;  // for StateRole::kVelocity and kOther (seed 000 §5: rtol)
  LinearSolver linear_solver = LinearSolver::kKlu;
  int max_order = 5;
  long max_steps = 500000;    // per advance_to() call
  double initial_step = 0.0;  // 0: IDA's own choice
  // Micro-step adjustment of seed 000 Listing 4.1 before each step (stretch by up to 10 %,
  // halve to avoid a tiny final step). Off: IDA's plain stop-time clipping.
  bool stop_adjustment = true;
  // METHODS §6.6 option (a), "overshoot and interpolate" (seed 000 §4.3, K-4.3): no stop time;
  // advance_to(t_end) takes micro steps no longer than t_end − time() (and
  // AdvanceControl::max_step) until IDA passes t_end, then time() is t_end and state() /
  // outputs() interpolate there with IDA's current order; the next call continues from IDA's
  // own time, so [t_end, that time] was integrated with the inputs of the call before (the
  // method's known drawback). Allowed by the configuration only for fixed-H explicit runs
  // without an estimator (D-36): there is no snapshot of an interpolated state (save,
  // export_snapshot and copy_state_from throw std::logic_error while time() lies behind IDA's).
  // Replaces stop_adjustment.
  bool overshoot = false;
};

// Counters of one advance_to() call, or accumulated over a run.
struct AdvanceStats {
  long steps = 0;  // accepted micro steps
  long residual_evals = 0;
  long jacobian_evals = 0;
  long nonlinear_iterations = 0;
  long nonlinear_failures = 0;
  long error_test_failures = 0;
  long linear_setups = 0;
  // Σ h and Σ h² over the accepted micro steps (mean and spread of the micro-step size, K-4.3).
  double step_sum = 0.0;
  double step_square_sum = 0.0;
  long events = 0;  // events handled (model::Events)
  std::int64_t wall_ns = 0;
  AdvanceStats& operator+=(const AdvanceStats& o);
  AdvanceStats& operator-=(const AdvanceStats& o);
};

// Thrown when IDA fails (error-test or convergence failures, NaN residual, too many steps).
class IntegrationError : public std::runtime_error {
 public:
  IntegrationError(const std::string& what, double time, int ida_flag)
      : std::runtime_error(what), time_(time), flag_(ida_flag) {}
  double time() const { return time_; }
  int ida_flag() const { return flag_; }

 private:
  double time_;
  int flag_;
};

// The model asked to end the simulation (model::EventOutcome::terminate) at time().
class ModelTerminated : public IntegrationError {
 public:
  ModelTerminated(const std::string& what, double time);
};

// How one advance_to() treats the start of its interval T_N, where the caller's input polynomial
// may jump (METHODS §2.2: explicit polynomials jump at T_N). The defaults change
// nothing.
struct AdvanceControl {
  // Rewrite the BDF history at time() as if the current input had driven it: non-null, the
  // input the history was integrated with (the previous macro step's polynomial). Each history
  // value z(t_i) becomes z(t_i) + δ(t_i), where δ solves the model linearized at time(),
  // dF/dz'·δ' + dF/dz·δ + dF/du·(u(t) − previous(t)) = 0 with δ(time()) = 0 (a Taylor series
  // over the history span; both inputs must be polynomials of degree <= SupportPoints::
  // kMaxDegree in t, as support-point inputs are); IDA's modified divided differences phi[1..k]
  // are updated accordingly. Order, step size and z(time()) stay; z'(time()) becomes the one
  // consistent with the new input (to first order). Costs two Jacobian evaluations, one
  // factorization of dF/dz' and D + 3 solves with it (D = kMaxDegree); no micro step.
  const model::InputFunction* previous_input = nullptr;
  // Restart IDA at time() before integrating (DESIGN contract 2: only where the input jumps and
  // the configuration asks for it): IDAReInit with the current z and a z' consistent with the
  // input at time() (consistent_derivative()). The BDF history is dropped; IDA starts again at
  // order 1 with its own first step, and the step counters of the workspace start from 0.
  bool restart = false;
  // > 0: no micro step of this call longer than this (the interval's input is sampled at least
  // that often).
  double max_step = 0.0;
};

class WorkspaceSnapshot;

// The outputs an advance_to() sampled on the output grid (Integrator::set_output_grid): times[j]
// and values[j * output_size() + o].
struct OutputSamples {
  std::vector<double> times;
  std::vector<double> values;
};

// Version of the exported snapshot format (ipc/schema/state.capnp, IdaSnapshot). It changes
// whenever the meaning of the message changes; import_snapshot() accepts only this version.
inline constexpr std::uint32_t kSnapshotFormatVersion = 1;

class Integrator {
 public:
  // Throws std::invalid_argument for bad options, IntegrationError if IDA cannot be set up.
  Integrator(const model::Subsystem& subsystem, const IntegratorOptions& options,
             const model::InputFunction* input = nullptr);
  ~Integrator();
  Integrator(const Integrator&) = delete;
  Integrator& operator=(const Integrator&) = delete;

  const model::Subsystem& subsystem() const;
  const IntegratorOptions& options() const;

  // Inputs evaluated at every residual/Jacobian call; nullptr for a model without inputs.
  void set_input(const model::InputFunction* input);

  // Liveness for a watchdog in another thread or process (the process executor's hang
  // detection): `counter` is incremented at every residual and Jacobian evaluation, with
  // relaxed atomics and this integrator as its only writer (give every integrator that runs
  // concurrently its own counter). nullptr (the default) turns it off. The counter must stay
  // valid until the next set_progress_counter() or the integrator's end. Not part of the
  // workspace: snapshots neither save nor restore it.
  void set_progress_counter(std::atomic<std::uint64_t>* counter);

  // Output samples: with interval Δ > 0 every later advance_to() from t0 to t1 records the
  // outputs at the grid times k·Δ strictly inside (t0, t1) (model::grid_inside) in samples(),
  // which it clears first: the state from IDA's interpolant over the micro step that contains
  // the time (its dense output, IDAGetDky; read only, so the integration is the same as
  // without), the inputs and the equations of the mode at that time (before an event at that very
  // time). A subsystem without states samples y(t, u) in its mode. 0 (the default) turns it off.
  // Not for a subsystem that advances itself (it has no dense output): advance_to() then throws
  // std::logic_error. Not part of the workspace.
  void set_output_grid(double interval);
  const OutputSamples& samples() const;

  // Integrates from time() to exactly t_end (> time()). Returns the counters of this call
  // (wall_ns includes a restart's set-up).
  // A subsystem with events (model::Subsystem::events()) has them located and handled inside the
  // call (model/events.hpp): after each, IDA restarts at the event's time in the new mode (order
  // 1, its own first step). An event at t_end is handled before the call returns (the state at
  // t_end is the one after it); a model that chatters (more than 10 000 events in one call) ends
  // the call with IntegrationError, one that asks to terminate with ModelTerminated. Indicators
  // are compared from the call's start with the current input: a sign change that the input's
  // jump at time() alone makes is not an event. Not in overshoot mode (std::logic_error). A model
  // that throws ends the call with IntegrationError naming the cause. A residual or Jacobian value
  // that is not finite makes IDA retry the step with a smaller h; if IDA gives up on the step, or
  // meets 50 such values before passing the earliest time of one (the model fails from that time
  // on), the call ends with IntegrationError naming the value (r[i], or values[k] with its row and
  // column), the states of its row and column, and the time.
  AdvanceStats advance_to(double t_end, const AdvanceControl& control = {});

  // z' consistent with z at time() and the current input: one Newton step on F(t, z, z', u) = 0
  // from the history's z', with dF/dz' = J(cj = 1) - J(cj = 0) factored by KLU. Exact for models
  // whose residual is linear in z' with nonsingular dF/dz' (every built-in model); an algebraic
  // state (a zero column of dF/dz' with a diagonal entry in the pattern) keeps its z'; throws
  // IntegrationError if dF/dz' is singular otherwise.
  void consistent_derivative(std::span<double> zp) const;

  // How far the input's jump at time() moves the states within one micro step: the WRMS norm,
  // with IDA's error weights, of h·(z'_c − z'), z'_c = consistent_derivative(), z' the
  // history's derivative at time(), h the step IDA would try next. Above 1 the jump exceeds the
  // integrator's tolerance. 0 before the first step.
  double input_jump_norm() const;

  double time() const;
  // Current z and z' (read with IDAGetDky at time(), so also valid after a restore).
  void state(std::span<double> z, std::span<double> zp) const;
  // Outputs y(time(), z, u(time())).
  void outputs(std::span<double> y) const;
  // The subsystem's feed-through block ∂y/∂u at (time(), z, u(time())) (model::Subsystem::
  // feedthrough_jacobian: column-major, output_size() * input_size()).
  void feedthrough_jacobian(std::span<double> values) const;

  // Whether the last advance_to() handled an event at exactly its t_end (a time event there, or
  // a state or step event that fell on it). The current state is then the one after the event;
  // these read the one before it, at the same time(): the left limit, which the integration over
  // the step reached. The outputs and the feed-through block are evaluated with the mode before
  // the event and the input at time(). The *_before_event functions throw std::logic_error
  // without such an event. Reset by the next advance_to() and by restore(); not part of the
  // workspace.
  bool event_at_end() const;
  std::span<const double> state_before_event() const;
  const model::Subsystem& equations_before_event() const;
  void outputs_before_event(std::span<double> y) const;
  void feedthrough_jacobian_before_event(std::span<double> values) const;

  // The equations of the current mode (model::Mode::equations()), or the subsystem itself for a
  // model without events: what outputs at other inputs must be evaluated with.
  const model::Subsystem& equations() const;
  // The current mode, or null for a model without events.
  const model::Mode* mode() const;

  // Current BDF order and next step size (for tests and statistics).
  int current_order() const;
  double next_step_size() const;
  AdvanceStats total_stats() const;

  // Exact workspace snapshot (contract 2).
  std::unique_ptr<WorkspaceSnapshot> make_snapshot() const;
  void save(WorkspaceSnapshot& snapshot) const;
  void restore(const WorkspaceSnapshot& snapshot);
  // Makes this integrator an exact copy of `other` (same subsystem size and options): save()
  // on other into a scratch snapshot owned by this integrator, then restore() here.
  void copy_state_from(const Integrator& other);

  // Exportable snapshot: a Cap'n Proto message (ipc/schema/state.capnp, IdaSnapshot)
  // that another process imports into a freshly constructed integrator for the same subsystem
  // with the same options, and then continues bit-identically (contract 2):
  //   A: a.save(s); bytes = a.export_snapshot(s);   -> file, pipe, checkpoint
  //   B: Integrator b(subsystem, options, &input);  auto s = b.make_snapshot();
  //      b.import_snapshot(bytes, *s); b.restore(*s); b.advance_to(...)   // as A would
  // The message holds everything restore() uses, the KLU factorization as KLU's own arrays
  // (a refactorization from the Jacobian values could pivot differently), and what it was
  // made for: format version, SUNDIALS and KLU versions, state size, Jacobian nonzeros, a hash
  // of state roles and pattern, the linear solver kind and all IntegratorOptions.
  // Not in it (as with restore()): total_stats(), the input function, the progress counter.
  // Exporting the same state gives the same bytes.
  //
  // export_snapshot: `snapshot` must come from an integrator of this subsystem size, solver
  // and max_order (std::invalid_argument otherwise).
  // import_snapshot: overwrites `snapshot` (made by make_snapshot() of this integrator or one
  // like it) only on success. Throws std::invalid_argument if the message is well-formed but
  // not for this integrator (format/SUNDIALS/KLU version, size, structure, solver, options;
  // the message names the difference), std::runtime_error if the bytes are malformed,
  // truncated or inconsistent (every index IDA or KLU would follow is range-checked, so bad
  // bytes give an exception and never a crash later).
  std::vector<std::byte> export_snapshot(const WorkspaceSnapshot& snapshot) const;
  void import_snapshot(std::span<const std::byte> bytes, WorkspaceSnapshot& snapshot) const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// Opaque deep copy of an integrator's state. bytes() reports its size for cost accounting.
class WorkspaceSnapshot {
 public:
  ~WorkspaceSnapshot();
  WorkspaceSnapshot(const WorkspaceSnapshot&) = delete;
  WorkspaceSnapshot& operator=(const WorkspaceSnapshot&) = delete;
  std::size_t bytes() const;
  double time() const;

  struct Data;

 private:
  friend class Integrator;
  WorkspaceSnapshot();
  std::unique_ptr<Data> data_;
};

}  // namespace macrostep::ida

// IDA + KLU/dense integrator with exact workspace snapshots.
// METHODS.md §4.7 (rollback), §6.6 (micro steps at macro boundaries, Listing 4.1 / D-35);
// DESIGN.md contract 2.
//
// The snapshot reads and writes IDA's private memory (ida/ida_impl.h, ida/ida_ls_impl.h), the
// Newton solver's content and the KLU numeric factorization. That layout belongs to exactly one
// SUNDIALS release, hence the version guard in workspace_data.hpp (CMake checks it as well).
#include "macrostep/ida/integrator.hpp"

#include "integrator_impl.hpp"

namespace macrostep::ida {

AdvanceStats& AdvanceStats::operator+=(const AdvanceStats& o) {
  steps += o.steps;
  residual_evals += o.residual_evals;
  jacobian_evals += o.jacobian_evals;
  nonlinear_iterations += o.nonlinear_iterations;
  nonlinear_failures += o.nonlinear_failures;
  error_test_failures += o.error_test_failures;
  step_sum += o.step_sum;
  step_square_sum += o.step_square_sum;
  linear_setups += o.linear_setups;
  events += o.events;
  wall_ns += o.wall_ns;
  return *this;
}

AdvanceStats& AdvanceStats::operator-=(const AdvanceStats& o) {
  steps -= o.steps;
  residual_evals -= o.residual_evals;
  jacobian_evals -= o.jacobian_evals;
  nonlinear_iterations -= o.nonlinear_iterations;
  nonlinear_failures -= o.nonlinear_failures;
  error_test_failures -= o.error_test_failures;
  step_sum -= o.step_sum;
  step_square_sum -= o.step_square_sum;
  linear_setups -= o.linear_setups;
  events -= o.events;
  wall_ns -= o.wall_ns;
  return *this;
}

ModelTerminated::ModelTerminated(const std::string& what, double time)
    : IntegrationError(what, time, IDA_RTFUNC_FAIL) {}

namespace {

// Residual or Jacobian values that are not finite, met before IDA has passed the earliest time
// at which one was met: then the model fails from that time on, and IDA can only creep towards
// it (Impl::check_finite_residual). An overflow at too long a step costs one or a few before
// IDA passes that step's end with shorter steps.
constexpr long kMaxNonFiniteBeforePassing = 50;

}  // namespace

Integrator::Integrator(const model::Subsystem& subsystem, const IntegratorOptions& options,
                       const model::InputFunction* input)
    : impl_(std::make_unique<Impl>(subsystem, options)) {
  if (!(options.rtol > 0.0) || !(options.atol_pos > 0.0) || !(options.atol_vel > 0.0)) {
    throw std::invalid_argument(
        fmt::format("Integrator: tolerances must be > 0 (rtol {}, atol_pos {}, atol_vel {})",
                    options.rtol, options.atol_pos, options.atol_vel));
  }
  if (options.max_order < 1 || options.max_order > 5) {
    throw std::invalid_argument(
        fmt::format("Integrator: max_order must be in 1..5 (got {})", options.max_order));
  }
  if (options.max_steps < 1) throw std::invalid_argument("Integrator: max_steps must be >= 1");
  auto& I = *impl_;
  I.input = input;
  I.n = subsystem.state_size();
  I.nu = subsystem.input_size();
  I.u.assign(I.nu, 0.0);
  I.pattern = &subsystem.jacobian_pattern();
  I.events = subsystem.events();
  if (I.events) I.mode = I.events->initial_mode();
  if (I.n == 0) {  // no IDA (Impl::algebraic)
    I.algebraic_time = subsystem.initial_time();
    klu_l_defaults(&I.algebraic_klu);
    return;
  }
  if (I.pattern->n != I.n || I.pattern->column_start.size() != I.n + 1) {
    throw std::invalid_argument("Integrator: Jacobian pattern does not match the state size");
  }
  I.jac_values.assign(I.pattern->nonzeros(), 0.0);

  const auto n = static_cast<sunindextype>(I.n);
  if (SUNContext_Create(nullptr, &I.ctx) != 0) throw std::runtime_error("SUNContext_Create");
  I.yy = N_VNew_Serial(n, I.ctx);
  I.yp = N_VNew_Serial(n, I.ctx);
  I.atol = N_VNew_Serial(n, I.ctx);
  if (!I.yy || !I.yp || !I.atol) throw std::bad_alloc();
  N_VConst(0.0, I.atol);

  const double t0 = subsystem.initial_time();
  I.evaluate_input(t0);
  subsystem.initial_state(I.u, std::span<double>(N_VGetArrayPointer(I.yy), I.n),
                          std::span<double>(N_VGetArrayPointer(I.yp), I.n));
  I.take_mode_tolerances();

  I.mem = IDACreate(I.ctx);
  if (!I.mem) throw std::runtime_error("IDACreate failed");
  IDASetErrHandlerFn(I.mem, &Impl::error_fn, &I);
  I.check(IDAInit(I.mem, &Impl::residual_fn, t0, I.yy, I.yp), "IDAInit");
  I.check(IDASetUserData(I.mem, &I), "IDASetUserData");
  I.check(IDASVtolerances(I.mem, options.rtol, I.atol), "IDASVtolerances");
  I.check(IDASetMaxOrd(I.mem, options.max_order), "IDASetMaxOrd");
  I.check(IDASetMaxNumSteps(I.mem, options.max_steps), "IDASetMaxNumSteps");
  if (options.initial_step > 0.0)
    I.check(IDASetInitStep(I.mem, options.initial_step), "IDASetInitStep");

  if (options.linear_solver == LinearSolver::kKlu) {
    I.matrix =
        SUNSparseMatrix(n, n, static_cast<sunindextype>(I.pattern->nonzeros()), CSC_MAT, I.ctx);
    if (!I.matrix) throw std::bad_alloc();
    std::memcpy(SUNSparseMatrix_IndexPointers(I.matrix), I.pattern->column_start.data(),
                (I.n + 1) * sizeof(sunindextype));
    std::memcpy(SUNSparseMatrix_IndexValues(I.matrix), I.pattern->row_index.data(),
                I.pattern->nonzeros() * sizeof(sunindextype));
    I.ls = SUNLinSol_KLU(I.yy, I.matrix, I.ctx);
  } else {
    I.matrix = SUNDenseMatrix(n, n, I.ctx);
    if (!I.matrix) throw std::bad_alloc();
    I.ls = SUNLinSol_Dense(I.yy, I.matrix, I.ctx);
  }
  if (!I.ls) throw std::runtime_error("creating the linear solver failed");
  I.check(IDASetLinearSolver(I.mem, I.ls, I.matrix), "IDASetLinearSolver");
  I.check(IDASetJacFn(I.mem, &Impl::jacobian_fn), "IDASetJacFn");

  // IDAInit sets phi[0], phi[1] only; the rest is written before it is read, but zeroing it
  // makes snapshots of equal states equal byte for byte (export_snapshot).
  for (int j = 2; j <= I.ida()->ida_maxord; ++j) N_VConst(0.0, I.ida()->ida_phi[j]);
  N_VConst(0.0, I.ida()->ida_ee);

  // Run IDA's one-time setup now so that every integrator, also a fresh clone target, is in the
  // state IDASolve expects after its first call.
  I.check(IDAInitialSetup(I.ida()), "IDAInitialSetup");
  I.ida()->ida_SetupDone = SUNTRUE;
}

Integrator::~Integrator() = default;

const model::Subsystem& Integrator::subsystem() const {
  return impl_->subsystem;
}
const IntegratorOptions& Integrator::options() const {
  return impl_->options;
}
void Integrator::set_input(const model::InputFunction* input) {
  impl_->input = input;
}
void Integrator::set_progress_counter(std::atomic<std::uint64_t>* counter) {
  impl_->progress = counter;
}
double Integrator::time() const {
  return impl_->now();
}
int Integrator::current_order() const {
  return impl_->algebraic() ? 0 : impl_->ida()->ida_kused;
}
double Integrator::next_step_size() const {
  return impl_->algebraic() ? 0.0 : impl_->ida()->ida_hh;
}
const model::Subsystem& Integrator::equations() const {
  return impl_->model();
}
const model::Mode* Integrator::mode() const {
  return impl_->mode.get();
}
AdvanceStats Integrator::total_stats() const {
  return impl_->totals;
}

AdvanceStats Integrator::advance_to(double t_end, const AdvanceControl& control) {
  auto& I = *impl_;
  const double t_start = I.now();
  if (!(t_end > t_start)) {
    throw std::invalid_argument(fmt::format(
        "Integrator::advance_to: target {} is not after the current time {}", t_end, t_start));
  }
  I.begin_samples(t_start, t_end);
  I.advance_end = t_end;
  I.left_present = false;
  I.left_mode.reset();
  if (I.algebraic()) {  // nothing to integrate, no history to shift or restart
    const long events_before = I.event_count;
    AdvanceStats s;
    if (I.events && I.events->advances_itself()) {
      I.advance_self(t_end);
      s.steps = 1;
    } else if (I.events) {
      I.advance_algebraic(t_end);
    } else {
      I.sample_through(t_end);
      I.algebraic_time = t_end;
    }
    s.events = I.event_count - events_before;
    I.totals += s;
    return s;
  }
  const bool overshoot = I.options.overshoot;
  if (overshoot && (control.restart || control.previous_input != nullptr || I.events)) {
    throw std::logic_error(
        "Integrator::advance_to: overshoot mode neither restarts, shifts the history nor handles "
        "events (D-36)");
  }
  const auto clock_start = std::chrono::steady_clock::now();
  I.clear_non_finite();
  if (control.previous_input != nullptr && !control.restart)
    I.shift_history(*control.previous_input);
  if (control.restart) I.restart();
  // A restart (also after an event) resets IDA's counters: they are summed per stretch between
  // restarts, from here on.
  I.counter_base = I.counters();
  I.counter_carry = AdvanceStats{};
  const long events_before = I.event_count;
  AdvanceStats s;
  if (overshoot) {
    I.advance_overshooting(t_end, control.max_step, s);
  } else {
    if (I.events) I.begin_events();
    while (true) {
      const Impl::Segment segment = I.next_segment(t_end);
      if (segment.time_event_now) {
        I.handle_event(I.now(), "time event", I.mode->next_time_event());
        continue;
      }
      if (!(I.now() < t_end)) break;
      I.integrate_segment(segment, t_start, control.max_step, s);
    }
  }
  AdvanceStats counted = I.counter_carry;
  counted += I.counters();
  counted -= I.counter_base;
  s.events = I.event_count - events_before;
  s.residual_evals = counted.residual_evals;
  s.jacobian_evals = counted.jacobian_evals;
  s.nonlinear_iterations = counted.nonlinear_iterations;
  s.nonlinear_failures = counted.nonlinear_failures;
  s.error_test_failures = counted.error_test_failures;
  s.linear_setups = counted.linear_setups;
  s.wall_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                  std::chrono::steady_clock::now() - clock_start)
                  .count();
  I.totals += s;
  return s;
}

// The stretch up to t_end or to the current mode's time event, whichever comes first (an event
// within event_tolerance of t_end, before or after it, is taken at t_end), with IDA's stop time
// set there.
Integrator::Impl::Segment Integrator::Impl::next_segment(double t_end) {
  Segment segment{t_end, false, false};
  if (events) {
    const double t = now();
    const double tol = event_tolerance(t, t_end);
    const double te = mode->next_time_event();
    if (te - t <= tol) {
      segment.time_event_now = true;
      return segment;
    }
    if (te - t_end <= tol) {
      segment.time_event_at_end = true;
      if (t_end - te > tol) segment.end = te;
    }
  }
  // IDA clears the stop time once reached, so it is set again for every stretch (D-35).
  check(IDASetStopTime(mem, segment.end), "IDASetStopTime");
  return segment;
}

void Integrator::Impl::take_mode_tolerances() {
  if (n == 0) return;
  const model::Subsystem& equations = model();
  const auto roles = equations.state_roles();
  const auto nominals = equations.state_nominals();
  double* a = N_VGetArrayPointer(atol);
  bool changed = false;
  for (std::size_t i = 0; i < n; ++i) {
    double v = roles[i] == model::StateRole::kPosition ? options.atol_pos : options.atol_vel;
    if (!nominals.empty()) v *= nominals[i];
    changed = changed || v != a[i];
    a[i] = v;
  }
  // Before IDA exists (construction) the caller passes them with IDASVtolerances itself.
  if (!changed || !mem) return;
  check(IDASVtolerances(mem, options.rtol, atol), "IDASVtolerances");
  // IDASVtolerances leaves the weight function's data to IDAInitialSetup, which a restore does
  // not call: set as that would.
  ida()->ida_edata = mem;
}

// Micro steps to segment.end, or to the first state or step event before it (handled here).
void Integrator::Impl::integrate_segment(const Segment& segment, double t_start, double max_step,
                                         AdvanceStats& s) {
  IDAMem m = ida();
  while (true) {
    if (m->ida_nst > 0) {
      // The step limit of this call (before Listing 4.1, which then fits it to the end).
      if (max_step > 0.0 && m->ida_hh > max_step) m->ida_hh = max_step;
      if (options.stop_adjustment) {
        // seed 000 Listing 4.1: stretch the last micro step by up to 10 %, or split the rest in
        // two equal steps instead of leaving a tiny final one. IDA's own tstop clipping does the
        // same kind of hh change, so the BDF coefficients follow from psi as usual.
        const double h = m->ida_hh;
        const double left = segment.end - m->ida_tn;
        if (left < 1.1 * h) {
          m->ida_hh = left;
        } else if (left < 2.0 * h) {
          m->ida_hh = 0.5 * left;
        }
      }
    }
    const int flag = one_step(segment.end, s);
    // The first state event in the step, else a step event or a time event at its end.
    std::string why;
    const std::optional<double> t_event =
        events ? state_event_in_last_step(why) : std::optional<double>();
    bool step_event = false;
    if (events && !t_event && events->step_events()) {
      evaluate_input(m->ida_tn);
      step_event =
          mode->step_event(m->ida_tn, std::span<const double>(N_VGetArrayPointer(yy), n), u);
    }
    const bool time_event = flag == IDA_TSTOP_RETURN && segment.time_event_at_end;
    // Samples up to the step's end or its event (in the mode before it).
    sample_through(t_event.value_or(m->ida_tn), t_event || step_event || time_event);
    if (t_event) {
      handle_event(*t_event, why);
      return;
    }
    if (step_event) {
      handle_event(m->ida_tn, "step event");
      return;
    }
    if (flag == IDA_TSTOP_RETURN) {
      if (time_event) handle_event(m->ida_tn, "time event", mode->next_time_event());
      return;
    }
    if (s.steps >= options.max_steps) {
      throw IntegrationError(fmt::format("more than {} micro steps between t = {:.9g} and {:.9g}",
                                         options.max_steps, t_start, segment.end),
                             m->ida_tn, IDA_TOO_MUCH_WORK);
    }
  }
}

// Overshoot mode (IntegratorOptions::overshoot): micro steps no longer than the macro step
// until IDA passes t_end; time() is then t_end, interpolated.
void Integrator::Impl::advance_overshooting(double t_end, double max_step, AdvanceStats& s) {
  IDAMem m = ida();
  const double t_start = now();
  const double limit = max_step > 0.0 ? std::min(max_step, t_end - t_start) : t_end - t_start;
  check(IDASetMaxStep(mem, limit), "IDASetMaxStep");
  // IDA may already be past t_end (the previous call's last step).
  while (m->ida_tn < t_end) {
    if (m->ida_nst > 0 && m->ida_hh > limit) m->ida_hh = limit;
    one_step(t_end, s);
    sample_through(std::min(m->ida_tn, t_end));
    if (s.steps >= options.max_steps) {
      throw IntegrationError(fmt::format("more than {} micro steps between t = {:.9g} and {:.9g}",
                                         options.max_steps, t_start, t_end),
                             m->ida_tn, IDA_TOO_MUCH_WORK);
    }
  }
  interpolate_at = m->ida_tn > t_end ? t_end : std::numeric_limits<double>::quiet_NaN();
}

// One IDA step towards `tout` (IDA_ONE_STEP), counted into s; a failure throws.
int Integrator::Impl::one_step(double tout, AdvanceStats& s) {
  IDAMem m = ida();
  realtype tret = 0.0;
  const int flag = IDASolve(mem, tout, &tret, yy, yp, IDA_ONE_STEP);
  if (flag < 0) {
    totals.steps += s.steps;
    throw IntegrationError(
        fmt::format("IDA failed at t = {:.9g} (flag {}): {}", m->ida_tn, flag, last_error),
        m->ida_tn, flag);
  }
  if (m->ida_tn >= first_non_finite) {
    clear_non_finite();  // stepped over: the failure has passed
  } else if (non_finite_pending >= kMaxNonFiniteBeforePassing) {
    totals.steps += s.steps + 1;
    throw IntegrationError(
        fmt::format("IDA failed at t = {:.9g}: {} (and {} times more before t = {:.9g}, which "
                    "IDA cannot pass: the model fails from that time on)",
                    m->ida_tn, model_error, non_finite_pending - 1, first_non_finite),
        m->ida_tn, IDA_RES_FAIL);
  }
  ++s.steps;
  s.step_sum += m->ida_hused;
  s.step_square_sum += m->ida_hused * m->ida_hused;
  return flag;
}

void Integrator::state(std::span<double> z, std::span<double> zp) const {
  if (z.size() != impl_->n || zp.size() != impl_->n) {
    throw std::invalid_argument("Integrator::state: span sizes differ from the state size");
  }
  impl_->current_state(z, zp);
}

void Integrator::outputs(std::span<double> y) const {
  auto& I = *impl_;
  // Called at every macro point of every run: reuse the scratch state instead of allocating.
  I.z_scratch.resize(I.n);
  I.zp_scratch.resize(I.n);
  state(I.z_scratch, I.zp_scratch);
  I.evaluate_input(time());
  I.model().outputs(time(), I.z_scratch, I.u, y);
}

void Integrator::feedthrough_jacobian(std::span<double> values) const {
  auto& I = *impl_;
  I.z_scratch.resize(I.n);
  I.zp_scratch.resize(I.n);
  state(I.z_scratch, I.zp_scratch);
  I.evaluate_input(time());
  I.model().feedthrough_jacobian(time(), I.z_scratch, I.u, values);
}

bool Integrator::event_at_end() const {
  return impl_->left_present;
}

std::span<const double> Integrator::state_before_event() const {
  const auto& I = *impl_;
  if (!I.left_present) {
    throw std::logic_error("Integrator::state_before_event: no event at the end of the advance");
  }
  return I.left_z;
}

const model::Subsystem& Integrator::equations_before_event() const {
  const auto& I = *impl_;
  if (!I.left_present) {
    throw std::logic_error(
        "Integrator::equations_before_event: no event at the end of the advance");
  }
  return I.left_mode->equations();
}

void Integrator::outputs_before_event(std::span<double> y) const {
  auto& I = *impl_;
  const std::span<const double> z = state_before_event();
  I.evaluate_input(time());
  I.left_mode->equations().outputs(time(), z, I.u, y);
}

void Integrator::feedthrough_jacobian_before_event(std::span<double> values) const {
  auto& I = *impl_;
  const std::span<const double> z = state_before_event();
  I.evaluate_input(time());
  I.left_mode->equations().feedthrough_jacobian(time(), z, I.u, values);
}

std::unique_ptr<WorkspaceSnapshot> Integrator::make_snapshot() const {
  std::unique_ptr<WorkspaceSnapshot> s(new WorkspaceSnapshot());
  save(*s);
  return s;
}

void Integrator::save(WorkspaceSnapshot& snapshot) const {
  impl_->no_interpolated_state("save");
  impl_->save(*snapshot.data_);
}

void Integrator::restore(const WorkspaceSnapshot& snapshot) {
  impl_->restore(*snapshot.data_);
  impl_->interpolate_at = std::numeric_limits<double>::quiet_NaN();
}

detail::SnapshotTarget Integrator::Impl::snapshot_target() const {
  return {subsystem, options, vector_count(),
          options.linear_solver == LinearSolver::kDense ? nullptr
          : algebraic()                                 ? &algebraic_klu
                                                        : &klu()->common};
}

std::vector<std::byte> Integrator::export_snapshot(const WorkspaceSnapshot& snapshot) const {
  const auto& d = *snapshot.data_;
  if (d.n != impl_->n || d.solver != impl_->options.linear_solver ||
      static_cast<std::size_t>(d.vectors) != impl_->vector_count()) {
    throw std::invalid_argument(
        "Integrator::export_snapshot: snapshot of another subsystem size, solver or max_order");
  }
  return detail::encode_snapshot(d, impl_->snapshot_target());
}

void Integrator::import_snapshot(std::span<const std::byte> bytes,
                                 WorkspaceSnapshot& snapshot) const {
  *snapshot.data_ = detail::decode_snapshot(bytes, impl_->snapshot_target());
}

void Integrator::copy_state_from(const Integrator& other) {
  if (&other.impl_->subsystem != &impl_->subsystem && other.impl_->n != impl_->n) {
    throw std::invalid_argument("Integrator::copy_state_from: different subsystem");
  }
  if (!impl_->scratch) impl_->scratch.reset(new WorkspaceSnapshot());
  other.save(*impl_->scratch);
  restore(*impl_->scratch);
}

}  // namespace macrostep::ida

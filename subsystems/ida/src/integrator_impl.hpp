// Integrator::Impl: the integrator's IDA memory, linear solver and scratch, shared by the
// integrator's translation units (integrator.cpp: setup and advancing; workspace_copy.cpp:
// snapshots; input_jumps.cpp: consistent derivatives and history shifts at input jumps).
// Private to subsystems/ida.
#pragma once

#include <ida/ida.h>
#include <ida/ida_impl.h>
#include <ida/ida_ls.h>
#include <ida/ida_ls_impl.h>
#include <klu.h>
#include <nvector/nvector_serial.h>
#include <sundials/sundials_config.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunlinsol/sunlinsol_klu.h>
#include <sunmatrix/sunmatrix_dense.h>
#include <sunmatrix/sunmatrix_sparse.h>
#include <sunnonlinsol/sunnonlinsol_newton.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "macrostep/model/names.hpp"
#include "macrostep/model/support_points.hpp"
#include "workspace_data.hpp"

// Exported by libsundials_ida but declared in no public header. Running it on a fresh
// integrator makes it a valid restore/clone target (otherwise IDASolve would dereference the
// linear solver's unset pointers after a restore with nst > 0).
extern "C" int IDAInitialSetup(IDAMem IDA_mem);

namespace macrostep::ida {

struct Integrator::Impl {
  const model::Subsystem& subsystem;
  IntegratorOptions options;
  const model::InputFunction* input = nullptr;
  std::atomic<std::uint64_t>* progress = nullptr;  // set_progress_counter()

  // One tick per model evaluation; this integrator is the counter's only writer.
  void tick() const noexcept {
    if (progress != nullptr) {
      progress->store(progress->load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    }
  }

  SUNContext ctx = nullptr;
  void* mem = nullptr;
  N_Vector yy = nullptr, yp = nullptr, atol = nullptr;
  SUNMatrix matrix = nullptr;
  SUNLinearSolver ls = nullptr;
  std::size_t n = 0;
  std::size_t nu = 0;

  // Residual/Jacobian scratch (inputs at t, pattern values).
  std::vector<double> u;
  std::vector<double> jac_values;
  std::vector<double> z_scratch, zp_scratch;  // outputs()
  const model::SparsityPattern* pattern = nullptr;

  std::string last_error;
  // Why the model failed in a residual / Jacobian call: what it threw, or the last value it
  // returned that is not finite (until IDA has passed first_non_finite).
  std::string model_error;
  // Residual / Jacobian calls with a value that is not finite since IDA last passed the
  // earliest time of one (first_non_finite; infinity: none pending).
  long non_finite_pending = 0;
  double first_non_finite = std::numeric_limits<double>::infinity();
  AdvanceStats totals;
  std::unique_ptr<WorkspaceSnapshot> scratch;  // for copy_state_from

  // consistent_derivative(): dF/dz' on the Jacobian pattern, its KLU analysis (made once) and
  // scratch. Not part of the workspace.
  mutable klu_l_common zp_common{};
  mutable klu_l_symbolic* zp_symbolic = nullptr;
  mutable std::vector<double> zp_matrix, zp_j0, zp_rhs, zp_z;
  // The last factorization of dF/dz' and the values it factored (factor_dfdzp()).
  mutable klu_l_numeric* zp_numeric = nullptr;
  mutable std::vector<double> zp_factored;
  mutable std::vector<double> zp_diagonal_inverse;  // a diagonal dF/dz' inverted (else empty)
  std::unique_ptr<model::EntryPattern> ju_pattern;  // dF/du, read once (shift_history)
  // shift_history()'s scratch: dF/du values, inputs, Vandermonde system, Δu coefficients, the
  // Taylor coefficients of δ ((terms + 1) × n) and its divided differences ((k + 1) × n).
  std::vector<double> ju_values, shift_u_new, shift_u_old, shift_vand, shift_du, shift_coef,
      shift_dd, shift_node;

  Impl(const model::Subsystem& s, const IntegratorOptions& o) : subsystem(s), options(o) {}
  ~Impl() {
    if (zp_numeric) klu_l_free_numeric(&zp_numeric, &zp_common);
    if (zp_symbolic) klu_l_free_symbolic(&zp_symbolic, &zp_common);
    if (mem) IDAFree(&mem);
    if (ls) SUNLinSolFree(ls);
    if (matrix) SUNMatDestroy(matrix);
    if (atol) N_VDestroy(atol);
    if (yp) N_VDestroy(yp);
    if (sample_z) N_VDestroy(sample_z);
    if (yy) N_VDestroy(yy);
    if (ctx) SUNContext_Free(&ctx);
  }

  IDAMem ida() const { return static_cast<IDAMem>(mem); }
  IDALsMem lsmem() const { return static_cast<IDALsMem>(ida()->ida_lmem); }
  SUNNonlinearSolverContent_Newton newton() const {
    return static_cast<SUNNonlinearSolverContent_Newton>(ida()->NLS->content);
  }
  SUNLinearSolverContent_KLU klu() const {
    return static_cast<SUNLinearSolverContent_KLU>(ls->content);
  }
  SUNLinearSolverContent_Dense dense() const {
    return static_cast<SUNLinearSolverContent_Dense>(ls->content);
  }

  void evaluate_input(double t) {
    if (nu == 0) return;
    if (!input) {
      throw std::logic_error("Integrator: subsystem has inputs but no InputFunction was set");
    }
    input->evaluate(t, u);
  }

  void check(int flag, const char* what) const {
    if (flag < 0) {
      throw IntegrationError(fmt::format("{} failed (flag {}): {}", what, flag, last_error),
                             mem ? ida()->ida_tn : 0.0, flag);
    }
  }

  // Overshoot mode (IntegratorOptions::overshoot): the macro time the last advance_to reached,
  // which IDA's own time has passed; NaN otherwise (then time() is IDA's tn).
  double interpolate_at = std::numeric_limits<double>::quiet_NaN();
  // A subsystem without states (n == 0) has no IDA: y = g(t, u) is evaluated at whatever time
  // advance_to() reached, and that time is all its workspace holds.
  bool algebraic() const { return mem == nullptr; }
  double algebraic_time = 0.0;
  klu_l_common algebraic_klu{};  // KLU's defaults: what a KLU snapshot of it carries
  double now() const {
    if (algebraic()) return algebraic_time;
    return std::isnan(interpolate_at) ? ida()->ida_tn : interpolate_at;
  }
  void no_interpolated_state(const char* what) const {
    if (!std::isnan(interpolate_at)) {
      throw std::logic_error(fmt::format(
          "Integrator::{}: the state at t = {:.9g} is interpolated (overshoot mode) and has no "
          "workspace of its own",
          what, interpolate_at));
    }
  }

  // The state at time() (phi[0], or IDAGetDky after the first step) and the history's z'.
  void current_state(std::span<double> z, std::span<double> zp) const;
  // dF/dz (zp_j0) and dF/dz' (zp_matrix) at (t, z, z', u(t)).
  void derivative_jacobians(double t, std::span<const double> z, std::span<const double> zp) const;
  // zp_matrix factored: the factorization (owned by Impl: zp_numeric, valid until the next call),
  // or null for a diagonal one (its inverse in zp_diagonal_inverse). Throws IntegrationError if
  // dF/dz' is singular.
  klu_l_numeric* factor_dfdzp(double t) const;
  // Whether column c of dF/dz' (zp_matrix) is zero: c is an algebraic state.
  bool zero_dfdzp_column(std::size_t c) const;
  // zp_matrix diagonal and invertible: its inverse into zp_diagonal_inverse (else emptied).
  bool invert_diagonal_dfdzp() const;
  // rhs := (dF/dz')⁻¹ rhs with factor_dfdzp()'s result.
  void solve_dfdzp(klu_l_numeric* num, double* rhs) const;
  // z' consistent with z at t: one Newton step on F(t, z, z', u) = 0 from the given z' (exact for
  // residuals linear in z'); algebraic states (zero columns of dF/dz') keep theirs.
  void consistent_derivative(double t, std::span<const double> z, std::span<double> zp) const;
  void shift_history(const model::InputFunction& previous);
  void restart();
  // IDAReInit at t from yy, yp (restart(), events), leaving IDA as after construction.
  void reinitialize(double t);
  // The absolute tolerances of the current mode's equations (their roles' atol times their
  // nominals, model::Subsystem::state_nominals) into `atol`, and into IDA if they changed: a
  // subsystem with events may give other nominals in another mode, so this follows every change
  // of the mode (an event, a restore, and with it a clone or an imported snapshot). IDA weighs the
  // error with them from its next step on (the weights of a restored step are the snapshot's).
  void take_mode_tolerances();

  // ---- advancing (integrator.cpp) -----------------------------------------------------------
  // Stretches of one advance_to() between events: up to t_end or the mode's time event.
  struct Segment {
    double end;
    bool time_event_at_end;  // a time event falls at `end`
    bool time_event_now;     // a time event is due at now() (end is then t_end, unused)
  };
  Segment next_segment(double t_end);
  void integrate_segment(const Segment& segment, double t_start, double max_step, AdvanceStats& s);
  void advance_overshooting(double t_end, double max_step, AdvanceStats& s);
  int one_step(double tout, AdvanceStats& s);
  // IDA's counters at the last restart within this advance_to() and the sums of the stretches
  // before it (reinitialize() resets IDA's counters).
  AdvanceStats counter_base, counter_carry;

  // ---- output samples (Integrator::set_output_grid; samples.cpp) ------------------------------
  double sample_interval = 0.0;
  std::int64_t next_sample = 0, last_sample = -1;  // grid indices still to sample in this call
  OutputSamples samples;
  N_Vector sample_z = nullptr;  // the interpolated state (made at the first sample)
  std::vector<double> sample_y;
  // Clears the samples and sets the grid indices inside (t_start, t_end).
  void begin_samples(double t_start, double t_end);
  // Samples every grid time of this call up to t (inclusive; before t where an event is handled
  // at t, so that a grid time at an event has the values after it, as a macro point has): for a
  // subsystem with states t must lie within IDA's last micro step, whose interpolant gives z.
  void sample_through(double t, bool event_at_t = false);

  // ---- events (model::Events; events.cpp) ----------------------------------------------------
  // The subsystem's events (null: a continuous model) and the current mode, part of the
  // workspace (saved, restored and exported with it).
  const model::Events* events = nullptr;
  std::shared_ptr<const model::Mode> mode;
  // The equations of the current mode (the subsystem itself without events).
  const model::Subsystem& model() const { return mode ? mode->equations() : subsystem; }
  // Indicators at the start of the step being checked, at its end, at a trial time; scratch z
  // and z'. Recomputed at the start of every advance (begin_events), not part of the workspace.
  std::vector<double> g_lo, g_hi, g_mid, event_z;
  long events_this_advance = 0;
  long event_count = 0;  // events handled, over the integrator's life
  // The current advance_to()'s t_end, and the state and mode before the first event handled at
  // exactly that time (Integrator::event_at_end). Cleared by every advance_to() and restore():
  // not part of the workspace.
  double advance_end = std::numeric_limits<double>::quiet_NaN();
  bool left_present = false;
  std::vector<double> left_z;
  std::shared_ptr<const model::Mode> left_mode;
  void interpolate(double t, std::span<double> z, std::span<double> zp) const;
  void indicators_at(double t, std::span<const double> z, std::vector<double>& g);
  void begin_events();
  // After IDA's step to tn: the time of the earliest state event within it, and its name.
  std::optional<double> state_event_in_last_step(std::string& why);
  static bool indicators_changed(const std::vector<double>& a, const std::vector<double>& b);
  double locate_crossing(double lo, double hi, double ttol, std::string& why,
                         const std::function<void(double)>& evaluate);
  // advance_to() of a subsystem without states but with events.
  void advance_algebraic(double t_end);
  // advance_to() of a subsystem that advances itself (model::Events::advances_itself()).
  void advance_self(double t_end);
  // Handles an event at t (within the last step, or at tn) and restarts IDA there.
  // The event at the integrator's time t; `model_t` is the time the model is told (a time event
  // within event_tolerance of t is taken at t, at its own time; NaN: t).
  void handle_event(double t, const std::string& why,
                    double model_t = std::numeric_limits<double>::quiet_NaN());
  // How close to the integrator's time t, or to an advance's end t_end, a time event counts as
  // at that time: the rounding of both, and no less than D-27's H_min, 1e-14·max(1, |t_end|),
  // below which no macro step could end on it apart (the master merges such events into the
  // step they close).
  static double event_tolerance(double t, double t_end) {
    return std::max(100.0 * UNIT_ROUNDOFF * std::max(std::abs(t), std::abs(t_end)),
                    1e-14 * std::max(1.0, std::abs(t_end)));
  }

  AdvanceStats counters() const {
    AdvanceStats s;
    // Counters are restored with the snapshot; deltas are taken within one call only.
    s.steps = ida()->ida_nst;
    s.residual_evals = ida()->ida_nre;
    s.jacobian_evals = lsmem()->nje;
    s.nonlinear_iterations = ida()->ida_nni;
    s.nonlinear_failures = ida()->ida_ncfn;
    s.error_test_failures = ida()->ida_netf;
    s.linear_setups = ida()->ida_nsetups;
    return s;
  }

  // A model that throws (an FMU whose function returned an error) stops IDA with an
  // unrecoverable residual / Jacobian failure; the exception's message becomes the failure's
  // cause (error_fn). No exception crosses IDA's C frames.
  static int residual_fn(realtype t, N_Vector y, N_Vector ydot, N_Vector r, void* user) {
    try {
      return residual_unguarded(t, y, ydot, r, user);
    } catch (const std::exception& e) {
      static_cast<Impl*>(user)->model_error = e.what();
      return -1;
    } catch (...) {  // a model's throw of something else (a plugin's `throw 42`)
      static_cast<Impl*>(user)->model_error = kNonStandardThrow;
      return -1;
    }
  }

  static int jacobian_fn(realtype t, realtype cj, N_Vector y, N_Vector ydot, N_Vector r,
                         SUNMatrix J, void* user, N_Vector t1, N_Vector t2, N_Vector t3) {
    try {
      return jacobian_unguarded(t, cj, y, ydot, r, J, user, t1, t2, t3);
    } catch (const std::exception& e) {
      static_cast<Impl*>(user)->model_error = e.what();
      return -1;
    } catch (...) {
      static_cast<Impl*>(user)->model_error = kNonStandardThrow;
      return -1;
    }
  }
  static constexpr const char* kNonStandardThrow =
      "the model threw an exception that is not a std::exception (a model reports a failure by "
      "throwing std::runtime_error with its cause)";

  static int residual_unguarded(realtype t, N_Vector y, N_Vector ydot, N_Vector r, void* user) {
    auto* self = static_cast<Impl*>(user);
    const std::size_t n = self->n;
    std::span<const double> z(N_VGetArrayPointer(y), n);
    std::span<const double> zp(N_VGetArrayPointer(ydot), n);
    std::span<double> res(N_VGetArrayPointer(r), n);
    self->tick();
    self->evaluate_input(t);
    self->model().residual(t, z, zp, self->u, res);
    return self->check_finite_residual(t, res);
  }

  // A residual or Jacobian value that is not finite is recoverable for IDA, which retries the
  // step with a smaller h (a stiff law can overflow at a Newton iterate of too long a step). The
  // value, its states and the time are kept as the cause of a failure that follows: IDA's own
  // (repeated recoverable errors in one step), or advance_to()'s when the model keeps failing
  // without IDA passing the earliest failing time (a barrier in time that IDA would creep
  // towards until max_steps).
  int check_finite_residual(double t, std::span<const double> res) {
    for (std::size_t i = 0; i < res.size(); ++i) {
      if (std::isfinite(res[i])) continue;
      model_error = fmt::format("the model's residual r[{}] (row of state {}) is {} at t = {:.9g}",
                                i, model::quoted(subsystem.state_name(i)), res[i], t);
      return non_finite_at(t);
    }
    return 0;
  }

  void clear_non_finite() {
    model_error.clear();
    non_finite_pending = 0;
    first_non_finite = std::numeric_limits<double>::infinity();
  }

  int non_finite_at(double t) {
    first_non_finite = std::min(first_non_finite, t);
    ++non_finite_pending;
    return 1;
  }

  int check_finite_jacobian(double t, double cj, std::span<const double> values) {
    const auto& p = *pattern;
    for (std::size_t col = 0; col < n; ++col) {
      for (auto k = p.column_start[col]; k < p.column_start[col + 1]; ++k) {
        const double v = values[static_cast<std::size_t>(k)];
        if (std::isfinite(v)) continue;
        const auto row = static_cast<std::size_t>(p.row_index[static_cast<std::size_t>(k)]);
        model_error = fmt::format(
            "the model's Jacobian entry values[{}] (row {} of state {}, column {} of state {}; "
            "cj = {:.9g}) is {} at t = {:.9g}",
            k, row, model::quoted(subsystem.state_name(row)), col,
            model::quoted(subsystem.state_name(col)), cj, v, t);
        return non_finite_at(t);
      }
    }
    return 0;
  }

  static int jacobian_unguarded(realtype t, realtype cj, N_Vector y, N_Vector ydot, N_Vector,
                                SUNMatrix J, void* user, N_Vector, N_Vector, N_Vector) {
    auto* self = static_cast<Impl*>(user);
    const std::size_t n = self->n;
    std::span<const double> z(N_VGetArrayPointer(y), n);
    std::span<const double> zp(N_VGetArrayPointer(ydot), n);
    self->tick();
    self->evaluate_input(t);
    const auto& p = *self->pattern;
    if (self->options.linear_solver == LinearSolver::kKlu) {
      // SUNMatZero_Sparse clears the index arrays too; write the fixed pattern every time.
      std::memcpy(SUNSparseMatrix_IndexPointers(J), p.column_start.data(),
                  p.column_start.size() * sizeof(sunindextype));
      std::memcpy(SUNSparseMatrix_IndexValues(J), p.row_index.data(),
                  p.row_index.size() * sizeof(sunindextype));
      const std::span<double> values(SUNSparseMatrix_Data(J), p.nonzeros());
      self->model().jacobian(t, z, zp, self->u, cj, values);
      return self->check_finite_jacobian(t, cj, values);
    } else {
      self->model().jacobian(t, z, zp, self->u, cj, self->jac_values);
      if (const int flag = self->check_finite_jacobian(t, cj, self->jac_values); flag != 0) {
        return flag;
      }
      for (std::size_t col = 0; col < n; ++col) {
        double* column = SUNDenseMatrix_Column(J, static_cast<sunindextype>(col));
        for (auto k = p.column_start[col]; k < p.column_start[col + 1]; ++k) {
          column[p.row_index[static_cast<std::size_t>(k)]] =
              self->jac_values[static_cast<std::size_t>(k)];
        }
      }
    }
    return 0;
  }

  static void error_fn(int code, const char* module, const char* function, char* msg, void* user) {
    auto* self = static_cast<Impl*>(user);
    self->last_error = fmt::format("{}:{}: {} (code {})", module, function, msg, code);
    // IDA may report one failure more than once (the linear solver, then IDASolve): each
    // report keeps the model's cause, which advance_to() clears once it has passed.
    if (!self->model_error.empty()) {
      self->last_error = self->model_error + " (" + self->last_error + ")";
    }
  }

  // ---- snapshot ----------------------------------------------------------------------------

  std::size_t vector_count() const {
    return algebraic() ? 0 : static_cast<std::size_t>(ida()->ida_maxord) + 3;
  }
  detail::SnapshotTarget snapshot_target() const;

  std::vector<N_Vector> state_vectors() const {
    std::vector<N_Vector> v;
    for (int j = 0; j <= ida()->ida_maxord; ++j) v.push_back(ida()->ida_phi[j]);
    v.push_back(ida()->ida_ewt);
    v.push_back(ida()->ida_ee);
    return v;
  }

  // Copies the workspace into `d` / back from it (workspace_copy.cpp).
  void save(WorkspaceSnapshot::Data& d) const;
  void restore(const WorkspaceSnapshot::Data& d);
};

}  // namespace macrostep::ida

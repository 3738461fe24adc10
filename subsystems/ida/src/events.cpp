// Events of hybrid subsystems (model::Events) inside advance_to(): indicator sign changes
// located on IDA's interpolant, time and step events, the restart after each event.
#include "integrator_impl.hpp"

#include <cmath>

namespace macrostep::ida {

namespace {

// Events in one advance_to() call beyond which the model is taken to chatter (an event that
// schedules another at the same time, an indicator that flips back at once).
constexpr long kMaxEventsPerAdvance = 10000;
// Iterations of the root location after which it falls back to halving the bracket: the
// secant steps (Illinois-weighted, as IDA's own root finding) converge superlinearly, so
// reaching this many means an indicator the secant does not describe.
constexpr int kSecantIterations = 40;

bool positive(double g) {
  return g > 0.0;
}

}  // namespace

void Integrator::Impl::interpolate(double t, std::span<double> z, std::span<double> zp) const {
  N_Vector vz = N_VMake_Serial(static_cast<sunindextype>(n), z.data(), ctx);
  N_Vector vzp = N_VMake_Serial(static_cast<sunindextype>(n), zp.data(), ctx);
  const int f1 = IDAGetDky(mem, t, 0, vz);
  const int f2 = IDAGetDky(mem, t, 1, vzp);
  N_VDestroy(vz);
  N_VDestroy(vzp);
  check(f1, "IDAGetDky(y)");
  check(f2, "IDAGetDky(y')");
}

void Integrator::Impl::indicators_at(double t, std::span<const double> z, std::vector<double>& g) {
  g.resize(events->indicator_count());
  if (g.empty()) return;
  tick();
  evaluate_input(t);
  mode->indicators(t, z, u, g);
  for (std::size_t i = 0; i < g.size(); ++i) {
    if (!std::isfinite(g[i])) {
      throw IntegrationError(
          fmt::format("the model's event indicator {} is {} at t = {:.9g}", i + 1, g[i], t), t,
          IDA_RTFUNC_FAIL);
    }
  }
}

void Integrator::Impl::begin_events() {
  if (!events) return;
  event_z.resize(2 * n);
  std::span<double> z(event_z.data(), n), zp(event_z.data() + n, n);
  current_state(z, zp);
  indicators_at(now(), z, g_lo);
  events_this_advance = 0;
}

bool Integrator::Impl::indicators_changed(const std::vector<double>& a,
                                          const std::vector<double>& b) {
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (positive(a[i]) != positive(b[i])) return true;
  }
  return false;
}

// The indicators at IDA's new point tn against those at the step's start (g_lo): on a sign
// change, the earliest crossing on the interpolant.
std::optional<double> Integrator::Impl::state_event_in_last_step(std::string& why) {
  IDAMem m = ida();
  const double t_hi = m->ida_tn;
  std::span<const double> z_hi(N_VGetArrayPointer(yy), n);
  indicators_at(t_hi, z_hi, g_hi);
  if (!indicators_changed(g_lo, g_hi)) {
    g_lo = g_hi;
    return std::nullopt;
  }
  const double ttol = 100.0 * UNIT_ROUNDOFF * (std::abs(m->ida_tn) + std::abs(m->ida_hh));
  std::span<double> z(event_z.data(), n), zp(event_z.data() + n, n);
  return locate_crossing(t_hi - m->ida_hused, t_hi, ttol, why, [&](double t) {
    interpolate(t, z, zp);
    indicators_at(t, z, g_mid);
  });
}

// The earliest crossing in (lo, hi] of an indicator whose sign differs between g_lo (at lo) and
// g_hi (at hi), located to ttol and taken on its far side; evaluate(t) fills g_mid. On return
// g_lo and g_hi bracket the crossing and `why` names it.
double Integrator::Impl::locate_crossing(double lo, double hi, double ttol, std::string& why,
                                         const std::function<void(double)>& evaluate) {
  double alpha = 1.0;
  int side_before = 0;
  for (int iteration = 0; hi - lo > ttol; ++iteration) {
    // The secant root of each indicator that changed sign; the earliest one (Illinois: the
    // endpoint that stayed twice is weighted down by alpha).
    double mid = hi;
    for (std::size_t i = 0; i < g_hi.size(); ++i) {
      if (positive(g_lo[i]) == positive(g_hi[i])) continue;
      const double denominator = g_hi[i] - alpha * g_lo[i];
      const double t = denominator != 0.0 ? hi - (hi - lo) * g_hi[i] / denominator : lo;
      mid = std::min(mid, t);
    }
    if (iteration >= kSecantIterations || !std::isfinite(mid)) mid = 0.5 * (lo + hi);
    mid = std::clamp(mid, lo + 0.5 * ttol, hi - 0.5 * ttol);
    evaluate(mid);
    const int side = indicators_changed(g_lo, g_mid) ? 1 : 2;  // 1: the crossing is in (lo, mid]
    alpha = side == side_before ? (side == 2 ? 2.0 * alpha : 0.5 * alpha) : 1.0;
    side_before = side;
    if (side == 1) {
      hi = mid;
      g_hi = g_mid;
    } else {
      lo = mid;
      g_lo = g_mid;
    }
  }
  for (std::size_t i = 0; i < g_hi.size(); ++i) {
    if (positive(g_lo[i]) != positive(g_hi[i])) {
      why = fmt::format("state event (indicator {} {})", i + 1,
                        positive(g_hi[i]) ? "rose above 0" : "fell to 0 or below");
      break;
    }
  }
  return hi;
}

// A subsystem without states: its time events in order, and its indicators (functions of t and
// the inputs) compared at each stretch's end, a crossing located by the same search.
void Integrator::Impl::advance_algebraic(double t_end) {
  const std::span<double> none;
  const auto at = [&](double t) { indicators_at(t, none, g_mid); };
  indicators_at(algebraic_time, none, g_lo);
  events_this_advance = 0;
  while (true) {
    const double t = algebraic_time;
    const double tol = event_tolerance(t, t_end);
    const double te = mode->next_time_event();
    if (te - t <= tol) {
      handle_event(t, "time event", te);
      continue;
    }
    const bool time_event = te - t_end <= tol;
    const double end = time_event && t_end - te > tol ? te : t_end;
    indicators_at(end, none, g_hi);
    if (indicators_changed(g_lo, g_hi)) {
      std::string why;
      algebraic_time = locate_crossing(t, end, tol, why, at);
      sample_through(algebraic_time, /*event_at_t=*/true);  // in the mode before the event
      handle_event(algebraic_time, why);
      continue;
    }
    g_lo = g_hi;
    sample_through(end, time_event);
    algebraic_time = end;
    if (time_event) {
      handle_event(end, "time event", te);
      continue;
    }
    return;
  }
}

void Integrator::Impl::advance_self(double t_end) {
  const double t0 = algebraic_time;
  if (nu > 0 && !input) {
    throw std::logic_error("Integrator: subsystem has inputs but no InputFunction was set");
  }
  std::shared_ptr<const model::Mode> next;
  try {
    next = events->advance(*mode, t0, t_end, nu > 0 ? input : nullptr);
  } catch (const std::runtime_error& e) {
    throw IntegrationError(e.what(), t0, IDA_RTFUNC_FAIL);
  }
  if (!next) {
    throw IntegrationError(
        fmt::format("the model gave no mode after its step from t = {:.9g} to {:.9g}", t0, t_end),
        t0, IDA_RTFUNC_FAIL);
  }
  mode = std::move(next);
  algebraic_time = t_end;
}

void Integrator::Impl::handle_event(double t, const std::string& why, double model_t) {
  if (++events_this_advance > kMaxEventsPerAdvance) {
    throw IntegrationError(
        fmt::format("more than {} events within one macro step, the last a {} at t = {:.9g}: "
                    "the model chatters",
                    kMaxEventsPerAdvance, why, t),
        t, IDA_RTFUNC_FAIL);
  }
  event_z.resize(2 * n);
  std::span<double> z(event_z.data(), n), zp(event_z.data() + n, n);
  if (algebraic()) {
    // no states
  } else if (t == ida()->ida_tn) {
    current_state(z, zp);
  } else {
    interpolate(t, z, zp);
  }
  evaluate_input(t);
  if (t == advance_end && !left_present) {
    left_present = true;
    left_z.assign(z.begin(), z.end());
    left_mode = mode;
  }
  model::EventOutcome outcome;
  try {
    outcome = events->handle(*mode, std::isnan(model_t) ? t : model_t, z, u, why);
  } catch (const std::runtime_error& e) {
    throw IntegrationError(e.what(), t, IDA_RTFUNC_FAIL);
  }
  ++event_count;
  if (outcome.terminate) {
    throw ModelTerminated(
        fmt::format("the model asked to terminate the simulation at t = {:.9g} ({}){}", t, why,
                    outcome.reason.empty() ? "" : ": " + outcome.reason),
        t);
  }
  if (!outcome.mode) {
    throw IntegrationError(fmt::format("the model gave no mode after the {} at t = {:.9g}", why, t),
                           t, IDA_RTFUNC_FAIL);
  }
  mode = std::move(outcome.mode);
  if (algebraic()) {
    indicators_at(t, z, g_lo);
    return;
  }
  // The new mode's equations from here: a restart at t with z' consistent with them.
  consistent_derivative(t, z, zp);
  std::memcpy(N_VGetArrayPointer(yy), z.data(), n * sizeof(double));
  std::memcpy(N_VGetArrayPointer(yp), zp.data(), n * sizeof(double));
  take_mode_tolerances();
  reinitialize(t);
  indicators_at(t, z, g_lo);
}

void Integrator::Impl::reinitialize(double t) {
  IDAMem m = ida();
  counter_carry += counters();
  counter_carry -= counter_base;
  check(IDAReInit(mem, t, yy, yp), "IDAReInit");
  // As after construction: unused history vectors zero (equal states give equal snapshots), and
  // IDA's one-time setup done, so that a snapshot taken here restores into any clone target.
  for (int j = 2; j <= m->ida_maxord; ++j) N_VConst(0.0, m->ida_phi[j]);
  N_VConst(0.0, m->ida_ee);
  check(IDAInitialSetup(m), "IDAInitialSetup");
  m->ida_SetupDone = SUNTRUE;
  counter_base = counters();
}

}  // namespace macrostep::ida

/* One Co-Simulation step of a test FMU (fmi2_frame.h, fmi3_frame.h with CO_SIMULATION): the
 * model's ODE integrated by classic Runge-Kutta steps of at most CS_SUBSTEP (default 1e-4 s)
 * from t over h, every input with a slope (input_slope[vr] != 0, FMI 2's input derivatives)
 * moving linearly from its value at t; the slopes are cleared after the step (they hold for one
 * step). Needs N_REALS, N_STATES, state_vr, derivative_vr and model_evaluate. Returns nonzero if
 * the model cannot be evaluated. */
#include <math.h>
#include <string.h>

#ifndef CS_SUBSTEP
#define CS_SUBSTEP 1e-4
#endif

/* x' = f(t, x) at t with the inputs start + slope (t - t0), into dx. */
static int cs_derivatives(double* real, const double* slope, const double* start, double t0,
                          double t, const double* x, double* dx) {
  for (int k = 0; k < N_REALS; ++k) {
    if (slope[k] != 0.0) real[k] = start[k] + slope[k] * (t - t0);
  }
  for (int i = 0; i < N_STATES; ++i) real[state_vr[i]] = x[i];
  if (model_evaluate(t, real)) return 1;
  for (int i = 0; i < N_STATES; ++i) dx[i] = real[derivative_vr[i]];
  return 0;
}

static int cs_step(double* real, double* slope, double t, double h) {
  double start[N_REALS], x[N_STATES], k1[N_STATES], k2[N_STATES], k3[N_STATES], k4[N_STATES],
      y[N_STATES];
  memcpy(start, real, sizeof start);
  for (int i = 0; i < N_STATES; ++i) x[i] = real[state_vr[i]];
  const int n = (int)ceil(h / CS_SUBSTEP - 1e-9);
  const double dt = h / n;
  for (int s = 0; s < n; ++s) {
    const double ts = t + s * dt;
    if (cs_derivatives(real, slope, start, t, ts, x, k1)) return 1;
    for (int i = 0; i < N_STATES; ++i) y[i] = x[i] + 0.5 * dt * k1[i];
    if (cs_derivatives(real, slope, start, t, ts + 0.5 * dt, y, k2)) return 1;
    for (int i = 0; i < N_STATES; ++i) y[i] = x[i] + 0.5 * dt * k2[i];
    if (cs_derivatives(real, slope, start, t, ts + 0.5 * dt, y, k3)) return 1;
    for (int i = 0; i < N_STATES; ++i) y[i] = x[i] + dt * k3[i];
    if (cs_derivatives(real, slope, start, t, ts + dt, y, k4)) return 1;
    for (int i = 0; i < N_STATES; ++i) {
      x[i] += dt / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]);
    }
  }
  /* The variables at the step's end (outputs, derivatives) from the final state. */
  if (cs_derivatives(real, slope, start, t, t + h, x, k1)) return 1;
  for (int k = 0; k < N_REALS; ++k) slope[k] = 0.0;
  return 0;
}

/* The Van der Pol oscillator as an FMI 2.0 Model Exchange FMU, with an additive input:
 *   x0' = x1,   x1' = mu (1 - x0^2) x1 - x0 + u.
 * Outputs x0, x1 (the states). No directional derivatives: the importer differences. */
#define MODEL_GUID "{0b7c2d55-6a3e-4c59-8f0e-vanderpol001}"
#define N_REALS 5
#define N_STATES 2
#define STATE_VR \
  { 0, 1 }
#define DERIVATIVE_VR \
  { 1, 2 }

enum { X0, X1, DX1, MU, U };

static void model_start(double* r) {
  r[X0] = 2.0;
  r[X1] = 0.0;
  r[DX1] = 0.0;
  r[MU] = 1.0;
  r[U] = 0.0;
}

static int model_evaluate(double t, double* r) {
  (void)t;
  r[DX1] = r[MU] * (1.0 - r[X0] * r[X0]) * r[X1] - r[X0] + r[U];
  return 0;
}

#include "fmi2_frame.h"

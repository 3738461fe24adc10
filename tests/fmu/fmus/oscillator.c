/* One mass of the two-mass oscillator (spec/MODELS.md §1.2, the chain of §1 cut into one mass
 * per subsystem) as an FMI 2.0 Model Exchange FMU:
 *   x' = v,   m v' = -c x - d v + amplitude sin(omega t + phase) + force_sign force,
 * the spring c and damper d to the wall, a harmonic force, and the coupling force as input.
 * Outputs x, v. der(x) is v itself (the same value reference). Directional derivatives are
 * provided. fail_time: from this time on every evaluation fails with fmi2Error (the importer's
 * error test). WITH_EVENTS: the variant with a state event (x = 0) and a time event
 * (event_time). RESCALE_AT_EVENT: the variant whose motion a time event at event_time multiplies
 * by `factor`, the states' nominals {1, 1000} with it (a state whose magnitude an event changes;
 * FMI's nominalsOfContinuousStatesChanged). Built as FMI 2.0 (fmi2_frame.h) and, with FMI3
 * defined, as FMI 3.0.
 */
#include <math.h>

#define MODEL_GUID "{5e0d6f1c-1b1e-4f43-9d6e-oscillator01}"
#ifdef RESCALE_AT_EVENT
#define N_REALS 15
#else
#define N_REALS 13
#endif
#define N_STATES 2
#define STATE_VR \
  { 0, 1 }
#define DERIVATIVE_VR \
  { 1, 2 }
#define PROVIDES_DIRECTIONAL_DERIVATIVE

enum {
  X,
  V,
  A,
  FORCE,
  M,
  C,
  D,
  AMPLITUDE,
  OMEGA,
  PHASE,
  SIGN,
  FAIL_TIME,
  EVENT_TIME,
  FACTOR,
  SCALE
};

#ifdef WITH_EVENTS
/* The events variant: x = 0 is a state event, event_time a time event. */
#define N_EVENT_INDICATORS 1
#define TIME_EVENT_VR EVENT_TIME
static void model_event_indicators(const double* r, double* z) {
  z[0] = r[X];
}
#endif

#ifdef RESCALE_AT_EVENT
/* scale: 1 until the event, then factor (an internal variable, part of the FMU state). */
#define MODEL_EVENT_UPDATE
#define MODEL_NOMINALS
static void model_event_update(double t, double* r, int* changed, int* terminate, double* next) {
  *terminate = 0;
  if (r[SCALE] == 1.0 && t >= r[EVENT_TIME]) {
    r[X] *= r[FACTOR];
    r[V] *= r[FACTOR];
    r[SCALE] = r[FACTOR];
    *changed = 1;
  }
  if (r[SCALE] == 1.0) *next = r[EVENT_TIME];
}
static void model_nominals(const double* r, double* x) {
  x[0] = r[SCALE];
  x[1] = 1e3 * r[SCALE];
}
#endif

static void model_start(double* r) {
  for (int i = 0; i < N_REALS; ++i) r[i] = 0.0;
  r[M] = 1.0;
  r[SIGN] = 1.0;
  r[FAIL_TIME] = INFINITY;
  r[EVENT_TIME] = 1e300;
#ifdef RESCALE_AT_EVENT
  r[FACTOR] = 1.0;
  r[SCALE] = 1.0;
#endif
}

static int model_evaluate(double t, double* r) {
  if (t >= r[FAIL_TIME]) return 1;
  r[A] = (-r[C] * r[X] - r[D] * r[V] + r[AMPLITUDE] * sin(r[OMEGA] * t + r[PHASE]) +
          r[SIGN] * r[FORCE]) /
         r[M];
  return 0;
}

static double model_partial(const double* r, unsigned unknown, unsigned known) {
  if (unknown == V) return known == V ? 1.0 : 0.0;
  if (unknown == X) return known == X ? 1.0 : 0.0;
  if (unknown != A) return 0.0;
  switch (known) {
    case X:
      return -r[C] / r[M];
    case V:
      return -r[D] / r[M];
    case FORCE:
      return r[SIGN] / r[M];
    default:
      return 0.0;
  }
}

#ifdef FMI3
#include "fmi3_frame.h"
#else
#include "fmi2_frame.h"
#endif

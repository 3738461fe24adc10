/* A bouncing ball as an FMI 2.0 Model Exchange FMU with state events, written the way modelling
 * tools export one (after the Modelica Reference FMU BouncingBall):
 *   h' = v,  v' = -g  (0 while the ball rests),
 * the event indicator h; at an impact (h <= 0, v < 0) v becomes -e v and h the smallest positive
 * double, the discrete outputs impacts (their count) and last_impact (the time of the last one)
 * change, and a ball slower than v_min after an impact comes to rest (v = 0, no gravity, the
 * indicator 1). The FMU can serialize its state (the variables and the time).
 * terminate_after > 0: the FMU asks to terminate at that impact. With FMI3 defined, the same
 * model as an FMI 3.0 FMU (bouncing_ball3.xml).
 */
#include <float.h>

#define MODEL_GUID "{b0c1a2d3-4e5f-4061-8a9b-bouncingbal1}"
#define N_REALS 11
#define N_STATES 2
#define STATE_VR \
  { 0, 1 }
#define DERIVATIVE_VR \
  { 1, 2 }
#define N_EVENT_INDICATORS 1
#define MODEL_EVENT_UPDATE
#define CAN_SERIALIZE_STATE

enum { H, V, A, G, E, IMPACTS, LAST_IMPACT, V_MIN, RESTING, TERMINATE_AFTER };
/* FMI 3 names the event indicator as a variable: real[CONTACT], written by model_evaluate. */
#define CONTACT (N_REALS - 1)

static void model_start(double* r) {
  for (int i = 0; i < N_REALS; ++i) r[i] = 0.0;
  r[H] = 1.0;
  r[G] = 9.81;
  r[E] = 0.8;
  r[V_MIN] = 0.1;
}

static int model_evaluate(double t, double* r) {
  (void)t;
  r[A] = r[RESTING] != 0.0 ? 0.0 : -r[G];
  r[CONTACT] = r[RESTING] != 0.0 ? 1.0 : r[H];
  return 0;
}

static void model_event_indicators(const double* r, double* z) {
  z[0] = r[RESTING] != 0.0 ? 1.0 : r[H];
}

static void model_event_update(double t, double* r, int* states_changed, int* terminate,
                               double* next_event_time) {
  (void)next_event_time;
  if (r[RESTING] != 0.0 || !(r[H] <= 0.0 && r[V] < 0.0)) return;
  r[IMPACTS] += 1.0;
  r[LAST_IMPACT] = t;
  r[H] = DBL_MIN;
  r[V] = -r[E] * r[V];
  if (r[V] < r[V_MIN]) {
    r[V] = 0.0;
    r[RESTING] = 1.0;
  }
  *states_changed = 1;
  *terminate = r[TERMINATE_AFTER] > 0.0 && r[IMPACTS] >= r[TERMINATE_AFTER];
}

#ifdef FMI3
#include "fmi3_frame.h"
#else
#include "fmi2_frame.h"
#endif

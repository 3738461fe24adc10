/* A stair as an FMI 2.0 Model Exchange FMU without continuous states, as tools export signal
 * sources and blocks (after the Modelica Reference FMU Stair): the discrete output counter
 * (an Integer) rises by one at the time events period, 2·period, ... that the FMU schedules
 * itself, the Boolean output odd says whether it is odd, and the output y = step·counter +
 * offset (in V) feeds the input offset through. The FMU can serialize its
 * state (the variables and the time).
 */
#define MODEL_GUID "{5a1c0f2e-7d3b-4c8e-9f6a-stair0000001}"
#define N_REALS 6
#define N_STATES 0
#define MODEL_EVENT_UPDATE
#define CAN_SERIALIZE_STATE

enum { COUNTER, Y, OFFSET, STEP, PERIOD, ODD };

static void model_start(double* r) {
  r[COUNTER] = 0.0;
  r[Y] = 0.0;
  r[OFFSET] = 0.0;
  r[STEP] = 1.0;
  r[PERIOD] = 0.25;
}

static int model_evaluate(double t, double* r) {
  (void)t;
  r[Y] = r[STEP] * r[COUNTER] + r[OFFSET];
  r[ODD] = (double)((long)r[COUNTER] % 2 != 0);
  return 0;
}

/* At a time event (t at the next multiple of period, to rounding) the counter rises; the next
 * event is scheduled from the counter, so that event times are exact multiples. */
static void model_event_update(double t, double* r, int* states_changed, int* terminate,
                               double* next_event_time) {
  (void)states_changed;
  (void)terminate;
  const double due = (r[COUNTER] + 1.0) * r[PERIOD];
  if (t >= due - 1e-12 * r[PERIOD]) r[COUNTER] += 1.0;
  *next_event_time = (r[COUNTER] + 1.0) * r[PERIOD];
}

#include "fmi2_frame.h"

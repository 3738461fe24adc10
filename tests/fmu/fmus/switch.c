/* A gear switch as an FMI 2.0 Model Exchange FMU without states: the Integer input gear and the
 * Boolean input on give the Real output y = on ? ratio·gear : 0 (the typed inputs' test).
 */
#define MODEL_GUID "{7c2e9a14-51b0-4d7e-8f3a-switch000001}"
#define N_REALS 4
#define N_STATES 0

enum { GEAR, ON, Y, RATIO };

static void model_start(double* r) {
  r[GEAR] = 0.0;
  r[ON] = 0.0;
  r[Y] = 0.0;
  r[RATIO] = 1.5;
}

static int model_evaluate(double t, double* r) {
  (void)t;
  r[Y] = r[ON] != 0.0 ? r[RATIO] * r[GEAR] : 0.0;
  return 0;
}

#include "fmi2_frame.h"

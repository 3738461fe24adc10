/* A first-order lag with a direct feed-through output, FMI 2.0 Model Exchange:
 *   x' = -a x + u,   y = x + k u   (y depends on the input at once). */
#define MODEL_GUID "{3f1a9e27-77c4-4a0b-b5d2-feedthrough1}"
#define N_REALS 6
#define N_STATES 1
#define STATE_VR \
  { 0 }
#define DERIVATIVE_VR \
  { 1 }

enum { X, DX, U, Y, A, K };

static void model_start(double* r) {
  r[X] = 1.0;
  r[DX] = 0.0;
  r[U] = 0.0;
  r[Y] = 0.0;
  r[A] = 2.0;
  r[K] = 0.5;
}

static int model_evaluate(double t, double* r) {
  (void)t;
  r[DX] = -r[A] * r[X] + r[U];
  r[Y] = r[X] + r[K] * r[U];
  return 0;
}

#include "fmi2_frame.h"

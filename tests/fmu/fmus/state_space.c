/* A linear state-space block with FMI 3.0 array variables, as tools export them (the Modelica
 * Reference FMUs' StateSpace has this interface):
 *   x' = A x + B u,   y = C x + D u,
 * n = 2 states (the structural parameter n dimensions A, B, C and x), one input u[1], two outputs
 * y[2]. A, B, C, D and x's start values are settable arrays. Directional derivatives are
 * provided. FMI 3.0 Model Exchange only (fmi3_frame.h with array variables). */
#define MODEL_GUID "{9a3c1e2b-5d4f-4c6a-8b7e-statespace01}"
#define N_REALS 21
#define N_STATES 2
#define N_VARIABLES 10

/* value reference → (first index in real[], number of elements) */
static const unsigned variable_offset[N_VARIABLES] = {0, 1, 2, 6, 8, 12, 14, 15, 17, 19};
static const unsigned variable_size[N_VARIABLES] = {1, 1, 4, 2, 4, 2, 1, 2, 2, 2};
#define VARIABLE_OFFSET(vr) variable_offset[vr]
#define VARIABLE_SIZE(vr) variable_size[vr]

enum { A = 2, B = 6, C = 8, D = 12, U = 14, Y = 15, X = 17, DX = 19 };
#define STATE_VR \
  { X, X + 1 }
#define DERIVATIVE_VR \
  { DX, DX + 1 }
#define PROVIDES_DIRECTIONAL_DERIVATIVE

static void model_start(double* r) {
  for (int i = 0; i < N_REALS; ++i) r[i] = 0.0;
  r[1] = 2.0;      /* n */
  r[A + 1] = 1.0;  /* A = [0 1; -1 0] */
  r[A + 2] = -1.0;
  r[B + 1] = 1.0;  /* B = [0; 1] */
  r[C] = 1.0;      /* C = I */
  r[C + 3] = 1.0;
}

static int model_evaluate(double t, double* r) {
  (void)t;
  for (int i = 0; i < 2; ++i) {
    r[DX + i] = r[A + 2 * i] * r[X] + r[A + 2 * i + 1] * r[X + 1] + r[B + i] * r[U];
    r[Y + i] = r[C + 2 * i] * r[X] + r[C + 2 * i + 1] * r[X + 1] + r[D + i] * r[U];
  }
  return 0;
}

/* ∂unknown/∂known, both indices into real[]. */
static double model_partial(const double* r, unsigned unknown, unsigned known) {
  const int derivative = unknown >= DX && unknown < DX + 2;
  const int output = unknown >= Y && unknown < Y + 2;
  if (!derivative && !output) return unknown == known ? 1.0 : 0.0;
  const unsigned row = unknown - (derivative ? DX : Y);
  const unsigned matrix = derivative ? A : C, feed = derivative ? B : D;
  if (known == X || known == X + 1) return r[matrix + 2 * row + (known - X)];
  if (known == U) return r[feed + row];
  return 0.0;
}

#include "fmi3_frame.h"

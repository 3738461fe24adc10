/* The FMU state of the test FMUs (fmi2_frame.h, fmi3_frame.h with CAN_SERIALIZE_STATE): the
 * variables and the time, copied and serialized as plain bytes. Needs N_REALS. */
#include <stdlib.h>
#include <string.h>

typedef struct {
  double real[N_REALS];
  double time;
} FmuState;

/* The variables and time into `existing`, or into a new state; NULL when out of memory. */
static FmuState* state_store(void* existing, const double* real, double time) {
  FmuState* s = existing ? (FmuState*)existing : (FmuState*)malloc(sizeof(FmuState));
  if (!s) return NULL;
  memcpy(s->real, real, sizeof s->real);
  s->time = time;
  return s;
}

static void state_load(const void* state, double* real, double* time) {
  memcpy(real, ((const FmuState*)state)->real, sizeof(((const FmuState*)state)->real));
  *time = ((const FmuState*)state)->time;
}

/* A state from serialized bytes; NULL for the wrong size or when out of memory. */
static FmuState* state_from_bytes(const void* bytes, size_t size) {
  if (size != sizeof(FmuState)) return NULL;
  FmuState* s = (FmuState*)malloc(sizeof(FmuState));
  if (s) memcpy(s, bytes, size);
  return s;
}

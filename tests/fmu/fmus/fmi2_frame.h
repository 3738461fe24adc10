/* The FMI 2.0 Model Exchange functions of the test FMUs, shared by every model: a model
 * defines, before including this file,
 *   N_REALS                 the number of Real variables; value reference k is real[k]
 *   N_STATES, STATE_VR, DERIVATIVE_VR   arrays of the states' and derivatives' value references
 *   static void model_start(double* real)               start values of every variable
 *   static int model_evaluate(double t, double* real)   derivatives and outputs from states,
 *                                                      inputs and parameters; nonzero: an error
 *   static double model_partial(const double* real, unsigned unknown, unsigned known)
 *                           d real[unknown] / d real[known] (providesDirectionalDerivative only,
 *                           with PROVIDES_DIRECTIONAL_DERIVATIVE defined)
 * and gets the FMI functions over a component that holds the variables (FMI 2.0 §2.1, §3.2).
 * OMIT_GET_DERIVATIVES leaves fmi2GetDerivatives out (the importer's missing-symbol test);
 * ONE_INSTANCE refuses a second live instance in the process (canBeInstantiatedOnlyOncePerProcess).
 * Events: N_EVENT_INDICATORS with static void model_event_indicators(const double* real,
 * double* z); TIME_EVENT_VR, the variable holding the time of a time event (none if >= 1e300);
 * or MODEL_EVENT_UPDATE with static void model_event_update(double t, double* real,
 * int* states_changed, int* terminate, double* next_event_time) (set next_event_time below 1e300
 * to schedule one), called in every fmi2NewDiscreteStates.
 * Nominals: STATE_NOMINALS, constant ({a, b, ...}); or MODEL_NOMINALS with static void
 * model_nominals(const double* real, double* x), which an event update may change: the round
 * reports nominalsOfContinuousStatesChanged then (unless HIDE_NOMINALS_CHANGE, an FMU that
 * breaks that rule).
 * CAN_SERIALIZE_STATE: the FMU state functions (the state is the variables and the time).
 * CO_SIMULATION: a Co-Simulation FMU instead (fmi2DoStep integrates the model with classic
 * Runge-Kutta steps of at most CS_SUBSTEP, default 1e-4 s; inputs with a slope from
 * fmi2SetRealInputDerivatives follow it over the step).
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "fmi2_api.h"

#define EXPORT __attribute__((visibility("default")))

typedef struct {
  double real[N_REALS];
  double time;
  fmi2CallbackFunctions callbacks;
  char name[64];
#ifdef CO_SIMULATION
  double input_slope[N_REALS]; /* fmi2SetRealInputDerivatives, for the next step only */
#endif
} Component;

#ifdef ONE_INSTANCE
static int live_instances;
#endif

static fmi2Status fail(Component* c, const char* message) {
  if (c->callbacks.logger) {
    c->callbacks.logger(c->callbacks.componentEnvironment, c->name, fmi2Error, "error", "%s",
                        message);
  }
  return fmi2Error;
}

EXPORT const char* fmi2GetTypesPlatform(void) {
  return "default";
}
EXPORT const char* fmi2GetVersion(void) {
  return "2.0";
}

EXPORT fmi2Component fmi2Instantiate(fmi2String name, fmi2Type type, fmi2String guid,
                                     fmi2String resources, const fmi2CallbackFunctions* callbacks,
                                     fmi2Boolean visible, fmi2Boolean logging) {
  (void)resources;
  (void)visible;
  (void)logging;
#ifdef CO_SIMULATION
  if (type != fmi2CoSimulation || strcmp(guid, MODEL_GUID) != 0) return NULL;
#else
  if (type != fmi2ModelExchange || strcmp(guid, MODEL_GUID) != 0) return NULL;
#endif
#ifdef ONE_INSTANCE
  if (live_instances > 0) {
    callbacks->logger(callbacks->componentEnvironment, name, fmi2Error, "error",
                      "only one instance per process");
    return NULL;
  }
  ++live_instances;
#endif
  Component* c = (Component*)calloc(1, sizeof(Component));
  if (!c) return NULL;
  c->callbacks = *callbacks;
  strncpy(c->name, name ? name : "", sizeof c->name - 1);
  model_start(c->real);
  return c;
}

EXPORT void fmi2FreeInstance(fmi2Component c) {
#ifdef ONE_INSTANCE
  --live_instances;
#endif
  free(c);
}

EXPORT fmi2Status fmi2SetupExperiment(fmi2Component c, fmi2Boolean td, fmi2Real tol, fmi2Real start,
                                      fmi2Boolean sd, fmi2Real stop) {
  (void)td;
  (void)tol;
  (void)sd;
  (void)stop;
  ((Component*)c)->time = start;
  return fmi2OK;
}

EXPORT fmi2Status fmi2EnterInitializationMode(fmi2Component c) {
  (void)c;
  return fmi2OK;
}
EXPORT fmi2Status fmi2ExitInitializationMode(fmi2Component c) {
  (void)c;
  return fmi2OK;
}
EXPORT fmi2Status fmi2Terminate(fmi2Component c) {
  (void)c;
  return fmi2OK;
}
EXPORT fmi2Status fmi2Reset(fmi2Component c) {
  model_start(((Component*)c)->real);
  return fmi2OK;
}

EXPORT fmi2Status fmi2SetReal(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                              const fmi2Real v[]) {
  for (size_t i = 0; i < n; ++i) {
    if (vr[i] >= N_REALS) return fail((Component*)c, "fmi2SetReal: unknown value reference");
    ((Component*)c)->real[vr[i]] = v[i];
  }
  return fmi2OK;
}

EXPORT fmi2Status fmi2GetReal(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                              fmi2Real v[]) {
  Component* m = (Component*)c;
  if (model_evaluate(m->time, m->real)) return fail(m, "the model cannot be evaluated");
  for (size_t i = 0; i < n; ++i) {
    if (vr[i] >= N_REALS) return fail(m, "fmi2GetReal: unknown value reference");
    v[i] = m->real[vr[i]];
  }
  return fmi2OK;
}

EXPORT fmi2Status fmi2GetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                                 fmi2Integer v[]) {
  Component* m = (Component*)c;
  if (model_evaluate(m->time, m->real)) return fail(m, "the model cannot be evaluated");
  for (size_t i = 0; i < n; ++i) {
    if (vr[i] >= N_REALS) return fail(m, "fmi2GetInteger: unknown value reference");
    v[i] = (fmi2Integer)m->real[vr[i]];
  }
  return fmi2OK;
}
EXPORT fmi2Status fmi2GetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                                 fmi2Boolean v[]) {
  Component* m = (Component*)c;
  if (model_evaluate(m->time, m->real)) return fail(m, "the model cannot be evaluated");
  for (size_t i = 0; i < n; ++i) {
    if (vr[i] >= N_REALS) return fail(m, "fmi2GetBoolean: unknown value reference");
    v[i] = m->real[vr[i]] != 0.0;
  }
  return fmi2OK;
}

/* Integer and Boolean variables live as numbers in real[] too. */
EXPORT fmi2Status fmi2SetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                                 const fmi2Integer v[]) {
  for (size_t i = 0; i < n; ++i) {
    if (vr[i] >= N_REALS) return fail((Component*)c, "fmi2SetInteger: unknown value reference");
    ((Component*)c)->real[vr[i]] = v[i];
  }
  return fmi2OK;
}
EXPORT fmi2Status fmi2SetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                                 const fmi2Boolean v[]) {
  for (size_t i = 0; i < n; ++i) {
    if (vr[i] >= N_REALS) return fail((Component*)c, "fmi2SetBoolean: unknown value reference");
    ((Component*)c)->real[vr[i]] = v[i] != 0;
  }
  return fmi2OK;
}

EXPORT fmi2Status fmi2NewDiscreteStates(fmi2Component c, fmi2EventInfo* info) {
  memset(info, 0, sizeof *info);
#if defined(MODEL_EVENT_UPDATE)
  {
    Component* m = (Component*)c;
    int changed = 0, terminate = 0;
    double next = 1e300;
    if (model_evaluate(m->time, m->real)) return fail(m, "the model cannot be evaluated");
#if defined(MODEL_NOMINALS) && !defined(HIDE_NOMINALS_CHANGE)
    double before[N_STATES], after[N_STATES];
    model_nominals(m->real, before);
#endif
    model_event_update(m->time, m->real, &changed, &terminate, &next);
#if defined(MODEL_NOMINALS) && !defined(HIDE_NOMINALS_CHANGE)
    model_nominals(m->real, after);
    info->nominalsOfContinuousStatesChanged = memcmp(before, after, sizeof before) != 0;
#endif
    info->valuesOfContinuousStatesChanged = changed;
    info->terminateSimulation = terminate;
    if (next < 1e300) {
      info->nextEventTimeDefined = 1;
      info->nextEventTime = next;
    }
  }
#elif defined(TIME_EVENT_VR)
  /* Scheduled until its time has come (the event's own round no longer schedules it). */
  if (((Component*)c)->real[TIME_EVENT_VR] < 1e300 &&
      ((Component*)c)->time < ((Component*)c)->real[TIME_EVENT_VR]) {
    info->nextEventTimeDefined = 1;
    info->nextEventTime = ((Component*)c)->real[TIME_EVENT_VR];
  }
#else
  (void)c;
#endif
  return fmi2OK;
}
EXPORT fmi2Status fmi2EnterEventMode(fmi2Component c) {
  (void)c;
  return fmi2OK;
}
EXPORT fmi2Status fmi2EnterContinuousTimeMode(fmi2Component c) {
  (void)c;
  return fmi2OK;
}
EXPORT fmi2Status fmi2CompletedIntegratorStep(fmi2Component c, fmi2Boolean no_prior,
                                              fmi2Boolean* enter_event_mode,
                                              fmi2Boolean* terminate) {
  (void)c;
  (void)no_prior;
  *enter_event_mode = 0;
  *terminate = 0;
  return fmi2OK;
}

EXPORT fmi2Status fmi2SetTime(fmi2Component c, fmi2Real t) {
  ((Component*)c)->time = t;
  return fmi2OK;
}

#if N_STATES > 0
static const unsigned state_vr[N_STATES] = STATE_VR;
#endif

EXPORT fmi2Status fmi2SetContinuousStates(fmi2Component c, const fmi2Real x[], size_t n) {
  if (n != N_STATES) return fail((Component*)c, "fmi2SetContinuousStates: wrong size");
#if N_STATES > 0
  for (size_t i = 0; i < n; ++i) ((Component*)c)->real[state_vr[i]] = x[i];
#else
  (void)x;
#endif
  return fmi2OK;
}

EXPORT fmi2Status fmi2GetContinuousStates(fmi2Component c, fmi2Real x[], size_t n) {
  if (n != N_STATES) return fail((Component*)c, "fmi2GetContinuousStates: wrong size");
#if N_STATES > 0
  for (size_t i = 0; i < n; ++i) x[i] = ((Component*)c)->real[state_vr[i]];
#else
  (void)x;
#endif
  return fmi2OK;
}

#ifndef OMIT_GET_DERIVATIVES
#if N_STATES > 0
static const unsigned derivative_vr[N_STATES] = DERIVATIVE_VR;
#endif

EXPORT fmi2Status fmi2GetDerivatives(fmi2Component c, fmi2Real dx[], size_t n) {
  Component* m = (Component*)c;
  if (n != N_STATES) return fail(m, "fmi2GetDerivatives: wrong size");
  if (model_evaluate(m->time, m->real)) return fail(m, "the model cannot be evaluated");
#if N_STATES > 0
  for (size_t i = 0; i < n; ++i) dx[i] = m->real[derivative_vr[i]];
#else
  (void)dx;
#endif
  return fmi2OK;
}
#endif

#ifndef N_EVENT_INDICATORS
#define N_EVENT_INDICATORS 0
static void model_event_indicators(const double* real, double* z) {
  (void)real;
  (void)z;
}
#endif

EXPORT fmi2Status fmi2GetEventIndicators(fmi2Component c, fmi2Real z[], size_t n) {
  Component* m = (Component*)c;
  if (n != N_EVENT_INDICATORS) return fail(m, "fmi2GetEventIndicators: wrong size");
  if (model_evaluate(m->time, m->real)) return fail(m, "the model cannot be evaluated");
  model_event_indicators(m->real, z);
  return fmi2OK;
}

/* STATE_NOMINALS: the model's nominal values of its states ({a, b, ...}); 1 without. */
EXPORT fmi2Status fmi2GetNominalsOfContinuousStates(fmi2Component c, fmi2Real x[], size_t n) {
  (void)c;
#if defined(MODEL_NOMINALS)
  double nominals[N_STATES];
  model_nominals(((Component*)c)->real, nominals);
  for (size_t i = 0; i < n && i < N_STATES; ++i) x[i] = nominals[i];
#elif defined(STATE_NOMINALS)
  static const double nominals[N_STATES] = STATE_NOMINALS;
  for (size_t i = 0; i < n && i < N_STATES; ++i) x[i] = nominals[i];
#else
  for (size_t i = 0; i < n; ++i) x[i] = 1.0;
#endif
  return fmi2OK;
}

#ifdef PROVIDES_DIRECTIONAL_DERIVATIVE
EXPORT fmi2Status fmi2GetDirectionalDerivative(fmi2Component c, const fmi2ValueReference u[],
                                               size_t nu, const fmi2ValueReference k[], size_t nk,
                                               const fmi2Real seed[], fmi2Real out[]) {
  Component* m = (Component*)c;
  if (model_evaluate(m->time, m->real)) return fail(m, "the model cannot be evaluated");
  for (size_t i = 0; i < nu; ++i) {
    out[i] = 0.0;
    for (size_t j = 0; j < nk; ++j) out[i] += model_partial(m->real, u[i], k[j]) * seed[j];
  }
  return fmi2OK;
}
#endif

#ifdef CAN_SERIALIZE_STATE
#include "fmu_state.h"

EXPORT fmi2Status fmi2GetFMUstate(fmi2Component c, fmi2FMUstate* state) {
  Component* m = (Component*)c;
  FmuState* s = state_store(*state, m->real, m->time);
  if (!s) return fail(m, "fmi2GetFMUstate: out of memory");
  *state = s;
  return fmi2OK;
}
EXPORT fmi2Status fmi2SetFMUstate(fmi2Component c, fmi2FMUstate state) {
  Component* m = (Component*)c;
  if (!state) return fail(m, "fmi2SetFMUstate: no state");
  state_load(state, m->real, &m->time);
  return fmi2OK;
}
EXPORT fmi2Status fmi2FreeFMUstate(fmi2Component c, fmi2FMUstate* state) {
  (void)c;
  free(*state);
  *state = NULL;
  return fmi2OK;
}
EXPORT fmi2Status fmi2SerializedFMUstateSize(fmi2Component c, fmi2FMUstate state, size_t* size) {
  (void)c;
  (void)state;
  *size = sizeof(FmuState);
  return fmi2OK;
}
EXPORT fmi2Status fmi2SerializeFMUstate(fmi2Component c, fmi2FMUstate state, fmi2Byte bytes[],
                                        size_t size) {
  if (size != sizeof(FmuState)) return fail((Component*)c, "fmi2SerializeFMUstate: wrong size");
  memcpy(bytes, state, size);
  return fmi2OK;
}
EXPORT fmi2Status fmi2DeSerializeFMUstate(fmi2Component c, const fmi2Byte bytes[], size_t size,
                                          fmi2FMUstate* state) {
  *state = state_from_bytes(bytes, size);
  return *state ? fmi2OK
                : fail((Component*)c, "fmi2DeSerializeFMUstate: wrong size or out of memory");
}
#endif

#ifdef CO_SIMULATION
#include "cs_step.h"

EXPORT fmi2Status fmi2DoStep(fmi2Component c, fmi2Real t, fmi2Real h, fmi2Boolean no_prior) {
  Component* m = (Component*)c;
  (void)no_prior;
  if (!(h > 0.0)) return fail(m, "fmi2DoStep: the step must be positive");
  if (cs_step(m->real, m->input_slope, t, h)) return fail(m, "the model cannot be evaluated");
  m->time = t + h;
  return fmi2OK;
}

EXPORT fmi2Status fmi2SetRealInputDerivatives(fmi2Component c, const fmi2ValueReference vr[],
                                              size_t n, const fmi2Integer order[],
                                              const fmi2Real value[]) {
  Component* m = (Component*)c;
  for (size_t i = 0; i < n; ++i) {
    if (vr[i] >= N_REALS || order[i] != 1) return fail(m, "fmi2SetRealInputDerivatives: order 1");
    m->input_slope[vr[i]] = value[i];
  }
  return fmi2OK;
}
#endif

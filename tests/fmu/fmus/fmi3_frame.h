/* The FMI 3.0 Model Exchange functions of the test FMUs: the same model interface as
 * fmi2_frame.h (N_REALS, N_STATES, STATE_VR, DERIVATIVE_VR, model_start, model_evaluate,
 * model_partial with PROVIDES_DIRECTIONAL_DERIVATIVE; N_EVENT_INDICATORS with
 * model_event_indicators, MODEL_EVENT_UPDATE with model_event_update, STATE_NOMINALS or
 * MODEL_NOMINALS with model_nominals, HIDE_NOMINALS_CHANGE, CAN_SERIALIZE_STATE),
 * under FMI 3.0's names and signatures (§2.3, §3.2). Value reference k is real[k]. */
#include <stdlib.h>
#include <string.h>

#include "fmi3_api.h"

#define EXPORT __attribute__((visibility("default")))

/* Array variables: a model with arrays defines N_VARIABLES, VARIABLE_OFFSET(vr) (the first
 * element's index in real[]) and VARIABLE_SIZE(vr); STATE_VR and DERIVATIVE_VR then list
 * indices into real[], and model_partial takes them too. Without: value reference k is real[k]. */
#ifndef N_VARIABLES
#define N_VARIABLES N_REALS
#define VARIABLE_OFFSET(vr) (vr)
#define VARIABLE_SIZE(vr) 1
#endif

typedef struct {
  double real[N_REALS];
  double time;
  fmi3InstanceEnvironment environment;
  fmi3LogMessageCallback log;
#ifdef CO_SIMULATION
  double input_slope[N_REALS]; /* always 0: FMI 3 has no input derivatives */
#endif
} Component;

static fmi3Status fail(Component* c, const char* message) {
  if (c->log) c->log(c->environment, fmi3Error, "error", message);
  return fmi3Error;
}

EXPORT const char* fmi3GetVersion(void) {
  return "3.0";
}

EXPORT fmi3Instance fmi3InstantiateModelExchange(fmi3String name, fmi3String token,
                                                 fmi3String resources, fmi3Boolean visible,
                                                 fmi3Boolean logging,
                                                 fmi3InstanceEnvironment environment,
                                                 fmi3LogMessageCallback log) {
  (void)name;
  (void)resources;
  (void)visible;
  (void)logging;
  if (strcmp(token, MODEL_GUID) != 0) return NULL;
  Component* c = (Component*)calloc(1, sizeof(Component));
  if (!c) return NULL;
  c->environment = environment;
  c->log = log;
  model_start(c->real);
  return c;
}

EXPORT void fmi3FreeInstance(fmi3Instance c) {
  free(c);
}

EXPORT fmi3Status fmi3EnterInitializationMode(fmi3Instance c, fmi3Boolean td, fmi3Float64 tol,
                                              fmi3Float64 start, fmi3Boolean sd, fmi3Float64 stop) {
  (void)td;
  (void)tol;
  (void)sd;
  (void)stop;
  ((Component*)c)->time = start;
  return fmi3OK;
}
EXPORT fmi3Status fmi3ExitInitializationMode(fmi3Instance c) {
  (void)c;
  return fmi3OK;
}
EXPORT fmi3Status fmi3Terminate(fmi3Instance c) {
  (void)c;
  return fmi3OK;
}

/* The number of values of the variables vr[0..n), or 0 for an unknown reference. */
static size_t values_of(const fmi3ValueReference vr[], size_t n) {
  size_t count = 0;
  for (size_t i = 0; i < n; ++i) {
    if (vr[i] >= N_VARIABLES) return 0;
    count += VARIABLE_SIZE(vr[i]);
  }
  return count;
}

EXPORT fmi3Status fmi3SetFloat64(fmi3Instance c, const fmi3ValueReference vr[], size_t n,
                                 const fmi3Float64 v[], size_t nv) {
  if (n > 0 && values_of(vr, n) != nv)
    return fail((Component*)c, "fmi3SetFloat64: unknown reference or wrong number of values");
  for (size_t i = 0, at = 0; i < n; ++i) {
    for (size_t k = 0; k < VARIABLE_SIZE(vr[i]); ++k) {
      ((Component*)c)->real[VARIABLE_OFFSET(vr[i]) + k] = v[at++];
    }
  }
  return fmi3OK;
}

EXPORT fmi3Status fmi3GetFloat64(fmi3Instance c, const fmi3ValueReference vr[], size_t n,
                                 fmi3Float64 v[], size_t nv) {
  Component* m = (Component*)c;
  if (n > 0 && values_of(vr, n) != nv)
    return fail(m, "fmi3GetFloat64: unknown reference or wrong number of values");
  if (model_evaluate(m->time, m->real)) return fail(m, "the model cannot be evaluated");
  for (size_t i = 0, at = 0; i < n; ++i) {
    for (size_t k = 0; k < VARIABLE_SIZE(vr[i]); ++k) {
      v[at++] = m->real[VARIABLE_OFFSET(vr[i]) + k];
    }
  }
  return fmi3OK;
}

EXPORT fmi3Status fmi3GetInt32(fmi3Instance c, const fmi3ValueReference vr[], size_t n,
                               fmi3Int32 v[], size_t nv) {
  Component* m = (Component*)c;
  if (nv != n) return fail(m, "fmi3GetInt32: scalars only");
  if (model_evaluate(m->time, m->real)) return fail(m, "the model cannot be evaluated");
  for (size_t i = 0; i < n; ++i) {
    if (vr[i] >= N_REALS) return fail(m, "fmi3GetInt32: unknown value reference");
    v[i] = (fmi3Int32)m->real[vr[i]];
  }
  return fmi3OK;
}
EXPORT fmi3Status fmi3GetBoolean(fmi3Instance c, const fmi3ValueReference vr[], size_t n,
                                 fmi3Boolean v[], size_t nv) {
  Component* m = (Component*)c;
  if (nv != n) return fail(m, "fmi3GetBoolean: scalars only");
  if (model_evaluate(m->time, m->real)) return fail(m, "the model cannot be evaluated");
  for (size_t i = 0; i < n; ++i) {
    if (vr[i] >= N_REALS) return fail(m, "fmi3GetBoolean: unknown value reference");
    v[i] = m->real[vr[i]] != 0.0;
  }
  return fmi3OK;
}

EXPORT fmi3Status fmi3SetInt32(fmi3Instance c, const fmi3ValueReference vr[], size_t n,
                               const fmi3Int32 v[], size_t nv) {
  (void)vr;
  (void)v;
  (void)nv;
  return n == 0 ? fmi3OK : fail((Component*)c, "no Int32 variables");
}
EXPORT fmi3Status fmi3SetBoolean(fmi3Instance c, const fmi3ValueReference vr[], size_t n,
                                 const fmi3Boolean v[], size_t nv) {
  (void)vr;
  (void)v;
  (void)nv;
  return n == 0 ? fmi3OK : fail((Component*)c, "no Boolean variables");
}

EXPORT fmi3Status fmi3UpdateDiscreteStates(fmi3Instance c, fmi3Boolean* update,
                                           fmi3Boolean* terminate, fmi3Boolean* nominals,
                                           fmi3Boolean* values, fmi3Boolean* next_defined,
                                           fmi3Float64* next) {
  *update = *terminate = *nominals = *values = *next_defined = false;
  *next = 0.0;
#ifdef MODEL_EVENT_UPDATE
  {
    Component* m = (Component*)c;
    int changed = 0, stop = 0;
    double when = 1e300;
    if (model_evaluate(m->time, m->real)) return fail(m, "the model cannot be evaluated");
#if defined(MODEL_NOMINALS) && !defined(HIDE_NOMINALS_CHANGE)
    double before[N_STATES], after[N_STATES];
    model_nominals(m->real, before);
#endif
    model_event_update(m->time, m->real, &changed, &stop, &when);
#if defined(MODEL_NOMINALS) && !defined(HIDE_NOMINALS_CHANGE)
    model_nominals(m->real, after);
    *nominals = memcmp(before, after, sizeof before) != 0;
#endif
    *values = changed != 0;
    *terminate = stop != 0;
    if (when < 1e300) {
      *next_defined = true;
      *next = when;
    }
  }
#else
  (void)c;
#endif
  return fmi3OK;
}

#ifndef N_EVENT_INDICATORS
#define N_EVENT_INDICATORS 0
static void model_event_indicators(const double* real, double* z) {
  (void)real;
  (void)z;
}
#endif

EXPORT fmi3Status fmi3GetEventIndicators(fmi3Instance c, fmi3Float64 z[], size_t n) {
  Component* m = (Component*)c;
  if (n != N_EVENT_INDICATORS) return fail(m, "fmi3GetEventIndicators: wrong size");
  if (model_evaluate(m->time, m->real)) return fail(m, "the model cannot be evaluated");
  model_event_indicators(m->real, z);
  return fmi3OK;
}

EXPORT fmi3Status fmi3CompletedIntegratorStep(fmi3Instance c, fmi3Boolean no_prior,
                                              fmi3Boolean* enter_event_mode,
                                              fmi3Boolean* terminate) {
  (void)c;
  (void)no_prior;
  *enter_event_mode = false;
  *terminate = false;
  return fmi3OK;
}

#ifdef CAN_SERIALIZE_STATE
#include "fmu_state.h"

EXPORT fmi3Status fmi3GetFMUState(fmi3Instance c, fmi3FMUState* state) {
  Component* m = (Component*)c;
  FmuState* s = state_store(*state, m->real, m->time);
  if (!s) return fail(m, "fmi3GetFMUState: out of memory");
  *state = s;
  return fmi3OK;
}
EXPORT fmi3Status fmi3SetFMUState(fmi3Instance c, fmi3FMUState state) {
  Component* m = (Component*)c;
  if (!state) return fail(m, "fmi3SetFMUState: no state");
  state_load(state, m->real, &m->time);
  return fmi3OK;
}
EXPORT fmi3Status fmi3FreeFMUState(fmi3Instance c, fmi3FMUState* state) {
  (void)c;
  free(*state);
  *state = NULL;
  return fmi3OK;
}
EXPORT fmi3Status fmi3SerializedFMUStateSize(fmi3Instance c, fmi3FMUState state, size_t* size) {
  (void)c;
  (void)state;
  *size = sizeof(FmuState);
  return fmi3OK;
}
EXPORT fmi3Status fmi3SerializeFMUState(fmi3Instance c, fmi3FMUState state, fmi3Byte bytes[],
                                        size_t size) {
  if (size != sizeof(FmuState)) return fail((Component*)c, "fmi3SerializeFMUState: wrong size");
  memcpy(bytes, state, size);
  return fmi3OK;
}
EXPORT fmi3Status fmi3DeserializeFMUState(fmi3Instance c, const fmi3Byte bytes[], size_t size,
                                          fmi3FMUState* state) {
  *state = state_from_bytes(bytes, size);
  return *state ? fmi3OK
                : fail((Component*)c, "fmi3DeserializeFMUState: wrong size or out of memory");
}
#endif
EXPORT fmi3Status fmi3EnterEventMode(fmi3Instance c) {
  (void)c;
  return fmi3OK;
}
EXPORT fmi3Status fmi3EnterContinuousTimeMode(fmi3Instance c) {
  (void)c;
  return fmi3OK;
}
EXPORT fmi3Status fmi3SetTime(fmi3Instance c, fmi3Float64 t) {
  ((Component*)c)->time = t;
  return fmi3OK;
}

static const unsigned state_vr[N_STATES] = STATE_VR;
static const unsigned derivative_vr[N_STATES] = DERIVATIVE_VR;

EXPORT fmi3Status fmi3SetContinuousStates(fmi3Instance c, const fmi3Float64 x[], size_t n) {
  if (n != N_STATES) return fail((Component*)c, "fmi3SetContinuousStates: wrong size");
  for (size_t i = 0; i < n; ++i) ((Component*)c)->real[state_vr[i]] = x[i];
  return fmi3OK;
}
EXPORT fmi3Status fmi3GetContinuousStates(fmi3Instance c, fmi3Float64 x[], size_t n) {
  if (n != N_STATES) return fail((Component*)c, "fmi3GetContinuousStates: wrong size");
  for (size_t i = 0; i < n; ++i) x[i] = ((Component*)c)->real[state_vr[i]];
  return fmi3OK;
}
#if defined(STATE_NOMINALS) || defined(MODEL_NOMINALS)
/* The model's nominal values of its states ({a, b, ...}, or model_nominals). Without either the
 * function is not exported (an FMU that leaves it out: the importer takes 1). */
EXPORT fmi3Status fmi3GetNominalsOfContinuousStates(fmi3Instance c, fmi3Float64 x[], size_t n) {
#ifdef MODEL_NOMINALS
  double nominals[N_STATES];
  model_nominals(((Component*)c)->real, nominals);
#else
  static const double nominals[N_STATES] = STATE_NOMINALS;
#endif
  if (n != N_STATES) return fail((Component*)c, "fmi3GetNominalsOfContinuousStates: wrong size");
  for (size_t i = 0; i < n; ++i) x[i] = nominals[i];
  return fmi3OK;
}
#endif
EXPORT fmi3Status fmi3GetContinuousStateDerivatives(fmi3Instance c, fmi3Float64 dx[], size_t n) {
  Component* m = (Component*)c;
  if (n != N_STATES) return fail(m, "fmi3GetContinuousStateDerivatives: wrong size");
  if (model_evaluate(m->time, m->real)) return fail(m, "the model cannot be evaluated");
  for (size_t i = 0; i < n; ++i) dx[i] = m->real[derivative_vr[i]];
  return fmi3OK;
}

#ifdef PROVIDES_DIRECTIONAL_DERIVATIVE
EXPORT fmi3Status fmi3GetDirectionalDerivative(fmi3Instance c, const fmi3ValueReference u[],
                                               size_t nu, const fmi3ValueReference k[], size_t nk,
                                               const fmi3Float64 seed[], size_t nseed,
                                               fmi3Float64 out[], size_t nout) {
  Component* m = (Component*)c;
  if (values_of(k, nk) != nseed || values_of(u, nu) != nout)
    return fail(m, "fmi3GetDirectionalDerivative: sizes");
  if (model_evaluate(m->time, m->real)) return fail(m, "the model cannot be evaluated");
  for (size_t i = 0, row = 0; i < nu; ++i) {
    for (size_t a = 0; a < VARIABLE_SIZE(u[i]); ++a, ++row) {
      out[row] = 0.0;
      for (size_t j = 0, column = 0; j < nk; ++j) {
        for (size_t b = 0; b < VARIABLE_SIZE(k[j]); ++b, ++column) {
          out[row] += model_partial(m->real, (unsigned)(VARIABLE_OFFSET(u[i]) + a),
                                    (unsigned)(VARIABLE_OFFSET(k[j]) + b)) *
                      seed[column];
        }
      }
    }
  }
  return fmi3OK;
}
#endif

#ifdef CO_SIMULATION
#include "cs_step.h"

EXPORT fmi3Instance fmi3InstantiateCoSimulation(
    fmi3String name, fmi3String token, fmi3String resources, fmi3Boolean visible,
    fmi3Boolean logging, fmi3Boolean event_mode_used, fmi3Boolean early_return_allowed,
    const fmi3ValueReference required[], size_t n_required, fmi3InstanceEnvironment environment,
    fmi3LogMessageCallback log, fmi3IntermediateUpdateCallback intermediate) {
  (void)event_mode_used;
  (void)early_return_allowed;
  (void)required;
  (void)n_required;
  (void)intermediate;
  return fmi3InstantiateModelExchange(name, token, resources, visible, logging, environment, log);
}

EXPORT fmi3Status fmi3DoStep(fmi3Instance c, fmi3Float64 t, fmi3Float64 h, fmi3Boolean no_prior,
                             fmi3Boolean* event_handling_needed, fmi3Boolean* terminate,
                             fmi3Boolean* early_return, fmi3Float64* last_successful_time) {
  Component* m = (Component*)c;
  (void)no_prior;
  *event_handling_needed = *terminate = *early_return = false;
  *last_successful_time = t;
  if (!(h > 0.0)) return fail(m, "fmi3DoStep: the step must be positive");
  if (cs_step(m->real, m->input_slope, t, h)) return fail(m, "the model cannot be evaluated");
  m->time = t + h;
  *last_successful_time = t + h;
  return fmi3OK;
}
#endif

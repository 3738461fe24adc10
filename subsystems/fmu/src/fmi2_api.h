/* The FMI 2.0 C API as far as macrostep uses it, declared by this project from the signatures
 * documented in the FMI 2.0.x standard (§2.1.2-2.1.8, §3.2; the default platform types of
 * fmi2TypesPlatform.h: fmi2Real = double, fmi2Integer = int, fmi2Boolean = int, fmi2String =
 * const char*, fmi2ValueReference = unsigned int). C and C++: the importer (fmi2_instance.cpp)
 * looks the functions up by name through the *TYPE declarations; the test FMUs (tests/fmu/fmus)
 * define them. */
#ifndef MACROSTEP_FMI2_API_H
#define MACROSTEP_FMI2_API_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef void* fmi2Component;
typedef void* fmi2ComponentEnvironment;
typedef void* fmi2FMUstate;
typedef unsigned int fmi2ValueReference;
typedef double fmi2Real;
typedef int fmi2Integer;
typedef int fmi2Boolean;
typedef char fmi2Char;
typedef const fmi2Char* fmi2String;
typedef char fmi2Byte;

typedef enum { fmi2OK, fmi2Warning, fmi2Discard, fmi2Error, fmi2Fatal, fmi2Pending } fmi2Status;
typedef enum { fmi2ModelExchange, fmi2CoSimulation } fmi2Type;

typedef void (*fmi2CallbackLogger)(fmi2ComponentEnvironment, fmi2String instance_name, fmi2Status,
                                   fmi2String category, fmi2String message, ...);
typedef void* (*fmi2CallbackAllocateMemory)(size_t count, size_t size);
typedef void (*fmi2CallbackFreeMemory)(void*);
typedef void (*fmi2StepFinished)(fmi2ComponentEnvironment, fmi2Status);

typedef struct {
  fmi2CallbackLogger logger;
  fmi2CallbackAllocateMemory allocateMemory;
  fmi2CallbackFreeMemory freeMemory;
  fmi2StepFinished stepFinished;
  fmi2ComponentEnvironment componentEnvironment;
} fmi2CallbackFunctions;

typedef struct {
  fmi2Boolean newDiscreteStatesNeeded;
  fmi2Boolean terminateSimulation;
  fmi2Boolean nominalsOfContinuousStatesChanged;
  fmi2Boolean valuesOfContinuousStatesChanged;
  fmi2Boolean nextEventTimeDefined;
  fmi2Real nextEventTime;
} fmi2EventInfo;

/* Common functions (§2.1). */
typedef fmi2Component fmi2InstantiateTYPE(fmi2String instance_name, fmi2Type, fmi2String guid,
                                          fmi2String resource_location,
                                          const fmi2CallbackFunctions*, fmi2Boolean visible,
                                          fmi2Boolean logging_on);
typedef void fmi2FreeInstanceTYPE(fmi2Component);
typedef fmi2Status fmi2SetupExperimentTYPE(fmi2Component, fmi2Boolean tolerance_defined,
                                           fmi2Real tolerance, fmi2Real start_time,
                                           fmi2Boolean stop_time_defined, fmi2Real stop_time);
typedef fmi2Status fmi2EnterInitializationModeTYPE(fmi2Component);
typedef fmi2Status fmi2ExitInitializationModeTYPE(fmi2Component);
typedef fmi2Status fmi2TerminateTYPE(fmi2Component);
typedef fmi2Status fmi2SetRealTYPE(fmi2Component, const fmi2ValueReference[], size_t,
                                   const fmi2Real[]);
typedef fmi2Status fmi2GetRealTYPE(fmi2Component, const fmi2ValueReference[], size_t, fmi2Real[]);
typedef fmi2Status fmi2GetIntegerTYPE(fmi2Component, const fmi2ValueReference[], size_t,
                                      fmi2Integer[]);
typedef fmi2Status fmi2GetBooleanTYPE(fmi2Component, const fmi2ValueReference[], size_t,
                                      fmi2Boolean[]);
typedef fmi2Status fmi2SetIntegerTYPE(fmi2Component, const fmi2ValueReference[], size_t,
                                      const fmi2Integer[]);
typedef fmi2Status fmi2SetBooleanTYPE(fmi2Component, const fmi2ValueReference[], size_t,
                                      const fmi2Boolean[]);
typedef fmi2Status fmi2GetDirectionalDerivativeTYPE(fmi2Component,
                                                    const fmi2ValueReference unknowns[],
                                                    size_t n_unknowns,
                                                    const fmi2ValueReference knowns[],
                                                    size_t n_knowns, const fmi2Real seed[],
                                                    fmi2Real sensitivity[]);
/* Model Exchange (§3.2). */
typedef fmi2Status fmi2EnterEventModeTYPE(fmi2Component);
typedef fmi2Status fmi2NewDiscreteStatesTYPE(fmi2Component, fmi2EventInfo*);
typedef fmi2Status fmi2EnterContinuousTimeModeTYPE(fmi2Component);
typedef fmi2Status fmi2SetTimeTYPE(fmi2Component, fmi2Real);
typedef fmi2Status fmi2SetContinuousStatesTYPE(fmi2Component, const fmi2Real[], size_t);
typedef fmi2Status fmi2GetDerivativesTYPE(fmi2Component, fmi2Real[], size_t);
typedef fmi2Status fmi2GetEventIndicatorsTYPE(fmi2Component, fmi2Real[], size_t);
typedef fmi2Status fmi2GetContinuousStatesTYPE(fmi2Component, fmi2Real[], size_t);
typedef fmi2Status fmi2GetNominalsOfContinuousStatesTYPE(fmi2Component, fmi2Real[], size_t);
typedef fmi2Status fmi2CompletedIntegratorStepTYPE(fmi2Component,
                                                   fmi2Boolean no_set_state_prior_to_current_point,
                                                   fmi2Boolean* enter_event_mode,
                                                   fmi2Boolean* terminate_simulation);
/* Co-Simulation (§4.2). */
typedef fmi2Status fmi2DoStepTYPE(fmi2Component, fmi2Real current_communication_point,
                                  fmi2Real communication_step_size,
                                  fmi2Boolean no_set_state_prior_to_current_point);
typedef fmi2Status fmi2SetRealInputDerivativesTYPE(fmi2Component, const fmi2ValueReference[],
                                                   size_t, const fmi2Integer order[],
                                                   const fmi2Real value[]);
/* FMU state (§2.1.8). */
typedef fmi2Status fmi2GetFMUstateTYPE(fmi2Component, fmi2FMUstate*);
typedef fmi2Status fmi2SetFMUstateTYPE(fmi2Component, fmi2FMUstate);
typedef fmi2Status fmi2FreeFMUstateTYPE(fmi2Component, fmi2FMUstate*);
typedef fmi2Status fmi2SerializedFMUstateSizeTYPE(fmi2Component, fmi2FMUstate, size_t*);
typedef fmi2Status fmi2SerializeFMUstateTYPE(fmi2Component, fmi2FMUstate, fmi2Byte[], size_t);
typedef fmi2Status fmi2DeSerializeFMUstateTYPE(fmi2Component, const fmi2Byte[], size_t,
                                               fmi2FMUstate*);

#ifdef __cplusplus
}
#endif

#endif

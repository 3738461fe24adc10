/* The FMI 3.0 C API as far as macrostep uses it (Model Exchange), declared by this project from
 * the signatures documented in the FMI 3.0 standard (§2.2.1 types, §2.3 common functions, §3.2
 * Model Exchange): fmi3Float64 = double, fmi3Int32 = int32_t, fmi3Boolean = bool, fmi3String =
 * const char*, fmi3ValueReference = uint32_t. C and C++: the importer (fmi3_instance.cpp) looks
 * the functions up by name through the *TYPE declarations; the test FMUs define them. */
#ifndef MACROSTEP_FMI3_API_H
#define MACROSTEP_FMI3_API_H

#include <stddef.h>
#include <stdint.h>
#ifndef __cplusplus
#include <stdbool.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef void* fmi3Instance;
typedef void* fmi3InstanceEnvironment;
typedef uint32_t fmi3ValueReference;
typedef double fmi3Float64;
typedef int32_t fmi3Int32;
typedef bool fmi3Boolean;
typedef char fmi3Char;
typedef const fmi3Char* fmi3String;
typedef uint8_t fmi3Byte;
typedef void* fmi3FMUState;

typedef enum { fmi3OK, fmi3Warning, fmi3Discard, fmi3Error, fmi3Fatal } fmi3Status;

typedef void (*fmi3LogMessageCallback)(fmi3InstanceEnvironment, fmi3Status, fmi3String category,
                                       fmi3String message);

typedef fmi3Instance fmi3InstantiateModelExchangeTYPE(
    fmi3String instance_name, fmi3String instantiation_token, fmi3String resource_path,
    fmi3Boolean visible, fmi3Boolean logging_on, fmi3InstanceEnvironment, fmi3LogMessageCallback);
typedef void fmi3FreeInstanceTYPE(fmi3Instance);
typedef fmi3Status fmi3EnterInitializationModeTYPE(fmi3Instance, fmi3Boolean tolerance_defined,
                                                   fmi3Float64 tolerance, fmi3Float64 start_time,
                                                   fmi3Boolean stop_time_defined,
                                                   fmi3Float64 stop_time);
typedef fmi3Status fmi3ExitInitializationModeTYPE(fmi3Instance);
typedef fmi3Status fmi3SetFloat64TYPE(fmi3Instance, const fmi3ValueReference[], size_t,
                                      const fmi3Float64[], size_t);
typedef fmi3Status fmi3GetFloat64TYPE(fmi3Instance, const fmi3ValueReference[], size_t,
                                      fmi3Float64[], size_t);
typedef fmi3Status fmi3GetInt32TYPE(fmi3Instance, const fmi3ValueReference[], size_t, fmi3Int32[],
                                    size_t);
typedef fmi3Status fmi3GetBooleanTYPE(fmi3Instance, const fmi3ValueReference[], size_t,
                                      fmi3Boolean[], size_t);
typedef fmi3Status fmi3SetInt32TYPE(fmi3Instance, const fmi3ValueReference[], size_t,
                                    const fmi3Int32[], size_t);
typedef fmi3Status fmi3SetBooleanTYPE(fmi3Instance, const fmi3ValueReference[], size_t,
                                      const fmi3Boolean[], size_t);
typedef fmi3Status fmi3GetDirectionalDerivativeTYPE(
    fmi3Instance, const fmi3ValueReference unknowns[], size_t n_unknowns,
    const fmi3ValueReference knowns[], size_t n_knowns, const fmi3Float64 seed[], size_t n_seed,
    fmi3Float64 sensitivity[], size_t n_sensitivity);
typedef fmi3Status fmi3UpdateDiscreteStatesTYPE(
    fmi3Instance, fmi3Boolean* discrete_states_need_update, fmi3Boolean* terminate_simulation,
    fmi3Boolean* nominals_changed, fmi3Boolean* values_changed,
    fmi3Boolean* next_event_time_defined, fmi3Float64* next_event_time);
typedef fmi3Status fmi3EnterContinuousTimeModeTYPE(fmi3Instance);
typedef fmi3Status fmi3SetTimeTYPE(fmi3Instance, fmi3Float64);
typedef fmi3Status fmi3SetContinuousStatesTYPE(fmi3Instance, const fmi3Float64[], size_t);
typedef fmi3Status fmi3GetContinuousStatesTYPE(fmi3Instance, fmi3Float64[], size_t);
typedef fmi3Status fmi3GetNominalsOfContinuousStatesTYPE(fmi3Instance, fmi3Float64[], size_t);
typedef fmi3Status fmi3GetContinuousStateDerivativesTYPE(fmi3Instance, fmi3Float64[], size_t);
typedef fmi3Status fmi3GetEventIndicatorsTYPE(fmi3Instance, fmi3Float64[], size_t);
typedef fmi3Status fmi3EnterEventModeTYPE(fmi3Instance);
typedef fmi3Status fmi3CompletedIntegratorStepTYPE(fmi3Instance,
                                                   fmi3Boolean no_set_state_prior_to_current_point,
                                                   fmi3Boolean* enter_event_mode,
                                                   fmi3Boolean* terminate_simulation);
/* Co-Simulation (§4). */
typedef void (*fmi3IntermediateUpdateCallback)(fmi3InstanceEnvironment, fmi3Float64,
                                               fmi3Boolean, fmi3Boolean, fmi3Boolean, fmi3Boolean,
                                               fmi3Boolean*, fmi3Float64*);
typedef fmi3Instance fmi3InstantiateCoSimulationTYPE(
    fmi3String instance_name, fmi3String instantiation_token, fmi3String resource_path,
    fmi3Boolean visible, fmi3Boolean logging_on, fmi3Boolean event_mode_used,
    fmi3Boolean early_return_allowed, const fmi3ValueReference required_intermediate[],
    size_t n_required_intermediate, fmi3InstanceEnvironment, fmi3LogMessageCallback,
    fmi3IntermediateUpdateCallback);
typedef fmi3Status fmi3DoStepTYPE(fmi3Instance, fmi3Float64 current_communication_point,
                                  fmi3Float64 communication_step_size,
                                  fmi3Boolean no_set_state_prior_to_current_point,
                                  fmi3Boolean* event_handling_needed,
                                  fmi3Boolean* terminate_simulation, fmi3Boolean* early_return,
                                  fmi3Float64* last_successful_time);
/* FMU state (§2.3.6). */
typedef fmi3Status fmi3GetFMUStateTYPE(fmi3Instance, fmi3FMUState*);
typedef fmi3Status fmi3SetFMUStateTYPE(fmi3Instance, fmi3FMUState);
typedef fmi3Status fmi3FreeFMUStateTYPE(fmi3Instance, fmi3FMUState*);
typedef fmi3Status fmi3SerializedFMUStateSizeTYPE(fmi3Instance, fmi3FMUState, size_t*);
typedef fmi3Status fmi3SerializeFMUStateTYPE(fmi3Instance, fmi3FMUState, fmi3Byte[], size_t);
typedef fmi3Status fmi3DeserializeFMUStateTYPE(fmi3Instance, const fmi3Byte[], size_t,
                                               fmi3FMUState*);

#ifdef __cplusplus
}
#endif

#endif

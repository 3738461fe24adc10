// FMI Model Exchange and Co-Simulation FMUs as subsystems (FMI 2.0 and 3.0). A Model Exchange
// FMU hands its equations to the importer: macrostep integrates x' = f(t, x, u) with its own IDA
// (residual F = x' − f(t, x, u)), so the whole integration state is macrostep's: exact rollback,
// clones for comparison and perturbed runs and process isolation need nothing from the FMU.
//
// The subsystem built from an FmuDescription:
//  - states: the FMU's continuous states, named by their variables; z' = their derivatives;
//    a state whose derivative variable is another state (der(x) = v) is a position, that other
//    state a velocity (error weights atol_pos / atol_vel); every other state has the role kOther;
//  - inputs: the named Real input variables (u), outputs: the named Real variables (y), with
//    feed-through where the ModelStructure says an output depends on an input (or does not say);
//  - Jacobian: pattern from the ModelStructure's derivative dependencies (dense without them)
//    plus the diagonal; values from fmi2GetDirectionalDerivative / fmi3GetDirectionalDerivative
//    when the FMU provides it, else forward differences of the derivatives, one state at a time.
//
// Instances: the FMU's binary is unzipped to a private directory (removed at once unless the FMU
// has resources/, then when the subsystem ends) and loaded with dlopen, one copy per built
// subsystem. Every residual / output / Jacobian evaluation leases an FMU instance from the
// subsystem's pool (created on demand, at most one per concurrently evaluating thread, never
// shared by two threads at once) and sets time, states and inputs before it asks: in Continuous-
// Time Mode the FMU's answer is a function of those alone, so results do not depend on which
// instance computes them (contract 1). An FMU with canBeInstantiatedOnlyOncePerProcess gets one
// instance, and parallel runs take turns with it (the same numbers, less parallelism).
//
// Refused when built (std::invalid_argument "FMU <path>: <reason>"): not a zip archive, an
// archive beyond the unpack limits or a failed write while unpacking (macrostep/fmu/archive.hpp:
// the unpack directory is then removed), no or malformed modelDescription.xml, an FMI version other
// than 2.x / 3.x, no binary for x86_64 Linux, a missing FMI function, an unknown parameter / input
// / output name, an instantiation or initialization that fails. A call that fails during the run
// (fmiXError / fmiXFatal) throws FmuCallError naming the function, the FMU and the time; Discard
// makes the residual NaN (IDA retries a shorter step).
//
// Co-Simulation FMUs (where the FMU has no Model Exchange interface, or FmuDescription::interface
// asks): a state-less subsystem that advances itself (model::Events::advances_itself): a mode is
// the FMU's serialized state (or, as below, a live one),
// advance() sets the inputs at t0 (with their slope where the FMU interpolates inputs) and calls
// doStep over [t0, t1].
//
// Events: an FMU with event indicators, a time event or completed-integrator-step calls answers
// events() (model/events.hpp). Where it declares canGetAndSetFMUstate and canSerializeFMUstate a
// mode is its serialized FMU state after initialization or an event, and every evaluation leases
// an instance in the caller's mode (setting the FMU state if the instance was in another), so
// that results stay functions of (mode, t, z, u). Where it does not, its state lives in one
// instance that only goes forward (Events::restorable() false; the run driver admits only runs
// that never go back).
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "macrostep/model/subsystem.hpp"

namespace macrostep::fmu {

struct FmuDescription {
  std::string path;        // absolute path of the .fmu archive
  std::string parameters;  // JSON object: variable name → start value (number or boolean)
  std::vector<std::string> inputs;   // variable names; empty: see inputs_listed
  std::vector<std::string> outputs;  // variable names; empty: every Real causality="output"
  // "model-exchange" or "co-simulation" (kInterfaceNames); empty: Model Exchange if the FMU has
  // it, else Co-Simulation.
  std::string interface;
  // The configuration lists the inputs (TOML `inputs`, also `inputs = []`): exactly those are
  // inputs; the FMU's other inputs keep their start values (SSP 1.0 §5.2.1: an unconnected input
  // stays at its default). False: an empty `inputs` is every Real input.
  bool inputs_listed = false;
};

// The values of FmuDescription::interface.
inline constexpr const char* kInterfaceNames[] = {"model-exchange", "co-simulation"};

// An FMI function that returned Error or Fatal while the subsystem was evaluated.
class FmuCallError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Loads the FMU and builds the subsystem (see above). Throws std::invalid_argument.
std::unique_ptr<model::Subsystem> build_fmu_subsystem(const FmuDescription& description);

// The type of a variable (FMI 3's Float32 / Float64 are Real, its integer types Integer).
enum class VariableType { kReal, kInteger, kBoolean, kOther };

// What an importer checks a system against before it builds the subsystem (an SSP's units and
// parameter types): a variable as modelDescription.xml declares it.
struct VariableFacts {
  VariableType type = VariableType::kOther;
  std::string causality;  // "parameter", "input", "output", ...
  std::string unit;       // its unit or its declared type's, "" when it has none
  bool has_start = false;
};

// The SI base units of a <BaseUnit>'s exponents, in order (FMI 2 and 3, and SSP's ssc:BaseUnit).
inline constexpr const char* kBaseUnitNames[] = {"kg", "m", "s", "A", "K", "mol", "cd", "rad"};

// A unit of <UnitDefinitions> with a <BaseUnit>: a value v in it is factor·v + offset in the SI
// unit kg^e0 m^e1 s^e2 A^e3 K^e4 mol^e5 cd^e6 rad^e7 (FMI 2 and 3 alike).
struct UnitFacts {
  std::string name;
  std::array<int, std::size(kBaseUnitNames)> exponents{};
  double factor = 1.0, offset = 0.0;
};

struct FmuFacts {
  // The variables (or FMI 3 array elements, "y[2]") asked for, in order; nullopt for a name the
  // FMU does not declare.
  std::vector<std::optional<VariableFacts>> variables;
  // Its units that have a <BaseUnit> (those without one say nothing a conversion could use).
  std::vector<UnitFacts> units;
};

// What modelDescription.xml of FMU `path` says about the variables called `names` and its
// units. Reads only modelDescription.xml. Throws std::invalid_argument as build_fmu_subsystem
// does for an archive or model description it cannot read.
FmuFacts describe_fmu(const std::string& path, const std::vector<std::string>& names);

// Why `value` cannot be the start value of a variable of type `type`, or "" if it can. Nothing is
// rounded or converted: an Integer takes whole numbers (of 32 bits), a Boolean 0 or 1 (true or
// false); a Real anything finite.
std::string start_value_problem(VariableType type, double value);

}  // namespace macrostep::fmu

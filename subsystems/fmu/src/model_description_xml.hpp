// What the importer reads from an FMU's modelDescription.xml (FMI 2.0 and 3.0): the Model
// Exchange interface, the variables, and the ModelStructure's derivatives and outputs with their
// dependencies. Parsed with libxml2; every problem is one std::invalid_argument naming the
// element or attribute (the caller prefixes the FMU's path).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "macrostep/fmu/fmu.hpp"

namespace macrostep::fmu {

struct ModelVariable {
  std::string name;
  unsigned value_reference = 0;
  VariableType type = VariableType::kOther;
  std::string causality;        // "parameter", "input", "output", "local", ... (default "local")
  std::string variability;      // "constant", "fixed", "tunable", "discrete", "continuous"
  std::optional<double> start;  // of a scalar
  // The start attribute as written (an array's lists its elements; a structural parameter's
  // gives the size of the arrays it dimensions), or "".
  std::string start_text;
  // The state this variable is the derivative of, as an index into ModelXml::variables.
  std::optional<std::size_t> derivative_of;
  // Its unit (the type element's or element's `unit`, else its declared type's), or "".
  std::string unit;
  // Its `nominal` attribute, else its declared type's, if either has one.
  std::optional<double> nominal;
  // Its `description` attribute, or "".
  std::string description;
  // FMI 3: the sizes of an array variable (<Dimension start="n"/>, or the start value of the
  // structural parameter that <Dimension valueReference="..."/> names); empty for a scalar.
  std::vector<std::size_t> dimensions;
  // An array's start values, row-major (dimensions' product of them), where it has a start.
  std::vector<double> starts;
  // Other names of the variable (FMI 3 <Alias name="..."/>).
  std::vector<std::string> aliases;

  // The number of scalar elements (1 for a scalar).
  std::size_t size() const;
  // The name of element `k` (row-major, 0-based): the name itself for a scalar, else with its
  // 1-based indices as Modelica writes them ("A[2,1]").
  std::string element_name(std::size_t k) const;
  // The start value of element `k`, if the variable has one.
  std::optional<double> element_start(std::size_t k) const;
};

// One scalar element of a variable: variables[variable], element `element` (row-major).
struct ElementRef {
  std::size_t variable = 0;
  std::size_t element = 0;
};

// One ModelStructure entry: a variable and what it depends on (indices into variables);
// nullopt: the FMU does not say, i.e. it may depend on every known (FMI 2 §2.2.8).
struct Unknown {
  std::size_t variable = 0;
  std::optional<std::vector<std::size_t>> dependencies;
};

struct ModelXml {
  int fmi_major = 0;  // 2 or 3
  std::string model_name;
  std::string token;                   // guid (FMI 2) or instantiationToken (FMI 3)
  bool model_exchange = false;         // a <ModelExchange> element exists
  bool co_simulation = false;          // a <CoSimulation> element exists
  std::string model_identifier;        // of <ModelExchange>: the binary's name
  bool only_once_per_process = false;  // canBeInstantiatedOnlyOncePerProcess
  bool directional_derivatives = false;
  bool needs_execution_tool = false;
  // canGetAndSetFMUstate and canSerializeFMUstate (FMI 3: ...FMUState) both: the FMU's state can
  // be copied between instances as bytes.
  bool can_serialize_state = false;
  // FMI 2: not completedIntegratorStepNotNeeded; FMI 3: needsCompletedIntegratorStep.
  bool needs_completed_integrator_step = false;
  // Of <CoSimulation>, when there is one.
  struct CoSimulation {
    std::string model_identifier;
    bool can_serialize_state = false;     // canGetAndSetFMUstate and canSerializeFMUstate
    bool can_interpolate_inputs = false;  // FMI 2: input derivatives are accepted
    // canHandleVariableCommunicationStepSize (false when absent, as the standard says): steps
    // of another length than the first are refused by the FMU.
    bool variable_step = false;
    bool only_once_per_process = false;
  } cs;
  std::size_t event_indicators = 0;
  std::vector<ModelVariable> variables;
  std::vector<Unknown> derivatives;  // in state order: state i is derivative_of of entry i
  std::vector<Unknown> outputs;

  // Index of the variable called `name` (or with that alias), or nullopt.
  std::optional<std::size_t> find(std::string_view name) const;
  // Index of the variable with value reference `ref`, or nullopt.
  std::optional<std::size_t> find_reference(unsigned ref) const;
  // The scalar element called `name`: a scalar variable, or an array variable's element written
  // with its 1-based indices ("y[2]", "A[1,2]"); nullopt if there is none (an index out of
  // range included).
  std::optional<ElementRef> find_element(std::string_view name) const;
  // <ScheduledExecution> is declared (FMI 3 clocked partitions), and the names of clock
  // variables (FMI 3 <Clock>).
  bool scheduled_execution = false;
  std::vector<std::string> clocks;
  // <UnitDefinitions>: the units with a <BaseUnit>.
  std::vector<UnitFacts> units;
};

// Parses the text of a modelDescription.xml. Throws std::invalid_argument: "modelDescription.xml
// is not well-formed XML (line N: ...)", "unsupported FMI version \"1.0\" ...", a missing
// attribute, a dependency that refers to no variable.
ModelXml parse_model_description(std::string_view xml);

}  // namespace macrostep::fmu

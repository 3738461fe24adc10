// One FMU's loaded binary and its instances, behind one interface for FMI 2 and FMI 3 (the
// subsystem, fmu_subsystem.cpp, knows neither version's API).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "model_description_xml.hpp"

namespace macrostep::fmu {

// The FMU's binary, dlopen'ed (RTLD_LOCAL) and closed when this ends. Throws
// std::invalid_argument naming the binary and dlerror() if it cannot be loaded, or a function
// that look_up() does not find.
class SharedLibrary {
 public:
  // `api` names the interface in messages ("FMI 2.0").
  SharedLibrary(const std::string& path, std::string api);
  ~SharedLibrary();
  SharedLibrary(const SharedLibrary&) = delete;
  SharedLibrary& operator=(const SharedLibrary&) = delete;

  template <class F>
  void look_up(F*& function, const char* name) const {
    function = reinterpret_cast<F*>(symbol(name));
  }
  // The same for a function the importer can do without: null if the binary lacks it.
  template <class F>
  void look_up_if_exported(F*& function, const char* name) const {
    function = reinterpret_cast<F*>(find(name));
  }

 private:
  void* symbol(const char* name) const;
  void* find(const char* name) const;
  void* handle_ = nullptr;
  std::string api_;
};

// What an instance's logger last received (a warning or an error), for failure messages.
struct LogBuffer {
  std::string last;
  // " (FMU log: ...)" or "".
  std::string text() const { return last.empty() ? "" : " (FMU log: " + last + ")"; }
};

// A start value set before initialization (the configuration's `parameters`): one value, or an
// FMI 3 array's elements in row-major order.
struct StartValue {
  std::string name;
  unsigned value_reference = 0;
  VariableType type = VariableType::kReal;
  std::vector<double> values;
};

// Rounds of an event iteration after which an FMU is taken not to settle (FmuCallError).
inline constexpr int kMaxEventIterations = 1000;

// An instance in Continuous-Time Mode. Not thread-safe: one thread at a time (the subsystem's
// pool leases it). Every call that the FMU answers with Error or Fatal throws FmuCallError
// naming the FMI function, the FMU and the time of the last set(); Discard returns false.
class Instance {
 public:
  virtual ~Instance() = default;
  // Time, continuous states and the inputs (value references `inputs`, values u).
  virtual bool set(double t, std::span<const double> x, std::span<const unsigned> inputs,
                   std::span<const double> u) = 0;
  virtual bool derivatives(std::span<double> dx) = 0;
  virtual bool get_reals(std::span<const unsigned> refs, std::span<double> values) = 0;
  // Values of Real, Integer or Boolean variables as numbers (false 0, true 1).
  virtual bool get_values(std::span<const unsigned> refs, VariableType type,
                          std::span<double> values) = 0;
  // Sets Integer (rounded to the nearest) or Boolean (true above 0.5) variables from numbers.
  virtual bool set_values(std::span<const unsigned> refs, VariableType type,
                          std::span<const double> values) = 0;
  // d(unknowns)/d(element `element` of the variable `known`, which has `size` elements) at the
  // point of the last set(): one column over the unknowns' elements.
  virtual bool directional_derivative(std::span<const unsigned> unknowns, unsigned known,
                                      std::size_t element, std::size_t size,
                                      std::span<double> column) = 0;
  virtual void continuous_states(std::span<double> x) = 0;
  // The nominal values of the continuous states (fmi*GetNominalsOfContinuousStates); false,
  // leaving x alone, where the binary does not export the function.
  virtual bool continuous_state_nominals(std::span<double> x) = 0;
  // The event indicators at the point of the last set() (the FMU's numberOfEventIndicators).
  virtual bool event_indicators(std::span<double> z) = 0;

  // What the event iteration gave (update_discrete_states()).
  struct EventUpdate {
    bool terminate = false;
    bool states_changed = false;  // valuesOfContinuousStatesChanged: read continuous_states()
    // nominalsOfContinuousStatesChanged: read continuous_state_nominals()
    bool nominals_changed = false;
    double next_time_event = std::numeric_limits<double>::infinity();
  };
  // An event at the point of the last set(): Event Mode, the event iteration until the FMU needs
  // no further update (at most 1000 rounds, then FmuCallError), back to Continuous-Time Mode.
  virtual EventUpdate update_discrete_states() = 0;
  // After an accepted integrator step at the point of the last set(): whether the FMU asks for
  // an event (enterEventMode) or to terminate.
  virtual bool completed_integrator_step(bool& terminate) = 0;
  // Co-Simulation: one communication step from t over h with the inputs set before; false when
  // the FMU discards it (fmi*Discard: the caller may retry shorter). Model Exchange instances
  // throw std::logic_error.
  virtual bool do_step(double t, double h) = 0;
  // Co-Simulation with input interpolation (FMI 2 canInterpolateInputs): the first derivatives
  // of the inputs (value references `inputs`) at the start of the next step.
  virtual void set_input_derivatives(std::span<const unsigned> inputs,
                                     std::span<const double> derivatives) = 0;
  // The FMU's whole state as bytes, and back (the FMU must declare canGetAndSetFMUstate and
  // canSerializeFMUstate; only called then).
  virtual std::vector<std::byte> serialize_state() = 0;
  virtual void deserialize_state(std::span<const std::byte> bytes) = 0;

  // The time event the FMU scheduled at initialization, or +infinity.
  double next_time_event = std::numeric_limits<double>::infinity();
  // Which mode of the subsystem this instance's discrete state belongs to (fmu_subsystem.cpp;
  // kNoMode: unknown, set one before evaluating).
  static constexpr std::uint64_t kNoMode = ~std::uint64_t{0};
  std::uint64_t mode = 0;
};

// The FMU's binary, loaded from a private copy. Instances are created with the start values,
// initialized with the given inputs, and left in Continuous-Time Mode.
class Binary {
 public:
  virtual ~Binary() = default;
  virtual std::unique_ptr<Instance> instantiate(const std::vector<StartValue>& starts,
                                                std::span<const unsigned> inputs,
                                                std::span<const double> u) = 0;
};

// Whether the FMU has Integer or Boolean outputs (whose getters a binary then looks up).
inline bool has_discrete_outputs(const ModelXml& xml) {
  for (const ModelVariable& v : xml.variables) {
    if (v.causality == "output" &&
        (v.type == VariableType::kInteger || v.type == VariableType::kBoolean)) {
      return true;
    }
  }
  return false;
}

// Which of an FMU's interfaces a binary is loaded for.
enum class Interface : std::uint8_t { kModelExchange, kCoSimulation };

// Load `library` (the unzipped binary; it may be deleted after this returns) for FMI 2 or FMI 3
// (the version of `xml`) and the given interface: Model Exchange instances are left in
// Continuous-Time Mode after initialization, Co-Simulation instances ready for their first step.
// `fmu` names the FMU in messages; `resources` is the directory of its resources/ (may not
// exist). Throws std::invalid_argument for a library that cannot be loaded or lacks an FMI
// function the importer calls.
std::unique_ptr<Binary> load_fmi2_binary(const ModelXml& xml, Interface interface,
                                         const std::string& fmu, const std::string& library,
                                         const std::string& resources);
std::unique_ptr<Binary> load_fmi3_binary(const ModelXml& xml, Interface interface,
                                         const std::string& fmu, const std::string& library,
                                         const std::string& resources);

}  // namespace macrostep::fmu

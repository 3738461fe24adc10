// FMI 2.0 Model Exchange binaries and instances (fmu_instance.hpp), through the declarations of
// fmi2_api.hpp.
#include <fmt/format.h>

#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <stdexcept>

#include "fmi2_api.h"
#include "fmu_instance.hpp"
#include "macrostep/fmu/fmu.hpp"

namespace macrostep::fmu {

namespace {

const char* status_name(fmi2Status s) {
  switch (s) {
    case fmi2OK:
      return "fmi2OK";
    case fmi2Warning:
      return "fmi2Warning";
    case fmi2Discard:
      return "fmi2Discard";
    case fmi2Error:
      return "fmi2Error";
    case fmi2Fatal:
      return "fmi2Fatal";
    case fmi2Pending:
      return "fmi2Pending";
  }
  return "an unknown status";
}

// The functions the importer calls, looked up once per binary.
struct Fmi2Functions {
  fmi2InstantiateTYPE* instantiate = nullptr;
  fmi2FreeInstanceTYPE* free_instance = nullptr;
  fmi2SetupExperimentTYPE* setup_experiment = nullptr;
  fmi2EnterInitializationModeTYPE* enter_initialization = nullptr;
  fmi2ExitInitializationModeTYPE* exit_initialization = nullptr;
  fmi2SetRealTYPE* set_real = nullptr;
  fmi2GetRealTYPE* get_real = nullptr;
  fmi2SetIntegerTYPE* set_integer = nullptr;
  fmi2GetIntegerTYPE* get_integer = nullptr;  // looked up where Integer or Boolean outputs exist
  fmi2GetBooleanTYPE* get_boolean = nullptr;
  fmi2SetBooleanTYPE* set_boolean = nullptr;
  fmi2NewDiscreteStatesTYPE* new_discrete_states = nullptr;
  fmi2EnterContinuousTimeModeTYPE* enter_continuous_time = nullptr;
  fmi2SetTimeTYPE* set_time = nullptr;
  fmi2SetContinuousStatesTYPE* set_states = nullptr;
  fmi2GetContinuousStatesTYPE* get_states = nullptr;
  fmi2GetNominalsOfContinuousStatesTYPE* get_nominals = nullptr;  // null if not exported
  fmi2GetDerivativesTYPE* get_derivatives = nullptr;
  fmi2GetDirectionalDerivativeTYPE* directional = nullptr;  // null unless provided
  fmi2GetEventIndicatorsTYPE* event_indicators = nullptr;   // null without event indicators
  // Event Mode (every Model Exchange FMU); the FMU state and completed steps only for an FMU that
  // can serialize its state.
  fmi2EnterEventModeTYPE* enter_event_mode = nullptr;
  fmi2CompletedIntegratorStepTYPE* completed_step = nullptr;
  fmi2GetFMUstateTYPE* get_state = nullptr;
  fmi2SetFMUstateTYPE* set_state = nullptr;
  fmi2FreeFMUstateTYPE* free_state = nullptr;
  fmi2SerializedFMUstateSizeTYPE* state_size = nullptr;
  fmi2SerializeFMUstateTYPE* serialize = nullptr;
  fmi2DeSerializeFMUstateTYPE* deserialize = nullptr;
  // Co-Simulation only.
  fmi2DoStepTYPE* do_step = nullptr;
  fmi2SetRealInputDerivativesTYPE* input_derivatives = nullptr;  // null unless interpolating
};

// The logger keeps an instance's last warning or error, for the message of a failed call.
extern "C" void fmi2_log(fmi2ComponentEnvironment env, fmi2String, fmi2Status status,
                         fmi2String category, fmi2String message, ...) {
  if (env == nullptr || status == fmi2OK || message == nullptr) return;
  char text[1024];
  va_list args;
  va_start(args, message);
  std::vsnprintf(text, sizeof text, message, args);
  va_end(args);
  static_cast<LogBuffer*>(env)->last =
      std::string(category != nullptr ? category : "") + (category ? ": " : "") + text;
}

class Fmi2Instance final : public Instance {
 public:
  Fmi2Instance(const Fmi2Functions& f, std::string fmu, Interface interface)
      : f_(f), fmu_(std::move(fmu)), cs_(interface == Interface::kCoSimulation) {}
  ~Fmi2Instance() override {
    if (c_ != nullptr) f_.free_instance(c_);
  }

  void create(const std::string& token, const std::string& resources) {
    callbacks_ = {&fmi2_log, &std::calloc, &std::free, nullptr, &log_};
    c_ = f_.instantiate("macrostep", cs_ ? fmi2CoSimulation : fmi2ModelExchange, token.c_str(),
                        resources.c_str(), &callbacks_, 0, 0);
    if (c_ == nullptr) {
      throw FmuCallError(fmt::format("FMU {}: fmi2Instantiate returned NULL{}", fmu_, log_.text()));
    }
  }

  void initialize(const std::vector<StartValue>& starts, std::span<const unsigned> inputs,
                  std::span<const double> u) {
    check(f_.setup_experiment(c_, 0, 0.0, 0.0, 0, 0.0), "fmi2SetupExperiment");
    for (const StartValue& s : starts) {
      const fmi2ValueReference vr = s.value_reference;
      const double value = s.values.at(0);  // FMI 2 has no arrays
      if (s.type == VariableType::kReal) {
        check(f_.set_real(c_, &vr, 1, &value), "fmi2SetReal");
      } else if (s.type == VariableType::kInteger) {
        const fmi2Integer v = static_cast<fmi2Integer>(value);
        check(f_.set_integer(c_, &vr, 1, &v), "fmi2SetInteger");
      } else {
        const fmi2Boolean v = value != 0.0;
        check(f_.set_boolean(c_, &vr, 1, &v), "fmi2SetBoolean");
      }
    }
    check(f_.enter_initialization(c_), "fmi2EnterInitializationMode");
    if (!inputs.empty())
      check(f_.set_real(c_, inputs.data(), inputs.size(), u.data()), "fmi2SetReal");
    check(f_.exit_initialization(c_), "fmi2ExitInitializationMode");
    if (cs_) return;  // ready for its first step
    // Event iteration at the initial time (FMI 2 §3.2.3): the FMU settles its discrete states.
    const EventUpdate e = iterate_discrete_states();
    if (e.terminate) {
      throw FmuCallError(
          fmt::format("FMU {}: asks to terminate during initialization{}", fmu_, log_.text()));
    }
    next_time_event = e.next_time_event;
    check(f_.enter_continuous_time(c_), "fmi2EnterContinuousTimeMode");
  }

  EventUpdate update_discrete_states() override {
    require(f_.enter_event_mode(c_), "fmi2EnterEventMode");
    const EventUpdate e = iterate_discrete_states();
    if (!e.terminate) require(f_.enter_continuous_time(c_), "fmi2EnterContinuousTimeMode");
    return e;
  }
  bool completed_integrator_step(bool& terminate) override {
    fmi2Boolean enter = 0, stop = 0;
    require(f_.completed_step(c_, 1, &enter, &stop), "fmi2CompletedIntegratorStep");
    terminate = stop != 0;
    return enter != 0;
  }
  bool do_step(double t, double h) override {
    if (!cs_) throw std::logic_error("fmi2DoStep on a Model Exchange instance");
    t_ = t;
    return check(f_.do_step(c_, t, h, 0), "fmi2DoStep");
  }
  void set_input_derivatives(std::span<const unsigned> inputs,
                             std::span<const double> derivatives) override {
    const std::vector<fmi2Integer> order(inputs.size(), 1);
    require(
        f_.input_derivatives(c_, inputs.data(), inputs.size(), order.data(), derivatives.data()),
        "fmi2SetRealInputDerivatives");
  }
  std::vector<std::byte> serialize_state() override {
    fmi2FMUstate state = nullptr;
    require(f_.get_state(c_, &state), "fmi2GetFMUstate");
    std::size_t size = 0;
    fmi2Status status = f_.state_size(c_, state, &size);
    std::vector<std::byte> bytes;
    if (status == fmi2OK || status == fmi2Warning) {
      bytes.resize(size);
      status = f_.serialize(c_, state, reinterpret_cast<fmi2Byte*>(bytes.data()), size);
    }
    f_.free_state(c_, &state);
    require(status, "fmi2SerializeFMUstate");
    return bytes;
  }
  void deserialize_state(std::span<const std::byte> bytes) override {
    fmi2FMUstate state = nullptr;
    require(
        f_.deserialize(c_, reinterpret_cast<const fmi2Byte*>(bytes.data()), bytes.size(), &state),
        "fmi2DeSerializeFMUstate");
    const fmi2Status status = f_.set_state(c_, state);
    f_.free_state(c_, &state);
    require(status, "fmi2SetFMUstate");
  }

  bool set(double t, std::span<const double> x, std::span<const unsigned> inputs,
           std::span<const double> u) override {
    t_ = t;
    if (cs_) {  // no time or states to set: the FMU keeps its own
      return inputs.empty() ||
             check(f_.set_real(c_, inputs.data(), inputs.size(), u.data()), "fmi2SetReal");
    }
    return check(f_.set_time(c_, t), "fmi2SetTime") &&
           (x.empty() || check(f_.set_states(c_, x.data(), x.size()), "fmi2SetContinuousStates")) &&
           (inputs.empty() ||
            check(f_.set_real(c_, inputs.data(), inputs.size(), u.data()), "fmi2SetReal"));
  }
  bool derivatives(std::span<double> dx) override {
    return dx.empty() || check(f_.get_derivatives(c_, dx.data(), dx.size()), "fmi2GetDerivatives");
  }
  bool get_reals(std::span<const unsigned> refs, std::span<double> values) override {
    return refs.empty() ||
           check(f_.get_real(c_, refs.data(), refs.size(), values.data()), "fmi2GetReal");
  }
  bool get_values(std::span<const unsigned> refs, VariableType type,
                  std::span<double> values) override {
    if (type == VariableType::kReal) return get_reals(refs, values);
    std::vector<int> v(refs.size());  // fmi2Integer and fmi2Boolean are both int
    const bool ok =
        type == VariableType::kInteger
            ? check(f_.get_integer(c_, refs.data(), refs.size(), v.data()), "fmi2GetInteger")
            : check(f_.get_boolean(c_, refs.data(), refs.size(), v.data()), "fmi2GetBoolean");
    for (std::size_t i = 0; i < v.size(); ++i) {
      values[i] = type == VariableType::kBoolean ? (v[i] != 0 ? 1.0 : 0.0) : v[i];
    }
    return ok;
  }
  bool set_values(std::span<const unsigned> refs, VariableType type,
                  std::span<const double> values) override {
    std::vector<int> v(refs.size());  // fmi2Integer and fmi2Boolean are both int
    for (std::size_t i = 0; i < v.size(); ++i) {
      v[i] = type == VariableType::kBoolean ? (values[i] > 0.5 ? 1 : 0)
                                            : static_cast<int>(std::lround(values[i]));
    }
    return type == VariableType::kInteger
               ? check(f_.set_integer(c_, refs.data(), refs.size(), v.data()), "fmi2SetInteger")
               : check(f_.set_boolean(c_, refs.data(), refs.size(), v.data()), "fmi2SetBoolean");
  }
  bool directional_derivative(std::span<const unsigned> unknowns, unsigned known, std::size_t,
                              std::size_t, std::span<double> column) override {
    const double seed = 1.0;  // FMI 2 variables are scalars
    return check(
        f_.directional(c_, unknowns.data(), unknowns.size(), &known, 1, &seed, column.data()),
        "fmi2GetDirectionalDerivative");
  }
  void continuous_states(std::span<double> x) override {
    if (!x.empty()) check(f_.get_states(c_, x.data(), x.size()), "fmi2GetContinuousStates");
  }
  bool continuous_state_nominals(std::span<double> x) override {
    if (f_.get_nominals == nullptr) return false;
    if (!x.empty()) {
      check(f_.get_nominals(c_, x.data(), x.size()), "fmi2GetNominalsOfContinuousStates");
    }
    return true;
  }
  bool event_indicators(std::span<double> z) override {
    return check(f_.event_indicators(c_, z.data(), z.size()), "fmi2GetEventIndicators");
  }

 private:
  // fmi2NewDiscreteStates until the FMU needs no further round.
  EventUpdate iterate_discrete_states() {
    EventUpdate e;
    fmi2EventInfo info{};
    info.newDiscreteStatesNeeded = 1;
    for (int k = 0; info.newDiscreteStatesNeeded; ++k) {
      if (k == kMaxEventIterations) {
        throw FmuCallError(
            fmt::format("FMU {}: the event iteration at t = {:.9g} did not settle in {} rounds of "
                        "fmi2NewDiscreteStates{}",
                        fmu_, t_, kMaxEventIterations, log_.text()));
      }
      require(f_.new_discrete_states(c_, &info), "fmi2NewDiscreteStates");
      e.states_changed = e.states_changed || info.valuesOfContinuousStatesChanged != 0;
      e.nominals_changed = e.nominals_changed || info.nominalsOfContinuousStatesChanged != 0;
      if (info.terminateSimulation) {
        e.terminate = true;
        break;
      }
    }
    if (info.nextEventTimeDefined) e.next_time_event = info.nextEventTime;
    return e;
  }
  void require(fmi2Status status, const char* function) {
    if (!check(status, function)) {
      throw FmuCallError(fmt::format("FMU {}: {} returned fmi2Discard at t = {:.9g}{}", fmu_,
                                     function, t_, log_.text()));
    }
  }
  // OK and Warning pass, Discard returns false, Error and Fatal throw.
  bool check(fmi2Status status, const char* function) {
    if (status == fmi2OK || status == fmi2Warning) return true;
    if (status == fmi2Discard) return false;
    throw FmuCallError(fmt::format("FMU {}: {} returned {} at t = {:.9g}{}", fmu_, function,
                                   status_name(status), t_, log_.text()));
  }

  const Fmi2Functions& f_;
  std::string fmu_;
  fmi2Component c_ = nullptr;
  fmi2CallbackFunctions callbacks_{};
  LogBuffer log_;
  double t_ = 0.0;
  bool cs_ = false;
};

class Fmi2Binary final : public Binary {
 public:
  Fmi2Binary(const ModelXml& xml, Interface interface, std::string fmu, const std::string& library,
             std::string resources)
      : library_(library, interface == Interface::kCoSimulation ? "FMI 2.0 Co-Simulation"
                                                                : "FMI 2.0 Model Exchange"),
        fmu_(std::move(fmu)),
        token_(xml.token),
        resources_uri_("file://" + resources),
        interface_(interface) {
    library_.look_up(f_.instantiate, "fmi2Instantiate");
    library_.look_up(f_.free_instance, "fmi2FreeInstance");
    library_.look_up(f_.setup_experiment, "fmi2SetupExperiment");
    library_.look_up(f_.enter_initialization, "fmi2EnterInitializationMode");
    library_.look_up(f_.exit_initialization, "fmi2ExitInitializationMode");
    library_.look_up(f_.set_real, "fmi2SetReal");
    library_.look_up(f_.get_real, "fmi2GetReal");
    library_.look_up(f_.set_integer, "fmi2SetInteger");
    library_.look_up(f_.set_boolean, "fmi2SetBoolean");
    if (has_discrete_outputs(xml)) {
      library_.look_up(f_.get_integer, "fmi2GetInteger");
      library_.look_up(f_.get_boolean, "fmi2GetBoolean");
    }
    if (interface == Interface::kCoSimulation) {
      look_up_co_simulation(xml);
      return;
    }
    library_.look_up(f_.new_discrete_states, "fmi2NewDiscreteStates");
    library_.look_up(f_.enter_continuous_time, "fmi2EnterContinuousTimeMode");
    library_.look_up(f_.set_time, "fmi2SetTime");
    library_.look_up(f_.set_states, "fmi2SetContinuousStates");
    library_.look_up(f_.get_states, "fmi2GetContinuousStates");
    library_.look_up_if_exported(f_.get_nominals, "fmi2GetNominalsOfContinuousStates");
    library_.look_up(f_.get_derivatives, "fmi2GetDerivatives");
    if (xml.directional_derivatives)
      library_.look_up(f_.directional, "fmi2GetDirectionalDerivative");
    if (xml.event_indicators > 0) library_.look_up(f_.event_indicators, "fmi2GetEventIndicators");
    library_.look_up(f_.enter_event_mode, "fmi2EnterEventMode");
    if (xml.can_serialize_state) {
      look_up_state_functions();
      if (xml.needs_completed_integrator_step)
        library_.look_up(f_.completed_step, "fmi2CompletedIntegratorStep");
    }
  }

  std::unique_ptr<Instance> instantiate(const std::vector<StartValue>& starts,
                                        std::span<const unsigned> inputs,
                                        std::span<const double> u) override {
    auto instance = std::make_unique<Fmi2Instance>(f_, fmu_, interface_);
    instance->create(token_, resources_uri_);
    instance->initialize(starts, inputs, u);
    return instance;
  }

 private:
  void look_up_state_functions() {
    library_.look_up(f_.get_state, "fmi2GetFMUstate");
    library_.look_up(f_.set_state, "fmi2SetFMUstate");
    library_.look_up(f_.free_state, "fmi2FreeFMUstate");
    library_.look_up(f_.state_size, "fmi2SerializedFMUstateSize");
    library_.look_up(f_.serialize, "fmi2SerializeFMUstate");
    library_.look_up(f_.deserialize, "fmi2DeSerializeFMUstate");
  }
  void look_up_co_simulation(const ModelXml& xml) {
    library_.look_up(f_.do_step, "fmi2DoStep");
    if (xml.cs.can_interpolate_inputs)
      library_.look_up(f_.input_derivatives, "fmi2SetRealInputDerivatives");
    if (xml.cs.can_serialize_state) look_up_state_functions();
  }

  SharedLibrary library_;
  std::string fmu_, token_, resources_uri_;
  Interface interface_;
  Fmi2Functions f_;
};

}  // namespace

std::unique_ptr<Binary> load_fmi2_binary(const ModelXml& xml, Interface interface,
                                         const std::string& fmu, const std::string& library,
                                         const std::string& resources) {
  return std::make_unique<Fmi2Binary>(xml, interface, fmu, library, resources);
}

}  // namespace macrostep::fmu

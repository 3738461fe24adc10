// FMI 3.0 Model Exchange binaries and instances (fmu_instance.hpp), through the declarations of
// fmi3_api.h. The same calls as FMI 2 (fmi2_instance.cpp) under FMI 3's names and signatures.
#include <fmt/format.h>

#include <cmath>

#include <stdexcept>
#include <vector>

#include "fmi3_api.h"
#include "fmu_instance.hpp"
#include "macrostep/fmu/fmu.hpp"

namespace macrostep::fmu {

namespace {

const char* status_name(fmi3Status s) {
  switch (s) {
    case fmi3OK:
      return "fmi3OK";
    case fmi3Warning:
      return "fmi3Warning";
    case fmi3Discard:
      return "fmi3Discard";
    case fmi3Error:
      return "fmi3Error";
    case fmi3Fatal:
      return "fmi3Fatal";
  }
  return "an unknown status";
}

struct Fmi3Functions {
  fmi3InstantiateModelExchangeTYPE* instantiate = nullptr;    // Model Exchange only
  fmi3InstantiateCoSimulationTYPE* instantiate_cs = nullptr;  // Co-Simulation only
  fmi3DoStepTYPE* do_step = nullptr;                          // Co-Simulation only
  fmi3FreeInstanceTYPE* free_instance = nullptr;
  fmi3EnterInitializationModeTYPE* enter_initialization = nullptr;
  fmi3ExitInitializationModeTYPE* exit_initialization = nullptr;
  fmi3SetFloat64TYPE* set_float64 = nullptr;
  fmi3GetFloat64TYPE* get_float64 = nullptr;
  fmi3SetInt32TYPE* set_int32 = nullptr;
  fmi3GetInt32TYPE* get_int32 = nullptr;  // looked up where Integer or Boolean outputs exist
  fmi3GetBooleanTYPE* get_boolean = nullptr;
  fmi3SetBooleanTYPE* set_boolean = nullptr;
  fmi3UpdateDiscreteStatesTYPE* update_discrete_states = nullptr;
  fmi3EnterContinuousTimeModeTYPE* enter_continuous_time = nullptr;
  fmi3SetTimeTYPE* set_time = nullptr;
  fmi3SetContinuousStatesTYPE* set_states = nullptr;
  fmi3GetContinuousStatesTYPE* get_states = nullptr;
  fmi3GetNominalsOfContinuousStatesTYPE* get_nominals = nullptr;  // null if not exported
  fmi3GetContinuousStateDerivativesTYPE* get_derivatives = nullptr;
  fmi3GetDirectionalDerivativeTYPE* directional = nullptr;  // null unless provided
  fmi3GetEventIndicatorsTYPE* event_indicators = nullptr;   // null without event indicators
  // Event Mode (every Model Exchange FMU); the FMU state and completed steps only for an FMU that
  // can serialize its state.
  fmi3EnterEventModeTYPE* enter_event_mode = nullptr;
  fmi3CompletedIntegratorStepTYPE* completed_step = nullptr;
  fmi3GetFMUStateTYPE* get_state = nullptr;
  fmi3SetFMUStateTYPE* set_state = nullptr;
  fmi3FreeFMUStateTYPE* free_state = nullptr;
  fmi3SerializedFMUStateSizeTYPE* state_size = nullptr;
  fmi3SerializeFMUStateTYPE* serialize = nullptr;
  fmi3DeserializeFMUStateTYPE* deserialize = nullptr;
};

extern "C" void fmi3_log(fmi3InstanceEnvironment env, fmi3Status status, fmi3String category,
                         fmi3String message) {
  if (env == nullptr || status == fmi3OK || message == nullptr) return;
  static_cast<LogBuffer*>(env)->last =
      std::string(category != nullptr ? category : "") + (category ? ": " : "") + message;
}

class Fmi3Instance final : public Instance {
 public:
  Fmi3Instance(const Fmi3Functions& f, std::string fmu, Interface interface)
      : f_(f), fmu_(std::move(fmu)), cs_(interface == Interface::kCoSimulation) {}
  ~Fmi3Instance() override {
    if (i_ != nullptr) f_.free_instance(i_);
  }

  void create(const std::string& token, const std::string& resources) {
    i_ = cs_ ? f_.instantiate_cs("macrostep", token.c_str(), resources.c_str(), false, false, false,
                                 false, nullptr, 0, &log_, &fmi3_log, nullptr)
             : f_.instantiate("macrostep", token.c_str(), resources.c_str(), false, false, &log_,
                              &fmi3_log);
    if (i_ == nullptr) {
      throw FmuCallError(fmt::format("FMU {}: fmi3Instantiate{} returned NULL{}", fmu_,
                                     cs_ ? "CoSimulation" : "ModelExchange", log_.text()));
    }
  }

  void initialize(const std::vector<StartValue>& starts, std::span<const unsigned> inputs,
                  std::span<const double> u) {
    for (const StartValue& s : starts) {  // a scalar or an array's elements
      const fmi3ValueReference vr = s.value_reference;
      if (s.type == VariableType::kReal) {
        check(f_.set_float64(i_, &vr, 1, s.values.data(), s.values.size()), "fmi3SetFloat64");
      } else {
        set_values({&vr, 1}, s.type, s.values);
      }
    }
    check(f_.enter_initialization(i_, false, 0.0, 0.0, false, 0.0), "fmi3EnterInitializationMode");
    if (!inputs.empty()) {
      check(f_.set_float64(i_, inputs.data(), inputs.size(), u.data(), u.size()), "fmi3SetFloat64");
    }
    check(f_.exit_initialization(i_), "fmi3ExitInitializationMode");
    if (cs_) return;  // Step Mode: ready for its first step
    // Event Mode after initialization (FMI 3 §3.2.3): let the FMU settle its discrete states.
    const EventUpdate e = iterate_discrete_states();
    if (e.terminate) {
      throw FmuCallError(
          fmt::format("FMU {}: asks to terminate during initialization{}", fmu_, log_.text()));
    }
    next_time_event = e.next_time_event;
    check(f_.enter_continuous_time(i_), "fmi3EnterContinuousTimeMode");
  }

  EventUpdate update_discrete_states() override {
    require(f_.enter_event_mode(i_), "fmi3EnterEventMode");
    const EventUpdate e = iterate_discrete_states();
    if (!e.terminate) require(f_.enter_continuous_time(i_), "fmi3EnterContinuousTimeMode");
    return e;
  }
  bool completed_integrator_step(bool& terminate) override {
    fmi3Boolean enter = false, stop = false;
    require(f_.completed_step(i_, true, &enter, &stop), "fmi3CompletedIntegratorStep");
    terminate = stop;
    return enter;
  }
  bool do_step(double t, double h) override {
    if (!cs_) throw std::logic_error("fmi3DoStep on a Model Exchange instance");
    t_ = t;
    fmi3Boolean event = false, terminate = false, early = false;
    fmi3Float64 reached = t;
    if (!check(f_.do_step(i_, t, h, false, &event, &terminate, &early, &reached), "fmi3DoStep")) {
      return false;
    }
    if (terminate) {
      throw FmuCallError(fmt::format("FMU {}: asks to terminate in its step from t = {:.9g}{}",
                                     fmu_, t, log_.text()));
    }
    return !early;
  }
  void set_input_derivatives(std::span<const unsigned>, std::span<const double>) override {
    throw std::logic_error("FMI 3 has no input derivatives");
  }
  std::vector<std::byte> serialize_state() override {
    fmi3FMUState state = nullptr;
    require(f_.get_state(i_, &state), "fmi3GetFMUState");
    std::size_t size = 0;
    fmi3Status status = f_.state_size(i_, state, &size);
    std::vector<std::byte> bytes;
    if (status == fmi3OK || status == fmi3Warning) {
      bytes.resize(size);
      status = f_.serialize(i_, state, reinterpret_cast<fmi3Byte*>(bytes.data()), size);
    }
    f_.free_state(i_, &state);
    require(status, "fmi3SerializeFMUState");
    return bytes;
  }
  void deserialize_state(std::span<const std::byte> bytes) override {
    fmi3FMUState state = nullptr;
    require(
        f_.deserialize(i_, reinterpret_cast<const fmi3Byte*>(bytes.data()), bytes.size(), &state),
        "fmi3DeserializeFMUState");
    const fmi3Status status = f_.set_state(i_, state);
    f_.free_state(i_, &state);
    require(status, "fmi3SetFMUState");
  }

  bool set(double t, std::span<const double> x, std::span<const unsigned> inputs,
           std::span<const double> u) override {
    t_ = t;
    if (cs_) {  // no time or states to set: the FMU keeps its own
      return inputs.empty() ||
             check(f_.set_float64(i_, inputs.data(), inputs.size(), u.data(), u.size()),
                   "fmi3SetFloat64");
    }
    return check(f_.set_time(i_, t), "fmi3SetTime") &&
           (x.empty() || check(f_.set_states(i_, x.data(), x.size()), "fmi3SetContinuousStates")) &&
           (inputs.empty() ||
            check(f_.set_float64(i_, inputs.data(), inputs.size(), u.data(), u.size()),
                  "fmi3SetFloat64"));
  }
  bool derivatives(std::span<double> dx) override {
    return dx.empty() ||
           check(f_.get_derivatives(i_, dx.data(), dx.size()), "fmi3GetContinuousStateDerivatives");
  }
  bool get_reals(std::span<const unsigned> refs, std::span<double> values) override {
    return refs.empty() ||
           check(f_.get_float64(i_, refs.data(), refs.size(), values.data(), values.size()),
                 "fmi3GetFloat64");
  }
  bool get_values(std::span<const unsigned> refs, VariableType type,
                  std::span<double> values) override {
    if (type == VariableType::kReal) return get_reals(refs, values);
    // values: every element of the referenced variables (an array's all of them).
    bool ok = false;
    if (type == VariableType::kInteger) {
      std::vector<fmi3Int32> v(values.size());
      ok = check(f_.get_int32(i_, refs.data(), refs.size(), v.data(), v.size()), "fmi3GetInt32");
      for (std::size_t k = 0; k < v.size(); ++k) values[k] = v[k];
    } else {
      std::unique_ptr<fmi3Boolean[]> v(new fmi3Boolean[values.size()]());
      ok = check(f_.get_boolean(i_, refs.data(), refs.size(), v.get(), values.size()),
                 "fmi3GetBoolean");
      for (std::size_t k = 0; k < values.size(); ++k) values[k] = v[k] ? 1.0 : 0.0;
    }
    return ok;
  }
  bool set_values(std::span<const unsigned> refs, VariableType type,
                  std::span<const double> values) override {
    if (type == VariableType::kInteger) {
      std::vector<fmi3Int32> v(values.size());
      for (std::size_t i = 0; i < v.size(); ++i)
        v[i] = static_cast<fmi3Int32>(std::lround(values[i]));
      return check(f_.set_int32(i_, refs.data(), refs.size(), v.data(), v.size()), "fmi3SetInt32");
    }
    std::unique_ptr<fmi3Boolean[]> v(new fmi3Boolean[values.size()]());
    for (std::size_t i = 0; i < values.size(); ++i) v[i] = values[i] > 0.5;
    return check(f_.set_boolean(i_, refs.data(), refs.size(), v.get(), values.size()),
                 "fmi3SetBoolean");
  }
  bool directional_derivative(std::span<const unsigned> unknowns, unsigned known,
                              std::size_t element, std::size_t size,
                              std::span<double> column) override {
    seed_.assign(size, 0.0);  // the unit vector of the element among its array's
    seed_[element] = 1.0;
    const fmi3ValueReference k = known;
    return check(f_.directional(i_, unknowns.data(), unknowns.size(), &k, 1, seed_.data(),
                                seed_.size(), column.data(), column.size()),
                 "fmi3GetDirectionalDerivative");
  }
  void continuous_states(std::span<double> x) override {
    if (!x.empty()) check(f_.get_states(i_, x.data(), x.size()), "fmi3GetContinuousStates");
  }
  bool continuous_state_nominals(std::span<double> x) override {
    if (f_.get_nominals == nullptr) return false;
    if (!x.empty()) {
      check(f_.get_nominals(i_, x.data(), x.size()), "fmi3GetNominalsOfContinuousStates");
    }
    return true;
  }
  bool event_indicators(std::span<double> z) override {
    return check(f_.event_indicators(i_, z.data(), z.size()), "fmi3GetEventIndicators");
  }

 private:
  // fmi3UpdateDiscreteStates until the FMU needs no further round.
  EventUpdate iterate_discrete_states() {
    EventUpdate e;
    fmi3Boolean update = true, terminate = false, nominals = false, values = false,
                next_defined = false;
    fmi3Float64 next = 0.0;
    for (int k = 0; update; ++k) {
      if (k == kMaxEventIterations) {
        throw FmuCallError(
            fmt::format("FMU {}: the event iteration at t = {:.9g} did not settle in {} rounds of "
                        "fmi3UpdateDiscreteStates{}",
                        fmu_, t_, kMaxEventIterations, log_.text()));
      }
      require(f_.update_discrete_states(i_, &update, &terminate, &nominals, &values, &next_defined,
                                        &next),
              "fmi3UpdateDiscreteStates");
      e.states_changed = e.states_changed || values;
      e.nominals_changed = e.nominals_changed || nominals;
      if (terminate) {
        e.terminate = true;
        break;
      }
    }
    if (next_defined) e.next_time_event = next;
    return e;
  }
  void require(fmi3Status status, const char* function) {
    if (!check(status, function)) {
      throw FmuCallError(fmt::format("FMU {}: {} returned fmi3Discard at t = {:.9g}{}", fmu_,
                                     function, t_, log_.text()));
    }
  }
  bool check(fmi3Status status, const char* function) {
    if (status == fmi3OK || status == fmi3Warning) return true;
    if (status == fmi3Discard) return false;
    throw FmuCallError(fmt::format("FMU {}: {} returned {} at t = {:.9g}{}", fmu_, function,
                                   status_name(status), t_, log_.text()));
  }

  const Fmi3Functions& f_;
  std::string fmu_;
  fmi3Instance i_ = nullptr;
  LogBuffer log_;
  double t_ = 0.0;
  bool cs_ = false;
  std::vector<fmi3Float64> seed_;
};

class Fmi3Binary final : public Binary {
 public:
  Fmi3Binary(const ModelXml& xml, Interface interface, std::string fmu, const std::string& library,
             const std::string& resources)
      : library_(library, interface == Interface::kCoSimulation ? "FMI 3.0 Co-Simulation"
                                                                : "FMI 3.0 Model Exchange"),
        fmu_(std::move(fmu)),
        token_(xml.token),
        resources_(resources + "/"),
        interface_(interface) {
    library_.look_up(f_.free_instance, "fmi3FreeInstance");
    library_.look_up(f_.enter_initialization, "fmi3EnterInitializationMode");
    library_.look_up(f_.exit_initialization, "fmi3ExitInitializationMode");
    library_.look_up(f_.set_float64, "fmi3SetFloat64");
    library_.look_up(f_.get_float64, "fmi3GetFloat64");
    library_.look_up(f_.set_int32, "fmi3SetInt32");
    library_.look_up(f_.set_boolean, "fmi3SetBoolean");
    if (has_discrete_outputs(xml)) {
      library_.look_up(f_.get_int32, "fmi3GetInt32");
      library_.look_up(f_.get_boolean, "fmi3GetBoolean");
    }
    if (interface == Interface::kCoSimulation) {
      library_.look_up(f_.instantiate_cs, "fmi3InstantiateCoSimulation");
      library_.look_up(f_.do_step, "fmi3DoStep");
      if (xml.cs.can_serialize_state) look_up_state_functions();
      return;
    }
    library_.look_up(f_.instantiate, "fmi3InstantiateModelExchange");
    library_.look_up(f_.update_discrete_states, "fmi3UpdateDiscreteStates");
    library_.look_up(f_.enter_event_mode, "fmi3EnterEventMode");
    library_.look_up(f_.enter_continuous_time, "fmi3EnterContinuousTimeMode");
    library_.look_up(f_.set_time, "fmi3SetTime");
    library_.look_up(f_.set_states, "fmi3SetContinuousStates");
    library_.look_up(f_.get_states, "fmi3GetContinuousStates");
    library_.look_up_if_exported(f_.get_nominals, "fmi3GetNominalsOfContinuousStates");
    library_.look_up(f_.get_derivatives, "fmi3GetContinuousStateDerivatives");
    if (xml.directional_derivatives)
      library_.look_up(f_.directional, "fmi3GetDirectionalDerivative");
    if (xml.event_indicators > 0) library_.look_up(f_.event_indicators, "fmi3GetEventIndicators");
    if (xml.can_serialize_state) {
      look_up_state_functions();
      if (xml.needs_completed_integrator_step)
        library_.look_up(f_.completed_step, "fmi3CompletedIntegratorStep");
    }
  }

  std::unique_ptr<Instance> instantiate(const std::vector<StartValue>& starts,
                                        std::span<const unsigned> inputs,
                                        std::span<const double> u) override {
    auto instance = std::make_unique<Fmi3Instance>(f_, fmu_, interface_);
    instance->create(token_, resources_);
    instance->initialize(starts, inputs, u);
    return instance;
  }

 private:
  void look_up_state_functions() {
    library_.look_up(f_.get_state, "fmi3GetFMUState");
    library_.look_up(f_.set_state, "fmi3SetFMUState");
    library_.look_up(f_.free_state, "fmi3FreeFMUState");
    library_.look_up(f_.state_size, "fmi3SerializedFMUStateSize");
    library_.look_up(f_.serialize, "fmi3SerializeFMUState");
    library_.look_up(f_.deserialize, "fmi3DeserializeFMUState");
  }

  SharedLibrary library_;
  std::string fmu_, token_, resources_;
  Interface interface_;
  Fmi3Functions f_;
};

}  // namespace

std::unique_ptr<Binary> load_fmi3_binary(const ModelXml& xml, Interface interface,
                                         const std::string& fmu, const std::string& library,
                                         const std::string& resources) {
  return std::make_unique<Fmi3Binary>(xml, interface, fmu, library, resources);
}

}  // namespace macrostep::fmu

// The FMU subsystem (macrostep/fmu/fmu.hpp) and, for an FMU with events, its modes (model/
// events.hpp). Private to subsystems/fmu: fmu_subsystem.cpp builds it and evaluates the
// equations, fmu_events.cpp handles events.
//
// Modes: an FMU with events keeps its discrete state (discrete variables, pre-values, the event
// it scheduled) inside the FMU; a mode is the FMU's serialized state after initialization or
// after an event (fmi2SerializeFMUstate / fmi3SerializeFMUState), with the next time event and a
// number. Each pooled instance remembers the number of the mode its FMU state is in; a lease for
// another mode sets the FMU state from the mode's bytes first, so every evaluation is a function
// of (mode, t, z, u) whichever instance computes it (model::Subsystem's contract).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "fmu_instance.hpp"
#include "macrostep/fmu/archive.hpp"
#include "macrostep/fmu/fmu.hpp"
#include "macrostep/model/events.hpp"
#include "macrostep/model/subsystem.hpp"
#include "macrostep/model/subsystem_view.hpp"
#include "model_description_xml.hpp"

namespace macrostep::fmu {

class FmuSubsystem;
class FmuMode;

// Scalar elements of FMU variables gathered for FMI's get and set calls, which take one value
// reference for all elements of an FMI 3 array: the references of one type (each once), the flat
// values of all their elements (start values, else 0), and where each gathered element sits.
struct ElementGroup {
  VariableType type = VariableType::kReal;
  std::vector<unsigned> refs;
  std::vector<double> values;
  std::vector<std::pair<std::size_t, std::size_t>> places;  // (element's index, index in values)
};

// The groups of `elements` (Real, then Integer, then Boolean; empty ones left out).
std::vector<ElementGroup> group_elements(const ModelXml& xml, std::span<const ElementRef> elements);

// Element `index` of the variable with value reference `ref`, which has `size` elements.
struct Element {
  unsigned ref = 0;
  std::size_t index = 0;
  std::size_t size = 1;
};

// A mode's equations: the FmuSubsystem's, evaluated in that mode.
class ModeEquations final : public model::SubsystemView {
 public:
  ModeEquations(const FmuSubsystem& owner, const FmuMode& mode);
  void residual(double t, std::span<const double> z, std::span<const double> zp,
                std::span<const double> u, std::span<double> r) const override;
  void jacobian(double t, std::span<const double> z, std::span<const double> zp,
                std::span<const double> u, double cj, std::span<double> values) const override;
  void outputs(double t, std::span<const double> z, std::span<const double> u,
               std::span<double> y) const override;
  // The mode's nominals if an event changed them, else the owner's.
  std::span<const double> state_nominals() const override;

 private:
  const FmuSubsystem& owner_;
  const FmuMode& mode_;
};

class FmuMode final : public model::Mode {
 public:
  // `live`: the state is in the FMU's live instance only (no bytes). `nominals`: the states'
  // nominals in this mode where an event reported them changed (one for every state), else
  // empty: the subsystem's.
  FmuMode(const FmuSubsystem& owner, std::uint64_t number, std::vector<std::byte> state,
          double next_time_event, std::vector<double> nominals = {}, bool live = false)
      : owner_(owner),
        number_(number),
        state_(std::move(state)),
        next_time_event_(next_time_event),
        nominals_(std::move(nominals)),
        live_(live),
        equations_(owner, *this) {}
  const model::Subsystem& equations() const override { return equations_; }
  double next_time_event() const override { return next_time_event_; }
  void indicators(double t, std::span<const double> z, std::span<const double> u,
                  std::span<double> g) const override;
  bool step_event(double t, std::span<const double> z, std::span<const double> u) const override;
  // The next time event (8 bytes), the number of nominals (8 bytes) and the nominals (8 bytes
  // each), then the FMU's serialized state.
  std::vector<std::byte> serialize() const override;

  std::uint64_t number() const { return number_; }
  const std::vector<double>& nominals() const { return nominals_; }
  const std::vector<std::byte>& fmu_state() const { return state_; }
  bool live() const { return live_; }

 private:
  const FmuSubsystem& owner_;
  std::uint64_t number_;
  std::vector<std::byte> state_;
  double next_time_event_;
  std::vector<double> nominals_;
  bool live_;
  ModeEquations equations_;
};

class FmuSubsystem final : public model::Subsystem, public model::Events {
 public:
  explicit FmuSubsystem(const FmuDescription& d);
  ~FmuSubsystem() override {  // every instance before the binary that frees it
    free_.clear();
    live_instance_.reset();
    binary_.reset();
  }

  std::size_t state_size() const override { return states_.size(); }
  std::size_t input_size() const override { return input_vr_.size(); }
  std::size_t output_size() const override { return output_vr_.size(); }
  bool has_feedthrough() const override { return feedthrough_; }
  std::span<const model::StateRole> state_roles() const override { return roles_; }
  // The FMU's nominals of its continuous states after initialization (empty where all are 1 or
  // the binary does not give them); a change the FMU reports at an event is not followed.
  std::span<const double> state_nominals() const override { return nominals_; }
  std::string state_name(std::size_t i) const override { return state_names_[i]; }
  std::string output_name(std::size_t i) const override { return output_names_[i]; }
  std::string input_name(std::size_t i) const override { return input_names_[i]; }
  std::string output_unit(std::size_t i) const override { return output_units_[i]; }
  // The output variable's `nominal` attribute (or its declared type's), else 1.
  double output_nominal(std::size_t i) const override { return output_nominals_[i]; }
  // A state's unit and description are its variable's (modelDescription.xml), an output's
  // description too.
  std::string state_unit(std::size_t i) const override { return state_units_[i]; }
  std::string state_description(std::size_t i) const override { return state_descriptions_[i]; }
  std::string output_description(std::size_t i) const override { return output_descriptions_[i]; }
  double initial_time() const override { return 0.0; }
  const model::SparsityPattern& jacobian_pattern() const override { return pattern_; }

  // The subsystem's own equations are those of the initial mode.
  void initial_state(std::span<const double> u0, std::span<double> z0,
                     std::span<double> zp0) const override;
  void residual(double t, std::span<const double> z, std::span<const double> zp,
                std::span<const double> u, std::span<double> r) const override {
    residual_in(initial_mode_.get(), t, z, zp, u, r);
  }
  void jacobian(double t, std::span<const double> z, std::span<const double> zp,
                std::span<const double> u, double cj, std::span<double> values) const override {
    jacobian_in(initial_mode_.get(), t, z, zp, u, cj, values);
  }
  void outputs(double t, std::span<const double> z, std::span<const double> u,
               std::span<double> y) const override {
    outputs_in(initial_mode_.get(), t, z, u, y);
  }

  // Events: for an FMU with events and for a Co-Simulation FMU.
  const model::Events* events() const override { return initial_mode_ ? this : nullptr; }
  bool advances_itself() const override { return co_simulation_; }
  bool fixed_step_only() const override { return co_simulation_ && !variable_step_; }
  bool restorable() const override { return !live_; }
  bool step_events() const override { return completed_steps_; }
  // A Co-Simulation FMU's step: inputs at t0 (and their slope where the FMU interpolates
  // inputs), doStep over [t0, t1], the new FMU state as the mode (fmu_events.cpp).
  std::shared_ptr<const model::Mode> advance(const model::Mode& mode, double t0, double t1,
                                             const model::InputFunction* input) const override;
  std::size_t indicator_count() const override { return indicator_count_; }
  std::shared_ptr<const model::Mode> initial_mode() const override { return initial_mode_; }
  model::EventOutcome handle(const model::Mode& mode, double t, std::span<double> z,
                             std::span<const double> u, const std::string& why) const override;
  std::shared_ptr<const model::Mode> mode_from_bytes(
      std::span<const std::byte> bytes) const override;

  // Evaluations in a mode (null: an FMU without events, whose instances need no mode).
  void residual_in(const FmuMode* mode, double t, std::span<const double> z,
                   std::span<const double> zp, std::span<const double> u,
                   std::span<double> r) const;
  void jacobian_in(const FmuMode* mode, double t, std::span<const double> z,
                   std::span<const double> zp, std::span<const double> u, double cj,
                   std::span<double> values) const;
  void outputs_in(const FmuMode* mode, double t, std::span<const double> z,
                  std::span<const double> u, std::span<double> y) const;
  void indicators_in(const FmuMode& mode, double t, std::span<const double> z,
                     std::span<const double> u, std::span<double> g) const;
  bool step_event_in(const FmuMode& mode, double t, std::span<const double> z,
                     std::span<const double> u) const;

 private:
  // An instance for the caller's thread alone, in `mode` (if not null), back to the pool when the
  // lease ends.
  // A live mode (an FMU that cannot save its state) leases the one live instance, and only in
  // the newest mode (std::logic_error otherwise: a rollback or a clone the run should not do).
  class Lease {
   public:
    Lease(const FmuSubsystem& s, const FmuMode* mode);
    ~Lease() {
      if (owned_) s_.release(std::move(owned_));
    }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    Instance* operator->() const { return instance_; }
    Instance& operator*() const { return *instance_; }

   private:
    const FmuSubsystem& s_;
    std::unique_lock<std::mutex> live_lock_;
    std::unique_ptr<Instance> owned_;  // from the pool (null for the live instance)
    Instance* instance_ = nullptr;
  };

  // The mode after an event or a step, made by `instance` (its state serialized, or a live mode),
  // with the states' nominals of FmuMode's constructor.
  std::shared_ptr<const FmuMode> next_mode(Instance& instance, double next_time_event,
                                           std::vector<double> nominals) const;
  // The states' nominals the instance gives (1 for each where the FMU does not give them); the
  // reason if one is not finite and > 0.
  std::vector<double> read_nominals(Instance& instance, std::string& bad) const;
  // The nominals in force after an event at t whose iteration reported them changed, read from
  // the instance (empty for an FMU without states). Throws FmuCallError for an invalid one.
  std::vector<double> nominals_after_event(Instance& instance, double t) const;
  // Time, states and inputs of an evaluation point, each input by its type (an array input's
  // other elements at their start values).
  bool set_point(Instance& instance, double t, std::span<const double> z,
                 std::span<const double> u) const;
  // The outputs at the instance's point, each by its type.
  bool get_outputs(Instance& instance, std::span<double> y) const;
  // Start values from the configuration's `parameters` (a JSON array for an array variable).
  void read_parameters(const ModelXml& xml, const FmuDescription& d);

  // A free instance, preferably one already in mode `number`.
  std::unique_ptr<Instance> acquire(std::uint64_t number) const;
  void release(std::unique_ptr<Instance> instance) const;
  std::unique_ptr<Instance> instantiate() const;

  void read_structure(const ModelXml& xml);
  void read_variables(const ModelXml& xml, const FmuDescription& d);
  void read_inputs(const ModelXml& xml, const std::vector<ElementRef>& inputs);
  void read_outputs(const ModelXml& xml, const std::vector<ElementRef>& outputs,
                    const std::vector<ElementRef>& inputs);
  void set_up_events(const ModelXml& xml, Instance& first);

  std::string path_;
  // The unpacked binary and resources/; declared before binary_ and the instances, so that it
  // is removed after them, also when the constructor throws.
  UnpackDirectory dir_;
  std::unique_ptr<Binary> binary_;
  bool directional_ = false;
  bool only_once_ = false;
  bool co_simulation_ = false;        // the Co-Simulation interface (no Model Exchange one)
  bool interpolates_inputs_ = false;  // Co-Simulation with input derivatives (FMI 2)
  bool variable_step_ = false;        // Co-Simulation: canHandleVariableCommunicationStepSize
  std::vector<StartValue> starts_;
  // The continuous states' elements in the FMU's state order, and the derivatives' variables
  // (each once, in that order: their elements are the derivatives in state order).
  std::vector<Element> states_;
  std::vector<unsigned> derivative_refs_;
  // The inputs' and outputs' value references, one per element (a call with these alone is
  // right when every one is a scalar Real: real_inputs_, real_outputs_), and their groups.
  std::vector<unsigned> input_vr_, output_vr_;
  std::vector<ElementGroup> input_groups_, output_groups_;
  std::vector<double> input_start_, x0_;
  std::vector<std::string> state_names_, input_names_, output_names_, output_units_;
  std::vector<double> output_nominals_;
  std::vector<std::string> state_units_, state_descriptions_, output_descriptions_;
  // Inputs by type: all of them (input_vr_), the Real variables (set with the states; the FMU's
  // Real input group) and their start values; real_inputs_ when every input is a scalar Real
  // (one set call with u itself).
  std::vector<VariableType> input_types_;
  std::vector<unsigned> real_input_vr_;
  std::vector<double> real_input_start_;
  bool real_inputs_ = true;
  bool real_outputs_ = true;  // every output a scalar Real (one get call into y)
  std::vector<model::StateRole> roles_;
  std::vector<double> nominals_;
  model::SparsityPattern pattern_;
  bool feedthrough_ = false;

  // Events handled (model::Events): the initial mode (null: none handled), the number of event
  // indicators, whether the FMU wants completed integrator steps, and the next mode number.
  std::shared_ptr<const FmuMode> initial_mode_;
  std::size_t indicator_count_ = 0;
  bool completed_steps_ = false;
  mutable std::atomic<std::uint64_t> next_mode_{1};
  // An FMU with events that cannot save its state (no canGetAndSetFMUstate and
  // canSerializeFMUstate): one live instance carries the state, its modes only say which mode is
  // the newest; runs that roll back or clone are refused before they start (restorable()).
  bool live_ = false;
  mutable std::unique_ptr<Instance> live_instance_;
  mutable std::mutex live_mutex_;
  mutable std::uint64_t live_number_ = 0;

  mutable std::mutex mutex_;
  mutable std::condition_variable returned_;
  mutable std::vector<std::unique_ptr<Instance>> free_;
  mutable std::size_t created_ = 0;
};

}  // namespace macrostep::fmu

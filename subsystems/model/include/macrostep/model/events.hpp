// The discrete part of a hybrid subsystem: modes, events and their handling (FMI's Model
// Exchange events: time events, state events from event indicators, step events).
//
// A subsystem with events answers model::Subsystem::events() with an Events object. Its
// continuous equations then depend on a discrete state, the Mode, which only events change:
//  - A Mode is immutable and shared (std::shared_ptr<const Mode>): the nominal, comparison and
//    perturbed runs and every workspace snapshot hold the mode they continue from, so a
//    rollback, a clone or an exported snapshot takes the discrete state with the continuous one.
//  - Mode::equations() is the Subsystem whose residual, Jacobian and outputs hold in that mode;
//    it keeps every contract of model::Subsystem (pure functions, callable concurrently) and has
//    the sizes, roles, names and Jacobian pattern of the subsystem that made the mode; its states'
//    nominals may differ (FMI's nominalsOfContinuousStatesChanged), and the integrator's absolute
//    tolerances follow them. The subsystem's own residual(), jacobian() and outputs() are those
//    of initial_mode().
//  - A Co-Simulation FMU is a state-less subsystem whose mode is its whole state, advanced by the
//    model itself (Events::advances_itself()).
//  - The integrator (ida::Integrator) locates an event inside a macro step: a time event at
//    Mode::next_time_event(), a state event where an indicator changes sign (the domains g > 0
//    and g <= 0, as FMI defines them) located on the integrator's interpolant to within its
//    rounding tolerance and taken at the first time on the far side, a step event when
//    Mode::step_event() asks for one after an accepted micro step. It then calls Events::handle()
//    with the state there, restarts its BDF history at that time with the new states and a
//    consistent z', and continues in the new mode. The macro grid does not need to hit events;
//    the master ends its macro steps on the scheduled time events all the same
//    (docs/design/methods.md §3.3), and an event at a step's end leaves the state before it
//    readable (ida::Integrator::event_at_end).
//
// Thread-safety: every function of Events and Mode is const and may be called concurrently from
// several threads (one integrator per thread).
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace macrostep::model {

class Subsystem;
class InputFunction;

class Mode {
 public:
  virtual ~Mode() = default;
  // The continuous equations in this mode. Valid as long as the mode.
  virtual const Subsystem& equations() const = 0;
  // The time of the next time event the model has scheduled, or +infinity.
  virtual double next_time_event() const = 0;
  // The event indicators at (t, z, u) in this mode (size Events::indicator_count()).
  virtual void indicators(double t, std::span<const double> z, std::span<const double> u,
                          std::span<double> g) const = 0;
  // Whether the model asks for an event after an accepted micro step that ended at (t, z, u)
  // (FMI's completed integrator step). Only called when Events::step_events() says so. Default:
  // never.
  virtual bool step_event(double t, std::span<const double> z, std::span<const double> u) const {
    (void)t;
    (void)z;
    (void)u;
    return false;
  }
  // The mode as bytes that Events::mode_from_bytes() turns back into an equal mode, in this or
  // another process of the same subsystem (snapshot export, checkpoints, crash recovery).
  virtual std::vector<std::byte> serialize() const = 0;
};

// What handling one event gave.
struct EventOutcome {
  std::shared_ptr<const Mode> mode;  // the mode after the event (null only with terminate)
  bool states_changed = false;       // the handler wrote new continuous states into z
  // The model asks to end the simulation here; `reason` says why (the model's own words if it
  // gave any).
  bool terminate = false;
  std::string reason;
};

class Events {
 public:
  virtual ~Events() = default;
  // The number of event indicators (may be 0: time or step events only).
  virtual std::size_t indicator_count() const = 0;
  // Whether any mode may ask for step events (Mode::step_event); false spares the integrator the
  // call after every micro step. Default: false.
  virtual bool step_events() const { return false; }
  // The mode after initialization at the subsystem's initial time.
  virtual std::shared_ptr<const Mode> initial_mode() const = 0;
  // Handles an event at time t in `mode` with the continuous states z (before the event; the
  // handler overwrites them with the states after it if they change) and the inputs u: the event
  // iteration until the discrete states are stable. `why` names the event for messages ("state
  // event: indicator 1", "time event", "step event"). Throws std::runtime_error if the model
  // fails (its message names the model and the time).
  virtual EventOutcome handle(const Mode& mode, double t, std::span<double> z,
                              std::span<const double> u, const std::string& why) const = 0;
  // A mode from Mode::serialize()'s bytes of this subsystem; throws std::runtime_error for bytes
  // that the model refuses.
  virtual std::shared_ptr<const Mode> mode_from_bytes(std::span<const std::byte> bytes) const = 0;

  // Whether an earlier mode can be taken up again after a later one, and modes travel as bytes
  // (serialize(), mode_from_bytes()). False for a model whose discrete state lives in one place
  // that only moves forward (an FMU that cannot save its state): then only runs without
  // rollback, clones, checkpoints or worker restarts can run it (fixed-step explicit Jacobi
  // without an estimator); the run driver refuses the others before they start. Default: true.
  virtual bool restorable() const { return true; }

  // A subsystem without states that advances itself between communication points (a
  // Co-Simulation FMU, its own solver inside): the integrator calls advance() once for every
  // advance_to(t0 → t1) with the inputs over the step, and continues in the mode it returns; it
  // asks for no other event (the model handles its own). Default: false.
  virtual bool advances_itself() const { return false; }
  // Whether every advance() must span the same time (a Co-Simulation FMU without
  // canHandleVariableCommunicationStepSize): only runs of one fixed macro step H from the start
  // on, to an end time that is a whole number of H, can run it; the run driver refuses the
  // others before they start. Default: false.
  virtual bool fixed_step_only() const { return false; }
  // The mode at t1 from `mode` at t0 with the inputs over [t0, t1] (`input` is null for a
  // subsystem without inputs). Throws std::runtime_error naming the model and the time if the
  // step fails (the integrator's caller may retry a shorter one from a restored workspace).
  virtual std::shared_ptr<const Mode> advance(const Mode& mode, double t0, double t1,
                                              const InputFunction* input) const {
    (void)mode;
    (void)t0;
    (void)t1;
    (void)input;
    return nullptr;
  }
};

}  // namespace macrostep::model

// How a run that failed is told: the `macrostep` command prints the message (and exits 1), the
// Python package raises it (python/). One line with the time reached and the cause.
#pragma once

#include <exception>
#include <string>
#include <utility>

#include "macrostep/config/run_config.hpp"
#include "macrostep/control/step_size.hpp"

namespace macrostep::run {

// A step-size underflow of an explicit run that the linearised system explains as a stability
// limit (stability_check.hpp): the underflow, with that diagnosis and what to use instead.
class StabilityLimitedUnderflow : public control::StepSizeUnderflow {
 public:
  StabilityLimitedUnderflow(const control::StepSizeUnderflow& underflow, std::string diagnosis)
      : control::StepSizeUnderflow(underflow), diagnosis_(std::move(diagnosis)) {}
  const std::string& diagnosis() const { return diagnosis_; }

 private:
  std::string diagnosis_;
};

// The message of a run failure thrown by run_cosimulation or run_monolithic:
//  - schemes::SubsystemFailure: "co-simulation failed at t = T s: CAUSE", with `config` also
//    naming the subsystem as its description does ("(subsystem 2 is "motor": dc_motor ...)");
//  - executors::WorkerFailure, schemes::CouplingFailure: "co-simulation failed at t = T s:
//    CAUSE";
//  - control::StepSizeUnderflow: the same, with H, H_min and what usually causes it, or, for a
//    StabilityLimitedUnderflow, its diagnosis;
//  - ida::IntegrationError: "integration failed at t = T s: CAUSE";
//  - Diverged, StabilityLimited (cosimulation.hpp): their own message.
// Empty for any other exception (a configuration or setup error, an interruption, an output
// error: their what() is the message). `config` may be null. Thread-safe.
std::string failure_message(const std::exception& e, const config::RunConfig* config = nullptr);

// The notice of a run a model ended (schemes::ModelTerminatedRun, or ida::ModelTerminated in a
// monolithic run): "the simulation ended at t = T s: CAUSE", the subsystem named as by
// failure_message. Thread-safe.
std::string terminated_message(const std::exception& e, const config::RunConfig* config = nullptr);

}  // namespace macrostep::run

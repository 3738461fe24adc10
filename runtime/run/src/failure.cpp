// How a run that failed is told (failure.hpp).
#include "macrostep/run/failure.hpp"

#include <fmt/format.h>

#include "macrostep/control/step_size.hpp"
#include "macrostep/executors/process_executor.hpp"
#include "macrostep/ida/integrator.hpp"
#include "macrostep/library/model_description.hpp"
#include "macrostep/run/cosimulation.hpp"
#include "macrostep/schemes/pipeline.hpp"

namespace macrostep::run {

namespace {

// " (subsystem 2 is "motor": dc_motor ...)", as the description names it (counted from 1).
std::string named(const schemes::SubsystemFailure& f, const config::RunConfig* config) {
  if (config == nullptr || !config->system_description ||
      f.subsystem() >= config->system_description->subsystems.size()) {
    return {};
  }
  const auto& s = config->system_description->subsystems[f.subsystem()];
  return fmt::format(" (subsystem {} is \"{}\": {})", f.subsystem() + 1, s.name,
                     library::describe(s.model));
}

}  // namespace

std::string terminated_message(const std::exception& e, const config::RunConfig* config) {
  if (const auto* f = dynamic_cast<const schemes::SubsystemFailure*>(&e)) {
    return fmt::format("the simulation ended at t = {:.9g} s (the last accepted macro point): {}{}",
                       f->time(), f->what(), named(*f, config));
  }
  if (const auto* f = dynamic_cast<const ida::IntegrationError*>(&e)) {
    return fmt::format("the simulation ended at t = {:.9g} s: {}", f->time(), f->what());
  }
  return e.what();
}

std::string failure_message(const std::exception& e, const config::RunConfig* config) {
  if (const auto* f = dynamic_cast<const schemes::SubsystemFailure*>(&e)) {
    return fmt::format("co-simulation failed at t = {:.9g} s: {}{}", f->time(), f->what(),
                       named(*f, config));
  }
  if (const auto* f = dynamic_cast<const executors::WorkerFailure*>(&e)) {
    return fmt::format("co-simulation failed at t = {:.9g} s: {}", f->time(), f->what());
  }
  if (const auto* f = dynamic_cast<const schemes::CouplingFailure*>(&e)) {
    return fmt::format("co-simulation failed at t = {:.9g} s: {}", f->time(), f->what());
  }
  if (const auto* f = dynamic_cast<const StabilityLimitedUnderflow*>(&e)) {
    return fmt::format(
        "co-simulation failed at t = {:.9g} s: the macro-step controller cannot meet the error "
        "test: H = {:.3e} s fell below H_min = {:.3e} s: {}",
        f->time(), f->step(), f->minimum(), f->diagnosis());
  }
  if (const auto* f = dynamic_cast<const control::StepSizeUnderflow*>(&e)) {
    return fmt::format(
        "co-simulation failed at t = {:.9g} s: the macro-step controller cannot meet the error "
        "test: H = {:.3e} s fell below H_min = {:.3e} s (tolerances too tight for the subsystem "
        "solver, or an unstable coupling)",
        f->time(), f->step(), f->minimum());
  }
  if (const auto* f = dynamic_cast<const ida::IntegrationError*>(&e)) {
    return fmt::format("integration failed at t = {:.9g} s: {}", f->time(), f->what());
  }
  if (dynamic_cast<const Diverged*>(&e) != nullptr ||
      dynamic_cast<const StabilityLimited*>(&e) != nullptr) {
    return e.what();  // the guards' messages name the time and the cause already
  }
  return {};
}

}  // namespace macrostep::run

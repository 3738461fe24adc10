// Macro points on the subsystems' time events (docs/design/methods.md §3.3), for the pipeline
// (pipeline.cpp). Private to runtime/schemes.
//
// A subsystem with events reports, after each step, the next time its model has scheduled an
// event (runner::RunResult::next_event); the controller ends no macro step beyond it
// (control::MacroStepController::set_event_limit). A step that ends on an event reports the
// outputs before it, which the step's coupling update, estimate and corrector use, and the
// outputs after it (RunResult::event_outputs); from those the pipeline computes the coupling
// variables after the event, which replace the history's newest point; the variables the event
// moved hold their new value over the older points (MacroStepController::jump_at_event), so that
// no extrapolation runs through the jump.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "macrostep/control/error_norm.hpp"
#include "macrostep/executors/executor.hpp"
#include "macrostep/system/coupled_system.hpp"

namespace macrostep::schemes {

class PassRunner;

// Whether the run ends macro steps on time events: every subsystem may take steps of any
// length (none is model::Events::fixed_step_only, whose steps must all span one H).
bool aligns_time_events(const system::CoupledSystem& system);

// The earliest time event the subsystems' initial modes have scheduled (+infinity: none).
double initial_time_event(const system::CoupledSystem& system);

// The earliest next time event the nominal runs of `pass` report (+infinity: none).
double next_time_event(const executors::PassOutcome& pass);

// Whether some nominal run of `pass` handled an event at the pass's end.
bool event_at_end(const executors::PassOutcome& pass);

// The outputs and coupling variables after the event at the end of the last pass of `passes`,
// from the outputs and coupling variables before it (passes.outputs(), passes.u_next()): each
// subsystem's outputs after the event (its own event outputs, else its outputs before), and u
// from them as the step's update computed u before it (METHODS D-1: with feed-through the
// consistent update, the feed-through subsystems evaluated in their state after the event).
// Between the attempt's last pass and the executor's accept(). Returns an empty string, or why
// u could not be computed (the consistent update did not converge, a value is not finite).
std::string values_after_event(const system::CoupledSystem& system, PassRunner& passes,
                               const control::ErrorTolerances& tol,
                               std::vector<std::vector<double>>& outputs_after,
                               std::vector<double>& u_after);

}  // namespace macrostep::schemes

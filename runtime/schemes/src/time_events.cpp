#include "time_events.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "macrostep/model/events.hpp"
#include "macrostep/model/subsystem.hpp"
#include "macrostep/schemes/pipeline.hpp"

namespace macrostep::schemes {

bool aligns_time_events(const system::CoupledSystem& system) {
  for (std::size_t i = 0; i < system.subsystem_count(); ++i) {
    const model::Events* events = system.subsystem(i).events();
    if (events != nullptr && events->fixed_step_only()) return false;
  }
  return true;
}

double initial_time_event(const system::CoupledSystem& system) {
  double t = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < system.subsystem_count(); ++i) {
    const model::Events* events = system.subsystem(i).events();
    if (events == nullptr || events->advances_itself()) continue;
    t = std::min(t, events->initial_mode()->next_time_event());
  }
  return t;
}

double next_time_event(const executors::PassOutcome& pass) {
  double t = std::numeric_limits<double>::infinity();
  for (const auto& s : pass.subsystems) t = std::min(t, s.nominal.next_event);
  return t;
}

bool event_at_end(const executors::PassOutcome& pass) {
  return std::any_of(pass.subsystems.begin(), pass.subsystems.end(),
                     [](const auto& s) { return !s.nominal.event_outputs.empty(); });
}

namespace {

// With feed-through: y and ∂y/∂u of every feed-through subsystem after the event, at its inputs
// from u before it, then the consistent update from there. The others' outputs do not depend on
// u and are taken as they are.
std::string consistent_after_event(const system::CoupledSystem& system, PassRunner& passes,
                                   const control::ErrorTolerances& tol,
                                   std::vector<std::vector<double>>& outputs_after,
                                   std::vector<double>& u_after) {
  const std::size_t ns = system.subsystem_count();
  const std::vector<double>& u_before = passes.u_next();
  std::vector<std::vector<double>> inputs(ns), feedthrough(ns);
  for (std::size_t i = 0; i < ns; ++i) {
    if (!system.subsystem(i).has_feedthrough()) continue;
    inputs[i].resize(system.subsystem(i).input_size());
    system.gather_inputs(i, u_before, inputs[i]);
  }
  const auto evaluate_after = [&](std::span<const std::vector<double>> in,
                                  std::span<std::vector<double>> y,
                                  std::span<std::vector<double>> d, std::string& error) {
    const executors::EvaluationOutcome* failed =
        passes.evaluate_outputs_into(in, y, d, runner::EventSide::kAfter);
    if (failed != nullptr) {
      error = fmt::format("subsystem {}: {}", failed->failed_subsystem + 1, failed->error);
    }
    return failed == nullptr;
  };
  std::string error;
  if (!evaluate_after(inputs, outputs_after, feedthrough, error)) return error;
  const system::OutputEvaluator evaluate =
      [&](std::span<const std::vector<double>> in, std::span<std::vector<double>> y,
          std::span<std::vector<double>> d) { return evaluate_after(in, y, d, error); };
  u_after.resize(system.coupling_count());
  const system::ConsistentUpdate update =
      system.consistent_update(outputs_after, feedthrough, u_before, tol, u_after, evaluate);
  if (update.converged) return {};
  if (!error.empty()) return error;
  return fmt::format(
      "the consistent update (D-1) did not converge: coupling variable {} keeps the weighted "
      "residual {:.3g} after {} Newton steps",
      system.coupling_name(update.worst), update.residual, update.iterations);
}

}  // namespace

std::string values_after_event(const system::CoupledSystem& system, PassRunner& passes,
                               const control::ErrorTolerances& tol,
                               std::vector<std::vector<double>>& outputs_after,
                               std::vector<double>& u_after) {
  const executors::PassOutcome& pass = passes.last_pass();
  const std::size_t ns = system.subsystem_count();
  outputs_after.resize(ns);
  for (std::size_t i = 0; i < ns; ++i) {
    const auto& after = pass.subsystems[i].nominal.event_outputs;
    outputs_after[i] = after.empty() ? passes.outputs()[i] : after;
  }
  if (system.has_feedthrough()) {
    if (std::string error = consistent_after_event(system, passes, tol, outputs_after, u_after);
        !error.empty()) {
      return error;
    }
  } else {
    u_after.resize(system.coupling_count());
    system.evaluate_couplings(outputs_after, u_after);
  }
  for (std::size_t c = 0; c < u_after.size(); ++c) {
    if (!std::isfinite(u_after[c])) {
      return fmt::format("coupling variable {} is {} after the event",
                         model::quoted(system.coupling_name(c)), u_after[c]);
    }
  }
  return {};
}

}  // namespace macrostep::schemes

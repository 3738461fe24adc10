// The checks of a co-simulation run that need the built system (checked_system.hpp), after
// its settings are resolved (settings.cpp).
#include "checked_system.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "executor_factory.hpp"
#include "macrostep/corrector/jacobian_registry.hpp"
#include "macrostep/corrector/sap.hpp"
#include "macrostep/library/model_description.hpp"
#include "macrostep/schemes/explicit_jacobi.hpp"
#include "macrostep/system/chain_system.hpp"
#include "macrostep/system/system_description.hpp"
#include "memory_estimate.hpp"
#include "output_rows.hpp"
#include "stability_check.hpp"

namespace macrostep::run {

using schemes::SchemeOptions;

namespace {

// The approximation of every coupling variable (SchemeOptions::approximations): empty when all
// are Lagrange, so that such runs take the step polynomials of before unchanged.
std::vector<polynomials::Approximation> coupling_approximations(
    const CosimSettings& s, const system::CoupledSystem& system) {
  std::vector<polynomials::Approximation> out(system.coupling_count(), s.cosim.approximation);
  for (std::size_t k = 0; k < s.connection_approximations.size(); ++k) {
    if (s.connection_approximations[k].empty()) continue;
    const auto a = polynomials::parse_approximation(s.connection_approximations[k]);
    for (std::size_t j = 0; j < system.law(k).write_count(); ++j) out[system.law_offset(k) + j] = a;
  }
  const bool all_lagrange =
      std::all_of(out.begin(), out.end(), [](const auto& a) { return a.is_lagrange(); });
  if (all_lagrange) out.clear();
  try {
    schemes::check_approximations(system, out);
  } catch (const std::invalid_argument& e) {
    throw SetupError(e.what());
  }
  return out;
}

// Gauss–Seidel's sequence names every subsystem of the built system once (the file checked the
// numbers and duplicates, not the count).
void check_sequence(const config::RunConfig& config, const CosimSettings& settings,
                    const system::CoupledSystem& system) {
  const config::CosimConfig& c = settings.cosim;
  if (c.scheme != config::CosimScheme::kGaussSeidel || c.sequence.empty()) return;
  const std::size_t ns = system.subsystem_count();
  const bool in_range =
      std::all_of(c.sequence.begin(), c.sequence.end(), [ns](std::size_t i) { return i < ns; });
  if (c.sequence.size() != ns || !in_range) {
    throw SetupError(fmt::format(
        "{}: cosim.sequence: must name each of the {} subsystems once, numbered 1..{} (got {} "
        "entries)",
        config::origin(config, c.sequence_line, "cosim.sequence"), ns, ns, c.sequence.size()));
  }
}

// Direct feed-through (METHODS D-1) needs an interface Jacobian that sees ∂y/∂u: refused before
// any file is written. (Every explicit scheme, Gauss–Seidel too, makes the consistent update.)
void check_feedthrough_combination(const config::RunConfig& config, const CosimSettings& settings,
                                   const system::CoupledSystem& system) {
  if (!system.has_feedthrough()) return;
  const config::CosimConfig& c = settings.cosim;
  if (c.iterative() && c.scheme != config::CosimScheme::kWaveform &&
      !corrector::jacobian_traits(c.jacobian).feedthrough) {
    throw SetupError(fmt::format(
        "{}: jacobian {}: the {} interface Jacobian misses the direct feed-through ∂y/∂u of "
        "this system's subsystems; use jacobian {}",
        config.path, c.jacobian, c.jacobian,
        corrector::JacobianRegistry::instance().names_where(
            [](const corrector::JacobianTraits& t) { return t.feedthrough; })));
  }
}

// An interface Jacobian from the subsystems' input accelerations (sap, METHODS §4.5) needs them
// of every model: refused before any file is written, naming the first subsystem that cannot
// give them as its description names it.
void check_input_accelerations(const config::RunConfig& config, const CosimSettings& settings,
                               const system::CoupledSystem& system) {
  const config::CosimConfig& c = settings.cosim;
  if (!c.iterative() || c.scheme == config::CosimScheme::kWaveform ||
      !corrector::jacobian_traits(c.jacobian).input_accelerations) {
    return;
  }
  const auto missing = corrector::subsystem_without_input_accelerations(system);
  if (!missing) return;
  const auto& sub = config.system_description->subsystems.at(*missing);
  throw SetupError(fmt::format(
      "{}: jacobian {}: the {} interface Jacobian needs every subsystem's input accelerations "
      "(M⁻¹B, METHODS §4.5), and subsystem \"{}\" ({}) cannot give them; use jacobian {}",
      config.path, c.jacobian, c.jacobian, sub.name, library::describe(sub.model),
      corrector::JacobianRegistry::instance().names_where(
          [](const corrector::JacobianTraits& t) { return !t.input_accelerations; })));
}

// A constraint coupling (a joint; METHODS §8, seed 004) is solved by Newton with ∂y/∂u only:
// refused before any file is written for the schemes and Jacobians that cannot. Its multipliers
// are index-2 variables: the corrector fixes the integral of their step polynomial, whose
// end-value recurrence is stable only up to κ = 1 (κ = 0: r = 0; κ = 1, the trapezoid: r = −1;
// κ = 2, Adams-Moulton weights 5/12, 8/12, −1/12: 5r² + 8r − 1 = 0, r = −1.72, the multipliers
// oscillate with period 2H and grow). A fixed κ ≥ 2 is refused, order control stays at κ ≤ 1.
void check_constraint_combination(const config::RunConfig& config,
                                  const system::CoupledSystem& system, CosimSettings& settings) {
  if (!system.has_constraints()) return;
  control::MacroStepOptions& m = settings.scheme.control;
  const bool fixed_order =
      m.mode == control::StepSizeMode::kFixed || m.order.strategy == control::OrderStrategy::kFixed;
  const int kappa = m.mode == control::StepSizeMode::kFixed ? m.kappa_fixed : m.order.kappa_max;
  if (fixed_order && kappa >= 2) {
    throw SetupError(fmt::format(
        "{}: order {}: a joint's multipliers are unstable under extrapolation of degree 2 and "
        "more (for kappa = 2 their recurrence 5r^2 + 8r - 1 = 0 has the root -1.72); use order 0 "
        "or 1 (order auto stays at kappa <= 1 with a joint)",
        config.path, kappa));
  }
  if (!fixed_order) m.order.kappa_max = std::min(m.order.kappa_max, 1);
  const config::CosimConfig& c = settings.cosim;
  // Scheme auto takes only implicit steps then (adaptive.hpp).
  const bool newton = c.scheme == config::CosimScheme::kImplicit ||
                      c.scheme == config::CosimScheme::kSemiImplicit ||
                      c.scheme == config::CosimScheme::kAuto;
  if (!newton) {
    throw SetupError(fmt::format(
        "{}: scheme {}: a joint (constraint coupling) has no law u = φ(y) for its multipliers; "
        "they are solved by the corrector: use scheme implicit, semi-implicit or auto (seed 004)",
        config.path, config::to_string(c.scheme)));
  }
  if (!corrector::jacobian_traits(c.jacobian).constraints) {
    throw SetupError(fmt::format(
        "{}: jacobian {}: a joint (constraint coupling) needs an interface Jacobian of the "
        "subsystems' response; use jacobian {} (seed 004 Eq. 49)",
        config.path, c.jacobian,
        corrector::JacobianRegistry::instance().names_where(
            [](const corrector::JacobianTraits& t) { return t.constraints; })));
  }
}

// The coupled system of the configuration's description and the description of every
// subsystem for its worker process (`models`).
system::CoupledSystem coupled_system(const config::RunConfig& config,
                                     std::vector<library::ModelDescription>& models) {
  for (const auto& sub : config.system_description->subsystems) models.push_back(sub.model);
  return system::build_system(*config.system_description);
}

// A subsystem whose modes cannot be restored (model::Events::restorable: an FMU with events that
// cannot save its state) only runs forward: no rollback, clones, checkpoints or worker restarts.
void check_restorable(const config::RunConfig& config, CosimSettings& settings,
                      const system::CoupledSystem& system) {
  for (std::size_t L = 0; L < system.subsystem_count(); ++L) {
    const model::Events* events = system.subsystem(L).events();
    if (events == nullptr || events->restorable()) continue;
    std::string needs;
    if (settings.cosim.scheme != config::CosimScheme::kExplicit) {
      needs = fmt::format("the {} scheme", config::to_string(settings.cosim.scheme));
    } else if (settings.executor.rollback || runs_per_subsystem(settings, 0) > 1) {
      needs = "a controlled step size or an estimator (rolled-back and cloned steps)";
    } else if (settings.checkpoint_every) {
      needs = "checkpoints";
    } else if (settings.max_restarts > 0) {
      needs = "worker restarts (--max-restarts)";
    }
    const std::string& name = config.system_description->subsystems.at(L).name;
    if (!needs.empty()) {
      throw SetupError(fmt::format(
          "{}: subsystem \"{}\" cannot save its state (an FMU with events or a Co-Simulation FMU "
          "without canGetAndSetFMUstate and canSerializeFMUstate), so it runs only forward: a "
          "fixed step size with estimator \"none\", the explicit scheme, no checkpoints and no "
          "worker restarts; this run asks for {}",
          config.path, name, needs));
    }
    if (settings.no_final_checkpoint.empty()) {
      settings.no_final_checkpoint = fmt::format(
          "subsystem \"{}\" cannot save its state (no canGetAndSetFMUstate and "
          "canSerializeFMUstate)",
          name);
    }
  }
}

// A subsystem that takes one communication step size throughout (model::Events::fixed_step_only:
// a Co-Simulation FMU without canHandleVariableCommunicationStepSize) runs only with a fixed H from
// the start (no Listing 5.1 ramp) to an end time that is a whole number of H. Then the other
// subsystems' time events are no macro points (docs/design/methods.md §3.3): the note that says
// so, if one of them has events.
std::optional<std::string> check_fixed_step_only(const config::RunConfig& config,
                                                 const system::CoupledSystem& system,
                                                 schemes::SchemeOptions& scheme_options) {
  control::MacroStepOptions& m = scheme_options.control;
  std::optional<std::string> one_length;
  for (std::size_t L = 0; L < system.subsystem_count(); ++L) {
    const model::Events* events = system.subsystem(L).events();
    if (events == nullptr || !events->fixed_step_only()) continue;
    const std::string& name = config.system_description->subsystems.at(L).name;
    const std::string what = fmt::format(
        "{}: subsystem \"{}\" is a Co-Simulation FMU without "
        "canHandleVariableCommunicationStepSize: every step it takes must have one length",
        config.path, name);
    if (m.mode != control::StepSizeMode::kFixed) {
      throw SetupError(what +
                       "; give a fixed macro step (estimator \"none\" and step_size = H, or "
                       "--estimator none --step-size H)");
    }
    const double steps = (m.t_end - m.t_start) / m.h;
    if (std::abs(steps - std::round(steps)) > 1e-9 * std::max(1.0, steps)) {
      throw SetupError(fmt::format(
          "{}; the time from {} to {} s is not a whole number of steps H = {} s (it is {:.6g})",
          what, m.t_start, m.t_end, m.h, steps));
    }
    m.fixed_start_ramp = false;
    if (!one_length) one_length = name;
  }
  if (!one_length) return std::nullopt;
  for (std::size_t L = 0; L < system.subsystem_count(); ++L) {
    const model::Events* events = system.subsystem(L).events();
    if (events == nullptr || events->advances_itself() ||
        !std::isfinite(events->initial_mode()->next_time_event())) {
      continue;
    }
    return fmt::format(
        "note: the time events of subsystem \"{}\" fall inside macro steps in this run, not on "
        "macro points: subsystem \"{}\" takes steps of one length only",
        config.system_description->subsystems.at(L).name, *one_length);
  }
  return std::nullopt;
}

// The controller's absolute tolerances of the monitored outputs scaled by their nominals
// (model::Subsystem::output_nominal, docs/design/methods.md D-53): per-output atols where some
// output's nominal is not 1; the scalars stay where every one is.
void scale_by_output_nominals(const system::CoupledSystem& system, CosimSettings& settings) {
  control::ErrorTolerances& tol = settings.scheme.control.tolerances;
  const auto monitored = system.monitored_outputs();
  const auto groups = system.monitored_groups();
  std::vector<double> pos, vel;
  bool scaled = false;
  for (std::size_t j = 0; j < monitored.size(); ++j) {
    const system::OutputRef& o = monitored[j].output;
    const double nominal = system.subsystem(o.subsystem).output_nominal(o.output);
    scaled = scaled || nominal != 1.0;
    if (groups[j] == control::WeightGroup::kPosition) pos.push_back(tol.atol_pos * nominal);
    if (groups[j] == control::WeightGroup::kVelocity) vel.push_back(tol.atol_vel * nominal);
  }
  if (!scaled) return;
  tol.atol_pos_each = std::move(pos);
  tol.atol_vel_each = std::move(vel);
}

}  // namespace

// The coupled system of `config` (and its models), with every check that needs the built system,
// and the scheme's options for it: SetupError before any file is written. May narrow `settings`
// (a joint's order limit).
system::CoupledSystem checked_system(const config::RunConfig& config, CosimSettings& settings,
                                     std::vector<library::ModelDescription>& models,
                                     SchemeOptions& scheme_options) {
  // The master's copy of the model and every run of the subsystems (a chain segment has at
  // most two inputs).
  check_memory(config, 1 + runs_per_subsystem(settings, 2));
  system::CoupledSystem system = coupled_system(config, models);
  check_constraint_combination(config, system, settings);
  scale_by_output_nominals(system, settings);
  scheme_options = settings.scheme;
  scheme_options.approximations = coupling_approximations(settings, system);
  check_sequence(config, settings, system);
  check_feedthrough_combination(config, settings, system);
  check_input_accelerations(config, settings, system);
  check_restorable(config, settings, system);
  if (const auto note = check_fixed_step_only(config, system, scheme_options)) {
    fmt::print(stderr, "macrostep: {}\n", *note);
  }
  check_output_rows(config, settings, system, scheme_options);
  if (const auto warning = fixed_step_warning(config, settings, system)) {
    fmt::print(stderr, "macrostep: {}\n", *warning);
  }
  return system;
}

}  // namespace macrostep::run

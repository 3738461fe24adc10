// Options of the iterative co-simulation schemes (METHODS.md §4, defaults §9).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "macrostep/model/name_table.hpp"

namespace macrostep::corrector {

// How u_{N+1} is iterated within a macro step.
enum class IterationKind : std::uint8_t {
  kNewton,        // implicit: predictor + Newton corrector passes to convergence (§4.1-4.3)
  kSemiImplicit,  // one Newton step, one corrector pass, u_{N+1} = φ(y^c) (§4.4; seed 002)
  kWaveform,      // relaxed fixed point s^{j+1} = (1−ω)φ(y^j) + ω s^j (§4.6)
};

// The built-in interface Jacobians; their names (kJacobianNames) are the ones they register
// under (jacobian_registry.hpp), which CorrectorOptions and the configuration carry: the
// registry, which a program may extend, is the vocabulary that readers check names against.
enum class JacobianKind : std::uint8_t {
  kFiniteDifference,  // fd: one perturbed run per input, every pass (§4.2)
  kSap,               // sap: first series term, no perturbed runs (§4.5, D-20)
  kReuse,             // fd, kept across passes and steps while it contracts well
  kQuasiNewton,       // IQN-ILS secant updates; fd only at the start and after a failure
  kHeun,              // one Heun step of the linearised subsystems, no perturbed runs (seed 004
                      // Eq. 49/50; heun.hpp)
  kBroyden,           // fd when stale; Broyden updates from the passes in between
};

inline constexpr model::NameTable<IterationKind, 3> kIterationNames{{
    {IterationKind::kNewton, "implicit"},
    {IterationKind::kSemiImplicit, "semi-implicit"},
    {IterationKind::kWaveform, "waveform"},
}};
inline constexpr model::NameTable<JacobianKind, 6> kJacobianNames{{
    {JacobianKind::kFiniteDifference, "fd"},
    {JacobianKind::kSap, "sap"},
    {JacobianKind::kReuse, "reuse"},
    {JacobianKind::kQuasiNewton, "quasi-newton"},
    {JacobianKind::kHeun, "heun"},
    {JacobianKind::kBroyden, "broyden"},
}};

struct CorrectorOptions {
  IterationKind iteration = IterationKind::kNewton;
  // The interface-Jacobian strategy by its registry name (jacobian_registry.hpp): "fd", "sap",
  // "reuse", "quasi-newton", "heun", "broyden" or one registered by the program.
  std::string jacobian = "fd";
  double tau = 0.33;              // convergence tolerance τ (§4.3)
  int max_passes = 10;            // n_cor^max corrector passes after the predictor
  double divergence = 0.9;        // R at or above which the corrector diverges (D-16)
  double perturbation_min = 0.1;  // Δλ_min (§4.2), in units of u
  double omega = 0.3;             // waveform relaxation ω in (0, 1); quasi-Newton's
                                  // relaxed step when it has no secant information
  // reuse, broyden: a rate R at or above this asks for a fresh J (decision: 0.25, a simplified
  // Newton that contracts by 4 per pass still beats a full pass of perturbed runs).
  double reuse_rate = 0.25;
  // reuse across steps: a J serves an attempt of the same κ whose H lies within this factor of
  // the H it was made for (decision: 2; the controller changes H at nearly every step, so equal
  // H alone kept one J for a third of the attempts on s-5.7-dense; a J of another H that
  // contracts too slowly is caught by reuse_rate like any other).
  double reuse_step_ratio = 2.0;
  int quasi_newton_reuse = 8;  // attempts whose secant columns IQN-ILS keeps
  // Newton iteration: whether a converged attempt always ends with a pass of the next iterate
  // s^{j+1} (true, §4.3 as the seeds do it), or ends at once with the pass just run when its own
  // iterate s^j passes integrated_iterate_converged() (false, D-50: one integration per
  // subsystem and step fewer wherever the Newton step contracts at once).
  bool final_pass = true;

  // Throws std::invalid_argument naming the field (an unregistered jacobian: the registered
  // names).
  void validate() const;
};

// The names of the tables above.
const char* iteration_name(IterationKind k);
const char* jacobian_name(JacobianKind k);
std::optional<IterationKind> parse_iteration(std::string_view name);
std::optional<JacobianKind> parse_jacobian(std::string_view name);

}  // namespace macrostep::corrector

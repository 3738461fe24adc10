// DivergenceGuard: ends a run whose coupling variables grow without bound or stop being
// finite, instead of letting it write 1e30 to the end with exit 0.
//
// Rule: coupling variable i diverges at an accepted point where |u_i| exceeds
// kDivergenceFactor × max(|u_i(T_0)|, atol_u_i / rtol), or is not finite. atol_u/rtol is the
// magnitude at which the controller's absolute and relative tolerances weigh the same, the
// smallest magnitude the configuration calls significant; a factor of 1e10 above it (and above
// the initial value) is far beyond what a bounded motion reaches, while an unstable coupling or
// an unstable model (a law with the wrong sign) passes it after a few dozen e-foldings. Positions
// are not watched: a turning shaft's angle grows without bound by right. States and outputs that
// stop being finite are the pipeline's to report (it names the subsystem and output).
//
// The guard is an observer (observer.hpp): it throws from accepted(), after the result table
// has written the point, so every row up to the one that diverged stays in the file.
#pragma once

#include <string>
#include <vector>

#include "macrostep/control/error_norm.hpp"
#include "macrostep/run/observer.hpp"
#include "macrostep/system/coupled_system.hpp"

namespace macrostep::run {

inline constexpr double kDivergenceFactor = 1e10;

class DivergenceGuard final : public RunObserver {
 public:
  // The bounds come from the system's initial coupling variables `u0`, which the run fills before
  // started() (so that a resumed run has the bounds of the run it continues); `system`,
  // `tolerances` and `u0` must outlive the guard; `scheme` names the scheme in the advice
  // ("explicit", ...).
  DivergenceGuard(const system::CoupledSystem& system, const control::ErrorTolerances& tolerances,
                  std::string scheme, const std::vector<double>& u0);

  void started(executors::Executor& executor) override;
  void accepted(const schemes::AcceptedPoint& point) override;

 private:
  const system::CoupledSystem& system_;
  const control::ErrorTolerances& tolerances_;
  std::string scheme_;
  const std::vector<double>& u0_;
  std::vector<double> bound_;  // per coupling variable, set by started()
};

}  // namespace macrostep::run

#include "divergence_guard.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "macrostep/run/cosimulation.hpp"

namespace macrostep::run {

DivergenceGuard::DivergenceGuard(const system::CoupledSystem& system,
                                 const control::ErrorTolerances& tolerances, std::string scheme,
                                 const std::vector<double>& u0)
    : system_(system), tolerances_(tolerances), scheme_(std::move(scheme)), u0_(u0) {}

void DivergenceGuard::started(executors::Executor&) {
  bound_.resize(u0_.size());
  for (std::size_t i = 0; i < u0_.size(); ++i) {
    const double atol =
        control::component_atol(tolerances_, control::WeightGroup::kCouplingVariable, i);
    bound_[i] = kDivergenceFactor * std::max(std::abs(u0_[i]), atol / tolerances_.rtol);
  }
}

void DivergenceGuard::accepted(const schemes::AcceptedPoint& point) {
  const std::size_t n = std::min(point.u.size(), bound_.size());
  for (std::size_t i = 0; i < n; ++i) {
    const double v = point.u[i];
    if (std::isfinite(v) && std::abs(v) <= bound_[i]) continue;
    const std::string what = std::isfinite(v)
                                 ? fmt::format(
                                       "grew to {:.3e}, beyond {:.1e} (1e10 times its initial "
                                       "magnitude or its atol_u/rtol)",
                                       v, bound_[i])
                                 : fmt::format("became {}", v);
    throw Diverged(fmt::format(
        "the co-simulation diverges: coupling variable {} {} at t = {} (macro step {}, H = "
        "{:.3e}). "
        "The rows up to this point are in the result. If the model itself is stable, the "
        "coupling is not at this step size: take a smaller fixed H or a tighter rtol, or the "
        "implicit scheme{}; check also the sign of every law and gain that feeds {} (a "
        "feedback of the wrong sign grows like this)",
        system_.coupling_name(i), what, point.time, point.step, point.h,
        scheme_ == "explicit" || scheme_ == "gauss-seidel" ? " (--scheme implicit)" : "",
        system_.coupling_name(i)));
  }
}

}  // namespace macrostep::run

// Options of the iterative schemes (corrector_options.hpp; METHODS.md §4, §9).
#include "macrostep/corrector/corrector_options.hpp"

#include <cmath>
#include <stdexcept>

#include "macrostep/corrector/jacobian_registry.hpp"

namespace macrostep::corrector {

void CorrectorOptions::validate() const {
  if (!(tau > 0.0) || !std::isfinite(tau)) throw std::invalid_argument("tau must be > 0");
  if (max_passes < 1) throw std::invalid_argument("max_corrector_passes must be >= 1");
  if (!(divergence > 0.0 && divergence < 1.0)) {
    throw std::invalid_argument("divergence threshold must be in (0, 1)");
  }
  if (!(perturbation_min > 0.0) || !std::isfinite(perturbation_min)) {
    throw std::invalid_argument("perturbation_min must be > 0");
  }
  if (!(omega > 0.0 && omega < 1.0)) throw std::invalid_argument("omega must be in (0, 1)");
  if (!(reuse_rate > 0.0 && reuse_rate < 1.0)) {
    throw std::invalid_argument("reuse_rate must be in (0, 1)");
  }
  if (!(reuse_step_ratio >= 1.0) || !std::isfinite(reuse_step_ratio)) {
    throw std::invalid_argument("reuse_step_ratio must be >= 1");
  }
  if (quasi_newton_reuse < 1) throw std::invalid_argument("quasi_newton_reuse must be >= 1");
  if (JacobianRegistry::instance().find(jacobian) == nullptr) {
    throw std::invalid_argument(
        "jacobian must be one of " +
        JacobianRegistry::instance().names_where([](const JacobianTraits&) { return true; }));
  }
}

const char* iteration_name(IterationKind k) {
  return model::name_of(kIterationNames, k);
}

const char* jacobian_name(JacobianKind k) {
  return model::name_of(kJacobianNames, k);
}

std::optional<IterationKind> parse_iteration(std::string_view name) {
  return model::parse_name(kIterationNames, name);
}

std::optional<JacobianKind> parse_jacobian(std::string_view name) {
  return model::parse_name(kJacobianNames, name);
}

}  // namespace macrostep::corrector

// The one place that maps scheme options to a scheme (pipeline.hpp make_scheme).
#include "macrostep/schemes/adaptive.hpp"
#include "macrostep/schemes/explicit_jacobi.hpp"
#include "macrostep/schemes/gauss_seidel.hpp"
#include "macrostep/schemes/implicit.hpp"
#include "macrostep/schemes/pipeline.hpp"

namespace macrostep::schemes {

std::unique_ptr<MacroStepScheme> make_scheme(const SchemeOptions& options) {
  if (options.gauss_seidel) return std::make_unique<GaussSeidel>();
  if (options.adaptive) {
    if (!options.corrector) throw std::invalid_argument("scheme auto: no corrector options");
    return std::make_unique<AdaptiveScheme>(*options.corrector);
  }
  if (!options.corrector) return std::make_unique<ExplicitJacobi>();
  return std::make_unique<IterativeScheme>(*options.corrector);
}

}  // namespace macrostep::schemes

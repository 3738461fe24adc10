#include "stability_check.hpp"

#include <fmt/format.h>

#include <stdexcept>
#include <variant>
#include <vector>

#include "macrostep/analysis/coupled_stability.hpp"
#include "macrostep/library/model_description.hpp"

namespace macrostep::run {

std::optional<std::string> fixed_step_warning(const config::RunConfig& config,
                                              const CosimSettings& settings,
                                              const system::CoupledSystem& system) {
  const config::CosimConfig& c = settings.cosim;
  if (!c.fixed_step()) return std::nullopt;
  analysis::CoupledMethod method;
  method.scheme = c.iterative() ? analysis::CoupledScheme::kImplicit
                  : c.scheme == config::CosimScheme::kGaussSeidel
                      ? analysis::CoupledScheme::kGaussSeidel
                      : analysis::CoupledScheme::kExplicit;
  method.sequence = c.sequence;
  method.approximation = c.approximation;
  method.order = settings.scheme.control.kappa_fixed;
  const double h = settings.scheme.control.h;
  std::vector<std::string> names;
  for (const auto& sub : config.system_description->subsystems) {
    // A user's model runs in the master only under the run's guards (unexpected_end.hpp), which
    // do not exist yet: plugins and FMUs are not linearised here.
    if (std::holds_alternative<plugin::PluginDescription>(sub.model) ||
        std::holds_alternative<fmu::FmuDescription>(sub.model)) {
      return std::nullopt;
    }
    names.push_back(sub.name);
  }
  try {
    const analysis::LinearCoupledSystem lin = analysis::linearise(system, names);
    const double rho = analysis::spectral_radius(analysis::coupled_recurrence(lin, method, h).m);
    if (rho <= 1.0 + analysis::kWeakGrowth) return std::nullopt;
    const double w = analysis::fastest_frequency(lin);
    std::string edge = "the band from small H is empty";
    if (w > 0.0 && 0.01 / w < h) {
      const auto points = analysis::coupled_scan(lin, method, 0.01 / w, h, 40, w);
      const analysis::StableBand band = analysis::coupled_stable_band(lin, method, points);
      if (band.edge_h)
        edge = fmt::format("the band from small H ends at H = {:.4g} s", *band.edge_h);
    }
    return fmt::format(
        "warning: the fixed step H = {:.4g} s lies outside the stable band of the system "
        "linearised at t0: the spectral radius of a macro step is {:.6g} > 1 ({}), so the run "
        "may diverge; take a smaller H{} (`macrostep stability {}` shows the scan)",
        h, rho, edge,
        method.scheme != analysis::CoupledScheme::kImplicit ? " or the implicit scheme" : "",
        config.path);
  } catch (const std::exception&) {  // not linearisable here: not checked
    return std::nullopt;
  }
}

}  // namespace macrostep::run

#include "stability_check.hpp"

#include <fmt/format.h>

#include <stdexcept>
#include <variant>
#include <vector>

#include "macrostep/analysis/coupled_stability.hpp"
#include "macrostep/library/model_description.hpp"

namespace macrostep::run {

namespace {

// The subsystems' names for the linearisation; nullopt if a user's model is among them: it runs
// in the master only under the run's guards (unexpected_end.hpp), which do not exist before the
// run or after it failed, so plugins and FMUs are not linearised here.
std::optional<std::vector<std::string>> linearisable_names(const config::RunConfig& config) {
  std::vector<std::string> names;
  if (!config.system_description) return std::nullopt;
  for (const auto& sub : config.system_description->subsystems) {
    if (std::holds_alternative<plugin::PluginDescription>(sub.model) ||
        std::holds_alternative<fmu::FmuDescription>(sub.model)) {
      return std::nullopt;
    }
    names.push_back(sub.name);
  }
  return names;
}

}  // namespace

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
  method.end_value = c.gauss_seidel == config::GaussSeidelEndValue::kSequential
                         ? analysis::GaussSeidelEndValue::kSequential
                         : analysis::GaussSeidelEndValue::kConverged;
  method.approximation = c.approximation;
  method.order = settings.scheme.control.kappa_fixed;
  const double h = settings.scheme.control.h;
  const auto names = linearisable_names(config);
  if (!names) return std::nullopt;
  try {
    const analysis::LinearCoupledSystem lin = analysis::linearise(system, *names);
    const analysis::MacroStepGrowth growth = analysis::macro_step_growth(lin, method, h);
    if (growth.relative() <= 1.0 + analysis::kWeakGrowth) return std::nullopt;
    const double rho = growth.rho, own = growth.own;
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
        "linearised at t0: the spectral radius of a macro step is {:.6g} > 1{} ({}), so the run "
        "may diverge; take a smaller H{} (`macrostep stability {}` shows the scan)",
        h, rho,
        own > 1.0 + analysis::kWeakGrowth
            ? fmt::format(", above the system's own growth of {:.6g} over H", own)
            : "",
        edge, method.scheme != analysis::CoupledScheme::kImplicit ? " or the implicit scheme" : "",
        config.path);
  } catch (const std::exception&) {  // not linearisable here: not checked
    return std::nullopt;
  }
}

std::optional<std::string> explicit_stability_limit(const config::RunConfig& config,
                                                    const CosimSettings& settings,
                                                    const system::CoupledSystem& system) {
  const config::CosimConfig& c = settings.cosim;
  if (c.scheme != config::CosimScheme::kExplicit) return std::nullopt;
  const auto names = linearisable_names(config);
  if (!names) return std::nullopt;
  const double h_init = settings.scheme.control.h;
  analysis::CoupledMethod method;
  method.scheme = analysis::CoupledScheme::kExplicit;
  method.approximation = c.approximation;
  method.order = 0;
  try {
    const analysis::LinearCoupledSystem lin = analysis::linearise(system, *names);
    const double w = analysis::fastest_frequency(lin);
    if (!(w > 0.0) || !(0.01 / w < h_init)) return std::nullopt;
    const auto points = analysis::coupled_scan(lin, method, 0.01 / w, h_init, 40, w);
    const analysis::StableBand band = analysis::coupled_stable_band(lin, method, points);
    // A limit within a factor 10 of H_init is one the controller can find on its own: then the
    // failure has another cause.
    if (band.edge_h && *band.edge_h > 0.1 * h_init) return std::nullopt;
    const std::string limit =
        band.edge_h ? fmt::format("only below H = {:.3g} s", *band.edge_h) : "at no H of the scan";
    const std::string steps = band.edge_h
                                  ? fmt::format(" ({:.3g} s would take about {:.1g} macro steps)",
                                                settings.end_time, settings.end_time / *band.edge_h)
                                  : std::string();
    return fmt::format(
        "the explicit scheme is stability-limited here: the coupled system linearised at t0 has "
        "a mode with time constant {:.3g} s (a stiff coupling), and explicit macro steps of "
        "degree 0 are stable {}, far below H_init = {:.3g} s{}; use --scheme implicit "
        "([cosim] scheme = \"implicit\")",
        1.0 / w, limit, h_init, steps);
  } catch (const std::exception&) {  // not linearisable: no diagnosis
    return std::nullopt;
  }
}

}  // namespace macrostep::run

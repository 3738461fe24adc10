// `macrostep stability` (stability_command.hpp).
#include "stability_command.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <vector>

#include "macrostep/analysis/coupled_stability.hpp"
#include "macrostep/analysis/dense.hpp"
#include "macrostep/analysis/stability.hpp"
#include "macrostep/config/run_config.hpp"
#include "macrostep/output/destinations.hpp"
#include "macrostep/system/system_description.hpp"
#include "python_tools.hpp"
#include "run_options.hpp"

namespace macrostep::app {

namespace {

namespace fs = std::filesystem;
using analysis::Method;
using analysis::TwoMass;

// The two-mass parameters of a configuration's [model] chain (METHODS §1.2): two masses, two
// subsystems, elements 1 and 3 to the walls, element 2 the coupling; the linear part of each
// element law (the analysis is linear; cubic terms are reported and left out).
TwoMass model_from_config(const config::RunConfig& config) {
  const library::ChainParameters p = config::realize_chain(config);
  if (p.size() != 2 || config.partition.subsystems() != 2) {
    throw config::error_at(config, config.partition.line, "model.masses",
                           fmt::format("the stability analysis needs the two-mass model: 2 "
                                       "masses in 2 subsystems (got {} in {})",
                                       p.size(), config.partition.subsystems()));
  }
  TwoMass m;
  m.m1 = p.mass[0];
  m.m2 = p.mass[1];
  m.c1 = p.element[0].c;
  m.cc = p.element[1].c;
  m.c2 = p.element[2].c;
  m.d1 = p.element[0].d;
  m.dc = p.element[1].d;
  m.d2 = p.element[2].d;
  for (const auto& e : p.element) {
    if (e.C != 0.0 || e.D != 0.0) {
      fmt::print("note: the nonlinear element terms C, D are left out (linear analysis)\n");
      break;
    }
  }
  return m;
}

// Gauss–Seidel's end value: --gauss-seidel, else the configuration's cosim.gauss_seidel (given
// with scheme = "gauss-seidel" only), else converged. Throws std::invalid_argument for another
// name, or for --gauss-seidel with a scheme other than Gauss–Seidel.
analysis::GaussSeidelEndValue end_value(const StabilityArgs& a, const config::RunConfig* config,
                                        bool gauss_seidel) {
  config::GaussSeidelEndValue e =
      config != nullptr ? config->cosim.gauss_seidel : config::GaussSeidelEndValue::kConverged;
  if (!a.gauss_seidel.empty()) {
    const auto parsed = config::parse_gauss_seidel_end_value(a.gauss_seidel);
    if (!parsed) {
      throw std::invalid_argument(
          fmt::format("--gauss-seidel {}: allowed: {}", a.gauss_seidel,
                      fmt::join(config::gauss_seidel_end_value_names(), ", ")));
    }
    if (!gauss_seidel) {
      throw std::invalid_argument("--gauss-seidel applies only to --scheme gauss-seidel");
    }
    e = *parsed;
  }
  return e == config::GaussSeidelEndValue::kSequential ? analysis::GaussSeidelEndValue::kSequential
                                                       : analysis::GaussSeidelEndValue::kConverged;
}

// Model and method of the two-mass path: the configuration's values (if any), then the options
// over them.
void resolve(const StabilityArgs& a, const config::RunConfig* config, TwoMass& model,
             Method& method) {
  method.decomposition = analysis::parse_decomposition(a.decomposition);
  // Without --scheme the configuration's: Gauss–Seidel if it runs Gauss–Seidel, else Jacobi
  // (the two-mass recurrence has no iterative scheme), so that the scan is the run's.
  const bool file_gs =
      config != nullptr && config->cosim.scheme == config::CosimScheme::kGaussSeidel;
  method.scheme = analysis::parse_scheme(!a.scheme.empty() ? a.scheme
                                         : file_gs         ? "gauss-seidel"
                                                           : "jacobi");
  method.end_value = end_value(a, config, method.scheme == analysis::Scheme::kGaussSeidel);
  if (config != nullptr) {
    model = model_from_config(*config);
    method.approximation = config->cosim.approximation;
    const config::OrderSetting o = config->cosim.effective_order();
    if (!o.automatic) method.order = o.kappa;
  }
  if (!a.approximation.empty())
    method.approximation = polynomials::parse_approximation(a.approximation);
  if (a.order) method.order = *a.order;
  const auto set = [](const std::optional<double>& v, double& out) {
    if (v) out = *v;
  };
  set(a.m1, model.m1);
  set(a.m2, model.m2);
  set(a.c1, model.c1);
  set(a.c2, model.c2);
  set(a.cc, model.cc);
  set(a.d1, model.d1);
  set(a.d2, model.d2);
  set(a.dc, model.dc);
  if (!(model.m1 > 0 && model.m2 > 0 && model.c1 > 0)) {
    throw std::invalid_argument("the masses and c1 must be > 0 (ω̂ = H·sqrt(c1/m1))");
  }
}

// The H range: --h-min/--h-max, or --omega-min/--omega-max (ω̂ = H·w: w = sqrt(c1/m1) for the
// two-mass model, the fastest frequency of a described system), default ω̂ ∈ [0.01, 4].
std::pair<double, double> h_range(const StabilityArgs& a, double w) {
  if ((a.h_min || a.h_max) && (a.omega_min || a.omega_max)) {
    throw std::invalid_argument("give the range as --h-min/--h-max or --omega-min/--omega-max");
  }
  if (!(w > 0.0) && !(a.h_min && a.h_max)) {
    throw std::invalid_argument(
        "the linearised system has no dynamics to scale omega_hat by; give --h-min and --h-max");
  }
  double lo = a.h_min.value_or(a.omega_min.value_or(0.01) / w);
  double hi = a.h_max.value_or(a.omega_max.value_or(4.0) / w);
  if (!(lo > 0.0 && hi > lo)) throw std::invalid_argument("the range needs 0 < min < max");
  if (a.points < 2 || a.points > 100000) {
    throw std::invalid_argument("--points must be 2..100000");
  }
  return {lo, hi};
}

// " (sequential)" or " (converged)" after a Gauss–Seidel scheme's name, else nothing.
std::string end_value_note(bool gauss_seidel, analysis::GaussSeidelEndValue e) {
  if (!gauss_seidel) return {};
  return e == analysis::GaussSeidelEndValue::kSequential ? " (sequential)" : " (converged)";
}

std::string title(const TwoMass& m, const Method& method) {
  return fmt::format(
      "{} {}{}, {} (order {}); m = {:g}, {:g}; c1 = {:g}, cc = {:g}, c2 = {:g}; d1 = {:g}, dc = "
      "{:g}, d2 = {:g}",
      analysis::decomposition_name(method.decomposition), analysis::scheme_name(method.scheme),
      end_value_note(method.scheme == analysis::Scheme::kGaussSeidel, method.end_value),
      method.approximation.name, method.order, m.m1, m.m2, m.c1, m.cc, m.c2, m.d1, m.dc, m.d2);
}

void write_csv(const std::string& path, const std::vector<analysis::ScanPoint>& points) {
  std::ofstream out(path);
  out << "h,omega_hat,rho,stable\n";
  for (const auto& p : points) {
    out << fmt::format("{:.17g},{:.17g},{:.17g},{}\n", p.h, p.omega_hat, p.rho, p.stable() ? 1 : 0);
  }
  if (!out) throw std::runtime_error("cannot write " + path);
}

// /usr/bin/python3 stability_plot.py CSV PNG TITLE OMEGA_MAX (python_tools.hpp finds the
// script); true on success.
// OMEGA_MAX is "none" when no stable step was found.
bool plot(const std::string& csv, const std::string& png, const std::string& heading,
          const std::string& omega_max) {
  const std::string dir = tools_dir("stability_plot.py");
  if (dir.empty()) return false;
  return run_python(dir + "/stability_plot.py", {csv, png, heading, omega_max}) == 0;
}

}  // namespace

void add_stability_options(CLI::App& cmd, StabilityArgs& a) {
  cmd.add_option(
      "CONFIG", a.config,
      "a run configuration: the two-mass chain, or any described system (linearised at t0)");
  cmd.add_option("--config", a.config, "the same as CONFIG");
  add_set_option(cmd, a.sets);
  cmd.add_option("--decomposition", a.decomposition, "ff (default) | fd | dd (METHODS §1.2)");
  cmd.add_option("--scheme", a.scheme,
                 "jacobi | gauss-seidel (two-mass); explicit | gauss-seidel | implicit "
                 "(described); default: the configuration's, else jacobi");
  cmd.add_option("--gauss-seidel", a.gauss_seidel,
                 "converged (default) | sequential: Gauss-Seidel's end value of a force that "
                 "reads the later subsystem itself (docs/guide/schemes.md)");
  cmd.add_option("--approximation", a.approximation,
                 "lagrange (default) | c0 | c1 | a seed-003 set (const-2-3-opt, lin-2-3:p=P, ...)");
  cmd.add_option("--order", a.order, "degree: kappa (Lagrange, Gauss-Seidel), k (C0/C1); 2");
  for (auto [name, value] : {std::pair{"--m1", &a.m1},
                             {"--m2", &a.m2},
                             {"--c1", &a.c1},
                             {"--c2", &a.c2},
                             {"--cc", &a.cc},
                             {"--d1", &a.d1},
                             {"--d2", &a.d2},
                             {"--dc", &a.dc}}) {
    cmd.add_option(name, *value, "two-mass parameter (default 1, dampers 0, or the config's)");
  }
  cmd.add_option("--h-min", a.h_min, "smallest macro step [s]");
  cmd.add_option("--h-max", a.h_max, "largest macro step [s]");
  cmd.add_option("--omega-min", a.omega_min, "smallest omega_hat = H sqrt(c1/m1) (0.01)");
  cmd.add_option("--omega-max", a.omega_max, "largest omega_hat (4)");
  cmd.add_option("--points", a.points, "log-spaced grid points (100)");
  cmd.add_option("--csv", a.csv, "also write the scan as CSV (h, omega_hat, rho, stable)");
  cmd.add_option("--plot", a.plot, "PNG file (default <config stem>.stability.png)");
  cmd.add_flag("--no-plot", a.no_plot, "no PNG");
}

// The band of stable H from the scan's smallest H (what a fixed-H run should stay in), weak
// growth, and gaps above the band.
void print_band(const analysis::StableBand& band, double omega1, double scan_end) {
  const auto at = [omega1, scan_end](double h) {
    return fmt::format("H = {:.6e} s (omega_hat {:.6g}){}", h, h * omega1,
                       h >= scan_end ? ", the end of the scan: widen it" : "");
  };
  if (band.edge_h) {
    fmt::print("stable band from the smallest H: up to {}\n", at(*band.edge_h));
  } else {
    fmt::print("no stable band at small H: rho - 1 = {:.3g} at the smallest H of the scan\n",
               band.first_rho - 1.0);
  }
  if (band.weak_growth) {
    fmt::print(
        "with weak growth counted as stable (rho - 1 <= {:g}, a doubling in more than {:.2g} macro "
        "steps; METHODS D-38): up to {}\n",
        analysis::kWeakGrowth, std::log(2.0) / std::log1p(analysis::kWeakGrowth),
        at(*band.weak_edge_h));
  }
  if (band.gaps) {
    fmt::print(
        "warning: the stable set has gaps: above the band rho reaches {:.4g}, and it is stable "
        "again further up (largest stable H below); a fixed H belongs inside the band\n",
        band.gap_rho);
  }
}

namespace {

// One scan and what the report says about it.
struct Scan {
  std::vector<analysis::ScanPoint> points;
  analysis::StableBand band;
  std::string heading;  // the line under the report's first line and the plot's title
  std::string what;     // "the two-mass recurrence, exact subsystems", ...
  double omega_ref = 1.0;
  // The largest real part of the monolithic linearisation's eigenvalues where it is positive (the
  // system grows by itself; the spectral radii are then counted against that growth), else 0.
  double own_growth_rate = 0.0;
};

Scan two_mass_scan(const StabilityArgs& a, const config::RunConfig* config) {
  TwoMass model;
  Method method;
  resolve(a, config, model, method);
  const auto [lo, hi] = h_range(a, model.omega1());
  Scan s;
  s.points = analysis::scan(model, method, lo, hi, a.points);
  s.band = analysis::stable_band(model, method, s.points);
  s.heading = title(model, method);
  s.what = "the two-mass recurrence, exact subsystems";
  s.omega_ref = model.omega1();
  return s;
}

std::string scheme_heading(const analysis::CoupledMethod& m) {
  switch (m.scheme) {
    case analysis::CoupledScheme::kImplicit:
      return "implicit (converged corrector)";
    case analysis::CoupledScheme::kGaussSeidel:
      if (m.sequence.empty()) {
        return std::string("Gauss-Seidel in index order").append(end_value_note(true, m.end_value));
      }
      {
        std::vector<std::size_t> one_based;
        for (const std::size_t i : m.sequence) one_based.push_back(i + 1);
        return fmt::format("Gauss-Seidel in the sequence {}{}", fmt::join(one_based, ", "),
                           end_value_note(true, m.end_value));
      }
    case analysis::CoupledScheme::kExplicit:
      break;
  }
  return "explicit Jacobi";
}

// Any described system: linearised at t0, the configuration's scheme (explicit, Gauss-Seidel in
// its sequence, or implicit with a converged corrector), approximation and order, options over
// them.
Scan described_scan(const StabilityArgs& a, const config::RunConfig& config) {
  for (const auto* given : {&a.m1, &a.m2, &a.c1, &a.c2, &a.cc, &a.d1, &a.d2, &a.dc}) {
    if (*given) throw std::invalid_argument("--m1 ... --dc set the two-mass model's parameters");
  }
  if (a.decomposition != "ff") {
    throw std::invalid_argument("--decomposition belongs to the two-mass model");
  }
  analysis::CoupledMethod method;
  const std::string scheme =
      !a.scheme.empty() ? a.scheme
      : config.cosim.iterative()
          ? "implicit"
          : (config.cosim.scheme == config::CosimScheme::kGaussSeidel ? "gauss-seidel"
                                                                      : "explicit");
  if (scheme == "implicit") {
    method.scheme = analysis::CoupledScheme::kImplicit;
  } else if (scheme == "gauss-seidel") {
    method.scheme = analysis::CoupledScheme::kGaussSeidel;
    method.sequence = config.cosim.sequence;
  } else if (scheme != "explicit" && scheme != "jacobi") {
    throw std::invalid_argument(fmt::format(
        "--scheme {}: a described system is analysed for explicit (Jacobi), gauss-seidel and "
        "implicit steps",
        scheme));
  }
  method.end_value = end_value(a, &config, method.scheme == analysis::CoupledScheme::kGaussSeidel);
  method.approximation = config.cosim.approximation;
  const config::OrderSetting o = config.cosim.effective_order();
  if (!o.automatic) method.order = o.kappa;
  if (!a.approximation.empty())
    method.approximation = polynomials::parse_approximation(a.approximation);
  if (a.order) method.order = *a.order;
  const system::SystemDescription& d = *config.system_description;
  std::vector<std::string> names;
  for (const auto& sub : d.subsystems) names.push_back(sub.name);
  const system::CoupledSystem coupled = system::build_system(d);
  const analysis::LinearCoupledSystem lin = analysis::linearise(coupled, names);
  Scan s;
  s.omega_ref = analysis::fastest_frequency(lin);
  const auto [lo, hi] = h_range(a, s.omega_ref);
  s.points = analysis::coupled_scan(lin, method, lo, hi, a.points, s.omega_ref);
  s.band = analysis::coupled_stable_band(lin, method, s.points);
  s.heading = fmt::format(
      "{}, {} (order {}); {} subsystems, {} states, {} coupling variables; fastest frequency "
      "{:.6g} 1/s (omega_hat = H x it)",
      scheme_heading(method), method.approximation.name, method.order, coupled.subsystem_count(),
      lin.states(), lin.couplings(), s.omega_ref);
  s.what = "the linearised co-simulation at t0, exact subsystems";
  if (lin.states() > 0) {
    for (const auto& lambda : analysis::eigenvalues(lin.monolithic())) {
      s.own_growth_rate = std::max(s.own_growth_rate, lambda.real());
    }
  }
  return s;
}

// Whether the configuration is the two-mass chain of the seeds' stability studies.
bool two_mass_chain(const config::RunConfig& config) {
  const auto& d = config.system_description;
  return d && d->chain && d->chain->masses() == 2 && d->subsystems.size() == 2;
}

}  // namespace

int stability_command(const StabilityArgs& a) {
  const std::string stem = a.config.empty() ? "stability" : fs::path(a.config).stem().string();
  const std::string png = a.no_plot          ? std::string()
                          : !a.plot.empty()  ? a.plot
                          : a.config.empty() ? std::string("stability.png")
                                             : stem + ".stability.png";
  if (a.config.empty() && !a.sets.empty()) {
    throw std::invalid_argument("--set edits a configuration: give CONFIG");
  }
  std::optional<config::RunConfig> config;
  if (!a.config.empty()) config = config::load_config(a.config, a.sets);
  try {  // the files it writes, checked before the scan (output/destinations.hpp)
    output::Destinations files(config ? config::input_files(*config)
                                      : std::vector<output::Destination>{});
    if (!png.empty()) files.add("the plot", png);
    if (!a.csv.empty()) files.add("the scan CSV", a.csv);
  } catch (const output::OutputError& e) {
    throw std::invalid_argument(e.what());
  }
  const Scan scan = !config || two_mass_chain(*config)
                        ? two_mass_scan(a, config ? &*config : nullptr)
                        : described_scan(a, *config);
  const auto& points = scan.points;
  fmt::print("stability of {}: {}\n", scan.what, scan.heading);
  if (scan.own_growth_rate > 0.0) {
    fmt::print(
        "the system grows by itself (largest real part of its eigenvalues {:.6g} 1/s): the "
        "spectral radius below is a macro step's divided by that growth over H, "
        "e^(H x {:.6g}), so that 1 is the monolithic system's own growth\n",
        scan.own_growth_rate, scan.own_growth_rate);
  }
  fmt::print("{:>14}  {:>10}  {:>18}  {}\n", "H [s]", "omega_hat", "spectral radius", "stable");
  for (const auto& p : points) {
    fmt::print("{:>14.6e}  {:>10.5f}  {:>18.12f}  {}\n", p.h, p.omega_hat, p.rho,
               p.stable() ? "yes" : "no");
  }
  print_band(scan.band, scan.omega_ref, points.back().h);
  if (const auto h_max = scan.band.largest_h) {
    fmt::print("largest stable H: {:.6e} s (omega_hat {:.6g}){}\n", *h_max, *h_max * scan.omega_ref,
               *h_max >= points.back().h ? ", the end of the scan: widen it" : "");
  } else {
    fmt::print("unstable at every H of the scan (rho > 1 + {:g})\n", analysis::kStabilityTolerance);
  }
  const std::string csv =
      a.csv.empty()
          ? (fs::temp_directory_path() / fmt::format("macrostep-stability-{}.csv", ::getpid()))
                .string()
          : a.csv;
  write_csv(csv, points);
  int status = 0;
  if (!png.empty()) {
    // Formatted here rather than passed as an optional: GCC's -O3 unity build reports the
    // optional's payload as maybe-uninitialized behind the has-value check.
    const std::optional<double> edge = scan.band.edge_h ? scan.band.edge_h : scan.band.weak_edge_h;
    const std::string omega_max =
        edge ? fmt::format("{:.17g}", *edge * scan.omega_ref) : std::string("none");
    if (plot(csv, png, scan.heading, omega_max)) {
      fmt::print("plot: {}\n", png);
    } else {
      fmt::print(stderr,
                 "macrostep stability: the plot failed (/usr/bin/python3 with matplotlib, "
                 "stability_plot.py in the installed share/macrostep/ or the source tree's "
                 "tools/, or $MACROSTEP_TOOLS_DIR)\n");
      status = 1;
    }
  }
  if (a.csv.empty()) fs::remove(csv);
  return status;
}

}  // namespace macrostep::app

// The settings and the exact solution of the local-error analysis (exact_history.hpp).
#include "exact_history.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>
#include <stdexcept>
#include <utility>

#include "checked_system.hpp"
#include "macrostep/output/csv.hpp"
#include "macrostep/run/monolithic.hpp"
#include "macrostep/system/system_description.hpp"
#include "result_table.hpp"

namespace macrostep::run {

namespace {

// The approximations' names, each once ("lagrange" when none is set).
std::string approximations_in_effect(const schemes::SchemeOptions& s) {
  std::vector<std::string> names;
  for (const auto& a : s.approximations)
    if (std::find(names.begin(), names.end(), a.name) == names.end()) names.push_back(a.name);
  return names.empty() ? "lagrange" : fmt::format("{}", fmt::join(names, "/"));
}

// The past samples p of the step's approximation: Lagrange of degree κ reads κ+1 points, C0/C1
// of degree k read k+2 (seed 001 Eq. 12a), a seed-003 set its K, the least-squares predictor N_sp.
int past_samples(const schemes::SchemeOptions& s, int kappa) {
  int p = kappa + 1;
  for (const polynomials::Approximation& a : s.approximations) {
    if (a.kind == polynomials::ApproximationKind::kC0 ||
        a.kind == polynomials::ApproximationKind::kC1) {
      p = std::max(p, kappa + 2);
    } else if (!a.is_lagrange()) {
      p = std::max(p, a.weights.points);
    }
  }
  if (s.least_squares) p = std::max(p, s.least_squares_points);
  return p;
}

void check_local_error_options(const LocalErrorOptions& o) {
  if (o.step_sizes.size() < 2) {
    throw SetupError("--step-sizes: at least two macro-step sizes (a slope needs two points)");
  }
  for (std::size_t k = 0; k < o.step_sizes.size(); ++k) {
    const double h = o.step_sizes[k];
    if (!(h > 0.0) || !std::isfinite(h)) {
      throw SetupError(fmt::format("--step-sizes: every H must be > 0 (got {})", h));
    }
    const auto before = o.step_sizes.begin() + static_cast<std::ptrdiff_t>(k);
    if (std::find(o.step_sizes.begin(), before, h) != before) {
      throw SetupError(fmt::format("--step-sizes: {} is given twice", h));
    }
  }
  if (o.at.empty()) throw SetupError("--at: at least one start time T");
  for (const double t : o.at) {
    if (!(t > 0.0) || !std::isfinite(t)) {
      throw SetupError(fmt::format("--at: every start time T must be > 0 (got {})", t));
    }
  }
  if (!(o.tolerance > 0.0 && o.tolerance < 1e-3)) {
    throw SetupError(fmt::format("--tolerance must be in (0, 1e-3) (got {})", o.tolerance));
  }
}

// A temporary directory, removed with everything in it when this goes.
class TemporaryDirectory {
 public:
  TemporaryDirectory() {
    std::string pattern = (std::filesystem::temp_directory_path() / "macrostep-local-error-XXXXXX");
    if (::mkdtemp(pattern.data()) == nullptr) {
      throw std::runtime_error(
          "local error: cannot create a temporary directory for the reference");
    }
    path_ = pattern;
  }
  ~TemporaryDirectory() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TemporaryDirectory(const TemporaryDirectory&) = delete;
  TemporaryDirectory& operator=(const TemporaryDirectory&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace

LocalErrorSetup local_error_setup(const config::RunConfig& config,
                                  const LocalErrorOptions& options) {
  check_local_error_options(options);
  CosimOptions co = options.cosim;
  co.estimator = control::Estimator::kNone;
  co.step_size = options.step_sizes.front();
  co.executor = config::ExecutorKind::kInProcess;
  co.threads = 1;
  co.stop_time = *std::max_element(options.at.begin(), options.at.end()) +
                 *std::max_element(options.step_sizes.begin(), options.step_sizes.end());
  LocalErrorSetup s;
  s.settings = resolve_cosim(config, co);
  const config::CosimScheme scheme = s.settings.cosim.scheme;
  if (scheme != config::CosimScheme::kExplicit && scheme != config::CosimScheme::kGaussSeidel) {
    throw SetupError(
        fmt::format("local-error measures the explicit schemes (explicit, "
                    "gauss-seidel), not {}",
                    config::to_string(scheme)));
  }
  if (s.settings.cosim.effective_order().automatic) {
    throw SetupError("local-error needs a fixed degree: --order K (or [cosim] order = K)");
  }
  s.system.emplace(checked_system(config, s.settings, s.models, s.options));
  s.options.control.tolerances = control::ErrorTolerances::for_rtol(options.tolerance);
  s.samples = past_samples(s.options, s.options.control.kappa_fixed);
  s.approximation = approximations_in_effect(s.options);
  for (const double h : options.step_sizes) {
    for (const double t : options.at) {
      if (past_time(t, h, s.samples - 1) < 0.0) {
        throw SetupError(fmt::format(
            "--at {:g}: the {} past samples T - {}H .. T need T >= {:g} s for H = {:g} s (the "
            "reference starts at 0)",
            t, s.samples, s.samples - 1, (s.samples - 1) * h, h));
      }
    }
  }
  return s;
}

ExactHistory::ExactHistory(const config::RunConfig& config, const system::CoupledSystem& system,
                           const LocalErrorOptions& options, int samples)
    : system_(system) {
  std::set<double> times;
  for (const double h : options.step_sizes) {
    for (const double t : options.at) {
      for (int j = 0; j < samples; ++j) times.insert(past_time(t, h, j));
      times.insert(t + h);
    }
  }
  times.erase(0.0);  // the reference writes t = 0 anyway
  config::RunConfig tight = config;
  tight.solver.rtol = options.tolerance;
  tight.solver.atol_pos = 1e-3 * options.tolerance;
  tight.solver.atol_vel = options.tolerance;
  const TemporaryDirectory dir;
  MonolithicOptions mo;
  mo.times.assign(times.begin(), times.end());
  mo.output_file = dir.path() + "/reference.csv";
  mo.all_states = true;
  mo.progress = MonolithicOptions::Progress::kNever;
  const MonolithicResult reference = run_monolithic(tight, mo);
  read(config, reference.csv_path);
  index_variables(config);
}

void ExactHistory::read(const config::RunConfig& config, const std::string& csv) {
  const output::CsvTable table = output::read_csv(csv);
  std::vector<std::string> columns;
  std::vector<std::size_t> offset;
  result_columns(config, system_, output_columns(config, system_), true, columns, offset);
  std::vector<std::size_t> where;
  for (const std::string& c : columns) {
    const auto k = table.column_index(c);
    if (!k) throw std::runtime_error("local error: the reference has no column " + c);
    where.push_back(*k);
  }
  const std::size_t ns = system_.subsystem_count();
  for (std::size_t r = 0; r < table.rows(); ++r) {
    ExactPoint p;
    for (std::size_t i = 0; i < ns; ++i) {
      p.z.emplace_back();
      for (std::size_t k = offset[i]; k < offset[i + 1]; ++k)
        p.z.back().push_back(table.values[where[k]][r]);
    }
    for (std::size_t c = 0; c < system_.coupling_count(); ++c)
      p.u.push_back(table.values[where[offset[ns] + c]][r]);
    std::vector<double> inputs;
    for (std::size_t i = 0; i < ns; ++i) {
      const model::Subsystem& s = system_.subsystem(i);
      inputs.assign(s.input_size(), 0.0);
      system_.gather_inputs(i, p.u, inputs);
      p.y.emplace_back(s.output_size());
      s.outputs(table.time[r], p.z[i], inputs, p.y.back());
    }
    times_.push_back(table.time[r]);
    points_.push_back(std::move(p));
  }
}

ExactPoint ExactHistory::at(double t) const {
  for (std::size_t r = 0; r < times_.size(); ++r) {
    if (std::abs(times_[r] - t) <= 1e-12 * std::max(1.0, std::abs(t))) return points_[r];
  }
  throw std::out_of_range(fmt::format("local error: no reference row at t = {}", t));
}

void ExactHistory::index_variables(const config::RunConfig& config) {
  const system::SystemDescription& d = *config.system_description;
  const auto largest = [this](auto get) {
    double m = 0.0;
    for (const ExactPoint& p : points_) m = std::max(m, std::abs(get(p)));
    return m;
  };
  for (std::size_t i = 0; i < system_.subsystem_count(); ++i) {
    const model::Subsystem& s = system_.subsystem(i);
    const auto roles = s.state_roles();
    for (std::size_t k = 0; k < s.state_size(); ++k) {
      const std::size_t group = roles[k] == model::StateRole::kPosition   ? 0
                                : roles[k] == model::StateRole::kVelocity ? 1
                                                                          : 2;
      variables_.push_back({ErrorVariable::Kind::kState, i, k, group,
                            system::variable_name(d, i, s.state_name(k)),
                            largest([&](const ExactPoint& p) { return p.z[i][k]; })});
    }
  }
  std::set<std::pair<std::size_t, std::size_t>> read;  // the outputs the laws read
  for (std::size_t k = 0; k < system_.law_count(); ++k) {
    for (const system::OutputRef& r : system_.law(k).reads()) read.insert({r.subsystem, r.output});
  }
  for (const auto& entry : read) {
    const std::size_t i = entry.first, o = entry.second;  // (clang 14 cannot capture bindings)
    const std::string name = system::variable_name(d, i, system_.subsystem(i).output_name(o));
    variables_.push_back({ErrorVariable::Kind::kOutput, i, o, 3, name,
                          largest([&](const ExactPoint& p) { return p.y[i][o]; })});
  }
  for (std::size_t c = 0; c < system_.coupling_count(); ++c) {
    variables_.push_back({ErrorVariable::Kind::kCoupling, 0, c, kCouplingGroup,
                          system_.coupling_name(c),
                          largest([&](const ExactPoint& p) { return p.u[c]; })});
  }
}

}  // namespace macrostep::run

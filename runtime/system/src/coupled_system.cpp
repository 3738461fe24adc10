// METHODS.md §1.1, §1.4 (coupled system, consistent update D-1), §5 (monitored outputs).
#include "macrostep/system/coupled_system.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include <sundials/sundials_dense.h>

namespace macrostep::system {

namespace {

InputFeeds single(std::vector<std::vector<std::size_t>> input_couplings) {
  InputFeeds feeds(input_couplings.size());
  for (std::size_t i = 0; i < input_couplings.size(); ++i) {
    for (const std::size_t c : input_couplings[i]) feeds[i].push_back({c});
  }
  return feeds;
}

}  // namespace

CoupledSystem::CoupledSystem(std::vector<std::unique_ptr<model::Subsystem>> subsystems,
                             std::vector<std::unique_ptr<CouplingLaw>> laws,
                             std::vector<std::vector<std::size_t>> input_couplings,
                             std::vector<MonitoredOutput> monitored)
    : CoupledSystem(FeedsTag{}, std::move(subsystems), std::move(laws),
                    single(std::move(input_couplings)), std::move(monitored)) {}

CoupledSystem CoupledSystem::with_input_feeds(
    std::vector<std::unique_ptr<model::Subsystem>> subsystems,
    std::vector<std::unique_ptr<CouplingLaw>> laws, InputFeeds input_feeds,
    std::vector<MonitoredOutput> monitored) {
  return CoupledSystem(FeedsTag{}, std::move(subsystems), std::move(laws), std::move(input_feeds),
                       std::move(monitored));
}

CoupledSystem::CoupledSystem(FeedsTag, std::vector<std::unique_ptr<model::Subsystem>> subsystems,
                             std::vector<std::unique_ptr<CouplingLaw>> laws, InputFeeds input_feeds,
                             std::vector<MonitoredOutput> monitored)
    : subsystems_(std::move(subsystems)), laws_(std::move(laws)), monitored_(std::move(monitored)) {
  if (subsystems_.empty()) throw std::invalid_argument("CoupledSystem: no subsystems");
  index_laws();
  index_feeds(input_feeds);
  for (const auto& s : subsystems_) {
    feedthrough_ = feedthrough_ || s->has_feedthrough();
    evaluated_.push_back(s->has_feedthrough() && !s->outputs_affine_in_inputs() ? 1 : 0);
    evaluated_any_ = evaluated_any_ || evaluated_.back() != 0;
  }
  for (const auto& law : laws_) {
    bool reads = false;
    for (const OutputRef& r : law->reads()) {
      const auto& sub = *subsystems_[r.subsystem];
      reads = reads || (sub.has_feedthrough() && sub.output_feeds_through(r.output));
    }
    reads_feedthrough_.insert(reads_feedthrough_.end(), law->write_count(), reads ? 1 : 0);
  }
  if (feedthrough_ && constraints_) {
    // The consistent update (D-1) solves u − φ(y(u)) = 0 at every macro point; it has no rows
    // for multipliers.
    throw std::invalid_argument(
        "CoupledSystem: a constraint coupling (joint) together with feed-through subsystems is "
        "not supported; couple the feed-through subsystems by laws with φ");
  }
  index_monitored();
}

void CoupledSystem::check_output(const OutputRef& r, const std::string& what) const {
  if (r.subsystem >= subsystems_.size() || r.output >= subsystems_[r.subsystem]->output_size()) {
    throw std::invalid_argument("CoupledSystem: " + what + " refers to a missing output");
  }
}

// Global indices and names of the laws' coupling variables; their reads must exist.
void CoupledSystem::index_laws() {
  for (const auto& law : laws_) {
    if (!law) throw std::invalid_argument("CoupledSystem: a coupling law is missing (null)");
    const auto names = law->variable_names();
    const std::string what = names.empty() ? std::string("a coupling law") : names.front();
    if (law->has_feedthrough()) {
      throw std::invalid_argument("CoupledSystem: coupling law " + what +
                                  " has feed-through of its own (φ(y, u)), which the coupling-law "
                                  "interface cannot express; put the feed-through into a "
                                  "subsystem's outputs (the consistent update of D-1 solves it)");
    }
    for (const OutputRef& r : law->reads()) check_output(r, what);
    law_offsets_.push_back(coupling_names_.size());
    coupling_names_.insert(coupling_names_.end(), names.begin(), names.end());
    std::vector<std::string> read_units;
    for (const OutputRef& r : law->reads()) {
      read_units.push_back(subsystems_[r.subsystem]->output_unit(r.output));
    }
    std::vector<std::string> units = law->variable_units(read_units);
    units.resize(names.size());  // a law that says less: the rest ""
    coupling_units_.insert(coupling_units_.end(), units.begin(), units.end());
    std::vector<std::string> descriptions = law->variable_descriptions();
    descriptions.resize(names.size());
    coupling_descriptions_.insert(coupling_descriptions_.end(), descriptions.begin(),
                                  descriptions.end());
    constraint_.insert(constraint_.end(), names.size(), law->is_constraint() ? 1 : 0);
    constraints_ = constraints_ || law->is_constraint();
    stateful_ = stateful_ || law->is_stateful();
    max_reads_ = std::max(max_reads_, law->reads().size());
  }
}

void CoupledSystem::index_feeds(const InputFeeds& input_feeds) {
  if (input_feeds.size() != subsystems_.size()) {
    throw std::invalid_argument("CoupledSystem: one input map per subsystem required");
  }
  for (std::size_t i = 0; i < subsystems_.size(); ++i) {
    const model::Subsystem& sub = *subsystems_[i];
    if (input_feeds[i].size() != sub.input_size()) {
      throw std::invalid_argument("CoupledSystem: input map of subsystem " + std::to_string(i) +
                                  " does not match its input count");
    }
    feeds_.emplace_back();
    feed_start_.emplace_back(1, 0);
    for (std::size_t k = 0; k < input_feeds[i].size(); ++k) {
      const auto& feeds = input_feeds[i][k];
      if (feeds.empty()) {
        throw std::invalid_argument("CoupledSystem: input " + sub.input_name(k) + " of subsystem " +
                                    std::to_string(i) + " has no feed");
      }
      if (feeds.size() > 1 && !sub.input_is_effort(k)) {
        throw std::invalid_argument("CoupledSystem: input " + sub.input_name(k) + " of subsystem " +
                                    std::to_string(i) +
                                    " is fed by several coupling variables but is no effort input");
      }
      for (std::size_t c : feeds) {
        if (c >= coupling_names_.size()) {
          throw std::invalid_argument("CoupledSystem: input map refers to a missing coupling");
        }
        feeds_[i].push_back(c);
      }
      feed_start_[i].push_back(feeds_[i].size());
    }
    if (feeds_[i].size() > model::SupportPoints::kMaxChannels) {
      throw std::invalid_argument(
          "CoupledSystem: subsystem " + std::to_string(i) + " is fed by " +
          std::to_string(feeds_[i].size()) + " coupling variables; at most " +
          std::to_string(model::SupportPoints::kMaxChannels) + " (its step polynomial's channels)");
    }
  }
}

void CoupledSystem::sum_feeds(std::size_t i, model::SupportPoints& points) const {
  if (single_feeds(i)) return;
  const auto& start = feed_start_.at(i);
  const std::size_t inputs = start.size() - 1;
  for (std::size_t k = 0; k < inputs; ++k) {
    for (std::size_t m = 0; m < points.node_count(); ++m) {
      double sum = points.value[start[k]][m];
      for (std::size_t f = start[k] + 1; f < start[k + 1]; ++f) sum += points.value[f][m];
      points.value[k][m] = sum;  // k ≤ start[k]: the channels still to read lie behind
    }
  }
  for (std::size_t c = inputs; c < points.channels; ++c) points.value[c] = {};
  points.channels = static_cast<std::uint32_t>(inputs);
}

double CoupledSystem::feed_max(std::size_t i, std::size_t k,
                               std::span<const double> per_variable) const {
  const auto feeds = input_feeds(i, k);
  double m = per_variable[feeds[0]];
  for (std::size_t f = 1; f < feeds.size(); ++f) m = std::max(m, per_variable[feeds[f]]);
  return m;
}

// The monitored outputs must exist; their groups are copied into one span for the estimators
// (which know nothing about outputs).
void CoupledSystem::index_monitored() {
  for (const auto& m : monitored_) {
    check_output(m.output, m.name);
    if (m.group != control::WeightGroup::kPosition && m.group != control::WeightGroup::kVelocity) {
      throw std::invalid_argument("CoupledSystem: monitored output " + m.name +
                                  " must be a position or a velocity");
    }
    monitored_groups_.push_back(m.group);
  }
}

std::span<const double> CoupledSystem::gather_reads(const CouplingLaw& law,
                                                    std::span<const std::vector<double>> outputs,
                                                    std::span<double> buffer) {
  const auto reads = law.reads();
  for (std::size_t j = 0; j < reads.size(); ++j) {
    buffer[j] = outputs[reads[j].subsystem][reads[j].output];
  }
  return buffer.first(reads.size());
}

void CoupledSystem::evaluate_couplings(std::span<const std::vector<double>> outputs,
                                       std::span<double> u) const {
  if (u.size() != coupling_names_.size() || outputs.size() != subsystems_.size()) {
    throw std::invalid_argument("CoupledSystem::evaluate_couplings: size mismatch");
  }
  // A const system is shared between threads: one scratch per thread, allocated once.
  thread_local std::vector<double> y;
  if (y.size() < max_reads_) y.resize(max_reads_);
  for (std::size_t k = 0; k < laws_.size(); ++k) {
    const CouplingLaw& law = *laws_[k];
    law.evaluate(gather_reads(law, outputs, y), u.subspan(law_offsets_[k], law.write_count()));
  }
}

bool CoupledSystem::depends_on_macro_grid() const {
  return std::any_of(laws_.begin(), laws_.end(),
                     [](const auto& law) { return law->depends_on_macro_grid(); });
}

void CoupledSystem::reset_law_states() const {
  for (const auto& law : laws_) law->reset_state();
}

void CoupledSystem::accept_couplings(std::span<const std::vector<double>> outputs,
                                     std::span<const double> u) const {
  advance_laws(outputs, u, false);
}

void CoupledSystem::start_couplings(std::span<const std::vector<double>> outputs,
                                    std::span<const double> u) const {
  advance_laws(outputs, u, true);
}

void CoupledSystem::advance_laws(std::span<const std::vector<double>> outputs,
                                 std::span<const double> u, bool initial) const {
  if (!stateful_) return;
  if (u.size() != coupling_names_.size() || outputs.size() != subsystems_.size()) {
    throw std::invalid_argument("CoupledSystem: accepted point of the wrong size");
  }
  std::vector<double> y(max_reads_);
  for (std::size_t k = 0; k < laws_.size(); ++k) {
    CouplingLaw& law = *laws_[k];
    if (!law.is_stateful()) continue;
    const auto reads = gather_reads(law, outputs, y);
    const auto share = u.subspan(law_offsets_[k], law.write_count());
    if (initial) {
      law.start(reads, share);
    } else {
      law.accept(reads, share);
    }
  }
}

std::vector<std::vector<double>> CoupledSystem::export_law_states() const {
  std::vector<std::vector<double>> states;
  if (!stateful_) return states;
  for (const auto& law : laws_) states.push_back(law->export_state());
  return states;
}

void CoupledSystem::import_law_states(const std::vector<std::vector<double>>& states) const {
  if (states.empty() && !stateful_) return;
  if (states.size() != laws_.size()) {
    throw std::invalid_argument("the coupling laws' states: " + std::to_string(states.size()) +
                                " arrays for " + std::to_string(laws_.size()) + " laws");
  }
  for (std::size_t k = 0; k < laws_.size(); ++k) laws_[k]->import_state(states[k]);
}

void CoupledSystem::evaluate_rates(std::span<const std::vector<double>> outputs,
                                   std::span<double> u_dot) const {
  if (u_dot.size() != coupling_names_.size() || outputs.size() != subsystems_.size()) {
    throw std::invalid_argument("CoupledSystem::evaluate_rates: size mismatch");
  }
  std::vector<double> y(max_reads_);
  for (std::size_t k = 0; k < laws_.size(); ++k) {
    const CouplingLaw& law = *laws_[k];
    const auto out = u_dot.subspan(law_offsets_[k], law.write_count());
    if (law.has_rate()) {
      law.rate(gather_reads(law, outputs, y), out);
    } else {
      std::fill(out.begin(), out.end(), 0.0);
    }
  }
}

bool CoupledSystem::has_rate(std::size_t c) const {
  if (c >= coupling_names_.size()) throw std::out_of_range("CoupledSystem::has_rate");
  const auto k = static_cast<std::size_t>(
      std::upper_bound(law_offsets_.begin(), law_offsets_.end(), c) - law_offsets_.begin() - 1);
  return laws_[k]->has_rate();
}

void CoupledSystem::coupling_jacobian(std::size_t k, std::span<const std::vector<double>> outputs,
                                      std::span<double> dphi_dy) const {
  const CouplingLaw& law = *laws_.at(k);
  if (outputs.size() != subsystems_.size() ||
      dphi_dy.size() != law.write_count() * law.reads().size()) {
    throw std::invalid_argument("CoupledSystem::coupling_jacobian: size mismatch");
  }
  std::vector<double> y(law.reads().size());
  law.jacobian(gather_reads(law, outputs, y), dphi_dy);
}

void CoupledSystem::gather_monitored(std::span<const std::vector<double>> outputs,
                                     std::span<double> values) const {
  if (values.size() != monitored_.size()) {
    throw std::invalid_argument("CoupledSystem::gather_monitored: size mismatch");
  }
  for (std::size_t j = 0; j < monitored_.size(); ++j) {
    values[j] = outputs[monitored_[j].output.subsystem][monitored_[j].output.output];
  }
}

std::vector<double> CoupledSystem::initial_couplings() const {
  const std::size_t ns = subsystems_.size();
  std::vector<std::vector<double>> outputs(ns), feedthrough(ns), z0(ns);
  for (std::size_t i = 0; i < ns; ++i) {
    const auto& s = *subsystems_[i];
    std::vector<double> zp(s.state_size()), u(s.input_size(), 0.0);
    auto& z = z0[i];
    z.resize(s.state_size());
    s.initial_state(u, z, zp);  // z0 does not depend on u (Subsystem contract)
    outputs[i].resize(s.output_size());
    s.outputs(s.initial_time(), z, u, outputs[i]);
    if (s.has_feedthrough()) {
      feedthrough[i].resize(s.output_size() * s.input_size());
      s.feedthrough_jacobian(s.initial_time(), z, u, feedthrough[i]);
    }
  }
  std::vector<double> u(coupling_names_.size());
  if (!feedthrough_) {
    evaluate_couplings(outputs, u);
    if (constraints_) initial_multipliers(u);
    return u;
  }
  // At t0 the master holds the subsystems and their initial states: it evaluates them itself.
  std::string failure;
  const OutputEvaluator at_t0 = [&](std::span<const std::vector<double>> inputs,
                                    std::span<std::vector<double>> y,
                                    std::span<std::vector<double>> d) {
    for (std::size_t i = 0; i < ns; ++i) {
      if (inputs[i].empty()) continue;
      const auto& s = *subsystems_[i];
      try {
        model::evaluate_outputs(s, s.initial_time(), z0[i], inputs[i], y[i], d[i]);
      } catch (const std::exception& e) {
        failure = "subsystem " + std::to_string(i + 1) + " at t0: " + e.what();
        return false;
      }
    }
    return true;
  };
  const std::vector<double> zero(coupling_names_.size(), 0.0);
  const ConsistentUpdate r = consistent_update(outputs, feedthrough, zero,
                                               control::ErrorTolerances::for_rtol(1e-10), u, at_t0);
  if (r.evaluation_failed) {
    throw std::runtime_error("CoupledSystem: the initial coupling equations (feed-through): " +
                             failure);
  }
  if (!r.converged) {
    throw std::runtime_error(
        "CoupledSystem: the initial coupling equations (feed-through) have "
        "no solution near 0: " +
        coupling_names_[r.worst] + " keeps a weighted residual " + std::to_string(r.residual));
  }
  return u;
}

void CoupledSystem::shift_outputs(std::span<const std::vector<double>> base,
                                  std::span<const std::vector<double>> feedthrough,
                                  std::span<const double> u_eval, std::span<const double> u,
                                  std::span<std::vector<double>> outputs) const {
  for (std::size_t i = 0; i < subsystems_.size(); ++i) {
    if (feedthrough[i].empty() || evaluated_[i] != 0) continue;
    const std::size_t ny = base[i].size(), ni = subsystems_[i]->input_size();
    if (feedthrough[i].size() != ny * ni) {
      throw std::invalid_argument("CoupledSystem::consistent_update: feed-through block of " +
                                  std::to_string(feedthrough[i].size()) + " values for " +
                                  std::to_string(ny) + " outputs and " + std::to_string(ni) +
                                  " inputs");
    }
    for (std::size_t r = 0; r < ny; ++r) {
      double y = base[i][r];
      for (std::size_t j = 0; j < ni; ++j) {
        // A summed input moves by the sum of its feeds' moves.
        const auto feeds = input_feeds(i, j);
        double du = u[feeds[0]] - u_eval[feeds[0]];
        for (std::size_t f = 1; f < feeds.size(); ++f) du += u[feeds[f]] - u_eval[feeds[f]];
        y += feedthrough[i][j * ny + r] * du;
      }
      outputs[i][r] = y;
    }
  }
}

void CoupledSystem::update_jacobian(std::span<const std::vector<double>> outputs,
                                    std::span<const std::vector<double>> feedthrough,
                                    std::vector<double>& jacobian) const {
  const std::size_t n = coupling_names_.size();
  jacobian.assign(n * n, 0.0);
  for (std::size_t c = 0; c < n; ++c) jacobian[c * n + c] = 1.0;
  std::vector<double> dphi;
  for (std::size_t k = 0; k < laws_.size(); ++k) {
    const CouplingLaw& law = *laws_[k];
    const auto reads = law.reads();
    dphi.resize(law.write_count() * reads.size());
    coupling_jacobian(k, outputs, dphi);
    for (std::size_t w = 0; w < law.write_count(); ++w) {
      const std::size_t row = law_offsets_[k] + w;
      for (std::size_t r = 0; r < reads.size(); ++r) {
        const auto& d = feedthrough[reads[r].subsystem];
        if (d.empty()) continue;
        const std::size_t sub = reads[r].subsystem, ny = subsystems_[sub]->output_size();
        for (std::size_t j = 0; j < subsystems_[sub]->input_size(); ++j) {
          // ∂(input j)/∂u_c = 1 for each of its feeds c.
          for (const std::size_t c : input_feeds(sub, j)) {
            jacobian[c * n + row] -= dphi[w * reads.size() + r] * d[j * ny + reads[r].output];
          }
        }
      }
    }
  }
}

namespace {

// x := J⁻¹x with SUNDIALS' dense LU (J column-major n × n, overwritten); false if singular.
bool solve_dense(std::vector<double>& jacobian, std::span<double> x) {
  const auto n = static_cast<sunindextype>(x.size());
  std::vector<realtype*> columns(x.size());
  for (std::size_t c = 0; c < x.size(); ++c) columns[c] = jacobian.data() + c * x.size();
  std::vector<sunindextype> pivots(x.size());
  if (SUNDlsMat_denseGETRF(columns.data(), n, n, pivots.data()) != 0) return false;
  SUNDlsMat_denseGETRS(columns.data(), n, pivots.data(), x.data());
  return true;
}

}  // namespace

// d/dt of every law's φ at t0 with inputs u: Σ ∂φ/∂y·(∂y/∂z·ż0(u)), ż0 from the subsystems'
// consistent initial states with those inputs. For a constraint law that is −ġ.
void CoupledSystem::initial_rates(std::span<const double> u, std::span<double> rates) const {
  std::vector<std::vector<double>> outputs(subsystems_.size()), output_rates(subsystems_.size());
  for (std::size_t i = 0; i < subsystems_.size(); ++i) {
    const auto& s = *subsystems_[i];
    std::vector<double> z(s.state_size()), zp(s.state_size()), in(s.input_size());
    gather_inputs(i, u, in);
    s.initial_state(in, z, zp);
    outputs[i].resize(s.output_size());
    s.outputs(s.initial_time(), z, in, outputs[i]);
    const model::EntryPattern pattern = s.output_jacobian_pattern();
    std::vector<double> values(pattern.nonzeros());
    s.output_jacobian(s.initial_time(), z, in, values);
    output_rates[i].assign(s.output_size(), 0.0);
    for (std::size_t k = 0; k < values.size(); ++k) {
      output_rates[i][pattern.row[k]] += values[k] * zp[pattern.column[k]];
    }
  }
  std::vector<double> y(max_reads_), dphi;
  for (std::size_t k = 0; k < laws_.size(); ++k) {
    const CouplingLaw& law = *laws_[k];
    const auto reads = law.reads();
    dphi.resize(law.write_count() * reads.size());
    law.jacobian(gather_reads(law, outputs, y), dphi);
    for (std::size_t w = 0; w < law.write_count(); ++w) {
      double rate = 0.0;
      for (std::size_t r = 0; r < reads.size(); ++r) {
        rate += dphi[w * reads.size() + r] * output_rates[reads[r].subsystem][reads[r].output];
      }
      rates[law_offsets_[k] + w] = rate;
    }
  }
}

// Consistent multipliers at t0 (METHODS §8; seed 004 App. D): the constraints hold at t0 and must
// keep holding, ġ(u) = 0 (for a joint: equal velocities give μ, equal accelerations λ). Newton
// with a finite-difference Jacobian over the multipliers (ġ is affine in them for the library's
// models: one step).
void CoupledSystem::initial_multipliers(std::vector<double>& u) const {
  std::vector<std::size_t> m;
  for (std::size_t c = 0; c < u.size(); ++c) {
    if (constraint_[c] != 0) m.push_back(c);
  }
  for (std::size_t c : m) u[c] = 0.0;
  std::vector<double> rates(u.size()), shifted(u.size()), h(m.size()),
      jacobian(m.size() * m.size());
  double first = 0.0;
  for (int it = 0; it < 8; ++it) {
    initial_rates(u, rates);
    double size = 0.0;
    for (std::size_t j = 0; j < m.size(); ++j) {
      h[j] = rates[m[j]];
      size = std::max(size, std::fabs(h[j]));
    }
    if (it == 0) first = size;
    if (!std::isfinite(size)) break;
    if (size == 0.0 || (it > 0 && size <= 1e-12 * first)) return;
    for (std::size_t j = 0; j < m.size(); ++j) {
      std::vector<double> moved = u;
      const double delta = 1e-6 * std::max(1.0, std::fabs(u[m[j]]));
      moved[m[j]] += delta;
      initial_rates(moved, shifted);
      for (std::size_t i = 0; i < m.size(); ++i) {
        jacobian[j * m.size() + i] = (shifted[m[i]] - rates[m[i]]) / delta;
      }
    }
    for (double& v : h) v = -v;
    if (!solve_dense(jacobian, h)) break;
    for (std::size_t j = 0; j < m.size(); ++j) u[m[j]] += h[j];
  }
  throw std::runtime_error(
      "CoupledSystem: no consistent initial multipliers for the constraint coupling " +
      coupling_names_[m.front()] +
      " (the constraints' time derivatives do not vanish for any value near 0)");
}

void CoupledSystem::coupling_residual(std::span<const double> u, std::span<const double> phi,
                                      const control::ErrorTolerances& tol, std::span<double> g,
                                      std::span<double> w, ConsistentUpdate& result) const {
  for (std::size_t c = 0; c < g.size(); ++c) g[c] = u[c] - phi[c];
  control::error_weights(u, tol, control::WeightGroup::kCouplingVariable, w);
  result.residual = control::wrms_norm(g, w);
  double worst = -1.0;
  for (std::size_t c = 0; c < g.size(); ++c) {
    const double e = std::fabs(g[c] * w[c]);
    if (!(e <= worst)) {  // NaN wins: it names the variable that broke
      worst = e;
      result.worst = c;
    }
  }
}

ConsistentUpdate CoupledSystem::consistent_update(
    std::span<std::vector<double>> outputs, std::span<const std::vector<double>> feedthrough,
    std::span<const double> u_eval, const control::ErrorTolerances& tol, std::span<double> u,
    const OutputEvaluator& evaluate, double tolerance, int max_iterations) const {
  const std::size_t n = coupling_names_.size();
  if (outputs.size() != subsystems_.size() || feedthrough.size() != subsystems_.size() ||
      u_eval.size() != n || u.size() != n) {
    throw std::invalid_argument("CoupledSystem::consistent_update: size mismatch");
  }
  ConsistentUpdate result;
  if (!feedthrough_) {  // Eq. 2.25: the operations of evaluate_couplings, nothing else
    evaluate_couplings(outputs, u);
    return result;
  }
  if (evaluated_any_) {
    if (!evaluate) {
      throw std::invalid_argument(
          "CoupledSystem::consistent_update: outputs not affine in the inputs need an evaluator");
    }
    return evaluated_update(outputs, feedthrough, u_eval, tol, u, evaluate, tolerance,
                            max_iterations);
  }
  // Affine outputs only: y(u) by D alone, exact; no message to any subsystem.
  const std::vector<std::vector<double>> base(outputs.begin(), outputs.end());
  std::copy(u_eval.begin(), u_eval.end(), u.begin());
  std::vector<double> phi(n), g(n), w(n), jacobian;
  for (int it = 0;; ++it) {
    shift_outputs(base, feedthrough, u_eval, u, outputs);
    evaluate_couplings(outputs, phi);
    coupling_residual(u, phi, tol, g, w, result);
    result.iterations = it;
    // At least one Newton step: the predictor u_eval may pass the weighted test by itself (a
    // displacement of 1e-3 m against atol_u = 1), which would leave the simplified update and
    // its order drop (seed 000 App. B). Outputs affine in u are solved exactly by that step.
    if (it > 0 && result.residual <= tolerance) {  // also false for NaN
      // u := φ(y(u)): a variable whose law reads no feed-through output is φ(y) bit for bit
      // (as without feed-through); the others move by less than the tolerance.
      std::copy(phi.begin(), phi.end(), u.begin());
      shift_outputs(base, feedthrough, u_eval, u, outputs);
      return result;
    }
    if (it == max_iterations || !std::isfinite(result.residual)) break;
    update_jacobian(outputs, feedthrough, jacobian);
    for (std::size_t c = 0; c < n; ++c) g[c] = -g[c];
    if (!solve_dense(jacobian, g)) break;
    for (std::size_t c = 0; c < n; ++c) u[c] += g[c];
  }
  result.converged = false;
  return result;
}

ConsistentUpdate CoupledSystem::evaluated_update(
    std::span<std::vector<double>> outputs, std::span<const std::vector<double>> feedthrough,
    std::span<const double> u_eval, const control::ErrorTolerances& tol, std::span<double> u,
    const OutputEvaluator& evaluate, double tolerance, int max_iterations) const {
  const std::size_t n = coupling_names_.size(), ns = subsystems_.size();
  ConsistentUpdate result;
  // The affine subsystems move from their outputs at u_eval; the evaluated ones' outputs and D
  // are replaced at every iterate (at u_eval they are the runs' own, exact already).
  const std::vector<std::vector<double>> base(outputs.begin(), outputs.end());
  std::vector<std::vector<double>> d(feedthrough.begin(), feedthrough.end()), inputs(ns);
  std::copy(u_eval.begin(), u_eval.end(), u.begin());
  std::vector<double> phi(n), g(n), w(n), jacobian;
  for (int it = 0;; ++it) {
    if (it > 0) {
      for (std::size_t i = 0; i < ns; ++i) {
        if (evaluated_[i] == 0) continue;  // not asked: stays empty
        inputs[i].resize(subsystems_[i]->input_size());
        gather_inputs(i, u, inputs[i]);
      }
      ++result.evaluations;
      if (!evaluate(inputs, outputs, d)) {
        result.evaluation_failed = true;
        break;
      }
    }
    shift_outputs(base, d, u_eval, u, outputs);
    evaluate_couplings(outputs, phi);
    coupling_residual(u, phi, tol, g, w, result);
    result.iterations = it;
    // The true residual at the iterate whose outputs are returned; at least one Newton step, as
    // in the affine case (the predictor may pass the test by itself: seed 000 App. B).
    if (it > 0 && result.residual <= tolerance) return result;  // also false for NaN
    if (it == max_iterations || !std::isfinite(result.residual)) break;
    update_jacobian(outputs, d, jacobian);
    for (std::size_t c = 0; c < n; ++c) g[c] = -g[c];
    if (!solve_dense(jacobian, g)) break;
    for (std::size_t c = 0; c < n; ++c) {
      // φ_c of a law that reads no feed-through output does not depend on u: Newton puts u_c
      // there up to rounding; exactly, so that it is φ(y) bit for bit as without feed-through.
      u[c] = reads_feedthrough_[c] != 0 ? u[c] + g[c] : phi[c];
    }
  }
  result.converged = false;
  return result;
}

void CoupledSystem::gather_inputs(std::size_t i, std::span<const double> u,
                                  std::span<double> inputs) const {
  const auto& feeds = feeds_.at(i);
  const auto& start = feed_start_[i];
  for (std::size_t k = 0; k + 1 < start.size(); ++k) {
    double sum = u[feeds[start[k]]];
    for (std::size_t f = start[k] + 1; f < start[k + 1]; ++f) sum += u[feeds[f]];
    inputs[k] = sum;
  }
}

}  // namespace macrostep::system

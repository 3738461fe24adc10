// Gauss–Seidel co-simulation (gauss_seidel.hpp; METHODS.md §3.2, D-10; seed 001 Eq. 13, 17).
#include "macrostep/schemes/gauss_seidel.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <span>
#include <stdexcept>

#include "macrostep/control/estimators.hpp"
#include "macrostep/polynomials/approximation.hpp"
#include "macrostep/polynomials/builders.hpp"
#include "macrostep/schemes/explicit_jacobi.hpp"

namespace macrostep::schemes {

namespace {

void check_options(const SchemeOptions& options) {
  using control::Estimator;
  if (options.control.mode != control::StepSizeMode::kFixed) {
    throw std::invalid_argument(
        "Gauss-Seidel runs with a fixed macro-step size (METHODS D-10): set a step size and no "
        "step-size control");
  }
  const Estimator e = options.control.estimator;
  if (e != Estimator::kNone && e != Estimator::kExCV) {
    throw std::invalid_argument(
        fmt::format("Gauss-Seidel monitors its error with exCV or none; {} needs comparison runs "
                    "that only the Jacobi schemes make",
                    control::to_string(e)));
  }
  if (options.corrector) {
    throw std::invalid_argument("Gauss-Seidel is an explicit scheme: it takes no corrector");
  }
  for (const auto& a : options.approximations) {
    if (a.uses_rates()) {
      throw std::invalid_argument(
          fmt::format("Gauss-Seidel takes the approximations without rates (lagrange, c0, c1, "
                      "the b = 0 sets); \"{}\" needs the rates u̇ that only the Jacobi scheme "
                      "keeps",
                      a.name));
    }
  }
  const GaussSeidelOptions& gs = *options.gauss_seidel;
  if (!(gs.tolerance > 0.0) || !std::isfinite(gs.tolerance) || gs.max_passes < 1) {
    throw std::invalid_argument("Gauss-Seidel: tolerance must be > 0 and max_passes >= 1");
  }
}

std::vector<std::size_t> checked_sequence(const system::CoupledSystem& system,
                                          const std::vector<std::size_t>& given) {
  const std::size_t ns = system.subsystem_count();
  std::vector<std::size_t> sequence = given;
  if (sequence.empty()) {
    for (std::size_t i = 0; i < ns; ++i) sequence.push_back(i);
  }
  std::vector<bool> seen(ns, false);
  for (const std::size_t i : sequence) {
    if (i >= ns || seen[i]) {
      throw std::invalid_argument(
          fmt::format("Gauss-Seidel sequence must name each of the {} subsystems once", ns));
    }
    seen[i] = true;
  }
  if (sequence.size() != ns) {
    throw std::invalid_argument(
        fmt::format("Gauss-Seidel sequence must name each of the {} subsystems once", ns));
  }
  return sequence;
}

}  // namespace

void GaussSeidel::start(const system::CoupledSystem& system, const SchemeOptions& options) {
  if (!options.gauss_seidel) throw std::logic_error("GaussSeidel::start without its options");
  check_options(options);
  check_approximations(system, options.approximations);
  if (system.has_constraints()) {
    throw std::invalid_argument(
        "the Gauss-Seidel scheme cannot solve a constraint coupling (joint): its multipliers "
        "have no u = φ(y); use the implicit or semi-implicit scheme");
  }
  system_ = &system;
  options_ = options;
  approximation_.clear();
  if (std::any_of(options_.approximations.begin(), options_.approximations.end(),
                  [](const polynomials::Approximation& a) { return !a.is_lagrange(); })) {
    for (const auto& a : options_.approximations) approximation_.push_back(&a);
  }
  sequence_ = checked_sequence(system, options.gauss_seidel->sequence);
  const std::size_t ns = system.subsystem_count();
  const std::size_t nc = system.coupling_count();
  reads_.assign(nc, {});
  for (std::size_t k = 0; k < system.law_count(); ++k) {
    const system::CouplingLaw& law = system.law(k);
    std::vector<std::size_t> subsystems;
    for (const system::OutputRef& r : law.reads()) subsystems.push_back(r.subsystem);
    std::sort(subsystems.begin(), subsystems.end());
    subsystems.erase(std::unique(subsystems.begin(), subsystems.end()), subsystems.end());
    for (std::size_t j = 0; j < law.write_count(); ++j)
      reads_[system.law_offset(k) + j] = subsystems;
  }
  commands_.assign(ns, {});
  feed_nominal_.assign(ns, {});
  outputs_.assign(ns, {});
  u_pre_.assign(nc, 0.0);
  u_end_.assign(nc, 0.0);
  u_eval_.assign(nc, 0.0);
  delta_.assign(nc, 0.0);
  start_own_outputs();
}

void GaussSeidel::start_own_outputs() {
  const system::CoupledSystem& system = *system_;
  const std::size_t ns = system.subsystem_count();
  own_outputs_.assign(ns, std::nullopt);
  pending_outputs_.assign(ns, {});
  pending_ = false;
  if (options_.gauss_seidel->end_value != GaussSeidelEndValue::kSequential) return;
  std::vector<std::vector<double>> initial;
  initial_outputs(system, system.initial_couplings(), initial);
  // The extrapolation of degree κ reads κ+1 points; a fixed H keeps κ ≤ kappa_fixed.
  const auto capacity = static_cast<std::size_t>(std::max(options_.control.kappa_fixed, 0)) + 1;
  for (std::size_t s = 0; s < ns; ++s) {
    bool self = false;
    for (const std::size_t c : system.feed_channels(s))
      self = self || std::binary_search(reads_[c].begin(), reads_[c].end(), s);
    if (!self || initial[s].empty()) continue;
    own_outputs_[s].emplace(initial[s].size(), capacity);
    own_outputs_[s]->push(options_.control.t_start, initial[s]);
  }
}

bool GaussSeidel::interpolates(std::size_t c, std::size_t s, const std::vector<bool>& ran,
                               bool& self) const {
  self = false;
  for (const std::size_t j : reads_[c]) {
    if (j == s) {
      self = true;
    } else if (!ran[j]) {
      return false;  // a subsystem still to run: keep the extrapolation
    }
  }
  return true;
}

double GaussSeidel::weight(std::size_t c, const polynomials::CouplingHistory& history,
                           double u) const {
  const control::ErrorTolerances& tol = options_.control.tolerances;
  const double atol = control::component_atol(tol, control::WeightGroup::kCouplingVariable, c);
  double scale = 0.0;
  for (std::size_t j = 0; j < history.size(); ++j)
    scale = std::max(scale, std::abs(history.values_back(j)[c]));
  return (scale > 0.0 ? std::min(atol, tol.rtol * scale) : atol) + tol.rtol * std::abs(u);
}

// Seed 001 §2 (Eq. 12-14): an input that still waits for its law's subsystems is extrapolated
// with the configured approximation (C0/C1 or a seed-003 set, of order κ); an input whose law's
// subsystems have run is interpolated by the Lagrange polynomial of degree κ through the
// history and its new value at T_{N+1} (Eq. 13). Without continuous approximations both are the
// Lagrange step polynomial with the end values u_end_ (bit for bit as before).
// Built over the coupling variables feeding the inputs (feed_nominal_[i]), then summed into
// inputs (CoupledSystem::sum_feeds).
void GaussSeidel::build_command(std::size_t i, const polynomials::CouplingHistory& history,
                                int kappa, double t_end, const std::vector<bool>& interpolated) {
  build_feed_polynomial(i, history, kappa, t_end, interpolated);
  commands_[i].nominal = feed_nominal_[i];
  system_->sum_feeds(i, commands_[i].nominal);
  commands_[i].extra.clear();
}

void GaussSeidel::build_feed_polynomial(std::size_t i, const polynomials::CouplingHistory& history,
                                        int kappa, double t_end,
                                        const std::vector<bool>& interpolated) {
  const auto in = system_->feed_channels(i);
  sel_.assign(in.begin(), in.end());
  auto& nominal = feed_nominal_[i];
  bool any_extrapolated = false, any_interpolated = false;
  for (const std::size_t c : sel_) (interpolated[c] ? any_interpolated : any_extrapolated) = true;
  if (approximation_.empty() || !any_extrapolated) {
    nominal = polynomials::step_polynomial(history, kappa, t_end, u_end_, sel_);
    return;
  }
  const model::SupportPoints extrapolation =
      polynomials::approximation_polynomial(history, nullptr, approximation_, kappa, t_end, sel_);
  if (!any_interpolated) {
    nominal = extrapolation;
    return;
  }
  // Both kinds in one subsystem: every channel's polynomial stated by its values at the nodes of
  // the higher-degree one (a polynomial of lower degree is exact there).
  const model::SupportPoints interpolation =
      polynomials::step_polynomial(history, kappa, t_end, u_end_, sel_);
  nominal = extrapolation.degree >= interpolation.degree ? extrapolation : interpolation;
  std::array<double, model::SupportPoints::kMaxChannels> e{}, l{};
  const std::span<double> es(e.data(), sel_.size()), ls(l.data(), sel_.size());
  for (std::size_t m = 0; m < nominal.node_count(); ++m) {
    extrapolation.evaluate(nominal.time[m], es);
    interpolation.evaluate(nominal.time[m], ls);
    for (std::size_t k = 0; k < sel_.size(); ++k) {
      nominal.value[k][m] = interpolated[sel_[k]] ? ls[k] : es[k];
    }
  }
}

// Step 3 for subsystem s: its inputs whose law has run take their new end values; with a law
// that reads s itself, s repeats until the change that remains is within the tolerance
// (gauss_seidel.hpp). False when a pass failed (result says why).
bool GaussSeidel::settle(std::size_t s, const polynomials::CouplingHistory& history, int kappa,
                         double t1, const std::vector<bool>& ran,
                         const std::function<bool()>& run_pass, AttemptResult& result) {
  const system::CoupledSystem& system = *system_;
  const double tolerance = options_.gauss_seidel->tolerance;
  int stalls = 0;  // repetitions in a row that did not contract
  for (int pass = 0;; ++pass) {
    system.evaluate_couplings(outputs_, u_eval_);
    bool any = false, self = false;
    double remaining = 0.0;  // the largest estimated remaining change, in weights
    bool contracting = true;
    for (const std::size_t c : system.feed_channels(s)) {
      bool reads_self = false;
      if (!interpolates(c, s, ran, reads_self)) continue;
      any = true;
      interpolated_[c] = true;
      self = self || reads_self;
      if (reads_self && pass > 0) {
        const double delta = std::abs(u_eval_[c] - u_end_[c]);
        double rate = 0.5;  // after the first repetition: no rate measured yet
        if (pass > 1 && delta_[c] > 0.0) rate = delta / delta_[c];
        if (pass > 1 && rate >= 1.0) contracting = false;
        const double estimate = rate < 1.0 ? delta * rate / (1.0 - rate) : delta;
        remaining = std::max(remaining, estimate / weight(c, history, u_eval_[c]));
        delta_[c] = delta;
      }
      if (pass == 0 || reads_self) u_end_[c] = u_eval_[c];
    }
    // Final: nothing to interpolate (the Jacobi run stands), the new values were used (no law
    // reads s), or the remaining change is within the tolerance.
    if (!any || (pass > 0 && !self)) return true;
    if (pass > 0) {
      stalls = contracting ? 0 : stalls + 1;
      const bool stop = pass >= options_.gauss_seidel->max_passes || stalls >= 2;
      if (remaining <= tolerance || stop) {
        result.iteration_residual = std::max(result.iteration_residual, remaining);
        result.corrector_failed = result.corrector_failed || remaining > tolerance;
        return true;
      }
    }
    build_command(s, history, kappa, t1, interpolated_);
    if (!run_pass()) return false;
    ++result.corrector_passes;
  }
}

// Step 3 for subsystem s with sequential end values: φ at the outputs of the last pass with s's
// own replaced by their extrapolation to T_{N+1}; one pass (gauss_seidel.hpp).
bool GaussSeidel::run_sequential(std::size_t s, const polynomials::CouplingHistory& history,
                                 int kappa, double t1, const std::vector<bool>& ran,
                                 const std::function<bool()>& run_pass, AttemptResult& result) {
  const system::CoupledSystem& system = *system_;
  sequential_outputs_ = outputs_;
  if (own_outputs_[s]) {
    polynomials::lagrange_prediction(*own_outputs_[s], kappa, t1, sequential_outputs_[s]);
  }
  system.evaluate_couplings(sequential_outputs_, u_eval_);
  bool any = false;
  for (const std::size_t c : system.feed_channels(s)) {
    bool reads_self = false;
    if (!interpolates(c, s, ran, reads_self)) continue;
    any = true;
    interpolated_[c] = true;
    u_end_[c] = u_eval_[c];
  }
  if (!any) return true;  // nothing to interpolate: the Jacobi run stands
  build_command(s, history, kappa, t1, interpolated_);
  if (!run_pass()) return false;
  ++result.corrector_passes;
  return true;
}

void GaussSeidel::concluded(bool accepted) {
  if (accepted && pending_) {
    for (std::size_t s = 0; s < own_outputs_.size(); ++s)
      if (own_outputs_[s]) own_outputs_[s]->push(pending_time_, pending_outputs_[s]);
  }
  pending_ = false;
}

std::vector<std::vector<double>> GaussSeidel::export_state() const {
  std::vector<std::vector<double>> state;
  for (std::size_t s = 0; s < own_outputs_.size(); ++s) {
    if (!own_outputs_[s]) continue;
    const polynomials::CouplingHistory& h = *own_outputs_[s];
    if (state.empty()) {
      state.emplace_back();
      for (std::size_t i = 0; i < h.size(); ++i) state.front().push_back(h.time(i));
    }
    for (std::size_t i = 0; i < h.size(); ++i) {
      const auto values = h.values(i);
      state.emplace_back(values.begin(), values.end());
    }
  }
  return state;
}

void GaussSeidel::import_state(const std::vector<std::vector<double>>& state) {
  std::size_t kept = 0;
  for (const auto& h : own_outputs_) kept += h ? 1 : 0;
  if (kept == 0) {
    MacroStepScheme::import_state(state);
    return;
  }
  if (state.empty() || state.front().empty() || state.size() != 1 + kept * state.front().size()) {
    throw std::invalid_argument("Gauss-Seidel scheme state: the output history is malformed");
  }
  const std::vector<double>& times = state.front();
  std::size_t row = 1;
  for (auto& h : own_outputs_) {
    if (!h) continue;
    h->clear();
    for (std::size_t i = 0; i < times.size(); ++i, ++row) {
      if (state[row].size() != h->channels()) {
        throw std::invalid_argument("Gauss-Seidel scheme state: an output point of the wrong size");
      }
      h->push(times[i], state[row]);  // throws for times out of order
    }
  }
}

void GaussSeidel::assume_exact_past(std::span<const double> times,
                                    std::span<const std::vector<std::vector<double>>> outputs) {
  if (times.size() != outputs.size()) {
    throw std::invalid_argument("Gauss-Seidel scheme: one set of outputs per past point");
  }
  for (std::size_t s = 0; s < own_outputs_.size(); ++s) {
    if (!own_outputs_[s]) continue;
    own_outputs_[s]->clear();  // keeps the newest capacity() points
    for (std::size_t j = 0; j < times.size(); ++j) own_outputs_[s]->push(times[j], outputs[j][s]);
  }
}

void GaussSeidel::at_event(std::span<const std::vector<double>> outputs_after) {
  for (std::size_t s = 0; s < own_outputs_.size(); ++s) {
    if (own_outputs_[s]) own_outputs_[s]->jump_newest(outputs_after[s]);
  }
}

AttemptResult GaussSeidel::attempt(const control::StepPlan& plan,
                                   const polynomials::CouplingHistory& history,
                                   PassRunner& runner) {
  const system::CoupledSystem& system = *system_;
  const std::size_t ns = system.subsystem_count();
  const int kappa = plan.kappa;
  const double t1 = plan.t_end;
  AttemptResult result;
  result.iterative = true;  // passes beyond the first are reported as corrector passes
  // The last pass holds every subsystem's final run (the others repeat theirs bit for bit), and
  // with it the ∂y/∂u the consistent update needs.
  const executors::PassOutcome* last = nullptr;
  pending_ = false;
  // One std::function per attempt (settle() takes it for every later subsystem).
  const std::function<bool()> run_pass = [&]() -> bool {
    const executors::PassOutcome& outcome = runner.pass(t1, commands_);
    last = &outcome;
    if (!outcome.ok) {
      result.subsystem_failed = true;
      result.failed_subsystem = outcome.failed_subsystem;
      result.error = outcome.error;
      result.model_terminated = outcome.terminated;
      return false;
    }
    for (std::size_t i = 0; i < ns; ++i) outputs_[i] = outcome.subsystems[i].nominal.outputs;
    return true;
  };

  // 1.-2. The Jacobi pass: every input extrapolated.
  predict(options_, history, kappa, t1, u_pre_);
  u_end_ = u_pre_;
  interpolated_.assign(system.coupling_count(), false);
  for (std::size_t i = 0; i < ns; ++i) build_command(i, history, kappa, t1, interpolated_);
  if (!run_pass()) return result;

  // 3. The later subsystems of the sequence, one after another.
  std::vector<bool> ran(ns, false);
  ran[sequence_.front()] = true;
  const bool sequential = options_.gauss_seidel->end_value == GaussSeidelEndValue::kSequential;
  for (std::size_t q = 1; q < ns; ++q) {
    const std::size_t s = sequence_[q];
    if (!(sequential ? run_sequential(s, history, kappa, t1, ran, run_pass, result)
                     : settle(s, history, kappa, t1, ran, run_pass, result))) {
      return result;
    }
    ran[s] = true;
  }

  // 4. The consistent update (D-1; with feed-through from the inputs the final runs ended with)
  // and the monitor.
  auto& outputs = runner.outputs();
  for (std::size_t i = 0; i < ns; ++i) outputs[i] = outputs_[i];
  auto& u_new = runner.u_next();
  u_new.resize(system.coupling_count());
  if (!update_.update(system, *last, feed_nominal_, t1, options_.control.tolerances, runner, u_new,
                      outputs, result)) {
    return result;
  }
  if (options_.control.estimator == control::Estimator::kExCV) {
    result.estimate =
        control::estimate_coupling_variables(u_pre_, u_new, options_.control.tolerances);
  }
  for (std::size_t s = 0; s < ns; ++s)
    if (own_outputs_[s]) pending_outputs_[s] = outputs[s];
  pending_time_ = t1;
  pending_ = true;
  return result;
}

}  // namespace macrostep::schemes

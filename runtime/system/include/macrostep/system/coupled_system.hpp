// The coupled system of a co-simulation (METHODS.md §1.1, §1.4; seed 000 §2.3-2.4): the
// subsystems, the coupling laws u = φ(y), which coupling variable feeds which subsystem input,
// and the outputs the concept-1 estimators monitor. The laws live here, in the master;
// subsystems only see inputs and report outputs. The system knows no particular model: builders
// such as make_chain_system (chain_system.hpp) assemble it.
//
// Coupling variables: law k writes law(k).write_count() variables with the consecutive global
// indices law_offset(k) .. law_offset(k) + write_count() − 1, in law order.
//
// Ownership: a CoupledSystem owns its subsystems and laws; its configuration is immutable after
// construction and it may be shared (const) by every executor thread. The one exception is the
// accepted state of stateful laws (CouplingLaw, "Accepted state"): the run's, not the
// configuration's, advanced only by the law-state calls below from the thread that runs the
// macro-step pipeline, so one system serves one run at a time.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "macrostep/control/error_norm.hpp"
#include "macrostep/model/subsystem.hpp"
#include "macrostep/model/support_points.hpp"
#include "macrostep/system/coupling_law.hpp"

namespace macrostep::system {

// An output whose error the concept-1 estimators (exLE, exMD, imMD; METHODS §5) watch. The
// group says which WRMS norm and which atol it belongs to (§6.1).
// input_feeds[i][k]: the coupling variables whose sum is input k of subsystem i.
using InputFeeds = std::vector<std::vector<std::vector<std::size_t>>>;

struct MonitoredOutput {
  std::string name;  // the physical quantity ("x_17"), as in a monolithic run: a result column
  OutputRef output;
  control::WeightGroup group = control::WeightGroup::kPosition;  // kPosition or kVelocity
};

// What the consistent update (METHODS §1.1, D-1) reached: see CoupledSystem::consistent_update.
struct ConsistentUpdate {
  bool converged = true;
  int iterations = 0;   // Newton steps taken (0 without feed-through: u = φ(y) directly)
  int evaluations = 0;  // output evaluations asked for (OutputEvaluator calls)
  // Not converged because an output evaluation failed (the evaluator knows why and where).
  bool evaluation_failed = false;
  double residual = 0.0;  // ‖u − φ(y(u))‖_W at the returned u (WRMS, coupling-variable weights)
  std::size_t worst = 0;  // the coupling variable with the largest weighted residual
};

// The output evaluation the consistent update asks for when some feed-through subsystem's outputs
// are not affine in its inputs (CoupledSystem::evaluated): for every subsystem i with non-empty
// inputs[i] (its inputs u_i, size input_size()) its true outputs y_i = g_i(z_i, u_i) into
// outputs[i] and ∂y_i/∂u_i into feedthrough[i] (column-major), at the end state its last run
// reached (executors::Executor::evaluate_outputs behind the schemes; the subsystems themselves
// at t0). Entries of subsystems not asked are left alone. Returns false if an evaluation
// failed (the evaluator keeps the reason, naming the subsystem).
using OutputEvaluator = std::function<bool(std::span<const std::vector<double>> inputs,
                                           std::span<std::vector<double>> outputs,
                                           std::span<std::vector<double>> feedthrough)>;

class CoupledSystem {
 public:
  // input_feeds[i][k]: the global coupling-variable indices feeding input k of subsystem i, in
  // the subsystem's input order. An input's value is the sum of its feeds, added in this order
  // (an effort fed by several connections); every input has at least one feed, and a subsystem's
  // feeds together at most model::SupportPoints::kMaxChannels (its step polynomial is built over
  // them). Throws std::invalid_argument for references to missing subsystems, outputs or
  // coupling variables, an input without feeds, several feeds into an input the subsystem does
  // not declare an effort (model::Subsystem::input_is_effort), a monitored output in a group
  // other than kPosition/kVelocity, and for coupling laws with feed-through of their own
  // (CouplingLaw::has_feedthrough: φ(y, u) is not expressible by the law interface). Subsystems
  // with feed-through (y = g(z, u)) are accepted: consistent_update solves their coupling
  // equations (D-1); a loop closed by feed-through subsystems alone is the configuration's to
  // refuse (seed 001 §1: zero-stability needs a D block that is zero on every loop).
  // (A named function: braced lists of indices would fit both this and the constructor below.)
  static CoupledSystem with_input_feeds(std::vector<std::unique_ptr<model::Subsystem>> subsystems,
                                        std::vector<std::unique_ptr<CouplingLaw>> laws,
                                        InputFeeds input_feeds,
                                        std::vector<MonitoredOutput> monitored);
  // The same with one feed per input: input_couplings[i][k] feeds input k of subsystem i.
  CoupledSystem(std::vector<std::unique_ptr<model::Subsystem>> subsystems,
                std::vector<std::unique_ptr<CouplingLaw>> laws,
                std::vector<std::vector<std::size_t>> input_couplings,
                std::vector<MonitoredOutput> monitored);

  std::size_t subsystem_count() const { return subsystems_.size(); }
  const model::Subsystem& subsystem(std::size_t i) const { return *subsystems_.at(i); }

  // n_c, the number of coupling variables of all laws.
  std::size_t coupling_count() const { return coupling_names_.size(); }
  // Name of coupling variable c ("lambda_3").
  const std::string& coupling_name(std::size_t c) const { return coupling_names_.at(c); }
  // Unit of coupling variable c (CouplingLaw::variable_units of the units its law reads), ""
  // where the law cannot say.
  const std::string& coupling_unit(std::size_t c) const { return coupling_units_.at(c); }
  // Description of coupling variable c (CouplingLaw::variable_descriptions), "" where none.
  const std::string& coupling_description(std::size_t c) const {
    return coupling_descriptions_.at(c);
  }

  std::size_t law_count() const { return laws_.size(); }
  const CouplingLaw& law(std::size_t k) const { return *laws_.at(k); }
  // Global index of law k's first coupling variable.
  std::size_t law_offset(std::size_t k) const { return law_offsets_.at(k); }

  // The coupling variables feeding subsystem i's inputs, input by input (the feeds of input 0,
  // then those of input 1, ...): the channels its step polynomials are built over (sum_feeds
  // turns them into inputs). One per input unless an input has several feeds.
  std::span<const std::size_t> feed_channels(std::size_t i) const { return feeds_.at(i); }
  // The coupling variables feeding input k of subsystem i (their sum is the input).
  std::span<const std::size_t> input_feeds(std::size_t i, std::size_t k) const {
    const auto& start = feed_start_.at(i);
    return std::span<const std::size_t>(feeds_[i]).subspan(start.at(k), start[k + 1] - start[k]);
  }
  // Whether every input of subsystem i has exactly one feed (feed_channels(i)[k] feeds input k).
  bool single_feeds(std::size_t i) const {
    return feeds_.at(i).size() == feed_start_[i].size() - 1;
  }

  // A step polynomial of subsystem i over feed_channels(i) made one over its inputs: each input's
  // node values are the sums of its feeds' node values, added in feed order. All channels of one
  // SupportPoints share the nodes, so the result is exactly the sum of the feeds' polynomials
  // (whatever approximation built each), up to rounding. No change when single_feeds(i).
  void sum_feeds(std::size_t i, model::SupportPoints& points) const;
  // max over the feeds of input k of subsystem i of per_variable[c] (the FD perturbation of a
  // summed input, METHODS §4.2: large enough for each of its feeds).
  double feed_max(std::size_t i, std::size_t k, std::span<const double> per_variable) const;

  // u = φ(y): outputs[i] holds the outputs of subsystem i (size output_size()), u has
  // coupling_count() entries. Laws are evaluated in law order (contract 1: one result however
  // the subsystems ran).
  void evaluate_couplings(std::span<const std::vector<double>> outputs, std::span<double> u) const;

  // u̇ = dφ/dt for the variables of laws with CouplingLaw::has_rate(); the others' entries are
  // set to 0 (callers use rates only of variables whose law has them: has_rate(c)).
  void evaluate_rates(std::span<const std::vector<double>> outputs, std::span<double> u_dot) const;
  // Whether coupling variable c's law has a rate.
  bool has_rate(std::size_t c) const;

  // ∂φ/∂y of law k at `outputs`: dense row-major law(k).write_count() × law(k).reads().size(),
  // columns in the order of law(k).reads() (CouplingLaw::jacobian). The implicit scheme
  // assembles the sparse interface Jacobian from these blocks.
  void coupling_jacobian(std::size_t k, std::span<const std::vector<double>> outputs,
                         std::span<double> dphi_dy) const;

  // ---- The laws' accepted state (CouplingLaw, "Accepted state"; call order there) ----
  bool has_stateful_laws() const { return stateful_; }
  // Whether some law's values depend on the macro grid (CouplingLaw::depends_on_macro_grid).
  bool depends_on_macro_grid() const;
  // Every law back to its reference state (the pipeline, at the start of every run, before u0).
  void reset_law_states() const;
  // The initial point with `outputs` and u0 is the first accepted point (CouplingLaw::start).
  void start_couplings(std::span<const std::vector<double>> outputs,
                       std::span<const double> u) const;
  // A macro step was accepted with `outputs` (per subsystem) and coupling variables u there:
  // every stateful law, in law order, accepts its reads and its share of u.
  void accept_couplings(std::span<const std::vector<double>> outputs,
                        std::span<const double> u) const;
  // One array per law (empty for a stateless one), for checkpoints; import takes the same
  // (an empty list means "no law had state": the stateless laws of an older checkpoint).
  // import throws std::invalid_argument when the arrays do not fit the laws.
  std::vector<std::vector<double>> export_law_states() const;
  void import_law_states(const std::vector<std::vector<double>>& states) const;

  // The monitored outputs in a fixed order, and the weight group of each (same order).
  std::span<const MonitoredOutput> monitored_outputs() const { return monitored_; }
  std::span<const control::WeightGroup> monitored_groups() const { return monitored_groups_; }
  // values[j] = the value of monitored output j in `outputs` (size monitored_outputs().size()).
  void gather_monitored(std::span<const std::vector<double>> outputs,
                        std::span<double> values) const;

  // Whether any subsystem has direct feed-through (then consistent_update runs Newton).
  bool has_feedthrough() const { return feedthrough_; }
  // Whether subsystem i's outputs are evaluated at the consistent update's Newton iterates: it
  // has feed-through and does not declare its outputs affine in its inputs (model::Subsystem::
  // outputs_affine_in_inputs). And whether any subsystem's are.
  bool evaluated(std::size_t i) const { return evaluated_.at(i) != 0; }
  bool has_evaluated_outputs() const { return evaluated_any_; }

  // Whether coupling variable c belongs to a constraint law (CouplingLaw::is_constraint): its
  // entry of evaluate_couplings is the constraint residual −g(y), not a value of u. And whether
  // any variable does (then only the implicit and semi-implicit schemes can run the system).
  bool is_constraint(std::size_t c) const { return constraint_.at(c) != 0; }
  bool has_constraints() const { return constraints_; }

  // The consistent update of METHODS §1.1 / D-1 (seed 000 Eq. 2.22): u with
  // g(u) = u − φ(y(u)) = 0 at a macro point, where outputs[i] holds subsystem i's outputs at
  // its end state evaluated with the inputs u_eval (the coupling values its run ended with: the
  // predictor's p(T_{N+1})), and feedthrough[i] its ∂y/∂u there (model::Subsystem::
  // feedthrough_jacobian, column-major; empty for a subsystem without feed-through).
  //  - Without feed-through anywhere: u = φ(y), exactly the operations of evaluate_couplings
  //    (Eq. 2.25; results stay bit-identical), iterations 0.
  //  - Otherwise Newton on g from u = u_eval: J = I − Σ ∂φ/∂y·D (dense n_c × n_c, SUNDIALS'
  //    dense LU), at least one step, until ‖g(u)‖_W ≤ tolerance with W the coupling-variable
  //    weights of `tol` (atol_u, rtol at u), at most max_iterations steps. Not converged if that
  //    fails, J is singular, a value is not finite or an evaluation fails. y(u) at an iterate:
  //     - outputs affine in u only (no evaluated(i)): y_i(u) = y_i + D_i·(u|_i − u_eval|_i), exact;
  //       g is linear, the first step solves it (the second test confirms it at no cost). At
  //       the end u := φ(y(u)) (a variable whose law reads no feed-through output is then φ(y)
  //       exactly) and the outputs are moved to that u.
  //     - otherwise the evaluated subsystems' outputs and D are evaluate()'s at every iterate
  //       after u_eval (one call per Newton step; the others are moved with D as above), so the
  //       test uses the true residual: Newton on the true g, converged to `tolerance`. A variable
  //       whose law reads no feed-through output (φ_c independent of u) is set to φ_c(y) after
  //       each step, exactly; the others keep their last iterate, whose residual was tested. The
  //       returned outputs are y(u) at the returned u: no evaluation after the last test.
  //    On return outputs[i] of feed-through subsystems hold y_i(u) (consistent with the
  //    returned u). `evaluate` may be empty only without evaluated subsystems
  //    (std::invalid_argument).
  // Deterministic: fixed loop orders (contract 1). Sizes must match (std::invalid_argument).
  ConsistentUpdate consistent_update(std::span<std::vector<double>> outputs,
                                     std::span<const std::vector<double>> feedthrough,
                                     std::span<const double> u_eval,
                                     const control::ErrorTolerances& tol, std::span<double> u,
                                     const OutputEvaluator& evaluate, double tolerance = 1e-3,
                                     int max_iterations = 10) const;
  // The same without an evaluator (systems whose feed-through outputs are all affine in u).
  ConsistentUpdate consistent_update(std::span<std::vector<double>> outputs,
                                     std::span<const std::vector<double>> feedthrough,
                                     std::span<const double> u_eval,
                                     const control::ErrorTolerances& tol, std::span<double> u,
                                     double tolerance = 1e-3, int max_iterations = 10) const {
    return consistent_update(outputs, feedthrough, u_eval, tol, u, OutputEvaluator{}, tolerance,
                             max_iterations);
  }

  // The consistent coupling variables at t0 from every subsystem's initial state (with
  // feed-through: consistent_update from u = 0 with the default tolerances for rtol 1e-10,
  // std::runtime_error naming the worst coupling variable if it does not converge). A
  // constraint law's multipliers start where the constraints' time derivatives vanish, ġ = 0
  // (Newton with finite differences; std::runtime_error naming the law if that fails).
  std::vector<double> initial_couplings() const;

  // Subsystem i's inputs from u (size subsystem(i).input_size()): each input the sum of its
  // feeds, added in feed order (a copy for a single feed).
  void gather_inputs(std::size_t i, std::span<const double> u, std::span<double> inputs) const;

 private:
  struct FeedsTag {};
  CoupledSystem(FeedsTag, std::vector<std::unique_ptr<model::Subsystem>> subsystems,
                std::vector<std::unique_ptr<CouplingLaw>> laws, InputFeeds input_feeds,
                std::vector<MonitoredOutput> monitored);
  void check_output(const OutputRef& r, const std::string& what) const;
  // CouplingLaw::start (initial) or accept of every stateful law, in law order.
  void advance_laws(std::span<const std::vector<double>> outputs, std::span<const double> u,
                    bool initial) const;
  // feeds_ and feed_start_ from the constructor's input feeds, checked.
  void index_feeds(const InputFeeds& input_feeds);
  void index_laws();
  void index_monitored();
  // d/dt φ of every law at t0 with inputs u (initial_couplings with constraints).
  void initial_rates(std::span<const double> u, std::span<double> rates) const;
  // The constraint variables of u (the others set) such that the constraints keep holding.
  void initial_multipliers(std::vector<double>& u) const;
  // Newton on the true coupling equations with evaluated outputs (consistent_update).
  ConsistentUpdate evaluated_update(std::span<std::vector<double>> outputs,
                                    std::span<const std::vector<double>> feedthrough,
                                    std::span<const double> u_eval,
                                    const control::ErrorTolerances& tol, std::span<double> u,
                                    const OutputEvaluator& evaluate, double tolerance,
                                    int max_iterations) const;
  // g = u − φ, its weighted norm and worst variable into `result` (consistent_update).
  void coupling_residual(std::span<const double> u, std::span<const double> phi,
                         const control::ErrorTolerances& tol, std::span<double> g,
                         std::span<double> w, ConsistentUpdate& result) const;
  // y(u) of the feed-through subsystems not evaluated from y(u_eval) (consistent_update).
  void shift_outputs(std::span<const std::vector<double>> base,
                     std::span<const std::vector<double>> feedthrough,
                     std::span<const double> u_eval, std::span<const double> u,
                     std::span<std::vector<double>> outputs) const;
  // J = I − Σ ∂φ/∂y·D at `outputs`, dense column-major n_c × n_c.
  void update_jacobian(std::span<const std::vector<double>> outputs,
                       std::span<const std::vector<double>> feedthrough,
                       std::vector<double>& jacobian) const;
  // y_read of `law` from `outputs` into the front of `buffer`.
  static std::span<const double> gather_reads(const CouplingLaw& law,
                                              std::span<const std::vector<double>> outputs,
                                              std::span<double> buffer);

  std::vector<std::unique_ptr<model::Subsystem>> subsystems_;
  std::vector<std::unique_ptr<CouplingLaw>> laws_;
  std::vector<std::size_t> law_offsets_;
  std::vector<std::string> coupling_names_;
  std::vector<std::string> coupling_units_;         // one per coupling_names_ entry
  std::vector<std::string> coupling_descriptions_;  // one per coupling_names_ entry
  std::size_t max_reads_ = 0;  // largest reads() of any law: the gather buffer's size
  // By subsystem: feed_channels(i), and where each input's feeds start in it (input_size() + 1).
  std::vector<std::vector<std::size_t>> feeds_, feed_start_;
  std::vector<MonitoredOutput> monitored_;
  std::vector<control::WeightGroup> monitored_groups_;
  bool feedthrough_ = false;
  std::vector<char> evaluated_;  // by subsystem: evaluated(i)
  bool evaluated_any_ = false;
  // By coupling variable: its law reads an output that may feed through (φ_c depends on u).
  std::vector<char> reads_feedthrough_;
  std::vector<char> constraint_;  // by coupling variable
  bool constraints_ = false;
  bool stateful_ = false;  // some law is_stateful()
};

}  // namespace macrostep::system

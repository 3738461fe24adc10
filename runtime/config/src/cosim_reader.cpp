// [cosim]: the co-simulation's scheme, estimator, corrector, order and step-size keys, each
// checked on its own and then against each other and [simulation] (reader.hpp; the schema is in
// run_config.hpp); and approximation_problem(), which the command line's overrides share.
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "macrostep/corrector/jacobian_registry.hpp"
#include "reader.hpp"

namespace macrostep::config {

namespace detail {

namespace {

// A string among `allowed`; `hints` explain common mistakes (value, hint).
std::string choice_with_hints(
    const Node& n, const std::vector<std::string_view>& allowed,
    const std::vector<std::pair<std::string_view, std::string_view>>& hints) {
  const std::string s = n.string();
  if (std::find(allowed.begin(), allowed.end(), s) != allowed.end()) return s;
  for (const auto& [value, hint] : hints) {
    if (s == value) {
      n.fail(fmt::format("\"{}\" {} (allowed: {})", detail::clipped(s, 80), hint,
                         detail::quoted_list(allowed)));
    }
  }
  n.fail(fmt::format("must be one of {} (got \"{}\")", detail::quoted_list(allowed),
                     detail::clipped(s, 80)));
}

// order_strategy: the strategies a file chooses between ("fixed" is what order = K implies).
std::vector<std::string_view> chosen_order_strategies() {
  std::vector<std::string_view> names = control::order_strategy_names();
  std::erase(names, control::to_string(control::OrderStrategy::kFixed));
  return names;
}

// executor: the executors a file names (the MPI bridge is chosen under mpirun only).
std::vector<std::string_view> file_executor_names() {
  std::vector<std::string_view> names = executor_names();
  std::erase(names, to_string(ExecutorKind::kMpi));
  return names;
}

// A key that belongs to some schemes: the file's is refused here, with its line, where the file's
// scheme does not take it (`fits` false); a --set's is checked where the run's settings are
// resolved (run/settings.cpp), against the scheme the run has, which --scheme may change.
void require_scheme_fits(const Node& v, bool fits, const std::string& problem) {
  if (!fits && !v.from_set()) v.fail(problem);
}

// The keys of the iterative schemes (METHODS §4, §9); each only where it has a meaning.
void read_corrector_keys(const Node& n, CosimConfig& c) {
  for (const char* key :
       {"jacobian", "tau", "max_corrector_passes", "perturbation_min", "omega", "final_pass"}) {
    if (auto v = n.find(key)) {
      require_scheme_fits(*v, c.iterative(),
                          "belongs to the iterative schemes (scheme = \"implicit\", "
                          "\"semi-implicit\" or \"waveform\"); the explicit scheme has no "
                          "corrector");
    }
    if (n.find(key)) c.corrector_keys_given = true;
  }
  c.jacobian_given = n.find("jacobian").has_value();
  c.omega_given = n.find("omega").has_value();
  if (auto v = n.find("jacobian")) {
    require_scheme_fits(*v, c.scheme != CosimScheme::kWaveform,
                        "waveform relaxation needs no interface Jacobian (METHODS §4.6)");
    c.jacobian = v->choice(corrector::JacobianRegistry::instance().names());
  }
  if (auto v = n.find("tau")) c.tau = checked(*v, Domain::kPositive);
  if (auto v = n.find("max_corrector_passes")) {
    c.max_corrector_passes = static_cast<int>(integer_in(*v, 1, 100, ""));
  }
  if (auto v = n.find("perturbation_min")) c.perturbation_min = checked(*v, Domain::kPositive);
  if (auto v = n.find("omega")) {
    require_scheme_fits(*v, c.scheme == CosimScheme::kWaveform,
                        "applies only to scheme = \"waveform\"");
    c.omega = checked(*v, Domain::kPositive);
    if (c.omega >= 1.0) v->fail(fmt::format("must be in (0, 1) (got {})", v->source_text()));
  }
  if (auto v = n.find("final_pass")) {
    require_scheme_fits(*v, c.scheme == CosimScheme::kImplicit || c.scheme == CosimScheme::kAuto,
                        "applies only to scheme = \"implicit\" or \"auto\" (its implicit steps)");
    c.final_pass = v->boolean();
    c.final_pass_given = true;
  }
}

// The [cosim] keys one by one (each checked on its own).
// A name that polynomials::parse_approximation accepts.
polynomials::Approximation approximation(const Node& v) {
  try {
    return polynomials::parse_approximation(v.string());
  } catch (const std::invalid_argument& e) {
    v.fail(e.what());
  }
}

// sequence = [2, 1]: Gauss–Seidel's order, 1-based subsystem numbers, each at most once (that it
// names every subsystem is checked where the system is built).
void read_sequence(const Node& v, CosimConfig& c) {
  require_scheme_fits(v, c.scheme == CosimScheme::kGaussSeidel,
                      "applies only to scheme = \"gauss-seidel\"");
  if (!v.is_array()) {
    v.fail(fmt::format("must be an array of subsystem numbers (1-based; got {})", v.describe()));
  }
  c.sequence.clear();
  for (const Node& item : v.elements()) {
    const auto i = static_cast<std::size_t>(
        integer_in(item, 1, static_cast<std::int64_t>(kMaxSubsystems), "the subsystem limit"));
    if (std::find(c.sequence.begin(), c.sequence.end(), i - 1) != c.sequence.end()) {
      item.fail(fmt::format("subsystem {} appears twice", i));
    }
    c.sequence.push_back(i - 1);
  }
  if (c.sequence.empty()) v.fail("must name the subsystems in the order they run");
  c.sequence_line = v.line();
}

void read_cosim_keys(const Node& n, CosimConfig& c) {
  if (auto v = n.find("scheme")) {
    c.scheme = *parse_scheme(v->choice(scheme_names()));
  }
  c.estimator = default_estimator(c.scheme);
  if (auto v = n.find("estimator")) {
    const std::string e = choice_with_hints(
        *v, control::estimator_names(),
        {{"exH", "is the fixed macro step: write estimator = \"none\" with step_size = H"}});
    c.estimator = *control::parse_estimator(e);
    c.estimator_given = true;
    require_scheme_fits(
        *v, estimator_fits(c.scheme, c.estimator),
        fmt::format("\"{}\" does not belong to scheme = \"{}\" (allowed: {}{})", e,
                    to_string(c.scheme), detail::quoted_list(fitting_estimator_names(c.scheme)),
                    c.scheme == CosimScheme::kGaussSeidel ? " (METHODS D-10)" : ""));
  }
  read_corrector_keys(n, c);
  const auto order = n.find("order");
  if (order) {
    if (order->is_string()) {
      if (order->string() != "auto") {
        order->fail(fmt::format("must be \"auto\" or an integer 0..{} (got \"{}\")", kMaxCosimOrder,
                                detail::clipped(order->string(), 80)));
      }
      c.order = OrderSetting::auto_order();
    } else if (order->is_integer()) {
      c.order = OrderSetting::fixed(static_cast<int>(integer_in(*order, 0, kMaxCosimOrder, "")));
    } else {
      order->fail(fmt::format("must be \"auto\" or an integer 0..{} (got {})", kMaxCosimOrder,
                              order->describe()));
    }
  }
  const auto strategy = n.find("order_strategy");
  if (strategy) {
    c.order_strategy = *control::parse_order_strategy(strategy->choice(chosen_order_strategies()));
  }
  const auto step = n.find("step_size");
  if (step) c.step_size = checked(*step, Domain::kPositive);
  if (auto v = n.find("rtol")) {
    c.rtol = checked(*v, Domain::kPositive);
    if (c.rtol >= 1.0) v->fail(fmt::format("must be < 1 (got {})", v->source_text()));
  }
  if (auto v = n.find("atol_pos")) c.atol_pos = checked(*v, Domain::kPositive);
  if (auto v = n.find("atol_vel")) c.atol_vel = checked(*v, Domain::kPositive);
  if (auto v = n.find("atol_u")) c.atol_u = checked(*v, Domain::kPositive);
  if (auto v = n.find("safety")) c.safety = checked(*v, Domain::kPositive);
  if (auto v = n.find("r_min")) {
    c.r_min = checked(*v, Domain::kPositive);
    if (c.r_min > 1.0) v->fail(fmt::format("must be <= 1 (got {})", v->source_text()));
  }
  if (auto v = n.find("r_max")) c.r_max = at_least(*v, 1.0);
  if (auto v = n.find("dead_zone")) c.dead_zone = v->boolean();
  const auto h_max = n.find("h_max");
  if (h_max) c.h_max = checked(*h_max, Domain::kPositive);
  if (auto v = n.find("prediction_ratio_limit")) {
    c.prediction_ratio_limit = checked(*v, Domain::kNonNegative);
    if (c.prediction_ratio_limit > 0.0 && c.prediction_ratio_limit < 1.0) {
      v->fail(
          fmt::format("must be 0 (off) or >= 1 (got {}): below 1 it would raise the estimate "
                      "of every smooth step",
                      v->source_text()));
    }
    c.prediction_ratio_limit_given = true;
  }
  const auto predictor = n.find("predictor");
  if (predictor) {
    c.predictor = *parse_predictor(predictor->choice(predictor_names()));
  }
  if (auto v = n.find("approximation")) c.approximation = approximation(*v);
  const auto points = n.find("least_squares_points");
  if (points) {
    c.least_squares_points = static_cast<int>(integer_in(*points, 2, kMaxLeastSquaresPoints, ""));
  }
  if (auto v = n.find("jump_handling")) {
    c.jump_handling = *runner::parse_jump_policy(v->choice(runner::jump_policy_names()));
  }
  if (auto v = n.find("min_micro_steps")) {
    c.min_micro_steps = static_cast<int>(integer_in(*v, 0, 1000, ""));
    if (*c.min_micro_steps == 1) {
      v->fail("must be 0 (no limit) or 2..1000 (got 1: one micro step per macro step is no limit)");
    }
  }
  if (auto v = n.find("output_every")) {
    c.output_every =
        static_cast<int>(integer_in(*v, 1, std::numeric_limits<std::int32_t>::max(), ""));
  }
  if (auto v = n.find("sequence")) read_sequence(*v, c);
  if (auto v = n.find("gauss_seidel")) {
    require_scheme_fits(*v, c.scheme == CosimScheme::kGaussSeidel,
                        "applies only to scheme = \"gauss-seidel\"");
    c.gauss_seidel = *parse_gauss_seidel_end_value(v->choice(gauss_seidel_end_value_names()));
    c.gauss_seidel_given = true;
  }
  if (auto v = n.find("executor")) {
    const std::string e = choice_with_hints(
        *v, file_executor_names(),
        {{"mpi",
          "is chosen on the command line of an MPI job (mpirun -np R macrostep run "
          "CONFIG --executor mpi)"}});
    c.executor = *config::parse_executor(e);
    c.executor_given = true;
  }
  if (auto v = n.find("threads")) c.threads = static_cast<int>(integer_in(*v, 0, 4096, ""));
}

// The [cosim] keys against each other and against [simulation].
void check_cosim_combinations(const Node& n, CosimConfig& c, const ParseState& state) {
  const auto order = n.find("order");
  const auto strategy = n.find("order_strategy");
  const auto step = n.find("step_size");
  const auto h_max = n.find("h_max");
  const auto points = n.find("least_squares_points");
  if (c.fixed_step()) {
    if (!step) {
      n.require("estimator")
          .fail("\"none\" (a fixed macro step) needs the step size: give cosim.step_size = H");
    }
    if (order && c.order->automatic) {
      order->fail(
          "\"auto\" (order control) needs an error estimator; with estimator = \"none\" give "
          "the fixed degree, an integer 0..5");
    }
    for (const char* key : {"rtol", "atol_pos", "atol_vel", "atol_u", "safety", "r_min", "r_max",
                            "dead_zone", "h_max", "order_strategy"}) {
      const auto v = n.find(key);
      if (!v) continue;
      // A --set (no line) may go with --estimator or --scheme, which the run's settings apply
      // later: they check it (run::resolve_cosim).
      if (v->line() == 0) {
        c.controller_keys_set.emplace_back(key);
        continue;
      }
      if (c.uses_at_fixed_step(key)) continue;
      v->fail(controller_key_without_estimator("estimator = \"none\""));
    }
    const double rows = state.config.simulation.end_time / (*c.step_size * c.output_every);
    if (rows > kMaxOutputRows) {
      step->fail(fmt::format(
          "gives {:.3g} output rows over end_time = {} (at most {:.3g}); raise output_every", rows,
          fmt_number(state.config.simulation.end_time), kMaxOutputRows));
    }
  } else {
    if (strategy && !c.effective_order().automatic) {
      strategy->fail(fmt::format(
          "applies only to order = \"auto\"; order = {} is a fixed degree without order control",
          c.order->kappa));
    }
    if (h_max && step && *c.h_max < *c.step_size) {
      h_max->fail(fmt::format("must be >= step_size = {} (got {})", fmt_number(*c.step_size),
                              h_max->source_text()));
    }
  }
  if (points) {
    if (c.predictor != PredictorKind::kLeastSquares) {
      points->fail("applies only to predictor = \"least_squares\"");
    }
    const int highest = c.highest_order();
    if (c.least_squares_points <= highest + 1) {
      points->fail(fmt::format(
          "must be > {} + 1 = {} (got {}): the fit needs more points than the degree-{} "
          "polynomial has coefficients",
          c.effective_order().automatic ? "kappa_max" : "order", highest + 1,
          c.least_squares_points, highest));
    }
  }
}

}  // namespace

void read_cosim(const Node* node, ParseState& state) {
  if (node == nullptr) return;
  const Node& n = *node;
  n.expect_table();
  n.allow_only(keys_of(Table::kCosim));
  CosimConfig& c = state.config.cosim;
  c.given = true;
  c.line = n.line();
  read_cosim_keys(n, c);
  check_cosim_combinations(n, c, state);
  if (auto v = n.find("approximation")) {
    const std::string problem = approximation_problem(c.approximation, c);
    if (!problem.empty()) v->fail(problem);
  }
}

// Each [[connection]]'s own approximation against [cosim] (which is parsed after them).
void check_connection_approximations(const ParseState& state) {
  const RunConfig& config = state.config;
  if (!config.system_description) return;
  const auto& connections = config.system_description->connections;
  for (std::size_t k = 0; k < connections.size(); ++k) {
    if (connections[k].approximation.empty()) continue;
    const std::string problem = approximation_problem(
        polynomials::parse_approximation(connections[k].approximation), config.cosim);
    if (!problem.empty()) {
      throw ConfigError(config.path, connections[k].approximation_line,
                        fmt::format("connection[{}].approximation", k + 1), problem);
    }
  }
}

}  // namespace detail

std::string approximation_problem(const polynomials::Approximation& a, const CosimConfig& c) {
  using polynomials::ApproximationKind;
  if (a.is_lagrange()) return "";
  if (c.iterative()) {
    return fmt::format(
        "\"{}\" applies to the explicit scheme only (scheme = \"{}\"): the iterative schemes "
        "extrapolate with Lagrange polynomials (METHODS D-7, D-8)",
        a.name, to_string(c.scheme));
  }
  if (c.predictor == PredictorKind::kLeastSquares) {
    return fmt::format("\"{}\" does not combine with predictor = \"least_squares\"", a.name);
  }
  const bool continuous = a.kind == ApproximationKind::kC0 || a.kind == ApproximationKind::kC1;
  if (continuous) {
    if (c.estimator != control::Estimator::kNone && c.estimator != control::Estimator::kExCV) {
      return fmt::format(
          "\"{}\" needs estimator = \"none\" (fixed H) or \"exCV\" (got \"{}\"): the "
          "state estimators assume a polynomial through the newest point (METHODS D-7)",
          a.name, to_string(c.estimator));
    }
    const OrderSetting o = c.effective_order();
    if (o.automatic || o.kappa > 3) {
      return fmt::format("\"{}\" needs a fixed degree k = order of 0..3 (seed 001; got {})", a.name,
                         o.automatic ? std::string("\"auto\"") : std::to_string(o.kappa));
    }
    return "";
  }
  if (c.estimator != control::Estimator::kNone) {
    return fmt::format(
        "\"{}\" is a seed-003 set for a constant macro step: it needs estimator = \"none\" "
        "(got \"{}\"; METHODS D-8)",
        a.name, to_string(c.estimator));
  }
  return "";
}

}  // namespace macrostep::config

// [solver], [simulation], [output], [executor] and the description, and the checked number
// readers every section uses (reader.hpp; the schema is in run_config.hpp).
#include <fmt/format.h>

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "reader.hpp"
#include "system_config.hpp"

namespace macrostep::config::detail {

std::string fmt_number(double v) {
  return fmt::format("{}", v);
}

double checked(const Node& n, Domain domain) {
  const double v = n.number();
  if (domain == Domain::kPositive && !(v > 0.0)) {
    n.fail(fmt::format("must be > 0 (got {})", n.source_text()));
  }
  if (domain == Domain::kNonNegative && !(v >= 0.0)) {
    n.fail(fmt::format("must be >= 0 (got {})", n.source_text()));
  }
  return v;
}

double at_least(const Node& n, double lower) {
  const double v = n.number();
  if (!(v >= lower)) n.fail(fmt::format("must be >= {} (got {})", lower, n.source_text()));
  return v;
}

std::int64_t integer_in(const Node& n, std::int64_t lo, std::int64_t hi, std::string_view hi_name) {
  const std::int64_t v = n.integer();
  if (v < lo) n.fail(fmt::format("must be >= {} (got {})", lo, v));
  if (v > hi) {
    n.fail(hi_name.empty() ? fmt::format("must be <= {} (got {})", hi, v)
                           : fmt::format("must be <= {} = {} (got {})", hi_name, hi, v));
  }
  return v;
}

void read_solver(const Node* node, ParseState& state) {
  if (node == nullptr) return;
  node->expect_table();
  node->allow_only(keys_of(Table::kSolver));  // micro_step_stop is not a [[subsystem]] key
  state.config.solver = with_override(state.config.solver, detail::solver_keys(*node));
  if (auto v = node->find("micro_step_stop")) {
    state.config.solver.micro_step_stop =
        *parse_micro_step_stop(v->choice(micro_step_stop_names()));
    state.config.solver.micro_step_stop_line = v->line();
  }
}

void read_simulation(const Node* node, ParseState& state) {
  const Node& n = *node;
  n.expect_table();
  n.allow_only(keys_of(Table::kSimulation));
  SimulationConfig& s = state.config.simulation;
  const Node end_time = n.require("end_time");
  s.end_time = checked(end_time, Domain::kPositive);
  if (s.end_time < kMinEndTime) {
    end_time.fail(fmt::format("must be at least {:g} s (got {:g})", kMinEndTime, s.end_time));
  }
  const Node interval = n.require("output_interval");
  s.output_interval = checked(interval, Domain::kPositive);
  const double rows = s.end_time / s.output_interval;
  if (rows > kMaxOutputRows) {
    interval.fail(fmt::format("gives {:.3g} output rows over end_time = {}; at most {:.3g}", rows,
                              fmt_number(s.end_time), kMaxOutputRows));
  }
}

void read_output(const Node* node, ParseState& state) {
  if (node == nullptr) return;
  const Node& n = *node;
  n.expect_table();
  n.allow_only(keys_of(Table::kOutput));
  OutputConfig& o = state.config.output;
  if (auto v = n.find("file")) {
    o.file = v->string();
    if (o.file.empty()) v->fail("must not be empty");
  }
  if (auto v = n.find("all_states")) o.all_states = v->boolean();
  if (auto v = n.find("rows")) {
    o.rows = *parse_row_times(v->choice(row_times_names()));
    o.rows_line = v->line();
  }
  if (auto v = n.find("checkpoint_every")) {
    // Seconds as a number, or the command line's text ("30s", "500steps").
    if (!v->is_string() && !v->is_number()) {
      v->fail(fmt::format(
          "must be seconds (a number) or a string such as \"30s\" or \"500steps\" (got {})",
          v->describe()));
    }
    o.checkpoint_every = v->is_string() ? v->string() : v->source_text();
    if (!v->is_string()) (void)checked(*v, Domain::kPositive);
    if (o.checkpoint_every.empty()) v->fail("must not be empty");
    o.checkpoint_every_line = v->line();
  }
  if (auto v = n.find("checkpoint")) {
    o.checkpoint = v->string();
    if (o.checkpoint.empty()) v->fail("must not be empty");
    o.checkpoint_line = v->line();
  }
}

void read_executor(const Node* node, ParseState& state) {
  if (node == nullptr) return;
  const Node& n = *node;
  n.expect_table();
  n.allow_only(keys_of(Table::kExecutor));
  if (auto v = n.find("handshake_timeout")) {
    const double seconds = checked(*v, Domain::kPositive);
    if (seconds > 1e6) v->fail(fmt::format("must be <= 1e6 s (got {})", v->source_text()));
    state.config.executor.handshake_timeout = seconds;
  }
  if (auto v = n.find("processes")) {
    // An integer, or one of the words; the command line's --processes takes the same text.
    if (!v->is_integer() && !v->is_string()) {
      v->fail(fmt::format("must be {} (got {})", placement::kProcessCountValues, v->describe()));
    }
    try {
      state.config.executor.processes =
          placement::parse_process_count(v->is_string() ? v->string() : v->source_text());
    } catch (const std::invalid_argument& e) {
      v->fail(e.what());
    }
  }
  if (auto v = n.find("ranks")) {
    auto& ranks = state.config.executor.ranks;
    for (const auto& item : v->elements()) {
      ranks.push_back(static_cast<int>(integer_in(item, 1, 1 << 20, "")));
    }
    if (ranks.empty()) v->fail("must name a rank per subsystem (got an empty list)");
    state.config.executor.ranks_line = v->line();
  }
}

void read_description(const Node* node, ParseState& state) {
  if (node != nullptr) state.config.description = node->string();
}

SolverOverride solver_keys(const Node& n) {
  SolverOverride s;
  if (auto v = n.find("rtol")) {
    s.rtol = checked(*v, Domain::kPositive);
    if (*s.rtol >= 1.0) v->fail(fmt::format("must be < 1 (got {})", v->source_text()));
  }
  if (auto v = n.find("atol_pos")) s.atol_pos = checked(*v, Domain::kPositive);
  if (auto v = n.find("atol_vel")) s.atol_vel = checked(*v, Domain::kPositive);
  if (auto v = n.find("linear_solver")) {
    s.linear_solver = *ida::parse_linear_solver(v->choice(ida::linear_solver_names()));
  }
  if (auto v = n.find("max_order")) s.max_order = static_cast<int>(integer_in(*v, 1, 5, ""));
  if (auto v = n.find("max_steps")) {
    s.max_steps =
        static_cast<long>(integer_in(*v, 1, std::numeric_limits<std::int32_t>::max(), ""));
  }
  return s;
}

}  // namespace macrostep::config::detail

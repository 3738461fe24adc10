// `macrostep local-error` (local_error_command.hpp).
#include "local_error_command.hpp"

#include <fmt/format.h>

#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "macrostep/config/run_config.hpp"
#include "macrostep/run/local_error.hpp"
#include "usage.hpp"

namespace macrostep::app {

namespace {

// "1e-4,5e-5,2.5e-5": the numbers of a comma-separated list (UsageError naming the flag).
std::vector<double> number_list(const std::string& text, const char* flag) {
  std::vector<double> out;
  std::stringstream in(text);
  std::string word;
  while (std::getline(in, word, ',')) {
    std::size_t used = 0;
    double h = 0.0;
    try {
      h = std::stod(word, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != word.size()) {
      throw UsageError(fmt::format("{}: '{}' is not a number", flag, word));
    }
    out.push_back(h);
  }
  return out;
}

}  // namespace

void add_local_error_options(CLI::App& cmd, LocalErrorArgs& args) {
  RunArgs& r = args.run;
  cmd.add_option("CONFIG", r.config, "run configuration (TOML)")->required();
  add_set_option(cmd, r.sets);
  cmd.add_option("--step-sizes", args.step_sizes,
                 "macro-step sizes H1,H2,... [s] (at least two): one step of each from T")
      ->required();
  cmd.add_option("--at", args.at,
                 "start times T1,T2,... [s]: a step starts at each, the past samples T - jH the "
                 "approximation reads and the states at T from the reference (T - jH >= 0); a "
                 "group's error is the largest over them")
      ->required();
  r.scheme_opt = cmd.add_option("--scheme", r.scheme,
                                "explicit (Jacobi, default) | gauss-seidel (the configuration's "
                                "[cosim] scheme unless given)");
  r.order_opt = cmd.add_option("--order", r.order,
                               "polynomial degree K = 0..5 (the degree k of c0/c1); fixed");
  r.approximation_opt = cmd.add_option(
      "--approximation", r.approximation,
      "coupling variables on the step, for every connection: lagrange | c0 | c1 | a seed-003 "
      "set such as const-2-2-b0, lin-2-3-opt");
  cmd.add_option("--tolerance", args.tolerance,
                 "IDA rtol of the reference and of the step's subsystems (atol_pos 1e-3 of it, "
                 "atol_vel equal; default 1e-12)");
}

int local_error_command(const LocalErrorArgs& args, const std::string& command_line) {
  run::LocalErrorOptions o;
  o.cosim = cosim_options(args.run, command_line);
  o.step_sizes = number_list(args.step_sizes, "--step-sizes");
  o.at = number_list(args.at, "--at");
  o.tolerance = args.tolerance;
  const config::RunConfig config = config::load_config(args.run.config, args.run.sets);
  const run::LocalErrorResult result = run::local_error(config, o);
  run::print_local_error(std::cout, result);
  return 0;
}

}  // namespace macrostep::app

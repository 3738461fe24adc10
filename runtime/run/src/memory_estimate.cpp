#include "memory_estimate.hpp"

#include <fmt/format.h>

#include <string>

#include "macrostep/run/monolithic.hpp"

namespace macrostep::run {

void check_memory(const config::RunConfig& config, std::size_t copies) {
  // config.chain.masses is 0 without [model].
  const std::string problem = config::memory_problem(config.chain.masses, copies);
  if (!problem.empty()) throw SetupError(fmt::format("{}: {}", config.path, problem));
}

}  // namespace macrostep::run

// The chain syntax ([model] + [partition]) lowered into the configuration's system description
// (run_config.hpp, system/chain_system.hpp), and the memory check that guards it.
#include "chain_lowering.hpp"

#include <fmt/format.h>

#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>

#include "macrostep/config/model_memory.hpp"
#include "macrostep/system/chain_system.hpp"

namespace macrostep::config {

std::optional<std::uint64_t> available_memory() {
  std::ifstream in("/proc/meminfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("MemAvailable:", 0) != 0) continue;
    std::istringstream fields(line.substr(13));
    std::uint64_t kib = 0;
    if (fields >> kib) return kib * 1024;
  }
  return std::nullopt;
}

std::string memory_problem(std::uint64_t masses, std::size_t copies) {
  const std::uint64_t needed = masses * kBytesPerMass * copies;
  const auto available = available_memory();
  if (!available || needed <= *available) return "";
  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  return fmt::format(
      "model.masses = {} needs about {:.1f} GiB of memory ({} cop{} of the model at ~{:.1f} KiB "
      "per mass), but only {:.1f} GiB are available (MemAvailable); use fewer masses",
      masses, static_cast<double>(needed) / kGiB, copies, copies == 1 ? "y" : "ies",
      static_cast<double>(kBytesPerMass) / 1024.0, static_cast<double>(*available) / kGiB);
}

namespace detail {

void lower_chain(RunConfig& config, unsigned masses_line) {
  if (const std::string problem = memory_problem(config.chain.masses, 1); !problem.empty()) {
    throw ConfigError(config.path, masses_line, "", problem);
  }
  std::shared_ptr<const library::ChainParameters> params;
  try {
    params = std::make_shared<const library::ChainParameters>(library::realize(config.chain));
  } catch (const std::invalid_argument& e) {
    throw ConfigError(config.path, 0, "model", e.what());
  }
  config.system_description = system::chain_description(params, config.partition.boundaries);
  config.system_description->chain->seed = config.chain.seed;
}

}  // namespace detail

void set_partition(RunConfig& config, const std::vector<std::size_t>& boundaries) {
  if (!config.system_description || !config.system_description->chain) {
    throw ConfigError(config.path, 0, "subsystem",
                      "the file describes a system of subsystems, not a [model] chain");
  }
  system::ChainOrigin& origin = *config.system_description->chain;
  const std::uint64_t seed = origin.seed;
  system::SystemDescription d = system::chain_description(origin.params, boundaries);
  d.chain->seed = seed;
  config.system_description = std::move(d);
  config.partition.boundaries = boundaries;
}

}  // namespace macrostep::config

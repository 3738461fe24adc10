// The chain syntax lowered into a system description (private to macrostep_config).
#pragma once

#include "macrostep/config/run_config.hpp"

namespace macrostep::config::detail {

// Sets config.system_description to the chain of config.chain cut at config.partition
// (system::chain_description) with the chain's seed. Throws ConfigError when the chain does not
// fit in memory (at `masses_line`, the line of model.masses) or the library rejects it.
void lower_chain(RunConfig& config, unsigned masses_line);

}  // namespace macrostep::config::detail

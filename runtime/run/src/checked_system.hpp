// The coupled system of a run's configuration, built and checked (private to the run library).
#pragma once

#include <vector>

#include "macrostep/config/run_config.hpp"
#include "macrostep/library/model_description.hpp"
#include "macrostep/run/settings.hpp"
#include "macrostep/schemes/pipeline.hpp"
#include "macrostep/system/coupled_system.hpp"

namespace macrostep::run {

// The coupled system of `config` (the cut chain, or the system description) with every check
// that needs the built system, the description of each subsystem for its worker process
// (`models`) and the scheme's options for the system (`scheme_options`: settings.scheme with the
// coupling variables' approximations). Throws SetupError before any file is written. May narrow
// `settings` (a joint's order limit). Prints the pre-run stability warning of a fixed step
// outside the linearised system's stable band (stability_check.hpp) to stderr.
system::CoupledSystem checked_system(const config::RunConfig& config, CosimSettings& settings,
                                     std::vector<library::ModelDescription>& models,
                                     schemes::SchemeOptions& scheme_options);

}  // namespace macrostep::run

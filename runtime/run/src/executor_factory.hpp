// The executor a run's settings ask for (private to the run library): in-process, one process
// per subsystem, or the MPI bridge.
#pragma once

#include <cstddef>
#include <memory>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "macrostep/executors/executor.hpp"
#include "macrostep/library/model_description.hpp"
#include "macrostep/run/settings.hpp"
#include "macrostep/system/coupled_system.hpp"

namespace macrostep::run {

// The parallel runs of one subsystem in a pass (contract 4: 1 + k PUs): the nominal run, plus
// the comparison run of exLE/exMD, or one perturbed run per input of the fd Jacobian
// (`max_inputs`: the most inputs of any subsystem; METHODS §4.1 "Cores").
std::size_t runs_per_subsystem(const CosimSettings& settings, std::size_t max_inputs);

// The executor of the settings for `system`, every subsystem at its initial state with the
// coupling variables u0. The process executor's placement (contract 4: the master one PU, every
// worker 1 + k PUs, k its extra runs) goes into meta["placement"] and `placement` (text); the
// MPI bridge's per rank and node. A recovered worker failure is told on stderr when it happens
// and appended to meta["recoveries"]: `meta` must outlive the executor. `models` describes every
// subsystem for its worker process.
std::unique_ptr<executors::Executor> make_executor(
    const CosimSettings& settings, const system::CoupledSystem& system,
    const std::vector<library::ModelDescription>& models, std::span<const double> u0,
    nlohmann::ordered_json& meta, std::string& placement);

}  // namespace macrostep::run

// The settings of a co-simulation run: the command line's overrides (CosimOptions) and what a
// run uses after the overrides are applied to the configuration and checked together
// (CosimSettings, resolve_cosim). Everything a user can get wrong here is refused before
// anything starts (SetupError or config::ConfigError naming the flag or file:line:key).
#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "macrostep/checkpoint/checkpoint.hpp"
#include "macrostep/config/run_config.hpp"
#include "macrostep/executors/executor_options.hpp"
#include "macrostep/executors/in_process_executor.hpp"
#include "macrostep/executors/process_executor.hpp"
#include "macrostep/library/model_description.hpp"
#include "macrostep/placement/placement.hpp"
#include "macrostep/run/interrupt.hpp"
#include "macrostep/run/monolithic.hpp"
#include "macrostep/schemes/pipeline.hpp"
#include "macrostep/system/coupled_system.hpp"

namespace macrostep::run {

class RunObserver;

// What the MPI bridge's executor is built from (--executor mpi).
struct BridgeRequest {
  const system::CoupledSystem* system = nullptr;
  std::span<const library::ModelDescription> models;
  std::span<const double> u0;
  executors::ProcessOptions workers;  // every node agent's process executor (no cpusets)
  std::string pin;                    // --pin, planned per node
  std::size_t pus_per_subsystem = 1;
};

// The MPI bridge of rank 0 of an MPI job (--executor mpi), given by the command line, which owns
// MPI (the schemes do not depend on it). make() builds the executor and fills the placement's
// metadata and text.
struct MpiBridge {
  std::function<std::unique_ptr<executors::Executor>(
      const BridgeRequest&, nlohmann::ordered_json& placement_json, std::string& placement_text)>
      make;
};

// Command-line overrides of the configuration; unset members keep the configured value.
struct CosimOptions {
  std::optional<config::CosimScheme> scheme;        // --scheme
  std::optional<std::string> jacobian;              // --jacobian: a registry name
  std::optional<control::Estimator> estimator;      // --estimator
  std::optional<config::OrderSetting> order;        // --order K|auto
  std::optional<runner::JumpPolicy> jump_handling;  // --jump-handling
  std::optional<int> min_micro_steps;               // --min-micro-steps
  // --approximation: every coupling variable's approximation ([cosim] and [[connection]]s).
  std::optional<polynomials::Approximation> approximation;
  std::optional<double> rtol;       // --rtol: the controller's rtol; unset atols follow it
  std::optional<double> step_size;  // --step-size: fixed H (estimator none) or H_init
  std::optional<int> threads;       // --threads
  std::optional<config::ExecutorKind> executor;  // --executor inprocess|processes|mpi
  // --executor mpi: the bridge (set with it; without it --executor mpi is a SetupError).
  std::optional<MpiBridge> mpi;
  std::string pin = "none";  // --pin none|compact|scatter|LIST (process executor; contract 4)
  std::optional<double> hang_timeout;       // --hang-timeout [s] (process executor; 0: off)
  std::optional<double> handshake_timeout;  // --handshake-timeout [s] (process executor)
  bool master_hosts_first = false;          // --master-hosts-first (process executor)
  std::optional<int> max_restarts;          // --max-restarts (process executor)
  // --processes N|auto|per-subsystem (process executor; placement::parse_process_count)
  std::optional<std::string> processes;
  std::optional<double> stop_time;  // --stop-time (> 0)
  std::string output_file;          // --output; empty: config::default_output_file()
  bool replace_files = false;       // as MonolithicOptions::replace_files
  bool all_states = false;          // --all-states, OR-ed with [output].all_states
  MonolithicOptions::Progress progress = MonolithicOptions::Progress::kAuto;
  std::string command_line;        // recorded in the metadata
  const StopFlag* stop = nullptr;  // interrupt.hpp: checked after every macro step
  // Checkpoints (checkpoint/checkpoint.hpp): --checkpoint-every writes one every so
  // many seconds or accepted macro steps, and a final one when `stop` is set, to
  // checkpoint_path (--checkpoint; empty: checkpoint::default_path of the CSV). Unset: only the
  // final one, where the run can have one (a CSV result; CosimSettings::final_checkpoint);
  // RunInterrupted::checkpoint() names it, or checkpoint_problem() says why there is none.
  std::optional<checkpoint::Interval> checkpoint_every;
  std::string checkpoint_path;
  std::vector<std::string> arguments;  // the words after `macrostep run`, kept in checkpoints
  // `macrostep resume`: continue this checkpoint (read from checkpoint_path; `config` is its
  // configuration, the options its arguments with output_file = resume->csv_path). The CSV is
  // cut to the checkpoint's output position and continued; the result is bit-identical to the
  // run that wrote it continuing undisturbed. A checkpoint that does not fit its configuration
  // or its CSV throws checkpoint::CheckpointError before any step.
  const checkpoint::Checkpoint* resume = nullptr;
  // The caller's own observers of the run (observer.hpp), notified after the run's own (the
  // result row of a point is written when they see it); not owned, they must outlive the run.
  std::vector<RunObserver*> observers;
  // The program the process executor starts as its workers (`PROGRAM worker ...`): a build of
  // the `macrostep` command of this version. Empty: this process's own executable, which is
  // right for the command itself; a host program that is not `macrostep` (the Python package)
  // names the binary here.
  std::string worker_executable;
};

// The jump handling of a run whose configuration and command line name none: the history
// shifted to the new polynomial and at least two micro steps per macro step (methods.md §2.2);
// with [solver] micro_step_stop = "overshoot", which allows no other, the history kept.
inline constexpr runner::JumpOptions kDefaultJumps{runner::JumpPolicy::kShift, 2};
inline constexpr runner::JumpOptions kOvershootJumps{runner::JumpPolicy::kKeep, 0};

// Everything a run needs, after overrides and checks.
struct CosimSettings {
  config::CosimConfig cosim;            // the [cosim] values in effect (overrides applied)
  schemes::SchemeOptions scheme;        // controller, predictor
  executors::ExecutorOptions executor;  // what every executor shares (executor_options.hpp)
  // The executor in effect (cosim.executor is resolved: without --executor and cosim.executor
  // it is `processes`, one process per subsystem); its solver, rollback and threads (threads
  // of each worker) come from `executor` above.
  std::string worker_executable = "/proc/self/exe";
  placement::PinRequest pin;  // placement of the master and the worker processes
  // Seconds without a model evaluation after which a worker counts as hung (contract 5);
  // 0: never. ProcessOptions::hang_timeout.
  double hang_timeout = 60.0;
  // Seconds a worker may take to report ready ([executor] handshake_timeout or
  // --handshake-timeout); unset: handshake_timeout_for() of the largest subsystem.
  std::optional<double> handshake_timeout;
  // The master runs subsystem 1 (ProcessOptions::host_first_subsystem), on its PUs.
  bool master_hosts_first = false;
  // Worker crashes or hangs the run recovers from (ProcessOptions::max_restarts); 0: none.
  unsigned max_restarts = 0;
  // The worker processes of the process executor (--processes, else [executor] processes,
  // else auto); the factory forms the groups (ProcessOptions::groups).
  placement::ProcessCount processes{placement::ProcessCount::Kind::kAuto, 0};
  std::optional<MpiBridge> mpi;  // CosimOptions::mpi
  double end_time = 0.0;
  bool all_states = false;
  // Where the result rows are ([output] rows, or the default for the system; output_rows.hpp):
  // with kGrid executor.output_interval is the grid's interval.
  config::RowTimes rows = config::RowTimes::kMacroPoints;
  // [[connection]] approximations in effect, by connection (empty: cosim.approximation); all
  // empty when --approximation is given.
  std::vector<std::string> connection_approximations;
  // Checkpoints in effect: --checkpoint-every, else [output] checkpoint_every; and the file,
  // --checkpoint, else [output] checkpoint (empty: beside the result file).
  std::optional<checkpoint::Interval> checkpoint_every;
  std::string checkpoint_path;
  // Without checkpoint_every: why this run cannot write a final checkpoint when a signal stops
  // it (a scheme option that an export does not carry); empty: it writes one.
  std::string no_final_checkpoint;
};

// Applies the overrides and checks their combination with the configuration. Throws
// config::ConfigError (the partition has one subsystem) or SetupError naming the flag (e.g.
// "--estimator none needs a fixed macro-step size") before any work starts.
// The default handshake timeout: 10 s plus 100 us per state of the largest subsystem (a
// worker builds its model, its integrator and the sparse Jacobian's symbolic analysis before
// it reports ready; 3e6 masses take minutes).
double handshake_timeout_for(std::size_t largest_subsystem_states);

CosimSettings resolve_cosim(const config::RunConfig& config, const CosimOptions& options);

// "auto" or the fixed degree κ of an order setting (messages, metadata).
std::string order_text(const config::OrderSetting& order);

}  // namespace macrostep::run

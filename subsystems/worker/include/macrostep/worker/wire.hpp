// The runner's side of the wire protocol (ipc/.../protocol.hpp): how a step's polynomials are
// packed into an ipc::StepCommand and unpacked, and how a runner's results become an
// ipc::StepReply and are read back. The one encoder and the one decoder: the worker process, the
// MPI node agent, the process executor and the MPI executor all call these functions, so no two
// places can write or read a reply differently.
//
// They live here and not in ipc/ because they speak the runner's types (model::SupportPoints,
// runner::ExtraRun, runner::RunResult, ida::AdvanceStats), which ipc/ does not know: ipc/ stays at
// the bottom of the dependency graph, and this folder is one that the worker (subsystems) and the
// executors and node agent (runtime) can both use without a dependency going upwards.
//
// All functions are free of shared state; each call reads or writes only its arguments.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>
#include <vector>

#include "macrostep/ida/integrator.hpp"
#include "macrostep/ipc/protocol.hpp"
#include "macrostep/model/support_points.hpp"
#include "macrostep/runner/subsystem_runner.hpp"

namespace macrostep::worker {

static_assert(ipc::kMaxNodes == model::SupportPoints::kMaxNodes);
static_assert(ipc::kMaxChannels == model::SupportPoints::kMaxChannels);
static_assert(sizeof(ida::AdvanceStats) <= ipc::kStatsDoubles * sizeof(double));
static_assert(std::is_trivially_copyable_v<ida::AdvanceStats>);
static_assert(static_cast<unsigned>(runner::RunRole::kComparison) ==
              static_cast<unsigned>(ipc::PackedRole::kComparison));
static_assert(static_cast<unsigned>(runner::RunRole::kPerturbed) ==
              static_cast<unsigned>(ipc::PackedRole::kPerturbed));

// Master: the runs of a kStep command (kind, id and t_end are the caller's): the nominal
// polynomial, then the extra runs in order. Throws std::invalid_argument for a polynomial out of
// range (degree, channels) or beyond kMaxRuns runs / kMaxPolynomialRuns polynomials.
void pack_runs(ipc::StepCommand& command, const model::SupportPoints& nominal,
               std::span<const runner::ExtraRun> extra);
// Worker: the runs of a kStep command (extra is resized to runs - 1; its capacity is reused).
// Unused nodes and channels are zero. Throws std::runtime_error naming the problem if the packed
// data is malformed (a count, role or channel out of range, or `packed` not matching).
void unpack_runs(const ipc::StepCommand& command, model::SupportPoints& nominal,
                 std::vector<runner::ExtraRun>& extra);

// The reply to a kStep from a pass's results: the nominal run, the extra runs in command order,
// `outputs` values per run (a run with fewer, a failed one, is padded with zeros), the nominal
// run's feed-through block and output samples, and the wall times. Status, failure, id and the
// worker's counters are the caller's. Throws std::invalid_argument beyond kMaxRuns runs,
// kMaxOutputs outputs, kMaxFeedthrough values or kMaxSamples samples.
void encode_pass(const runner::RunResult& nominal, std::span<const runner::RunResult> extra,
                 std::size_t outputs, std::int64_t solver_ns, std::int64_t extra_ns,
                 ipc::StepReply& reply);
// The pass encode_pass wrote (`outputs` values per run; the status is the caller's to read).
void decode_pass(const ipc::StepReply& reply, std::size_t outputs, runner::PassResult& pass);

// The reply to a kEvaluate: one run with zero counters, the outputs `y`, the block `d`, and, if
// `error` is not empty, the failure. Throws std::invalid_argument beyond kMaxOutputs outputs or
// kMaxFeedthrough values.
void encode_evaluation(std::span<const double> y, std::span<const double> d, std::string_view error,
                       ipc::StepReply& reply);
// The outputs and feed-through block encode_evaluation wrote (`outputs` values).
void decode_evaluation(const ipc::StepReply& reply, std::size_t outputs, std::vector<double>& y,
                       std::vector<double>& d);

// The worker's counters accumulated over every run (StepReply::total).
void set_total_stats(ipc::StepReply& reply, const ida::AdvanceStats& total) noexcept;
ida::AdvanceStats total_stats(const ipc::StepReply& reply) noexcept;

}  // namespace macrostep::worker

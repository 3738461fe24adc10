// How an executor whose subsystems answer with wire replies (the process executor's workers,
// the MPI bridge's node agents) reads them into its outcome: decoded by the one decoder
// (worker/wire.hpp), and the first failure recorded as every executor records it.
#pragma once

#include <cstddef>

#include "macrostep/executors/executor.hpp"
#include "macrostep/ipc/protocol.hpp"

namespace macrostep::executors {

// Subsystem i's part of a pass from its reply to a kStep (`outputs`: its output count). A failed
// reply is recorded in `outcome` if no lower subsystem has failed: the lowest failing subsystem
// is reported whatever order the replies are read in (contract 1).
void read_step_reply(const ipc::StepReply& reply, std::size_t i, std::size_t outputs,
                     PassOutcome& outcome);
// Subsystem i's evaluated outputs from its reply to a kEvaluate, its failure recorded likewise.
void read_evaluation_reply(const ipc::StepReply& reply, std::size_t i, std::size_t outputs,
                           EvaluationOutcome& outcome);

}  // namespace macrostep::executors

// Reading wire replies into an executor's outcome (worker_replies.hpp).
#include "macrostep/executors/worker_replies.hpp"

#include "macrostep/worker/wire.hpp"

namespace macrostep::executors {

namespace {

// The lowest failing subsystem wins (PassOutcome or EvaluationOutcome).
template <class Outcome>
void record_failure(const ipc::StepReply& reply, std::size_t i, Outcome& outcome) {
  if (reply.status != ipc::ReplyStatus::kOk && (outcome.ok || i < outcome.failed_subsystem)) {
    outcome.ok = false;
    outcome.failed_subsystem = i;
    outcome.error = reply.error;
    if constexpr (requires { outcome.terminated; }) {
      outcome.terminated = reply.status == ipc::ReplyStatus::kTerminated;
    }
  }
}

}  // namespace

void read_step_reply(const ipc::StepReply& reply, std::size_t i, std::size_t outputs,
                     PassOutcome& outcome) {
  worker::decode_pass(reply, outputs, outcome.subsystems.at(i));
  record_failure(reply, i, outcome);
}

void read_evaluation_reply(const ipc::StepReply& reply, std::size_t i, std::size_t outputs,
                           EvaluationOutcome& outcome) {
  EvaluatedOutputs& e = outcome.subsystems.at(i);
  worker::decode_evaluation(reply, outputs, e.outputs, e.feedthrough);
  record_failure(reply, i, outcome);
}

}  // namespace macrostep::executors

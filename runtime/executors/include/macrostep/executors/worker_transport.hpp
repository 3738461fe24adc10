// How the master exchanges the hot-path messages with its subsystem workers (DESIGN.md data
// flow, contract 3), apart from how the workers are started and watched (worker_supervisor.hpp)
// and from what the executor does with the messages (process_executor.hpp).
//
// Per worker one command queue and one reply queue: the worker answers every command with
// exactly one reply, in order. One thread of the master drives a transport.
//
// Batches: the master sends a command to each of several workers, then wakes them all at once
// (wake()), and waits once for all the replies (await_replies()) before it takes them one by
// one (try_receive()). So a macro step costs one wake-up call and one wait of the master, not
// one per worker.
//
// Implementations: RingTransport (lock-free rings in one shared-memory segment, this machine).
// An MPI bridge forwards the same messages between ranks behind the same interface.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>

#include "macrostep/ipc/protocol.hpp"
#include "macrostep/ipc/wait.hpp"

namespace macrostep::executors {

class WorkerTransport {
 public:
  virtual ~WorkerTransport() = default;

  virtual std::size_t workers() const = 0;

  // Queues `command` (its wire_bytes()) for worker i. A worker that waits by spinning may take
  // it at once; a sleeping one only after the next wake(). kTimedOut if the queue stayed full
  // for `timeout` (the command was not queued): the worker is not taking commands (the caller
  // checks whether it is alive).
  virtual ipc::WaitStatus send(std::size_t i, const ipc::StepCommand& command,
                               std::chrono::milliseconds timeout) = 0;

  // Wakes the workers that sleep, for every command sent before (one notification for all).
  virtual void wake() = 0;

  // Waits until every command sent so far has its reply (a command that was never woken for is
  // never answered: wake() first). kTimedOut if some are still missing after `timeout`.
  virtual ipc::WaitStatus await_replies(std::chrono::milliseconds timeout) = 0;

  // Takes worker i's next reply into `reply` if it has come in; never waits.
  virtual bool try_receive(std::size_t i, ipc::StepReply& reply) = 0;

  // Replies of worker i that have come in and not been taken yet.
  virtual std::size_t replies_waiting(std::size_t i) const = 0;

  // A number that grows while worker i computes (its integrators' model evaluations), for hang
  // detection; it may stand still while the worker waits for a command.
  virtual std::uint64_t progress(std::size_t i) const = 0;

  // Worker i's state z at its last accepted macro point (size state_size(i)), as the worker
  // published it when it handled that accept; valid once its reply has been received.
  virtual void accepted_state(std::size_t i, std::span<double> z) const = 0;
  virtual std::size_t state_size(std::size_t i) const = 0;
};

}  // namespace macrostep::executors

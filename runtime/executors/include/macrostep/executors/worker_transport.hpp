// How the master exchanges the hot-path messages with its subsystem workers (DESIGN.md data
// flow, contract 3), apart from how the workers are started and watched (worker_supervisor.hpp)
// and from what the executor does with the messages (process_executor.hpp). ProcessExecutor
// talks to its workers through this interface and nothing else.
//
// Per worker one command queue and one reply queue: the worker answers every command with
// exactly one reply, in order (ipc/.../protocol.hpp gives the messages). The worker at index i
// may be replaced by a new process (WorkerSupervisor::start after reset); the queues of index i
// then belong to the new one.
//
// Batches: the master sends a command to each of several workers, then wakes them all at once
// (wake()), and waits once for all the replies (await_replies()) before it takes them one by
// one (try_receive()). So a macro step costs one wake-up call and one wait of the master, not
// one per worker.
//
// Call order: construct (the transport holds every worker's configuration, from which the
// worker builds its subsystem) → the supervisor starts the workers → handshake(i) until every
// worker is ready → workers_attached() → any number of send / wake / await_replies /
// try_receive, with reset() + a restart for workers that ended → request_shutdown() →
// destroy (after the supervisor has stopped the workers).
//
// Thread safety: one thread of the master drives a transport; no method may be called
// concurrently with another. The workers run concurrently with that thread on their own side.
//
// Implementations: RingTransport (lock-free rings in one shared-memory segment, this machine);
// tests/executors/thread_workers.hpp (worker threads of the test process).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "macrostep/ipc/protocol.hpp"
#include "macrostep/ipc/wait.hpp"
#include "macrostep/worker/worker.hpp"

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
  // published it when it handled that accept (or import); valid once that reply has been
  // received.
  virtual void accepted_state(std::size_t i, std::span<double> z) const = 0;
  virtual std::size_t state_size(std::size_t i) const = 0;

  // Worker i's handshake once the worker at index i has written one (ready, or why it could
  // not start); nullopt before. Never waits.
  virtual std::optional<worker::HandshakeInfo> handshake(std::size_t i) const = 0;

  // Called once, when every worker of the start has shaken hands: from then on the transport
  // leaves nothing behind in the file system whatever happens to the master (RingTransport
  // unlinks its segment's name), while workers started later can still attach.
  virtual void workers_attached() = 0;

  // Whether a worker that waits for a command sleeps at once (an oversubscribed run): a command
  // sent without a wake() then reaches it only with the next wake(). The executor queues an
  // accept / reject without waking for it when this holds. Fixed at construction.
  virtual bool idle_workers_sleep() const = 0;

  // After the worker processes of `which` have ended (killed, or gone by themselves): forgets
  // the replies they owed and empties their queues and handshakes, so that a new process for
  // each index starts clean. Only while no other worker owes a reply.
  virtual void reset(std::span<const std::size_t> which) = 0;

  // Asks the workers of `which` to end, giving `reason` for their logs (the normal end of a run
  // is worker::kNormalShutdown): queues a kShutdown where there is room and wakes them; never
  // waits. A worker that does not take it is ended by its supervisor.
  virtual void request_shutdown(std::span<const std::size_t> which,
                                const std::string& reason) noexcept = 0;

  // What the transport is called in messages and diagnostics (RingTransport: the segment name).
  virtual std::string name() const = 0;
};

}  // namespace macrostep::executors

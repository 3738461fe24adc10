// The MPI transport of the bridge (DESIGN.md: ipc/ holds the MPI transport): this process's place
// in MPI_COMM_WORLD and nonblocking point-to-point messages of whole byte buffers, with waits
// that poll (MPI_Test / MPI_Improbe) and back off to short sleeps, so that a rank that waits does
// not take the CPU from the worker processes of its node (oversubscribed runs). OpenMPI is the
// only network layer; nothing here knows what the bytes mean.
//
// Lifetime: at most one World per process. The constructor calls MPI_Init_thread (one thread
// talks to MPI: MPI_THREAD_FUNNELED), the destructor MPI_Finalize, unless abort() was called or
// a peer is known to be gone (abandon()): MPI_Finalize would wait for it for ever; after
// abort_at_exit() the destructor calls MPI_Abort instead (a peer that must be ended but cannot
// be reached).
// Not thread-safe: the thread that built the World makes every call.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace macrostep::ipc::mpi {

// Whether this process was started by mpirun / mpiexec (OpenMPI's or PMIx's environment), so
// that MPI_Init joins a job instead of starting a singleton of one rank.
bool launched_by_mpirun();

// A source for try_receive / receive: any rank.
inline constexpr int kAnySource = -1;

// A received message.
struct Message {
  int source = -1;
  int tag = -1;
  std::vector<std::byte> bytes;
};

// Called between polls while a wait has not completed (every `poll_interval`); it throws to
// abandon the wait (a peer that died, a stop signal).
using PollCheck = std::function<void()>;

class World {
 public:
  World(int* argc, char*** argv);
  ~World();
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  const std::string& host() const { return host_; }  // MPI_Get_processor_name

  // Sends `bytes` to `dest` with `tag` (MPI_Isend, then waits for its completion by polling).
  void send(int dest, int tag, std::span<const std::byte> bytes, const PollCheck& check = {});
  // Sends one buffer to each of `dests` (all MPI_Isend first, then one wait for all of them).
  // bytes[k] goes to dests[k].
  void send_all(std::span<const int> dests, int tag, std::span<const std::vector<std::byte>> bytes,
                const PollCheck& check = {});

  // An empty message with `tag` to `dest`, fire and forget (MPI_Isend, then MPI_Request_free):
  // never waits, so it may be called from inside another wait (a sign of life).
  void post(int dest, int tag);

  // The next message with `tag` from `source` (kAnySource: from anyone), if one has arrived;
  // never waits.
  std::optional<Message> try_receive(int source, int tag);
  // Waits for the next message with `tag` from `source`; `check` runs every poll_interval;
  // std::nullopt if `timeout` (> 0) passed first.
  std::optional<Message> receive(int source, int tag, const PollCheck& check = {},
                                 std::chrono::milliseconds timeout = std::chrono::milliseconds{0});

  // How often a waiting call runs its check (default 10 ms).
  void set_poll_interval(std::chrono::milliseconds interval) { poll_interval_ = interval; }

  // MPI_Abort(MPI_COMM_WORLD, code): mpirun ends every rank. Does not return.
  [[noreturn]] void abort(int code);
  // A peer is gone: the destructor skips MPI_Finalize (which would wait for it).
  void abandon() { abandoned_ = true; }
  // A peer must be ended that this process cannot signal (a hung rank on another host): the
  // destructor calls MPI_Abort(code), and mpirun kills every rank, this one included. Deferred
  // to the destructor so that the caller's results and messages are out first.
  void abort_at_exit(int code) {
    abandoned_ = true;
    abort_code_ = code;
  }

 private:
  // Polls `done` (20 us, then yields up to 120 us, then sleeps of growing length up to 200 us),
  // running `check`
  // every poll_interval_; false if `deadline` passed first.
  bool poll(const std::function<bool()>& done, const PollCheck& check,
            std::optional<std::chrono::steady_clock::time_point> deadline);

  int rank_ = 0, size_ = 1;
  std::string host_;
  bool abandoned_ = false;
  std::optional<int> abort_code_;
  std::chrono::milliseconds poll_interval_{10};
};

}  // namespace macrostep::ipc::mpi

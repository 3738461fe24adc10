// mpi_world.hpp.
#include "macrostep/ipc/mpi_world.hpp"

#include <fmt/format.h>
#include <mpi.h>
#include <sched.h>

#include <climits>
#include <cstdlib>
#include <stdexcept>
#include <thread>

namespace macrostep::ipc::mpi {

namespace {

using Clock = std::chrono::steady_clock;

void check_mpi(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(rc, text, &length);
  throw std::runtime_error(fmt::format("{}: {}", what, std::string(text, length)));
}

int byte_count(std::size_t bytes) {
  if (bytes > static_cast<std::size_t>(INT_MAX)) {
    throw std::length_error(fmt::format("MPI message of {} bytes exceeds INT_MAX", bytes));
  }
  return static_cast<int>(bytes);
}

}  // namespace

bool launched_by_mpirun() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"}) {
    if (std::getenv(name) != nullptr) return true;
  }
  return false;
}

World::World(int* argc, char*** argv) {
  int provided = 0;
  check_mpi(MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
  // Errors come back as codes (thrown as std::runtime_error) instead of ending the job, so that
  // a failure is reported with its rank and subsystems.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  char name[MPI_MAX_PROCESSOR_NAME];
  int length = 0;
  MPI_Get_processor_name(name, &length);
  host_.assign(name, static_cast<std::size_t>(length));
}

World::~World() {
  if (abort_code_) MPI_Abort(MPI_COMM_WORLD, *abort_code_);
  if (!abandoned_) MPI_Finalize();
}

void World::abort(int code) {
  abandoned_ = true;
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);  // MPI_Abort does not return; in case it does
}

bool World::poll(const std::function<bool()>& done, const PollCheck& check,
                 std::optional<Clock::time_point> deadline) {
  // A reply normally comes within tens of microseconds: poll that long (bounded by time, not by
  // a count: on a loaded, oversubscribed node one MPI progress call can take tens of
  // microseconds, and 200 of them cost milliseconds per message), then yield, then sleep in
  // growing slices: a rank that waits must leave the CPU to the worker processes of its node.
  constexpr std::chrono::microseconds kSpin{20}, kYield{100}, kLongestNap{200};
  const auto start = Clock::now();
  auto next_check = start + poll_interval_;
  std::chrono::microseconds nap{5};
  for (;;) {
    if (done()) return true;
    const auto now = Clock::now();
    const auto waited = now - start;
    if (waited >= kSpin + kYield) {
      std::this_thread::sleep_for(nap);
      nap = std::min(nap * 2, kLongestNap);
    } else if (waited >= kSpin) {
      sched_yield();
    }
    if (now >= next_check) {
      if (check) check();
      next_check = now + poll_interval_;
    }
    if (deadline && now >= *deadline) return done();
  }
}

void World::send(int dest, int tag, std::span<const std::byte> bytes, const PollCheck& check) {
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Isend(bytes.data(), byte_count(bytes.size()), MPI_BYTE, dest, tag, MPI_COMM_WORLD,
                      &request),
            "MPI_Isend");
  poll(
      [&] {
        int flag = 0;
        check_mpi(MPI_Test(&request, &flag, MPI_STATUS_IGNORE), "MPI_Test");
        return flag != 0;
      },
      check, std::nullopt);
}

void World::send_all(std::span<const int> dests, int tag,
                     std::span<const std::vector<std::byte>> bytes, const PollCheck& check) {
  std::vector<MPI_Request> requests(dests.size(), MPI_REQUEST_NULL);
  for (std::size_t k = 0; k < dests.size(); ++k) {
    check_mpi(MPI_Isend(bytes[k].data(), byte_count(bytes[k].size()), MPI_BYTE, dests[k], tag,
                        MPI_COMM_WORLD, &requests[k]),
              "MPI_Isend");
  }
  poll(
      [&] {
        int flag = 0;
        check_mpi(MPI_Testall(static_cast<int>(requests.size()), requests.data(), &flag,
                              MPI_STATUSES_IGNORE),
                  "MPI_Testall");
        return flag != 0;
      },
      check, std::nullopt);
}

void World::post(int dest, int tag) {
  // An empty message needs no buffer that outlives the call, so the request can be freed at once
  // (MPI completes the send on its own; nobody waits for it).
  MPI_Request request = MPI_REQUEST_NULL;
  check_mpi(MPI_Isend(nullptr, 0, MPI_BYTE, dest, tag, MPI_COMM_WORLD, &request), "MPI_Isend");
  check_mpi(MPI_Request_free(&request), "MPI_Request_free");
}

std::optional<Message> World::try_receive(int source, int tag) {
  int flag = 0;
  MPI_Message handle = MPI_MESSAGE_NULL;
  MPI_Status status;
  if (source == kAnySource) source = MPI_ANY_SOURCE;
  check_mpi(MPI_Improbe(source, tag, MPI_COMM_WORLD, &flag, &handle, &status), "MPI_Improbe");
  if (flag == 0) return std::nullopt;
  int count = 0;
  MPI_Get_count(&status, MPI_BYTE, &count);
  Message m;
  m.source = status.MPI_SOURCE;
  m.tag = status.MPI_TAG;
  m.bytes.resize(static_cast<std::size_t>(count));
  check_mpi(MPI_Mrecv(m.bytes.data(), count, MPI_BYTE, &handle, MPI_STATUS_IGNORE), "MPI_Mrecv");
  return m;
}

std::optional<Message> World::receive(int source, int tag, const PollCheck& check,
                                      std::chrono::milliseconds timeout) {
  std::optional<Message> m;
  std::optional<Clock::time_point> deadline;
  if (timeout.count() > 0) deadline = Clock::now() + timeout;
  poll(
      [&] {
        m = try_receive(source, tag);
        return m.has_value();
      },
      check, deadline);
  return m;
}

}  // namespace macrostep::ipc::mpi

// The OpenMPI side of bench/ipc (row (d) of ipc_pingpong): a blocking ping-pong of a
// macro-step-sized command and reply between two ranks, rank 0 playing the master and rank 1 the
// worker, each round trip timed by rank 0 with the same clock and the same percentile rule as the
// ring and the floor (bench_timing.hpp). ipc_pingpong starts it through mpirun with
// --bind-to core --map-by core; rank 0 reports the CPUs each rank was allowed and ran on, so that
// the caller can check that MPI used the same two cores as the ring.
//
// Usage: mpi_pingpong COMMAND_BYTES REPLY_BYTES ROUNDS [WARMUP]
// Output (rank 0, stdout): one line "mpi_pingpong_library <MPI_Get_library_version>" and one
// machine-readable line "mpi_pingpong key=value ..." with median_ns, p99_ns, min_ns and ok=1|0.
#include <fmt/format.h>
#include <mpi.h>
#include <sched.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench_timing.hpp"

using namespace macrostep::bench;

namespace {

constexpr int kCommandTag = 1;
constexpr int kReplyTag = 2;
constexpr int kInfoTag = 3;
constexpr std::size_t kInfoBytes = 512;

bool parse_size(const char* text, std::size_t& out) {
  errno = 0;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || text[0] == '-') return false;
  out = static_cast<std::size_t>(v);
  return true;
}

std::string join(const std::vector<int>& cpus) {
  std::string s;
  for (const int c : cpus) {
    if (!s.empty()) s += ',';
    s += std::to_string(c);
  }
  return s.empty() ? "?" : s;
}

// "<who>_cpus=<allowed CPUs> <who>_on=<CPU running now>" of the calling rank.
std::string placement(const char* who) {
  return fmt::format("{0}_cpus={1} {0}_on={2}", who, join(allowed_cpus()), sched_getcpu());
}

}  // namespace

int main(int argc, char** argv) {
  // Die with mpirun: ipc_pingpong kills mpirun when (d) overruns its time, and the ranks are not
  // in mpirun's process group.
  const pid_t launcher = getppid();
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != launcher) return 1;
  MPI_Init(&argc, &argv);
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  std::size_t command_bytes = 0;
  std::size_t reply_bytes = 0;
  std::size_t rounds = 0;
  std::size_t warmup = 20'000;
  const bool args_ok = (argc == 4 || argc == 5) && parse_size(argv[1], command_bytes) &&
                       parse_size(argv[2], reply_bytes) && parse_size(argv[3], rounds) &&
                       (argc == 4 || parse_size(argv[4], warmup)) &&
                       command_bytes >= sizeof(std::uint64_t) &&
                       reply_bytes >= sizeof(std::uint64_t) && rounds > 0 &&
                       command_bytes <= (1u << 30) && reply_bytes <= (1u << 30);
  if (!args_ok || size != 2) {
    if (rank == 0) {
      std::fprintf(stderr,
                   "usage: mpirun -np 2 mpi_pingpong COMMAND_BYTES REPLY_BYTES ROUNDS [WARMUP] "
                   "(sizes >= 8, ROUNDS > 0; got %d ranks)\n",
                   size);
    }
    MPI_Finalize();
    return 2;
  }
  const int command_count = static_cast<int>(command_bytes);
  const int reply_count = static_cast<int>(reply_bytes);
  std::vector<std::byte> command(command_bytes);
  std::vector<std::byte> reply(reply_bytes);
  const std::size_t total = warmup + rounds;

  if (rank == 1) {
    // The worker: echo the sequence number of each command in a reply of the reply size.
    std::string info = placement("rank1");
    info.resize(kInfoBytes, '\0');
    MPI_Send(info.data(), static_cast<int>(kInfoBytes), MPI_CHAR, 0, kInfoTag, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    for (std::size_t i = 0; i < total; ++i) {
      MPI_Recv(command.data(), command_count, MPI_BYTE, 0, kCommandTag, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
      std::memcpy(reply.data(), command.data(), sizeof(std::uint64_t));
      MPI_Send(reply.data(), reply_count, MPI_BYTE, 0, kReplyTag, MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return 0;
  }

  // Rank 0, the master. Calibrate before the peer starts waiting, as ipc_pingpong does.
  const double tpn = ticks_per_ns();
  const double overhead = timer_overhead_ns(tpn);
  const std::string placement0 = placement("rank0");
  std::string placement1(kInfoBytes, '\0');
  MPI_Recv(placement1.data(), static_cast<int>(kInfoBytes), MPI_CHAR, 1, kInfoTag, MPI_COMM_WORLD,
           MPI_STATUS_IGNORE);
  placement1.resize(std::strlen(placement1.c_str()));
  MPI_Barrier(MPI_COMM_WORLD);

  std::vector<std::uint64_t> samples;
  samples.reserve(rounds);
  bool in_order = true;
  for (std::uint64_t i = 0; i < total; ++i) {
    std::memcpy(command.data(), &i, sizeof(i));
    const std::uint64_t t0 = ticks();
    MPI_Send(command.data(), command_count, MPI_BYTE, 1, kCommandTag, MPI_COMM_WORLD);
    MPI_Recv(reply.data(), reply_count, MPI_BYTE, 1, kReplyTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    const std::uint64_t t1 = ticks();
    std::uint64_t echoed = 0;
    std::memcpy(&echoed, reply.data(), sizeof(echoed));
    in_order = in_order && echoed == i;
    if (i >= warmup) samples.push_back(t1 - t0);
  }
  const Stats stats = summarize(std::move(samples), tpn);

  char library[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int library_length = 0;
  MPI_Get_library_version(library, &library_length);
  std::string library_line(library, static_cast<std::size_t>(library_length));
  for (char& ch : library_line) {
    if (ch == '\n' || ch == '\r') ch = ' ';
  }
  while (!library_line.empty() && library_line.back() == ' ') library_line.pop_back();
  fmt::print("mpi_pingpong_library {}\n", library_line);
  fmt::print(
      "mpi_pingpong command_bytes={} reply_bytes={} rounds={} warmup={} timer={} "
      "ticks_per_ns={:.4f} timer_overhead_ns={:.1f} median_ns={:.1f} p99_ns={:.1f} min_ns={:.1f} "
      "ok={} {} {}\n",
      command_bytes, reply_bytes, rounds, warmup, kTimerName, tpn, overhead, stats.median_ns,
      stats.p99_ns, stats.min_ns, in_order ? 1 : 0, placement0, placement1);
  std::fflush(stdout);
  MPI_Finalize();
  return in_order ? 0 : 1;
}

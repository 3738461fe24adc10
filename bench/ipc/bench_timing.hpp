// Timing shared by ipc_pingpong and mpi_pingpong, so that the ring, the floor and the OpenMPI
// figures of bench/ipc are taken with the same clock, the same calibration and the same
// percentile rule: each sample is one round trip read with the TSC (x86, fenced by LFENCE) or
// steady_clock elsewhere, converted to ns with a 200 ms calibration against steady_clock.
#pragma once

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

namespace macrostep::bench {

#if defined(__x86_64__) || defined(__i386__)
inline std::uint64_t ticks() noexcept {
  _mm_lfence();  // do not let the read move across the timed work
  const std::uint64_t t = __rdtsc();
  _mm_lfence();
  return t;
}
inline constexpr const char* kTimerName = "rdtsc";
#else
inline std::uint64_t ticks() noexcept {
  return static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
}
inline constexpr const char* kTimerName = "steady_clock";
#endif

inline double ticks_per_ns() {
  const auto t0 = std::chrono::steady_clock::now();
  const std::uint64_t k0 = ticks();
  while (std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(200)) {
  }
  const auto t1 = std::chrono::steady_clock::now();
  const std::uint64_t k1 = ticks();
  return static_cast<double>(k1 - k0) /
         static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count());
}

struct Stats {
  double median_ns = 0;
  double p99_ns = 0;
  double min_ns = 0;
};

inline Stats summarize(std::vector<std::uint64_t> samples, double tpn) {
  std::sort(samples.begin(), samples.end());
  const auto at = [&](double q) {
    const auto i = std::min(samples.size() - 1, static_cast<std::size_t>(q * samples.size()));
    return static_cast<double>(samples[i]) / tpn;
  };
  return Stats{at(0.5), at(0.99), static_cast<double>(samples.front()) / tpn};
}

inline double timer_overhead_ns(double tpn) {
  std::vector<std::uint64_t> s(100'000);
  for (auto& v : s) {
    const std::uint64_t a = ticks();
    v = ticks() - a;
  }
  return summarize(std::move(s), tpn).median_ns;
}

// The CPUs the calling thread may run on, ascending.
inline std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  sched_getaffinity(0, sizeof(set), &set);
  std::vector<int> out;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (CPU_ISSET(c, &set)) out.push_back(c);
  }
  return out;
}

}  // namespace macrostep::bench

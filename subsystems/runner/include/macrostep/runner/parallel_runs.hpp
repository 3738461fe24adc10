// The runs of one macro step as TBB tasks: SubsystemRunner::run_all (one subsystem, in the worker
// process) and the in-process executor (every subsystem's runs in one arena) both use it.
#pragma once

#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <cstddef>

#if defined(__SANITIZE_THREAD__)
#define MACROSTEP_UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define MACROSTEP_UNDER_TSAN 1
#endif
#endif
#ifdef MACROSTEP_UNDER_TSAN
#include <sanitizer/tsan_interface.h>
#endif

namespace macrostep::runner {

namespace detail {
// TBB's fork/join ordering, spelled out for ThreadSanitizer (the tsan preset). Debian's libtbb
// is not instrumented, so TSan cannot see that a task starts after everything its spawner did
// before parallel_for (fork), nor that parallel_for returns after everything its tasks did
// (join), and it would report every access of a task to the caller's state as a race. These two
// edges are exactly what TBB guarantees and nothing more, so races between tasks that run
// concurrently stay visible. The tokens are not locals because a task must acquire before it
// reads anything, its own closure included. No code in other builds.
inline char tsan_fork_token = 0;
inline char tsan_join_token = 0;

inline void tsan_release([[maybe_unused]] char& token) noexcept {
#ifdef MACROSTEP_UNDER_TSAN
  __tsan_release(&token);
#endif
}
inline void tsan_acquire([[maybe_unused]] char& token) noexcept {
#ifdef MACROSTEP_UNDER_TSAN
  __tsan_acquire(&token);
#endif
}
}  // namespace detail

// Calls body(0), ..., body(n - 1) as tasks of `arena` and returns when all have returned. The
// calls may run concurrently in any order; each must touch only its own run's state (and read
// what the caller set up before). body must not throw (catch inside and record the error).
template <class Body>
void parallel_runs(tbb::task_arena& arena, std::size_t n, const Body& body) {
  auto task = [&](std::size_t k) {
    detail::tsan_acquire(detail::tsan_fork_token);
    body(k);
    detail::tsan_release(detail::tsan_join_token);
  };
  auto run_all = [&] { tbb::parallel_for(std::size_t{0}, n, task); };
  detail::tsan_release(detail::tsan_fork_token);  // after the closures exist: the tasks read them
  arena.execute(run_all);
  detail::tsan_acquire(detail::tsan_join_token);
}

}  // namespace macrostep::runner

// The master process ending in the middle of a run (unexpected_end.hpp).
#include "unexpected_end.hpp"

#include "macrostep/run/interrupt.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <stdexcept>

namespace macrostep::run {

namespace {

constexpr std::array<int, 5> kFatalSignals{SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};

std::atomic<UnexpectedEnd*> g_armed{nullptr};
// The thread finishing the run after an exit() (process_exiting); 0 while none is.
std::atomic<pthread_t> g_exiting{};
std::atomic<bool> g_exit_in_progress{false};

// Waits until done() or for at most `ms` milliseconds (async-signal-safe); returns done(). The
// waits of this guard are bounded: a thread that waits for another to end the process must not
// hold the process alive if that other thread is stuck (waiting, it may be, for this one).
template <class Done>
bool wait_up_to(int ms, Done done) {
  const struct timespec step { 0, 1000000 };
  for (int i = 0; i < ms && !done(); ++i) ::nanosleep(&step, nullptr);
  return done();
}
constexpr int kLastWordsWaitMs = 5000;
constexpr int kExitWaitMs = 10000;

// Another thread is finishing the run after an exit() and ends the process with _exit() when
// done: this thread waits for that, up to kExitWaitMs, then goes on (async-signal-safe).
// Once: a thread that comes back (a sanitizer's abort after its report of the crash) does not
// wait again.
std::atomic<bool> g_exit_wait_over{false};
void wait_for_the_exiting_thread() {
  if (!g_exit_in_progress.load() || pthread_equal(g_exiting.load(), pthread_self())) return;
  wait_up_to(kExitWaitMs, [] { return g_exit_wait_over.load(); });
  g_exit_wait_over = true;
}

// What the signal handler writes: prepared when the guard is armed, read in the handler only.
// Fixed buffers, so that the handler needs no allocation.
struct CrashText {
  std::array<char, 4096> json_path{};
  std::array<char, 4096> tmp_path{};
  std::string json;       // not resized while armed
  std::string stop_json;  // likewise
  std::atomic<bool> ready{false};
};
CrashText g_crash;
std::array<struct sigaction, 32> g_previous{};

void write_fully(int fd, const char* text, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, text, size);
    if (n <= 0) return;
    text += n;
    size -= static_cast<std::size_t>(n);
  }
}

// The message and the metadata document of a process about to die (async-signal-safe). Once:
// models crash on several threads at once (a subsystem's nominal and extra runs), and a second
// writer would truncate the first one's file before its rename. Another thread waits until the
// first has written (bounded: a writer blocked on a full stderr pipe must not hold the process
// alive) and then goes on to die itself: it must not wait for the writer to end the process,
// because the writer may be waiting for it (a chained handler's lock, such as a sanitizer's
// report lock held by the second thread's own report). The writing thread itself may come back
// (a signal raised while dying, such as a sanitizer's abort after its report of the first): it
// goes on without writing again.
std::atomic<bool> g_last_words{false};
std::atomic<bool> g_last_words_written{false};
std::atomic<pthread_t> g_last_words_thread{};
void write_last_words(const char* message, std::size_t size, const std::string& json) {
  write_fully(STDERR_FILENO, message, size);
  if (g_crash.json_path[0] == '\0') return;
  const int fd = ::open(g_crash.tmp_path.data(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) return;
  write_fully(fd, json.data(), json.size());
  ::close(fd);
  ::rename(g_crash.tmp_path.data(), g_crash.json_path.data());
}

void last_words(const char* message, std::size_t size, const std::string& json) {
  // Ready from arming to disarming: also while an exit() finishes the run, which may be stuck.
  if (!g_crash.ready.load()) return;
  if (g_last_words.exchange(true)) {
    if (!pthread_equal(g_last_words_thread.load(), pthread_self())) {
      wait_up_to(kLastWordsWaitMs, [] { return g_last_words_written.load(); });
    }
    return;
  }
  g_last_words_thread = pthread_self();
  write_last_words(message, size, json);
  g_last_words_written = true;
}

extern "C" void on_fatal_signal(int sig) {
  wait_for_the_exiting_thread();  // a crash in the teardown of a concurrent exit()
  static const char message[] =
      "\nmacrostep: the master process received a fatal signal during the co-simulation: a model "
      "running in it (in-process, or a hosted subsystem) crashed; the result file holds the "
      "rows written so far. --executor processes runs each subsystem in its own process, "
      "where a crash is reported and can be recovered from (--max-restarts).\n";
  last_words(message, sizeof(message) - 1, g_crash.json);
  ::sigaction(sig, &g_previous[static_cast<std::size_t>(sig)], nullptr);
  ::raise(sig);
}

// The exiting thread is made known before the guard is taken: a gate that finds the guard gone
// must also find the exit in progress, or a second thread's exit() would pass every gate into
// the libraries' teardown while the first still finishes the run.
extern "C" void on_process_exit(int status, void* /*unused*/) {
  if (g_armed.load() == nullptr) return;
  g_exiting = pthread_self();
  g_exit_in_progress = true;
  if (UnexpectedEnd* guard = g_armed.exchange(nullptr)) {
    guard->process_exiting(status);
  } else {
    g_exit_in_progress = false;  // the run ended (the guard disarmed) meanwhile
  }
}

// glibc calls each exit handler once: a second thread's exit() continues with the handlers after
// the one the first thread is in. These gates, run next, hold such threads (one gate each) before
// they reach the shared-memory cleanup and the libraries' teardown; if the first thread has not
// ended the process after kExitWaitMs (its finish stuck), the gate ends it with status 1.
// A guard still armed here means the thread that entered on_process_exit has not taken it yet.
extern "C" void on_process_exit_gate(int /*status*/, void* /*unused*/) {
  wait_up_to(kExitWaitMs, [] { return g_armed.load() == nullptr; });
  if (!g_exit_in_progress.load() || pthread_equal(g_exiting.load(), pthread_self())) return;
  wait_for_the_exiting_thread();
  ::_exit(1);  // the run's finish is stuck: end as failed, as the exiting thread would have
}
constexpr int kExitGates = 64;

void install_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (int i = 0; i < kExitGates; ++i) ::on_exit(on_process_exit_gate, nullptr);
    ::on_exit(on_process_exit, nullptr);
    for (const int sig : kFatalSignals) {
      struct sigaction action {};
      action.sa_handler = on_fatal_signal;
      action.sa_flags = SA_ONSTACK;
      sigemptyset(&action.sa_mask);
      ::sigaction(sig, &action, &g_previous[static_cast<std::size_t>(sig)]);
    }
  });
}

void copy_path(std::array<char, 4096>& to, const std::string& from) {
  const std::size_t n = std::min(from.size(), to.size() - 1);
  std::memcpy(to.data(), from.data(), n);
  to[n] = '\0';
}

}  // namespace

UnexpectedEnd::UnexpectedEnd(std::function<void(const RunEnd&)> finish,
                             const std::string& json_path, const std::string& crash_json,
                             const std::string& stop_json)
    : finish_(std::move(finish)) {
  g_crash.ready = false;
  copy_path(g_crash.json_path, json_path.size() < 4000 ? json_path : std::string());
  copy_path(g_crash.tmp_path, json_path.size() < 4000 ? json_path + ".tmp" : std::string());
  g_crash.json = crash_json;
  g_crash.stop_json = stop_json;
  g_crash.ready = true;
  // Installed after the shared-memory cleanup handlers, so that this runs first and chains to
  // them.
  install_once();
  g_armed = this;
}

UnexpectedEnd::~UnexpectedEnd() {
  UnexpectedEnd* self = this;
  g_armed.compare_exchange_strong(self, nullptr);
  g_crash.ready = false;
}

void UnexpectedEnd::stop_signal_repeated() noexcept {
  static const char message[] =
      "\nmacrostep: a second stop signal ends the process: a model running in the master "
      "(in-process, or a hosted subsystem) did not return from its macro step; the result file "
      "holds the rows written so far. --executor processes runs each subsystem in its own "
      "process, where a hang is found (--hang-timeout) and can be recovered from.\n";
  last_words(message, sizeof(message) - 1, g_crash.stop_json);
}

void on_repeated_stop_signal() noexcept {
  UnexpectedEnd::stop_signal_repeated();
}

void UnexpectedEnd::process_exiting(int status) {
  const std::runtime_error error(fmt::format(
      "the process was ended by exit({}) during the co-simulation: a model running in the master "
      "(in-process, or a hosted subsystem) called exit(); --executor processes runs each "
      "subsystem in its own process, where this is reported as a worker failure",
      status));
  std::fflush(stdout);
  fmt::print(stderr, "\nmacrostep: {}\n", error.what());
  try {
    finish_({"failed", &error});
  } catch (const std::exception& e) {
    fmt::print(stderr, "macrostep: {}\n", e.what());
  }
  std::fflush(stderr);
  ::_exit(1);
}

}  // namespace macrostep::run

// The master's crash guard (unexpected_end.hpp) where one thread's end waits for another's: two
// threads that die at once while the signal's previous handler takes a lock (as a sanitizer's
// report or a model library's crash reporter does), and a crash beside an exit() whose finish is
// stuck. No wait may hold the process alive for ever: the other thread may be waiting for this
// one.
#include "unexpected_end.hpp"

#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

#include "child_processes.hpp"

namespace {

namespace fs = std::filesystem;

// The previous SIGSEGV handler: a reporter that takes a process-wide lock and ends the process
// with abort() while it holds it (a sanitizer's report of a deadly signal does exactly this).
std::atomic<bool> g_report_lock{false};
extern "C" void crash_reporter(int /*sig*/) {
  while (g_report_lock.exchange(true)) sched_yield();
  std::abort();
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// In the child: thread B holds the reporter's lock (it is reporting its own crash); the main
// thread crashes, writes the last words and chains to the reporter, which waits for B; B then
// aborts, which enters the guard's handler a second time on another thread.
[[noreturn]] void two_threads_die(const fs::path& json) {
  struct sigaction reporter {};
  reporter.sa_handler = crash_reporter;
  sigemptyset(&reporter.sa_mask);
  sigaction(SIGSEGV, &reporter, nullptr);
  macrostep::run::UnexpectedEnd guard([](const macrostep::run::RunEnd&) {}, json.string(),
                                      R"({"status": "failed"})", R"({"status": "interrupted"})");
  std::atomic<bool> reporting{false};
  std::thread b([&] {
    g_report_lock = true;
    reporting = true;
    struct stat st {};
    for (int i = 0; i < 5000 && ::stat(json.c_str(), &st) != 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the writer is at the lock
    std::abort();
  });
  while (!reporting) std::this_thread::yield();
  raise(SIGSEGV);
  b.join();
  _exit(3);  // not reached
}

// In the child: a thread calls exit() and the run's finish never returns (stuck); the main
// thread then crashes. It waits for the exit only so long, then writes the crash document and
// dies of its signal.
[[noreturn]] void exit_stuck_then_crash(const fs::path& json) {
  std::atomic<bool> finishing{false};
  macrostep::run::UnexpectedEnd guard(
      [&finishing](const macrostep::run::RunEnd&) {
        finishing = true;
        for (;;) pause();
      },
      json.string(), R"({"status": "failed"})", R"({"status": "interrupted"})");
  std::thread exiting([] { std::exit(0); });
  exiting.detach();
  while (!finishing) std::this_thread::yield();
  raise(SIGSEGV);
  _exit(3);  // not reached
}

// Runs `body(json)` in a child process with its stderr in DIR/stderr.txt; returns the child's
// wait status, or -1 if it did not end within 60 s (killed).
int run_child(const fs::path& dir, void (*body)(const fs::path&)) {
  const pid_t pid = macrostep::testing::fork_tied();
  if (pid < 0) return -2;
  if (pid == 0) {
    if (!freopen((dir / "stderr.txt").c_str(), "w", stderr)) _exit(121);
    body(dir / "r.json");
    _exit(122);
  }
  int status = 0;
  pid_t ended = 0;
  for (int i = 0; i < 600 && ended == 0; ++i) {  // 60 s: far more than a dying process needs
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    ended = waitpid(pid, &status, WNOHANG);
  }
  if (ended == 0) {
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    return -1;
  }
  return status;
}

fs::path fresh_dir(const std::string& name) {
  const fs::path dir =
      fs::temp_directory_path() / ("macrostep_test_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

TEST(UnexpectedEnd, ACrashBesideAStuckExitEndsTheProcessWithItsDocument) {
  const fs::path dir = fresh_dir("stuck_exit");
  const int status = run_child(dir, exit_stuck_then_crash);
  ASSERT_NE(status, -1) << "the crashing thread waits for ever for the stuck exit";
  // Of its signal; under a sanitizer its report of the SIGSEGV ends it (abort(), or exit status
  // 1 without abort_on_error).
  EXPECT_TRUE(WIFSIGNALED(status) ? WTERMSIG(status) == SIGSEGV || WTERMSIG(status) == SIGABRT
                                  : WIFEXITED(status) && WEXITSTATUS(status) == 1)
      << status;
  EXPECT_EQ(slurp(dir / "r.json"), R"({"status": "failed"})");
  EXPECT_NE(slurp(dir / "stderr.txt").find("received a fatal signal during the co-simulation"),
            std::string::npos);
  fs::remove_all(dir);
}

TEST(UnexpectedEnd, TwoThreadsDyingAtOnceEndTheProcessWithTheLastWordsWritten) {
  const fs::path dir = fresh_dir("two_deaths");
  const int status = run_child(dir, two_threads_die);
  ASSERT_NE(status, -1) << "the process did not end: the two dying threads wait for each other";
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT) << status;
  EXPECT_EQ(slurp(dir / "r.json"), R"({"status": "failed"})");
  EXPECT_NE(slurp(dir / "stderr.txt").find("received a fatal signal during the co-simulation"),
            std::string::npos);
  fs::remove_all(dir);
}

}  // namespace

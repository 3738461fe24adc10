// The /proc/PID/stat reader (proc_stat.hpp): fields after the last ')' of the command name, a
// trailing newline, malformed lines, and this process's own line.
#include <gtest/gtest.h>
#include <unistd.h>

#include "macrostep/ipc/proc_stat.hpp"

namespace macrostep::ipc {
namespace {

TEST(ProcStat, ParsesStateCpuTicksAndStartTimeAfterTheLastParenthesis) {
  const auto stat = parse_proc_stat(
      "812 (a (b) c) R 1 812 812 0 -1 4194560 120 0 3 0 250 17 0 0 20 0 3 0 99 1000 200");
  ASSERT_TRUE(stat);
  EXPECT_EQ(stat->state, 'R');
  EXPECT_EQ(stat->cpu_ticks, 267u);  // utime 250 + stime 17
  EXPECT_EQ(stat->start_ticks, 99u);
  const auto stopped =
      parse_proc_stat("9 (x) T 1 9 9 0 -1 0 0 0 0 0 5 6 0 0 20 0 1 0 4242 2000 300\n");
  ASSERT_TRUE(stopped);
  EXPECT_EQ(stopped->state, 'T');
  EXPECT_EQ(stopped->cpu_ticks, 11u);
  EXPECT_EQ(stopped->start_ticks, 4242u);
}

TEST(ProcStat, RefusesMalformedLines) {
  EXPECT_FALSE(parse_proc_stat(""));
  EXPECT_FALSE(parse_proc_stat("812 x R 1"));                     // no name
  EXPECT_FALSE(parse_proc_stat("812 (x) R 1 2 3"));               // cut short
  EXPECT_FALSE(parse_proc_stat("812 (x) RS 1 2 3 4 5 6 7 8 9"));  // not a state letter
  EXPECT_FALSE(parse_proc_stat(
      "812 (x) R 1 2 3 4 5 6 7 8 9 10 z 6 0 0 20 0 1 0 99 1 2"));  // utime not a number
  EXPECT_FALSE(parse_proc_stat("812 (x) R 1 2 3 4 5 6 7 8 9 10 1 6 0 0 20 0 1 0"));  // no start
}

TEST(ProcStat, ReadsThisProcess) {
  const auto self = read_proc_stat(getpid());
  ASSERT_TRUE(self);
  EXPECT_EQ(self->state, 'R');  // this thread reads it
  EXPECT_GT(self->start_ticks, 0u);
  const auto task = read_proc_stat_file("/proc/self/task/" + std::to_string(gettid()) + "/stat");
  ASSERT_TRUE(task);
  EXPECT_EQ(task->state, 'R');
  EXPECT_FALSE(read_proc_stat_file("/proc/self/task/0/stat"));  // no such thread
}

}  // namespace
}  // namespace macrostep::ipc

// Runs a shell command line and collects what it prints: the app tests run the `macrostep`
// binary this way (stderr joined to stdout by the caller's "2>&1").
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace macrostep::test {

struct CommandRun {
  int status = -1;     // the exit status, or -1 if the command did not exit normally
  std::string output;  // what it printed on stdout
};

// `command` run by /bin/sh (popen); returns when it has ended.
inline CommandRun run_shell(const std::string& command) {
  CommandRun r;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return r;
  char buffer[4096];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) {
    r.output.append(buffer, n);
  }
  const int status = pclose(pipe);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

}  // namespace macrostep::test

// What every command of the `macrostep` command line shares: the exit statuses and the error
// of an unusable command-line value.
#pragma once

#include <stdexcept>

#include <CLI/CLI.hpp>

namespace macrostep::app {

// Exit status: 0 success; 2 user error (command line, configuration, unreadable or incompatible
// files, a run mode that does not exist yet) reported before any work starts; 1 runtime failure
// (IDA fails, writing results fails, internal error).
inline constexpr int kUserError = 2;
inline constexpr int kRuntimeError = 1;

// A command-line value that cannot be used: main() prints "macrostep: <what>" and exits 2,
// before any work.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Whether the option was given on the command line.
inline bool given(const CLI::Option* option) {
  return option != nullptr && option->count() > 0;
}

}  // namespace macrostep::app

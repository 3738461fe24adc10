// What every command of the `macrostep` command line shares: the exit statuses and the error
// of an unusable command-line value.
#pragma once

#include <stdexcept>
#include <string>

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

// The help of --pin (run and topology alike, each with its own default policy): every form that
// placement::parse_pin accepts.
inline std::string pin_help(const std::string& default_policy) {
  std::string policies = "none | compact | scatter";
  policies.replace(policies.find(default_policy), default_policy.size(),
                   default_policy + " (default)");
  return policies +
         " | a PU list such as 0,2,4-7 (master first) | map:M/S1/../Sn, one entry per process "
         "(the master, then subsystems 1..n), each * (not pinned) or its PUs (2, 2,3 or 4-5), "
         "e.g. map:*/0/1/0/1";
}

// Validators of numeric options, with the messages of the command line's own checks (CLI11 puts
// the option's name before them: "--cores: must be > 0 (got 0)"). A value that is not a number
// gets the same message.
inline CLI::Validator positive_number() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        double value = 0.0;
        if (CLI::detail::lexical_cast(text, value) && value > 0.0) return {};
        return "must be > 0 (got " + text + ")";
      },
      "> 0");
}
inline CLI::Validator positive_integer() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        long long value = 0;
        if (CLI::detail::lexical_cast(text, value) && value >= 1) return {};
        return "must be an integer >= 1 (got " + text + ")";
      },
      "integer >= 1");
}

// Whether the option was given on the command line.
inline bool given(const CLI::Option* option) {
  return option != nullptr && option->count() > 0;
}

}  // namespace macrostep::app

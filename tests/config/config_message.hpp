// What the configuration reader says about a text: shared by the config test sources.
#pragma once

#include <string>

#include "macrostep/config/run_config.hpp"

namespace macrostep::testing {

// The ConfigError message that parse_config gives for `text` (read as "t.toml"), or
// "(accepted)" when it parses.
inline std::string config_message(const std::string& text) {
  try {
    config::parse_config(text, "t.toml");
  } catch (const config::ConfigError& e) {
    return e.what();
  }
  return "(accepted)";
}

}  // namespace macrostep::testing

// libFuzzer target: the configuration loader. Any input must end in a parsed
// configuration or a ConfigError; anything else (another exception, a crash, a sanitizer
// report, a hang) is a finding.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "macrostep/config/run_config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const macrostep::config::RunConfig config = macrostep::config::parse_config(text, "fuzz.toml");
    // What a run does next with an accepted file, short of building the model.
    (void)macrostep::config::subsystem_count(config);
    (void)macrostep::config::default_output_file(config, macrostep::config::ResultKind::kReference);
  } catch (const macrostep::config::ConfigError&) {
    // The expected outcome for a bad file.
  }
  return 0;
}

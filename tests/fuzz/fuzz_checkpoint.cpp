// libFuzzer target: what `macrostep resume` decodes from a checkpoint file. Any input must end
// in a decoded checkpoint or a CheckpointError; anything else (another exception, a crash, a
// sanitizer report, a hang) is a finding. A decoded checkpoint must encode and decode again to
// the same values.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "macrostep/checkpoint/checkpoint.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  namespace ckpt = macrostep::checkpoint;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  try {
    const ckpt::Checkpoint c = ckpt::decode(bytes, "fuzz.ckpt");
    const auto again = ckpt::encode(c);
    const ckpt::Checkpoint d = ckpt::decode(
        std::string_view(reinterpret_cast<const char*>(again.data()), again.size()), "again");
    if (d.config_text != c.config_text || d.csv_bytes != c.csv_bytes || d.csv_hash != c.csv_hash ||
        d.subsystems != c.subsystems || d.accepted_by_kappa != c.accepted_by_kappa) {
      std::abort();  // the round trip lost something
    }
  } catch (const ckpt::CheckpointError&) {
    // The expected outcome for a file that is not a checkpoint.
  }
  return 0;
}

// libFuzzer target: what a worker process decodes from its master: the Cap'n Proto
// subsystem configuration, handshake and shutdown messages, and the POD step command read from
// the ring (bad lengths, counts, ids, kinds, versions). The first byte chooses the decoder, the
// rest is the message. Every input must decode or be refused with std::runtime_error /
// std::invalid_argument; a crash, another exception or a sanitizer report is a finding.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <vector>

#include "macrostep/ipc/protocol.hpp"
#include "macrostep/worker/wire.hpp"
#include "macrostep/worker/worker.hpp"

namespace {

using macrostep::ipc::CommandKind;
using macrostep::ipc::StepCommand;

void decode_command(const std::byte* data, std::size_t size) {
  // The ring hands the worker a whole StepCommand slot; the fuzzer controls its prefix.
  auto cmd = std::make_unique<StepCommand>();
  std::memcpy(static_cast<void*>(cmd.get()), data, std::min(size, sizeof(StepCommand)));
  macrostep::model::SupportPoints nominal;
  std::vector<macrostep::runner::ExtraRun> extra;
  switch (cmd->kind) {
    case CommandKind::kStep:
      macrostep::worker::unpack_runs(*cmd, nominal, extra);
      break;
    case CommandKind::kExport:
    case CommandKind::kImport:
      (void)cmd->path();
      break;
    default:
      (void)cmd->wire_bytes();
      break;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  // Word-aligned, as the segment's message blocks are.
  std::vector<std::uint64_t> words(std::max<std::size_t>(1, (size - 1 + 7) / 8));
  std::memcpy(words.data(), data + 1, size - 1);
  const auto* message = reinterpret_cast<const std::byte*>(words.data());
  const std::size_t bytes = size - 1;
  try {
    switch (data[0] % 4) {
      case 0:
        (void)macrostep::worker::decode_config(message, bytes);
        break;
      case 1:
        (void)macrostep::worker::decode_handshake(message, bytes);
        break;
      case 2:
        (void)macrostep::worker::decode_shutdown(message, bytes);
        break;
      default:
        decode_command(message, bytes);
        break;
    }
  } catch (const std::runtime_error&) {
    // Refused with a message: the expected outcome for a bad message.
  } catch (const std::invalid_argument&) {
    // A model description the library refuses (build_subsystem).
  }
  return 0;
}

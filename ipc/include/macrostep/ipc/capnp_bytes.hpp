// Cap'n Proto flat-array messages as plain bytes, for the control messages and the exportable
// state (ipc/schema): what goes into a segment region, a file or an MPI payload.
#pragma once

#include <capnp/message.h>

#include <cstddef>
#include <span>
#include <vector>

namespace macrostep::ipc {

// The message as a flat array (whole 8-byte words).
std::vector<std::byte> to_flat_bytes(capnp::MessageBuilder& message);

// An aligned copy of `bytes` as words for capnp::FlatArrayMessageReader (the caller's bytes need
// not be aligned). bytes.size() must be a multiple of 8: the caller checks and says what it read.
std::vector<capnp::word> aligned_words(std::span<const std::byte> bytes);

}  // namespace macrostep::ipc

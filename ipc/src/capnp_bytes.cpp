// capnp_bytes.hpp.
#include "macrostep/ipc/capnp_bytes.hpp"

#include <capnp/serialize.h>

#include <cstring>

namespace macrostep::ipc {

std::vector<std::byte> to_flat_bytes(capnp::MessageBuilder& message) {
  const kj::Array<capnp::word> words = capnp::messageToFlatArray(message);
  const auto bytes = words.asBytes();
  std::vector<std::byte> out(bytes.size());
  std::memcpy(out.data(), bytes.begin(), bytes.size());
  return out;
}

std::vector<capnp::word> aligned_words(std::span<const std::byte> bytes) {
  std::vector<capnp::word> words(bytes.size() / sizeof(capnp::word));
  std::memcpy(words.data(), bytes.data(), words.size() * sizeof(capnp::word));
  return words;
}

}  // namespace macrostep::ipc

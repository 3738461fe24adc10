#include "macrostep/ipc/spsc_ring.hpp"

#include <fmt/format.h>

namespace macrostep::ipc::detail {

void throw_ring_layout_mismatch(std::string_view segment, std::string_view ring, bool is_ring,
                                const RingShape& found, const RingShape& expected) {
  const std::string holds = is_ring
                                ? fmt::format("holds {} slots of {} bytes (align {})",
                                              found.capacity, found.value_size, found.value_align)
                                : std::string("is not a ring");
  throw SegmentError(
      SegmentErrc::kBadRegion,
      fmt::format("ring '{}' in shared-memory segment {} {}, this process expects {} slots of "
                  "{} bytes (align {}): master and worker disagree on the message type",
                  ring, segment, holds, expected.capacity, expected.value_size,
                  expected.value_align));
}

}  // namespace macrostep::ipc::detail

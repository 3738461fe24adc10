// Worker processes and their subsystem groups (placement.hpp: ProcessCount, process_groups).
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "macrostep/placement/placement.hpp"

namespace macrostep::placement {
namespace {

Topology cores_of(unsigned cores, unsigned threads) {
  std::vector<ProcessingUnit> pus;
  for (unsigned c = 0; c < cores; ++c) {
    for (unsigned t = 0; t < threads; ++t) pus.push_back({0, c, c * threads + t, 0});
  }
  return Topology::from_pus(pus);
}

TEST(ProcessCount, ParsesTheWordsAndNumbers) {
  EXPECT_EQ(parse_process_count("per-subsystem").kind, ProcessCount::Kind::kPerSubsystem);
  EXPECT_EQ(parse_process_count("auto").kind, ProcessCount::Kind::kAuto);
  const ProcessCount three = parse_process_count("3");
  EXPECT_EQ(three.kind, ProcessCount::Kind::kCount);
  EXPECT_EQ(three.count, 3u);
  EXPECT_EQ(three.to_string(), "3");
  EXPECT_EQ(parse_process_count("auto").to_string(), "auto");
  for (const char* bad : {"0", "-1", "two", "", "3x", "Auto", "1000001"}) {
    try {
      parse_process_count(bad);
      ADD_FAILURE() << "accepted \"" << bad << "\"";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(kProcessCountValues), std::string::npos) << e.what();
    }
  }
}

TEST(ProcessCount, AutoKeepsProcessesWithinTheCores) {
  const Topology one = cores_of(1, 1), two = cores_of(2, 1), hyper = cores_of(4, 2);
  EXPECT_EQ(resolve_process_count(parse_process_count("auto"), 32, one), 1u);
  EXPECT_EQ(resolve_process_count(parse_process_count("auto"), 32, two), 1u);
  EXPECT_EQ(resolve_process_count(parse_process_count("auto"), 32, hyper), 3u);
  EXPECT_EQ(resolve_process_count(parse_process_count("auto"), 2, hyper), 2u);  // a core each
  EXPECT_EQ(resolve_process_count(parse_process_count("auto"), 3, hyper), 3u);  // and the master
  EXPECT_EQ(resolve_process_count(parse_process_count("auto"), 4, hyper), 3u);
  EXPECT_EQ(resolve_process_count(parse_process_count("auto"), 1, two), 1u);
  EXPECT_EQ(resolve_process_count(parse_process_count("auto"), 2, two), 1u);
  EXPECT_EQ(resolve_process_count(parse_process_count("auto"), 3, two), 1u);
  EXPECT_EQ(resolve_process_count(parse_process_count("per-subsystem"), 8, two), 8u);
  EXPECT_EQ(resolve_process_count(parse_process_count("5"), 8, two), 5u);
  EXPECT_EQ(resolve_process_count(parse_process_count("50"), 8, two), 8u);
}

TEST(ProcessGroups, ContiguousBlocksLargerFirst) {
  using G = std::vector<std::vector<std::size_t>>;
  EXPECT_EQ(process_groups(0, 10, 4), (G{{0, 1, 2}, {3, 4, 5}, {6, 7}, {8, 9}}));
  EXPECT_EQ(process_groups(1, 5, 2), (G{{1, 2, 3}, {4, 5}}));
  EXPECT_EQ(process_groups(0, 3, 7), (G{{0}, {1}, {2}}));
  EXPECT_EQ(process_groups(0, 4, 0), (G{{0, 1, 2, 3}}));
  EXPECT_TRUE(process_groups(0, 0, 2).empty());
}

}  // namespace
}  // namespace macrostep::placement

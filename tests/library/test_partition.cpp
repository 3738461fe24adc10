// Partitions of a chain into subsystems (spec/MODELS.md §1.5, K-5.4b sizes).
#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

#include "macrostep/library/chain.hpp"

namespace {

using macrostep::library::equal_partition;
using macrostep::library::sized_partition;
using V = std::vector<std::size_t>;

// MODELS.md §1.5: equal partition, the first n mod s subsystems get one mass more.
TEST(Partition, Equal) {
  EXPECT_EQ(equal_partition(50, 10), (V{0, 5, 10, 15, 20, 25, 30, 35, 40, 45, 50}));
  EXPECT_EQ(equal_partition(10, 3), (V{0, 4, 7, 10}));
  EXPECT_EQ(equal_partition(14, 4), (V{0, 4, 8, 11, 14}));
  EXPECT_EQ(equal_partition(5, 5), (V{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(equal_partition(7, 1), (V{0, 7}));
  const V big = equal_partition(1000000, 383);
  ASSERT_EQ(big.size(), 384u);
  EXPECT_EQ(big.back(), 1000000u);
  for (std::size_t l = 0; l + 1 < big.size(); ++l) {
    const std::size_t size = big[l + 1] - big[l];
    EXPECT_EQ(size, 1000000 / 383 + (l < 1000000 % 383 ? 1 : 0));
  }
}

TEST(Partition, EqualRejectsBadCounts) {
  EXPECT_THROW(equal_partition(10, 0), std::invalid_argument);
  EXPECT_THROW(equal_partition(10, 11), std::invalid_argument);
  EXPECT_THROW(equal_partition(0, 1), std::invalid_argument);
}

// K-5.4b (seed 000 Table 5.5): 40/10 alternating and the restructured 39/12/38/... sizes.
TEST(Partition, Sized) {
  V sizes;
  for (int l = 0; l < 11; ++l) sizes.push_back(l % 2 == 0 ? 40 : 10);
  const V b = sized_partition(290, sizes);
  ASSERT_EQ(b.size(), 12u);
  EXPECT_EQ(b[1], 40u);
  EXPECT_EQ(b[2], 50u);
  EXPECT_EQ(b.back(), 290u);
  const V re = sized_partition(290, {39, 12, 38, 12, 38, 12, 38, 12, 38, 12, 39});
  EXPECT_EQ(re[1], 39u);
  EXPECT_EQ(re[2], 51u);
  EXPECT_EQ(re.back(), 290u);
}

TEST(Partition, SizedRejectsBadSizes) {
  EXPECT_THROW(sized_partition(10, {5, 4}), std::invalid_argument);
  EXPECT_THROW(sized_partition(10, {5, 0, 5}), std::invalid_argument);
  EXPECT_THROW(sized_partition(10, {}), std::invalid_argument);
  EXPECT_THROW(sized_partition(10, {6, 6}), std::invalid_argument);
}

}  // namespace

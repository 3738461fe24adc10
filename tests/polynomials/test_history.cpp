// CouplingHistory: accepted points, newest last, bounded capacity (METHODS §6.4).
#include "macrostep/polynomials/history.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace mp = macrostep::polynomials;

// METHODS §0 notation: back index j is T_{M−j}, newest last.
TEST(CouplingHistory, NewestLastAndBackIndices) {
  mp::CouplingHistory h(2, 4);
  EXPECT_TRUE(h.empty());
  h.push(0.0, std::vector<double>{1.0, 10.0});
  h.push(0.5, std::vector<double>{2.0, 20.0});
  h.push(0.7, std::vector<double>{3.0, 30.0});
  ASSERT_EQ(h.size(), 3u);
  EXPECT_EQ(h.newest_time(), 0.7);
  EXPECT_EQ(h.time_back(2), 0.0);
  EXPECT_EQ(h.time(0), 0.0);
  EXPECT_EQ(h.values_back(1)[1], 20.0);
  EXPECT_EQ(h.newest_values()[0], 3.0);
  EXPECT_THROW(h.time_back(3), std::out_of_range);
  EXPECT_THROW(h.values(3), std::out_of_range);
}

// Bounded history (METHODS §6.3/§5.1 need at most κ+3 points): oldest dropped, no reallocation.
TEST(CouplingHistory, DropsOldestWhenFullAndKeepsOrder) {
  mp::CouplingHistory h(1, 3);
  const double* before = nullptr;
  for (int k = 0; k < 10; ++k) {
    h.push(0.1 * k, std::vector<double>{static_cast<double>(k)});
    if (k == 2) before = h.values(0).data();
  }
  ASSERT_EQ(h.size(), 3u);
  for (std::size_t j = 0; j < 3; ++j) {
    EXPECT_EQ(h.values_back(j)[0], 9.0 - static_cast<double>(j));
    EXPECT_DOUBLE_EQ(h.time_back(j), 0.1 * (9.0 - static_cast<double>(j)));
  }
  // Storage is the ring allocated at construction: the same three slots are reused.
  bool same_storage = false;
  for (std::size_t i = 0; i < 3; ++i) same_storage |= h.values(i).data() == before;
  EXPECT_TRUE(same_storage);
}

// Rollback safety rests on push() refusing anything that is not a new accepted point after the
// newest one: a repeated T_{N+1} or a step backwards is an error, not a silent overwrite.
TEST(CouplingHistory, RejectsNonIncreasingTimesWrongSizeAndNonFinite) {
  mp::CouplingHistory h(2);
  h.push(1.0, std::vector<double>{0.0, 0.0});
  EXPECT_THROW(h.push(1.0, std::vector<double>{0.0, 0.0}), std::invalid_argument);
  EXPECT_THROW(h.push(0.5, std::vector<double>{0.0, 0.0}), std::invalid_argument);
  EXPECT_THROW(h.push(2.0, std::vector<double>{0.0}), std::invalid_argument);
  EXPECT_THROW(h.push(2.0, std::vector<double>{0.0, std::nan("")}), std::invalid_argument);
  EXPECT_THROW(h.push(std::numeric_limits<double>::infinity(), std::vector<double>{0.0, 0.0}),
               std::invalid_argument);
  EXPECT_EQ(h.size(), 1u);
  EXPECT_THROW(mp::CouplingHistory(0), std::invalid_argument);
  EXPECT_THROW(mp::CouplingHistory(1, 0), std::invalid_argument);
}

// D-4 κ_max = 5, §6.3 SDN(κ+2), §9 N_sp = 8: the default capacity holds every point used.
TEST(CouplingHistory, DefaultCapacityCoversKappaMaxNeeds) {
  // κ_max = 5: SDN(κ+2) needs κ+3 = 8 points; the LS predictor uses N_sp = 8 by default.
  EXPECT_GE(mp::CouplingHistory::kDefaultCapacity, 8u);
  mp::CouplingHistory h(1);
  for (int k = 0; k < 20; ++k) h.push(k, std::vector<double>{0.0});
  EXPECT_EQ(h.size(), mp::CouplingHistory::kDefaultCapacity);
  h.clear();
  EXPECT_TRUE(h.empty());
  h.push(-1.0, std::vector<double>{0.0});  // after clear any time may start the history
  EXPECT_EQ(h.newest_time(), -1.0);
}

// A jump at the newest point (methods.md §3.3): the channels it changes hold the new value over
// every point, the others keep their past; also once the ring has wrapped.
// An older point leaves; the others keep their order and values, also across the ring's wrap.
TEST(CouplingHistory, AnOlderPointCanBeErased) {
  mp::CouplingHistory h(2, 4);
  for (int k = 0; k < 6; ++k) h.push(k, std::vector<double>{double(k), 10.0 * k});
  h.erase_back(1);  // t = 4
  ASSERT_EQ(h.size(), 3u);
  const std::vector<double> left = {2.0, 3.0, 5.0};
  for (std::size_t i = 0; i < h.size(); ++i) {
    EXPECT_EQ(h.time(i), left[i]) << i;
    EXPECT_EQ(h.values(i)[0], left[i]) << i;
    EXPECT_EQ(h.values(i)[1], 10.0 * left[i]) << i;
  }
  h.push(7.0, std::vector<double>{7.0, 70.0});
  h.push(8.0, std::vector<double>{8.0, 80.0});
  EXPECT_EQ(h.time(0), 3.0);
  EXPECT_EQ(h.time_back(0), 8.0);
  h.erase_back(3);  // the oldest
  EXPECT_EQ(h.time(0), 5.0);
  EXPECT_THROW(h.erase_back(0), std::out_of_range);
  EXPECT_THROW(h.erase_back(3), std::out_of_range);
}

TEST(CouplingHistory, AJumpHoldsTheChangedChannelsOnly) {
  mp::CouplingHistory h(2, 4);
  for (int k = 0; k < 6; ++k) h.push(k, std::vector<double>{double(k), 10.0 * k});
  h.jump_newest(std::vector<double>{-1.0, 50.0});
  ASSERT_EQ(h.size(), 4u);
  for (std::size_t i = 0; i < h.size(); ++i) {
    EXPECT_EQ(h.values(i)[0], -1.0) << i;
    EXPECT_EQ(h.values(i)[1], 10.0 * static_cast<double>(i + 2)) << i;
    EXPECT_EQ(h.time(i), static_cast<double>(i + 2)) << i;
  }
  EXPECT_THROW(h.jump_newest(std::vector<double>{1.0}), std::invalid_argument);
  EXPECT_THROW(h.jump_newest(std::vector<double>{std::nan(""), 0.0}), std::invalid_argument);
  EXPECT_THROW(h.hold_newest(2), std::out_of_range);
  mp::CouplingHistory empty(1);
  EXPECT_THROW(empty.replace_newest(std::vector<double>{1.0}), std::logic_error);
}

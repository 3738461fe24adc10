// The hot-path messages of the process runtime (subsystems/worker/protocol.hpp): packed support
// points survive the round trip bit for bit (the process executor's results must be
// bit-identical to the in-process executor's, DESIGN.md contract 1), only the used bytes travel,
// and malformed commands are reported, not evaluated.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <stdexcept>

#include "macrostep/worker/protocol.hpp"

namespace {

using macrostep::model::SupportPoints;
using macrostep::worker::CommandKind;
using macrostep::worker::kMaxOutputs;
using macrostep::worker::kMaxPackedDoubles;
using macrostep::worker::kMaxRuns;
using macrostep::worker::ReplyStatus;
using macrostep::worker::StepCommand;
using macrostep::worker::StepReply;

// Values that are not round in binary, so that any rounding on the way would show.
double value(std::uint64_t k) {
  return std::ldexp(static_cast<double>((k * 0x9E3779B97F4A7C15ull) >> 11), -50) - 3.0;
}

SupportPoints points(int degree, std::uint32_t channels, std::uint64_t salt) {
  SupportPoints p{};
  p.degree = degree;
  p.channels = channels;
  p.step_begin = value(salt);
  for (std::size_t j = 0; j < p.node_count(); ++j) p.time[j] = value(salt + 1 + j);
  for (std::size_t c = 0; c < channels; ++c) {
    for (std::size_t j = 0; j < p.node_count(); ++j) p.value[c][j] = value(salt * 97 + c * 7 + j);
  }
  return p;
}

// The worker unpacks into its inputs through pointers.
template <std::size_t N>
std::array<SupportPoints*, N> targets(std::array<SupportPoints, N>& a) {
  std::array<SupportPoints*, N> p{};
  for (std::size_t i = 0; i < N; ++i) p[i] = &a[i];
  return p;
}

bool same_bits(const SupportPoints& a, const SupportPoints& b) {
  return std::memcmp(&a, &b, sizeof a) == 0;  // unused nodes and channels are zero in both
}

TEST(StepCommandPacking, EveryDegreeAndChannelCountRoundTripsBitForBit) {
  auto cmd = std::make_unique<StepCommand>();
  std::array<SupportPoints, kMaxRuns> out{};
  for (int degree = 0; degree <= SupportPoints::kMaxDegree; ++degree) {
    for (std::uint32_t channels = 0; channels <= SupportPoints::kMaxChannels; ++channels) {
      cmd->clear_points();
      std::array<SupportPoints, kMaxRuns> in{};
      for (std::size_t r = 0; r < kMaxRuns; ++r) {
        // The extra runs of exLE use one degree more, those of exMD one less.
        const int d =
            std::clamp(degree + static_cast<int>(r % 3) - 1, 0, SupportPoints::kMaxDegree);
        in[r] = points(d, channels, 1000 * r + static_cast<std::uint64_t>(degree * 10) + channels);
        cmd->add_points(in[r]);
      }
      ASSERT_EQ(cmd->runs, kMaxRuns);
      cmd->unpack_points(targets(out));
      for (std::size_t r = 0; r < kMaxRuns; ++r) {
        EXPECT_TRUE(same_bits(in[r], out[r])) << "degree " << degree << " channels " << channels;
      }
    }
  }
}

TEST(StepCommandPacking, OnlyTheUsedValuesTravel) {
  auto cmd = std::make_unique<StepCommand>();
  cmd->kind = CommandKind::kStep;
  cmd->clear_points();
  cmd->add_points(points(2, 2, 1));  // 3 + 3 + 2 * 3 = 12 doubles
  cmd->add_points(points(1, 2, 2));  // 3 + 2 + 2 * 2 = 9 doubles
  EXPECT_EQ(cmd->packed, 21u);
  EXPECT_EQ(cmd->wire_bytes(), offsetof(StepCommand, points) + 21 * sizeof(double));
  EXPECT_LT(cmd->wire_bytes(), 256u);  // 4 cache lines instead of sizeof(StepCommand)
  EXPECT_GT(sizeof(StepCommand), 2000u);
  cmd->kind = CommandKind::kAccept;  // accept / reject / shutdown carry no support points
  EXPECT_EQ(cmd->wire_bytes(), offsetof(StepCommand, points));
}

TEST(StepCommandPacking, TheMasterCannotPackOutOfRangePoints) {
  auto cmd = std::make_unique<StepCommand>();
  cmd->clear_points();
  SupportPoints bad = points(2, 2, 3);
  bad.degree = SupportPoints::kMaxDegree + 1;
  EXPECT_THROW(cmd->add_points(bad), std::invalid_argument);
  bad.degree = -1;
  EXPECT_THROW(cmd->add_points(bad), std::invalid_argument);
  bad = points(2, 2, 3);
  bad.channels = SupportPoints::kMaxChannels + 1;
  EXPECT_THROW(cmd->add_points(bad), std::invalid_argument);
  for (std::size_t r = 0; r < kMaxRuns; ++r) cmd->add_points(points(6, 8, r));
  EXPECT_EQ(cmd->packed, kMaxRuns * kMaxPackedDoubles);  // the largest command fits
  EXPECT_THROW(cmd->add_points(points(0, 1, 9)), std::invalid_argument);
}

TEST(StepCommandPacking, TheWorkerRejectsMalformedCommands) {
  auto cmd = std::make_unique<StepCommand>();
  std::array<SupportPoints, kMaxRuns> out{};
  const auto fresh = [&] {
    cmd->clear_points();
    cmd->add_points(points(2, 2, 5));
  };
  fresh();
  cmd->points[0] = 2.5;  // a fractional degree
  EXPECT_THROW(cmd->unpack_points(targets(out)), std::runtime_error);
  fresh();
  cmd->points[0] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(cmd->unpack_points(targets(out)), std::runtime_error);
  fresh();
  cmd->points[1] = 9.0;  // more channels than kMaxChannels
  EXPECT_THROW(cmd->unpack_points(targets(out)), std::runtime_error);
  fresh();
  cmd->packed -= 1;  // truncated
  EXPECT_THROW(cmd->unpack_points(targets(out)), std::runtime_error);
  fresh();
  cmd->packed += 1;  // a value left over
  EXPECT_THROW(cmd->unpack_points(targets(out)), std::runtime_error);
  fresh();
  cmd->runs = 2;  // a run announced but not packed
  EXPECT_THROW(cmd->unpack_points(targets(out)), std::runtime_error);
  fresh();
  std::array<SupportPoints, 0> none{};
  EXPECT_THROW(cmd->unpack_points(targets(none)),
               std::runtime_error);  // more runs than the caller holds
  fresh();
  EXPECT_NO_THROW(cmd->unpack_points(targets(out)));
}

TEST(StepReplyPacking, StatisticsAndOutputsOfEveryRunAreKeptApart) {
  auto reply = std::make_unique<StepReply>();
  reply->status = ReplyStatus::kOk;
  reply->runs = 3;
  reply->outputs = 2;
  for (std::size_t r = 0; r < 3; ++r) {
    macrostep::ida::AdvanceStats s;
    s.steps = static_cast<long>(10 + r);
    s.wall_ns = static_cast<std::int64_t>(1000 * r);
    reply->set_run_stats(r, s);
    reply->run_outputs(r)[0] = value(r);
    reply->run_outputs(r)[1] = value(r + 10);
  }
  for (std::size_t r = 0; r < 3; ++r) {
    EXPECT_EQ(reply->run_stats(r).steps, static_cast<long>(10 + r));
    EXPECT_EQ(reply->run_stats(r).wall_ns, static_cast<std::int64_t>(1000 * r));
    EXPECT_EQ(reply->run_outputs(r)[0], value(r));
    EXPECT_EQ(reply->run_outputs(r)[1], value(r + 10));
  }
  // The wire prefix ends right after the last output of the last run.
  const auto* end = reinterpret_cast<const std::byte*>(reply->run_outputs(2) + 2);
  EXPECT_EQ(reply->wire_bytes(),
            static_cast<std::size_t>(end - reinterpret_cast<const std::byte*>(reply.get())));
  reply->status = ReplyStatus::kFailed;  // the error text is last: a failed reply goes whole
  EXPECT_EQ(reply->wire_bytes(), sizeof(StepReply));
}

TEST(StepReplyPacking, TheLargestReplyFits) {
  auto reply = std::make_unique<StepReply>();
  reply->runs = kMaxRuns;
  reply->outputs = kMaxOutputs;
  const auto* last = reply->run_outputs(kMaxRuns - 1) + kMaxOutputs;
  EXPECT_LE(reinterpret_cast<const std::byte*>(last),
            reinterpret_cast<const std::byte*>(reply->error));
}

}  // namespace

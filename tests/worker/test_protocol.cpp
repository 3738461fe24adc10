// The hot-path messages of the process runtime (subsystems/worker/protocol.hpp): packed runs
// (support points, roles, perturbations) survive the round trip bit for bit (the process executor's
// results must be bit-identical to the in-process executor's, DESIGN.md contract 1), only the used
// bytes travel, and malformed commands are reported, not evaluated; how a worker waits for its
// next command.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <stdexcept>
#include <vector>

#include "macrostep/worker/protocol.hpp"
#include "macrostep/worker/worker.hpp"

namespace {

using macrostep::model::SupportPoints;
using macrostep::runner::ExtraRun;
using macrostep::runner::RunRole;
using macrostep::worker::CommandKind;
using macrostep::worker::kMaxOutputs;
using macrostep::worker::kMaxPolynomialRuns;
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

bool same_bits(const SupportPoints& a, const SupportPoints& b) {
  return std::memcmp(&a, &b, sizeof a) == 0;  // unused nodes and channels are zero in both
}

TEST(StepCommandPacking, EveryDegreeAndChannelCountRoundTripsBitForBit) {
  auto cmd = std::make_unique<StepCommand>();
  SupportPoints nominal_out{};
  std::vector<ExtraRun> extra_out;
  for (int degree = 0; degree <= SupportPoints::kMaxDegree; ++degree) {
    for (std::uint32_t channels = 0; channels <= SupportPoints::kMaxChannels; ++channels) {
      const SupportPoints nominal =
          points(degree, channels, static_cast<std::uint64_t>(degree * 10) + channels);
      cmd->set_nominal(nominal);
      // The comparison runs of exLE use one degree more, those of exMD the same; then perturbed
      // runs up to the command's capacity.
      std::vector<ExtraRun> extra;
      for (std::size_t r = 1; r < kMaxPolynomialRuns; ++r) {
        const int d = std::clamp(degree + static_cast<int>(r % 2), 0, SupportPoints::kMaxDegree);
        extra.push_back(ExtraRun::comparison(
            points(d, channels, 1000 * r + static_cast<std::uint64_t>(degree * 10) + channels)));
      }
      while (1 + extra.size() < kMaxRuns) {
        const auto k = static_cast<std::uint32_t>(extra.size());
        extra.push_back(ExtraRun::perturbed(k % SupportPoints::kMaxChannels, value(77 + k)));
      }
      for (const auto& e : extra) cmd->add_extra(e);
      ASSERT_EQ(cmd->runs, kMaxRuns);
      ASSERT_LE(cmd->packed, macrostep::worker::kMaxCommandDoubles);
      cmd->unpack(nominal_out, extra_out);
      EXPECT_TRUE(same_bits(nominal, nominal_out)) << "degree " << degree;
      ASSERT_EQ(extra_out.size(), extra.size());
      for (std::size_t r = 0; r < extra.size(); ++r) {
        EXPECT_EQ(extra_out[r].role, extra[r].role);
        if (extra[r].role == RunRole::kComparison) {
          EXPECT_TRUE(same_bits(extra[r].points, extra_out[r].points))
              << "degree " << degree << " channels " << channels;
        } else {
          EXPECT_EQ(extra_out[r].channel, extra[r].channel);
          EXPECT_EQ(std::memcmp(&extra_out[r].end_value, &extra[r].end_value, sizeof(double)), 0);
        }
      }
    }
  }
}

TEST(StepCommandPacking, OnlyTheUsedValuesTravel) {
  auto cmd = std::make_unique<StepCommand>();
  cmd->kind = CommandKind::kStep;
  cmd->set_nominal(points(2, 2, 1));                      // 3 + 3 + 2 * 3 = 12 doubles
  cmd->add_extra(ExtraRun::comparison(points(1, 2, 2)));  // 1 + 3 + 2 + 2 * 2 = 10 doubles
  EXPECT_EQ(cmd->packed, 22u);
  cmd->add_extra(ExtraRun::perturbed(1, 0.5));  // a perturbed run is 3 doubles, not a polynomial
  EXPECT_EQ(cmd->packed, 25u);
  EXPECT_EQ(cmd->wire_bytes(), offsetof(StepCommand, points) + 25 * sizeof(double));
  EXPECT_LT(cmd->wire_bytes(), 256u);  // 4 cache lines instead of sizeof(StepCommand)
  EXPECT_GT(sizeof(StepCommand), 2000u);
  cmd->kind = CommandKind::kAccept;  // accept / reject / shutdown carry no runs
  EXPECT_EQ(cmd->wire_bytes(), offsetof(StepCommand, points));
}

TEST(StepCommandPacking, TheMasterCannotPackOutOfRangeRuns) {
  auto cmd = std::make_unique<StepCommand>();
  SupportPoints bad = points(2, 2, 3);
  bad.degree = SupportPoints::kMaxDegree + 1;
  EXPECT_THROW(cmd->set_nominal(bad), std::invalid_argument);
  bad.degree = -1;
  EXPECT_THROW(cmd->set_nominal(bad), std::invalid_argument);
  bad = points(2, 2, 3);
  bad.channels = SupportPoints::kMaxChannels + 1;
  EXPECT_THROW(cmd->set_nominal(bad), std::invalid_argument);
  cmd->clear_runs();
  EXPECT_THROW(cmd->add_extra(ExtraRun::perturbed(0, 1.0)), std::logic_error);  // no nominal
  cmd->set_nominal(points(6, 8, 0));
  const std::uint32_t before = cmd->packed;
  EXPECT_THROW(cmd->add_extra(ExtraRun::comparison(bad)), std::invalid_argument);
  EXPECT_THROW(cmd->add_extra(ExtraRun::perturbed(SupportPoints::kMaxChannels, 1.0)),
               std::invalid_argument);
  EXPECT_EQ(cmd->packed, before);  // a refused run leaves nothing behind
  EXPECT_EQ(cmd->runs, 1u);
  for (std::size_t r = 1; r < kMaxPolynomialRuns; ++r) {
    cmd->add_extra(ExtraRun::comparison(points(6, 8, r)));
  }
  EXPECT_THROW(cmd->add_extra(ExtraRun::comparison(points(0, 1, 9))), std::invalid_argument);
  while (cmd->runs < kMaxRuns) cmd->add_extra(ExtraRun::perturbed(7, 1.0));
  EXPECT_EQ(cmd->packed, macrostep::worker::kMaxCommandDoubles);  // the largest command fits
  EXPECT_THROW(cmd->add_extra(ExtraRun::perturbed(0, 1.0)), std::invalid_argument);
}

TEST(StepCommandPacking, TheWorkerRejectsMalformedCommands) {
  auto cmd = std::make_unique<StepCommand>();
  SupportPoints nominal{};
  std::vector<ExtraRun> extra;
  const auto fresh = [&] {
    cmd->set_nominal(points(2, 2, 5));
    cmd->add_extra(ExtraRun::perturbed(1, 2.0));
  };
  fresh();
  cmd->points[0] = 2.5;  // a fractional degree
  EXPECT_THROW(cmd->unpack(nominal, extra), std::runtime_error);
  fresh();
  cmd->points[0] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(cmd->unpack(nominal, extra), std::runtime_error);
  fresh();
  cmd->points[1] = 9.0;  // more channels than kMaxChannels
  EXPECT_THROW(cmd->unpack(nominal, extra), std::runtime_error);
  fresh();
  cmd->points[12] = 3.0;  // an unknown run role
  EXPECT_THROW(cmd->unpack(nominal, extra), std::runtime_error);
  fresh();
  cmd->points[13] = 8.0;  // a perturbed channel beyond kMaxChannels - 1
  EXPECT_THROW(cmd->unpack(nominal, extra), std::runtime_error);
  fresh();
  cmd->packed -= 1;  // truncated
  EXPECT_THROW(cmd->unpack(nominal, extra), std::runtime_error);
  fresh();
  cmd->packed += 1;  // a value left over
  EXPECT_THROW(cmd->unpack(nominal, extra), std::runtime_error);
  fresh();
  cmd->runs = 3;  // a run announced but not packed
  EXPECT_THROW(cmd->unpack(nominal, extra), std::runtime_error);
  fresh();
  cmd->runs = 0;
  EXPECT_THROW(cmd->unpack(nominal, extra), std::runtime_error);
  fresh();
  cmd->packed = macrostep::worker::kMaxCommandDoubles + 1;
  EXPECT_THROW(cmd->unpack(nominal, extra), std::runtime_error);
  fresh();
  EXPECT_NO_THROW(cmd->unpack(nominal, extra));
  EXPECT_EQ(extra.size(), 1u);
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

// The output evaluation (kEvaluate, protocol 7): the inputs travel as `packed` doubles, the reply
// is one run with zero statistics, its outputs and the feed-through block right after them.
TEST(EvaluatePacking, InputsAndEvaluatedOutputsRoundTripAndOnlyTheUsedValuesTravel) {
  auto command = std::make_unique<StepCommand>();
  command->kind = CommandKind::kEvaluate;
  const std::vector<double> u = {value(1), value(2)};
  command->set_inputs(u);
  ASSERT_EQ(command->inputs().size(), 2u);
  EXPECT_EQ(command->inputs()[0], u[0]);
  EXPECT_EQ(command->inputs()[1], u[1]);
  EXPECT_EQ(command->runs, 0u);
  EXPECT_EQ(command->wire_bytes(), offsetof(StepCommand, points) + 2 * sizeof(double));
  const std::vector<double> too_many(macrostep::model::SupportPoints::kMaxChannels + 1, 0.0);
  EXPECT_THROW(command->set_inputs(too_many), std::invalid_argument);

  auto reply = std::make_unique<StepReply>();
  reply->status = ReplyStatus::kOk;
  const std::vector<double> y = {value(3), value(4), value(5)}, d = {0, 0, -1, 0, 0, -2};
  reply->set_evaluation(y, d);
  EXPECT_EQ(reply->runs, 1u);
  EXPECT_EQ(reply->run_stats(0).steps, 0);
  for (std::size_t o = 0; o < 3; ++o) EXPECT_EQ(reply->run_outputs(0)[o], y[o]);
  const auto block = reply->feedthrough_values();
  EXPECT_TRUE(std::equal(block.begin(), block.end(), d.begin(), d.end()));
  const auto* end = reinterpret_cast<const std::byte*>(block.data() + block.size());
  EXPECT_EQ(reply->wire_bytes(),
            static_cast<std::size_t>(end - reinterpret_cast<const std::byte*>(reply.get())));
  const std::vector<double> outputs_too_many(kMaxOutputs + 1, 0.0);
  EXPECT_THROW(reply->set_evaluation(outputs_too_many, {}), std::invalid_argument);
}

// A worker stays awake between commands (spin, then yield: never only spin, which kept a CPU
// from the master) while every run has a CPU, and sleeps at once when the runs outnumber them.
TEST(WorkerWaitPolicy, SpinsThenYieldsWhenTheRunsFitElseSleeps) {
  using macrostep::worker::worker_wait_policy;
  const auto fits = worker_wait_policy(2, 0, 2);
  EXPECT_GT(fits.spin_iterations, 0u);
  EXPECT_GT(fits.yield_iterations, 0u);
  const auto extra_runs_too = worker_wait_policy(2, 1, 4);
  EXPECT_GT(extra_runs_too.yield_iterations, 0u);
  for (const auto& over :
       {worker_wait_policy(3, 0, 2), worker_wait_policy(2, 1, 2), worker_wait_policy(32, 0, 2)}) {
    EXPECT_EQ(over.spin_iterations, 0u);
    EXPECT_EQ(over.yield_iterations, 0u);
  }
}

}  // namespace

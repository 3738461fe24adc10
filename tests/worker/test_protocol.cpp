// The hot-path messages of the process runtime (ipc/.../protocol.hpp) as the runner's side writes
// and reads them (subsystems/worker/.../wire.hpp): packed runs
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

#include "macrostep/ipc/protocol.hpp"
#include "macrostep/worker/wire.hpp"
#include "macrostep/worker/worker.hpp"

namespace {

using macrostep::ipc::CommandKind;
using macrostep::ipc::kMaxOutputs;
using macrostep::ipc::kMaxPolynomialRuns;
using macrostep::ipc::kMaxRuns;
using macrostep::ipc::ReplyStatus;
using macrostep::ipc::StepCommand;
using macrostep::ipc::StepReply;
using macrostep::model::SupportPoints;
using macrostep::runner::ExtraRun;
using macrostep::runner::PassResult;
using macrostep::runner::RunResult;
using macrostep::runner::RunRole;
using macrostep::worker::pack_runs;
using macrostep::worker::unpack_runs;

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
      pack_runs(*cmd, nominal, extra);
      ASSERT_EQ(cmd->runs, kMaxRuns);
      ASSERT_LE(cmd->packed, macrostep::ipc::kMaxCommandDoubles);
      unpack_runs(*cmd, nominal_out, extra_out);
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
  std::vector<ExtraRun> extra{ExtraRun::comparison(points(1, 2, 2))};
  pack_runs(*cmd, points(2, 2, 1), extra);  // 3 + 3 + 2 * 3 = 12 doubles, then 1 + 3 + 2 + 2 * 2
  EXPECT_EQ(cmd->packed, 22u);
  extra.push_back(ExtraRun::perturbed(1, 0.5));  // a perturbed run is 3 doubles, not a polynomial
  pack_runs(*cmd, points(2, 2, 1), extra);
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
  EXPECT_THROW(pack_runs(*cmd, bad, {}), std::invalid_argument);
  bad.degree = -1;
  EXPECT_THROW(pack_runs(*cmd, bad, {}), std::invalid_argument);
  bad = points(2, 2, 3);
  bad.channels = SupportPoints::kMaxChannels + 1;
  EXPECT_THROW(pack_runs(*cmd, bad, {}), std::invalid_argument);
  const SupportPoints nominal = points(6, 8, 0);
  std::vector<ExtraRun> extra{ExtraRun::comparison(bad)};
  EXPECT_THROW(pack_runs(*cmd, nominal, extra), std::invalid_argument);
  extra = {ExtraRun::perturbed(SupportPoints::kMaxChannels, 1.0)};
  EXPECT_THROW(pack_runs(*cmd, nominal, extra), std::invalid_argument);
  extra.clear();
  for (std::size_t r = 1; r < kMaxPolynomialRuns; ++r) {
    extra.push_back(ExtraRun::comparison(points(6, 8, r)));
  }
  extra.push_back(ExtraRun::comparison(points(0, 1, 9)));
  EXPECT_THROW(pack_runs(*cmd, nominal, extra), std::invalid_argument);
  extra.pop_back();
  while (1 + extra.size() < kMaxRuns) extra.push_back(ExtraRun::perturbed(7, 1.0));
  pack_runs(*cmd, nominal, extra);
  EXPECT_EQ(cmd->packed, macrostep::ipc::kMaxCommandDoubles);  // the largest command fits
  extra.push_back(ExtraRun::perturbed(0, 1.0));
  EXPECT_THROW(pack_runs(*cmd, nominal, extra), std::invalid_argument);
}

TEST(StepCommandPacking, TheWorkerRejectsMalformedCommands) {
  auto cmd = std::make_unique<StepCommand>();
  SupportPoints nominal{};
  std::vector<ExtraRun> extra;
  const std::vector<ExtraRun> one{ExtraRun::perturbed(1, 2.0)};
  const auto fresh = [&] { pack_runs(*cmd, points(2, 2, 5), one); };
  fresh();
  cmd->points[0] = 2.5;  // a fractional degree
  EXPECT_THROW(unpack_runs(*cmd, nominal, extra), std::runtime_error);
  fresh();
  cmd->points[0] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(unpack_runs(*cmd, nominal, extra), std::runtime_error);
  fresh();
  cmd->points[1] = 9.0;  // more channels than kMaxChannels
  EXPECT_THROW(unpack_runs(*cmd, nominal, extra), std::runtime_error);
  fresh();
  cmd->points[12] = 3.0;  // an unknown run role
  EXPECT_THROW(unpack_runs(*cmd, nominal, extra), std::runtime_error);
  fresh();
  cmd->points[13] = 8.0;  // a perturbed channel beyond kMaxChannels - 1
  EXPECT_THROW(unpack_runs(*cmd, nominal, extra), std::runtime_error);
  fresh();
  cmd->packed -= 1;  // truncated
  EXPECT_THROW(unpack_runs(*cmd, nominal, extra), std::runtime_error);
  fresh();
  cmd->packed += 1;  // a value left over
  EXPECT_THROW(unpack_runs(*cmd, nominal, extra), std::runtime_error);
  fresh();
  cmd->runs = 3;  // a run announced but not packed
  EXPECT_THROW(unpack_runs(*cmd, nominal, extra), std::runtime_error);
  fresh();
  cmd->runs = 0;
  EXPECT_THROW(unpack_runs(*cmd, nominal, extra), std::runtime_error);
  fresh();
  cmd->packed = macrostep::ipc::kMaxCommandDoubles + 1;
  EXPECT_THROW(unpack_runs(*cmd, nominal, extra), std::runtime_error);
  fresh();
  EXPECT_NO_THROW(unpack_runs(*cmd, nominal, extra));
  EXPECT_EQ(extra.size(), 1u);
}

// The one encoder and its decoder: every run's counters and outputs, the feed-through block and
// the wall times come back bit for bit; only the used bytes travel.
TEST(StepReplyPacking, APassRoundTripsThroughTheEncoderAndDecoder) {
  auto reply = std::make_unique<StepReply>();
  reply->status = ReplyStatus::kOk;
  std::vector<RunResult> runs(3);
  for (std::size_t r = 0; r < 3; ++r) {
    runs[r].stats.steps = static_cast<long>(10 + r);
    runs[r].stats.step_sum = value(r + 20);
    runs[r].stats.wall_ns = static_cast<std::int64_t>(1000 * r);
    runs[r].outputs = {value(r), value(r + 10)};
  }
  runs[0].feedthrough = {value(30), value(31), value(32), value(33)};
  macrostep::worker::encode_pass(runs[0], std::span(runs).subspan(1), 2, 123, 456, *reply);
  PassResult pass;
  macrostep::worker::decode_pass(*reply, 2, pass);
  EXPECT_EQ(pass.solver_ns, 123);
  EXPECT_EQ(pass.extra_ns, 456);
  ASSERT_EQ(pass.extra.size(), 2u);
  for (std::size_t r = 0; r < 3; ++r) {
    const RunResult& got = r == 0 ? pass.nominal : pass.extra[r - 1];
    EXPECT_EQ(got.stats.steps, static_cast<long>(10 + r));
    EXPECT_EQ(got.stats.step_sum, value(r + 20));
    EXPECT_EQ(got.stats.wall_ns, static_cast<std::int64_t>(1000 * r));
    EXPECT_EQ(got.outputs, runs[r].outputs);
  }
  EXPECT_EQ(pass.nominal.feedthrough, runs[0].feedthrough);
  EXPECT_TRUE(pass.extra[0].feedthrough.empty());
  // The wire prefix ends right after the feed-through block.
  const auto block = reply->feedthrough_values();
  const auto* end = reinterpret_cast<const std::byte*>(block.data() + block.size());
  EXPECT_EQ(reply->wire_bytes(),
            static_cast<std::size_t>(end - reinterpret_cast<const std::byte*>(reply.get())));
  reply->set_failure(1, "extra run: IDA failed");  // the error text is last: it goes whole
  EXPECT_EQ(reply->status, ReplyStatus::kFailed);
  EXPECT_EQ(reply->failed_run, 1u);
  EXPECT_STREQ(reply->error, "extra run: IDA failed");
  EXPECT_EQ(reply->wire_bytes(), sizeof(StepReply));
  // A failed run without outputs is padded with zeros.
  runs[2].outputs.clear();
  macrostep::worker::encode_pass(runs[0], std::span(runs).subspan(1), 2, 0, 0, *reply);
  EXPECT_EQ(reply->run_outputs(2)[0], 0.0);
  EXPECT_EQ(reply->run_outputs(2)[1], 0.0);
  EXPECT_THROW(macrostep::worker::encode_pass(runs[0], {}, kMaxOutputs + 1, 0, 0, *reply),
               std::invalid_argument);
}

TEST(StepReplyPacking, TheWorkersTotalsRoundTrip) {
  auto reply = std::make_unique<StepReply>();
  macrostep::ida::AdvanceStats total;
  total.residual_evals = 77;
  total.step_square_sum = value(5);
  macrostep::worker::set_total_stats(*reply, total);
  const auto back = macrostep::worker::total_stats(*reply);
  EXPECT_EQ(back.residual_evals, 77);
  EXPECT_EQ(back.step_square_sum, value(5));
}

TEST(StepReplyPacking, TheLargestReplyFits) {
  auto reply = std::make_unique<StepReply>();
  reply->runs = kMaxRuns;
  reply->outputs = kMaxOutputs;
  const auto* last = reply->run_outputs(kMaxRuns - 1) + kMaxOutputs;
  EXPECT_LE(reinterpret_cast<const std::byte*>(last),
            reinterpret_cast<const std::byte*>(reply->error));
}

// The output evaluation (kEvaluate): the inputs travel as `packed` doubles, the reply
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
  macrostep::worker::encode_evaluation(y, d, {}, *reply);
  EXPECT_EQ(reply->runs, 1u);
  EXPECT_EQ(reply->status, ReplyStatus::kOk);
  std::vector<double> y_back, d_back;
  macrostep::worker::decode_evaluation(*reply, 3, y_back, d_back);
  EXPECT_EQ(y_back, y);
  EXPECT_EQ(d_back, d);
  for (std::size_t o = 0; o < 3; ++o) EXPECT_EQ(reply->run_outputs(0)[o], y[o]);
  const auto block = reply->feedthrough_values();
  EXPECT_TRUE(std::equal(block.begin(), block.end(), d.begin(), d.end()));
  const auto* end = reinterpret_cast<const std::byte*>(block.data() + block.size());
  EXPECT_EQ(reply->wire_bytes(),
            static_cast<std::size_t>(end - reinterpret_cast<const std::byte*>(reply.get())));
  const std::vector<double> outputs_too_many(kMaxOutputs + 1, 0.0);
  EXPECT_THROW(macrostep::worker::encode_evaluation(outputs_too_many, {}, {}, *reply),
               std::invalid_argument);
  macrostep::worker::encode_evaluation(y, {}, "output 2 is NaN", *reply);
  EXPECT_EQ(reply->status, ReplyStatus::kFailed);
  EXPECT_STREQ(reply->error, "output 2 is NaN");
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

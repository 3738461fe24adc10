// Exported controller state ("Exportable state"): MacroStepController::export_state /
// import_state. An imported controller, in this process or in a newly started one, plans and
// decides bit-identically to the exporter for the same outcomes (METHODS §6.4: the controller
// state is the accepted history, the plan, N_fail, N_succ and the start-up phase; DESIGN.md
// contract 2 for the master side of a checkpoint); broken or unfitting bytes give a clear
// exception, never a crash.
#include <capnp/message.h>
#include <capnp/serialize.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "../support/child_process.hpp"
#include "controller_driver.hpp"
#include "macrostep/control/macro_step_controller.hpp"
#include "macrostep/ipc/schema/state.capnp.h"

namespace mct = macrostep::control;
namespace drv = macrostep::test;

namespace {

using Bytes = std::vector<std::byte>;

mct::MacroStepController start(const std::string& kind) {
  return mct::MacroStepController(drv::driver_options(kind), drv::driver_u(0.0));
}

// Two controllers in the same state: same history, plan, counters and statistics.
void expect_same_state(const mct::MacroStepController& a, const mct::MacroStepController& b) {
  EXPECT_EQ(a.finished(), b.finished());
  EXPECT_EQ(a.consecutive_failures(), b.consecutive_failures());
  EXPECT_EQ(a.consecutive_successes(), b.consecutive_successes());
  EXPECT_EQ(a.in_start_phase(), b.in_start_phase());
  EXPECT_EQ(a.statistics().accepted, b.statistics().accepted);
  EXPECT_EQ(a.statistics().rejected, b.statistics().rejected);
  EXPECT_EQ(a.statistics().accepted_by_kappa, b.statistics().accepted_by_kappa);
  ASSERT_EQ(a.history().size(), b.history().size());
  for (std::size_t i = 0; i < a.history().size(); ++i) {
    EXPECT_EQ(a.history().time(i), b.history().time(i));
    EXPECT_EQ(std::memcmp(a.history().values(i).data(), b.history().values(i).data(),
                          a.history().channels() * sizeof(double)),
              0);
  }
  EXPECT_EQ(a.export_state(), b.export_state());
}

class ControllerState : public ::testing::TestWithParam<std::string> {};

// Export after 0, 1, 5, 17, 40 attempts and at the end; the imported controller continues
// with the same plans and verdicts to the end (METHODS §6.4, §6.5).
TEST_P(ControllerState, ImportedControllerContinuesBitIdentically) {
  for (const int before : {0, 1, 5, 17, 40, 100000}) {
    auto a = start(GetParam());
    drv::drive(a, before);
    const Bytes state = a.export_state();
    auto b = mct::MacroStepController::import_state(drv::driver_options(GetParam()), state,
                                                    drv::kDriverChannels);
    expect_same_state(a, b);
    const auto expected = drv::drive(a, 100000);
    EXPECT_EQ(drv::drive(b, 100000), expected) << "exported after " << before << " attempts";
    expect_same_state(a, b);
    EXPECT_TRUE(b.finished());
  }
}

// The driver reaches every part of the state that the export must carry.
TEST_P(ControllerState, DriverExercisesRejectionsAndOrderChanges) {
  auto c = start(GetParam());
  drv::drive(c, 100000);
  ASSERT_TRUE(c.finished());
  EXPECT_GT(c.statistics().accepted, 20u);
  if (GetParam() == "variable") {
    EXPECT_GT(c.statistics().rejected, 3u);
    EXPECT_GT(c.statistics().corrector_failures, 0u);
    int kappas = 0;
    for (const auto n : c.statistics().accepted_by_kappa) kappas += n > 0;
    EXPECT_GE(kappas, 3);
  }
}

// A newly started process (controller_state_child, posix_spawn) imports the file this process
// exported after 3 attempts (the start-up phase still
// running in variable mode) and drives its controller to the end: same plans and verdicts,
// same final state.
TEST_P(ControllerState, NewProcessContinuesBitIdentically) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("macrostep_controller_state_" + std::to_string(::getpid()) + "_" + GetParam());
  std::filesystem::create_directories(dir);
  auto a = start(GetParam());
  drv::drive(a, 3);  // variable mode: the start-up phase still doubles H
  const std::string state = (dir / "state.bin").string(), record = (dir / "record.bin").string(),
                    final_state = (dir / "final.bin").string();
  ASSERT_TRUE(drv::write_bytes(state, a.export_state()));
  const auto expected = drv::drive(a, 100000);
  ASSERT_EQ(drv::run_process(MACROSTEP_CONTROLLER_CHILD, {GetParam(), state, record, final_state}),
            0)
      << MACROSTEP_CONTROLLER_CHILD << " failed";
  const Bytes got = drv::read_bytes(record);
  ASSERT_EQ(got.size(), expected.size() * sizeof(std::uint64_t));
  EXPECT_EQ(std::memcmp(got.data(), expected.data(), got.size()), 0);
  EXPECT_EQ(drv::read_bytes(final_state), a.export_state());
  std::filesystem::remove_all(dir);
}

// Options or channel counts other than the exporter's: invalid_argument naming the field.
TEST_P(ControllerState, RejectsOtherOptionsOrChannels) {
  auto a = start(GetParam());
  drv::drive(a, 9);
  const Bytes state = a.export_state();
  auto expect_mismatch = [&state](const mct::MacroStepOptions& o, std::size_t channels,
                                  const char* needle) {
    try {
      mct::MacroStepController::import_state(o, state, channels);
      ADD_FAILURE() << "imported with another " << needle;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  const auto options = drv::driver_options(GetParam());
  expect_mismatch(options, 3, "coupling variables");
  auto o = options;
  o.t_end = 2.0;
  expect_mismatch(o, 2, "t_end");
  o = options;
  o.history_capacity = 12;
  expect_mismatch(o, 2, "history_capacity");
  o = options;
  o.step.r_max = 2.0;
  expect_mismatch(o, 2, "step.r_max");
  o = options;
  o.tolerances.atol_u_each = {0.5, 0.2500000000000001};
  expect_mismatch(o, 2, "atol_u_each");
  o = options;
  o.order.strategy = mct::OrderStrategy::kConservative;
  expect_mismatch(o, 2, "order.strategy");
}

// Empty, not whole words, random, zeros, every truncation, flipped bits: an exception naming
// the import, or (for a flipped value) a controller that runs; never a crash (asan preset).
TEST_P(ControllerState, RejectsMalformedBytes) {
  auto a = start(GetParam());
  drv::drive(a, 17);
  const Bytes good = a.export_state();
  const auto options = drv::driver_options(GetParam());
  auto import = [&](const Bytes& bytes) {
    return mct::MacroStepController::import_state(options, bytes, drv::kDriverChannels);
  };
  auto expect_rejected = [&](const Bytes& bytes, const std::string& what) {
    try {
      import(bytes);
      ADD_FAILURE() << "accepted " << what;
    } catch (const std::exception& e) {
      EXPECT_EQ(std::string(e.what()).rfind("MacroStepController::import_state", 0), 0u)
          << e.what();
    }
  };
  expect_rejected({}, "no bytes");
  expect_rejected(Bytes(good.begin(), good.begin() + 12), "12 bytes");
  expect_rejected(Bytes(64, std::byte{0}), "zeros");
  std::mt19937_64 random(17);
  for (const std::size_t words : {1u, 3u, 40u, 500u}) {
    Bytes garbage(words * 8);
    for (auto& b : garbage) b = static_cast<std::byte>(random());
    expect_rejected(garbage, std::to_string(words) + " words of garbage");
  }
  for (std::size_t size = 8; size < good.size(); size += 8) {
    expect_rejected(Bytes(good.begin(), good.begin() + static_cast<long>(size)),
                    "a truncation to " + std::to_string(size) + " bytes");
  }
  int accepted = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    Bytes bytes = good;
    bytes[random() % bytes.size()] ^= static_cast<std::byte>(1u << (random() % 8));
    try {
      auto c = import(bytes);
      ++accepted;
      drv::drive(c, 300);
    } catch (const std::exception&) {
      // rejected, or the flipped state ran into an error complete() reports
    }
  }
  EXPECT_GT(accepted, 0);
}

// Messages that parse but lie: another format version (invalid_argument), indices or
// invariants out of range (runtime_error).
TEST_P(ControllerState, RejectsEditedMessages) {
  auto a = start(GetParam());
  drv::drive(a, 12);
  const Bytes good = a.export_state();
  auto edited = [&good](auto edit) {
    std::vector<capnp::word> words(good.size() / sizeof(capnp::word));
    std::memcpy(words.data(), good.data(), good.size());
    capnp::FlatArrayMessageReader reader(kj::arrayPtr(words.data(), words.size()));
    capnp::MallocMessageBuilder message;
    message.setRoot(reader.getRoot<macrostep::ipc::schema::ControllerState>());
    edit(message.getRoot<macrostep::ipc::schema::ControllerState>());
    const auto flat = capnp::messageToFlatArray(message);
    const auto b = flat.asBytes();
    Bytes out(b.size());
    std::memcpy(out.data(), b.begin(), b.size());
    return out;
  };
  const auto options = drv::driver_options(GetParam());
  auto expect_error = [&](const Bytes& bytes, bool mismatch, const char* needle) {
    try {
      mct::MacroStepController::import_state(options, bytes, drv::kDriverChannels);
      ADD_FAILURE() << "accepted an edited message (" << needle << ")";
    } catch (const std::invalid_argument& e) {
      EXPECT_TRUE(mismatch) << e.what();
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    } catch (const std::runtime_error& e) {
      EXPECT_FALSE(mismatch) << e.what();
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  using Root = macrostep::ipc::schema::ControllerState::Builder;
  expect_error(edited([](Root r) { r.setFormatVersion(mct::kControllerStateFormatVersion + 1); }),
               true, "format version");
  expect_error(edited([](Root r) { r.getPlan().setKappa(6); }), false, "kappa 6");
  expect_error(edited([](Root r) { r.getPlan().setEstimator(9); }), false, "estimator 9");
  expect_error(edited([](Root r) { r.getPlan().setTBegin(r.getPlan().getTBegin() + 1e-9); }), false,
               "newest history point");
  expect_error(edited([](Root r) { r.getPlan().setRepeat(r.getPlan().getRepeat() + 1); }), false,
               "newest history point");
  expect_error(edited([](Root r) { r.getHistoryTimes().set(1, r.getHistoryTimes()[0]); }), false,
               "does not follow");
  expect_error(edited([](Root r) { r.getHistoryValues().set(0, std::nan("")); }), false,
               "non-finite");
  expect_error(edited([](Root r) { r.initHistoryTimes(0); }), false, "history points");
  expect_error(edited([](Root r) { r.getStatistics().initAcceptedByKappa(2); }), false,
               "order histogram");
  expect_error(edited([](Root r) { r.setConsecutiveSuccesses(-1); }), false, "N_succ");
  if (GetParam() == "fixed") {
    expect_error(edited([](Root r) { r.setStartPhase(true); }), false, "start-up phase");
  }
}

// Exporting equal states gives equal bytes, and export(import(bytes)) == bytes.
TEST_P(ControllerState, ExportIsDeterministicAndRoundTrips) {
  auto a = start(GetParam());
  auto b = start(GetParam());
  drv::drive(a, 31);
  drv::drive(b, 31);
  const Bytes state = a.export_state();
  EXPECT_EQ(state, b.export_state());
  const auto c = mct::MacroStepController::import_state(drv::driver_options(GetParam()), state,
                                                        drv::kDriverChannels);
  EXPECT_EQ(c.export_state(), state);
}

INSTANTIATE_TEST_SUITE_P(Modes, ControllerState, ::testing::Values("variable", "fixed"),
                         [](const auto& info) { return info.param; });

}  // namespace

// Exported workspace snapshots ("Exportable state"): Integrator::export_snapshot /
// import_snapshot. A snapshot imported into a fresh integrator, in this process or in a newly
// started one, continues bit-identically (DESIGN.md contract 2; METHODS.md §4.7; seed 000
// §4.2: a restored solver continues "without any initialization or additional starting
// procedures"); bytes that do not fit or are broken give a clear exception, never a crash.
#include <capnp/message.h>
#include <capnp/serialize.h>
#include <gtest/gtest.h>
#include <klu.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "../support/child_process.hpp"
#include "export_scenario.hpp"
#include "macrostep/ida/integrator.hpp"
#include "macrostep/ipc/schema/state.capnp.h"

namespace macrostep {
namespace {

using ida::Integrator;
using ida::LinearSolver;
using Bytes = std::vector<std::byte>;
constexpr double kH = test::ExportScenario::kH;

std::string solver_name(LinearSolver s) {
  return s == LinearSolver::kKlu ? "Klu" : "Dense";
}

Bytes export_now(const Integrator& integ) {
  return integ.export_snapshot(*integ.make_snapshot());
}

// A fresh integrator of the scenario's kind, continued from `bytes`.
void import_into(Integrator& fresh, const Bytes& bytes) {
  auto snapshot = fresh.make_snapshot();
  fresh.import_snapshot(bytes, *snapshot);
  fresh.restore(*snapshot);
}

void expect_same_records(const Bytes& expected, const Bytes& actual, const model::Subsystem& s,
                         const std::string& where) {
  const long point = test::first_difference(expected, actual, test::record_size(s));
  EXPECT_EQ(point, -1) << where << ": the continuation differs first at its macro point " << point
                       << " (records of " << expected.size() << " and " << actual.size()
                       << " bytes)";
}

class SnapshotExport : public ::testing::TestWithParam<LinearSolver> {
 protected:
  test::ExportScenario scenario_{GetParam()};
};

// Export at several macro points (including the start, nst = 0), import each into a fresh
// integrator, advance to the end: states, outputs, orders, step sizes and counters are
// bit-identical to the integrator that never stopped (DESIGN.md contract 2).
TEST_P(SnapshotExport, FreshIntegratorContinuesBitIdentically) {
  constexpr int kLast = 45;
  const std::vector<int> exports = {0, 1, 4, 11, 23, 40};
  Integrator reference(scenario_.segment, scenario_.options, &scenario_.input);
  std::map<int, Bytes> exported;
  Bytes record;
  for (int k = 0; k <= kLast; ++k) {
    if (k > 0) test::append_record(record, reference, reference.advance_to(k * kH));
    if (std::find(exports.begin(), exports.end(), k) != exports.end()) {
      exported[k] = export_now(reference);
    }
  }
  const std::size_t point = test::record_size(scenario_.segment);
  for (const auto& [k, bytes] : exported) {
    Integrator fresh(scenario_.segment, scenario_.options, &scenario_.input);
    import_into(fresh, bytes);
    EXPECT_EQ(fresh.time(), k * kH);
    const Bytes continued = test::advance_and_record(fresh, k + 1, kLast, kH);
    const Bytes expected(record.begin() + static_cast<long>(point) * k, record.end());
    expect_same_records(expected, continued, scenario_.segment,
                        "exported at macro point " + std::to_string(k));
  }
}

// The same state exports to the same bytes, and export(import(bytes)) == bytes: the import
// carries every exported field into the snapshot.
TEST_P(SnapshotExport, ExportIsDeterministicAndRoundTrips) {
  Integrator a(scenario_.segment, scenario_.options, &scenario_.input);
  a.advance_to(13 * kH);
  const Bytes first = export_now(a);
  EXPECT_EQ(first, export_now(a));
  Integrator b(scenario_.segment, scenario_.options, &scenario_.input);
  b.advance_to(2 * kH);  // its own, different history and factorization
  auto snapshot = b.make_snapshot();
  b.import_snapshot(first, *snapshot);
  EXPECT_EQ(b.export_snapshot(*snapshot), first);
  b.restore(*snapshot);
  EXPECT_EQ(export_now(b), first);
  EXPECT_EQ(snapshot->time(), 13 * kH);
}

// Singleton blocks and entries off the diagonal blocks of KLU's block triangular form travel
// too (the chain is one irreducible block).
TEST_P(SnapshotExport, BlockTriangularModelContinuesBitIdentically) {
  test::CascadeModel model;
  test::QuadraticInput input(1, 0.0, 1e3);
  Integrator reference(model, scenario_.options, &input);
  reference.advance_to(7e-3);
  const Bytes bytes = export_now(reference);
  const Bytes expected = test::advance_and_record(reference, 8, 40, 1e-3);
  Integrator fresh(model, scenario_.options, &input);
  import_into(fresh, bytes);
  expect_same_records(expected, test::advance_and_record(fresh, 8, 40, 1e-3), model, "cascade");
}

// A new process (ida_snapshot_child, started with posix_spawn) imports the file this process
// exported after 12 macro steps and continues over 30 more: its record equals this process's
// continuation bit for bit (DESIGN.md contract 2).
TEST_P(SnapshotExport, NewProcessContinuesBitIdentically) {
  const auto dir =
      std::filesystem::temp_directory_path() /
      ("macrostep_snapshot_export_" + std::to_string(::getpid()) + "_" + solver_name(GetParam()));
  std::filesystem::create_directories(dir);
  Integrator a(scenario_.segment, scenario_.options, &scenario_.input);
  for (int k = 1; k <= 12; ++k) a.advance_to(k * kH);
  const std::string snapshot_file = (dir / "snapshot.bin").string();
  const std::string record_file = (dir / "record.bin").string();
  ASSERT_TRUE(test::write_bytes(snapshot_file, export_now(a)));
  const Bytes expected = test::advance_and_record(a, 13, 42, kH);
  const int status = test::run_process(
      MACROSTEP_SNAPSHOT_CHILD,
      {GetParam() == LinearSolver::kKlu ? "klu" : "dense", snapshot_file, "13", "42", record_file});
  ASSERT_EQ(status, 0) << MACROSTEP_SNAPSHOT_CHILD << " failed";
  expect_same_records(expected, test::read_bytes(record_file), scenario_.segment, "new process");
  std::filesystem::remove_all(dir);
}

// Import into an integrator it was not made for: invalid_argument naming the difference.
TEST_P(SnapshotExport, RejectsSnapshotOfAnotherIntegrator) {
  Integrator a(scenario_.segment, scenario_.options, &scenario_.input);
  a.advance_to(5 * kH);
  const Bytes bytes = export_now(a);
  auto expect_mismatch = [&bytes](const Integrator& target, const char* needle) {
    auto snapshot = target.make_snapshot();
    try {
      target.import_snapshot(bytes, *snapshot);
      ADD_FAILURE() << "imported a snapshot that does not fit (" << needle << ")";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  library::ChainSegment smaller(scenario_.params, 0, 5);
  test::QuadraticInput one(1, 0.0, 1.0);
  expect_mismatch(Integrator(smaller, scenario_.options, &one), "states");
  // Same state size, other inputs: refused by the structure hash.
  library::ChainSegment first(scenario_.params, 0, 10);
  ASSERT_EQ(first.state_size(), scenario_.segment.state_size());
  expect_mismatch(Integrator(first, scenario_.options, &one), "subsystem");
  ida::IntegratorOptions other_solver = scenario_.options;
  other_solver.linear_solver =
      GetParam() == LinearSolver::kKlu ? LinearSolver::kDense : LinearSolver::kKlu;
  expect_mismatch(
      Integrator(scenario_.segment, other_solver, &scenario_.input),
      GetParam() == LinearSolver::kKlu ? "this one uses dense LU" : "this one uses KLU");
  ida::IntegratorOptions other_rtol = scenario_.options;
  other_rtol.rtol = 1e-7;
  expect_mismatch(Integrator(scenario_.segment, other_rtol, &scenario_.input), "rtol");
  ida::IntegratorOptions other_order = scenario_.options;
  other_order.max_order = 3;
  expect_mismatch(Integrator(scenario_.segment, other_order, &scenario_.input), "max_order");
}

// Broken bytes: empty, not whole words, random, every truncation. Each gives an exception
// that names the import (never a crash; run under the asan preset too), and a failed import
// leaves the snapshot as it was.
TEST_P(SnapshotExport, RejectsMalformedBytes) {
  Integrator a(scenario_.segment, scenario_.options, &scenario_.input);
  a.advance_to(5 * kH);
  const Bytes good = export_now(a);
  auto snapshot = a.make_snapshot();
  const Bytes before = a.export_snapshot(*snapshot);
  auto expect_rejected = [&](const Bytes& bytes, const std::string& what) {
    try {
      a.import_snapshot(bytes, *snapshot);
      ADD_FAILURE() << "accepted " << what;
    } catch (const std::exception& e) {
      EXPECT_EQ(std::string(e.what()).rfind("WorkspaceSnapshot import", 0), 0u) << e.what();
    }
  };
  expect_rejected({}, "no bytes");
  expect_rejected(Bytes(good.begin(), good.begin() + 13), "13 bytes");
  std::mt19937_64 random(8);
  for (const std::size_t words : {1u, 2u, 5u, 64u, 1000u}) {
    Bytes garbage(words * 8);
    for (auto& b : garbage) b = static_cast<std::byte>(random());
    expect_rejected(garbage, std::to_string(words) + " words of garbage");
  }
  expect_rejected(Bytes(64, std::byte{0}), "zeros");
  for (std::size_t size = 8; size < good.size(); size += 8) {
    expect_rejected(Bytes(good.begin(), good.begin() + static_cast<long>(size)),
                    "a truncation to " + std::to_string(size) + " bytes");
  }
  EXPECT_EQ(a.export_snapshot(*snapshot), before);
}

// Flipped bits anywhere in a valid export: the import either rejects the message or yields a
// snapshot that can be restored and advanced (IDA may fail on absurd values, but nothing
// crashes). Under the asan preset this checks that every index is validated.
TEST_P(SnapshotExport, FlippedBitsNeverCrash) {
  ida::IntegratorOptions options = scenario_.options;
  options.max_steps = 2000;  // a flipped step size must not make a single advance take minutes
  Integrator a(scenario_.segment, options, &scenario_.input);
  a.advance_to(9 * kH);
  const Bytes good = export_now(a);
  Integrator target(scenario_.segment, options, &scenario_.input);
  auto snapshot = target.make_snapshot();
  std::mt19937_64 random(2024);
  int accepted = 0, rejected = 0;
  for (int trial = 0; trial < 1500; ++trial) {
    Bytes bytes = good;
    const std::size_t at = random() % bytes.size();
    bytes[at] ^= static_cast<std::byte>(1u << (random() % 8));
    try {
      target.import_snapshot(bytes, *snapshot);
    } catch (const std::exception&) {
      ++rejected;
      continue;
    }
    ++accepted;
    try {
      target.restore(*snapshot);
      target.advance_to(snapshot->time() + kH);
    } catch (const std::exception&) {
      // invalid time or an IDA failure: reported, as it should be
    }
  }
  EXPECT_GT(rejected, 0);
  EXPECT_GT(accepted, 0);
}

// Messages that parse but lie: another format or library version (invalid_argument), an index
// out of range in IDA's or KLU's state (runtime_error).
TEST_P(SnapshotExport, RejectsEditedMessages) {
  Integrator a(scenario_.segment, scenario_.options, &scenario_.input);
  a.advance_to(6 * kH);
  const Bytes good = export_now(a);
  auto edited = [&good](auto edit) {
    std::vector<capnp::word> words(good.size() / sizeof(capnp::word));
    std::memcpy(words.data(), good.data(), good.size());
    capnp::FlatArrayMessageReader reader(kj::arrayPtr(words.data(), words.size()));
    capnp::MallocMessageBuilder message;
    message.setRoot(reader.getRoot<ipc::schema::IdaSnapshot>());
    edit(message.getRoot<ipc::schema::IdaSnapshot>());
    const auto flat = capnp::messageToFlatArray(message);
    const auto b = flat.asBytes();
    Bytes out(b.size());
    std::memcpy(out.data(), b.begin(), b.size());
    return out;
  };
  auto snapshot = a.make_snapshot();
  auto expect_error = [&](const Bytes& bytes, bool mismatch, const char* needle) {
    try {
      a.import_snapshot(bytes, *snapshot);
      ADD_FAILURE() << "accepted an edited message (" << needle << ")";
    } catch (const std::invalid_argument& e) {
      EXPECT_TRUE(mismatch) << e.what();
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    } catch (const std::runtime_error& e) {
      EXPECT_FALSE(mismatch) << e.what();
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  using Root = ipc::schema::IdaSnapshot::Builder;
  expect_error(edited([](Root r) { r.setFormatVersion(ida::kSnapshotFormatVersion + 1); }), true,
               "format version");
  expect_error(edited([](Root r) { r.setSundialsVersion("7.0.0"); }), true, "SUNDIALS 7.0.0");
  expect_error(edited([](Root r) { r.setKluVersion("2.0.0"); }), true, "KLU 2.0.0");
  expect_error(edited([](Root r) { r.setStateSize(r.getStateSize() + 2); }), true, "states");
  expect_error(edited([](Root r) { r.getIda()[3].setInteger(9); }), false, "ida_kk");
  expect_error(edited([](Root r) { r.getIda()[3].setName("ida_k"); }), false, "ida_kk");
  expect_error(edited([](Root r) { r.initMatrix(3); }), false, "Jacobian matrix");
  expect_error(edited([](Root r) { r.initVectors(2); }), false, "state vectors");
  if (GetParam() == LinearSolver::kDense) {
    expect_error(edited([](Root r) { r.getDense().getPivots().set(4, 999); }), false, "pivot");
    return;
  }
  expect_error(edited([](Root r) { r.getKlu().getNumeric().getPnum().set(0, 999); }), false,
               "Pnum");
  expect_error(edited([](Root r) { r.getKlu().getNumeric().getLip().set(5, 1 << 30); }), false,
               "buffer");
  expect_error(edited([](Root r) {
                 auto numeric = r.getKlu().getNumeric();
                 unsigned k = 0;  // a column of L with entries: its first row index
                 while (numeric.getLlen()[k] == 0) ++k;
                 numeric.getLuUnits().set(static_cast<unsigned>(numeric.getLip()[k]), 12345);
               }),
               false, "row index");
  expect_error(edited([](Root r) { r.getKlu().getNumeric().setWorksize(8); }), false, "worksize");
  expect_error(edited([](Root r) { r.getKlu().getCommon()[7].setInteger(0); }), true, "scale");
}

INSTANTIATE_TEST_SUITE_P(Solvers, SnapshotExport,
                         ::testing::Values(LinearSolver::kKlu, LinearSolver::kDense),
                         [](const auto& info) { return solver_name(info.param); });

// Why the export carries KLU's numeric factorization instead of the Jacobian values to refactor
// from (DESIGN.md contract 2 says "refactor KLU from them"): SUNLinSol_KLU refactors with the
// pivot order of an earlier klu_l_factor, and a fresh klu_l_factor of the very same values may
// pivot differently, giving solutions that differ in the last bits.
TEST(KluFactorization, FreshFactorOfTheSameValuesCanPivotDifferently) {
  SuiteSparse_long ap[] = {0, 2, 4}, ai[] = {0, 1, 0, 1};
  double first[] = {1.0, 0.5, 0.5, 1.0};  // column-major, diagonally dominant
  double later[] = {1e-6, 1.0, 1.0, 1e-6};
  klu_l_common common;
  klu_l_defaults(&common);
  klu_l_symbolic* symbolic = klu_l_analyze(2, ap, ai, &common);
  klu_l_numeric* kept = klu_l_factor(ap, ai, first, symbolic, &common);
  ASSERT_TRUE(kept && klu_l_refactor(ap, ai, later, symbolic, kept, &common));
  klu_l_numeric* fresh = klu_l_factor(ap, ai, later, symbolic, &common);
  ASSERT_TRUE(fresh);
  EXPECT_NE(kept->Pnum[0], fresh->Pnum[0]);
  double x_kept[] = {1.0, 2.0}, x_fresh[] = {1.0, 2.0};
  klu_l_solve(symbolic, kept, 2, 1, x_kept, &common);
  klu_l_solve(symbolic, fresh, 2, 1, x_fresh, &common);
  EXPECT_NE(std::memcmp(x_kept, x_fresh, sizeof x_kept), 0);
  klu_l_free_numeric(&kept, &common);
  klu_l_free_numeric(&fresh, &common);
  klu_l_free_symbolic(&symbolic, &common);
}

}  // namespace
}  // namespace macrostep

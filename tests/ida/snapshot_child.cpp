// A newly started process that continues an exported workspace snapshot (DESIGN.md
// contract 2): test_ida's SnapshotExportProcess tests start it and compare its record with the
// continuation of the process that wrote the snapshot.
//
//   ida_snapshot_child klu|dense SNAPSHOT_FILE FIRST_POINT LAST_POINT RECORD_FILE
//
// It builds the ExportScenario afresh, imports the snapshot into a new integrator, restores it
// and advances over the macro points FIRST..LAST, writing their record. Exit status 0 on
// success, 1 with the reason on stderr otherwise.
#include <cstdio>
#include <exception>
#include <stdexcept>
#include <string>

#include "../support/child_process.hpp"
#include "export_scenario.hpp"

int main(int argc, char** argv) {
  using namespace macrostep;
  if (argc != 6) {
    std::fprintf(stderr, "usage: %s klu|dense SNAPSHOT FIRST LAST RECORD\n", argv[0]);
    return 1;
  }
  try {
    const std::string solver = argv[1];
    test::ExportScenario scenario(solver == "dense" ? ida::LinearSolver::kDense
                                                    : ida::LinearSolver::kKlu);
    ida::Integrator integ(scenario.segment, scenario.options, &scenario.input);
    auto snapshot = integ.make_snapshot();
    integ.import_snapshot(test::read_bytes(argv[2]), *snapshot);
    integ.restore(*snapshot);
    const auto record = test::advance_and_record(integ, std::stoi(argv[3]), std::stoi(argv[4]),
                                                 test::ExportScenario::kH);
    if (!test::write_bytes(argv[5], record)) throw std::runtime_error("cannot write the record");
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ida_snapshot_child: %s\n", e.what());
    return 1;
  }
}

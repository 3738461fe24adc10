// A newly started process that continues an exported MacroStepController: test_control's
// ControllerState.NewProcessContinuesBitIdentically starts it and compares its record with the
// continuation of the process that exported the state.
//
//   controller_state_child variable|fixed STATE_FILE RECORD_FILE FINAL_STATE_FILE
//
// It imports the state with the driver's options, drives the controller to the end and writes
// the record of plans and verdicts and the final exported state. Exit status 0 on success, 1
// with the reason on stderr otherwise.
#include <cstdio>
#include <exception>
#include <stdexcept>

#include "../support/child_process.hpp"
#include "controller_driver.hpp"

int main(int argc, char** argv) {
  using namespace macrostep;
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s variable|fixed STATE RECORD FINAL_STATE\n", argv[0]);
    return 1;
  }
  try {
    auto c = control::MacroStepController::import_state(
        test::driver_options(argv[1]), test::read_bytes(argv[2]), test::kDriverChannels);
    const auto record = test::drive(c, 100000);
    if (!test::write_bytes(argv[3], record) || !test::write_bytes(argv[4], c.export_state())) {
      throw std::runtime_error("cannot write the results");
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "controller_state_child: %s\n", e.what());
    return 1;
  }
}

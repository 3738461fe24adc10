// The executor protocol (call_order_suite.hpp) in-process and with worker processes (this
// build's macrostep, as the other executor tests spawn it); test_mpi_call_order runs it behind
// the MPI bridge.
#include <memory>

#include "call_order_suite.hpp"
#include "macrostep/executors/in_process_executor.hpp"
#include "macrostep/executors/process_executor.hpp"

namespace macrostep::testing {
namespace {

struct InProcessFactory {
  static std::unique_ptr<executors::Executor> make(const CallOrderSystem& s,
                                                   const executors::ExecutorOptions& options) {
    return std::make_unique<executors::InProcessExecutor>(s.system, s.u0, options);
  }
};

struct ProcessFactory {
  static std::unique_ptr<executors::Executor> make(const CallOrderSystem& s,
                                                   const executors::ExecutorOptions& options) {
    executors::ProcessOptions po;
    static_cast<executors::ExecutorOptions&>(po) = options;
    po.executable = MACROSTEP_BINARY;
    return std::make_unique<executors::ProcessExecutor>(s.system, s.models, s.u0, po);
  }
};

// The master runs subsystem 1 itself: the hosted runner keeps the same order.
struct HostedFactory {
  static std::unique_ptr<executors::Executor> make(const CallOrderSystem& s,
                                                   const executors::ExecutorOptions& options) {
    executors::ProcessOptions po;
    static_cast<executors::ExecutorOptions&>(po) = options;
    po.executable = MACROSTEP_BINARY;
    po.host_first_subsystem = true;
    return std::make_unique<executors::ProcessExecutor>(s.system, s.models, s.u0, po);
  }
};

}  // namespace

INSTANTIATE_TYPED_TEST_SUITE_P(CallOrderInProcess, CallOrder, InProcessFactory);
INSTANTIATE_TYPED_TEST_SUITE_P(CallOrderProcesses, CallOrder, ProcessFactory);
INSTANTIATE_TYPED_TEST_SUITE_P(CallOrderHosted, CallOrder, HostedFactory);

}  // namespace macrostep::testing

// Issue 4 benchmarks of the process runtime, in one run:
//  1. overhead per macro step with 2, 8, 32 nearly-no-op subsystems (one light mass each, fixed
//     H, kappa = 0, no estimator) on this machine's cores, in-process vs one process per
//     subsystem (oversubscribed: sleeping waiters must keep it bounded);
//  2. parallel efficiency: a chain of two equal subsystems with the process executor, workers
//     pinned to two different PUs vs both on one PU (the `taskset` comparison), T(1 PU)/T(2 PUs)
//     (issue goal >= 1.85).
// Wall-clock ratios measured within this one run; timing on a shared machine is noisy.
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <chrono>
#include <memory>
#include <vector>

#include "macrostep/executors/in_process_executor.hpp"
#include "macrostep/executors/process_executor.hpp"
#include "macrostep/library/chain.hpp"
#include "macrostep/library/chain_spec.hpp"
#include "macrostep/schemes/explicit_jacobi.hpp"
#include "macrostep/system/coupled_system.hpp"

using namespace macrostep;

namespace {

library::ChainParameters chain(std::size_t masses, double mass) {
  library::ChainSpec s;
  s.masses = masses;
  s.mass = library::ValueSpec::fixed(mass);
  s.element.c = 1e5;
  s.element.d = 1.0;
  s.element.C = 1e9;
  s.element.D = 1e4;
  s.x0 = library::ValueSpec::uniform(-1e-3, 1e-3);
  s.v0 = library::ValueSpec::uniform(-1e-1, 1e-1);
  s.seed = 4;
  return library::realize(s);
}

struct Timing {
  double seconds = 0.0;
  std::uint64_t steps = 0;
};

Timing run(const library::ChainParameters& p, std::size_t subsystems, bool processes, double h,
           double t_end, const std::string& binary, std::vector<std::vector<unsigned>> cpusets) {
  const auto boundaries = library::equal_partition(p.size(), subsystems);
  const auto sys = system::make_chain_system(p, boundaries);
  schemes::ExplicitOptions o;
  o.control.mode = control::StepSizeMode::kFixed;
  o.control.t_end = t_end;
  o.control.h = h;
  o.control.kappa_fixed = 0;
  o.control.estimator = control::Estimator::kNone;
  const auto u0 = sys.initial_couplings();
  std::unique_ptr<executors::Executor> ex;
  if (processes) {
    executors::ProcessOptions po;
    po.rollback = false;
    po.extra_runs = 0;
    po.threads = 1;
    po.executable = binary;
    po.cpusets = std::move(cpusets);
    ex = std::make_unique<executors::ProcessExecutor>(sys, p, boundaries, u0, po);
  } else {
    executors::InProcessOptions io;
    io.rollback = false;
    io.threads = 1;
    ex = std::make_unique<executors::InProcessExecutor>(sys, u0, io);
  }
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = schemes::run_explicit(sys, *ex, o, [](const schemes::AcceptedPoint&) {});
  Timing t;
  t.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  t.steps = r.steps.accepted;
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Process-runtime overhead and parallel efficiency (issue 4)"};
  std::string binary = MACROSTEP_BINARY;
  std::vector<std::size_t> counts = {2, 8, 32};
  double overhead_t_end = 2e-3;
  std::size_t efficiency_masses = 2000;
  double efficiency_t_end = 2e-3;
  app.add_option("--macrostep", binary, "the macrostep binary (worker processes)");
  app.add_option("--subsystems", counts, "subsystem counts of the overhead runs")->delimiter(',');
  app.add_option("--overhead-t-end", overhead_t_end, "simulated time of the overhead runs [s]");
  app.add_option("--efficiency-masses", efficiency_masses, "masses of the efficiency chain");
  app.add_option("--efficiency-t-end", efficiency_t_end, "simulated time of the efficiency runs");
  CLI11_PARSE(app, argc, argv);

  const double h = 1e-5;
  fmt::print(
      "1. overhead per macro step: one 1 kg mass per subsystem, fixed H = {} s, kappa 0, "
      "t_end = {} s, one thread per executor\n",
      h, overhead_t_end);
  fmt::print("{:>11} {:>8} {:>18} {:>18} {:>8}\n", "subsystems", "steps", "in-process [us]",
             "processes [us]", "ratio");
  for (std::size_t n : counts) {
    const auto p = chain(n, 1.0);
    const Timing a = run(p, n, false, h, overhead_t_end, binary, {});
    const Timing b = run(p, n, true, h, overhead_t_end, binary, {});
    const double ua = 1e6 * a.seconds / static_cast<double>(a.steps);
    const double ub = 1e6 * b.seconds / static_cast<double>(b.steps);
    fmt::print("{:>11} {:>8} {:>18.1f} {:>18.1f} {:>8.2f}\n", n, b.steps, ua, ub, ub / ua);
    std::fflush(stdout);
  }

  fmt::print(
      "\n2. parallel efficiency: {} masses in 2 equal subsystems, fixed H = {} s, "
      "kappa 0, t_end = {} s, process executor\n",
      efficiency_masses, h, efficiency_t_end);
  const auto p = chain(efficiency_masses, 1.0);
  const Timing one = run(p, 2, true, h, efficiency_t_end, binary, {{0}, {0}});
  const Timing two = run(p, 2, true, h, efficiency_t_end, binary, {{0}, {1}});
  fmt::print(
      "workers on PU 0 and PU 0: {:.3f} s; on PU 0 and PU 1: {:.3f} s; "
      "T(1 PU)/T(2 PUs) = {:.2f} (issue goal >= 1.85)\n",
      one.seconds, two.seconds, one.seconds / two.seconds);
  return 0;
}

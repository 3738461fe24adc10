// The scenario of the exported-snapshot tests, shared by test_ida and by the process that
// continues an exported snapshot (snapshot_child.cpp): the interior chain segment of
// test_snapshot.cpp under a quadratic input, and a byte record of every macro point.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

#include "macrostep/ida/integrator.hpp"
#include "test_support.hpp"

namespace macrostep::test {

struct ExportScenario {
  explicit ExportScenario(ida::LinearSolver solver) { options.linear_solver = solver; }
  ExportScenario(const ExportScenario&) = delete;
  ExportScenario& operator=(const ExportScenario&) = delete;

  static constexpr double kH = 2e-5;  // macro step
  library::ChainParameters params = nonlinear_chain(30);
  library::ChainSegment segment{params, 10, 20};
  QuadraticInput input{2, 0.0, 100.0};
  ida::IntegratorOptions options;
};

// Bytes one macro point adds to a record (see append_record).
inline std::size_t record_size(const model::Subsystem& s) {
  return sizeof(double) * (2 + 2 * s.state_size() + s.output_size()) + sizeof(int) +
         7 * sizeof(long);
}

// Appends the state at the integrator's macro point bit for bit: time, z, z', outputs, order,
// next step size and the counters of the advance that reached it (not its wall time).
inline void append_record(std::vector<std::byte>& out, const ida::Integrator& integ,
                          const ida::AdvanceStats& s) {
  const std::size_t n = integ.subsystem().state_size();
  std::vector<double> z(n), zp(n), y(integ.subsystem().output_size());
  integ.state(z, zp);
  integ.outputs(y);
  auto put = [&out](const void* p, std::size_t bytes) {
    const auto* b = static_cast<const std::byte*>(p);
    out.insert(out.end(), b, b + bytes);
  };
  const double t = integ.time(), h = integ.next_step_size();
  const int order = integ.current_order();
  const long counters[] = {s.steps,
                           s.residual_evals,
                           s.jacobian_evals,
                           s.nonlinear_iterations,
                           s.nonlinear_failures,
                           s.error_test_failures,
                           s.linear_setups};
  put(&t, sizeof t);
  put(z.data(), n * sizeof(double));
  put(zp.data(), n * sizeof(double));
  put(y.data(), y.size() * sizeof(double));
  put(&order, sizeof order);
  put(&h, sizeof h);
  put(counters, sizeof counters);
}

// Advances over the macro points k*h, k = first..last, and records each.
inline std::vector<std::byte> advance_and_record(ida::Integrator& integ, int first, int last,
                                                 double h) {
  std::vector<std::byte> record;
  for (int k = first; k <= last; ++k) append_record(record, integ, integ.advance_to(k * h));
  return record;
}

// The first macro point (0-based within a record) where two records differ; -1 if equal.
inline long first_difference(const std::vector<std::byte>& a, const std::vector<std::byte>& b,
                             std::size_t point_bytes) {
  const std::size_t common = std::min(a.size(), b.size());
  for (std::size_t i = 0; i < common; ++i) {
    if (a[i] != b[i]) return static_cast<long>(i / point_bytes);
  }
  return a.size() == b.size() ? -1 : static_cast<long>(common / point_bytes);
}

}  // namespace macrostep::test

// `macrostep compare` (compare_command.hpp).
#include "compare_command.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "macrostep/output/csv.hpp"
#include "macrostep/output/hdf5.hpp"
#include "macrostep/output/nrmse.hpp"

namespace macrostep::app {

int compare(const CompareArgs& args) {
  const auto result = macrostep::output::read_result_table(args.result);
  const auto reference = macrostep::output::read_result_table(args.reference);
  const auto report =
      macrostep::output::compute_nrmse(result, reference, {args.result, args.reference});

  fmt::print("NRMSE of {} against {}: {} time points{}\n", args.result, args.reference,
             report.time_points,
             report.interpolated ? " (reference interpolated to the result's times)" : "");
  std::size_t width = 8;
  for (const auto& v : report.variables) width = std::max(width, v.name.size());
  for (const auto& v : report.variables) {
    fmt::print("  {:<{}}  {:.6e}\n", v.name, width, v.nrmse);
  }
  if (!report.excluded.empty()) {
    const std::size_t shown = std::min<std::size_t>(report.excluded.size(), 10);
    std::vector<std::string> names(report.excluded.begin(), report.excluded.begin() + shown);
    fmt::print("excluded, zero reference variance ({}): {}{}\n", report.excluded.size(),
               fmt::join(names, ", "), shown < report.excluded.size() ? ", ..." : "");
  }
  const auto starts = [](const char* prefix) {
    return [prefix](const std::string& name) { return name.rfind(prefix, 0) == 0; };
  };
  fmt::print("positions (x_*): {:.6e}, velocities (v_*): {:.6e}\n", report.norm_of(starts("x_")),
             report.norm_of(starts("v_")));
  const bool has_couplings = std::any_of(report.variables.begin(), report.variables.end(),
                                         [&](const auto& v) { return starts("lambda_")(v.name); });
  if (has_couplings) {
    // States alone: the ERR of seed 000 §5.8 when the CSVs hold the coupling bodies.
    fmt::print(
        "states (x_*, v_*): {:.6e}, coupling variables (lambda_*): {:.6e}\n",
        report.norm_of([&](const std::string& n) { return starts("x_")(n) || starts("v_")(n); }),
        report.norm_of(starts("lambda_")));
  }
  fmt::print("NRMSE (2-norm over {} variables): {:.6e}\n", report.variables.size(), report.norm);
  return 0;
}

}  // namespace macrostep::app

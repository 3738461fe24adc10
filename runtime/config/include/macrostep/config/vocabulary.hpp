// The configuration's vocabulary, for run_config.hpp and whoever names its values.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "macrostep/model/name_table.hpp"

namespace macrostep::config {

// The vocabulary of the file: each concept's enum with one name table, used by the reader, the
// command line, to_string(), the run metadata and the messages. The concepts that live
// elsewhere keep their tables there: control::Estimator (estimator), control::OrderStrategy
// (order_strategy), ida::LinearSolver (linear_solver), runner::JumpPolicy (jump_handling), and
// the interface Jacobians' registry (corrector/jacobian_registry.hpp: jacobian).

// How a subsystem's micro steps end at a macro point (METHODS §6.6, seed 000 §4.3, K-4.3).
enum class MicroStepStop : std::uint8_t {
  kAdjust,     // exact stop with seed 000 Listing 4.1's last-step adjustment (the default)
  kExact,      // exact stop, IDA's own clipping of the last step to the stop time
  kOvershoot,  // option (a): h_mic <= H, step past T_{N+1} and interpolate (D-36: fixed H only)
};
inline constexpr model::NameTable<MicroStepStop, 3> kMicroStepStopNames{{
    {MicroStepStop::kAdjust, "adjust"},
    {MicroStepStop::kExact, "exact"},
    {MicroStepStop::kOvershoot, "overshoot"},
}};

// Where a co-simulation's result rows are (docs/reference/commands.md, "Result rows").
enum class RowTimes : std::uint8_t {
  kMacroPoints,  // every output_every-th accepted macro point
  kGrid,         // the output grid k·output_interval, from the subsystems' dense output
};
inline constexpr model::NameTable<RowTimes, 2> kRowTimesNames{{
    {RowTimes::kMacroPoints, "macro"},
    {RowTimes::kGrid, "grid"},
}};

enum class CosimScheme : std::uint8_t {
  kExplicit,
  kImplicit,
  kSemiImplicit,
  kWaveform,
  kGaussSeidel,
  kAuto  // explicit, semi-implicit or implicit steps, chosen by their cost (schemes/adaptive.hpp)
};
inline constexpr model::NameTable<CosimScheme, 6> kCosimSchemeNames{{
    {CosimScheme::kExplicit, "explicit"},
    {CosimScheme::kImplicit, "implicit"},
    {CosimScheme::kSemiImplicit, "semi-implicit"},
    {CosimScheme::kWaveform, "waveform"},
    {CosimScheme::kGaussSeidel, "gauss-seidel"},
    {CosimScheme::kAuto, "auto"},
}};
// Gauss–Seidel's end value of an input whose law reads the subsystem taking it (force/force;
// schemes::GaussSeidelEndValue): the repeated subsystem's fixed point, or seed 000 App. C's
// sequential value (the subsystem's own outputs extrapolated, each subsystem run once).
enum class GaussSeidelEndValue : std::uint8_t { kConverged, kSequential };
inline constexpr model::NameTable<GaussSeidelEndValue, 2> kGaussSeidelEndValueNames{{
    {GaussSeidelEndValue::kConverged, "converged"},
    {GaussSeidelEndValue::kSequential, "sequential"},
}};
enum class PredictorKind : std::uint8_t { kLagrange, kLeastSquares };
inline constexpr model::NameTable<PredictorKind, 2> kPredictorNames{{
    {PredictorKind::kLagrange, "lagrange"},
    {PredictorKind::kLeastSquares, "least_squares"},
}};
// kMpi: the MPI bridge, chosen on the command line under mpirun only (--executor mpi); the
// file names one of the others.
enum class ExecutorKind : std::uint8_t { kInProcess, kProcesses, kMpi };
inline constexpr model::NameTable<ExecutorKind, 3> kExecutorNames{{
    {ExecutorKind::kInProcess, "inprocess"},
    {ExecutorKind::kProcesses, "processes"},
    {ExecutorKind::kMpi, "mpi"},
}};

// Names as written in the configuration and on the command line ("explicit", "least_squares",
// "processes", "overshoot"): the value of a name (nothing for an unknown one), the name of a
// value, and every name in table order (for "allowed: ..." lists).
std::optional<CosimScheme> parse_scheme(std::string_view name);
std::optional<PredictorKind> parse_predictor(std::string_view name);
std::optional<GaussSeidelEndValue> parse_gauss_seidel_end_value(std::string_view name);
std::optional<ExecutorKind> parse_executor(std::string_view name);
std::optional<MicroStepStop> parse_micro_step_stop(std::string_view name);
std::optional<RowTimes> parse_row_times(std::string_view name);
const char* to_string(RowTimes r);
std::vector<std::string_view> row_times_names();
const char* to_string(CosimScheme s);
const char* to_string(PredictorKind p);
const char* to_string(GaussSeidelEndValue e);
const char* to_string(ExecutorKind e);
const char* to_string(MicroStepStop m);
std::vector<std::string_view> scheme_names();
std::vector<std::string_view> predictor_names();
std::vector<std::string_view> gauss_seidel_end_value_names();
std::vector<std::string_view> executor_names();
std::vector<std::string_view> micro_step_stop_names();

}  // namespace macrostep::config

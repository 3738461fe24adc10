// The exact solution the local-error analysis starts its step from and compares it with
// (local_error.hpp, private to the run library): the settings of the mode, and a tight monolithic
// reference run read back at the times the steps need.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "macrostep/config/run_config.hpp"
#include "macrostep/library/model_description.hpp"
#include "macrostep/run/local_error.hpp"
#include "macrostep/run/settings.hpp"
#include "macrostep/schemes/pipeline.hpp"
#include "macrostep/system/coupled_system.hpp"

namespace macrostep::run {

// The groups of LocalErrorGroup, in their order; the last is not part of the step's order.
inline constexpr std::array<const char*, 5> kErrorGroups{"positions", "velocities", "other states",
                                                         "outputs", "coupling"};
inline constexpr std::size_t kCouplingGroup = 4;

// T_{N−j} = T − j·H, computed alike wherever the reference is asked for it.
inline double past_time(double t, double h, int j) {
  return t - static_cast<double>(j) * h;
}

// The settings of a local-error measurement: the run's settings for the options, the coupled
// system with the scheme's options (checked_system), the past samples p the approximation reads.
struct LocalErrorSetup {
  CosimSettings settings;
  schemes::SchemeOptions options;
  std::vector<library::ModelDescription> models;
  std::optional<system::CoupledSystem> system;
  int samples = 1;
  std::string approximation;  // the name(s) of the approximations in effect
};
// Throws SetupError for options the mode cannot measure (local_error.hpp).
LocalErrorSetup local_error_setup(const config::RunConfig& config,
                                  const LocalErrorOptions& options);

// One variable whose error is measured: a state or output of a subsystem, or a coupling variable;
// its group (index into kErrorGroups), its result-column name and its largest |value| over the
// reference rows read (the scale of its relative error).
struct ErrorVariable {
  enum class Kind { kState, kOutput, kCoupling } kind = Kind::kState;
  std::size_t subsystem = 0;
  std::size_t index = 0;
  std::size_t group = 0;
  std::string name;
  double scale = 0.0;
};

// The exact solution at one time: every subsystem's state, the coupling variables, and every
// subsystem's outputs from them.
struct ExactPoint {
  std::vector<std::vector<double>> z;
  std::vector<double> u;
  std::vector<std::vector<double>> y;
};

class ExactHistory {
 public:
  // Runs the reference: the configuration in one IDA at options.tolerance (atol_pos =
  // 1e-3·tolerance, atol_vel = tolerance), every state written at T − jH (j < samples) and T + H
  // for every H and T, into a temporary directory that is removed again. Throws std::runtime_error
  // if the reference fails or lacks a column of the system.
  ExactHistory(const config::RunConfig& config, const system::CoupledSystem& system,
               const LocalErrorOptions& options, int samples);
  // The reference row at time t (one of the times above); std::out_of_range otherwise.
  ExactPoint at(double t) const;
  // The states (by role), the outputs the laws read, and the coupling variables.
  const std::vector<ErrorVariable>& variables() const { return variables_; }

 private:
  const system::CoupledSystem& system_;
  std::vector<double> times_;
  std::vector<ExactPoint> points_;
  std::vector<ErrorVariable> variables_;

  void read(const config::RunConfig& config, const std::string& csv);
  void index_variables(const config::RunConfig& config);
};

}  // namespace macrostep::run

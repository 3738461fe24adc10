// The entries of the built-in models with a flat parameter list (private to macrostep_library).
// Each is defined in its model's own source file; model_registry.cpp registers them, which also
// keeps their object files in every program linked against the static library.
#pragma once

#include "macrostep/library/model_registry.hpp"

namespace macrostep::library::detail {

ModelEntry hydraulic_cylinder_entry();
ModelEntry hydraulic_line_entry();
ModelEntry pid_entry();
ModelEntry belt_drive_entry();
ModelEntry oscillator_mass_entry();
ModelEntry dc_motor_entry();
ModelEntry constant_entry();
ModelEntry step_entry();
ModelEntry ramp_entry();
ModelEntry sine_entry();
ModelEntry table_entry();
ModelEntry gain_entry();
ModelEntry sum_entry();

}  // namespace macrostep::library::detail

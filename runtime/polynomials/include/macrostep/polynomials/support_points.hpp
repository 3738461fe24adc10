// The step polynomial's POD form lives with the Subsystem interface (subsystems/model), because
// subsystem processes evaluate it and `subsystems` never includes `runtime` (DESIGN.md layout).
// The coupling layer builds it; these names keep the builders' vocabulary.
#pragma once

#include "macrostep/model/support_points.hpp"

namespace macrostep::polynomials {
using model::SupportPointInput;
using model::SupportPoints;
}  // namespace macrostep::polynomials

// `macrostep compare RESULT REFERENCE`: the NRMSE per variable of a result against a reference
// (seed 000 Eq. 5.1).
#pragma once

#include <string>

#include "macrostep/output/nrmse.hpp"

namespace macrostep::app {

struct CompareArgs {
  std::string result, reference;
  std::string weights = "equal";  // --weights: a name of output::kRowWeightNames
};

// --weights of compare and sweep: the weighting `name` names; UsageError naming the allowed ones
// otherwise.
output::RowWeights parse_row_weights(const std::string& name);

// UsageError for a --weights that is not a name of output::kRowWeightNames. Prints every variable's
// largest difference and NRMSE (a near-constant reference: its largest difference only,
// output/nrmse.hpp), the NRMSE of a chain's positions, velocities and coupling variables where the
// result has them, the 2-norm over all, the largest NRMSE and the near-constant variables' largest
// difference; returns 0. Throws output::OutputError for a file that cannot be read or compared.
int compare(const CompareArgs& args);

}  // namespace macrostep::app

// `macrostep compare RESULT REFERENCE`: the NRMSE per variable of a result against a reference
// (seed 000 Eq. 5.1).
#pragma once

#include <string>

namespace macrostep::app {

struct CompareArgs {
  std::string result, reference;
};

// Prints the NRMSE of every variable, of the positions, velocities and coupling variables, and
// over all; returns 0. Throws output::OutputError for a file that cannot be read or compared.
int compare(const CompareArgs& args);

}  // namespace macrostep::app

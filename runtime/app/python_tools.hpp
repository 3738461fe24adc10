// The Python scripts of tools/ that subcommands run with /usr/bin/python3 (python3-matplotlib
// from Debian): `macrostep stability` (stability_plot.py) and `macrostep plot` (plot_run.py).
#pragma once

#include <string>
#include <vector>

namespace macrostep::app {

// The interpreter every script runs with (Debian's, which has python3-matplotlib).
inline constexpr const char* kPython = "/usr/bin/python3";

// The folder holding the scripts: $MACROSTEP_TOOLS_DIR if set; else the installed scripts'
// folder, found relative to the executable's own folder (bin/../share/macrostep: an installed
// binary needs no source tree); else, only for an executable inside the build tree CMake
// configured, the source tree's tools/. Empty if the folder chosen does not hold `script`.
std::string tools_dir(const std::string& script);

// Runs kPython with `script` (a path) and `args`, without a shell, with this process's stdout
// and stderr. Returns the script's exit status, 128 + the signal that ended it, or -1 if it
// could not be started.
int run_python(const std::string& script, const std::vector<std::string>& args);

}  // namespace macrostep::app

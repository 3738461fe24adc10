// `macrostep plot` (plot_command.hpp).
#include "plot_command.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include "python_tools.hpp"
#include "usage.hpp"

namespace macrostep::app {

namespace {

constexpr const char* kScript = "plot_run.py";

}  // namespace

void add_plot_options(CLI::App& cmd, PlotArgs& a) {
  cmd.add_option("RESULT", a.results,
                 "runs to plot: each a result CSV, its JSON metadata or its .h5 file")
      ->required();
  cmd.add_option("--dir", a.dir,
                 "folder for the PNGs, created if missing (default: beside RESULT)");
  cmd.add_option("--reference", a.reference,
                 "a result of the same system (reference or monolithic run): STEM.reference.png "
                 "draws each run over it per unit, the difference below");
}

int plot_command(const PlotArgs& a) {
  if (access(kPython, X_OK) != 0) {
    fmt::print(stderr,
               "macrostep plot: {} not found (apt-get install python3 python3-matplotlib)\n",
               kPython);
    return kUserError;
  }
  const std::string dir = tools_dir(kScript);
  if (dir.empty()) {
    fmt::print(stderr,
               "macrostep plot: {} not found in the installed share/macrostep/ or, from a "
               "build tree, the source tree's tools/ (set MACROSTEP_TOOLS_DIR to the folder "
               "that holds it)\n",
               kScript);
    return kUserError;
  }
  std::vector<std::string> args;
  if (!a.dir.empty()) args = {"--dir", a.dir};
  if (!a.reference.empty()) args.insert(args.end(), {"--reference", a.reference});
  args.insert(args.end(), a.results.begin(), a.results.end());
  const int status = run_python(dir + "/" + kScript, args);
  if (status < 0) {
    fmt::print(stderr, "macrostep plot: cannot start {}\n", kPython);
    return kUserError;
  }
  return status;  // the script's: 0, or 2 after its one-line message
}

}  // namespace macrostep::app

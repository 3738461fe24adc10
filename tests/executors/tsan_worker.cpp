// The subsystem process of the ThreadSanitizer build's executor tests: `macrostep worker`'s
// arguments (runtime/executors' process supervisor passes them) and the same
// worker::run_worker. The TSan phase of CI builds this instead of the whole `macrostep`: the
// worker side of the rings and its TBB arena run under TSan all the same, while the command
// line, the run driver and the writers, whose compile time the phase cannot afford, stay out.
#include <CLI/CLI.hpp>
#include <cstddef>
#include <string>
#include <vector>

#include "macrostep/worker/worker.hpp"

int main(int argc, char** argv) {
  CLI::App app{"the subsystem process of the TSan executor tests"};
  app.require_subcommand(1);
  std::string segment;
  std::vector<std::size_t> indices;
  int segment_fd = -1;
  CLI::App* worker = app.add_subcommand("worker");
  worker->add_option("--segment", segment)->required();
  worker->add_option("--index", indices)->required();
  worker->add_option("--segment-fd", segment_fd);
  CLI11_PARSE(app, argc, argv);
  return macrostep::worker::run_worker(segment, indices, segment_fd);
}

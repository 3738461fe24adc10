// Writes the seed corpus of fuzz_worker_decoder into a directory: valid messages of every kind
// (a chain segment's and a drive train's configuration, a handshake, a shutdown notice, step,
// accept and export commands), each prefixed with the byte that selects its decoder. Run once
// to refresh tests/fuzz/corpus/worker (the seeds are committed).
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "macrostep/ipc/protocol.hpp"
#include "macrostep/library/chain_spec.hpp"
#include "macrostep/library/model_description.hpp"
#include "macrostep/worker/wire.hpp"
#include "macrostep/worker/worker.hpp"

namespace {

void write_seed(const std::filesystem::path& dir, const std::string& name, char selector,
                const void* data, std::size_t size) {
  std::ofstream out(dir / name, std::ios::binary);
  out.put(selector);
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
}

void write_seed(const std::filesystem::path& dir, const std::string& name, char selector,
                const std::vector<std::byte>& message) {
  write_seed(dir, name, selector, message.data(), message.size());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_worker_seeds DIR\n");
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  std::filesystem::create_directories(dir);
  using namespace macrostep;

  library::ChainSpec spec;
  spec.masses = 6;
  spec.element.c = 1e6;
  const auto chain = std::make_shared<const library::ChainParameters>(library::realize(spec));
  const auto models = library::chain_segment_descriptions(chain, {0, 2, 4, 6});
  worker::WorkerSetup setup;
  setup.model = &models[1];
  setup.initial_inputs = {0.0, 0.0};  // a middle segment: a cut on each side
  setup.index = 1;
  setup.subsystems = 2;
  write_seed(dir, "config_chain_segment", 0, worker::encode_config(setup));

  worker::HandshakeInfo hs;
  hs.ready = true;
  hs.pid = 1234;
  hs.protocol_version = ipc::kProtocolVersion;
  hs.state_size = 6;
  write_seed(dir, "handshake_ready", 1, worker::encode_handshake(hs));
  hs.ready = false;
  hs.error = "cannot attach";
  write_seed(dir, "handshake_failed", 1, worker::encode_handshake(hs));
  write_seed(dir, "shutdown", 2, worker::encode_shutdown(worker::kNormalShutdown));

  auto cmd = std::make_unique<ipc::StepCommand>();
  model::SupportPoints points;
  points.degree = 1;
  points.channels = 1;
  cmd->id = 7;
  cmd->t_end = 1e-3;
  worker::pack_runs(*cmd, points, {});
  write_seed(dir, "step_nominal", 3, cmd.get(), cmd->wire_bytes());
  runner::ExtraRun comparison;
  comparison.role = runner::RunRole::kComparison;
  comparison.points = points;
  worker::pack_runs(*cmd, points, std::span(&comparison, 1));
  write_seed(dir, "step_comparison", 3, cmd.get(), cmd->wire_bytes());
  cmd->kind = ipc::CommandKind::kExport;
  cmd->set_path("/tmp/state.bin");
  write_seed(dir, "export", 3, cmd.get(), cmd->wire_bytes());
  cmd->kind = ipc::CommandKind::kAccept;
  cmd->clear_runs();
  write_seed(dir, "accept", 3, cmd.get(), cmd->wire_bytes());
  return 0;
}

// Writes the seed corpus of fuzz_checkpoint into a directory: encoded checkpoints (an empty one,
// one of two subsystems with scheme arrays and a result row) and their first half. Run once to
// refresh tests/fuzz/corpus/checkpoint (the seeds are committed).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "macrostep/checkpoint/checkpoint.hpp"

namespace {

void write_seed(const std::filesystem::path& dir, const std::string& name,
                const std::vector<std::byte>& bytes, std::size_t size) {
  std::ofstream out(dir / name, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(size));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_checkpoint_seeds DIR\n");
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  std::filesystem::create_directories(dir);
  namespace ckpt = macrostep::checkpoint;
  ckpt::Checkpoint empty;
  ckpt::Checkpoint full;
  full.config_path = "/tmp/c.toml";
  full.config_text = "[model]\nmasses = 10\n";
  full.arguments = {"c.toml", "--checkpoint-every", "5steps"};
  full.csv_path = "/tmp/r.csv";
  full.csv_bytes = 120;
  full.csv_rows = 3;
  full.csv_hash = 0x1234;
  full.last_row = {1.0, -2.5, 3e-9};
  full.accepted_by_kappa = {3, 1, 0, 0, 0};
  full.time_by_kappa = {1e-3, 2e-4, 0, 0, 0};
  full.controller = {std::byte{1}, std::byte{2}, std::byte{3}};
  full.scheme = {{0.5, 0.25}, {}};
  full.subsystems = {{std::byte{7}, std::byte{8}}, {std::byte{9}}};
  for (const auto& [name, c] :
       {std::pair<std::string, const ckpt::Checkpoint*>{"empty", &empty}, {"full", &full}}) {
    const auto bytes = ckpt::encode(*c);
    write_seed(dir, name + ".ckpt", bytes, bytes.size());
    write_seed(dir, name + "-half.ckpt", bytes, bytes.size() / 2);
  }
  return 0;
}

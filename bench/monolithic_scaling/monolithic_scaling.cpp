// Monolithic scaling order P (seed 000 Fig. 1.4, §5.7; MODELS.md K-5.7 / S-5.7) and the cost of
// an exact workspace snapshot + restore against a plain memcpy of the same bytes.
//
// Part 1: the K-5.7 chain (m = 10 kg, c = 1e5, d = 1, C = 1e9, D = 1e4, x0 in [-1, 1] m,
// v0 in [-1e2, 1e2] m/s, modified sine on 10 % of the masses) integrated monolithically with
// KLU and with dense LU for growing n_K; P is the least-squares slope of log T over log n_K.
// Part 2: a 1000-mass cut segment advanced by macro steps; at each macro point one save()
// and one restore() are timed and compared with memcpy of snapshot.bytes() bytes.
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <vector>

#include "macrostep/ida/integrator.hpp"
#include "macrostep/library/chain.hpp"
#include "macrostep/library/chain_spec.hpp"

using namespace macrostep;

namespace {

library::ChainSpec k57_chain(std::size_t masses) {
  library::ChainSpec s;
  s.masses = masses;
  s.mass = library::ValueSpec::fixed(10.0);
  s.element.c = 1e5;
  s.element.d = 1.0;
  s.element.C = 1e9;
  s.element.D = 1e4;
  s.x0 = library::ValueSpec::uniform(-1.0, 1.0);
  s.v0 = library::ValueSpec::uniform(-1e2, 1e2);
  s.seed = 57;
  library::ForceGroupSpec sine;
  sine.type = library::ForceType::kModifiedSine;
  sine.selection.kind = library::MassSelection::Kind::kFraction;
  sine.selection.fraction = 0.1;
  sine.amplitude = library::ValueSpec::signed_uniform(1e7, 1e8);
  sine.omega = library::ValueSpec::fixed(50.0);
  sine.exponent = 95.0;
  s.forces.push_back(sine);
  return s;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double fit_slope(const std::vector<double>& x, const std::vector<double>& y) {
  const double n = static_cast<double>(x.size());
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    sx += x[i];
    sy += y[i];
    sxx += x[i] * x[i];
    sxy += x[i] * y[i];
  }
  return (n * sxy - sx * sy) / (n * sxx - sx * sx);
}

class ConstantInput final : public model::InputFunction {
 public:
  void evaluate(double t, std::span<double> u) const override {
    for (auto& v : u) v = 1e3 * std::sin(2e3 * t);
  }
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Monolithic scaling order (KLU vs dense) and snapshot cost"};
  std::vector<std::size_t> sizes = {100, 200, 400, 800};
  std::vector<std::size_t> dense_sizes = {100, 200, 400};
  double t_end = 0.05;
  std::size_t snapshot_masses = 1000;
  int snapshot_points = 200;
  app.add_option("--sizes", sizes, "n_K values for KLU")->delimiter(',');
  app.add_option("--dense-sizes", dense_sizes, "n_K values for dense LU")->delimiter(',');
  app.add_option("--t-end", t_end, "simulated time per run [s] (S-5.7: 0.05)");
  app.add_option("--snapshot-masses", snapshot_masses, "masses of the snapshot subsystem");
  app.add_option("--snapshot-points", snapshot_points, "macro points for the snapshot timing");
  CLI11_PARSE(app, argc, argv);

  fmt::print("Part 1: monolithic K-5.7 chain, t_end = {} s, rtol_IDA = 1e-6\n", t_end);
  fmt::print("{:>8} {:>8} {:>12} {:>10} {:>12}\n", "solver", "n_K", "wall [s]", "steps",
             "s/(mass*step)");
  for (auto solver : {ida::LinearSolver::kKlu, ida::LinearSolver::kDense}) {
    const auto& list = solver == ida::LinearSolver::kKlu ? sizes : dense_sizes;
    std::vector<double> lx, ly;
    for (std::size_t n : list) {
      const auto params = library::realize(k57_chain(n));
      library::ChainSegment chain(params, 0, n);
      ida::IntegratorOptions o;
      o.linear_solver = solver;
      ida::Integrator integ(chain, o);
      const auto t0 = std::chrono::steady_clock::now();
      integ.advance_to(t_end);
      const double wall = seconds_since(t0);
      const auto st = integ.total_stats();
      fmt::print("{:>8} {:>8} {:>12.4f} {:>10} {:>12.3e}\n",
                 solver == ida::LinearSolver::kKlu ? "klu" : "dense", n, wall, st.steps,
                 wall / (static_cast<double>(n) * static_cast<double>(st.steps)));
      std::fflush(stdout);
      lx.push_back(std::log(static_cast<double>(n)));
      ly.push_back(std::log(wall));
    }
    if (lx.size() >= 2) {
      fmt::print("scaling order P ({}) = {:.2f}   (seed 000 §5.7: {})\n",
                 solver == ida::LinearSolver::kKlu ? "klu" : "dense", fit_slope(lx, ly),
                 solver == ida::LinearSolver::kKlu ? "1.2" : "3");
    }
  }

  // Part 2: snapshot + restore of a cut segment (two inputs) vs memcpy of the same bytes.
  const std::size_t n = snapshot_masses + 2;
  const auto params = library::realize(k57_chain(n));
  library::ChainSegment segment(params, 1, n - 1);
  ConstantInput input;
  ida::IntegratorOptions o;
  ida::Integrator integ(segment, o, &input);
  auto snap = integ.make_snapshot();
  const double H = 1e-4;
  double t_save = 0, t_restore = 0, t_step = 0, t_memcpy = 0;
  std::vector<unsigned char> src, dst;
  for (int k = 1; k <= snapshot_points; ++k) {
    auto t0 = std::chrono::steady_clock::now();
    integ.advance_to(k * H);
    t_step += seconds_since(t0);
    t0 = std::chrono::steady_clock::now();
    integ.save(*snap);
    t_save += seconds_since(t0);
    t0 = std::chrono::steady_clock::now();
    integ.restore(*snap);
    t_restore += seconds_since(t0);
    const std::size_t bytes = snap->bytes();
    src.resize(bytes, 1);
    dst.resize(bytes);
    t0 = std::chrono::steady_clock::now();
    std::memcpy(dst.data(), src.data(), bytes);
    asm volatile("" : : "r"(dst.data()) : "memory");
    t_memcpy += seconds_since(t0);
  }
  const double per = 1.0 / snapshot_points;
  fmt::print("\nPart 2: snapshot of a {}-mass segment ({} states), {} macro steps of H = {} s\n",
             snapshot_masses, 2 * snapshot_masses, snapshot_points, H);
  fmt::print(
      "snapshot bytes {}  save {:.1f} us  restore {:.1f} us  memcpy {:.1f} us  "
      "macro step {:.1f} us\n",
      snap->bytes(), 1e6 * t_save * per, 1e6 * t_restore * per, 1e6 * t_memcpy * per,
      1e6 * t_step * per);
  fmt::print("(save + restore) / (2 x memcpy) = {:.2f}   (goal <= 2)\n",
             (t_save + t_restore) / (2.0 * t_memcpy));
  return 0;
}

// The model half of a worker's Cap'n Proto configuration (worker.hpp encode_config /
// decode_config, library::ModelDescription): a worker rebuilds its subsystem from the
// description so that it is equal, residual for residual and output for output, to the master's
// (DESIGN.md contract 1), and a configuration without a model is refused with a message.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <stdexcept>
#include <vector>

#include "../support/same_bits.hpp"
#include "macrostep/library/chain.hpp"
#include "macrostep/library/chain_spec.hpp"
#include "macrostep/library/hydraulic_line.hpp"
#include "macrostep/library/model_description.hpp"
#include "macrostep/worker/worker.hpp"

namespace macrostep {
namespace {

using macrostep::testing::same_bits;

std::shared_ptr<const library::ChainParameters> chain() {
  library::ChainSpec s;
  s.masses = 30;
  s.mass = library::ValueSpec::uniform(1e-2, 1e-1);
  s.element = {2.5e6, 25.0, 1e10, 1e-4, 3.0, 3.0, 0.0, 0.0, 1};
  s.x0 = library::ValueSpec::uniform(-1e-4, 1e-4);
  s.v0 = library::ValueSpec::uniform(-1.0, 1.0);
  s.seed = 17;
  library::ForceGroupSpec harmonic;
  harmonic.type = library::ForceType::kHarmonic;
  harmonic.selection.kind = library::MassSelection::Kind::kAll;
  harmonic.amplitude = library::ValueSpec::uniform(1e2, 1e3);
  harmonic.omega = library::ValueSpec::uniform(1e2, 1e3);
  s.forces.push_back(harmonic);
  return std::make_shared<const library::ChainParameters>(library::realize(s));
}

// Decodes what the master encoded, as a worker does (from an aligned copy).
worker::DecodedConfig round_trip(const library::ModelDescription& model,
                                 const std::vector<double>& inputs) {
  worker::WorkerSetup setup;
  setup.model = &model;
  setup.initial_inputs = inputs;
  const auto bytes = worker::encode_config(setup);
  std::vector<std::uint64_t> aligned((bytes.size() + 7) / 8);
  std::memcpy(aligned.data(), bytes.data(), bytes.size());
  return worker::decode_config(reinterpret_cast<const std::byte*>(aligned.data()), bytes.size());
}

// The worker's model equals the master's bit for bit: sizes, nominals, initial state, residuals
// and outputs at a few states and times.
void expect_rebuilt_bit_identically(const library::ModelDescription& model) {
  const auto master = library::build_subsystem(model);
  const std::vector<double> u(master->input_size(), 0.25);
  const auto decoded = round_trip(model, u);
  const auto& worker = *decoded.subsystem;
  ASSERT_EQ(worker.state_size(), master->state_size()) << library::describe(model);
  ASSERT_EQ(worker.input_size(), master->input_size());
  ASSERT_EQ(worker.output_size(), master->output_size());
  EXPECT_EQ(worker.has_feedthrough(), master->has_feedthrough());
  EXPECT_TRUE(same_bits(worker.state_nominals(), master->state_nominals()));
  for (std::size_t i = 0; i < master->output_size(); ++i) {
    EXPECT_EQ(worker.output_nominal(i), master->output_nominal(i)) << "output " << i;
  }
  const std::size_t n = master->state_size();
  std::vector<double> z(n), zp(n), z2(n), zp2(n);
  master->initial_state(u, z, zp);
  worker.initial_state(u, z2, zp2);
  EXPECT_TRUE(same_bits(z, z2));
  EXPECT_TRUE(same_bits(zp, zp2));
  for (std::size_t k = 0; k < n; ++k) z[k] += 1e-5 * static_cast<double>(k % 7 + 1);
  std::vector<double> r(n), r2(n), y(master->output_size()), y2(worker.output_size());
  for (double t : {0.0, 1.3e-3, 2.7e-2, 0.5}) {
    master->residual(t, z, zp, u, r);
    worker.residual(t, z, zp, u, r2);
    EXPECT_TRUE(same_bits(r, r2)) << library::describe(model) << " t = " << t;
    master->outputs(t, z, u, y);
    worker.outputs(t, z, u, y2);
    EXPECT_TRUE(same_bits(y, y2));
  }
  EXPECT_EQ(decoded.initial_inputs, u);
}

TEST(WorkerModelConfig, EverySegmentOfACutChainIsRebuiltBitIdentically) {
  const auto params = chain();
  const auto models =
      library::chain_segment_descriptions(params, library::equal_partition(params->size(), 3));
  ASSERT_EQ(models.size(), 3u);
  for (const auto& model : models) expect_rebuilt_bit_identically(model);
}

// The models of a system description, every parameter away from its default so that a
// field the encoding dropped shows.
TEST(WorkerModelConfig, DriveTrainCylinderAndPidAreRebuiltBitIdentically) {
  library::DriveTrainParameters drive;
  drive.inertia = {0.1, 0.25, 0.3};
  drive.shaft = {{1e3, 0.5, 2.0, 0.1, 3.0, 2.0}, {2e3, 0.25, 0.0, 0.0, 3.0, 3.0}};
  drive.bearing_damping = {0.01, 0.0, 0.02};
  drive.load = {{0.5, 0.0, 0.0, 1e-3}, {0.0, 0.0, 0.0, 1e-3}, {-0.2, 1.5, 0.4, 0.05}};
  drive.angle0 = {0.1, 0.2, 0.3};
  drive.speed0 = {1.0, 2.0, 3.0};
  drive.left_coupled = false;
  expect_rebuilt_bit_identically(drive);

  library::HydraulicCylinderParameters cylinder;
  cylinder.mass = 12.5;
  cylinder.area_a = 2e-3;
  cylinder.area_b = 1.1e-3;
  cylinder.viscous_friction = 40.0;
  cylinder.coulomb_friction = 15.0;
  cylinder.coulomb_speed = 2e-3;
  cylinder.x0 = 0.05;
  cylinder.v0 = -0.01;
  cylinder.rod_coupled = false;
  expect_rebuilt_bit_identically(library::model_of(cylinder));

  library::HydraulicLineParameters line;
  line.density = 870.0;
  line.length = 2.5;
  line.area = 3e-4;
  line.chamber_volume = 2e-4;
  line.chamber_modulus = 1.2e9;
  line.chamber_pressure = 4e6;
  line.volume0 = -1e-7;
  line.flow0 = 2e-5;
  line.volume_nominal = 3e-8;  // flow_nominal derived
  expect_rebuilt_bit_identically(library::model_of(line));

  library::PidParameters pid;
  pid.kp = 1.5;
  pid.ki = 4.0;
  pid.kd = 0.2;
  pid.derivative_filter_time = 0.01;
  pid.output_min = -3.0;  // output_max stays +inf: infinities travel too
  pid.output_lag = 0.02;
  pid.setpoint_input = true;
  pid.integral0 = 0.3;
  pid.derivative_filter0 = -0.1;
  pid.command0 = 0.7;
  expect_rebuilt_bit_identically(library::model_of(pid));
  pid.tracking_time = 0.5;  // anti-windup on, no lag: feed-through
  pid.output_lag = 0.0;
  pid.setpoint_input = false;
  pid.setpoint = 2.0;
  expect_rebuilt_bit_identically(library::model_of(pid));
}

TEST(WorkerModelConfig, BeltDriveIsRebuiltBitIdentically) {
  library::BeltDriveParameters belt;
  belt.driver_inertia = 5e-3;
  belt.driven_inertia = 2e-2;
  belt.driver_radius = 0.1;
  belt.driven_radius = 0.2;
  belt.span_stiffness = 2e5;
  belt.span_damping = 20.0;
  belt.pretension = 400.0;
  belt.idler_mass = 0.3;
  belt.idler_factor = 0.9;
  belt.idler_damping = 5.0;
  belt.bearing_damping = {0.01, 0.02};
  belt.speed0 = {2.0, 1.0};
  belt.right_coupled = false;
  expect_rebuilt_bit_identically(library::model_of(belt));
  belt.left_coupled = false;
  belt.right_coupled = true;
  expect_rebuilt_bit_identically(library::model_of(belt));
}

// An FMU: path, start values, inputs and outputs travel; the worker unzips and loads
// its own copy, with the master's numbers.
TEST(WorkerModelConfig, AnFmuIsRebuiltBitIdentically) {
  const fmu::FmuDescription d{
      OSCILLATOR_FMU, R"({"m":2.0,"c":8.0,"x":0.1})", {"force"}, {"v", "x"}, "model-exchange"};
  const auto decoded = round_trip(d, {0.5});
  ASSERT_TRUE(std::holds_alternative<fmu::FmuDescription>(decoded.model));
  const auto& back = std::get<fmu::FmuDescription>(decoded.model);
  EXPECT_EQ(back.path, d.path);
  EXPECT_EQ(back.parameters, d.parameters);
  EXPECT_EQ(back.inputs, d.inputs);
  EXPECT_EQ(back.outputs, d.outputs);
  EXPECT_EQ(back.interface, d.interface);
  EXPECT_EQ(decoded.subsystem->output_name(0), "v");
  expect_rebuilt_bit_identically(d);
}

TEST(WorkerModelConfig, AMissingOrImpossibleModelIsRefused) {
  worker::WorkerSetup setup;  // no model
  EXPECT_THROW(worker::encode_config(setup), std::invalid_argument);
  const library::ModelDescription empty_range = library::ChainSegmentDescription{chain(), 5, 5};
  setup.model = &empty_range;
  EXPECT_THROW(worker::encode_config(setup), std::invalid_argument);
  const library::ModelDescription no_chain = library::ChainSegmentDescription{nullptr, 0, 1};
  EXPECT_THROW(library::build_subsystem(no_chain), std::invalid_argument);
  // Wrong number of initial inputs for the model: the worker says so.
  const library::ModelDescription middle = library::ChainSegmentDescription{chain(), 10, 20};
  EXPECT_THROW(round_trip(middle, {1.0}), std::runtime_error);
}

}  // namespace
}  // namespace macrostep

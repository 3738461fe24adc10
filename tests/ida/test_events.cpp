// Hybrid subsystems (model::Events) in the integrator: state events located on IDA's
// interpolant (a bouncing ball against its closed-form bounce times), time events that change the
// equations (a stair), events and modes in snapshots (restore, clone, export into a new
// integrator continue bit-identically), a chattering model and one that asks to terminate.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "../support/bouncing_ball.hpp"
#include "macrostep/ida/integrator.hpp"

namespace macrostep {
namespace {

constexpr double kGravity = 9.81;

// A mode whose discrete state is a list of doubles (the bounce times; the stair's level),
// serialized as their bytes.
class ListMode final : public model::Mode {
 public:
  ListMode(const model::Subsystem& equations, std::vector<double> values, double next_event)
      : equations_(equations), values_(std::move(values)), next_event_(next_event) {}
  const model::Subsystem& equations() const override { return equations_; }
  double next_time_event() const override { return next_event_; }
  void indicators(double, std::span<const double> z, std::span<const double>,
                  std::span<double> g) const override {
    if (!g.empty()) g[0] = z[0];
  }
  std::vector<std::byte> serialize() const override {
    std::vector<std::byte> bytes((values_.size() + 1) * sizeof(double));
    std::memcpy(bytes.data(), &next_event_, sizeof(double));
    if (!values_.empty()) {
      std::memcpy(bytes.data() + sizeof(double), values_.data(), values_.size() * sizeof(double));
    }
    return bytes;
  }
  const std::vector<double>& values() const { return values_; }

 private:
  const model::Subsystem& equations_;
  std::vector<double> values_;
  double next_event_;
};

std::shared_ptr<const model::Mode> list_mode_from_bytes(const model::Subsystem& equations,
                                                        std::span<const std::byte> bytes) {
  if (bytes.size() < sizeof(double) || bytes.size() % sizeof(double) != 0) {
    throw std::runtime_error("not a list of doubles");
  }
  double next = 0.0;
  std::memcpy(&next, bytes.data(), sizeof(double));
  std::vector<double> values(bytes.size() / sizeof(double) - 1);
  if (!values.empty()) {
    std::memcpy(values.data(), bytes.data() + sizeof(double), values.size() * sizeof(double));
  }
  return std::make_shared<ListMode>(equations, std::move(values), next);
}

// Two states (position, velocity) with x' = v and v' = acceleration(); no inputs.
class PointMass : public model::Subsystem {
 public:
  explicit PointMass(double x0) : x0_(x0) {
    pattern_.n = 2;
    pattern_.column_start = {0, 1, 3};
    pattern_.row_index = {0, 0, 1};
  }
  std::size_t state_size() const override { return 2; }
  std::size_t input_size() const override { return 0; }
  std::size_t output_size() const override { return 1; }
  std::span<const model::StateRole> state_roles() const override { return roles_; }
  std::string state_name(std::size_t i) const override { return i == 0 ? "h" : "v"; }
  std::string output_name(std::size_t) const override { return "h"; }
  std::string input_name(std::size_t) const override { return ""; }
  double initial_time() const override { return 0.0; }
  void initial_state(std::span<const double>, std::span<double> z,
                     std::span<double> zp) const override {
    z[0] = x0_;
    z[1] = 0.0;
    zp[0] = 0.0;
    zp[1] = acceleration();
  }
  void residual(double, std::span<const double> z, std::span<const double> zp,
                std::span<const double>, std::span<double> r) const override {
    r[0] = zp[0] - z[1];
    r[1] = zp[1] - acceleration();
  }
  const model::SparsityPattern& jacobian_pattern() const override { return pattern_; }
  void jacobian(double, std::span<const double>, std::span<const double>, std::span<const double>,
                double cj, std::span<double> values) const override {
    values[0] = cj;
    values[1] = -1.0;
    values[2] = cj;
  }
  void outputs(double, std::span<const double> z, std::span<const double>,
               std::span<double> y) const override {
    y[0] = z[0];
  }
  virtual double acceleration() const = 0;

 private:
  double x0_;
  model::SparsityPattern pattern_;
  model::StateRole roles_[2] = {model::StateRole::kPosition, model::StateRole::kVelocity};
};

// A ball dropped from h0 that bounces with restitution e: the indicator is h; at an impact
// (h <= 0, v < 0) v becomes -e·v and h the smallest positive double, so that the indicator starts
// positive again (as the Modelica Reference FMU BouncingBall does). The mode lists the impact
// times. `chatter`: the handler leaves the states alone (the ball falls through and the
// indicator stays below 0 after the first crossing — no more events), and instead schedules a
// time event at the event's own time, which never ends. `terminate_after`: the model asks to
// stop at that impact.
class BouncingBall final : public PointMass, public model::Events {
 public:
  BouncingBall(double h0, double e, bool chatter = false, std::size_t terminate_after = 0)
      : PointMass(h0), e_(e), chatter_(chatter), terminate_after_(terminate_after) {}
  double acceleration() const override { return -kGravity; }
  const model::Events* events() const override { return this; }
  std::size_t indicator_count() const override { return 1; }
  std::shared_ptr<const model::Mode> initial_mode() const override {
    return std::make_shared<ListMode>(*this, std::vector<double>{},
                                      std::numeric_limits<double>::infinity());
  }
  model::EventOutcome handle(const model::Mode& mode, double t, std::span<double> z,
                             std::span<const double>, const std::string& why) const override {
    auto impacts = static_cast<const ListMode&>(mode).values();
    model::EventOutcome outcome;
    if (chatter_) {
      outcome.mode = std::make_shared<ListMode>(*this, impacts, t);
      return outcome;
    }
    if (why.rfind("state event", 0) == 0 && z[0] <= 0.0 && z[1] < 0.0) {
      impacts.push_back(t);
      z[0] = std::numeric_limits<double>::min();
      z[1] = -e_ * z[1];
      outcome.states_changed = true;
    }
    outcome.terminate = terminate_after_ > 0 && impacts.size() >= terminate_after_;
    if (outcome.terminate) outcome.reason = "enough bounces";
    outcome.mode = std::make_shared<ListMode>(*this, std::move(impacts),
                                              std::numeric_limits<double>::infinity());
    return outcome;
  }
  std::shared_ptr<const model::Mode> mode_from_bytes(
      std::span<const std::byte> bytes) const override {
    return list_mode_from_bytes(*this, bytes);
  }

 private:
  double e_;
  bool chatter_;
  std::size_t terminate_after_;
};

using test::impact_times;

ida::IntegratorOptions tight() {
  ida::IntegratorOptions o;
  o.rtol = 1e-11;
  o.atol_pos = 1e-13;
  o.atol_vel = 1e-11;
  return o;
}

const std::vector<double>& impacts_of(const ida::Integrator& integrator) {
  return static_cast<const ListMode*>(integrator.mode())->values();
}

TEST(Events, BounceTimesAgreeWithTheClosedForm) {
  const BouncingBall ball(1.0, 0.8);
  ida::Integrator integrator(ball, tight());
  const double H = 0.05;  // the macro grid does not hit the impacts
  long events = 0;
  for (int k = 1; k <= 72; ++k) events += integrator.advance_to(k * H).events;
  const auto expected = impact_times(1.0, 0.8, 12);
  const auto& impacts = impacts_of(integrator);
  ASSERT_GE(impacts.size(), 10u);
  EXPECT_EQ(events, static_cast<long>(impacts.size()));
  for (std::size_t k = 0; k < impacts.size(); ++k) {
    EXPECT_NEAR(impacts[k], expected[k], 1e-8) << "impact " << k + 1;
  }
  EXPECT_EQ(integrator.total_stats().events, events);
}

TEST(Events, RestoreCloneAndExportContinueBitIdentically) {
  const BouncingBall ball(1.0, 0.8);
  ida::IntegratorOptions options;  // default tolerances: the bits matter here, not the error
  ida::Integrator straight(ball, options), rolled(ball, options);
  for (int k = 1; k <= 10; ++k) {
    straight.advance_to(0.1 * k);
    rolled.advance_to(0.1 * k);
  }
  // T = 1.0 lies after the first impact (0.45 s); the next step crosses the second (1.17 s).
  ASSERT_EQ(impacts_of(rolled).size(), 1u);
  auto at_one = rolled.make_snapshot();
  rolled.advance_to(1.7);
  ASSERT_EQ(impacts_of(rolled).size(), 2u);
  rolled.restore(*at_one);
  EXPECT_EQ(impacts_of(rolled).size(), 1u) << "the mode rolls back with the workspace";
  const auto bytes = rolled.export_snapshot(*at_one);
  ida::Integrator imported(ball, options);
  auto target = imported.make_snapshot();
  imported.import_snapshot(bytes, *target);
  imported.restore(*target);
  ida::Integrator clone(ball, options);
  clone.copy_state_from(rolled);
  for (double t : {1.3, 1.7, 2.4}) {
    straight.advance_to(t);
    rolled.advance_to(t);
    imported.advance_to(t);
    clone.advance_to(t);
    std::vector<double> a(2), ap(2);
    straight.state(a, ap);
    for (const ida::Integrator* other : {&rolled, &imported, &clone}) {
      std::vector<double> b(2), bp(2);
      other->state(b, bp);
      EXPECT_EQ(std::memcmp(a.data(), b.data(), 2 * sizeof(double)), 0) << "t = " << t;
      EXPECT_EQ(impacts_of(*other), impacts_of(straight)) << "t = " << t;
    }
  }
  // The same equations without events refuse the snapshot, naming why.
  struct FreeFall final : PointMass {
    FreeFall() : PointMass(1.0) {}
    double acceleration() const override { return -kGravity; }
  } free_fall;
  ida::Integrator no_events(free_fall, options);
  try {
    no_events.import_snapshot(bytes, *no_events.make_snapshot());
    FAIL() << "imported";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("with events"), std::string::npos) << e.what();
  }
}

TEST(Events, AChatteringModelEndsTheAdvanceWithAMessage) {
  const BouncingBall ball(1.0, 0.8, /*chatter=*/true);
  ida::Integrator integrator(ball, ida::IntegratorOptions{});
  try {
    integrator.advance_to(1.0);
    FAIL() << "no error";
  } catch (const ida::IntegrationError& e) {
    EXPECT_NE(std::string(e.what()).find("the model chatters"), std::string::npos) << e.what();
    EXPECT_NEAR(e.time(), impact_times(1.0, 0.8, 1)[0], 1e-5);
  }
}

TEST(Events, AModelAskingToTerminateEndsTheAdvanceAtItsEvent) {
  const BouncingBall ball(1.0, 0.8, false, /*terminate_after=*/2);
  ida::Integrator integrator(ball, tight());
  try {
    integrator.advance_to(3.0);
    FAIL() << "no termination";
  } catch (const ida::ModelTerminated& e) {
    EXPECT_NEAR(e.time(), impact_times(1.0, 0.8, 2)[1], 1e-8);
    EXPECT_NE(std::string(e.what()).find("enough bounces"), std::string::npos) << e.what();
  }
}

// x' = v, v' = level with the level raised by 1 at t = 0.25, 0.5, ... (time events that change the
// equations: each mode has its own equations object).
class Stair final : public model::Events {
 public:
  class Level final : public PointMass {
   public:
    explicit Level(double level) : PointMass(0.0), level_(level) {}
    double acceleration() const override { return level_; }

   private:
    double level_;
  };
  explicit Stair(double step) : step_(step) {
    for (int k = 0; k <= 8; ++k) levels_.push_back(std::make_unique<Level>(k));
  }
  const PointMass& subsystem() const { return *levels_[0]; }
  std::size_t indicator_count() const override { return 0; }
  std::shared_ptr<const model::Mode> initial_mode() const override { return mode(0); }
  model::EventOutcome handle(const model::Mode& m, double t, std::span<double>,
                             std::span<const double>, const std::string& why) const override {
    EXPECT_EQ(why, "time event");
    EXPECT_EQ(t, m.next_time_event()) << "a time event is taken at its time exactly";
    const auto level = static_cast<std::size_t>(static_cast<const ListMode&>(m).values()[0]);
    return {mode(level + 1), false, false, ""};
  }
  std::shared_ptr<const model::Mode> mode_from_bytes(
      std::span<const std::byte> bytes) const override {
    const auto m = list_mode_from_bytes(subsystem(), bytes);
    return mode(static_cast<std::size_t>(static_cast<const ListMode&>(*m).values()[0]));
  }

 private:
  std::shared_ptr<const model::Mode> mode(std::size_t level) const {
    const double next = level + 1 < levels_.size() ? step_ * static_cast<double>(level + 1)
                                                   : std::numeric_limits<double>::infinity();
    return std::make_shared<ListMode>(*levels_[level], std::vector<double>{double(level)}, next);
  }
  double step_;
  std::vector<std::unique_ptr<Level>> levels_;
};

// The stair's subsystem: Level 0 that answers events() with the stair.
class StairModel final : public PointMass {
 public:
  StairModel() : PointMass(0.0), stair_(0.25) {}
  double acceleration() const override { return 0.0; }
  const model::Events* events() const override { return &stair_; }

 private:
  Stair stair_;
};

TEST(Events, TimeEventsChangeTheEquationsAtTheirTimesAlsoOnTheMacroGrid) {
  const StairModel model;
  // Macro points at 0.1, 0.2, ... (time events between them) and at 0.25 multiples (events at
  // the end of an advance).
  for (const double H : {0.1, 0.25}) {
    ida::Integrator integrator(model, tight());
    long events = 0;
    for (int k = 1; k * H <= 1.0 + 1e-12; ++k) events += integrator.advance_to(k * H).events;
    EXPECT_EQ(events, 4) << "H = " << H;
    // v = ∫ level dt = 0.25·(1 + 2 + 3) + 0.25·4 at t = 1 (the event at 1 raised it to 4
    // without time to act), x = Σ over the stretches.
    std::vector<double> z(2), zp(2);
    integrator.state(z, zp);
    EXPECT_NEAR(z[1], 0.25 * (1 + 2 + 3), 1e-9) << "H = " << H;
    double x = 0.0, v = 0.0;
    for (int level = 0; level < 4; ++level) {
      x += v * 0.25 + 0.5 * level * 0.25 * 0.25;
      v += level * 0.25;
    }
    EXPECT_NEAR(z[0], x, 1e-9) << "H = " << H;
    EXPECT_EQ(zp[1], 4.0) << "z' after the event at t = 1 is the new mode's";
  }
}

}  // namespace
}  // namespace macrostep

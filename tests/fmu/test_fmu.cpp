// FMI Model Exchange FMUs as subsystems (subsystems/fmu): the test FMUs of fmus/
// loaded and checked against their equations (closed form, a Runge-Kutta reference, analytic
// Jacobians), one message for each kind of bad FMU, and co-simulations by the app: the two-mass
// oscillator (MODELS.md §1.2) as two FMUs against the built-in chain, explicit and implicit,
// with both executors (contract 1: the same bytes).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "../support/read_file.hpp"
#include "fmu_test_support.hpp"
#include "macrostep/fmu/fmu.hpp"
#include "macrostep/ida/integrator.hpp"
#include "macrostep/library/model_description.hpp"

namespace macrostep {
namespace {

using macrostep::testing::read_file;
using namespace fmu_testing;

namespace fs = std::filesystem;

TEST(Fmu, TheOscillatorIsTheEquationItDeclares) {
  const auto s = load("oscillator", R"({"m": 2.0, "c": 8.0, "d": 0.5, "x": 0.1, "v": -0.2,
                                        "force_sign": -1})");
  ASSERT_EQ(s->state_size(), 2u);
  ASSERT_EQ(s->input_size(), 1u);
  ASSERT_EQ(s->output_size(), 2u);
  EXPECT_EQ(s->state_name(0), "x");
  EXPECT_EQ(s->input_name(0), "force");
  EXPECT_EQ(s->output_name(1), "v");
  // The description attribute where the model description has one (v), "" elsewhere (x).
  EXPECT_EQ(s->output_description(1), "velocity of the mass");
  EXPECT_EQ(s->state_description(1), "velocity of the mass");
  EXPECT_EQ(s->output_description(0), "");
  EXPECT_FALSE(s->has_feedthrough());
  // der(x) is v itself: x a position, v a velocity (their error weights).
  EXPECT_EQ(s->state_roles()[0], model::StateRole::kPosition);
  EXPECT_EQ(s->state_roles()[1], model::StateRole::kVelocity);
  std::vector<double> z(2), zp(2), r(2), y(2);
  const std::vector<double> u = {4.0};
  s->initial_state(u, z, zp);
  EXPECT_EQ(z[0], 0.1);
  EXPECT_EQ(z[1], -0.2);
  EXPECT_EQ(zp[0], -0.2);
  EXPECT_DOUBLE_EQ(zp[1], (-8.0 * 0.1 - 0.5 * -0.2 - 4.0) / 2.0);
  s->residual(0.0, z, zp, u, r);
  EXPECT_EQ(r[0], 0.0);
  EXPECT_EQ(r[1], 0.0);
  s->outputs(0.0, z, u, y);
  EXPECT_EQ(y[0], 0.1);
  EXPECT_EQ(y[1], -0.2);
  // The Jacobian from the FMU's directional derivatives: cj·I − ∂f/∂x.
  const auto& p = s->jacobian_pattern();
  ASSERT_EQ(p.nonzeros(), 4u);
  std::vector<double> values(4);
  s->jacobian(0.0, z, zp, u, 3.0, values);
  EXPECT_EQ(values[0], 3.0);         // (x, x)
  EXPECT_EQ(values[1], 8.0 / 2.0);   // (v', x)
  EXPECT_EQ(values[2], -1.0);        // (x', v)
  EXPECT_EQ(values[3], 3.0 + 0.25);  // (v', v)
}

TEST(Fmu, TheFmi3OscillatorIsTheFmi2One) {
  const std::string parameters = R"({"m": 2.0, "c": 8.0, "d": 0.5, "x": 0.1, "v": -0.2})";
  const auto a = load("oscillator", parameters), b = load("oscillator3", parameters);
  ASSERT_EQ(b->state_size(), 2u);
  EXPECT_EQ(b->state_name(1), "v");
  EXPECT_EQ(b->input_name(0), "force");
  EXPECT_EQ(b->state_roles()[0], model::StateRole::kPosition);
  EXPECT_EQ(b->state_roles()[1], model::StateRole::kVelocity);
  EXPECT_EQ(a->jacobian_pattern().row_index, b->jacobian_pattern().row_index);
  const std::vector<double> u = {1.5};
  std::vector<double> za(2), zpa(2), zb(2), zpb(2), ja(4), jb(4), ya(2), yb(2);
  a->initial_state(u, za, zpa);
  b->initial_state(u, zb, zpb);
  EXPECT_EQ(za, zb);
  EXPECT_EQ(zpa, zpb);
  a->jacobian(0.3, za, zpa, u, 7.0, ja);
  b->jacobian(0.3, zb, zpb, u, 7.0, jb);
  EXPECT_EQ(ja, jb);
  a->outputs(0.3, za, u, ya);
  b->outputs(0.3, zb, u, yb);
  EXPECT_EQ(ya, yb);
}

// A constant input for the integrator.
class ConstantInput final : public model::InputFunction {
 public:
  explicit ConstantInput(double value) : value_(value) {}
  void evaluate(double, std::span<double> u) const override { u[0] = value_; }

 private:
  double value_;
};

std::vector<double> van_der_pol_rk4(double mu, double x0, double x1, double t_end, int steps) {
  const auto f = [mu](double a, double b) { return std::pair{b, mu * (1.0 - a * a) * b - a}; };
  const double h = t_end / steps;
  for (int k = 0; k < steps; ++k) {
    const auto [a1, b1] = f(x0, x1);
    const auto [a2, b2] = f(x0 + 0.5 * h * a1, x1 + 0.5 * h * b1);
    const auto [a3, b3] = f(x0 + 0.5 * h * a2, x1 + 0.5 * h * b2);
    const auto [a4, b4] = f(x0 + h * a3, x1 + h * b3);
    x0 += h / 6.0 * (a1 + 2.0 * a2 + 2.0 * a3 + a4);
    x1 += h / 6.0 * (b1 + 2.0 * b2 + 2.0 * b3 + b4);
  }
  return {x0, x1};
}

// Van der Pol without directional derivatives: IDA with the finite-difference Jacobian against a
// fine classical Runge-Kutta solution (independent of the FMU and of IDA).
TEST(Fmu, VanDerPolByIdaAgreesWithRungeKutta) {
  const auto s = load("van_der_pol", R"({"mu": 2.0, "x0": 1.5})");
  ASSERT_EQ(s->state_size(), 2u);
  EXPECT_EQ(s->output_name(0), "x0");
  // Forward-difference Jacobian against ∂f/∂x of the equation, at a point.
  std::vector<double> z = {1.3, -0.7}, zp(2), values(4);
  const std::vector<double> u = {0.0};
  s->jacobian(0.0, z, zp, u, 0.0, values);
  EXPECT_NEAR(values[0], 0.0, 1e-7);                               // -∂x1/∂x0
  EXPECT_NEAR(values[1], -(-2.0 * 2.0 * 1.3 * -0.7 - 1.0), 1e-6);  // -∂f1/∂x0
  EXPECT_NEAR(values[2], -1.0, 1e-7);                              // -∂x1/∂x1
  EXPECT_NEAR(values[3], -(2.0 * (1.0 - 1.3 * 1.3)), 1e-6);        // -∂f1/∂x1
  const ConstantInput zero(0.0);
  ida::IntegratorOptions options;
  options.rtol = 1e-10;
  options.atol_pos = options.atol_vel = 1e-10;
  ida::Integrator integrator(*s, options, &zero);
  integrator.advance_to(6.0);
  std::vector<double> end(2), end_p(2);
  integrator.state(end, end_p);
  const auto reference = van_der_pol_rk4(2.0, 1.5, 0.0, 6.0, 60000);
  EXPECT_NEAR(end[0], reference[0], 1e-6);
  EXPECT_NEAR(end[1], reference[1], 1e-6);
}

// An FMU's nominal values of its states scale their absolute solver tolerances (what FMI gives
// them for): the oscillator moving by 1e-7 m at 1 000 rad/s, whose motion the default tolerances
// (atol_pos 1e-9 m, atol_vel 1e-6 m/s) resolve to a hundredth only, against its closed form
// x = 1e-7·cos(1000·t). With the nominals (1e-7 m, 1e-4 m/s) the error is of the order of rtol;
// the same FMU without them is far off. FMI 2 and FMI 3 alike; a nominal of 0 is refused.
TEST(Fmu, NominalsOfTheStatesScaleTheirSolverTolerances) {
  const auto error = [](const std::string& name) {
    const auto s = load(name, R"({"c": 1e6, "x": 1e-7})");
    const ConstantInput zero(0.0);
    ida::Integrator integrator(*s, ida::IntegratorOptions{}, &zero);
    double worst = 0.0;
    std::vector<double> z(2), zp(2);
    for (int k = 1; k <= 100; ++k) {  // 16 periods
      const double t = 1e-3 * k;
      integrator.advance_to(t);
      integrator.state(z, zp);
      worst = std::max(worst, std::abs(z[0] - 1e-7 * std::cos(1000.0 * t)));
    }
    return worst / 1e-7;
  };
  for (const char* name : {"oscillator_nominals", "oscillator3_nominals"}) {
    const auto s = load(name);
    ASSERT_EQ(s->state_nominals().size(), 2u) << name;
    EXPECT_EQ(s->state_nominals()[0], 1e-7) << name;
    EXPECT_EQ(s->state_nominals()[1], 1e-4) << name;
  }
  // An FMU whose nominals are 1 (FMI 2) or that does not give them (FMI 3): none.
  EXPECT_TRUE(load("oscillator")->state_nominals().empty());
  EXPECT_TRUE(load("oscillator3")->state_nominals().empty());
  const double with = error("oscillator_nominals");
  EXPECT_LT(with, 5e-4);
  EXPECT_LT(error("oscillator3_nominals"), 5e-4);
  EXPECT_GT(error("oscillator"), 100.0 * with);
  EXPECT_NE(refusal({fmu_file("oscillator_bad_nominal"), "{}", {}, {}, ""})
                .find("its nominal value of the state x is 0 (FMI requires a finite value > 0"),
            std::string::npos);
}

// An output's nominal (the controller's scale of it) is its variable's `nominal` attribute, else
// its declared type's, else 1: FMI 2 (on the <Real> element) and FMI 3 (on the variable, and on a
// <Float64Type> that also gives the unit).
TEST(Fmu, OutputNominalsComeFromTheVariableOrItsDeclaredType) {
  const auto plain = load("oscillator");
  EXPECT_EQ(plain->output_nominal(0), 1.0);
  EXPECT_EQ(plain->output_nominal(1), 1.0);
  const auto scaled = load("oscillator_scaled");
  EXPECT_EQ(scaled->output_nominal(0), 1e-7);
  EXPECT_EQ(scaled->output_nominal(1), 1e-6);
  const auto scaled3 = load("oscillator3_scaled");
  EXPECT_EQ(scaled3->output_nominal(0), 1e-7);
  EXPECT_EQ(scaled3->output_nominal(1), 1e-6);  // from the declared type
  EXPECT_EQ(scaled3->output_unit(1), "m/s");
  EXPECT_EQ(scaled3->output_unit(0), "");
}

TEST(Fmu, AFeedThroughOutputIsDeclaredAndFollowsTheInput) {
  const auto s = load("feedthrough", R"({"k": 3.0})");
  EXPECT_TRUE(s->has_feedthrough());
  EXPECT_EQ(s->state_roles()[0], model::StateRole::kOther);
  std::vector<double> z = {1.5}, y(1);
  s->outputs(0.0, z, std::vector<double>{2.0}, y);
  EXPECT_EQ(y[0], 1.5 + 3.0 * 2.0);
  // Its D block for the master's consistent update (METHODS D-1): central differences of the
  // FMU's outputs, y = x + k·u gives k.
  std::vector<double> d(1);
  s->feedthrough_jacobian(0.0, z, std::vector<double>{2.0}, d);
  EXPECT_NEAR(d[0], 3.0, 1e-6);
  // Without the input among the subsystem's inputs the output follows the states alone.
  const auto closed = load("feedthrough", "{}", {}, {"y"});
  EXPECT_TRUE(closed->has_feedthrough());
}

// Instances are leased per evaluation: threads evaluating at once get the same numbers as one.
// An FMU declaring canBeInstantiatedOnlyOncePerProcess (its binary refuses a second instance)
// gets one instance per loaded copy, which the threads take turns with.
std::vector<double> evaluate_in_threads(const model::Subsystem& s, bool parallel) {
  const auto evaluate = [&](int k) {
    std::vector<double> z = {0.1 * k, 1.0 - 0.01 * k}, zp(2, 0.0), r(2);
    double sum = 0.0;
    for (int i = 0; i < 2000; ++i) {
      z[0] += 1e-4;
      s.residual(0.01 * i, z, zp, std::vector<double>{0.5}, r);
      sum += r[0] + r[1];
    }
    return sum;
  };
  std::vector<double> sums(4);
  if (!parallel) {
    for (int k = 0; k < 4; ++k) sums[k] = evaluate(k);
    return sums;
  }
  std::vector<std::string> errors(4);
  std::vector<std::thread> threads;
  for (int k = 0; k < 4; ++k) {
    threads.emplace_back([&, k] {
      try {
        sums[k] = evaluate(k);
      } catch (const std::exception& e) {
        errors[k] = e.what();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (const auto& e : errors) EXPECT_EQ(e, "");
  return sums;
}

TEST(Fmu, ParallelEvaluationsGiveTheSequentialNumbers) {
  const auto s = load("van_der_pol", R"({"mu": 3.0})");
  EXPECT_EQ(evaluate_in_threads(*s, false), evaluate_in_threads(*s, true));
  const std::string parameters = R"({"m": 2.0, "c": 8.0, "d": 0.5})";
  const auto once = load("oscillator_once", parameters);
  // A second subsystem of the same FMU loads its own copy of the binary.
  const auto other = load("oscillator_once", parameters);
  const auto sequential = evaluate_in_threads(*once, false);
  EXPECT_EQ(sequential, evaluate_in_threads(*once, true));
  EXPECT_EQ(sequential, evaluate_in_threads(*other, true));
  EXPECT_EQ(sequential, evaluate_in_threads(*load("oscillator", parameters), true));
}

TEST(Fmu, AnFmuThatCannotSaveItsStateHandlesItsEventsGoingForwardOnly) {
  const auto fmu = load("oscillator_events", R"({"m": 1, "c": 1, "x": 1, "event_time": 0.5})");
  ASSERT_NE(fmu->events(), nullptr);
  EXPECT_FALSE(fmu->events()->restorable());
  const ConstantInput zero(0.0);
  ida::IntegratorOptions options;
  options.rtol = 1e-8;
  options.atol_pos = 1e-10;
  ida::Integrator integrator(*fmu, options, &zero);
  const auto at_start = integrator.make_snapshot();
  long events = 0;
  for (int k = 1; k <= 30; ++k) events += integrator.advance_to(0.1 * k).events;
  EXPECT_EQ(events, 2) << "the time event at 0.5 and the state event at pi/2";
  std::vector<double> z(2), zp(2);
  integrator.state(z, zp);
  EXPECT_NEAR(z[0], std::cos(3.0), 1e-6);
  EXPECT_THROW((void)integrator.export_snapshot(*at_start), std::runtime_error);
  integrator.restore(*at_start);
  try {
    integrator.advance_to(0.1);
    FAIL() << "went back";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("an earlier mode than its newest"), std::string::npos)
        << e.what();
  }
}

// ---- bad FMUs: one message each ----

TEST(Fmu, EveryBadFmuHasItsOwnMessage) {
  const fs::path dir = temp_dir("bad");
  const std::string xml = read_file(fs::path(FMU_XML_DIR) / "oscillator.xml");
  const std::string binary =
      read_file(fs::path(FMU_DIR) / "oscillator.stage/binaries/linux64/oscillator.so");
  const std::string so = "binaries/linux64/oscillator.so";
  const auto with_xml = [&](const std::string& name, const std::string& text) {
    return make_fmu(dir, name, {{"modelDescription.xml", text}, {so, binary}});
  };
  const auto replaced = [&](const std::string& from, const std::string& to) {
    std::string text = xml;
    text.replace(text.find(from), from.size(), to);
    return text;
  };
  std::ofstream(dir / "text.fmu") << "this is not a zip archive\n";
  struct Case {
    std::string path, expected;
  };
  const std::vector<Case> cases = {
      {(dir / "text.fmu").string(), "not a zip archive"},
      {(dir / "absent.fmu").string(), "not a zip archive"},
      {make_fmu(dir, "no-description", {{so, binary}}), "the archive has no modelDescription.xml"},
      {with_xml("malformed", xml.substr(0, xml.size() / 2)),
       "modelDescription.xml is not well-formed XML (line"},
      {with_xml("version", replaced("fmiVersion=\"2.0\"", "fmiVersion=\"1.0\"")),
       "unsupported FMI version \"1.0\""},
      {with_xml("cs-only", replaced("<ModelExchange", "<CoSimulation")),
       "does not export fmi2DoStep (an FMI 2.0 Co-Simulation binary must)"},
      {with_xml("events",
                replaced("numberOfEventIndicators=\"0\"", "numberOfEventIndicators=\"2\"")),
       "fmi2GetEventIndicators returned fmi2Error at t = 0 (FMU log: error: "
       "fmi2GetEventIndicators: wrong size)"},
      {with_xml("no-guid", replaced("guid=", "gud=")), "no attribute guid"},
      {make_fmu(dir, "windows",
                {{"modelDescription.xml", xml}, {"binaries/win64/oscillator.dll", binary}}),
       "has no binary for this platform (binaries/linux64/oscillator.so; the archive has "
       "binaries/win64/oscillator.dll)"},
      {with_xml("wrong-guid", replaced("guid=\"{5e0d", "guid=\"{0000")),
       "fmi2Instantiate returned NULL"},
      {fmu_file("oscillator_no_derivatives"), "its binary does not export fmi2GetDerivatives"},
  };
  for (const Case& c : cases) {
    const std::string message = refusal({c.path, "{}", {}, {}, ""});
    EXPECT_NE(message.find("FMU " + c.path + ": "), std::string::npos) << message;
    EXPECT_NE(message.find(c.expected), std::string::npos) << c.path << ": " << message;
  }
  const std::string osc = fmu_file("oscillator");
  EXPECT_NE(refusal({osc, R"({"springiness": 1})", {}, {}, ""})
                .find("parameters: \"springiness\" is not a variable whose start value can be set "
                      "(parameters of this FMU: \"m\", \"c\""),
            std::string::npos);
  EXPECT_NE(refusal({osc, "{}", {"x"}, {}, ""})
                .find("inputs: \"x\" is not a Real, Integer or Boolean input variable of "
                      "this FMU (candidates: \"force\")"),
            std::string::npos);
  EXPECT_NE(refusal({osc, "{}", {}, {"speed"}, ""})
                .find("outputs: \"speed\" is not a Real, Integer or Boolean output"),
            std::string::npos);
  fs::remove_all(dir);
}

// ---- the app ----

TEST(FmuApp, TwoMassOscillatorAsFmusIsTheSameInProcessesAndAgreesWithTheBuiltInChain) {
  const fs::path dir = temp_dir("two-mass");
  // Step-size and order control (exMD, comparison runs beside the nominal ones): same bytes.
  const auto adaptive = write_fmu_pair(dir, "[cosim]\nrtol = 1e-5\n").string();
  for (const char* executor : {"inprocess", "processes"}) {
    const AppRun r = macrostep("run " + adaptive + " --executor " + executor + " --output " +
                               (dir / (std::string(executor) + ".csv")).string());
    ASSERT_EQ(r.status, 0) << r.output;
  }
  std::string header;
  EXPECT_GT(read_csv(dir / "inprocess.csv", &header).size(), 50u);
  EXPECT_EQ(header, "time,m1.x,m1.v,m2.x,m2.v,coupling");
  EXPECT_TRUE(read_file(dir / "inprocess.csv") == read_file(dir / "processes.csv"))
      << "the executors' CSV files differ";
  // The same model compiled as an FMI 3.0 FMU: the same bytes (other API, same numbers).
  const auto fmi3 = write_fmu_pair(dir, "[cosim]\nrtol = 1e-5\n", "", "oscillator3").string();
  const AppRun r3 = macrostep("run " + fmi3 + " --output " + (dir / "fmi3.csv").string());
  ASSERT_EQ(r3.status, 0) << r3.output;
  EXPECT_TRUE(read_file(dir / "inprocess.csv") == read_file(dir / "fmi3.csv"))
      << "FMI 3.0 and FMI 2.0 runs differ";
  // One instance per process (canBeInstantiatedOnlyOncePerProcess): the nominal and comparison
  // runs on the in-process executor's threads take turns with it, to the same bytes.
  const auto once = write_fmu_pair(dir, "[cosim]\nrtol = 1e-5\n", "", "oscillator_once").string();
  const AppRun r1 =
      macrostep("run " + once + " --executor inprocess --output " + (dir / "once.csv").string());
  ASSERT_EQ(r1.status, 0) << r1.output;
  EXPECT_TRUE(read_file(dir / "inprocess.csv") == read_file(dir / "once.csv"))
      << "the single-instance FMU's run differs";
  // Fixed H (the same macro points): the FMUs against the built-in chain, column by column
  // (x_1, v_1, x_2, v_2, lambda_1), to the integrator's tolerance.
  const std::string fixed = "[cosim]\nestimator = \"none\"\nstep_size = 1e-3\norder = 2\n";
  for (const auto& config : {write_fmu_pair(dir, fixed), write_chain(dir, fixed)}) {
    const AppRun r = macrostep("run " + config.string() + " --output " +
                               (dir / (config.stem().string() + "-fixed.csv")).string());
    ASSERT_EQ(r.status, 0) << r.output;
  }
  const double difference =
      largest_relative_difference(dir / "fmus-fixed.csv", dir / "chain-fixed.csv");
  std::cout << "explicit, H = 1e-3: largest difference FMU vs built-in " << difference << "\n";
  EXPECT_LT(difference, 1e-5);
  fs::remove_all(dir);
}

// FMUs whose states have nominals (their solver tolerances scaled, D-53) in a run: each worker
// reads them from its own instance, so the processes give the in-process bytes; the nominals are
// in effect (the run differs from the same FMU's without them); the reference's one IDA over the
// whole system (which carries them) runs.
TEST(FmuApp, NominalsGiveTheSameBytesInProcessesAndTakeEffect) {
  const fs::path dir = temp_dir("nominals");
  const std::string cosim = "[cosim]\nrtol = 1e-5\n";
  const auto scaled = write_fmu_pair(dir, cosim, "", "oscillator_nominals").string();
  const auto plain = write_fmu_pair(dir, cosim).string();
  const auto run = [&](const std::string& config, const std::string& executor,
                       const std::string& out) {
    const AppRun r = macrostep("run " + config + " --stop-time 0.2 --executor " + executor +
                               " --output " + (dir / out).string());
    EXPECT_EQ(r.status, 0) << r.output;
  };
  run(scaled, "inprocess", "inprocess.csv");
  run(scaled, "processes", "processes.csv");
  run(plain, "inprocess", "plain.csv");
  EXPECT_TRUE(read_file(dir / "inprocess.csv") == read_file(dir / "processes.csv"))
      << "the executors' CSV files differ";
  EXPECT_FALSE(read_file(dir / "inprocess.csv") == read_file(dir / "plain.csv"))
      << "the nominals changed nothing";
  const AppRun ref = macrostep("reference " + scaled + " --at " + (dir / "inprocess.csv").string() +
                               " --output " + (dir / "ref.csv").string());
  EXPECT_EQ(ref.status, 0) << ref.output;
  EXPECT_LT(largest_relative_difference(dir / "inprocess.csv", dir / "ref.csv"), 1e-3);
  fs::remove_all(dir);
}

// Two oscillator FMUs `fmu` coupled by a spring-damper, moving by 1e-7 m (velocities of a few
// 1e-6 m/s) under [cosim] rtol 1e-5 and [solver] rtol 1e-8: the configuration's path.
fs::path write_small_pair(const fs::path& dir, const std::string& fmu) {
  fs::copy_file(fmu_file(fmu), dir / (fmu + ".fmu"), fs::copy_options::skip_existing);
  const fs::path config = dir / (fmu + ".toml");
  std::ofstream(config) << "[[subsystem]]\nname = \"m1\"\nmodel = \"fmu\"\npath = \"" << fmu
                        << ".fmu\"\nparameters = {m = 1.0, c = 100.0, d = 0.1, x = 1e-7}\n"
                        << "[[subsystem]]\nname = \"m2\"\nmodel = \"fmu\"\npath = \"" << fmu
                        << ".fmu\"\nparameters = {m = 0.5, c = 100.0, d = 0.1}\n"
                        << "[[connection]]\nname = \"coupling\"\nlaw = \"spring_damper\"\n"
                        << "from = [\"m1.x\", \"m1.v\", \"m2.x\", \"m2.v\"]\n"
                        << "to = [\"m1.force\", \"m2.force\"]\nc = 400.0\nd = 1.0\n"
                        << kCommon << "[output]\nrows = \"macro\"\n[cosim]\nrtol = 1e-5\n";
  return config;
}

// `run ARGS` of the configuration into OUT, then the reference at its rows: the run's output and
// its largest relative difference from the reference.
std::pair<std::string, double> run_against_reference(const fs::path& config,
                                                     const std::string& args, const fs::path& out) {
  const AppRun r = macrostep("run " + config.string() + " " + args + " --output " + out.string());
  EXPECT_EQ(r.status, 0) << r.output;
  const fs::path ref = out.string() + ".ref.csv";
  const AppRun reference = macrostep("reference " + config.string() + " --at " + out.string() +
                                     " --output " + ref.string());
  EXPECT_EQ(reference.status, 0) << reference.output;
  return {r.output, largest_relative_difference(out, ref)};
}

// The outputs' nominal attributes scale the macro-step controller's absolute tolerances (D-53):
// in the small pair the default atol_vel (1e-5 m/s) covers the velocities' motion. Without the
// attributes the controller cannot see the velocities' errors, the run is off by several percent
// and the absolute-tolerance warning says so; with them (x 1e-7 m, v 1e-6 m/s) it follows the
// reference and nothing is reported. Both FMUs give the same state nominals (the solver's scale).
TEST(FmuApp, OutputNominalsScaleTheControllersTolerances) {
  const fs::path dir = temp_dir("output-nominals");
  const auto [small_output, small_error] = run_against_reference(
      write_small_pair(dir, "oscillator_small"), "--executor inprocess", dir / "small.csv");
  const auto [scaled_output, scaled_error] = run_against_reference(
      write_small_pair(dir, "oscillator_scaled"), "--executor inprocess", dir / "scaled.csv");
  EXPECT_LT(scaled_error, 1e-3);
  EXPECT_GT(small_error, 100.0 * scaled_error);
  EXPECT_NE(small_output.find("warning: atol_vel = 1e-05 is a tenth or more"), std::string::npos)
      << small_output;
  EXPECT_EQ(scaled_output.find("warning: atol"), std::string::npos) << scaled_output;
  fs::remove_all(dir);
}

// A run whose tolerances come from nominals (the states' in each IDA, the outputs' as per-output
// atols of the controller) resumes from its last periodic checkpoint, in processes, to the bytes
// of the whole run: the checkpoint's per-output atols match the ones the configuration gives
// again, and the workers' integrators are rebuilt with the same scaled tolerances.
TEST(FmuApp, ARunWithNominalsResumesToTheSameBytes) {
  const fs::path dir = temp_dir("nominals-resume");
  expect_resume_gives_the_whole_runs_bytes(write_small_pair(dir, "oscillator_scaled"), dir,
                                           "--executor inprocess");
  fs::remove_all(dir);
}

// The monolithic run's one IDA over the whole system carries the subsystems' state nominals: the
// small pair as one system, the FMU with state nominals against the same FMU without (its
// default solver atol_vel, 1e-8 m/s, is a hundredth of the velocities), each against its
// reference.
TEST(FmuApp, StateNominalsScaleTheMonolithicSolversTolerances) {
  const fs::path dir = temp_dir("monolithic-nominals");
  const double with = run_against_reference(write_small_pair(dir, "oscillator_small"),
                                            "--monolithic", dir / "with.csv")
                          .second;
  const double without = run_against_reference(write_small_pair(dir, "oscillator"), "--monolithic",
                                               dir / "without.csv")
                             .second;
  EXPECT_LT(with, 1e-5);
  EXPECT_GT(without, 100.0 * with);
  fs::remove_all(dir);
}

// Implicit scheme (perturbed runs of the FMU subsystems from their T_N workspace, on the TBB
// arena): the corrector converges as with the built-in model, to the same results.
TEST(FmuApp, ImplicitSchemeOnFmusConvergesAsOnTheBuiltInChain) {
  const fs::path dir = temp_dir("implicit");
  const std::string cosim =
      "[cosim]\nscheme = \"implicit\"\nestimator = \"none\"\nstep_size = 1e-2\norder = 2\n";
  for (const auto& config : {write_fmu_pair(dir, cosim), write_chain(dir, cosim)}) {
    const AppRun r = macrostep("run " + config.string() + " --output " +
                               (dir / (config.stem().string() + ".csv")).string());
    ASSERT_EQ(r.status, 0) << r.output;
  }
  const auto fmus = statistics(dir / "fmus.csv"), chain = statistics(dir / "chain.csv");
  std::cout << "implicit, H = 1e-2: corrector passes FMU " << fmus["corrector"]["passes"]
            << ", built-in " << chain["corrector"]["passes"] << "\n";
  EXPECT_EQ(fmus["corrector_failures"], 0);
  EXPECT_EQ(fmus["corrector"]["passes"], chain["corrector"]["passes"]);
  const double difference = largest_relative_difference(dir / "fmus.csv", dir / "chain.csv");
  std::cout << "implicit, H = 1e-2: largest difference FMU vs built-in " << difference << "\n";
  EXPECT_LT(difference, 1e-5);
  fs::remove_all(dir);
}

TEST(FmuApp, AFailingFmuCallNamesFunctionSubsystemAndTime) {
  const fs::path dir = temp_dir("failing");
  const auto config = write_fmu_pair(dir, "[cosim]\nrtol = 1e-5\n", ", fail_time = 0.25");
  for (const char* executor : {"inprocess", "processes"}) {
    const AppRun r = macrostep("run " + config.string() + " --executor " + executor + " --output " +
                               (dir / "failing.csv").string());
    EXPECT_EQ(r.status, 1) << r.output;
    EXPECT_NE(r.output.find("fmi2GetDerivatives returned fmi2Error at t = 0.25"), std::string::npos)
        << r.output;
    EXPECT_NE(r.output.find("(subsystem 2 is \"m2\": FMU "), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("the model cannot be evaluated"), std::string::npos) << r.output;
    // The rows before the failure stay.
    EXPECT_GT(read_csv(dir / "failing.csv").size(), 10u);
  }
  fs::remove_all(dir);
}

// FMI 3: what macrostep does not run is refused by name; start values and <Alias> names of
// variables with child elements are read.
TEST(Fmu, Fmi3ArraysClocksAndScheduledExecutionAreRefusedAliasesRead) {
  const fs::path dir = temp_dir("fmi3");
  const std::string xml = read_file(fs::path(FMU_XML_DIR) / "oscillator3.xml");
  const std::string so = "binaries/x86_64-linux/oscillator.so";
  const std::string binary = read_file(fs::path(FMU_DIR) / ("oscillator3.stage/" + so));
  const auto with = [&](const std::string& name, const std::string& from, const std::string& to) {
    std::string text = xml;
    text.replace(text.find(from), from.size(), to);
    return make_fmu(dir, name, {{"modelDescription.xml", text}, {so, binary}});
  };
  const std::string x = R"(<Float64 name="x" valueReference="0" causality="output" )"
                        R"(variability="continuous" initial="exact" start="0"/>)";
  const std::string x_open = R"(<Float64 name="x" valueReference="0" causality="output" )"
                             R"(variability="continuous" initial="exact" start="0">)";
  struct Case {
    std::string path, expected;
  };
  const std::vector<Case> cases = {
      {with("array", x, x_open + "<Dimension start=\"3\"/></Float64>"),
       "\"x\" has 3 elements and 1 start values"},
      {with("clock", "</ModelVariables>",
            R"(<Clock name="tick" valueReference="77" causality="input"/></ModelVariables>)"),
       "has clocks (tick): FMI 3 clocks are not supported"},
      {with("scheduled",
            R"(<ModelExchange modelIdentifier="oscillator" )"
            R"(providesDirectionalDerivatives="true"/>)",
            R"(<ScheduledExecution modelIdentifier="oscillator"/>)"),
       "declares only <ScheduledExecution>"},
  };
  for (const Case& c : cases) {
    const std::string message = refusal({c.path, "{}", {}, {}, ""});
    EXPECT_NE(message.find(c.expected), std::string::npos) << c.path << ": " << message;
  }
  // x with a child <Alias>: its start value is read (settable), and the alias names it.
  const std::string aliased =
      with("alias", x, x_open + "\n  <Alias name=\"position\"/>\n</Float64>");
  for (const char* name : {"x", "position"}) {
    const auto fmu = library::build_subsystem(fmu::FmuDescription{
        aliased, std::string(R"({")") + name + R"(": 0.25, "c": 1.0})", {}, {}, ""});
    const std::vector<double> u0 = {0.0};
    std::vector<double> z(2), zp(2);
    fmu->initial_state(u0, z, zp);
    EXPECT_EQ(z[0], 0.25) << name;
    EXPECT_EQ(zp[1], -0.25) << name;  // x'' = -c x / m
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace macrostep

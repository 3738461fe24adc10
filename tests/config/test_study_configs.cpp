// configs/: every file loads and realizes, and the study files say what spec/MODELS.md says.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "macrostep/config/run_config.hpp"

namespace {

namespace fs = std::filesystem;
using macrostep::config::load_config;
using macrostep::config::realize_chain;
using macrostep::config::RunConfig;
using macrostep::library::ChainParameters;

const fs::path kConfigs = fs::path(MACROSTEP_SOURCE_DIR) / "configs";

RunConfig study(const std::string& id) {
  return load_config((kConfigs / (id + ".toml")).string());
}

std::vector<std::size_t> sizes(const RunConfig& c) {
  std::vector<std::size_t> out;
  for (std::size_t k = 0; k + 1 < c.partition.boundaries.size(); ++k) {
    out.push_back(c.partition.boundaries[k + 1] - c.partition.boundaries[k]);
  }
  return out;
}

// 1-based indices of the masses that carry a force of the given kind.
template <typename Member>
std::vector<std::size_t> forced(const ChainParameters& p, Member member) {
  std::vector<std::size_t> out;
  for (std::size_t k = 0; k < p.size(); ++k) {
    if (!(p.forces[k].*member).empty()) out.push_back(k + 1);
  }
  return out;
}

TEST(StudyConfigs, EveryFileLoadsAndRealizes) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(kConfigs)) {
    if (entry.path().extension() != ".toml") continue;
    names.push_back(entry.path().filename().string());
    SCOPED_TRACE(entry.path().string());
    RunConfig c;
    ASSERT_NO_THROW(c = load_config(entry.path().string()));
    EXPECT_FALSE(c.description.empty()) << "every study file describes itself";
    if (!c.system_description->chain) continue;  // a [[subsystem]] description has no chain
    ChainParameters p;
    ASSERT_NO_THROW(p = realize_chain(c));
    EXPECT_EQ(p.size(), c.chain.masses);
  }
  // The studies of the foundation issue (MODELS.md §3, §5) and the demo.
  for (const char* required :
       {"demo", "k-4.5", "k-5.1", "k-5.1-linear", "k-5.3", "k-5.4a", "k-5.4b", "k-5.5", "k-5.7",
        "k-5.8", "s-4.5", "s-5.3", "s-5.4b", "s-5.5", "s-5.7", "s-5.8", "s-5.8c"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), std::string(required) + ".toml"), names.end())
        << required;
  }
}

TEST(StudyConfigs, K51HasTheFreeRightEndTheSixthPowerAndTheForceOnTheLastMass) {
  const RunConfig c = study("k-5.1");
  const ChainParameters p = realize_chain(c);
  ASSERT_EQ(p.size(), 50U);
  EXPECT_EQ(p.element[0].ex, 6.0);
  EXPECT_EQ(p.element[0].C, 1.0e12);
  EXPECT_TRUE(p.element[50].is_zero());  // element 51: free end
  EXPECT_EQ(forced(p, &macrostep::library::MassForces::harmonic), (std::vector<std::size_t>{50}));
  EXPECT_EQ(p.forces[49].harmonic[0].amplitude, 5.0e7);
  EXPECT_EQ(c.solver.rtol, 1e-10);
  EXPECT_EQ(c.solver.effective_atol_pos(), 1e-13);
  EXPECT_EQ(sizes(c), std::vector<std::size_t>(10, 5));
  const ChainParameters linear = realize_chain(study("k-5.1-linear"));
  EXPECT_EQ(linear.element[10].C, 0.0);
  EXPECT_EQ(linear.element[10].D, 0.0);
  EXPECT_EQ(linear.element[10].c, 1.0e6);
}

TEST(StudyConfigs, K54aCutsAtTheSoftestElements) {
  for (const char* id : {"k-5.4a", "k-5.4a-ns100"}) {
    SCOPED_TRACE(id);
    const RunConfig c = study(id);
    const ChainParameters p = realize_chain(c);
    // The element left of the first body of every subsystem is a cut element: c = 2e11.
    for (std::size_t k = 1; k + 1 < c.partition.boundaries.size(); ++k) {
      EXPECT_DOUBLE_EQ(p.element[c.partition.boundaries[k]].c, 2.0e11);
    }
    // Stiffest element of a period: 2e11 * (1 + 9 sin(0.3142 * 5)) ~ 2e12.
    EXPECT_NEAR(p.element[5].c, 2.0e12, 1e8);
    EXPECT_TRUE(p.element[1000].is_zero());
    EXPECT_DOUBLE_EQ(p.x0[0], 3.0e-7);
    EXPECT_DOUBLE_EQ(p.x0[999], 1000 * 3.0e-7);
  }
  EXPECT_EQ(study("k-5.4a").partition.subsystems(), 5U);
  EXPECT_EQ(study("k-5.4a-ns100").partition.subsystems(), 100U);
}

TEST(StudyConfigs, K54bAlternatesHeavyAndLightSubsystemsAndTheRestructuringKeepsTheModel) {
  const RunConfig original = study("k-5.4b");
  const RunConfig restructured = study("k-5.4b-restructured");
  EXPECT_EQ(sizes(original),
            (std::vector<std::size_t>{40, 10, 40, 10, 40, 10, 40, 10, 40, 10, 40}));
  EXPECT_EQ(sizes(restructured),
            (std::vector<std::size_t>{39, 12, 38, 12, 38, 12, 38, 12, 38, 12, 39}));
  const ChainParameters p = realize_chain(original);
  const ChainParameters q = realize_chain(restructured);
  EXPECT_EQ(p.mass, q.mass);
  EXPECT_EQ(p.x0, q.x0);
  // Original cuts lie between a 10 kg and a 0.1 kg body, restructured ones between 10 kg bodies.
  const auto cuts = original.partition.coupling_bodies();
  for (std::size_t k = 0; k < cuts.size(); k += 2) {
    EXPECT_EQ(std::max(p.mass[cuts[k] - 1], p.mass[cuts[k]]) /
                  std::min(p.mass[cuts[k] - 1], p.mass[cuts[k]]),
              100.0);
  }
  for (std::size_t body : restructured.partition.coupling_bodies()) {
    EXPECT_EQ(q.mass[body - 1], 10.0) << body;
  }
  EXPECT_EQ(forced(p, &macrostep::library::MassForces::modified_sine).size(), 58U);  // 20 %
  const RunConfig multirate = study("s-5.4b-multirate");
  const ChainParameters m = realize_chain(multirate);
  EXPECT_EQ(m.size(), 2900U);
  EXPECT_EQ(m.mass[400], 0.1);
  EXPECT_EQ(m.mass[399], 10.0);
}

TEST(StudyConfigs, K55IsTheTwoMassOscillatorWithDampedCouplingElement) {
  for (const char* id : {"k-5.5", "s-5.5"}) {
    SCOPED_TRACE(id);
    const ChainParameters p = realize_chain(study(id));
    ASSERT_EQ(p.size(), 2U);
    EXPECT_EQ(p.mass, (std::vector<double>{1.0e-6, 1.0}));
    EXPECT_EQ(p.x0, (std::vector<double>{5.0e-2, 0.0}));
    EXPECT_EQ(p.element[1].d, 1.0e6);
    EXPECT_EQ(p.element[0].d, 0.0);
    EXPECT_EQ(p.element[2].c, 1.0e6);
    EXPECT_EQ(forced(p, &macrostep::library::MassForces::harmonic), (std::vector<std::size_t>{2}));
  }
  EXPECT_EQ(study("s-5.5").simulation.end_time, 0.2);
}

TEST(StudyConfigs, K58PutsAlternatingImpulsesOnEveryCouplingBody) {
  const RunConfig c = study("k-5.8");
  const ChainParameters p = realize_chain(c);
  const auto bodies = c.partition.coupling_bodies();
  ASSERT_EQ(bodies.size(), 198U);
  EXPECT_EQ(bodies.front(), 1000U);
  EXPECT_EQ(bodies[1], 1001U);
  EXPECT_EQ(forced(p, &macrostep::library::MassForces::impulse), bodies);
  // (-1)^(i+1) over the coupling bodies: every coupling element is compressed.
  EXPECT_EQ(p.forces[999].impulse.size(), 10U);
  EXPECT_EQ(p.forces[999].impulse[0].amplitude, 1.0e6);
  EXPECT_EQ(p.forces[1000].impulse[0].amplitude, -1.0e6);
  EXPECT_EQ(p.forces[1999].impulse[0].amplitude, 1.0e6);
  EXPECT_EQ(p.forces[999].impulse[9].start, 0.9);
  EXPECT_EQ(p.forces[999].impulse[0].duration, 1.0e-3);

  const RunConfig s = study("s-5.8");
  const ChainParameters q = realize_chain(s);
  EXPECT_EQ(forced(q, &macrostep::library::MassForces::impulse),
            (std::vector<std::size_t>{20, 21}));
  EXPECT_EQ(q.forces[20].impulse[0].amplitude, -1.0e6);
}

TEST(StudyConfigs, S58cHasContactEndSubsystemsAndACentralImpulsePair) {
  const RunConfig c = study("s-5.8c");
  const ChainParameters p = realize_chain(c);
  EXPECT_EQ(sizes(c), (std::vector<std::size_t>{25, 250, 500, 250, 25}));
  EXPECT_EQ(forced(p, &macrostep::library::MassForces::contact),
            (std::vector<std::size_t>{3, 5, 7, 1044, 1046, 1049}));
  EXPECT_EQ(p.forces[2].contact[0].stiffness, 5.0e8);
  // Centre of the 500-mass subsystem (masses 276..775).
  EXPECT_EQ(forced(p, &macrostep::library::MassForces::impulse),
            (std::vector<std::size_t>{525, 526}));
  for (std::size_t k : {2, 4, 6, 1043, 1045, 1048}) EXPECT_LE(p.x0[k], 0.0);
}

TEST(StudyConfigs, K45ContactVariantsUseTheCentralMassesOfSubsystemsFourAndEight) {
  for (const char* id : {"k-4.5-contact", "s-4.5-contact"}) {
    SCOPED_TRACE(id);
    const RunConfig c = study(id);
    const ChainParameters p = realize_chain(c);
    const auto contacts = forced(p, &macrostep::library::MassForces::contact);
    ASSERT_EQ(contacts.size(), 10U);
    const auto& b = c.partition.boundaries;
    // Five masses in subsystem 4, five in subsystem 8, around each centre.
    for (std::size_t k = 0; k < 5; ++k) {
      EXPECT_GT(contacts[k], b[3]);
      EXPECT_LE(contacts[k], b[4]);
      EXPECT_GT(contacts[5 + k], b[7]);
      EXPECT_LE(contacts[5 + k], b[8]);
    }
    EXPECT_EQ(contacts[2], (b[3] + b[4]) / 2);
    EXPECT_EQ(contacts[7], (b[7] + b[8]) / 2);
  }
}

TEST(StudyConfigs, K53And57SelectTheStatedShareOfMasses) {
  EXPECT_EQ(
      forced(realize_chain(study("k-5.3")), &macrostep::library::MassForces::modified_sine).size(),
      75U);
  EXPECT_EQ(
      forced(realize_chain(study("s-5.3")), &macrostep::library::MassForces::modified_sine).size(),
      1000U);
  EXPECT_EQ(
      forced(realize_chain(study("k-5.7")), &macrostep::library::MassForces::modified_sine).size(),
      500U);
  EXPECT_EQ(study("k-5.7-dense").solver.linear_solver, macrostep::ida::LinearSolver::kDense);
  EXPECT_EQ(study("k-5.7").solver.linear_solver, macrostep::ida::LinearSolver::kKlu);
}

// [cosim] of the studies that define co-simulation settings (MODELS.md §3, §5): each file
// runs its headline setting.
TEST(StudyConfigs, CoSimulationSettingsFollowTheStudies) {
  using macrostep::control::Estimator;
  for (const auto& entry : fs::directory_iterator(kConfigs)) {
    if (entry.path().extension() != ".toml") continue;
    SCOPED_TRACE(entry.path().string());
    const RunConfig c = load_config(entry.path().string());
    EXPECT_TRUE(c.cosim.given) << "every study and the demo say how they co-simulate";
    EXPECT_NO_THROW(macrostep::config::check_cosimulation(c));
  }
  // K-5.1: kappa = 2 at the explicit stability limit H = 1e-5 s (fixed step).
  for (const char* id : {"k-5.1", "k-5.1-linear"}) {
    const RunConfig c = study(id);
    EXPECT_TRUE(c.cosim.fixed_step()) << id;
    EXPECT_EQ(c.cosim.step_size, 1e-5) << id;
    EXPECT_EQ(c.cosim.effective_order().kappa, 2) << id;
  }
  // K-5.3: exMD at kappa = 2 without order control and dead zone, atol_pos = 1e-4 rtol.
  for (const char* id : {"k-5.3", "s-5.3"}) {
    const RunConfig c = study(id);
    EXPECT_EQ(c.cosim.estimator, Estimator::kExMD) << id;
    EXPECT_FALSE(c.cosim.effective_order().automatic) << id;
    EXPECT_EQ(c.cosim.effective_order().kappa, 2) << id;
    EXPECT_FALSE(c.cosim.dead_zone) << id;
    EXPECT_DOUBLE_EQ(c.cosim.effective_atol_pos(), 1e-4 * c.cosim.rtol) << id;
    EXPECT_EQ(c.cosim.safety, 6.0) << id;
  }
  // K-5.8 / S-5.8: exMD at rtol 1e-6, atol_u = 1e4 rtol, order control.
  for (const char* id : {"k-5.8", "s-5.8"}) {
    const RunConfig c = study(id);
    EXPECT_EQ(c.cosim.estimator, Estimator::kExMD) << id;
    EXPECT_EQ(c.cosim.rtol, 1e-6) << id;
    EXPECT_DOUBLE_EQ(c.cosim.effective_atol_u(), 1e-2) << id;
    EXPECT_TRUE(c.cosim.effective_order().automatic) << id;
  }
  // K-5.4b: the repartition comparison with exCV at rtol 1e-5.
  EXPECT_EQ(study("k-5.4b").cosim.estimator, Estimator::kExCV);
  EXPECT_EQ(study("k-5.4b-restructured").cosim.rtol, 1e-5);
  // K-4.5: exH, kappa = 1, H = 5e-7 s.
  const RunConfig k45 = study("k-4.5");
  EXPECT_TRUE(k45.cosim.fixed_step());
  EXPECT_EQ(k45.cosim.step_size, 5e-7);
  EXPECT_EQ(k45.cosim.effective_order().kappa, 1);
  // Two-mass studies start at H_init = 1e-6 s (MODELS.md §1.7).
  EXPECT_EQ(study("k-5.5").cosim.step_size, 1e-6);
}

}  // namespace

// The interface-Jacobian registry and strategies (runtime/corrector/jacobian_registry.hpp,
// jacobian_strategy.hpp): the built-in variants are registered under the names users write,
// with the traits that settings and checks rely on (perturbed runs, constraints, feed-through,
// checkpoints); the configuration's kinds map to registered names; an unknown name is refused
// with the registered ones; and reuse's staleness rule (same κ, H within the ratio, rate below
// reuse_rate, no corrector failure) decides when a kept J serves a pass.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "../support/test_chain.hpp"
#include "macrostep/corrector/jacobian_registry.hpp"
#include "macrostep/system/chain_system.hpp"

namespace macrostep {
namespace {

using corrector::JacobianRegistry;
using corrector::JacobianTraits;

TEST(JacobianRegistry, BuiltInsAreRegisteredByTheirNamesWithTheirTraits) {
  const auto& registry = JacobianRegistry::instance();
  std::vector<std::string> names;
  for (const auto& e : registry.entries()) {
    names.push_back(e.name);
    EXPECT_FALSE(e.description.empty()) << e.name;
  }
  ASSERT_GE(names.size(), 5u);
  names.resize(5);
  EXPECT_EQ(names, (std::vector<std::string>{"fd", "sap", "reuse", "quasi-newton", "heun"}));

  const auto t = [](const char* name) { return corrector::jacobian_traits(name); };
  EXPECT_TRUE(t("fd").perturbed_runs && t("fd").constraints && t("fd").feedthrough &&
              t("fd").checkpoint);
  EXPECT_FALSE(t("sap").perturbed_runs || t("sap").constraints || t("sap").feedthrough);
  EXPECT_TRUE(t("sap").checkpoint);
  EXPECT_TRUE(t("reuse").perturbed_runs && t("reuse").constraints && t("reuse").feedthrough);
  EXPECT_FALSE(t("reuse").checkpoint);
  EXPECT_TRUE(t("quasi-newton").perturbed_runs && t("quasi-newton").feedthrough);
  EXPECT_FALSE(t("quasi-newton").constraints || t("quasi-newton").checkpoint);
  EXPECT_FALSE(t("heun").perturbed_runs || t("heun").feedthrough);
  EXPECT_TRUE(t("heun").constraints && t("heun").checkpoint);
  EXPECT_THROW(t("frozen"), std::invalid_argument);
}

TEST(JacobianRegistry, ConfigurationKindsMapToRegisteredNames) {
  using corrector::JacobianKind;
  for (const JacobianKind k :
       {JacobianKind::kFiniteDifference, JacobianKind::kSap, JacobianKind::kReuse,
        JacobianKind::kQuasiNewton, JacobianKind::kHeun}) {
    const char* name = corrector::jacobian_name(k);
    EXPECT_NE(JacobianRegistry::instance().find(name), nullptr) << name;
    EXPECT_EQ(corrector::parse_jacobian(name), k) << name;
  }
}

TEST(JacobianRegistry, OptionsNameARegisteredStrategy) {
  corrector::CorrectorOptions o;
  EXPECT_EQ(o.jacobian, "fd");
  for (const char* name : {"fd", "sap", "reuse", "quasi-newton", "heun"}) {
    o.jacobian = name;
    EXPECT_NO_THROW(o.validate()) << name;
  }
  o.jacobian = "frozen";
  try {
    o.validate();
    FAIL() << "an unregistered jacobian passed validate()";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("one of fd, sap, reuse, quasi-newton or heun"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(JacobianRegistry::instance().make("frozen", o), std::invalid_argument);
}

TEST(JacobianRegistry, NamesByTraitFollowTheRegistrationOrder) {
  const auto& registry = JacobianRegistry::instance();
  EXPECT_EQ(registry.names_where([](const JacobianTraits& t) { return t.constraints; }),
            "fd, reuse or heun");
  EXPECT_EQ(registry.names_where([](const JacobianTraits& t) { return !t.feedthrough; }, "and"),
            "sap and heun");
  EXPECT_EQ(registry.names_where([](const JacobianTraits&) { return false; }), "");
}

TEST(JacobianRegistry, RegistrationNeedsAFreshNameAndAFactory) {
  auto& registry = JacobianRegistry::instance();
  const auto fd = [](const corrector::CorrectorOptions& o) {
    return JacobianRegistry::instance().make("fd", o);
  };
  EXPECT_THROW(registry.add("fd", "again", fd), std::logic_error);
  EXPECT_THROW(registry.add("", "no name", fd), std::logic_error);
  EXPECT_THROW(registry.add("no-factory", "none", {}), std::logic_error);
  EXPECT_EQ(registry.find("no-factory"), nullptr);
}

// Reuse keeps the J of a perturbed pass for passes of the same κ and an H within
// reuse_step_ratio; a slow rate or a corrector failure makes it stale.
TEST(ReuseJacobian, AKeptJacobianServesTheSameKappaAndANearStepSize) {
  const auto sys = system::make_chain_system(testing::linear_two_mass(), {0, 1, 2});
  corrector::CorrectorOptions options;
  options.jacobian = "reuse";
  options.reuse_rate = 0.25;
  options.reuse_step_ratio = 2.0;
  const auto reuse = JacobianRegistry::instance().make("reuse", options);
  reuse->start(sys);

  control::StepPlan plan;
  plan.t_begin = 0.0;
  plan.t_end = 1e-3;
  plan.kappa = 1;
  EXPECT_TRUE(reuse->wants_perturbed_runs(plan));  // nothing kept yet

  // One pass with a perturbed run per input: outputs move by 1e-6 per unit of the input.
  polynomials::CouplingHistory history(sys.coupling_count());
  history.push(0.0, sys.initial_couplings());
  executors::PassOutcome outcome;
  std::vector<std::vector<double>> y(sys.subsystem_count());
  outcome.subsystems.resize(sys.subsystem_count());
  for (std::size_t i = 0; i < sys.subsystem_count(); ++i) {
    y[i].assign(sys.subsystem(i).output_size(), 0.5);
    outcome.subsystems[i].nominal.outputs = y[i];
    for (std::size_t c = 0; c < sys.feed_channels(i).size(); ++c) {
      executors::RunOutcome extra;
      extra.outputs = y[i];
      for (double& v : extra.outputs) v += 1e-7;
      outcome.subsystems[i].extra.push_back(extra);
    }
  }
  const std::vector<double> perturbation(sys.coupling_count(), 0.1), image(sys.coupling_count());
  std::vector<double> residual(sys.coupling_count(), 1.0), s(sys.coupling_count(), 0.0);
  reuse->begin_attempt({plan, history, {}});
  ASSERT_TRUE(
      reuse->next_iterate({plan, history, outcome, true, perturbation, y, image}, residual, s));
  EXPECT_EQ(reuse->evaluations(), 1);
  EXPECT_NE(s[0], 0.0);

  EXPECT_FALSE(reuse->wants_perturbed_runs(plan));
  control::StepPlan other = plan;
  other.t_end = 1.9e-3;  // H within 2x
  EXPECT_FALSE(reuse->wants_perturbed_runs(other));
  other.t_end = 0.6e-3;
  EXPECT_FALSE(reuse->wants_perturbed_runs(other));
  other.t_end = 2.1e-3;  // beyond 2x
  EXPECT_TRUE(reuse->wants_perturbed_runs(other));
  other.t_end = 0.4e-3;
  EXPECT_TRUE(reuse->wants_perturbed_runs(other));
  other = plan;
  other.kappa = 2;
  EXPECT_TRUE(reuse->wants_perturbed_runs(other));

  // A pass without perturbed runs uses the kept J and counts no evaluation.
  residual.assign(residual.size(), 1.0);
  ASSERT_TRUE(
      reuse->next_iterate({plan, history, outcome, false, perturbation, y, image}, residual, s));
  EXPECT_EQ(reuse->evaluations(), 1);
  reuse->observe_rate(0.2);
  EXPECT_FALSE(reuse->wants_perturbed_runs(plan));
  reuse->observe_rate(0.25);  // too slow: stale, and a pass without perturbed runs cannot step
  EXPECT_TRUE(reuse->wants_perturbed_runs(plan));
  EXPECT_FALSE(
      reuse->next_iterate({plan, history, outcome, false, perturbation, y, image}, residual, s));

  ASSERT_TRUE(
      reuse->next_iterate({plan, history, outcome, true, perturbation, y, image}, residual, s));
  EXPECT_FALSE(reuse->wants_perturbed_runs(plan));
  reuse->end_attempt(false);
  EXPECT_FALSE(reuse->wants_perturbed_runs(plan));
  reuse->end_attempt(true);  // a corrector failure: the next attempt starts afresh
  EXPECT_TRUE(reuse->wants_perturbed_runs(plan));
}

}  // namespace
}  // namespace macrostep

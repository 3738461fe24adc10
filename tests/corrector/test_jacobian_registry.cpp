// The interface-Jacobian registry and strategies (runtime/corrector/jacobian_registry.hpp,
// jacobian_strategy.hpp): the built-in variants are registered under the names users write,
// with the traits that settings and checks rely on (perturbed runs, constraints, feed-through,
// checkpoints); the configuration's kinds map to registered names; an unknown name is refused
// with the registered ones; and reuse's staleness rule (same κ, H within the ratio, rate below
// reuse_rate, no corrector failure) decides when a kept J serves a pass; Broyden's update of the
// sensitivities (NewtonMatrix::secant_update) meets its secant condition, leaves the orthogonal
// directions alone and skips a block that a pair contradicts; a kept J travels in its exported
// state.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "../support/test_chain.hpp"
#include "macrostep/corrector/jacobian_registry.hpp"
#include "macrostep/corrector/newton_matrix.hpp"
#include "macrostep/system/chain_system.hpp"

namespace macrostep {
namespace {

using corrector::JacobianRegistry;
using corrector::JacobianTraits;

// T_N = 0, H = 1e-3 s, κ = 1, and a history of the system's initial couplings.
struct StepAt {
  explicit StepAt(const system::CoupledSystem& sys) : history(sys.coupling_count()) {
    plan.t_begin = 0.0;
    plan.t_end = 1e-3;
    plan.kappa = 1;
    history.push(0.0, sys.initial_couplings());
  }
  control::StepPlan plan;
  polynomials::CouplingHistory history;
};

// A pass whose nominal outputs are 0.5 everywhere (into y) and whose perturbed run c of subsystem
// i moves output o by shift(o, c).
template <class Shift>
executors::PassOutcome perturbed_pass(const system::CoupledSystem& sys,
                                      std::vector<std::vector<double>>& y, Shift shift) {
  executors::PassOutcome outcome;
  outcome.subsystems.resize(sys.subsystem_count());
  y.assign(sys.subsystem_count(), {});
  for (std::size_t i = 0; i < sys.subsystem_count(); ++i) {
    y[i].assign(sys.subsystem(i).output_size(), 0.5);
    outcome.subsystems[i].nominal.outputs = y[i];
    for (std::size_t c = 0; c < sys.feed_channels(i).size(); ++c) {
      executors::RunOutcome extra;
      extra.outputs = y[i];
      for (std::size_t o = 0; o < extra.outputs.size(); ++o) extra.outputs[o] += shift(o, c);
      outcome.subsystems[i].extra.push_back(extra);
    }
  }
  return outcome;
}

TEST(JacobianRegistry, BuiltInsAreRegisteredByTheirNamesWithTheirTraits) {
  const auto& registry = JacobianRegistry::instance();
  std::vector<std::string> names;
  for (const auto& e : registry.entries()) {
    names.push_back(e.name);
    EXPECT_FALSE(e.description.empty()) << e.name;
  }
  ASSERT_GE(names.size(), 6u);
  names.resize(6);
  EXPECT_EQ(names,
            (std::vector<std::string>{"fd", "sap", "reuse", "quasi-newton", "heun", "broyden"}));

  const auto t = [](const char* name) { return corrector::jacobian_traits(name); };
  EXPECT_TRUE(t("fd").perturbed_runs && t("fd").constraints && t("fd").feedthrough &&
              t("fd").checkpoint);
  EXPECT_FALSE(t("sap").perturbed_runs || t("sap").constraints || t("sap").feedthrough);
  EXPECT_TRUE(t("sap").checkpoint);
  EXPECT_TRUE(t("reuse").perturbed_runs && t("reuse").constraints && t("reuse").feedthrough &&
              t("reuse").checkpoint);
  EXPECT_TRUE(t("quasi-newton").perturbed_runs && t("quasi-newton").feedthrough);
  EXPECT_FALSE(t("quasi-newton").constraints || t("quasi-newton").checkpoint);
  EXPECT_FALSE(t("heun").perturbed_runs || t("heun").feedthrough);
  EXPECT_TRUE(t("heun").constraints && t("heun").checkpoint);
  EXPECT_TRUE(t("broyden").perturbed_runs && t("broyden").constraints && t("broyden").feedthrough);
  EXPECT_TRUE(t("broyden").checkpoint);
  EXPECT_FALSE(t("broyden").exact);
  EXPECT_THROW(t("frozen"), std::invalid_argument);
}

TEST(JacobianRegistry, ConfigurationKindsMapToRegisteredNames) {
  using corrector::JacobianKind;
  for (const JacobianKind k :
       {JacobianKind::kFiniteDifference, JacobianKind::kSap, JacobianKind::kReuse,
        JacobianKind::kQuasiNewton, JacobianKind::kHeun, JacobianKind::kBroyden}) {
    const char* name = corrector::jacobian_name(k);
    EXPECT_NE(JacobianRegistry::instance().find(name), nullptr) << name;
    EXPECT_EQ(corrector::parse_jacobian(name), k) << name;
  }
}

TEST(JacobianRegistry, OptionsNameARegisteredStrategy) {
  corrector::CorrectorOptions o;
  EXPECT_EQ(o.jacobian, "fd");
  for (const char* name : {"fd", "sap", "reuse", "quasi-newton", "heun", "broyden"}) {
    o.jacobian = name;
    EXPECT_NO_THROW(o.validate()) << name;
  }
  o.jacobian = "frozen";
  try {
    o.validate();
    FAIL() << "an unregistered jacobian passed validate()";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("one of fd, sap, reuse, quasi-newton, heun or broyden"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(JacobianRegistry::instance().make("frozen", o), std::invalid_argument);
}

TEST(JacobianRegistry, NamesByTraitFollowTheRegistrationOrder) {
  const auto& registry = JacobianRegistry::instance();
  EXPECT_EQ(registry.names_where([](const JacobianTraits& t) { return t.constraints; }),
            "fd, reuse, heun or broyden");
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

  const StepAt step(sys);
  const auto& plan = step.plan;
  const auto& history = step.history;
  EXPECT_TRUE(reuse->wants_perturbed_runs(plan));  // nothing kept yet

  // One pass with a perturbed run per input: outputs move by 1e-6 per unit of the input.
  std::vector<std::vector<double>> y;
  const executors::PassOutcome outcome =
      perturbed_pass(sys, y, [](std::size_t, std::size_t) { return 1e-7; });
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

// Three masses in three subsystems: the middle one has two inputs (λ_1, λ_2), so a secant pair
// fixes one direction of its 4 × 2 block and must leave the other one alone.
TEST(BroydenUpdate, MeetsTheSecantConditionAndKeepsTheOrthogonalDirection) {
  const auto sys = system::make_chain_system(testing::test_chain(3), {0, 1, 2, 3});
  ASSERT_EQ(sys.subsystem(1).input_size(), 2u);
  corrector::NewtonMatrix matrix(sys);
  auto& S = matrix.sensitivities();
  for (std::size_t i = 0; i < sys.subsystem_count(); ++i) {
    for (std::size_t o = 0; o < sys.subsystem(i).output_size(); ++o) {
      for (std::size_t c = 0; c < S.inputs(i); ++c) S.at(i, o, c) = 1e-3 * (o + 1.0) * (c + 2.0);
    }
  }
  const auto old = S;

  const StepAt step(sys);
  const auto& plan = step.plan;
  const auto& history = step.history;
  executors::PassOutcome outcome;
  const std::vector<double> perturbation{0.1, 0.4}, image(sys.coupling_count());
  const std::vector<double> s0{0.0, 0.0}, s1{1.0, 0.5};
  // The pair: outputs move 1.5x what the kept blocks predict (within the trust bound).
  std::vector<std::vector<double>> y0(sys.subsystem_count()), y1(sys.subsystem_count());
  for (std::size_t i = 0; i < sys.subsystem_count(); ++i) {
    y0[i].assign(sys.subsystem(i).output_size(), 0.5);
    y1[i] = y0[i];
    for (std::size_t o = 0; o < y1[i].size(); ++o) {
      for (std::size_t c = 0; c < S.inputs(i); ++c) {
        const std::size_t f = sys.input_feeds(i, c)[0];
        y1[i][o] += 1.5 * old.at(i, o, c) * (s1[f] - s0[f]);
      }
    }
  }
  const corrector::PassView pass{plan, history, outcome, false, perturbation, y1, image};
  const auto r = matrix.secant_update(pass, y0, s0, s1, 0.5);
  EXPECT_EQ(r.updated, 3u);
  EXPECT_TRUE(r.usable);
  EXPECT_TRUE(matrix.valid());
  for (std::size_t i = 0; i < sys.subsystem_count(); ++i) {
    for (std::size_t o = 0; o < y1[i].size(); ++o) {
      double mapped = 0.0;
      for (std::size_t c = 0; c < S.inputs(i); ++c) {
        const std::size_t f = sys.input_feeds(i, c)[0];
        mapped += S.at(i, o, c) * (s1[f] - s0[f]);
      }
      EXPECT_NEAR(mapped, y1[i][o] - y0[i][o], 1e-15) << i << " " << o;
    }
  }
  // The middle block on a v orthogonal to Δs = (1, 0.5) in the D⁻² product, D = (0.1, 0.4):
  // v₁ · 1 / 0.1² + v₂ · 0.5 / 0.4² = 0.
  const double v1 = 1.0, v2 = -v1 / 0.01 * 0.16 / 0.5;
  for (std::size_t o = 0; o < 4; ++o) {
    EXPECT_NEAR(S.at(1, o, 0) * v1 + S.at(1, o, 1) * v2,
                old.at(1, o, 0) * v1 + old.at(1, o, 1) * v2, 1e-15)
        << o;
  }

  // A pair that moves the other way than predicted contradicts the blocks: none changes.
  const auto kept = S;
  std::vector<std::vector<double>> y2 = y0;
  for (std::size_t i = 0; i < y2.size(); ++i) {
    for (std::size_t o = 0; o < y2[i].size(); ++o) y2[i][o] -= y1[i][o] - y0[i][o];
  }
  const corrector::PassView back{plan, history, outcome, false, perturbation, y2, image};
  EXPECT_EQ(matrix.secant_update(back, y0, s0, s1, 0.5).updated, 0u);
  for (std::size_t i = 0; i < sys.subsystem_count(); ++i) {
    for (std::size_t o = 0; o < y1[i].size(); ++o) {
      for (std::size_t c = 0; c < S.inputs(i); ++c) EXPECT_EQ(S.at(i, o, c), kept.at(i, o, c));
    }
  }
  // No change of the inputs: no pair.
  EXPECT_EQ(matrix.secant_update(pass, y0, s1, s1, 0.5).updated, 0u);
}

// A kept J leaves with export_state() and comes back with import_state() into a fresh strategy
// of the same system: its next Newton step is the same to the bit (checkpoints rely on it). What
// does not fit is refused; fd keeps nothing.
TEST(KeptJacobian, ExportedStateGivesTheSameNewtonStep) {
  const auto sys = system::make_chain_system(testing::test_chain(3), {0, 1, 2, 3});
  const StepAt step(sys);
  const auto& plan = step.plan;
  const auto& history = step.history;
  std::vector<std::vector<double>> y;
  const executors::PassOutcome outcome = perturbed_pass(
      sys, y, [](std::size_t o, std::size_t c) { return 1e-7 * static_cast<double>(o + c + 1); });
  const std::vector<double> perturbation(sys.coupling_count(), 0.1), image(sys.coupling_count());
  for (const char* name : {"reuse", "broyden"}) {
    SCOPED_TRACE(name);
    corrector::CorrectorOptions options;
    options.jacobian = name;
    const auto a = JacobianRegistry::instance().make(name, options);
    a->start(sys);
    std::vector<double> residual(sys.coupling_count(), 1.0), s(sys.coupling_count(), 0.0);
    a->begin_attempt({plan, history, {}});
    ASSERT_TRUE(
        a->next_iterate({plan, history, outcome, true, perturbation, y, image}, residual, s));
    a->end_attempt(false);
    const auto state = a->export_state();
    ASSERT_FALSE(state.empty());

    const auto b = JacobianRegistry::instance().make(name, options);
    b->start(sys);
    EXPECT_TRUE(b->wants_perturbed_runs(plan));
    b->import_state(state);
    EXPECT_FALSE(b->wants_perturbed_runs(plan));
    std::vector<double> ra(sys.coupling_count(), 0.3), sa(sys.coupling_count(), 2.0);
    std::vector<double> rb = ra, sb = sa;
    a->begin_attempt({plan, history, {}});
    b->begin_attempt({plan, history, {}});
    ASSERT_TRUE(a->next_iterate({plan, history, outcome, false, perturbation, y, image}, ra, sa));
    ASSERT_TRUE(b->next_iterate({plan, history, outcome, false, perturbation, y, image}, rb, sb));
    for (std::size_t k = 0; k < sa.size(); ++k) EXPECT_EQ(sa[k], sb[k]) << k;
    EXPECT_EQ(b->export_state(), a->export_state());

    auto bad = state;
    bad[1].pop_back();
    EXPECT_THROW(b->import_state(bad), std::invalid_argument);
    EXPECT_THROW(b->import_state({{1.0}}), std::invalid_argument);
  }
  const auto fd = JacobianRegistry::instance().make("fd", corrector::CorrectorOptions{});
  fd->start(sys);
  EXPECT_TRUE(fd->export_state().empty());
  EXPECT_NO_THROW(fd->import_state({}));
  EXPECT_THROW(fd->import_state({{0.0}}), std::invalid_argument);
}

}  // namespace
}  // namespace macrostep

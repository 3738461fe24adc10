// The command line takes each concept's names from the concept's one table: every name of the
// table is accepted (the next check, a wrong --order or --checkpoint-every, is then what fails),
// and a wrong name is refused before any work with the table's names as the allowed ones.
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "binary_fixture.hpp"
#include "macrostep/config/run_config.hpp"
#include "macrostep/corrector/jacobian_registry.hpp"
#include "macrostep/model/name_table.hpp"

namespace {

using macrostep::testing::Outcome;
namespace config = macrostep::config;
namespace control = macrostep::control;
namespace runner = macrostep::runner;

constexpr std::string_view kBadOrder =
    "macrostep: --order must be auto or an integer 0..5 (got 7)\n";

class VocabularyCli : public macrostep::testing::BinaryTest {
 protected:
  // `run c.toml OPTION NAME --order 7`: NAME accepted when --order is what fails.
  void expect_accepted(const std::string& option, std::string_view name) const {
    const Outcome o = macrostep("run c.toml " + option + " " + std::string(name) + " --order 7");
    EXPECT_EQ(o.status, 2) << option << " " << name;
    EXPECT_EQ(o.err, kBadOrder) << option << " " << name;
  }
  void expect_refused(const std::string& option, const std::string& message) const {
    const Outcome o = macrostep("run c.toml " + option + " --output r.csv");
    EXPECT_EQ(o.status, 2) << option;
    EXPECT_EQ(o.err, "macrostep: " + message + "\n") << option;
    EXPECT_EQ(o.out, "") << option;
  }
};

TEST_F(VocabularyCli, SchemesComeFromTheSchemeTable) {
  for (const auto name : config::scheme_names()) expect_accepted("--scheme", name);
  expect_refused("--scheme jacobi", "--scheme 'jacobi' is not a scheme; allowed: " +
                                        macrostep::model::joined_names(config::scheme_names()));
}

TEST_F(VocabularyCli, JacobiansComeFromTheRegistry) {
  const auto names = macrostep::corrector::JacobianRegistry::instance().names();
  for (const auto name : names) expect_accepted("--jacobian", name);
  expect_refused("--jacobian numeric",
                 "--jacobian 'numeric' is not an interface Jacobian; allowed: " +
                     macrostep::model::joined_names(names));
}

TEST_F(VocabularyCli, EstimatorsComeFromTheEstimatorTable) {
  for (const auto name : control::estimator_names()) expect_accepted("--estimator", name);
  expect_refused("--estimator exXX",
                 "--estimator 'exXX' is not an estimator name (allowed: none, exLE, exMD, exCV "
                 "(explicit), imMD, imCV (implicit))");
}

TEST_F(VocabularyCli, JumpHandlingsComeFromTheJumpPolicyTable) {
  // --jump-handling is read after --order: a wrong --checkpoint-every fails after it instead.
  for (const auto name : runner::jump_policy_names()) {
    const Outcome o =
        macrostep("run c.toml --jump-handling " + std::string(name) + " --checkpoint-every x");
    EXPECT_EQ(o.status, 2) << name;
    EXPECT_EQ(o.err.find("--jump-handling"), std::string::npos) << name << ": " << o.err;
  }
  expect_refused("--jump-handling drop",
                 "--jump-handling 'drop' is not a jump handling; allowed: " +
                     macrostep::model::joined_names(runner::jump_policy_names()));
}

TEST_F(VocabularyCli, ExecutorsComeFromTheExecutorTable) {
  for (const auto name : config::executor_names()) {
    if (name != config::to_string(config::ExecutorKind::kMpi)) {
      expect_accepted("--executor", name);
      continue;
    }
    // The bridge's name is known: outside mpirun it asks for an MPI job (or for the bridge).
    const Outcome o = macrostep("run c.toml --executor mpi --order 7");
    EXPECT_EQ(o.status, 2);
    EXPECT_EQ(o.err.rfind("macrostep: --executor mpi", 0), 0U) << o.err;
  }
  expect_refused("--executor threads",
                 "--executor 'threads' is not an executor; allowed: " +
                     macrostep::model::joined_names(config::executor_names()) + " (under mpirun)");
}

}  // namespace

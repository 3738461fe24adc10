// A stiff coupling end to end (configs/s-5.5.toml, the study's corner m_1 = 1e-6 kg,
// d_c = 1e6 N s/m: time constant m_1/d_c = 1e-12 s against H_init = 1e-6 s): the explicit run
// cannot pass the error test at any H it can afford, and says that it is stability-limited, by
// how much, and that the implicit scheme is the one to use (docs/reference/commands.md, exit
// status 1). A short end time keeps it cheap: the run stops at t = 0.
#include <gtest/gtest.h>

#include <string>

#include "binary_fixture.hpp"

namespace macrostep::testing {
namespace {

class StiffCoupling : public BinaryTest {};

TEST_F(StiffCoupling, ExplicitRunSaysItIsStabilityLimitedAndNamesTheImplicitScheme) {
  const std::string config = std::string(MACROSTEP_SOURCE_DIR) + "/configs/s-5.5.toml";
  const Outcome o = macrostep("run '" + config + "' --stop-time 2e-3 --output ex.csv");
  EXPECT_EQ(o.status, 1) << o.err;
  EXPECT_NE(o.err.find("fell below H_min"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("stability-limited"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("time constant 1e-12 s"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("use --scheme implicit"), std::string::npos) << o.err;
}

}  // namespace
}  // namespace macrostep::testing

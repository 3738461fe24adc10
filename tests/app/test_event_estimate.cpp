// The explicit estimators' premise check end to end (docs/design/methods.md §5.3, D-52) on
// configs/k-5.2-m3.toml, seed 000's two-mass oscillator whose first body hits a penalty contact
// at t = 0.0171 s (its velocity flips from about +127 to -126 m/s within 1e-4 s). exMD's
// comparison extrapolates the coupling force like the nominal run, so both miss the contact
// alike and the estimate stays small while the second body is driven with the wrong force; the
// check sees the force land thousands of times farther from u^pre than the comparison assumed
// and raises the estimate. Measured against the monolithic reference (an independent single
// IDA of the whole chain) over the 10 ms after the contact: x_2 within 2.5e-5 m with the check,
// 0.062 m without it (the seeds' estimator).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include <nlohmann/json.hpp>

#include "binary_fixture.hpp"
#include "macrostep/output/csv.hpp"

namespace macrostep::testing {
namespace {

class EventEstimate : public BinaryTest {
 protected:
  static std::string config() {
    return std::string(MACROSTEP_SOURCE_DIR) + "/configs/k-5.2-m3.toml";
  }

  // The largest |result − reference| of column `name` over the rows with t in [from, to]; the
  // reference is computed at the result's own rows.
  double max_error_after(const std::string& result, const std::string& name, double from,
                         double to) {
    const std::string ref = "ref_" + result;
    const Outcome r = macrostep("reference '" + config() + "' --at " + result + " --output " + ref);
    EXPECT_EQ(r.status, 0) << r.err;
    const auto a = macrostep::output::read_csv(path(result));
    const auto b = macrostep::output::read_csv(path(ref));
    EXPECT_EQ(a.time.size(), b.time.size());
    const auto column = [&](const macrostep::output::CsvTable& t) {
      const auto it = std::find(t.columns.begin(), t.columns.end(), name);
      EXPECT_NE(it, t.columns.end()) << name;
      return static_cast<std::size_t>(it - t.columns.begin());
    };
    const std::size_t ca = column(a), cb = column(b);
    double worst = 0.0;
    for (std::size_t k = 0; k < std::min(a.time.size(), b.time.size()); ++k) {
      if (a.time[k] < from || a.time[k] > to) continue;
      worst = std::max(worst, std::abs(a.values[ca][k] - b.values[cb][k]));
    }
    return worst;
  }
};

TEST_F(EventEstimate, ExmdWithThePremiseCheckFollowsAContactInsideASubsystem) {
  const std::string common = "run '" + config() + "' --executor inprocess --stop-time 0.03";
  const Outcome on = macrostep(common + " --output on.csv");
  ASSERT_EQ(on.status, 0) << on.err;
  const Outcome off = macrostep(common + " --set cosim.prediction_ratio_limit=0 --output off.csv");
  ASSERT_EQ(off.status, 0) << off.err;

  const auto meta_on = nlohmann::json::parse(read_file("on.json"));
  EXPECT_EQ(meta_on.at("cosim").at("prediction_ratio_limit").get<double>(), 10.0);
  EXPECT_GE(meta_on.at("statistics").at("estimate_raises").at("attempts").get<long>(), 1);
  EXPECT_NE(on.out.find("explicit estimates raised"), std::string::npos) << on.out;
  const auto meta_off = nlohmann::json::parse(read_file("off.json"));
  EXPECT_FALSE(meta_off.at("statistics").contains("estimate_raises"));

  for (const char* name : {"x_2", "v_2"}) {
    const double with_check = max_error_after("on.csv", name, 0.02, 0.03);
    const double without = max_error_after("off.csv", name, 0.02, 0.03);
    EXPECT_LT(with_check, without / 100.0) << name << ": " << with_check << " vs " << without;
  }
  EXPECT_LT(max_error_after("on.csv", "x_2", 0.02, 0.03), 1e-3);
}

TEST_F(EventEstimate, TheLimitIsRefusedWhereNoExplicitEstimateRuns) {
  const Outcome o = macrostep("run '" + config() +
                              "' --scheme implicit --estimator imMD "
                              "--set cosim.prediction_ratio_limit=5 --output im.csv");
  EXPECT_EQ(o.status, 2) << o.err;
  EXPECT_NE(o.err.find("applies only to the explicit estimators exLE and exMD"), std::string::npos)
      << o.err;
  const Outcome small =
      macrostep("run '" + config() + "' --set cosim.prediction_ratio_limit=0.5 --output s.csv");
  EXPECT_EQ(small.status, 2) << small.err;
  EXPECT_NE(small.err.find("must be 0 (off) or >= 1"), std::string::npos) << small.err;
}

// A change after a stretch of equal values that no subsystem scheduled: exMD's comparison equals
// the nominal run (both extrapolate the constant), the estimate is 0 and no raise can scale it;
// the coupling variables' miss judges those attempts instead (D-52), so the step over the change
// is repeated shorter, and the run says how often (configs/sources.toml's 24 V step made as
// steep as 0.1 us, exMD instead of the file's fixed H). The same step as a jump (width 0) is a
// time event, a macro point (methods.md §3.3), and the steps after it still meet such attempts
// where the system leaves rest; the file's own run (fixed H) has none.
TEST_F(EventEstimate, AChangeAfterEqualValuesIsJudgedByTheCouplingVariablesMiss) {
  const std::string sources = std::string(MACROSTEP_SOURCE_DIR) + "/configs/sources.toml";
  const std::string exmd = "' --executor inprocess --estimator exMD --stop-time 0.3 ";
  const Outcome steep =
      macrostep("run '" + sources + exmd + "--set subsystem.supply.width=1e-7 --output steep.csv");
  ASSERT_EQ(steep.status, 0) << steep.err;
  EXPECT_NE(steep.out.find("where the coupling variables missed their prediction by more than "
                           "their tolerance: judged by that miss instead"),
            std::string::npos)
      << steep.out;
  const auto raises =
      nlohmann::json::parse(read_file("steep.json"))["statistics"]["estimate_raises"];
  EXPECT_GT(raises.value("unseen_misses", 0), 0) << raises;
  EXPECT_LT(raises.value("first_unseen_at", 1.0), 0.1) << raises;
  // Each such attempt failed the error test: as many rejections at least.
  const auto statistics = nlohmann::json::parse(read_file("steep.json"))["statistics"];
  EXPECT_GE(statistics.value("rejected", 0), raises.value("unseen_misses", 0)) << statistics;
  const Outcome fixed =
      macrostep("run '" + sources + "' --executor inprocess --stop-time 0.3 --output fixed.csv");
  ASSERT_EQ(fixed.status, 0) << fixed.err;
  EXPECT_EQ(fixed.out.find("judged by that miss"), std::string::npos) << fixed.out;
}

}  // namespace
}  // namespace macrostep::testing

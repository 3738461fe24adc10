// `macrostep compare RESULT REFERENCE` with NaN or an infinity in the result: bad data, exit 2
// with the file, the column and the time, and no NRMSE printed; and the note about a reference
// too coarse to interpolate to the result's times.
#include <gtest/gtest.h>

#include <string>

#include "binary_fixture.hpp"

namespace {

using macrostep::testing::Outcome;

class CompareNonFinite : public macrostep::testing::BinaryTest {};

TEST_F(CompareNonFinite, ANanInTheResultIsBadData) {
  write_file("ref.csv", "time,x_1\n0,0\n1,1\n2,2\n");
  write_file("res.csv", "time,x_1\n0,0\n1,nan\n2,2\n");
  const Outcome o = macrostep("compare res.csv ref.csv");
  EXPECT_EQ(o.status, 2);
  EXPECT_EQ(o.err,
            "macrostep compare: res.csv: the result's column 'x_1' is nan at row 2 (t = 1): a "
            "result must be finite\n");
  EXPECT_EQ(o.out.find("NRMSE"), std::string::npos) << o.out;
}

TEST_F(CompareNonFinite, AnInfinityInTheResultIsBadData) {
  write_file("ref.csv", "time,x_1\n0,0\n1,1\n2,2\n");
  write_file("res.csv", "time,x_1\n0,0\n1,1\n2,inf\n");
  const Outcome o = macrostep("compare res.csv ref.csv");
  EXPECT_EQ(o.status, 2);
  EXPECT_EQ(o.err,
            "macrostep compare: res.csv: the result's column 'x_1' is inf at row 3 (t = 2): a "
            "result must be finite\n");
}

// One result row has no deviation from its mean: refused for what it is, not for a constant
// reference.
TEST_F(CompareNonFinite, AResultOfOneRowIsRefused) {
  write_file("ref.csv", "time,x_1\n0,0\n1,1\n2,2\n");
  write_file("res.csv", "time,x_1\n1,1\n");
  const Outcome o = macrostep("compare res.csv ref.csv");
  EXPECT_EQ(o.status, 2);
  EXPECT_EQ(o.err,
            "macrostep compare: the result has one row (t = 1); an NRMSE needs two or more\n");
}

// A result with rows between the reference's: compare interpolates and says that the reference's
// interpolation error enters the NRMSE, unless the reference has ten times the result's rows.
TEST_F(CompareNonFinite, ACoarseInterpolatedReferenceIsNoted) {
  std::string result = "time,x_1\n", dense = result;
  for (int k = 0; k <= 8; ++k) result += std::to_string(0.125 * k) + "," + std::to_string(k) + "\n";
  for (int k = 0; k <= 100; ++k) dense += std::to_string(0.01 * k) + "," + std::to_string(k) + "\n";
  write_file("res.csv", result);
  write_file("coarse.csv", "time,x_1\n0,0\n0.5,4\n1,8\n");
  write_file("dense.csv", dense);
  const Outcome coarse = macrostep("compare res.csv coarse.csv");
  ASSERT_EQ(coarse.status, 0) << coarse.err;
  EXPECT_NE(coarse.out.find("note: the reference has 3 rows for the result's 9 times, and its "
                            "interpolation error enters the NRMSE; write it at the result's "
                            "times (macrostep reference CONFIG --at res.csv)"),
            std::string::npos)
      << coarse.out;
  const Outcome fine = macrostep("compare res.csv dense.csv");
  ASSERT_EQ(fine.status, 0) << fine.err;
  EXPECT_EQ(fine.out.find("note:"), std::string::npos) << fine.out;
  const Outcome same = macrostep("compare res.csv res.csv");  // nothing interpolated
  EXPECT_EQ(same.out.find("note:"), std::string::npos) << same.out;
}

}  // namespace

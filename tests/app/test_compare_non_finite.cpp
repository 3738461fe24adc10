// `macrostep compare RESULT REFERENCE` with NaN or an infinity in the result: bad data, exit 2
// with the file, the column and the time, and no NRMSE printed.
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

}  // namespace

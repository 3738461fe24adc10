// NaN or an infinity in the result, not only in the reference, makes the NRMSE meaningless:
// compute_nrmse refuses both, naming the file, the column, the row and the time.
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "macrostep/output/nrmse.hpp"

namespace {

using macrostep::output::compute_nrmse;
using macrostep::output::CsvTable;
using macrostep::output::OutputError;

CsvTable table(std::vector<double> time, std::vector<std::vector<double>> values) {
  return {{"x_1", "v_1"}, std::move(time), std::move(values), {}, {}};
}

std::string refusal(const CsvTable& result, const CsvTable& reference,
                    const macrostep::output::NrmseFiles& files) {
  try {
    (void)compute_nrmse(result, reference, files);
  } catch (const OutputError& e) {
    return e.what();
  }
  return "no error";
}

const double kNan = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();
const CsvTable kReference = table({0, 1, 2}, {{0, 1, 2}, {1, 0, 1}});

TEST(NrmseFinite, ANanInTheResultIsNamedWithFileColumnAndTime) {
  const CsvTable result = table({0, 1, 2}, {{0, 1, 2}, {1, kNan, 1}});
  EXPECT_EQ(refusal(result, kReference, {"out.csv", "ref.csv"}),
            "out.csv: the result's column 'v_1' is nan at row 2 (t = 1): a result must be finite");
  EXPECT_EQ(refusal(result, kReference, {}),
            "the result's column 'v_1' is nan at row 2 (t = 1): a result must be finite");
}

TEST(NrmseFinite, InfinitiesAndNonFiniteTimesAreRefusedInEitherTable) {
  const CsvTable inf = table({0, 1, 2}, {{0, 1, -kInf}, {1, 0, 1}});
  EXPECT_EQ(refusal(inf, kReference, {"out.csv", "ref.csv"}),
            "out.csv: the result's column 'x_1' is -inf at row 3 (t = 2): a result must be finite");
  EXPECT_EQ(refusal(kReference, inf, {"out.csv", "ref.csv"}),
            "ref.csv: the reference's column 'x_1' is -inf at row 3 (t = 2): a reference must be "
            "finite");
  const CsvTable nan_time = table({0, kNan, 2}, {{0, 1, 2}, {1, 0, 1}});
  EXPECT_EQ(refusal(nan_time, kReference, {"out.csv", "ref.csv"}),
            "out.csv: the result has time nan at row 2: not a finite number");
}

TEST(NrmseFinite, FiniteTablesAreCompared) {
  const CsvTable result = table({0, 1, 2}, {{0, 1, 2}, {1, 0, 1}});
  EXPECT_EQ(compute_nrmse(result, kReference, {"out.csv", "ref.csv"}).norm, 0.0);
}

}  // namespace

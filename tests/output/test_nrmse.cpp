// NRMSE (seed 000 Eq. 5.1/5.2) against hand-computed values, and the reference interpolation
// against closed forms.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "macrostep/output/nrmse.hpp"

namespace {

using macrostep::output::compute_nrmse;
using macrostep::output::CsvTable;
using macrostep::output::interpolation_stencil;
using macrostep::output::NrmseReport;
using macrostep::output::OutputError;

CsvTable table(std::vector<double> time, std::vector<std::string> columns,
               std::vector<std::vector<double>> values) {
  return {std::move(columns), std::move(time), std::move(values), {}, {}};
}

// Rows weighted by time: times 0, 1, 3 weigh 0.5, 1.5, 1 (half of each interval next to a row).
// Reference 0, 2, 0: weighted mean (2·1.5)/3 = 1, weighted sum of squares about it
// 0.5 + 1.5 + 1 = 3; the result off by 1 in the first row: nrmse = sqrt(0.5/3). With equal
// weights: mean 2/3, sum of squares 8/3, nrmse = sqrt(3/8).
TEST(Nrmse, RowsWeightedByTimeMatchHandComputedValues) {
  using macrostep::output::RowWeights;
  const CsvTable reference = table({0, 1, 3}, {"x_1"}, {{0, 2, 0}});
  const CsvTable result = table({0, 1, 3}, {"x_1"}, {{1, 2, 0}});
  const NrmseReport timed = compute_nrmse(result, reference, {}, RowWeights::kTime);
  EXPECT_EQ(timed.weights, RowWeights::kTime);
  EXPECT_NEAR(timed.norm, std::sqrt(0.5 / 3.0), 1e-15);
  EXPECT_NEAR(compute_nrmse(result, reference).norm, std::sqrt(3.0 / 8.0), 1e-15);
}

// More rows where nothing changes (a variable-step run's short steps through a stretch that its
// error does not vary over) leave the time-weighted NRMSE as it is and change the row-weighted
// one: the rows at t = 1.5, 2 and 2.5 on [1, 3], where reference and result are constant.
TEST(Nrmse, RowsWeightedByTimeDoNotCountExtraRowsOfAConstantStretch) {
  using macrostep::output::RowWeights;
  const CsvTable reference = table({0, 1, 3, 4}, {"x_1"}, {{0, 2, 2, 0}});
  const CsvTable result = table({0, 1, 3, 4}, {"x_1"}, {{1, 2, 2, 0}});
  const CsvTable dense_reference =
      table({0, 1, 1.5, 2, 2.5, 3, 4}, {"x_1"}, {{0, 2, 2, 2, 2, 2, 0}});
  const CsvTable dense_result = table({0, 1, 1.5, 2, 2.5, 3, 4}, {"x_1"}, {{1, 2, 2, 2, 2, 2, 0}});
  const double sparse = compute_nrmse(result, reference, {}, RowWeights::kTime).norm;
  EXPECT_NEAR(compute_nrmse(dense_result, dense_reference, {}, RowWeights::kTime).norm, sparse,
              1e-15);
  EXPECT_GT(std::abs(compute_nrmse(dense_result, dense_reference).norm -
                     compute_nrmse(result, reference).norm),
            0.05);
}

TEST(Nrmse, MatchesHandComputedValues) {
  // x: ref 0 1 2 3 (mean 1.5, sum of squares about the mean 5), result off by 1 in the last
  //    row: nrmse = sqrt(1/5).
  // v: ref 1 -1 1 -1 (mean 0, 4), result off by 2 in the last row: nrmse = sqrt(4/4) = 1.
  // c: constant reference -> near-constant, measured by its largest difference 3. The
  //    reference lists its columns in another order and has one more (ignored).
  const CsvTable reference = table({0, 1, 2, 3}, {"extra", "v_1", "c_1", "x_1"},
                                   {{9, 9, 9, 8}, {1, -1, 1, -1}, {2, 2, 2, 2}, {0, 1, 2, 3}});
  const CsvTable result =
      table({0, 1, 2, 3}, {"x_1", "v_1", "c_1"}, {{0, 1, 2, 4}, {1, -1, 1, 1}, {2, 2, 2, 5}});
  const NrmseReport r = compute_nrmse(result, reference);
  ASSERT_EQ(r.variables.size(), 3U);
  EXPECT_EQ(r.varying(), 2U);
  EXPECT_EQ(r.variables[0].name, "x_1");
  EXPECT_DOUBLE_EQ(r.variables[0].nrmse, std::sqrt(0.2));
  EXPECT_EQ(r.variables[0].max_abs_difference, 1.0);
  EXPECT_EQ(r.variables[1].name, "v_1");
  EXPECT_DOUBLE_EQ(r.variables[1].nrmse, 1.0);
  EXPECT_EQ(r.variables[1].max_abs_difference, 2.0);
  EXPECT_EQ(r.variables[2].name, "c_1");
  EXPECT_TRUE(r.variables[2].near_constant);
  EXPECT_EQ(r.variables[2].max_abs_difference, 3.0);
  EXPECT_EQ(r.largest_nrmse().name, "v_1");
  ASSERT_NE(r.largest_near_constant_difference(), nullptr);
  EXPECT_EQ(r.largest_near_constant_difference()->name, "c_1");
  EXPECT_DOUBLE_EQ(r.norm, std::sqrt(1.2));
  EXPECT_FALSE(r.interpolated);
  EXPECT_EQ(r.time_points, 4U);
  EXPECT_DOUBLE_EQ(r.norm_of([](const std::string& n) { return n[0] == 'x'; }), std::sqrt(0.2));
}

// A reference whose range is at most 1e-9 of the variable's largest magnitude (in either
// table) has no spread to normalise by: rounding noise around 0 (a multiplier that the result
// moves to 1e-6), or a tiny ripple on a large offset. Measured by the difference, left out of
// the norm, whatever the other variables do; a range just above the bound is measured.
TEST(Nrmse, NearConstantReferencesAreMeasuredByTheirDifference) {
  const CsvTable reference = table({0, 1, 2, 3}, {"x", "mu", "offset", "small"},
                                   {{0, 1, 2, 3},
                                    {1e-24, -2e-24, 0.0, 1e-24},
                                    {5.0, 5.0 + 4e-9, 5.0, 5.0},
                                    {1.0, 1.0 + 2e-9, 1.0, 1.0}});
  const CsvTable result = table(
      {0, 1, 2, 3}, {"x", "mu", "offset", "small"},
      {{0, 1, 2, 4}, {0.0, 1e-6, -2e-6, 0.0}, {5.0, 5.0, 5.0, 5.0 + 1e-3}, {1.0, 1.0, 1.0, 1.0}});
  const NrmseReport r = compute_nrmse(result, reference);
  ASSERT_EQ(r.variables.size(), 4U);
  EXPECT_FALSE(r.variables[0].near_constant);
  EXPECT_TRUE(r.variables[1].near_constant);
  EXPECT_TRUE(std::isnan(r.variables[1].nrmse));
  EXPECT_DOUBLE_EQ(r.variables[1].max_abs_difference, 2e-6);
  EXPECT_DOUBLE_EQ(r.variables[1].reference_range, 3e-24);
  EXPECT_TRUE(r.variables[2].near_constant);  // 4e-9 <= 1e-9 * 5.001
  EXPECT_NEAR(r.variables[2].max_abs_difference, 1e-3, 1e-15);
  EXPECT_FALSE(r.variables[3].near_constant);  // 2e-9 > 1e-9 * (1 + 2e-9)
  EXPECT_EQ(r.varying(), 2U);
  EXPECT_EQ(r.largest_near_constant_difference()->name, "offset");
  EXPECT_DOUBLE_EQ(r.norm, std::hypot(r.variables[0].nrmse, r.variables[3].nrmse));
  // Only near-constant variables: the NRMSE is undefined.
  EXPECT_THROW(
      compute_nrmse(table({0, 1}, {"mu"}, {{0.0, 1.0}}), table({0, 1}, {"mu"}, {{1e-24, -1e-24}})),
      OutputError);
}

// A multiplier that should stay zero, which the reference holds at rounding level (6e-12 m/s)
// beside velocities of about 1 m/s, while the co-simulation moves it to 1e-5 m/s: against its
// own magnitude its range is 6e-7 (not near-constant, an nrmse of about 1e6); against its unit's
// size, the velocities', it is rounding. Without units nothing changes. A result that diverges in
// one velocity (w, near-constant by its own rule) does not make the others look constant: only
// the reference's magnitudes size a unit.
TEST(Nrmse, NearConstantIsJudgedAgainstTheSizeOfItsUnit) {
  const std::vector<double> t{0, 1, 2, 3};
  const std::vector<std::string> names{"v", "mu", "w"};
  const std::vector<std::vector<double>> ref_values{
      {0.0, 1.0, -1.0, 0.5}, {0.0, 6e-12, -3e-12, 0.0}, {0.0, 1.0, 2.0, 1.0}};
  const std::vector<std::vector<double>> res_values{
      {0.0, 1.0, -1.0, 0.6}, {0.0, 1e-5, -1e-5, 0.0}, {0.0, 1.0, 2.0, 1e12}};
  CsvTable reference = table(t, names, ref_values), result = table(t, names, res_values);
  const NrmseReport without = compute_nrmse(result, reference);
  EXPECT_FALSE(without.variables[1].near_constant);
  EXPECT_GT(without.variables[1].nrmse, 1e5);
  reference.units = {"m/s", "m/s", "m/s"};
  const NrmseReport with = compute_nrmse(result, reference);
  EXPECT_TRUE(with.variables[1].near_constant);
  EXPECT_NEAR(with.variables[1].max_abs_difference, 1e-5, 1e-11);
  EXPECT_FALSE(with.variables[0].near_constant);
  EXPECT_TRUE(with.variables[2].near_constant);  // 2 <= 1e-9 * 1e12: its own magnitude
  EXPECT_DOUBLE_EQ(with.norm, with.variables[0].nrmse);
  // The result's units come first where it records them.
  result.units = {"m/s", "rad/s", "m/s"};
  EXPECT_FALSE(compute_nrmse(result, reference).variables[1].near_constant);
}

TEST(Nrmse, IdenticalResultHasZeroError) {
  const CsvTable ref = table({0, 0.5, 1}, {"x_3"}, {{1, 4, -2}});
  const NrmseReport r = compute_nrmse(ref, ref);
  ASSERT_EQ(r.variables.size(), 1U);
  EXPECT_EQ(r.variables[0].nrmse, 0.0);
  EXPECT_EQ(r.norm, 0.0);
}

TEST(Nrmse, RejectsWhatCannotBeCompared) {
  const CsvTable ref = table({0, 1, 2}, {"x_1"}, {{0, 1, 0}});
  EXPECT_THROW(compute_nrmse(table({0, 1, 2}, {"x_2"}, {{0, 1, 0}}), ref), OutputError);
  EXPECT_THROW(compute_nrmse(table({0, 1, 2}, {}, {}), ref), OutputError);
  EXPECT_THROW(compute_nrmse(table({0, 3}, {"x_1"}, {{0, 1}}), ref), OutputError);  // t > 2
  EXPECT_THROW(compute_nrmse(table({-1, 1}, {"x_1"}, {{0, 1}}), ref), OutputError);
  EXPECT_THROW(compute_nrmse(table({0, 0, 2}, {"x_1"}, {{0, 1, 0}}), ref), OutputError);
  EXPECT_THROW(compute_nrmse(ref, table({0, 2, 1}, {"x_1"}, {{0, 1, 0}})), OutputError);
}

// A non-uniform grid on [0, 2].
std::vector<double> grid() {
  return {0.0, 0.1, 0.35, 0.5, 0.8, 1.0, 1.3, 1.45, 1.7, 2.0};
}

double apply(const std::vector<double>& g, double (*f)(double), double t) {
  std::vector<double> y;
  for (double x : g) y.push_back(f(x));
  return interpolation_stencil(g, t).apply(y);
}

double cubic(double t) {
  return 2.0 - 3.0 * t + 0.5 * t * t - 1.25 * t * t * t;
}
double line(double t) {
  return -4.0 + 2.5 * t;
}

TEST(Interpolation, CubicLagrangeIsExactForCubicsInTheInterior) {
  const auto g = grid();
  for (double t = 0.11; t < 1.69; t += 0.0137) {
    EXPECT_NEAR(apply(g, cubic, t), cubic(t), 1e-13) << "t = " << t;
  }
}

TEST(Interpolation, EndIntervalsAreLinear) {
  const auto g = grid();
  for (double t : {0.02, 0.07, 1.75, 1.99}) {
    EXPECT_NEAR(apply(g, line, t), line(t), 1e-13) << t;
    // A cubic is not reproduced there: the value is the chord between the end points.
    const std::size_t j = t < 1.0 ? 0 : g.size() - 2;
    const double w = (t - g[j]) / (g[j + 1] - g[j]);
    EXPECT_NEAR(apply(g, cubic, t), (1 - w) * cubic(g[j]) + w * cubic(g[j + 1]), 1e-13) << t;
  }
}

TEST(Interpolation, GridPointsAreReproducedExactly) {
  const auto g = grid();
  for (std::size_t i = 0; i < g.size(); ++i) {
    const auto s = interpolation_stencil(g, g[i]);
    EXPECT_EQ(s.count, 1U);
    EXPECT_EQ(s.first, i);
  }
  EXPECT_THROW(interpolation_stencil(g, -1e-9), std::invalid_argument);
  EXPECT_THROW(interpolation_stencil(g, 2.0 + 1e-9), std::invalid_argument);
}

TEST(Interpolation, ErrorForASineFollowsTheLagrangeBound) {
  // Uniform step h: |error| <= max|f''''| * max|prod (t - t_k)| / 4! = (9/16) h^4 / 24 inside.
  for (double h : {0.1, 0.05, 0.025}) {
    std::vector<double> g;
    for (int i = 0; i * h <= 3.0 + 1e-12; ++i) g.push_back(i * h);
    double worst = 0.0;
    for (double t = g[1] + 1e-3; t < g[g.size() - 2]; t += h / 7.3) {
      worst = std::max(worst, std::abs(apply(
                                           g, [](double x) { return std::sin(x); }, t) -
                                       std::sin(t)));
    }
    EXPECT_LE(worst, 9.0 / 16.0 * std::pow(h, 4) / 24.0) << "h = " << h;
    EXPECT_GT(worst, 0.0);
  }
}

TEST(Nrmse, InterpolatesTheReferenceToTheResultsTimes) {
  // Reference: sin on a fine grid; result: the exact sine on a coarser, offset grid.
  std::vector<double> rt, rv, t, v;
  for (int i = 0; i <= 2000; ++i) {
    rt.push_back(i * 1e-3);
    rv.push_back(std::sin(10.0 * rt.back()));
  }
  for (int i = 0; i <= 70; ++i) {
    t.push_back(0.0005 + i * 0.0283);
    v.push_back(std::sin(10.0 * t.back()));
  }
  const NrmseReport r = compute_nrmse(table(t, {"x_1"}, {v}), table(rt, {"x_1"}, {rv}));
  EXPECT_TRUE(r.interpolated);
  ASSERT_EQ(r.variables.size(), 1U);
  // Interior cubic error <= (9/16) h^4 10^4 / 24 ~ 2e-10; only the first result time lies in
  // a linear end interval (error <= h^2 / 8 * 100 |sin(0.005)| ~ 6e-8).
  EXPECT_LT(r.variables[0].nrmse, 1e-5);
  EXPECT_GT(r.variables[0].nrmse, 0.0);
}

TEST(Nrmse, EndTimesThatMissByRoundingOnlyStillCompare) {
  // The result's last time is 0.1 + 0.2 (a sum of steps), the reference's 0.3.
  const CsvTable ref = table({0, 0.1, 0.2, 0.3}, {"x_1"}, {{0, 1, 2, 3}});
  const CsvTable res = table({0, 0.15, 0.1 + 0.2}, {"x_1"}, {{0, 1.5, 3}});
  ASSERT_GT(0.1 + 0.2, 0.3);
  const NrmseReport r = compute_nrmse(res, ref);
  EXPECT_TRUE(r.interpolated);
  EXPECT_LT(r.norm, 1e-12);
}

}  // namespace

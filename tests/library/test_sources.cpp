// Sources and blocks without states: their values, the exact feed-through of gain and sum, the
// table's interpolation (linear exact on linear data, Hermite exact on quadratic data, both
// through every row), its ends, the CSV reader's errors naming file and line, and the table's
// file among the files a model reads.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <numbers>
#include <string>
#include <vector>

#include "macrostep/library/model_description.hpp"
#include "macrostep/library/model_registry.hpp"
#include "macrostep/library/sources.hpp"
#include "macrostep/library/table_source.hpp"

namespace macrostep::library {
namespace {

double value_at(const model::Subsystem& s, double t) {
  std::vector<double> y(s.output_size());
  s.outputs(t, {}, {}, y);
  return y[0];
}

TEST(Sources, ValuesOfConstantStepRampSine) {
  const ConstantSource c(2.5, "N");
  EXPECT_EQ(value_at(c, 7.0), 2.5);
  EXPECT_EQ(c.output_unit(0), "N");
  EXPECT_EQ(c.state_size(), 0u);
  EXPECT_EQ(c.input_size(), 0u);
  EXPECT_FALSE(c.has_feedthrough());

  const StepSource step(1.0, 3.0, 0.5, 0.0, "V");
  EXPECT_EQ(value_at(step, 0.4999), 1.0);
  EXPECT_EQ(value_at(step, 0.5), 3.0);  // the final value from the step time on
  EXPECT_EQ(value_at(step, 9.0), 3.0);
  const StepSource smooth(1.0, 3.0, 0.5, 0.2, "V");
  EXPECT_EQ(value_at(smooth, 0.5), 1.0);
  EXPECT_DOUBLE_EQ(value_at(smooth, 0.6), 2.0);  // half way at half the width
  EXPECT_EQ(value_at(smooth, 0.7), 3.0);
  EXPECT_NEAR(value_at(smooth, 0.5 + 1e-6), 1.0, 1e-9);  // no kink: C1 at both ends

  const RampSource ramp(1.0, 2.0, -1.0, 3.0, "");
  EXPECT_EQ(value_at(ramp, 0.0), -1.0);
  EXPECT_EQ(value_at(ramp, 2.0), 1.0);
  EXPECT_EQ(value_at(ramp, 5.0), 3.0);  // held from end_time on
  const RampSource endless(0.0, 1.0, 0.0, std::numeric_limits<double>::infinity(), "");
  EXPECT_EQ(value_at(endless, 1e6), 1e6);

  const SineSource sine(2.0, 3.0, 0.25, 1.0, "");
  EXPECT_DOUBLE_EQ(value_at(sine, 0.7), 1.0 + 2.0 * std::sin(3.0 * 0.7 + 0.25));
  EXPECT_THROW(StepSource(0.0, 1.0, std::nan(""), 0.0, ""), std::invalid_argument);
  EXPECT_THROW(RampSource(1.0, 1.0, 0.0, 0.5, ""), std::invalid_argument);
}

TEST(Sources, SineFrequencyIsInHertz) {
  const ModelEntry* entry = find_model("sine");
  ASSERT_NE(entry, nullptr);
  ParameterValues v = default_values(*entry);
  v.set("amplitude", 1.0);
  v.set("frequency", 2.0);
  EXPECT_FALSE(entry->check(v));
  const auto s = entry->build(v);
  EXPECT_NEAR(value_at(*s, 0.125), 1.0, 1e-15);  // a quarter of a 0.5 s period
  v.set("omega", 1.0);
  ASSERT_TRUE(entry->check(v));
  EXPECT_EQ(entry->check(v)->key, "omega");
}

TEST(Blocks, GainAndSumAreAffineWithExactFeedthrough) {
  const Gain gain(-2.5, "V");
  EXPECT_TRUE(gain.has_feedthrough());
  EXPECT_TRUE(gain.outputs_affine_in_inputs());
  std::vector<double> y(1), d(1);
  const std::vector<double> u{4.0};
  gain.outputs(0.0, {}, u, y);
  EXPECT_EQ(y[0], -10.0);
  gain.feedthrough_jacobian(0.0, {}, u, d);
  EXPECT_EQ(d[0], -2.5);
  EXPECT_EQ(gain.input_name(0), "u");
  EXPECT_EQ(gain.output_name(0), "y");

  const Sum sum({1.0, -1.0, 0.5}, "");
  EXPECT_EQ(sum.input_size(), 3u);
  EXPECT_EQ(sum.input_name(2), "u_3");
  const std::vector<double> v{3.0, 1.0, 4.0};
  sum.outputs(0.0, {}, v, y);
  EXPECT_EQ(y[0], 4.0);
  std::vector<double> ds(3);
  sum.feedthrough_jacobian(0.0, {}, v, ds);
  EXPECT_EQ(ds, (std::vector<double>{1.0, -1.0, 0.5}));
  EXPECT_THROW(Sum({}, ""), std::invalid_argument);
}

TableData quadratic_data() {
  // y = 1 + 2t − 3t² on unequally spaced times; z = 4 − t (linear).
  TableData d;
  d.names = {"y", "z"};
  d.time = {-1.0, 0.0, 0.5, 2.0, 2.25, 4.0};
  d.values.resize(2);
  for (const double t : d.time) {
    d.values[0].push_back(1.0 + 2.0 * t - 3.0 * t * t);
    d.values[1].push_back(4.0 - t);
  }
  return d;
}

TEST(TableInterpolation, LinearIsExactOnLinearDataAndPassesThroughRows) {
  const Table table(quadratic_data(), Interpolation::kLinear, TableEnd::kHold);
  std::vector<double> y(2);
  for (double t = -1.0; t <= 4.0; t += 0.0625) {
    table.evaluate(t, y);
    EXPECT_NEAR(y[1], 4.0 - t, 1e-14) << t;
  }
  const TableData data = quadratic_data();
  for (std::size_t k = 0; k < data.time.size(); ++k) {
    table.evaluate(data.time[k], y);
    EXPECT_EQ(y[0], data.values[0][k]);
  }
  table.evaluate(0.25, y);  // the chord between rows 0 and 0.5 of the parabola
  EXPECT_NEAR(y[0], 0.5 * (1.0 + (1.0 + 1.0 - 0.75)), 1e-14);
}

TEST(TableInterpolation, HermiteIsExactOnQuadraticData) {
  const Table table(quadratic_data(), Interpolation::kHermite, TableEnd::kHold);
  std::vector<double> y(2);
  for (double t = -1.0; t <= 4.0; t += 0.03125) {
    table.evaluate(t, y);
    EXPECT_NEAR(y[0], 1.0 + 2.0 * t - 3.0 * t * t, 1e-12) << t;
    EXPECT_NEAR(y[1], 4.0 - t, 1e-13) << t;
  }
  // Not exact on a cubic: the scheme's order ends at quadratics.
  TableData cubic;
  cubic.names = {"c"};
  cubic.time = {0.0, 1.0, 2.0, 3.0};
  cubic.values = {{0.0, 1.0, 8.0, 27.0}};
  const Table c(cubic, Interpolation::kHermite, TableEnd::kHold);
  std::vector<double> v(1);
  c.evaluate(1.25, v);
  EXPECT_GT(std::abs(v[0] - 1.953125), 1e-2);
}

TEST(TableInterpolation, HoldAndExtrapolateAtBothEnds) {
  const Table hold(quadratic_data(), Interpolation::kLinear, TableEnd::kHold);
  const Table line(quadratic_data(), Interpolation::kLinear, TableEnd::kExtrapolate);
  const Table cubic(quadratic_data(), Interpolation::kHermite, TableEnd::kExtrapolate);
  std::vector<double> y(2);
  hold.evaluate(-3.0, y);
  EXPECT_EQ(y[0], -4.0);  // the first row's y(−1)
  hold.evaluate(10.0, y);
  EXPECT_EQ(y[1], 0.0);
  line.evaluate(10.0, y);
  EXPECT_NEAR(y[1], -6.0, 1e-13);  // linear data continue exactly
  // The last secant of y: rows 2.25 and 4.
  const double y4 = 1.0 + 8.0 - 48.0, y225 = 1.0 + 4.5 - 3.0 * 2.25 * 2.25;
  EXPECT_NEAR(y[0], y4 + 6.0 * (y4 - y225) / 1.75, 1e-12);
  cubic.evaluate(5.0, y);  // the tangent of the parabola at t = 4: slope 2 − 6·4
  EXPECT_NEAR(y[0], y4 + (2.0 - 24.0), 1e-12);
  cubic.evaluate(-2.0, y);  // at t = −1: slope 2 + 6
  EXPECT_NEAR(y[0], -4.0 - 8.0, 1e-12);
}

class TableFile : public ::testing::Test {
 protected:
  std::string write(const std::string& text) {
    const auto file = std::filesystem::temp_directory_path() /
                      ("macrostep_table_" + std::to_string(::getpid()) + "_" +
                       ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".csv");
    std::ofstream(file) << text;
    files_.push_back(file);
    return file.string();
  }
  std::string error_of(const std::string& text) {
    const std::string file = write(text);
    try {
      (void)read_table_csv(file);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "no error";
  }
  void TearDown() override {
    for (const auto& f : files_) std::filesystem::remove(f);
  }
  std::vector<std::filesystem::path> files_;
};

TEST_F(TableFile, ReadsHeaderRowsCommentsAndBlankLines) {
  const std::string file =
      write("# a drive cycle\ntime, speed ,torque\r\n0, 1, 2\n\n1.5,+3,-4e1\n");
  const TableData d = read_table_csv(file);
  EXPECT_EQ(d.names, (std::vector<std::string>{"speed", "torque"}));
  EXPECT_EQ(d.time, (std::vector<double>{0.0, 1.5}));
  EXPECT_EQ(d.values[1], (std::vector<double>{2.0, -40.0}));
}

TEST_F(TableFile, ErrorsNameTheFileAndTheLine) {
  const auto has = [](const std::string& message, const std::string& part) {
    return message.find(part) != std::string::npos;
  };
  std::string e = error_of("t,y\n0,1\n1,x\n");
  EXPECT_TRUE(has(e, ".csv:3: field 2 (\"x\") is not a finite number")) << e;
  e = error_of("t,y\n0,1\n1,2\n1,3\n");
  EXPECT_TRUE(has(e, ".csv:4: time 1 is not greater than the previous row's 1")) << e;
  e = error_of("t,y\n0,1\n1,2,3\n");
  EXPECT_TRUE(has(e, ".csv:3: 3 fields, the header has 2")) << e;
  e = error_of("0,1\n1,2\n");
  EXPECT_TRUE(has(e, ".csv:1: the first line must name the columns")) << e;
  e = error_of("t,y\n");
  EXPECT_TRUE(has(e, ".csv: 0 data rows; a table needs at least two")) << e;
  e = error_of("# nothing\n\n");
  EXPECT_TRUE(has(e, ".csv: no header line and no rows")) << e;
  e = error_of("t,y,y\n0,1,2\n1,2,3\n");
  EXPECT_TRUE(has(e, ".csv:1: column name \"y\" appears twice")) << e;
  e = error_of("t,y\n0,nan\n1,2\n");
  EXPECT_TRUE(has(e, ".csv:2: field 2 (\"nan\") is not a finite number")) << e;
  EXPECT_THROW((void)read_table_csv("/nonexistent/macrostep.csv"), std::invalid_argument);
}

TEST_F(TableFile, RegistryEntryChecksTheFileAndTheKeywords) {
  const ModelEntry* entry = find_model("table");
  ASSERT_NE(entry, nullptr);
  ParameterValues v = default_values(*entry);
  v.set("file", write("time,a,b\n0,0,1\n2,4,1\n"));
  EXPECT_FALSE(entry->check(v));
  const auto s = entry->build(v);
  EXPECT_EQ(s->output_size(), 2u);
  EXPECT_EQ(s->output_name(1), "b");
  EXPECT_EQ(value_at(*s, 1.0), 2.0);
  v.set("interpolation", std::string("spline"));
  ASSERT_TRUE(entry->check(v));
  EXPECT_EQ(entry->check(v)->key, "interpolation");
  v.set("interpolation", std::string("hermite"));
  v.set("end", std::string("wrap"));
  EXPECT_EQ(entry->check(v)->key, "end");
  v.set("end", std::string("extrapolate"));
  v.set("file", write("time,a\n0,1\n"));
  ASSERT_TRUE(entry->check(v));
  EXPECT_EQ(entry->check(v)->key, "file");
}

// What a model reads, which no output of a run may be (config::input_files): a parameter that
// names a file, a plugin's library, an FMU; nothing for a model without files.
TEST_F(TableFile, ModelFilesAreWhatAModelReads) {
  ParameterValues v = default_values(*find_model("table"));
  const std::string file = write("time,a\n0,0\n1,1\n");
  v.set("file", file);
  const std::vector<ModelFile> files = model_files(RegisteredModel{"table", v});
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].what, "input file `file`");
  EXPECT_EQ(files[0].path, file);
  EXPECT_EQ(model_files(plugin::PluginDescription{"/p/lib.so", "{}"}).at(0).what, "plugin library");
  EXPECT_EQ(model_files(fmu::FmuDescription{"/p/m.fmu", "{}", {}, {}, ""}).at(0).path, "/p/m.fmu");
  EXPECT_TRUE(model_files(RegisteredModel{"step", default_values(*find_model("step"))}).empty());
}

}  // namespace
}  // namespace macrostep::library

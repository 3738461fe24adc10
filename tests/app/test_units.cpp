// Units in the result files and in `compare` (docs/reference/commands.md, "Units"): the JSON's
// "columns" name every column with its unit in column order, an HDF5 result has the attribute
// "units" beside "columns", the CSV's header line stays the names alone, and `compare` shows
// each variable's unit where the result's files record them (a hand-written CSV: no column).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "binary_fixture.hpp"
#include "macrostep/output/csv.hpp"
#include "macrostep/output/hdf5.hpp"

namespace macrostep::testing {
namespace {

class Units : public BinaryTest {
 protected:
  void SetUp() override {
    BinaryTest::SetUp();
    write_file("chain.toml", "description = \"unit test chain\"\n" + kTestChainModel +
                                 "[simulation]\nend_time = 2.0e-3\noutput_interval = 1.0e-4\n"
                                 "[cosim]\nestimator = \"exMD\"\nrtol = 1.0e-4\nthreads = 1\n");
  }
  // The metadata's "columns" as (name, unit) pairs.
  std::vector<std::pair<std::string, std::string>> columns_of(const std::string& json) const {
    const auto meta = nlohmann::json::parse(read_file(json));
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& c : meta.at("columns")) out.emplace_back(c.at("name"), c.at("unit"));
    return out;
  }
  std::string first_line(const std::string& name) const {
    const std::string text = read_file(name);
    return text.substr(0, text.find('\n'));
  }
};

using Pairs = std::vector<std::pair<std::string, std::string>>;
// The chain's coupling bodies (both sides of the cut) and its cut element's force.
const Pairs kChainColumns = {{"time", "s"}, {"x_5", "m"},   {"v_5", "m/s"},
                             {"x_6", "m"},  {"v_6", "m/s"}, {"lambda_1", "N"}};

TEST_F(Units, CoSimulationAndMonolithicJsonNameEveryColumnsUnit) {
  const Outcome cosim = macrostep("run chain.toml");
  ASSERT_EQ(cosim.status, 0) << cosim.err;
  EXPECT_EQ(columns_of("chain.json"), kChainColumns);
  EXPECT_EQ(first_line("chain.csv"), "time,x_5,v_5,x_6,v_6,lambda_1");  // names alone

  const Outcome mono = macrostep("run chain.toml --monolithic");  // the uncut chain
  ASSERT_EQ(mono.status, 0) << mono.err;
  EXPECT_EQ(columns_of("chain.monolithic.json"), kChainColumns);

  // Every state: the masses that are no outputs take their role's unit.
  const Outcome all = macrostep("run chain.toml --all-states --output all.csv");
  ASSERT_EQ(all.status, 0) << all.err;
  const Pairs columns = columns_of("all.json");
  ASSERT_EQ(columns.size(), 1u + 20u + 1u);
  for (std::size_t j = 1; j <= 20; ++j) {
    EXPECT_EQ(columns[j].second, columns[j].first[0] == 'x' ? "m" : "m/s") << columns[j].first;
  }
  EXPECT_EQ(columns.back(), (std::pair<std::string, std::string>{"lambda_1", "N"}));
}

TEST_F(Units, HdfResultHasAUnitsAttributeThatReadersSee) {
  const Outcome o = macrostep("run chain.toml --monolithic --output mono.h5");
  ASSERT_EQ(o.status, 0) << o.err;
  const auto table = macrostep::output::read_hdf5_table(path("mono.h5"));
  EXPECT_EQ(table.columns, (std::vector<std::string>{"x_5", "v_5", "x_6", "v_6", "lambda_1"}));
  EXPECT_EQ(table.units, (std::vector<std::string>{"m", "m/s", "m", "m/s", "N"}));
  EXPECT_EQ(columns_of("mono.json"), kChainColumns);
  // A CSV result gets its units from the JSON beside it; read_csv alone knows none.
  ASSERT_EQ(macrostep("run chain.toml --monolithic").status, 0);
  const auto csv = macrostep::output::read_result_table(path("chain.monolithic.csv"));
  EXPECT_EQ(csv.units, table.units);
  EXPECT_TRUE(macrostep::output::read_csv(path("chain.monolithic.csv")).units.empty());
}

TEST_F(Units, CompareShowsEachVariablesUnit) {
  ASSERT_EQ(macrostep("run chain.toml").status, 0);
  ASSERT_EQ(macrostep("reference chain.toml --at chain.csv").status, 0);
  const Outcome o = macrostep("compare chain.csv chain.reference.csv");
  ASSERT_EQ(o.status, 0) << o.err;
  EXPECT_NE(o.out.find("  variable  unit  max |diff|    NRMSE\n"), std::string::npos) << o.out;
  for (const char* row : {"  x_5       m     ", "  v_5       m/s   ", "  lambda_1  N     "}) {
    EXPECT_NE(o.out.find(row), std::string::npos) << row << "\n" << o.out;
  }
  // A result without metadata: the table of names alone, as before.
  write_file("bare.csv", read_file("chain.csv"));
  const Outcome bare = macrostep("compare bare.csv chain.reference.csv");
  ASSERT_EQ(bare.status, 0) << bare.err;
  EXPECT_NE(bare.out.find("  variable  unit  max |diff|"), std::string::npos)
      << "the reference's units stand in for a result without them\n"
      << bare.out;
  write_file("ref.csv", read_file("chain.reference.csv"));
  const Outcome none = macrostep("compare bare.csv ref.csv");
  ASSERT_EQ(none.status, 0) << none.err;
  EXPECT_NE(none.out.find("  variable  max |diff|    NRMSE\n"), std::string::npos) << none.out;
}

TEST_F(Units, EveryColumnIsDescribedInTheJsonAndTheHdfResult) {
  // The chain's outputs by their mass, the cut element's force with its law and sign.
  const Outcome o = macrostep("run chain.toml --output run.h5");
  ASSERT_EQ(o.status, 0) << o.err;
  const auto meta = nlohmann::json::parse(read_file("run.json"));
  std::vector<std::string> json_descriptions;
  for (const auto& c : meta.at("columns")) json_descriptions.push_back(c.at("description"));
  ASSERT_EQ(json_descriptions.size(), 6u);
  EXPECT_EQ(json_descriptions[1], "position of mass 5");
  EXPECT_EQ(json_descriptions[4], "velocity of mass 6");
  EXPECT_EQ(json_descriptions[5].rfind("spring-damper force or torque of Δ = right − left", 0), 0u)
      << json_descriptions[5];
  EXPECT_NE(json_descriptions[5].find("acts + on the left body, − on the right"),
            std::string::npos);
  const auto table = macrostep::output::read_hdf5_table(path("run.h5"));
  EXPECT_EQ(table.descriptions,
            std::vector<std::string>(json_descriptions.begin() + 1, json_descriptions.end()));

  // Every state of an uncut monolithic run, from the chain's own declarations; a CSV result gets
  // them from the JSON beside it.
  ASSERT_EQ(macrostep("run chain.toml --monolithic --all-states").status, 0);
  const auto all = macrostep::output::read_result_table(path("chain.monolithic.csv"));
  ASSERT_EQ(all.descriptions.size(), all.columns.size());
  for (std::size_t j = 0; j + 1 < all.columns.size(); ++j) {
    const std::string& name = all.columns[j];
    const std::string expected =
        (name[0] == 'x' ? "position of mass " : "velocity of mass ") + name.substr(2);
    EXPECT_EQ(all.descriptions[j], expected) << name;
  }
}

}  // namespace
}  // namespace macrostep::testing

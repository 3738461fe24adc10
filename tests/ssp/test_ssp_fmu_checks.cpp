// What an SSP says about its FMUs' variables against their model descriptions: units (of
// parameter values and of the variables a connection joins, where a connector gives none) and
// parameter types are checked, nothing is rounded; connections drawn from an input to an output
// run. The FMU is the oscillator with units (x in m, force in N, c in N/m, in its
// UnitDefinitions) and an Integer `count` and a Boolean `enabled` parameter. The conversions of
// units: test_ssp_units.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "macrostep/output/csv.hpp"
#include "ssp_test_support.hpp"

// Its own namespace: the tests are compiled as one unity file.
namespace macrostep::ssp_testing::fmu_checks {
namespace {

// m2.x -> m1.force is drawn from the input; both connections convert with their factor.
const char* kUnitsSsd = R"(<?xml version="1.0" encoding="UTF-8"?>
<ssd:SystemStructureDescription version="1.0" name="units"
    xmlns:ssd="http://ssp-standard.org/SSP1/SystemStructureDescription"
    xmlns:ssc="http://ssp-standard.org/SSP1/SystemStructureCommon"
    xmlns:ssv="http://ssp-standard.org/SSP1/SystemStructureParameterValues">
  <ssd:System name="root">
    <ssd:Elements>
      <ssd:Component name="m1" source="resources/osc.fmu">
        <ssd:Connectors>
          <ssd:Connector name="force" kind="input"><ssc:Real/></ssd:Connector>
          <ssd:Connector name="x" kind="output"><ssc:Real/></ssd:Connector>
        </ssd:Connectors>
        <ssd:ParameterBindings>
          <ssd:ParameterBinding source="resources/p.ssv"/>
        </ssd:ParameterBindings>
      </ssd:Component>
      <ssd:Component name="m2" source="resources/osc.fmu">
        <ssd:Connectors>
          <ssd:Connector name="force" kind="input"/>
          <ssd:Connector name="x" kind="output"/>
        </ssd:Connectors>
      </ssd:Component>
    </ssd:Elements>
    <ssd:Connections>
      <ssd:Connection startElement="m1" startConnector="x" endElement="m2" endConnector="force"
          suppressUnitConversion="true"><ssc:LinearTransformation factor="400"/></ssd:Connection>
      <ssd:Connection startElement="m1" startConnector="force" endElement="m2" endConnector="x"
          suppressUnitConversion="1"><ssc:LinearTransformation factor="400"/></ssd:Connection>
    </ssd:Connections>
  </ssd:System>
  <ssd:DefaultExperiment stopTime="0.05"/>
</ssd:SystemStructureDescription>
)";

// resources/osc.fmu and resources/p.ssv: values in the FMU's units and of its types.
fs::path units_dir() {
  const fs::path dir = test_dir("fmu-checks");
  fs::create_directories(dir / "resources");
  fs::copy_file(fs::path(FMU_DIR) / "oscillator_units.fmu", dir / "resources" / "osc.fmu");
  write_file(dir / "resources" / "p.ssv",
             parameter_set(parameter("c", "<ssv:Real value=\"100\" unit=\"N/m\"/>") +
                           parameter("x", "<ssv:Real value=\"0.01\"/>") +
                           parameter("count", "<ssv:Integer value=\"3\"/>") +
                           parameter("enabled", "<ssv:Real value=\"1\"/>")));
  return dir;
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

struct Case {
  std::string name;
  std::string ssd;       // the SSD of the case
  std::string set;       // resources/q.ssv, when not empty (the SSD binds it instead of p.ssv)
  std::string location;  // how the message begins
  std::string problem;   // a part of the message
};

TEST(SspFmuChecks, ValuesAndConnectionsInTheFmusUnitsAndTypesRunOthersAreRefused) {
  const fs::path dir = units_dir();
  write_file(dir / "base.ssd", kUnitsSsd);
  const AppRun base = macrostep(dir, "run base.ssd --executor inprocess");
  ASSERT_EQ(base.status, 0) << base.output;

  const std::string q = replaced(kUnitsSsd, "resources/p.ssv", "resources/q.ssv");
  const std::vector<Case> cases = {
      {"value in another unit than its FMU variable's", q,
       parameter_set(parameter("c", "<ssv:Real value=\"0.1\" unit=\"N/mm\"/>")),
       "resources/q.ssv:1: ssv:Parameter \"c\": ",
       "has unit \"N/mm\", FMU variable m1.c has unit \"N/m\": unit \"N/mm\" is defined "
       "nowhere"},
      {"connector in a unit defined nowhere",
       replaced(q, "<ssd:Connector name=\"x\" kind=\"output\"><ssc:Real/>",
                "<ssd:Connector name=\"c\" kind=\"parameter\"><ssc:Real unit=\"kN/m\"/>"
                "</ssd:Connector><ssd:Connector name=\"x\" kind=\"output\"><ssc:Real/>"),
       parameter_set(parameter("c", "<ssv:Real value=\"0.1\" unit=\"N/m\"/>")),
       "case.ssd:11: ssd:Connector \"c\": ",
       "its unit \"kN/m\" and the unit \"N/m\" of FMU variable m1.c: unit \"kN/m\" is defined "
       "nowhere"},
      {"name of no FMU variable", q, parameter_set(parameter("mass", "<ssv:Real value=\"2\"/>")),
       "resources/q.ssv:1: ssv:Parameter \"mass\": ",
       "\"mass\" names no variable of the FMU of component m1 (resources/osc.fmu)"},
      {"real for an integer", q, parameter_set(parameter("count", "<ssv:Real value=\"2.5\"/>")),
       "resources/q.ssv:1: ssv:Parameter \"count\": ",
       "value 2.5 for m1.count (an FMU variable of type Integer): an Integer variable takes a "
       "whole number"},
      {"real for a boolean", q, parameter_set(parameter("enabled", "<ssv:Real value=\"0.3\"/>")),
       "resources/q.ssv:1: ssv:Parameter \"enabled\": ",
       "value 0.3 for m1.enabled (an FMU variable of type Boolean): a Boolean variable takes "
       "true, false, 1 or 0"},
      {"connection between the FMU variables' units",
       replaced(kUnitsSsd, "\n          suppressUnitConversion=\"true\"", ""), "",
       "case.ssd:25: ssd:Connection m1.x -> m2.force: ",
       "joins unit \"m\" (of FMU variable m1.x) to unit \"N\" (of FMU variable m2.force) (or "
       "convert with an ssc:LinearTransformation and suppressUnitConversion = \"true\"): unit "
       "\"m\" (m, the model description of resources/osc.fmu) cannot be converted to unit \"N\" "
       "(kg·m·s^-2, the model description of resources/osc.fmu): their base units differ"},
      {"suppressUnitConversion that is no boolean",
       replaced(kUnitsSsd, "suppressUnitConversion=\"1\"", "suppressUnitConversion=\"yes\""), "",
       "case.ssd:28: ssd:Connection: ",
       "suppressUnitConversion = \"yes\" is not a boolean (true, false, 1 or 0)"},
      {"input to input",
       replaced(kUnitsSsd, "endElement=\"m2\" endConnector=\"x\"",
                "endElement=\"m2\" endConnector=\"force\""),
       "", "case.ssd:28: ssd:Connection m1.force -> m2.force: ",
       "connects a connector of kind input to one of kind input; a connection joins a "
       "component's output and a component's input"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    write_file(dir / "case.ssd", c.ssd);
    if (!c.set.empty()) write_file(dir / "resources" / "q.ssv", c.set);
    const AppRun r = macrostep(dir, "run case.ssd");
    EXPECT_EQ(r.status, 2) << r.output;
    EXPECT_EQ(r.output.rfind(c.location, 0), 0u) << r.output;
    EXPECT_NE(r.output.find(c.problem), std::string::npos) << r.output;
  }
  EXPECT_TRUE(tmp_is_empty(dir)) << "a refused run left files in $TMPDIR";
  fs::remove_all(dir);
}

// The rule of types is the FMU subsystem's: a TOML configuration is held to it too.
TEST(SspFmuChecks, TomlParametersAreNeitherRoundedNorConvertedToBooleans) {
  const fs::path dir = units_dir();
  for (const auto& [value, problem] : std::vector<std::pair<std::string, std::string>>{
           {"count = 2.5", "parameters: \"count\" = 2.5: an Integer variable takes a whole number"},
           {"enabled = 0.3", "parameters: \"enabled\" = 0.3: a Boolean variable takes"},
           {"enabled = 2", "parameters: \"enabled\" = 2: a Boolean variable takes"}}) {
    SCOPED_TRACE(value);
    write_file(dir / "t.toml",
               "[simulation]\nend_time = 0.05\noutput_interval = 0.001\n[[subsystem]]\nname = "
               "\"m\"\nmodel = \"fmu\"\npath = \"resources/osc.fmu\"\ninputs = []\n"
               "parameters = {" +
                   value + "}\n");
    const AppRun r = macrostep(dir, "run t.toml");
    EXPECT_EQ(r.status, 2) << r.output;
    EXPECT_NE(r.output.find(problem), std::string::npos) << r.output;
  }
  fs::remove_all(dir);
}

// An FMU input that no connection feeds keeps its start value (SSP 1.0 §5.2.1), here set by a
// binding: m1's force, not even a connector, is 2 N for the whole run. The same oscillator with
// its force fed by a constant source through a connection moves alike (the controller sees one
// coupling variable more, so the steps differ within the tolerance).
TEST(SspFmuChecks, AnInputNoConnectionFeedsKeepsItsStartValue) {
  const fs::path dir = units_dir();
  write_file(dir / "resources" / "p.ssv",
             parameter_set(parameter("c", "<ssv:Real value=\"100\"/>") +
                           parameter("force", "<ssv:Real value=\"2\" unit=\"N\"/>")));
  std::string ssd = replaced(kUnitsSsd,
                             "<ssd:Connector name=\"force\" kind=\"input\"><ssc:Real/>"
                             "</ssd:Connector>\n",
                             "");
  ssd = replaced(ssd, R"(
      <ssd:Connection startElement="m1" startConnector="force" endElement="m2" endConnector="x"
          suppressUnitConversion="1"><ssc:LinearTransformation factor="400"/></ssd:Connection>)",
                 "");
  write_file(dir / "open.ssd", ssd);
  const AppRun open =
      macrostep(dir, "run open.ssd --executor inprocess --rtol 1e-8 --output o.csv");
  ASSERT_EQ(open.status, 0) << open.output;
  write_file(dir / "fed.toml",
             "[simulation]\nend_time = 0.05\noutput_interval = 1e-3\n"
             "[[subsystem]]\nname = \"m1\"\nmodel = \"fmu\"\npath = \"resources/osc.fmu\"\n"
             "inputs = [\"force\"]\noutputs = [\"x\"]\nparameters = {c = 100.0}\n"
             "[[subsystem]]\nname = \"f\"\nmodel = \"step\"\ninitial = 2.0\nfinal = 2.0\n"
             "time = 1.0\n"
             "[[connection]]\nname = \"feed\"\nlaw = \"signal\"\nfrom = \"f.y\"\n"
             "to = \"m1.force\"\n");
  const AppRun fed = macrostep(dir, "run fed.toml --executor inprocess --rtol 1e-8 --output f.csv");
  ASSERT_EQ(fed.status, 0) << fed.output;
  const auto x_of = [&](const char* file) {
    const auto t = output::read_csv((dir / file).string());
    return t.values.at(*t.column_index("m1.x")).back();
  };
  const double x = x_of("f.csv");
  EXPECT_GT(std::abs(x), 1e-4) << "the force moves the mass";
  EXPECT_NEAR(x_of("o.csv"), x, 1e-6 * std::abs(x) + 1e-12);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace macrostep::ssp_testing::fmu_checks

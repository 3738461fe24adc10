// Units of an SSP converted (SSP 1.0 §5, Units): parameter values into their variables' units and
// connections from the output's unit to the input's, with units defined by the SSD, the
// parameter set or the FMU; units of other base units, or defined nowhere, refused. And
// connectors that nothing couples (Integer and Boolean outputs, calculated parameters) left
// alone. The system: m1, the oscillator with units (x in m, c in N/m), swings freely and feeds
// its x to f, a feed-through lag without units (its connector says which).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ssp_test_support.hpp"

// Its own namespace: the tests are compiled as one unity file.
namespace macrostep::ssp_testing::units {
namespace {

const char* kSsd = R"(<?xml version="1.0" encoding="UTF-8"?>
<ssd:SystemStructureDescription version="1.0" name="units"
    xmlns:ssd="http://ssp-standard.org/SSP1/SystemStructureDescription"
    xmlns:ssc="http://ssp-standard.org/SSP1/SystemStructureCommon">
  <ssd:System name="root">
    <ssd:Elements>
      <ssd:Component name="m1" source="resources/osc.fmu">
        <ssd:Connectors>
          <ssd:Connector name="x" kind="output"><ssc:Real@X@/></ssd:Connector>
        </ssd:Connectors>
        <ssd:ParameterBindings>
          <ssd:ParameterBinding source="resources/@SET@"/>
        </ssd:ParameterBindings>
      </ssd:Component>
      <ssd:Component name="f" source="resources/feed.fmu">
        <ssd:Connectors>
          <ssd:Connector name="u" kind="input"><ssc:Real@U@/></ssd:Connector>
          <ssd:Connector name="y" kind="output"><ssc:Real/></ssd:Connector>
        </ssd:Connectors>
      </ssd:Component>
    </ssd:Elements>
    <ssd:Connections>
      <ssd:Connection startElement="m1" startConnector="x" endElement="f" endConnector="u"@C@
    </ssd:Connections>
  </ssd:System>
  <ssd:Units>
    <ssc:Unit name="m"><ssc:BaseUnit m="1"/></ssc:Unit>
    <ssc:Unit name="mm"><ssc:BaseUnit m="1" factor="0.001"/></ssc:Unit>
    <ssc:Unit name="s"><ssc:BaseUnit s="1"/></ssc:Unit>
  </ssd:Units>
  <ssd:DefaultExperiment stopTime="0.5"/>
</ssd:SystemStructureDescription>
)";

struct Variant {
  std::string x = "";         // attributes of m1.x's ssc:Real
  std::string u = "";         // of f.u's
  std::string set = "p.ssv";  // m1's parameter set
  std::string connection = "/>";
};

std::string ssd(const Variant& v) {
  std::string text = kSsd;
  for (const auto& [token, value] : std::vector<std::pair<std::string, std::string>>{
           {"@X@", v.x}, {"@U@", v.u}, {"@SET@", v.set}, {"@C@", v.connection}}) {
    text.replace(text.find(token), token.size(), value);
  }
  return text;
}

// resources/osc.fmu, feed.fmu and p.ssv: m1's c = 100 N/m and x = 0.01 m.
fs::path units_dir() {
  const fs::path dir = test_dir("units");
  fs::create_directories(dir / "resources");
  fs::copy_file(fs::path(FMU_DIR) / "oscillator_units.fmu", dir / "resources" / "osc.fmu");
  fs::copy_file(fs::path(FMU_DIR) / "feedthrough.fmu", dir / "resources" / "feed.fmu");
  write_file(dir / "resources" / "p.ssv",
             parameter_set(parameter("c", "<ssv:Real value=\"100\"/>") +
                           parameter("x", "<ssv:Real value=\"0.01\" unit=\"m\"/>")));
  return dir;
}

// Runs `v` as `name`.ssd to `name`.csv; its bytes.
std::string run(const fs::path& dir, const std::string& name, const Variant& v) {
  write_file(dir / (name + ".ssd"), ssd(v));
  const AppRun r = macrostep(dir, "run " + name + ".ssd --executor inprocess");
  EXPECT_EQ(r.status, 0) << name << "\n" << r.output;
  return read_file(dir / (name + ".csv"));
}

// 10 mm (ssd:Units) and 0.1 N/mm (the set's ssv:Units, into the FMU's N/m) are the values in m and
// N/m: the run is the bytes of the one with those.
TEST(SspUnits, ParameterValuesInOtherUnitsReachTheFmuConverted) {
  const fs::path dir = units_dir();
  write_file(dir / "resources" / "q.ssv",
             "<ssv:ParameterSet version=\"1.0\" name=\"q\" "
             "xmlns:ssv=\"http://ssp-standard.org/SSP1/SystemStructureParameterValues\" "
             "xmlns:ssc=\"http://ssp-standard.org/SSP1/SystemStructureCommon\"><ssv:Parameters>" +
                 parameter("c", "<ssv:Real value=\"0.1\" unit=\"N/mm\"/>") +
                 parameter("x", "<ssv:Real value=\"10\" unit=\"mm\"/>") +
                 "</ssv:Parameters><ssv:Units><ssc:Unit name=\"N/mm\">"
                 "<ssc:BaseUnit kg=\"1\" s=\"-2\" factor=\"1000\"/></ssc:Unit></ssv:Units>"
                 "</ssv:ParameterSet>\n");
  const std::string in_m = run(dir, "in_m", {});
  const std::string in_mm = run(dir, "in_mm", {.set = "q.ssv"});
  ASSERT_GT(in_m.size(), 1000u);
  EXPECT_TRUE(in_mm == in_m) << "the converted values differ from the ones in m";
  EXPECT_NE(read_file(dir / "in_mm.json").find("# \\\"x\\\" converted from 10.0 mm"),
            std::string::npos)
      << "the configuration says what was converted";
  fs::remove_all(dir);
}

// m -> mm multiplies by 1000, which the signal law's gain carries (and with it the coupling
// Jacobian): the bytes of the same connection with that factor written and the conversion
// suppressed. Through an output connector in mm into an input in m, the two conversions cancel:
// the bytes of m -> m. suppressUnitConversion leaves the units unconverted.
TEST(SspUnits, ConnectionsConvertFromTheOutputsUnitToTheInputs) {
  const fs::path dir = units_dir();
  const std::string m_to_m = run(dir, "m_m", {.u = " unit=\"m\""});
  const std::string mm_to_m = run(dir, "mm_m", {.x = " unit=\"mm\"", .u = " unit=\"m\""});
  const std::string to_mm = run(dir, "to_mm", {.u = " unit=\"mm\""});
  const std::string factor =
      run(dir, "factor",
          {.u = " unit=\"mm\"",
           .connection = " suppressUnitConversion=\"true\">"
                         "<ssc:LinearTransformation factor=\"1000\"/></ssd:Connection>"});
  const std::string suppressed = run(
      dir, "suppressed", {.u = " unit=\"mm\"", .connection = " suppressUnitConversion=\"1\"/>"});
  ASSERT_GT(m_to_m.size(), 1000u);
  EXPECT_TRUE(mm_to_m == m_to_m) << "m -> mm -> m is not the identity";
  EXPECT_TRUE(to_mm == factor) << "m -> mm is not the factor 1000";
  EXPECT_FALSE(to_mm == m_to_m) << "m -> mm converted nothing";
  EXPECT_TRUE(suppressed == m_to_m) << "suppressUnitConversion converted";
  EXPECT_NE(read_file(dir / "to_mm.json").find("gain = 1000.0"), std::string::npos);
  fs::remove_all(dir);
}

struct Refusal {
  std::string name;
  Variant variant;
  std::string set;       // resources/q.ssv, when not empty
  std::string location;  // how the message begins
  std::vector<std::string> parts;
};

TEST(SspUnits, UnitsOfOtherBaseUnitsOrDefinedNowhereAreRefused) {
  const fs::path dir = units_dir();
  const std::string osc = "the model description of resources/osc.fmu";
  const std::vector<Refusal> cases = {
      {"value of other base units",
       {.set = "q.ssv"},
       parameter_set(parameter("c", "<ssv:Real value=\"2\" unit=\"s\"/>")),
       "resources/q.ssv:1: ssv:Parameter \"c\": ",
       {"has unit \"s\", FMU variable m1.c has unit \"N/m\": unit \"s\" (s, case.ssd:29) cannot be "
        "converted to unit \"N/m\" (kg·s^-2, " +
        osc + "): their base units differ"}},
      {"value in a unit defined nowhere",
       {.set = "q.ssv"},
       parameter_set(parameter("x", "<ssv:Real value=\"1\" unit=\"cm\"/>")),
       "resources/q.ssv:1: ssv:Parameter \"x\": ",
       {"unit \"cm\" is defined nowhere (not in the SSD's ssd:Units, the parameter set's "
        "ssv:Units or the FMU's UnitDefinitions), so it cannot be converted to or from \"m\""}},
      {"unit defined differently in two files",
       {.set = "q.ssv"},
       "<ssv:ParameterSet version=\"1.0\" name=\"q\" "
       "xmlns:ssv=\"http://ssp-standard.org/SSP1/SystemStructureParameterValues\" "
       "xmlns:ssc=\"http://ssp-standard.org/SSP1/SystemStructureCommon\"><ssv:Parameters>" +
           parameter("x", "<ssv:Real value=\"1\" unit=\"m\"/>") +
           "</ssv:Parameters><ssv:Units><ssc:Unit name=\"m\">"
           "<ssc:BaseUnit m=\"1\" factor=\"0.001\"/></ssc:Unit></ssv:Units>"
           "</ssv:ParameterSet>\n",
       "resources/q.ssv:1: ssv:Parameter \"x\": ",
       {"unit \"m\" is defined differently at resources/q.ssv:1 (m, factor 0.001, offset 0) and "
        "at case.ssd:27 (m, factor 1, offset 0); make the definitions agree"}},
      {"connector of other base units than its variable",
       {.x = " unit=\"s\""},
       "",
       "case.ssd:9: ssd:Connector \"x\": ",
       {"its unit \"s\" and the unit \"m\" of FMU variable m1.x: unit \"s\" (s, case.ssd:29) "
        "cannot "
        "be converted to unit \"m\" (m, " +
        osc + "): their base units differ"}},
      {"connection between other base units",
       {.u = " unit=\"s\""},
       "",
       "case.ssd:23: ssd:Connection m1.x -> f.u: ",
       {"joins unit \"m\" (of FMU variable m1.x) to unit \"s\"",
        "unit \"m\" (m, " + osc + ") cannot be converted to unit \"s\" (s, case.ssd:29)"}},
  };
  for (const Refusal& c : cases) {
    SCOPED_TRACE(c.name);
    write_file(dir / "case.ssd", ssd(c.variant));
    if (!c.set.empty()) write_file(dir / "resources" / "q.ssv", c.set);
    const AppRun r = macrostep(dir, "run case.ssd");
    EXPECT_EQ(r.status, 2) << r.output;
    EXPECT_EQ(r.output.rfind(c.location, 0), 0u) << r.output;
    for (const std::string& part : c.parts) {
      EXPECT_NE(r.output.find(part), std::string::npos) << part << "\n" << r.output;
    }
  }
  fs::remove_all(dir);
}

// Integer and Boolean outputs and a calculated parameter that nothing connects, as exporting
// tools declare them: the system runs, the outputs are result columns.
TEST(SspUnits, ConnectorsThatNothingCouplesAreLeftAlone) {
  const fs::path dir = units_dir();
  fs::copy_file(fs::path(FMU_DIR) / "stair.fmu", dir / "resources" / "stair.fmu");
  std::string text = ssd({.u = " unit=\"V\""});
  const std::string m1 = text.substr(
      text.find("      <ssd:Component name=\"m1\""),
      text.find("      <ssd:Component name=\"f\"") - text.find("      <ssd:Component name=\"m1\""));
  text.replace(text.find(m1), m1.size(),
               "      <ssd:Component name=\"s\" source=\"resources/stair.fmu\">\n"
               "        <ssd:Connectors>\n"
               "          <ssd:Connector name=\"y\" kind=\"output\"><ssc:Real/></ssd:Connector>\n"
               "          <ssd:Connector name=\"counter\" kind=\"output\"><ssc:Integer/>"
               "</ssd:Connector>\n"
               "          <ssd:Connector name=\"odd\" kind=\"output\"><ssc:Boolean/>"
               "</ssd:Connector>\n"
               "          <ssd:Connector name=\"period\" kind=\"calculatedParameter\">"
               "<ssc:Real unit=\"s\"/></ssd:Connector>\n"
               "        </ssd:Connectors>\n"
               "      </ssd:Component>\n");
  text.replace(text.find("startElement=\"m1\" startConnector=\"x\""),
               std::string("startElement=\"m1\" startConnector=\"x\"").size(),
               "startElement=\"s\" startConnector=\"y\"");
  write_file(dir / "stair.ssd", text);
  const AppRun r = macrostep(dir, "run stair.ssd --executor inprocess");
  ASSERT_EQ(r.status, 0) << r.output;
  const std::string csv = read_file(dir / "stair.csv");
  EXPECT_EQ(csv.substr(0, csv.find('\n')), "time,s.y,s.counter,s.odd,f.y,f_u");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace macrostep::ssp_testing::units

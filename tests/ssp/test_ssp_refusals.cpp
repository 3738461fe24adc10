// Every refusal of an SSP: exit status 2 before anything runs, one line naming the file, the
// line and the element, and a message of its own. The cases edit a small valid SSD (two
// oscillator FMUs, a parameter set, two connections), which itself runs.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "ssp_test_support.hpp"

namespace macrostep::ssp_testing {
namespace {

// m2's connectors write kind before name, so that an edit of the first `name="x" kind=...`
// meets m1's.
const char* kBaseSsd = R"(<?xml version="1.0" encoding="UTF-8"?>
<ssd:SystemStructureDescription version="1.0" name="small"
    xmlns:ssd="http://ssp-standard.org/SSP1/SystemStructureDescription"
    xmlns:ssc="http://ssp-standard.org/SSP1/SystemStructureCommon"
    xmlns:ssv="http://ssp-standard.org/SSP1/SystemStructureParameterValues">
  <ssd:System name="root">
    <ssd:Elements>
      <ssd:Component name="m1" source="resources/oscillator.fmu">
        <ssd:Connectors>
          <ssd:Connector name="force" kind="input"><ssc:Real/></ssd:Connector>
          <ssd:Connector name="x" kind="output"><ssc:Real/></ssd:Connector>
        </ssd:Connectors>
        <ssd:ParameterBindings>
          <ssd:ParameterBinding source="resources/p.ssv"/>
        </ssd:ParameterBindings>
      </ssd:Component>
      <ssd:Component name="m2" source="resources/oscillator.fmu">
        <ssd:Connectors>
          <ssd:Connector kind="input" name="force"><ssc:Real/></ssd:Connector>
          <ssd:Connector kind="output" name="x"><ssc:Real/></ssd:Connector>
        </ssd:Connectors>
      </ssd:Component>
    </ssd:Elements>
    <ssd:Connections>
      <ssd:Connection startElement="m1" startConnector="x" endElement="m2" endConnector="force"/>
      <ssd:Connection startElement="m2" startConnector="x" endElement="m1" endConnector="force"/>
    </ssd:Connections>
  </ssd:System>
  <ssd:DefaultExperiment stopTime="0.05"/>
</ssd:SystemStructureDescription>
)";

// The directory of the cases: resources/oscillator.fmu and p.ssv (m1's parameters).
fs::path refusal_dir() {
  const fs::path dir = test_dir("refusals");
  fs::create_directories(dir / "resources");
  fs::copy_file(fs::path(FMU_DIR) / "oscillator.fmu", dir / "resources" / "oscillator.fmu");
  write_file(dir / "resources" / "p.ssv",
             parameter_set("<ssv:Parameter name=\"c\"><ssv:Real value=\"100\"/></ssv:Parameter>"
                           "<ssv:Parameter name=\"x\"><ssv:Real value=\"0.01\"/></ssv:Parameter>"));
  return dir;
}

// The 1-based line of the first `snippet` in `text`.
unsigned line_of(const std::string& text, const std::string& snippet) {
  const auto at = text.find(snippet);
  EXPECT_NE(at, std::string::npos) << snippet;
  return 1u + static_cast<unsigned>(std::count(text.begin(), text.begin() + at, '\n'));
}

struct Edit {
  std::string from, to;  // the first `from` of the base SSD becomes `to`
};

struct Case {
  std::string name;
  std::vector<Edit> edits;
  std::string at;       // a snippet of the edited SSD on the line the message names
  std::string element;  // as the message names it
  std::string problem;  // a part of the message after the element
};

const std::string kM1 = "<ssd:Component name=\"m1\"";
const std::string kM2 = "<ssd:Component name=\"m2\"";
const std::string kToM2 = "startElement=\"m1\" startConnector=\"x\" endElement=\"m2\"";
const std::string kToM1 = "startElement=\"m2\" startConnector=\"x\" endElement=\"m1\"";
const std::string kM1X = "name=\"x\" kind=\"output\"><ssc:Real/>";
const std::string kBinding = "<ssd:ParameterBinding source=\"resources/p.ssv\"/>";

std::vector<Case> cases() {
  return {
      {"nested system",
       {{"<ssd:Elements>", "<ssd:Elements>\n      <ssd:System name=\"inner\"/>"}},
       "<ssd:System name=\"inner\"/>",
       "ssd:System \"inner\"",
       "a nested system"},
      {"not an FMU",
       {{kM2, kM2 + " type=\"application/x-ssp-definition\""}},
       kM2,
       "ssd:Component \"m2\"",
       "components are FMUs"},
      {"unknown implementation",
       {{kM2, kM2 + " implementation=\"Scheduled\""}},
       kM2,
       "ssd:Component \"m2\"",
       "implementation = \"Scheduled\" is not supported"},
      {"co-simulation of a Model Exchange FMU",
       {{kM2, kM2 + " implementation=\"CoSimulation\""}},
       kM2,
       "ssd:Component \"m2\"",
       "interface = \"co-simulation\": the FMU has no <CoSimulation> interface"},
      {"system connector",
       {{kToM1, "startConnector=\"in\" endElement=\"m1\""}},
       "startConnector=\"in\"",
       "ssd:Connection",
       "a connector of the system itself"},
      {"signal dictionary",
       {{"</ssd:Connections>", "</ssd:Connections>\n    <ssd:SignalDictionaries/>"}},
       "<ssd:SignalDictionaries/>",
       "ssd:SignalDictionaries",
       "signal dictionaries (ssb)"},
      {"units defined nowhere",
       {{kM1X, "name=\"x\" kind=\"output\"><ssc:Real unit=\"m\"/>"},
        {"kind=\"input\" name=\"force\"><ssc:Real/>",
         "kind=\"input\" name=\"force\"><ssc:Real unit=\"mm\"/>"}},
       kToM2,
       "ssd:Connection m1.x -> m2.force",
       "joins unit \"m\" to unit \"mm\" (or convert with an ssc:LinearTransformation and "
       "suppressUnitConversion = \"true\"): unit \"m\" is defined nowhere"},
      {"parameter unit",
       {{"name=\"force\" kind=\"input\"><ssc:Real/></ssd:Connector>",
         "name=\"force\" kind=\"input\"><ssc:Real/></ssd:Connector>\n"
         "          <ssd:Connector name=\"c\" kind=\"parameter\"><ssc:Real unit=\"N/m\"/>"
         "</ssd:Connector>"},
        {kBinding,
         "<ssd:ParameterBinding><ssd:ParameterValues>" +
             parameter_set("<ssv:Parameter name=\"c\"><ssv:Real value=\"1\" unit=\"N/mm\"/>"
                           "</ssv:Parameter>") +
             "</ssd:ParameterValues></ssd:ParameterBinding>"}},
       "<ssv:Parameter name=\"c\">",
       "ssv:Parameter \"c\"",
       "has unit \"N/mm\", connector m1.c"},
      {"parameter mapping",
       {{kBinding,
         "<ssd:ParameterBinding source=\"resources/p.ssv\">\n"
         "<ssd:ParameterMapping source=\"resources/m.ssm\"/></ssd:ParameterBinding>"}},
       "<ssd:ParameterMapping",
       "ssd:ParameterMapping",
       "parameter mappings (ssm)"},
      {"connected integer connector",
       {{kM1X, "name=\"x\" kind=\"output\"><ssc:Integer/>"}},
       kToM2,
       "ssd:Connection m1.x -> m2.force",
       "connects m1.x, an ssc:Integer connector: an SSP's connections are translated for "
       "ssc:Real connectors only"},
      {"connected calculatedParameter connector",
       {{kM1X, "name=\"x\" kind=\"calculatedParameter\"><ssc:Real/>"}},
       kToM2,
       "ssd:Connection m1.x -> m2.force",
       "connects m1.x, a calculatedParameter connector: macrostep couples a component's output "
       "to a component's input at every macro step"},
      {"inout connector",
       {{kM1X, "name=\"x\" kind=\"inout\"><ssc:Real/>"}},
       "kind=\"inout\"",
       "ssd:Connector \"x\"",
       "kind = \"inout\" is not supported"},
      {"missing FMU",
       {{kM2 + " source=\"resources/oscillator.fmu\"", kM2 + " source=\"resources/missing.fmu\""}},
       kM2,
       "ssd:Component \"m2\"",
       "source = \"resources/missing.fmu\": no such file"},
      {"missing parameter set",
       {{"resources/p.ssv", "resources/q.ssv"}},
       "resources/q.ssv",
       "ssd:ParameterBinding",
       "source = \"resources/q.ssv\": no such file"},
      {"URI with a scheme",
       {{"resources/p.ssv", "http://example.org/p.ssv"}},
       "http://example.org/p.ssv",
       "ssd:ParameterBinding",
       "not URIs with a scheme"},
      {"string parameter",
       {{kBinding,
         "<ssd:ParameterBinding><ssd:ParameterValues>" +
             parameter_set("<ssv:Parameter name=\"c\"><ssv:String value=\"a\"/></ssv:Parameter>") +
             "</ssd:ParameterValues></ssd:ParameterBinding>"}},
       "<ssv:String",
       "ssv:String",
       "parameter values are ssv:Real, ssv:Integer or ssv:Boolean"},
      {"malformed XML",
       {{"</ssd:Elements>", "</ssd:Element>"}},
       "</ssd:Element>",
       "",
       "is not well-formed XML"},
      {"input fed twice",
       {{kToM1, "startElement=\"m2\" startConnector=\"x\" endElement=\"m2\""}},
       "startElement=\"m2\" startConnector=\"x\" endElement=\"m2\"",
       "ssd:Connection m2.x -> m2.force",
       "an input takes one connection"},
      {"undeclared connector",
       {{kToM2, "startElement=\"m1\" startConnector=\"y\" endElement=\"m2\""}},
       "startConnector=\"y\"",
       "ssd:Connection",
       "component \"m1\" has no connector \"y\""},
      {"output to output",
       {{"endElement=\"m2\" endConnector=\"force\"", "endElement=\"m2\" endConnector=\"x\""}},
       kToM2,
       "ssd:Connection m1.x -> m2.x",
       "connects a connector of kind output to one of kind output"},
      {"start time",
       {{"<ssd:DefaultExperiment stopTime=\"0.05\"/>",
         "<ssd:DefaultExperiment startTime=\"1\" stopTime=\"2\"/>"}},
       "<ssd:DefaultExperiment",
       "ssd:DefaultExperiment",
       "macrostep runs start at t = 0"},
      {"unknown element",
       {{"</ssd:Connections>", "</ssd:Connections>\n    <ssd:Variants/>"}},
       "<ssd:Variants/>",
       "ssd:Variants",
       "is not supported in an ssd:System"},
      {"system binding without a component",
       {{"</ssd:Connections>",
         "</ssd:Connections>\n    "
         "<ssd:ParameterBindings><ssd:ParameterBinding><ssd:ParameterValues>" +
             parameter_set("<ssv:Parameter name=\"m3.c\"><ssv:Real value=\"1\"/></ssv:Parameter>") +
             "</ssd:ParameterValues></ssd:ParameterBinding></ssd:ParameterBindings>"}},
       "<ssv:Parameter name=\"m3.c\">",
       "ssv:Parameter \"m3.c\"",
       "names no component's variable"},
      // Found by the configuration's own checks, located at the element the line came from.
      {"name that is no column name",
       {{"<ssd:Component name=\"m2\"", "<ssd:Component name=\"m 2\""},
        {"endElement=\"m2\"", "endElement=\"m 2\""},
        {"startElement=\"m2\"", "startElement=\"m 2\""}},
       "<ssd:Component name=\"m 2\"",
       "ssd:Component \"m 2\"",
       "must consist of ASCII letters, digits"},
  };
}

std::string edited(const std::vector<Edit>& edits) {
  std::string text = kBaseSsd;
  for (const Edit& e : edits) {
    const auto at = text.find(e.from);
    EXPECT_NE(at, std::string::npos) << e.from;
    if (at != std::string::npos) text.replace(at, e.from.size(), e.to);
  }
  return text;
}

TEST(SspRefusals, TheBaseRunsAndEveryRefusalNamesFileLineAndElementWithStatus2) {
  const fs::path dir = refusal_dir();
  write_file(dir / "base.ssd", kBaseSsd);
  const AppRun base = macrostep(dir, "run base.ssd --executor inprocess");
  ASSERT_EQ(base.status, 0) << base.output;
  EXPECT_TRUE(fs::exists(dir / "base.csv"));

  std::set<std::string> problems;
  int k = 0;
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    const std::string file = "case" + std::to_string(++k) + ".ssd";
    const std::string text = edited(c.edits);
    write_file(dir / file, text);
    const AppRun r = macrostep(dir, "run " + file);
    EXPECT_EQ(r.status, 2) << r.output;
    const std::string where = file + ":" + std::to_string(line_of(text, c.at)) + ": " +
                              (c.element.empty() ? "" : c.element + ": ");
    EXPECT_EQ(r.output.rfind(where, 0), 0u) << "expected " << where << "\n" << r.output;
    EXPECT_NE(r.output.find(c.problem), std::string::npos) << r.output;
    EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
    problems.insert(c.problem);
  }
  EXPECT_EQ(problems.size(), cases().size()) << "two refusals share a message";
  EXPECT_TRUE(tmp_is_empty(dir)) << "a refused run left files in $TMPDIR";
  fs::remove_all(dir);
}

TEST(SspRefusals, WithoutADefaultExperimentTheTimeComesFromSet) {
  const fs::path dir = refusal_dir();
  write_file(dir / "untimed.ssd", edited({{"<ssd:DefaultExperiment stopTime=\"0.05\"/>", ""}}));
  AppRun r = macrostep(dir, "run untimed.ssd --executor inprocess");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("untimed.ssd: ssd:DefaultExperiment: the SSD gives no stopTime"),
            std::string::npos)
      << r.output;
  r = macrostep(dir,
                "run untimed.ssd --executor inprocess --set simulation.end_time=0.05 "
                "--set simulation.output_interval=1e-3");
  EXPECT_EQ(r.status, 0) << r.output;
  fs::remove_all(dir);
}

TEST(SspRefusals, PackagesThatAreNoSspAreRefusedAndLeaveNothingBehind) {
  const fs::path dir = refusal_dir();
  write_file(dir / "text.ssp", "not a zip archive\n");
  AppRun r = macrostep(dir, "run text.ssp");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("text.ssp: not a zip archive"), std::string::npos) << r.output;

  // A zip without SystemStructure.ssd at its root.
  fs::create_directories(dir / "zip");
  write_file(dir / "zip" / "other.ssd", kBaseSsd);
  const std::string zip = "cd '" + (dir / "zip").string() + "' && '" + CMAKE_BINARY +
                          "' -E tar cf ../nossd.ssp --format=zip other.ssd";
  ASSERT_EQ(std::system(zip.c_str()), 0);
  r = macrostep(dir, "run nossd.ssp");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("nossd.ssp: has no SystemStructure.ssd at its root"), std::string::npos)
      << r.output;

  r = macrostep(dir, "run absent.ssp");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("absent.ssp: cannot open it: No such file"), std::string::npos)
      << r.output;

  // A valid package refused after it was unpacked: a wrong --set.
  fs::copy_file(SSP_PACKAGE, dir / "two.ssp");
  r = macrostep(dir, "run two.ssp --set cosim.rtol=2");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("--set cosim.rtol=2"), std::string::npos) << r.output;
  // The FMU's refusal names the FMU in the package, not in the directory it was unpacked to.
  r = macrostep(dir, "run two.ssp --set subsystem.m1.parameters.mass=1");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_EQ(r.output.rfind("two.ssp/SystemStructure.ssd:17: ssd:Component \"m1\": FMU "
                           "two.ssp/resources/oscillator.fmu: parameters: \"mass\"",
                           0),
            0u)
      << r.output;
  EXPECT_TRUE(tmp_is_empty(dir)) << "a refused run left files in $TMPDIR";
  fs::remove_all(dir);
}

}  // namespace
}  // namespace macrostep::ssp_testing

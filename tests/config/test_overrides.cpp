// --set KEY=VALUE (config::Override): an edit of the file's tree before it is read. An edit must
// give what the same value written in the file gives, pass through the file's checks, and be
// named in every message about its value instead of a file line.
#include <gtest/gtest.h>

#include <string>
#include <variant>
#include <vector>

#include "macrostep/config/run_config.hpp"

namespace {

using macrostep::config::ConfigError;
using macrostep::config::CosimScheme;
using macrostep::config::parse_config;
using macrostep::config::RunConfig;
using macrostep::library::DriveTrainParameters;

// A chain with two forces and a [cosim] table; end_time = 1.0 (tree_with relies on it).
const std::string kSetChain = R"(# a comment
[model]
masses = 6
[model.element]
c = 1.0e4
[[model.force]]
type = "harmonic"
all = true
amplitude = 1.0
omega = 10.0
[[model.force]]
type = "harmonic"
masses = [6]
amplitude = 2.0
omega = 20.0
[partition]
subsystems = 2
[simulation]
end_time = 1.0
output_interval = 0.1
[cosim]
rtol = 1.0e-4
)";

// Three named subsystems of arrays and inline tables, and a named connection.
const std::string kSetSystem = R"([[subsystem]]
name = "motor"
model = "drive_train"
inertia = [0.05, 0.01]
shaft = [{c = 2.0e3, d = 0.5}]
left_coupled = false
[[subsystem]]
name = "load"
model = "drive_train"
inertia = [0.02, 0.5]
shaft = [{c = 1.0e3, d = 0.2}]
right_coupled = false
[[connection]]
name = "shaft"
law = "rotational_spring_damper"
from = ["motor.phi_2", "motor.omega_2", "load.phi_1", "load.omega_1"]
to = ["motor.tau_right", "load.tau_left"]
c = 500.0
[simulation]
end_time = 1.0
output_interval = 0.1
)";

// `text` with `from` replaced by `to` (which must occur once).
std::string edited(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  EXPECT_EQ(text.find(from, at + 1), std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

// The tree that `text` and the edits `sets` give, as TOML (with one edit that changes nothing,
// so that there is a rendering): equal trees read to equal configurations.
std::string tree_with(const std::string& text, std::vector<std::string> sets) {
  sets.push_back("simulation.end_time=1.0");
  const std::string rendered = parse_config(text, "t.toml", sets).overridden_text;
  return rendered.substr(rendered.find('\n') + 1);  // without the header comment
}

// The message of the ConfigError that `sets` on `text` give, or "(accepted)".
std::string set_message(const std::string& text, const std::vector<std::string>& sets) {
  try {
    parse_config(text, "t.toml", sets);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(Overrides, WithoutEditsTheFileIsTheConfiguration) {
  const RunConfig c = parse_config(kSetChain, "t.toml");
  EXPECT_TRUE(c.overrides.empty());
  EXPECT_TRUE(c.overridden_text.empty());
  EXPECT_EQ(c.effective_text(), kSetChain);
}

TEST(Overrides, AnEditGivesTheValueAndTheTreeOfTheEditedFile) {
  const RunConfig c = parse_config(kSetChain, "t.toml", {"cosim.rtol=1e-5"});
  EXPECT_EQ(c.cosim.rtol, 1e-5);
  EXPECT_EQ(c.text, kSetChain);
  ASSERT_EQ(c.overrides.size(), 1U);
  EXPECT_EQ(c.overrides[0].argument, "cosim.rtol=1e-5");
  EXPECT_EQ(c.overrides[0].path, "cosim.rtol");
  EXPECT_EQ(c.overrides[0].created, "");
  EXPECT_EQ(tree_with(kSetChain, {"cosim.rtol=1e-5"}),
            tree_with(edited(kSetChain, "rtol = 1.0e-4", "rtol = 1e-5"), {}));

  // The effective text names the edits and reads to the same configuration.
  EXPECT_EQ(c.effective_text(), c.overridden_text);
  EXPECT_EQ(c.overridden_text.rfind("# t.toml with --set cosim.rtol=1e-5\n", 0), 0U)
      << c.overridden_text;
  EXPECT_EQ(parse_config(c.overridden_text, "e.toml").cosim.rtol, 1e-5);
  EXPECT_EQ(tree_with(c.overridden_text, {}), tree_with(kSetChain, {"cosim.rtol=1e-5"}));
}

TEST(Overrides, ValuesAreTomlThenNumbersThenStrings) {
  const RunConfig c = parse_config(
      kSetChain, "t.toml",
      {"cosim.scheme=implicit", "cosim.estimator=imCV", "cosim.r_min=.5", "cosim.dead_zone=false",
       "cosim.order=2", "description=\"two words\"", "model.x0=[1, 2, 3, 4, 5, 6]"});
  EXPECT_EQ(c.cosim.scheme, CosimScheme::kImplicit);
  EXPECT_EQ(c.cosim.estimator, macrostep::control::Estimator::kImCV);
  EXPECT_EQ(c.cosim.r_min, 0.5);
  EXPECT_FALSE(c.cosim.dead_zone);
  ASSERT_TRUE(c.cosim.order.has_value());
  EXPECT_EQ(c.cosim.order->kappa, 2);
  EXPECT_EQ(c.description, "two words");
  EXPECT_EQ(c.chain.x0_values, (std::vector<double>{1, 2, 3, 4, 5, 6}));
  // A bare word with TOML's characters in it is still a string.
  EXPECT_EQ(parse_config(kSetChain, "t.toml", {"description=a = [b"}).description, "a = [b");
}

TEST(Overrides, MissingKeysAndTablesAreAdded) {
  const std::string without_cosim = kSetChain.substr(0, kSetChain.find("[cosim]"));
  const RunConfig c =
      parse_config(without_cosim, "t.toml", {"cosim.rtol=1e-5", "solver.rtol=1e-9"});
  EXPECT_TRUE(c.cosim.given);
  EXPECT_EQ(c.cosim.rtol, 1e-5);
  EXPECT_EQ(c.solver.rtol, 1e-9);
  EXPECT_EQ(c.overrides[0].created, "cosim");
  EXPECT_EQ(c.overrides[1].created, "solver");
  EXPECT_EQ(tree_with(without_cosim, {"cosim.rtol=1e-5", "solver.rtol=1e-9"}),
            tree_with(without_cosim + "[solver]\nrtol = 1e-9\n[cosim]\nrtol = 1e-5\n", {}));
  // A key the file lacks in a table it has.
  EXPECT_EQ(parse_config(kSetChain, "t.toml", {"cosim.safety=3"}).cosim.safety, 3.0);
}

TEST(Overrides, ArrayElementsByIndexAndTablesByName) {
  const RunConfig c =
      parse_config(kSetSystem, "t.toml",
                   {"subsystem.motor.inertia=[0.06, 0.02]", "subsystem[2].inertia.2=0.6",
                    "subsystem.load.shaft.1.c=1.5e3", "connection.shaft.c=600"});
  ASSERT_EQ(c.overrides.size(), 4U);
  EXPECT_EQ(c.overrides[0].path, "subsystem[1].inertia");
  EXPECT_EQ(c.overrides[1].path, "subsystem[2].inertia[2]");
  EXPECT_EQ(c.overrides[2].path, "subsystem[2].shaft[1].c");
  EXPECT_EQ(c.overrides[3].path, "connection[1].c");
  const auto& subsystems = c.system_description->subsystems;
  EXPECT_EQ(std::get<DriveTrainParameters>(subsystems[0].model).inertia,
            (std::vector<double>{0.06, 0.02}));
  EXPECT_EQ(std::get<DriveTrainParameters>(subsystems[1].model).inertia,
            (std::vector<double>{0.02, 0.6}));
  EXPECT_EQ(std::get<DriveTrainParameters>(subsystems[1].model).shaft[0].c, 1.5e3);
  std::string file = edited(kSetSystem, "[0.05, 0.01]", "[0.06, 0.02]");
  file = edited(file, "[0.02, 0.5]", "[0.02, 0.6]");
  file = edited(file, "{c = 1.0e3", "{c = 1.5e3");
  file = edited(file, "c = 500.0", "c = 600");
  EXPECT_EQ(
      tree_with(kSetSystem, {"subsystem.motor.inertia=[0.06, 0.02]", "subsystem[2].inertia.2=0.6",
                             "subsystem.load.shaft.1.c=1.5e3", "connection.shaft.c=600"}),
      tree_with(file, {}));
  // The chain's forces by index; the partition.
  const RunConfig chain =
      parse_config(kSetChain, "t.toml", {"model.force.2.omega=30", "partition.subsystems=3"});
  EXPECT_EQ(chain.chain.forces.at(1).omega.a, 30.0);
  EXPECT_EQ(chain.partition.boundaries, (std::vector<std::size_t>{0, 2, 4, 6}));
}

TEST(Overrides, QuotedKeysHoldAnyCharacter) {
  // A key with a dot, as an FMU's variable names have: in quotes.
  const RunConfig c =
      parse_config(kSetChain, "t.toml", {"model.element.\"c\"=2.0", "\"description\"=a=b"});
  EXPECT_EQ(c.chain.element.c, 2.0);
  EXPECT_EQ(c.description, "a=b");
  EXPECT_EQ(set_message(kSetChain, {"model.\"a.b\"=1"})
                .rfind("--set model.\"a.b\"=1: model.a.b: unknown key", 0),
            0U)
      << set_message(kSetChain, {"model.\"a.b\"=1"});
}

TEST(Overrides, LaterEditsWin) {
  EXPECT_EQ(parse_config(kSetChain, "t.toml", {"cosim.rtol=1e-5", "cosim.rtol=1e-6"}).cosim.rtol,
            1e-6);
  // An edit inside a table that an earlier one replaced.
  const RunConfig c = parse_config(kSetChain, "t.toml",
                                   {"model.element={c = 2.0, d = 1.0}", "model.element.d=3.0"});
  EXPECT_EQ(c.chain.element.c, 2.0);
  EXPECT_EQ(c.chain.element.d, 3.0);
}

// Where a table takes exactly one of several keys, an edit of one replaces the file's other: an
// edit cannot remove a key, and the edit says which the run has.
TEST(Overrides, AnEditOfOneOfAlternativeKeysReplacesTheFilesOther) {
  const RunConfig sized = parse_config(kSetChain, "t.toml", {"partition.sizes=[1, 5]"});
  EXPECT_EQ(sized.partition.boundaries, (std::vector<std::size_t>{0, 1, 6}));
  EXPECT_EQ(tree_with(kSetChain, {"partition.sizes=[1, 5]"}),
            tree_with(edited(kSetChain, "subsystems = 2", "sizes = [1, 5]"), {}));
  // A force's selection: the first force's `all` gives way to `masses`.
  const RunConfig picked = parse_config(kSetChain, "t.toml", {"model.force.1.masses=[2, 3]"});
  const auto& selection = picked.chain.forces.at(0).selection;
  EXPECT_EQ(selection.kind, macrostep::library::MassSelection::Kind::kList);
  EXPECT_EQ(selection.masses, (std::vector<std::size_t>{2, 3}));
  // Written twice in the file, they are refused as before.
  EXPECT_NE(set_message(edited(kSetChain, "subsystems = 2", "subsystems = 2\nsizes = [1, 5]"), {})
                .find("give exactly one of subsystems, sizes"),
            std::string::npos);
}

// A key that belongs to one scheme, given by a --set, is left to the run's settings, which know
// the scheme the run has (a --scheme flag may change the file's); the file's own keys are
// checked against the file's scheme here, with their line.
TEST(Overrides, ASchemesKeysFromAnEditWaitForTheRunsScheme) {
  EXPECT_EQ(set_message(kSetChain, {"cosim.sequence=[2, 1]"}), "(accepted)");
  EXPECT_EQ(set_message(kSetChain, {"cosim.omega=0.5", "cosim.final_pass=true"}), "(accepted)");
  EXPECT_EQ(set_message(kSetChain, {"cosim.estimator=\"imMD\""}), "(accepted)");
  EXPECT_EQ(set_message(edited(kSetChain, "rtol = 1.0e-4", "rtol = 1.0e-4\nomega = 0.5"), {}),
            "t.toml:23: cosim.omega: belongs to the iterative schemes (scheme = \"implicit\", "
            "\"semi-implicit\" or \"waveform\"); the explicit scheme has no corrector");
}

TEST(Overrides, TheFilesChecksNameTheEdit) {
  EXPECT_EQ(set_message(kSetChain, {"cosim.rtl=1e-5"})
                .rfind("--set cosim.rtl=1e-5: cosim.rtl: unknown key; did you mean 'rtol'? "
                       "(allowed: scheme, ",
                       0),
            0U)
      << set_message(kSetChain, {"cosim.rtl=1e-5"});
  EXPECT_EQ(set_message(kSetChain, {"cosim.rtol=2"}),
            "--set cosim.rtol=2: cosim.rtol: must be < 1 (got 2)");
  // The value as written, a bare word as a string.
  EXPECT_EQ(set_message(kSetChain, {"cosim.rtol=1.5e0"}),
            "--set cosim.rtol=1.5e0: cosim.rtol: must be < 1 (got 1.5e0)");
  EXPECT_EQ(set_message(kSetChain, {"cosim.rtol=fast"}),
            "--set cosim.rtol=fast: cosim.rtol: must be a number (got string \"fast\")");
  EXPECT_EQ(set_message(kSetChain, {"cosim.scheme=jacobi"}),
            "--set cosim.scheme=jacobi: cosim.scheme: must be one of \"explicit\", \"implicit\", "
            "\"semi-implicit\", \"waveform\", \"gauss-seidel\", \"auto\" (got \"jacobi\")");
  // Inside an edited value; in a table an edit added.
  EXPECT_EQ(set_message(kSetChain, {"model.x0={uniform = [1, -1]}"}),
            "--set model.x0={uniform = [1, -1]}: model.x0.uniform: lower bound must not exceed "
            "upper bound (got [1, -1])");
  EXPECT_EQ(set_message(kSetChain, {"cosimm.rtol=1"})
                .rfind("--set cosimm.rtol=1: cosimm: unknown key; did you mean 'cosim'?", 0),
            0U);
  EXPECT_EQ(set_message(kSetSystem, {"subsystem.motor.inertia=[0.05, -1]"})
                .rfind("--set subsystem.motor.inertia=[0.05, -1]: subsystem[1].inertia", 0),
            0U)
      << set_message(kSetSystem, {"subsystem.motor.inertia=[0.05, -1]"});
  // A problem of the file keeps its line, edits or not.
  EXPECT_EQ(set_message(edited(kSetChain, "rtol = 1.0e-4", "rtol = 2.0"), {"cosim.safety=3"}),
            "t.toml:22: cosim.rtol: must be < 1 (got 2.0)");
}

TEST(Overrides, MalformedEditsAreRefusedByName) {
  const auto expect = [](const std::string& set, const std::string& problem) {
    EXPECT_EQ(set_message(kSetChain, {set}), "--set " + set + ": " + problem) << set;
  };
  expect("cosim.rtol", "must be KEY=VALUE (there is no '=')");
  expect("cosim.rtol=", "no value after '=' (an empty string is --set 'KEY=\"\"')");
  for (const char* key : {"cosim..rtol", ".rtol", "cosim.", "cosim.rtol[x]", "cosim[1]x", "=1",
                          "cosim.\"\"", "cosim.\"rtol", "cosim\"rtol\"", "cosim.\"a\"b"}) {
    const std::string message = set_message(kSetChain, {std::string(key) + "=1"});
    EXPECT_NE(message.find(": KEY must be a dotted path of bare keys"), std::string::npos)
        << key << ": " << message;
  }
  expect("model.force.3.omega=1", "model.force has 2 elements; an index counts from 1 (got 3)");
  expect("model.force.0.omega=1", "model.force has 2 elements; an index counts from 1 (got 0)");
  expect("model.force.big.omega=1",
         "model.force is an array of 2 elements: select one by its index, 1..2");
  expect("cosim.rtol.x=1", "cosim.rtol is a single value, not a table: it has no key 'x'");
  EXPECT_EQ(set_message(kSetSystem, {"subsystem.moter.inertia=[1, 1]"}),
            "--set subsystem.moter.inertia=[1, 1]: no element of subsystem is named \"moter\" "
            "(names: \"motor\", \"load\")");
  // Deep nesting, as in a file.
  const std::string deep = "cosim.rtol=" + std::string(40, '[') + std::string(40, ']');
  EXPECT_NE(set_message(kSetChain, {deep}).find("nest more than 32 deep"), std::string::npos);
}

TEST(Overrides, ErrorsFoundAfterReadingNameTheEdit) {
  // The sequence's count is checked by the run (against the built system).
  const RunConfig c = parse_config(kSetChain.substr(0, kSetChain.find("[cosim]")), "t.toml",
                                   {"cosim.scheme=gauss-seidel", "cosim.estimator=none",
                                    "cosim.step_size=1e-3", "cosim.sequence=[1]"});
  EXPECT_EQ(c.cosim.sequence, (std::vector<std::size_t>{0}));
  EXPECT_EQ(c.cosim.sequence_line, 0U);
  EXPECT_EQ(macrostep::config::origin(c, c.cosim.sequence_line, "cosim.sequence"),
            "--set cosim.sequence=[1]");
  EXPECT_EQ(macrostep::config::origin(c, 0, "cosim.sequence[1]"), "--set cosim.sequence=[1]");
  EXPECT_EQ(macrostep::config::origin(c, 0, "model.masses"), "t.toml");
  EXPECT_EQ(macrostep::config::origin(c, 0, "cosim"), "--set cosim.scheme=gauss-seidel");
  EXPECT_EQ(macrostep::config::origin(c, 21, "cosim.rtol"), "t.toml:21");
  EXPECT_EQ(std::string(macrostep::config::error_at(c, 0, "cosim.sequence", "bad").what()),
            "--set cosim.sequence=[1]: cosim.sequence: bad");
}

}  // namespace

// A control character in a name the user gives is refused when the system description is read
// (exit 2, file and line), and the message that shows the name stays one line.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "binary_fixture.hpp"

namespace {

using macrostep::testing::Outcome;

class NameMessages : public macrostep::testing::BinaryTest {
 protected:
  // Two drive trains joined by a shaft; `name` is the first one's name as TOML text.
  void write_config(const std::string& name) const {
    write_file("c.toml", "[[subsystem]]\nname = " + name +
                             "\nmodel = \"drive_train\"\ninertia = [1.0]\nleft_coupled = false\n"
                             "[[subsystem]]\nname = \"b\"\nmodel = \"drive_train\"\ninertia = "
                             "[1.0]\nright_coupled = false\n"
                             "[[connection]]\nname = \"shaft\"\nlaw = "
                             "\"rotational_spring_damper\"\nfrom = [\"a.phi_1\", \"a.omega_1\", "
                             "\"b.phi_1\", \"b.omega_1\"]\nto = [\"a.tau_right\", \"b.tau_left\"]\n"
                             "c = 100.0\n[simulation]\nend_time = 0.1\noutput_interval = 0.01\n");
  }
};

TEST_F(NameMessages, ANewlineInASubsystemNameIsRefusedOnOneLine) {
  write_config("\"le\\nft\"");
  const Outcome o = macrostep("run c.toml --output r.csv");
  EXPECT_EQ(o.status, 2);
  EXPECT_EQ(o.err,
            "c.toml:2: subsystem[1].name: must not contain control characters (got \"le\\nft\", "
            "one at byte 2)\n");
  EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1);
}

TEST_F(NameMessages, AnEscapeCharacterIsShownEscaped) {
  write_config("\"a\\u001b[31m\"");
  const Outcome o = macrostep("run c.toml --output r.csv");
  EXPECT_EQ(o.status, 2);
  EXPECT_NE(o.err.find("(got \"a\\x1b[31m\", one at byte 1)"), std::string::npos) << o.err;
  EXPECT_EQ(o.err.find('\x1b'), std::string::npos) << o.err;
}

}  // namespace

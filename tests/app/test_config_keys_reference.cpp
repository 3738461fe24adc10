// The reference of the configuration keys against the reader: docs/reference/configuration-keys.md
// documents, per table, exactly the keys that `macrostep config-keys` says the reader accepts
// (printed from the key tables the readers check with). A key that a reader accepts and the
// reference lacks fails, and so does a key or a table the reference lists that no reader
// accepts. The tables of models with a parameter description are documented by
// docs/reference/models.md (`macrostep models`) plus the keys every such table has.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "binary_fixture.hpp"

namespace {

using macrostep::testing::Outcome;
using KeysByTable = std::map<std::string, std::set<std::string>>;

// The heading of configuration-keys.md whose keys every [[subsystem]] of a model of models.md
// has besides the model's parameters.
const std::string kRegisteredModels = "[[subsystem]] with a model of models.md";

std::string source_file(const std::string& path) {
  std::ifstream in(std::string(MACROSTEP_SOURCE_DIR) + "/" + path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// `macrostep config-keys`: "TABLE: key, key, ..." per line.
KeysByTable accepted_keys(const std::string& out) {
  KeysByTable tables;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    const auto colon = line.find(": ");
    if (colon == std::string::npos) {
      ADD_FAILURE() << "config-keys printed a line without \": \": " << line;
      continue;
    }
    std::set<std::string>& keys = tables[line.substr(0, colon)];
    std::istringstream list(line.substr(colon + 2));
    for (std::string key; std::getline(list, key, ',');) {
      keys.insert(key.substr(key.find_first_not_of(' ')));
    }
  }
  return tables;
}

// Every `...` span of `text`.
std::vector<std::string> backticked(const std::string& text) {
  static const std::regex span("`([^`]+)`");
  std::vector<std::string> out;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), span); it != std::sregex_iterator();
       ++it) {
    out.push_back((*it)[1].str());
  }
  return out;
}

// The tables of a Markdown reference: under each heading of `level` ("### ", "## "), its title
// without backticks, the backticked keys of the first cell of every table row.
KeysByTable documented_keys(const std::string& text, const std::string& level) {
  KeysByTable tables;
  std::string title;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind('#', 0) == 0) {
      title.clear();
      if (line.rfind(level, 0) != 0) continue;
      for (char c : line.substr(level.size())) {
        if (c != '`') title += c;
      }
      tables[title];
      continue;
    }
    if (title.empty() || line.rfind("| ", 0) != 0) continue;
    const auto end = line.find(" |", 1);
    for (const std::string& key : backticked(line.substr(1, end))) tables[title].insert(key);
  }
  return tables;
}

// `a` without the elements of `b`, as a list for messages.
std::string missing_from(const std::set<std::string>& a, const std::set<std::string>& b) {
  std::string out;
  for (const std::string& x : a) {
    if (b.count(x) > 0) continue;
    if (!out.empty()) out.append(", ");
    out.append(x);
  }
  return out;
}

class ConfigKeysReference : public macrostep::testing::BinaryTest {};

TEST_F(ConfigKeysReference, ListsExactlyTheKeysEveryTableAccepts) {
  const Outcome o = macrostep("config-keys");
  ASSERT_EQ(o.status, 0) << o.err;
  const KeysByTable accepted = accepted_keys(o.out);
  ASSERT_GE(accepted.size(), 30u) << o.out;
  ASSERT_TRUE(accepted.count("[cosim]") > 0 && accepted.count("[[model.force]] with type = "
                                                              "\"impulse\"") > 0)
      << o.out;
  const KeysByTable doc =
      documented_keys(source_file("docs/reference/configuration-keys.md"), "### ");
  const KeysByTable models = documented_keys(source_file("docs/reference/models.md"), "## ");
  ASSERT_TRUE(doc.count(kRegisteredModels) > 0) << "no section \"### " << kRegisteredModels << "\"";
  static const std::regex subsystem(R"re(\[\[subsystem\]\] with model = "([a-z_0-9]+)")re");
  for (const auto& [table, keys] : accepted) {
    std::set<std::string> listed;
    std::smatch model;
    if (doc.count(table) > 0) {
      listed = doc.at(table);
    } else if (std::regex_match(table, model, subsystem) && models.count(model[1].str()) > 0) {
      listed = models.at(model[1].str());
      listed.insert(doc.at(kRegisteredModels).begin(), doc.at(kRegisteredModels).end());
    } else {
      ADD_FAILURE() << "docs/reference/configuration-keys.md has no section \"### " << table
                    << "\" (keys: " << missing_from(keys, {}) << ")";
      continue;
    }
    EXPECT_EQ(missing_from(keys, listed), "")
        << table << ": keys the reader accepts, missing from the reference";
    EXPECT_EQ(missing_from(listed, keys), "")
        << table << ": keys the reference lists, which the reader does not accept";
  }
  for (const auto& [table, keys] : doc) {
    EXPECT_TRUE(accepted.count(table) > 0 || table == kRegisteredModels)
        << "docs/reference/configuration-keys.md documents \"" << table
        << "\", which is no table of the reader (macrostep config-keys)";
  }
}

}  // namespace

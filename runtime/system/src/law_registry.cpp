// The coupling-law registry (law_registry.hpp).
#include "macrostep/system/law_registry.hpp"

#include <deque>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>

#include "builtin_laws.hpp"

namespace macrostep::system {

namespace {

struct Registry {
  std::mutex mutex;
  std::deque<LawEntry> entries;  // a deque: entries keep their addresses as it grows
};

void add(Registry& r, LawEntry entry) {
  if (entry.name.empty() || entry.writes.empty() || !entry.parse || !entry.make) {
    throw std::logic_error("register_law: an entry needs a name, writes, parse and make");
  }
  for (const LawEntry& e : r.entries) {
    if (e.name == entry.name) {
      throw std::logic_error("register_law: coupling law \"" + entry.name +
                             "\" is registered already");
    }
  }
  r.entries.push_back(std::move(entry));
}

// The registry with the built-in laws, in the order messages list them.
Registry& registry() {
  static Registry r;
  static const bool built = [] {
    add(r, detail::spring_damper_entry());
    add(r, detail::rotational_spring_damper_entry());
    add(r, detail::signal_entry());
    add(r, detail::displacement_entry());
    add(r, detail::hydraulic_node_entry());
    add(r, detail::joint_entry());
    return true;
  }();
  (void)built;
  return r;
}

}  // namespace

double positive(const LawTable& table, std::string_view key) {
  const double v = table.number(key);
  if (!(v > 0.0)) table.fail(key, "must be > 0 (got " + table.source_text(key) + ")");
  return v;
}

double non_negative(const LawTable& table, std::string_view key) {
  const double v = table.number(key);
  if (!(v >= 0.0)) table.fail(key, "must be >= 0 (got " + table.source_text(key) + ")");
  return v;
}

void register_law(LawEntry entry) {
  Registry& r = registry();
  const std::lock_guard lock(r.mutex);
  add(r, std::move(entry));
}

const LawEntry* find_law(std::string_view name) {
  Registry& r = registry();
  const std::lock_guard lock(r.mutex);
  for (const LawEntry& e : r.entries) {
    if (e.name == name) return &e;
  }
  return nullptr;
}

const LawEntry& law_entry(std::string_view name) {
  if (const LawEntry* e = find_law(name)) return *e;
  throw std::invalid_argument("unknown coupling law \"" + std::string(name) + "\"");
}

std::vector<std::string> law_names() {
  Registry& r = registry();
  const std::lock_guard lock(r.mutex);
  std::vector<std::string> names;
  for (const LawEntry& e : r.entries) names.push_back(e.name);
  return names;
}

}  // namespace macrostep::system

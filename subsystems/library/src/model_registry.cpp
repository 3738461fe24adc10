// The model registry (model_registry.hpp).
#include "macrostep/library/model_registry.hpp"

#include <deque>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>

#include "builtin_models.hpp"

namespace macrostep::library {

namespace {

struct ModelRegistry {
  std::mutex mutex;
  std::deque<ModelEntry> entries;  // a deque: entries keep their addresses as it grows
};

void add_model(ModelRegistry& r, ModelEntry entry) {
  if (entry.name.empty() || !entry.build) {
    throw std::logic_error("register_model: an entry needs a name and a build function");
  }
  for (const ModelEntry& e : r.entries) {
    if (e.name == entry.name) {
      throw std::logic_error("register_model: model \"" + entry.name + "\" is registered already");
    }
  }
  r.entries.push_back(std::move(entry));
}

// The registry with the built-in models, in the order messages list them.
ModelRegistry& model_registry() {
  static ModelRegistry r;
  static const bool built = [] {
    add_model(r, detail::hydraulic_cylinder_entry());
    add_model(r, detail::hydraulic_line_entry());
    add_model(r, detail::pid_entry());
    add_model(r, detail::belt_drive_entry());
    add_model(r, detail::oscillator_mass_entry());
    add_model(r, detail::dc_motor_entry());
    add_model(r, detail::constant_entry());
    add_model(r, detail::step_entry());
    add_model(r, detail::ramp_entry());
    add_model(r, detail::sine_entry());
    add_model(r, detail::table_entry());
    add_model(r, detail::gain_entry());
    add_model(r, detail::sum_entry());
    return true;
  }();
  (void)built;
  return r;
}

}  // namespace

void ParameterValues::set(std::string name, ParameterValue value) {
  for (auto& [n, v] : entries_) {
    if (n == name) {
      v = std::move(value);
      return;
    }
  }
  entries_.emplace_back(std::move(name), std::move(value));
}

const ParameterValue* ParameterValues::find(std::string_view name) const {
  for (const auto& [n, v] : entries_) {
    if (n == name) return &v;
  }
  return nullptr;
}

const ParameterValue& ParameterValues::at(std::string_view name) const {
  if (const ParameterValue* v = find(name)) return *v;
  throw std::invalid_argument("model parameter " + std::string(name) + " has no value");
}

namespace {

template <class T>
const T& typed(const ParameterValue& v, std::string_view name) {
  if (const T* t = std::get_if<T>(&v)) return *t;
  throw std::invalid_argument("model parameter " + std::string(name) + " has another type");
}

}  // namespace

double ParameterValues::number(std::string_view name) const {
  return typed<double>(at(name), name);
}
std::int64_t ParameterValues::integer(std::string_view name) const {
  return typed<std::int64_t>(at(name), name);
}
bool ParameterValues::boolean(std::string_view name) const {
  return typed<bool>(at(name), name);
}
const std::string& ParameterValues::string(std::string_view name) const {
  return typed<std::string>(at(name), name);
}
const std::vector<double>& ParameterValues::numbers(std::string_view name) const {
  return typed<std::vector<double>>(at(name), name);
}

void register_model(ModelEntry entry) {
  ModelRegistry& r = model_registry();
  const std::lock_guard lock(r.mutex);
  add_model(r, std::move(entry));
}

const ModelEntry* find_model(std::string_view name) {
  ModelRegistry& r = model_registry();
  const std::lock_guard lock(r.mutex);
  for (const ModelEntry& e : r.entries) {
    if (e.name == name) return &e;
  }
  return nullptr;
}

std::vector<std::string> model_names() {
  ModelRegistry& r = model_registry();
  const std::lock_guard lock(r.mutex);
  std::vector<std::string> names;
  for (const ModelEntry& e : r.entries) names.push_back(e.name);
  return names;
}

ParameterValues default_values(const ModelEntry& entry) {
  ParameterValues values;
  for (const ParameterSpec& p : entry.parameters) {
    if (!p.required) values.set(p.name, p.default_value);
  }
  return values;
}

}  // namespace macrostep::library

// The registry of interface-Jacobian strategies and the one list of the built-in variants
// (jacobian_registry.hpp).
#include "macrostep/corrector/jacobian_registry.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace macrostep::corrector {

// Defined in each variant's own file.
void register_fd_jacobian(JacobianRegistry& registry);
void register_sap_jacobian(JacobianRegistry& registry);
void register_reuse_jacobian(JacobianRegistry& registry);
void register_quasi_newton_jacobian(JacobianRegistry& registry);
void register_heun_jacobian(JacobianRegistry& registry);
void register_broyden_jacobian(JacobianRegistry& registry);

void InterfaceJacobianStrategy::import_state(const std::vector<std::vector<double>>& state) {
  if (!state.empty()) {
    throw std::invalid_argument("this interface Jacobian keeps nothing across steps");
  }
}

JacobianRegistry::JacobianRegistry() {
  register_fd_jacobian(*this);
  register_sap_jacobian(*this);
  register_reuse_jacobian(*this);
  register_quasi_newton_jacobian(*this);
  register_heun_jacobian(*this);
  register_broyden_jacobian(*this);
}

JacobianRegistry& JacobianRegistry::instance() {
  static JacobianRegistry registry;
  return registry;
}

void JacobianRegistry::add(std::string name, std::string description, JacobianFactory make) {
  if (name.empty()) throw std::logic_error("an interface Jacobian strategy needs a name");
  if (find(name) != nullptr) {
    throw std::logic_error(
        fmt::format("interface Jacobian strategy \"{}\" is registered twice", name));
  }
  if (!make) {
    throw std::logic_error(fmt::format("interface Jacobian strategy \"{}\" has no factory", name));
  }
  entries_.push_back({std::move(name), std::move(description), std::move(make)});
}

const JacobianEntry* JacobianRegistry::find(std::string_view name) const {
  for (const JacobianEntry& e : entries_) {
    if (e.name == name) return &e;
  }
  return nullptr;
}

std::unique_ptr<InterfaceJacobianStrategy> JacobianRegistry::make(
    std::string_view name, const CorrectorOptions& options) const {
  const JacobianEntry* e = find(name);
  if (e == nullptr) {
    throw std::invalid_argument(
        fmt::format("unknown interface Jacobian \"{}\" (one of {})", name,
                    names_where([](const JacobianTraits&) { return true; })));
  }
  return e->make(options);
}

std::vector<std::string_view> JacobianRegistry::names() const {
  std::vector<std::string_view> out;
  for (const JacobianEntry& e : entries_) out.push_back(e.name);
  return out;
}

std::string JacobianRegistry::names_where(const std::function<bool(const JacobianTraits&)>& keep,
                                          std::string_view last) const {
  std::vector<std::string_view> names;
  const CorrectorOptions defaults;
  for (const JacobianEntry& e : entries_) {
    if (keep(e.make(defaults)->traits())) names.push_back(e.name);
  }
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? fmt::format(" {} ", last) : std::string(", ");
    out += names[i];
  }
  return out;
}

JacobianTraits jacobian_traits(std::string_view name) {
  const CorrectorOptions defaults;
  return JacobianRegistry::instance().make(name, defaults)->traits();
}

}  // namespace macrostep::corrector

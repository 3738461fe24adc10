// The FMU subsystem (fmu_subsystem.hpp): unzip, read modelDescription.xml, load the binary,
// and the Subsystem interface over a pool of FMU instances.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <filesystem>
#include <limits>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>

#include "fmu_subsystem.hpp"

namespace macrostep::fmu {

namespace {

namespace fs = std::filesystem;
using model::SparsityPattern;
using model::StateRole;

[[noreturn]] void refuse(const std::string& why) {
  throw std::invalid_argument(why);
}

std::string names_of(const ModelXml& xml, auto&& keep) {
  std::vector<std::string> names;
  for (const auto& v : xml.variables) {
    if (keep(v)) names.push_back("\"" + v.name + "\"");
  }
  if (names.empty()) return "none";
  if (names.size() > 12) {
    names.resize(12);
    names.push_back("...");
  }
  return fmt::format("{}", fmt::join(names, ", "));
}

bool settable(const ModelVariable& v) {
  return v.type != VariableType::kOther && v.variability != "constant" &&
         (v.causality == "parameter" || v.causality == "input" || v.start.has_value() ||
          !v.starts.empty()) &&
         v.causality != "calculatedParameter" && v.causality != "independent";
}

}  // namespace

FmuSubsystem::FmuSubsystem(const FmuDescription& d) : path_(d.path) {
  const ArchiveLimits limits = ArchiveLimits::from_environment();
  const ArchiveListing listing = list_fmu_archive(d.path, limits);
  if (!listing.model_description) refuse("the archive has no modelDescription.xml");
  const ModelXml xml = parse_model_description(*listing.model_description);
  if (!xml.model_exchange && !xml.co_simulation) {
    refuse(xml.scheduled_execution
               ? "declares only <ScheduledExecution> (FMI 3 clocked partitions run by the "
                 "importer's scheduler): macrostep runs Model Exchange and Co-Simulation FMUs"
               : "declares neither <ModelExchange> nor <CoSimulation>");
  }
  if (!xml.clocks.empty()) {
    refuse(fmt::format("has clocks ({}): FMI 3 clocks are not supported",
                       fmt::join(xml.clocks, ", ")));
  }
  // Model Exchange where the FMU has it (macrostep's IDA integrates the equations: exact
  // rollback and clones need nothing from the FMU); else Co-Simulation; or what `interface` says.
  co_simulation_ = d.interface.empty() ? !xml.model_exchange : d.interface == "co-simulation";
  if (co_simulation_ ? !xml.co_simulation : !xml.model_exchange) {
    refuse(fmt::format("interface = \"{}\": the FMU has no <{}> interface", d.interface,
                       co_simulation_ ? "CoSimulation" : "ModelExchange"));
  }
  if (co_simulation_) {
    pattern_.column_start.assign(1, 0);  // no states: the FMU keeps its own
  } else {
    read_structure(xml);
  }
  read_variables(xml, d);
  const std::string binary =
      fmt::format("binaries/{}/{}.so", xml.fmi_major == 2 ? "linux64" : "x86_64-linux",
                  co_simulation_ ? xml.cs.model_identifier : xml.model_identifier);
  if (std::find(listing.files.begin(), listing.files.end(), binary) == listing.files.end()) {
    std::vector<std::string> present;
    for (const std::string& name : listing.files) {
      if (name.rfind("binaries/", 0) == 0) present.push_back(name);
    }
    refuse(fmt::format("has no binary for this platform ({}; the archive has {})", binary,
                       present.empty() ? std::string("no binaries at all")
                                       : fmt::format("{}", fmt::join(present, ", "))));
  }
  dir_ = unpack_fmu(d.path, binary, limits);
  const fs::path root = dir_.path();
  const bool resources = fs::exists(root / "resources");
  binary_ = (xml.fmi_major == 2 ? load_fmi2_binary : load_fmi3_binary)(
      xml, co_simulation_ ? Interface::kCoSimulation : Interface::kModelExchange, path_,
      (root / binary).string(), (root / "resources").string());
  // The library stays mapped; nothing is left behind if this process is killed.
  if (!resources) dir_.remove();
  directional_ = xml.directional_derivatives;
  only_once_ = co_simulation_ ? xml.cs.only_once_per_process : xml.only_once_per_process;
  interpolates_inputs_ = co_simulation_ && xml.cs.can_interpolate_inputs;
  variable_step_ = xml.cs.variable_step;
  // The first instance: instantiation and initialization fail here, not in the run.
  auto first = instantiate();
  x0_.resize(states_.size());
  first->continuous_states(x0_);
  if (!co_simulation_ && !states_.empty()) {
    std::string bad;
    std::vector<double> nominals = read_nominals(*first, bad);
    if (!bad.empty()) refuse(bad);
    if (std::any_of(nominals.begin(), nominals.end(), [](double v) { return v != 1.0; })) {
      nominals_ = std::move(nominals);
    }
  }
  set_up_events(xml, *first);
  free_.push_back(std::move(first));
}

// The nominals scale the states' absolute solver tolerances (model::Subsystem::state_nominals);
// FMI requires them finite and > 0, and 1 where the FMU knows none.
std::vector<double> FmuSubsystem::read_nominals(Instance& instance, std::string& bad) const {
  std::vector<double> nominals(states_.size(), 1.0);
  instance.continuous_state_nominals(nominals);  // leaves the 1s where the FMU gives none
  for (std::size_t i = 0; i < nominals.size() && bad.empty(); ++i) {
    if (!model::valid_nominal(nominals[i])) {
      bad = fmt::format(
          "its nominal value of the state {} is {} (FMI requires a finite value > 0, "
          "and 1 where the FMU knows none)",
          state_names_[i], nominals[i]);
    }
  }
  return nominals;
}

// An FMU with event indicators, a time event or completed integrator steps, and every
// Co-Simulation FMU: events handled in modes, serialized FMU states where the FMU can, else live
// modes of one instance (restorable() false).
void FmuSubsystem::set_up_events(const ModelXml& xml, Instance& first) {
  const bool serializable = co_simulation_ ? xml.cs.can_serialize_state : xml.can_serialize_state;
  double next_time_event = std::numeric_limits<double>::infinity();
  if (!co_simulation_) {
    next_time_event = first.next_time_event;
    indicator_count_ = xml.event_indicators;
    // The indicators once at t = 0: an FMU that does not answer for as many as it declares is
    // refused here, not in the run.
    std::vector<double> g(indicator_count_);
    if (!g.empty() && (!set_point(first, 0.0, x0_, input_start_) || !first.event_indicators(g))) {
      refuse("its event indicators at t = 0 were discarded");
    }
    const bool events = indicator_count_ > 0 || std::isfinite(next_time_event) ||
                        (serializable && xml.needs_completed_integrator_step);
    if (!events) return;
    completed_steps_ = serializable && xml.needs_completed_integrator_step;
  }
  first.mode = 0;
  if (serializable) {
    initial_mode_ =
        std::make_shared<const FmuMode>(*this, 0, first.serialize_state(), next_time_event);
    return;
  }
  // The state stays in one instance: the next one the pool makes (first goes to the pool).
  live_ = true;
  live_instance_ = instantiate();
  initial_mode_ = std::make_shared<const FmuMode>(*this, 0, std::vector<std::byte>{},
                                                  next_time_event, std::vector<double>{},
                                                  /*live=*/true);
}

void FmuSubsystem::initial_state(std::span<const double> u0, std::span<double> z0,
                                 std::span<double> zp0) const {
  std::copy(x0_.begin(), x0_.end(), z0.begin());
  Lease instance(*this, initial_mode_.get());
  if (!set_point(*instance, 0.0, z0, u0) || !instance->derivatives(zp0)) {
    throw FmuCallError("FMU " + path_ + ": the derivatives at t = 0 were discarded");
  }
}

void FmuSubsystem::residual_in(const FmuMode* mode, double t, std::span<const double> z,
                               std::span<const double> zp, std::span<const double> u,
                               std::span<double> r) const {
  Lease instance(*this, mode);
  if (!set_point(*instance, t, z, u) || !instance->derivatives(r)) {
    std::fill(r.begin(), r.end(), std::numeric_limits<double>::quiet_NaN());
    return;
  }
  for (std::size_t i = 0; i < r.size(); ++i) r[i] = zp[i] - r[i];
}

void FmuSubsystem::outputs_in(const FmuMode* mode, double t, std::span<const double> z,
                              std::span<const double> u, std::span<double> y) const {
  Lease instance(*this, mode);
  if (!set_point(*instance, t, z, u) || !get_outputs(*instance, y)) {
    std::fill(y.begin(), y.end(), std::numeric_limits<double>::quiet_NaN());
  }
}

// States in the order of the ModelStructure's derivatives (an array derivative's elements in
// row-major order); the Jacobian pattern from their dependencies.
void FmuSubsystem::read_structure(const ModelXml& xml) {
  // Without continuous states the FMU is a state-less subsystem: no IDA, outputs y(t, u) in its
  // current mode (the integrator's algebraic path, with its events).
  std::vector<Element> derivatives;
  std::map<std::size_t, std::vector<std::size_t>> states_of_variable;  // variable → states
  for (const Unknown& u : xml.derivatives) {
    const ModelVariable& der = xml.variables[u.variable];
    if (!der.derivative_of) {
      refuse("modelDescription.xml: the derivative \"" + der.name +
             "\" in ModelStructure names no state (attribute derivative)");
    }
    const ModelVariable& state = xml.variables[*der.derivative_of];
    if (state.size() != der.size()) {
      refuse(
          fmt::format("modelDescription.xml: the derivative \"{}\" has {} elements, its state "
                      "\"{}\" {}",
                      der.name, der.size(), state.name, state.size()));
    }
    derivative_refs_.push_back(der.value_reference);
    for (std::size_t k = 0; k < state.size(); ++k) {
      states_of_variable[*der.derivative_of].push_back(states_.size());
      states_.push_back({state.value_reference, k, state.size()});
      derivatives.push_back({der.value_reference, k, der.size()});
      state_names_.push_back(state.element_name(k));
      state_units_.push_back(state.unit);
      state_descriptions_.push_back(state.description);
    }
  }
  const std::size_t n = states_.size();
  const auto same = [](const Element& a, const Element& b) {
    return a.ref == b.ref && a.index == b.index;
  };
  // der(x_j) is the state x_k (the same element): x_j a position, x_k a velocity.
  roles_.assign(n, StateRole::kOther);
  for (std::size_t j = 0; j < n; ++j) {
    for (std::size_t k = 0; k < n; ++k) {
      if (k != j && same(derivatives[j], states_[k])) {
        roles_[j] = StateRole::kPosition;
        roles_[k] = StateRole::kVelocity;
      }
    }
  }
  // An array derivative's every element depends on every element of the variables it names.
  std::vector<std::vector<bool>> depends(n, std::vector<bool>(n, false));  // [row][column]
  for (std::size_t i = 0, d = 0; d < xml.derivatives.size(); ++d) {
    const auto& deps = xml.derivatives[d].dependencies;
    for (std::size_t e = 0; e < xml.variables[xml.derivatives[d].variable].size(); ++e, ++i) {
      depends[i][i] = true;
      if (!deps) std::fill(depends[i].begin(), depends[i].end(), true);
      if (!deps) continue;
      for (std::size_t v : *deps) {
        const auto it = states_of_variable.find(v);
        if (it == states_of_variable.end()) continue;
        for (std::size_t column : it->second) depends[i][column] = true;
      }
    }
  }
  pattern_.n = n;
  pattern_.column_start.assign(1, 0);
  for (std::size_t j = 0; j < n; ++j) {
    for (std::size_t i = 0; i < n; ++i) {
      if (depends[i][j]) pattern_.row_index.push_back(static_cast<std::int64_t>(i));
    }
    pattern_.column_start.push_back(static_cast<std::int64_t>(pattern_.row_index.size()));
  }
}

// Start values from `parameters`: a number or boolean for a scalar, a JSON array (nested by
// dimension or flat, row-major) of as many as it has elements for an FMI 3 array.
void FmuSubsystem::read_parameters(const ModelXml& xml, const FmuDescription& d) {
  const auto parameters = nlohmann::json::parse(d.parameters.empty() ? "{}" : d.parameters);
  for (const auto& [name, value] : parameters.items()) {
    const auto index = xml.find(name);
    if (!index || !settable(xml.variables[*index])) {
      refuse(
          fmt::format("parameters: \"{}\" is not a variable whose start value can be set "
                      "(parameters of this FMU: {})",
                      name, names_of(xml, [](const ModelVariable& v) {
                        return v.causality == "parameter" && settable(v);
                      })));
    }
    const ModelVariable& v = xml.variables[*index];
    std::vector<double> values;
    bool numbers = true;
    const auto flatten = [&](const auto& self, const nlohmann::json& j) -> void {
      if (j.is_array()) {
        for (const auto& e : j) self(self, e);
      } else if (j.is_number() || j.is_boolean()) {
        values.push_back(j.is_boolean() ? (j.get<bool>() ? 1.0 : 0.0) : j.get<double>());
      } else {
        numbers = false;
      }
    };
    flatten(flatten, value);
    if (v.dimensions.empty() ? !(value.is_number() || value.is_boolean()) : !numbers) {
      refuse(fmt::format(
          "parameters: \"{}\" must be {}", name,
          v.dimensions.empty() ? "a number or a boolean" : "an array of numbers or booleans"));
    }
    if (values.size() != v.size()) {
      refuse(fmt::format("parameters: \"{}\" has {} elements ({}), the value gives {}", name,
                         v.size(), fmt::join(v.dimensions, " x "), values.size()));
    }
    for (const double x : values) {
      if (const std::string problem = start_value_problem(v.type, x); !problem.empty()) {
        refuse(fmt::format("parameters: \"{}\" = {}: {}", name, x, problem));
      }
    }
    starts_.push_back({name, v.value_reference, v.type, std::move(values)});
  }
}

// The inputs and outputs by name (or by causality): scalar variables, elements of FMI 3 arrays
// ("y[2]") or whole arrays (each element one input or output).
void FmuSubsystem::read_variables(const ModelXml& xml, const FmuDescription& d) {
  read_parameters(xml, d);
  // Outputs are Real, Integer or Boolean (read as numbers); so are inputs named in `inputs` (by
  // default only the Real ones: an Integer or Boolean input is rarely a coupling target, and an
  // unconnected one would be refused).
  const auto pick = [&](const std::vector<std::string>& names, bool listed, const char* causality,
                        const char* what, std::vector<ElementRef>& out) {
    const bool output = std::string(what) == "output";
    const auto typed = [&](const ModelVariable& v) {
      return v.type == VariableType::kReal ||
             ((output || !names.empty()) &&
              (v.type == VariableType::kInteger || v.type == VariableType::kBoolean));
    };
    const auto all_of = [&](std::size_t i) {
      for (std::size_t k = 0; k < xml.variables[i].size(); ++k) out.push_back({i, k});
    };
    if (names.empty() && !listed) {
      for (std::size_t i = 0; i < xml.variables.size(); ++i) {
        if (typed(xml.variables[i]) && xml.variables[i].causality == causality) all_of(i);
      }
      return;
    }
    for (const std::string& name : names) {
      const auto element = xml.find_element(name);
      const auto whole = xml.find(name);
      const std::size_t i = element ? element->variable : whole.value_or(0);
      if ((!element && !whole) || !typed(xml.variables[i]) ||
          (!output && xml.variables[i].causality != causality)) {
        refuse(
            fmt::format("{}s: \"{}\" is not a Real, Integer or Boolean {} variable of this "
                        "FMU (candidates: {})",
                        what, name, what, names_of(xml, [&](const ModelVariable& v) {
                          return typed(v) && v.causality == causality;
                        })));
      }
      if (element) {
        out.push_back(*element);
      } else {
        all_of(i);
      }
    }
  };
  std::vector<ElementRef> inputs, outputs;
  pick(d.inputs, d.inputs_listed, "input", "input", inputs);
  pick(d.outputs, false, "output", "output", outputs);
  read_inputs(xml, inputs);
  read_outputs(xml, outputs, inputs);
}

void FmuSubsystem::read_inputs(const ModelXml& xml, const std::vector<ElementRef>& inputs) {
  for (const ElementRef& e : inputs) {
    const ModelVariable& v = xml.variables[e.variable];
    input_vr_.push_back(v.value_reference);
    input_names_.push_back(v.element_name(e.element));
    input_start_.push_back(v.element_start(e.element).value_or(0.0));
    input_types_.push_back(v.type);
    real_inputs_ = real_inputs_ && v.type == VariableType::kReal && v.dimensions.empty();
  }
  input_groups_ = group_elements(xml, inputs);
  for (const ElementGroup& g : input_groups_) {
    if (g.type == VariableType::kReal) {
      real_input_vr_ = g.refs;
      real_input_start_ = g.values;
      continue;
    }
    // Integer and Boolean inputs are set before initialization like a start value.
    for (std::size_t r = 0, at = 0; r < g.refs.size(); ++r) {
      const ModelVariable& v = xml.variables[*xml.find_reference(g.refs[r])];
      const auto first = g.values.begin() + static_cast<std::ptrdiff_t>(at);
      starts_.push_back(
          {v.name, g.refs[r], g.type,
           std::vector<double>(first, first + static_cast<std::ptrdiff_t>(v.size()))});
      at += v.size();
    }
  }
}

void FmuSubsystem::read_outputs(const ModelXml& xml, const std::vector<ElementRef>& outputs,
                                const std::vector<ElementRef>& inputs) {
  for (const ElementRef& e : outputs) {
    const ModelVariable& v = xml.variables[e.variable];
    output_vr_.push_back(v.value_reference);
    output_names_.push_back(v.element_name(e.element));
    output_units_.push_back(v.unit);
    const double nominal = v.nominal.value_or(1.0);
    if (!model::valid_nominal(nominal)) {
      refuse(
          fmt::format("the nominal attribute of its output {} is {} (FMI requires a finite "
                      "value > 0)",
                      v.name, nominal));
    }
    output_nominals_.push_back(nominal);
    output_descriptions_.push_back(v.description);
    real_outputs_ = real_outputs_ && v.type == VariableType::kReal && v.dimensions.empty();
    // Feed-through: the ModelStructure lists the output with an input among its dependencies or
    // without dependencies (it may depend on every known); a state itself has none.
    const bool state = std::any_of(states_.begin(), states_.end(), [&](const Element& s) {
      return s.ref == v.value_reference && s.index == e.element;
    });
    if (inputs.empty() || state) continue;
    const auto entry = std::find_if(xml.outputs.begin(), xml.outputs.end(),
                                    [&](const Unknown& u) { return u.variable == e.variable; });
    if (entry == xml.outputs.end() || !entry->dependencies) {
      feedthrough_ = true;
      continue;
    }
    for (std::size_t dep : *entry->dependencies) {
      if (std::any_of(inputs.begin(), inputs.end(),
                      [&](const ElementRef& in) { return in.variable == dep; })) {
        feedthrough_ = true;
      }
    }
  }
  output_groups_ = group_elements(xml, outputs);
}

std::vector<ElementGroup> group_elements(const ModelXml& xml,
                                         std::span<const ElementRef> elements) {
  std::vector<ElementGroup> groups;
  for (const VariableType type :
       {VariableType::kReal, VariableType::kInteger, VariableType::kBoolean}) {
    ElementGroup g;
    g.type = type;
    std::map<std::size_t, std::size_t> first;  // variable → index of its first value
    for (std::size_t e = 0; e < elements.size(); ++e) {
      const ModelVariable& v = xml.variables[elements[e].variable];
      if (v.type != type) continue;
      auto [it, added] = first.emplace(elements[e].variable, g.values.size());
      if (added) {
        g.refs.push_back(v.value_reference);
        for (std::size_t k = 0; k < v.size(); ++k) {
          g.values.push_back(v.element_start(k).value_or(0.0));
        }
      }
      g.places.emplace_back(e, it->second + elements[e].element);
    }
    if (!g.refs.empty()) groups.push_back(std::move(g));
  }
  return groups;
}

// Time, states and inputs: Real inputs with the states in one call, others by type; an array's
// elements that are not inputs keep their start values.
bool FmuSubsystem::set_point(Instance& instance, double t, std::span<const double> z,
                             std::span<const double> u) const {
  if (real_inputs_) return instance.set(t, z, input_vr_, u);
  bool reals = false;
  for (const ElementGroup& g : input_groups_) {
    std::vector<double> values = g.values;
    for (const auto& [e, at] : g.places) values[at] = u[e];
    if (g.type == VariableType::kReal) {
      if (!instance.set(t, z, g.refs, values)) return false;
      reals = true;
    } else {
      if (!reals && !instance.set(t, z, {}, {})) return false;
      reals = true;
      if (!instance.set_values(g.refs, g.type, values)) return false;
    }
  }
  return reals || instance.set(t, z, {}, {});
}

// Scalar Real outputs in one call into y; otherwise each type's variables, their elements into
// their places.
bool FmuSubsystem::get_outputs(Instance& instance, std::span<double> y) const {
  if (real_outputs_) return instance.get_reals(output_vr_, y);
  for (const ElementGroup& g : output_groups_) {
    std::vector<double> values(g.values.size());
    if (!instance.get_values(g.refs, g.type, values)) return false;
    for (const auto& [e, at] : g.places) y[e] = values[at];
  }
  return true;
}

std::unique_ptr<Instance> FmuSubsystem::instantiate() const {
  return binary_->instantiate(starts_, real_input_vr_, real_input_start_);
}

std::unique_ptr<Instance> FmuSubsystem::acquire(std::uint64_t number) const {
  std::unique_lock lock(mutex_);
  if (only_once_) returned_.wait(lock, [&] { return !free_.empty(); });
  if (!free_.empty()) {
    auto in_mode = std::find_if(free_.rbegin(), free_.rend(),
                                [&](const auto& instance) { return instance->mode == number; });
    auto it = in_mode != free_.rend() ? std::prev(in_mode.base()) : std::prev(free_.end());
    auto instance = std::move(*it);
    free_.erase(it);
    return instance;
  }
  ++created_;
  lock.unlock();
  return instantiate();  // in the initial mode, number 0
}

FmuSubsystem::Lease::Lease(const FmuSubsystem& s, const FmuMode* mode) : s_(s) {
  if (mode && mode->live()) {
    live_lock_ = std::unique_lock(s.live_mutex_);
    if (mode->number() != s.live_number_) {
      throw std::logic_error(fmt::format(
          "FMU {}: evaluated in an earlier mode than its newest, which an FMU without "
          "canGetAndSetFMUstate and canSerializeFMUstate cannot go back to (a rollback or a "
          "clone the run should have refused)",
          s.path_));
    }
    instance_ = s.live_instance_.get();
    return;
  }
  owned_ = s.acquire(mode ? mode->number() : 0);
  instance_ = owned_.get();
  if (mode && instance_->mode != mode->number()) {
    instance_->mode = Instance::kNoMode;              // until the state is set
    instance_->deserialize_state(mode->fmu_state());  // on failure the destructor releases
    instance_->mode = mode->number();
  }
}

void FmuSubsystem::release(std::unique_ptr<Instance> instance) const {
  {
    const std::lock_guard lock(mutex_);
    free_.push_back(std::move(instance));
  }
  if (only_once_) returned_.notify_one();
}

// cj·I − ∂f/∂x in pattern order: a column of ∂f/∂x from the FMU's directional derivative, or a
// forward difference with step sqrt(eps)·max(1, |x_j|).
void FmuSubsystem::jacobian_in(const FmuMode* mode, double t, std::span<const double> z,
                               std::span<const double>, std::span<const double> u, double cj,
                               std::span<double> values) const {
  const std::size_t n = states_.size();
  std::vector<double> f0(n), column(n), x(z.begin(), z.end());
  Lease instance(*this, mode);
  bool ok = set_point(*instance, t, z, u) && (directional_ || instance->derivatives(f0));
  for (std::size_t j = 0; j < n && ok; ++j) {
    if (directional_) {
      ok = instance->directional_derivative(derivative_refs_, states_[j].ref, states_[j].index,
                                            states_[j].size, column);
    } else {
      const double h = 1.4901161193847656e-8 * std::max(1.0, std::abs(z[j]));
      x[j] = z[j] + h;
      ok = set_point(*instance, t, x, u) && instance->derivatives(column);
      x[j] = z[j];
      for (std::size_t i = 0; i < n; ++i) column[i] = (column[i] - f0[i]) / h;
    }
    for (auto k = pattern_.column_start[j]; k < pattern_.column_start[j + 1]; ++k) {
      const auto i = static_cast<std::size_t>(pattern_.row_index[static_cast<std::size_t>(k)]);
      values[static_cast<std::size_t>(k)] = (i == j ? cj : 0.0) - column[i];
    }
  }
  if (!ok) std::fill(values.begin(), values.end(), std::numeric_limits<double>::quiet_NaN());
}

std::unique_ptr<model::Subsystem> build_fmu_subsystem(const FmuDescription& description) {
  try {
    return std::make_unique<FmuSubsystem>(description);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument("FMU " + description.path + ": " + e.what());
  } catch (const FmuCallError& e) {
    throw std::invalid_argument(e.what());
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument("FMU " + description.path + ": parameters: " + e.what());
  } catch (const std::filesystem::filesystem_error& e) {
    throw std::invalid_argument("FMU " + description.path + ": " + e.what());
  }
}

}  // namespace macrostep::fmu

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
         (v.causality == "parameter" || v.causality == "input" || v.start.has_value()) &&
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
  // The first instance: instantiation and initialization fail here, not in the run.
  auto first = instantiate();
  x0_.resize(state_vr_.size());
  first->continuous_states(x0_);
  set_up_events(xml, *first);
  free_.push_back(std::move(first));
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
                                                  next_time_event, /*live=*/true);
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

// States in the order of the ModelStructure's derivatives; the Jacobian pattern from their
// dependencies.
void FmuSubsystem::read_structure(const ModelXml& xml) {
  // Without continuous states the FMU is a state-less subsystem: no IDA, outputs y(t, u) in its
  // current mode (the integrator's algebraic path, with its events).
  std::map<std::size_t, std::size_t> state_of_variable;
  for (const Unknown& u : xml.derivatives) {
    const ModelVariable& der = xml.variables[u.variable];
    if (!der.derivative_of) {
      refuse("modelDescription.xml: the derivative \"" + der.name +
             "\" in ModelStructure names no state (attribute derivative)");
    }
    const ModelVariable& state = xml.variables[*der.derivative_of];
    if (!state.dimensions.empty()) {
      refuse(
          "the state \"" + state.name +
          "\" is an array variable (FMI 3 <Dimension>): macrostep integrates scalar states only");
    }
    state_of_variable.emplace(*der.derivative_of, state_vr_.size());
    state_vr_.push_back(state.value_reference);
    derivative_vr_.push_back(der.value_reference);
    state_names_.push_back(state.name);
  }
  const std::size_t n = state_vr_.size();
  // der(x_j) is the state x_k (the same value reference): x_j a position, x_k a velocity.
  roles_.assign(n, StateRole::kOther);
  for (std::size_t j = 0; j < n; ++j) {
    for (std::size_t k = 0; k < n; ++k) {
      if (k != j && derivative_vr_[j] == state_vr_[k]) {
        roles_[j] = StateRole::kPosition;
        roles_[k] = StateRole::kVelocity;
      }
    }
  }
  std::vector<std::vector<bool>> depends(n, std::vector<bool>(n, false));  // [row][column]
  for (std::size_t i = 0; i < n; ++i) {
    depends[i][i] = true;
    const auto& deps = xml.derivatives[i].dependencies;
    for (std::size_t j = 0; j < n; ++j) {
      if (!deps) depends[i][j] = true;
    }
    if (!deps) continue;
    for (std::size_t v : *deps) {
      if (const auto it = state_of_variable.find(v); it != state_of_variable.end()) {
        depends[i][it->second] = true;
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

// Start values from `parameters`; the inputs and outputs by name (or by causality).
void FmuSubsystem::read_variables(const ModelXml& xml, const FmuDescription& d) {
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
    if (!value.is_number() && !value.is_boolean()) {
      refuse(fmt::format("parameters: \"{}\" must be a number or a boolean", name));
    }
    const ModelVariable& v = xml.variables[*index];
    if (!v.dimensions.empty()) {
      refuse(
          fmt::format("parameters: \"{}\" is an array variable (FMI 3 <Dimension>), whose "
                      "start values macrostep does not set",
                      name));
    }
    starts_.push_back({name, v.value_reference, v.type,
                       value.is_boolean() ? (value.get<bool>() ? 1.0 : 0.0) : value.get<double>()});
  }
  // Outputs are Real, Integer or Boolean (read as numbers); so are inputs named in `inputs` (by
  // default only the Real ones: an Integer or Boolean input is rarely a coupling target, and an
  // unconnected one would be refused). FMI 3 arrays are not coupled: one named, or one among the
  // defaults, is refused.
  const auto pick = [&](const std::vector<std::string>& names, const char* causality,
                        const char* what, std::vector<std::size_t>& out) {
    const bool output = std::string(what) == "output";
    const auto typed = [&](const ModelVariable& v) {
      return v.type == VariableType::kReal ||
             ((output || !names.empty()) &&
              (v.type == VariableType::kInteger || v.type == VariableType::kBoolean));
    };
    const auto array = [&](const ModelVariable& v) {
      refuse(fmt::format(
          "{}s: \"{}\" is an array variable (FMI 3 <Dimension>): macrostep "
          "couples scalar variables only{}",
          what, v.name,
          names.empty() ? fmt::format("; name the scalar {}s to use with `{}s`", what, what) : ""));
    };
    if (names.empty()) {
      for (std::size_t i = 0; i < xml.variables.size(); ++i) {
        const ModelVariable& v = xml.variables[i];
        if (!typed(v) || v.causality != causality) continue;
        if (!v.dimensions.empty()) array(v);
        out.push_back(i);
      }
      return;
    }
    for (const std::string& name : names) {
      const auto index = xml.find(name);
      if (!index || !typed(xml.variables[*index]) ||
          (!output && xml.variables[*index].causality != causality)) {
        refuse(
            fmt::format("{}s: \"{}\" is not a Real, Integer or Boolean {} variable of this "
                        "FMU (candidates: {})",
                        what, name, what, names_of(xml, [&](const ModelVariable& v) {
                          return typed(v) && v.causality == causality;
                        })));
      }
      if (!xml.variables[*index].dimensions.empty()) array(xml.variables[*index]);
      out.push_back(*index);
    }
  };
  std::vector<std::size_t> inputs, outputs;
  pick(d.inputs, "input", "input", inputs);
  pick(d.outputs, "output", "output", outputs);
  for (std::size_t i : inputs) {
    const ModelVariable& v = xml.variables[i];
    input_vr_.push_back(v.value_reference);
    input_names_.push_back(v.name);
    input_start_.push_back(v.start.value_or(0.0));
    input_types_.push_back(v.type);
    if (v.type == VariableType::kReal) {
      real_input_vr_.push_back(v.value_reference);
      real_input_start_.push_back(input_start_.back());
    } else {  // set before initialization like a start value
      real_inputs_ = false;
      starts_.push_back({v.name, v.value_reference, v.type, input_start_.back()});
    }
  }
  for (std::size_t o : outputs) {
    output_vr_.push_back(xml.variables[o].value_reference);
    output_names_.push_back(xml.variables[o].name);
    output_units_.push_back(xml.variables[o].unit);
    output_types_.push_back(xml.variables[o].type);
    real_outputs_ = real_outputs_ && output_types_.back() == VariableType::kReal;
    // Feed-through: the ModelStructure lists the output with an input among its dependencies or
    // without dependencies (it may depend on every known); a state itself has none.
    if (inputs.empty() || std::count(state_vr_.begin(), state_vr_.end(), output_vr_.back()) > 0) {
      continue;
    }
    const auto entry = std::find_if(xml.outputs.begin(), xml.outputs.end(),
                                    [&](const Unknown& u) { return u.variable == o; });
    if (entry == xml.outputs.end() || !entry->dependencies) {
      feedthrough_ = true;
      continue;
    }
    for (std::size_t dep : *entry->dependencies) {
      if (std::count(inputs.begin(), inputs.end(), dep) > 0) feedthrough_ = true;
    }
  }
}

// Time, states and inputs: Real inputs with the states in one call, others by type.
bool FmuSubsystem::set_point(Instance& instance, double t, std::span<const double> z,
                             std::span<const double> u) const {
  if (real_inputs_) return instance.set(t, z, input_vr_, u);
  std::vector<double> reals;
  for (std::size_t i = 0; i < u.size(); ++i) {
    if (input_types_[i] == VariableType::kReal) reals.push_back(u[i]);
  }
  if (!instance.set(t, z, real_input_vr_, reals)) return false;
  for (const VariableType type : {VariableType::kInteger, VariableType::kBoolean}) {
    std::vector<unsigned> refs;
    std::vector<double> values;
    for (std::size_t i = 0; i < u.size(); ++i) {
      if (input_types_[i] != type) continue;
      refs.push_back(input_vr_[i]);
      values.push_back(u[i]);
    }
    if (!refs.empty() && !instance.set_values(refs, type, values)) return false;
  }
  return true;
}

// Real outputs in one call; others by type, into their places.
bool FmuSubsystem::get_outputs(Instance& instance, std::span<double> y) const {
  if (real_outputs_) return instance.get_reals(output_vr_, y);
  for (const VariableType type :
       {VariableType::kReal, VariableType::kInteger, VariableType::kBoolean}) {
    std::vector<unsigned> refs;
    std::vector<std::size_t> places;
    for (std::size_t o = 0; o < output_vr_.size(); ++o) {
      if (output_types_[o] != type) continue;
      refs.push_back(output_vr_[o]);
      places.push_back(o);
    }
    if (refs.empty()) continue;
    std::vector<double> values(refs.size());
    if (!instance.get_values(refs, type, values)) return false;
    for (std::size_t k = 0; k < places.size(); ++k) y[places[k]] = values[k];
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
  const std::size_t n = state_vr_.size();
  std::vector<double> f0(n), column(n), x(z.begin(), z.end());
  Lease instance(*this, mode);
  bool ok = set_point(*instance, t, z, u) && (directional_ || instance->derivatives(f0));
  for (std::size_t j = 0; j < n && ok; ++j) {
    if (directional_) {
      ok = instance->directional_derivative(derivative_vr_, state_vr_[j], column);
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

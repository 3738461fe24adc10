// What a plugin declares, checked when it is loaded (plugin_checks.hpp).
#include "macrostep/plugin/plugin_checks.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "macrostep/model/names.hpp"
#include "macrostep/plugin/jacobian_check.hpp"

namespace macrostep::plugin {

namespace {

// A declaration the checks refuse (the plugin's own throws are told apart from it).
class Refused : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

}  // namespace

namespace {

class Checker {
 public:
  Checker(const model::Subsystem& s, const std::string& library) : s_(s), library_(library) {}

  template <class... Args>
  [[noreturn]] void fail(fmt::format_string<Args...> format, Args&&... args) const {
    throw Refused(
        fmt::format("plugin {}: {}", library_, fmt::format(format, std::forward<Args>(args)...)));
  }

  void sizes() const {
    const auto limit = [&](const char* what, std::size_t size, std::size_t max) {
      if (size > max) fail("{}() is {}, more than the limit of {}", what, size, max);
    };
    limit("state_size", s_.state_size(), kMaxStates);
    limit("input_size", s_.input_size(), kMaxInputs);
    limit("output_size", s_.output_size(), kMaxOutputs);
    const auto roles = s_.state_roles();
    if (roles.size() != s_.state_size()) {
      fail("state_roles() has {} entries for {} states", roles.size(), s_.state_size());
    }
    for (std::size_t i = 0; i < roles.size(); ++i) {
      if (roles[i] > model::StateRole::kOther) {
        fail("state_roles()[{}] is {}, not a StateRole", i, static_cast<int>(roles[i]));
      }
    }
    for (std::size_t i = 0; i < s_.output_size(); ++i) {
      const double nominal = s_.output_nominal(i);
      if (!model::valid_nominal(nominal)) {
        fail("output_nominal({}) is {}, not a finite value > 0", i, nominal);
      }
    }
    const auto nominals = s_.state_nominals();
    if (!nominals.empty() && nominals.size() != s_.state_size()) {
      fail("state_nominals() has {} entries for {} states", nominals.size(), s_.state_size());
    }
    for (std::size_t i = 0; i < nominals.size(); ++i) {
      if (!model::valid_nominal(nominals[i])) {
        fail("state_nominals()[{}] is {}, not a finite value > 0", i, nominals[i]);
      }
    }
  }

  void jacobian_pattern() const {
    const model::SparsityPattern& p = s_.jacobian_pattern();
    const std::size_t n = s_.state_size();
    if (p.n != n) fail("the Jacobian pattern is for {} states, the subsystem has {}", p.n, n);
    if (p.column_start.size() != n + 1) {
      fail("the Jacobian pattern's column_start has {} entries, not state_size() + 1 = {}",
           p.column_start.size(), n + 1);
    }
    if (p.column_start[0] != 0) fail("the Jacobian pattern's column_start[0] is not 0");
    for (std::size_t c = 0; c < n; ++c) {
      if (p.column_start[c + 1] < p.column_start[c]) {
        fail("the Jacobian pattern's column_start decreases at column {} ({} after {})", c,
             p.column_start[c + 1], p.column_start[c]);
      }
    }
    if (static_cast<std::uint64_t>(p.column_start[n]) != p.row_index.size()) {
      fail("the Jacobian pattern's column_start ends at {}, but row_index has {} entries",
           p.column_start[n], p.row_index.size());
    }
    for (std::size_t c = 0; c < n; ++c) {
      for (auto k = p.column_start[c]; k < p.column_start[c + 1]; ++k) {
        const std::int64_t row = p.row_index[static_cast<std::size_t>(k)];
        if (row < 0 || static_cast<std::uint64_t>(row) >= n) {
          fail("the Jacobian pattern's row_index[{}] (column {}) is {}, outside 0..{}", k, c, row,
               n - 1);
        }
        if (k > p.column_start[c] && row <= p.row_index[static_cast<std::size_t>(k - 1)]) {
          fail(
              "the Jacobian pattern's rows of column {} do not strictly increase (row_index[{}] "
              "= {} after {})",
              c, k, row, p.row_index[static_cast<std::size_t>(k - 1)]);
        }
      }
    }
  }

  void entry_pattern(const char* what, const model::EntryPattern& p, std::size_t rows,
                     std::size_t columns) const {
    if (p.row.size() != p.column.size()) {
      fail("{}() has {} rows for {} columns", what, p.row.size(), p.column.size());
    }
    std::vector<std::pair<std::size_t, std::size_t>> entries;
    entries.reserve(p.row.size());
    for (std::size_t k = 0; k < p.row.size(); ++k) {
      if (p.row[k] >= rows || p.column[k] >= columns) {
        fail("{}() entry {} is ({}, {}), outside the {} x {} matrix", what, k, p.row[k],
             p.column[k], rows, columns);
      }
      entries.emplace_back(p.row[k], p.column[k]);
    }
    std::sort(entries.begin(), entries.end());
    const auto twice = std::adjacent_find(entries.begin(), entries.end());
    if (twice != entries.end()) {
      fail("{}() has entry ({}, {}) twice", what, twice->first, twice->second);
    }
  }

  void names(const char* what, std::size_t count,
             std::string (model::Subsystem::*name_of)(std::size_t) const) const {
    std::vector<std::string> names(count);
    std::unordered_map<std::string_view, std::size_t> first;  // views into `names`
    first.reserve(count);
    for (std::size_t i = 0; i < count; ++i) {
      names[i] = (s_.*name_of)(i);
      const std::string& name = names[i];
      if (name.empty()) fail("{}({}) is empty", what, i);
      if (const auto at = model::control_character(name)) {
        fail("{}({}) is {}, with a control character at byte {}", what, i, model::quoted(name),
             *at);
      }
      const auto [it, inserted] = first.emplace(name, i);
      if (!inserted) {
        fail("{}({}) and {}({}) are both {}", what, it->second, what, i, model::quoted(name));
      }
    }
  }

  void rest() const {
    if (!std::isfinite(s_.initial_time())) fail("initial_time() is {}", s_.initial_time());
    // Without states and without feed-through nothing carries an input to an output.
    if (s_.state_size() == 0 && s_.input_size() > 0 && s_.output_size() > 0 &&
        !s_.has_feedthrough()) {
      fail(
          "has inputs and outputs but no states, and has_feedthrough() is false: its outputs "
          "cannot depend on its inputs (a block y = g(t, u) declares has_feedthrough())");
    }
    if (!s_.has_feedthrough()) {
      for (std::size_t o = 0; o < s_.output_size(); ++o) {
        if (s_.output_feeds_through(o)) {
          fail("output_feeds_through({}) is true, but has_feedthrough() is false", o);
        }
      }
    }
  }

 private:
  const model::Subsystem& s_;
  const std::string& library_;
};

}  // namespace

std::uint64_t solver_memory_estimate(std::uint64_t states, std::uint64_t nonzeros) {
  return states * kBytesPerState + nonzeros * kBytesPerNonzero;
}

void check_solver_memory(std::uint64_t states, std::uint64_t nonzeros, const std::string& library) {
  const std::uint64_t bytes = solver_memory_estimate(states, nonzeros);
  if (bytes <= kMaxSolverBytes) return;
  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  throw std::invalid_argument(fmt::format(
      "plugin {}: its integrator would need about {:.2f} GiB ({} states, {} Jacobian nonzeros), "
      "more than the limit of {:.0f} GiB per integrator",
      library, static_cast<double>(bytes) / kGiB, states, nonzeros,
      static_cast<double>(kMaxSolverBytes) / kGiB));
}

namespace {

void check_unguarded(const model::Subsystem& subsystem, const std::string& library) {
  const Checker check(subsystem, library);
  check.sizes();
  check.jacobian_pattern();
  check_solver_memory(subsystem.state_size(), subsystem.jacobian_pattern().nonzeros(), library);
  const std::size_t n = subsystem.state_size(), nu = subsystem.input_size(),
                    ny = subsystem.output_size();
  check.entry_pattern("output_jacobian_pattern", subsystem.output_jacobian_pattern(), ny, n);
  check.entry_pattern("input_jacobian_pattern", subsystem.input_jacobian_pattern(), n, nu);
  check.names("state_name", n, &model::Subsystem::state_name);
  check.names("input_name", nu, &model::Subsystem::input_name);
  check.names("output_name", ny, &model::Subsystem::output_name);
  check.rest();
}

}  // namespace

// The declarations are the plugin's code too: what they throw is named as the plugin's.
void check_declarations(const model::Subsystem& subsystem, const std::string& library) {
  try {
    check_unguarded(subsystem, library);
  } catch (const Refused&) {
    throw;
  } catch (const std::exception& e) {
    throw std::invalid_argument(
        fmt::format("plugin {}: a declaration function threw: {}", library, e.what()));
  } catch (...) {
    throw std::invalid_argument(fmt::format(
        "plugin {}: a declaration function threw an exception that is not a std::exception",
        library));
  }
}

namespace {

// The initial point (initial_time() and initial_state() with the inputs 0, as the master first
// evaluates every subsystem) and, if asked, the Jacobians there.
void check_initial_unguarded(const model::Subsystem& s, const std::string& library,
                             bool check_jacobians) {
  const Checker check(s, library);
  const double t0 = s.initial_time();
  if (t0 != model::kStartTime) {
    check.fail(
        "initial_time() is {}, but every run starts at t = {} (the [simulation] interval is "
        "{} .. end_time): return {} from initial_time() and give the model's own time offset as a "
        "parameter",
        t0, model::kStartTime, model::kStartTime, model::kStartTime);
  }
  JacobianPoint at{t0, std::vector<double>(s.state_size()), std::vector<double>(s.state_size()),
                   std::vector<double>(s.input_size(), 0.0)};
  try {
    s.initial_state(at.u, at.z, at.zp);
  } catch (const std::exception& e) {
    check.fail("initial_state() threw at t = {} with the inputs 0: {}", t0, e.what());
  } catch (...) {
    check.fail("initial_state() threw an exception that is not a std::exception");
  }
  for (std::size_t i = 0; i < at.z.size(); ++i) {
    if (!std::isfinite(at.z[i]) || !std::isfinite(at.zp[i])) {
      check.fail("initial_state() gives state {} the value {} and derivative {}",
                 model::quoted(s.state_name(i)), at.z[i], at.zp[i]);
    }
  }
  if (!check_jacobians) return;
  const std::vector<JacobianMismatch> wrong = jacobian_mismatches(s, at);
  if (wrong.empty()) return;
  std::string lines;
  for (const JacobianMismatch& m : wrong) lines += "\n  " + describe(s, m);
  check.fail(
      "its analytic Jacobians disagree with central differences at the initial state (t = {}, "
      "the inputs 0) by more than {:g} of their row's largest entry:{}\nA wrong Jacobian slows "
      "or stops the Newton iterations of the subsystem's IDA and of --monolithic without an "
      "error: correct the function named. If it is right and the differences are not (a kink or "
      "a table at the initial state), set check_jacobians = false in the subsystem's table",
      t0, kJacobianTolerance, lines);
}

}  // namespace

void check_initial_point(const model::Subsystem& subsystem, const std::string& library,
                         bool check_jacobians) {
  try {
    check_initial_unguarded(subsystem, library, check_jacobians);
  } catch (const Refused&) {
    throw;
  } catch (const std::exception& e) {
    throw std::invalid_argument(fmt::format(
        "plugin {}: a model function threw at the initial state: {}", library, e.what()));
  } catch (...) {
    throw std::invalid_argument(fmt::format(
        "plugin {}: a model function threw an exception that is not a std::exception at the "
        "initial state",
        library));
  }
}

}  // namespace macrostep::plugin

// The one reader of every registered model's [[subsystem]] table (system_config.hpp): the
// model's parameter description (library::ModelEntry) gives the keys, types, bounds and
// defaults, so a model's parameters are written once, where the model is.
#include <fmt/format.h>

#include <filesystem>
#include <string>
#include <vector>

#include "system_config.hpp"

namespace macrostep::config::detail {

namespace {

// `value` of `node` within `bound`, else the bound's message at the node.
double bounded(const Node& node, library::Bound bound) {
  const double v = node.number();
  if (bound == library::Bound::kPositive && !(v > 0.0)) {
    node.fail(fmt::format("must be > 0 (got {})", node.source_text()));
  }
  if (bound == library::Bound::kNonNegative && !(v >= 0.0)) {
    node.fail(fmt::format("must be >= 0 (got {})", node.source_text()));
  }
  return v;
}

library::ParameterValue read_value(const Node& node, const library::ParameterSpec& spec) {
  switch (spec.type) {
    case library::ParameterType::kNumber:
      return bounded(node, spec.bound);
    case library::ParameterType::kInteger:
      return node.integer();
    case library::ParameterType::kBool:
      return node.boolean();
    case library::ParameterType::kString:
      return spec.path ? resolved_path(node, "must name a file") : node.string();
    case library::ParameterType::kNumberList:
      break;
  }
  const auto items = node.elements();
  if (spec.size > 0 && items.size() != spec.size) {
    node.fail(fmt::format("must have one entry per {} ({}, got {})", spec.size_what, spec.size,
                          items.size()));
  }
  std::vector<double> out;
  for (const auto& item : items) out.push_back(bounded(item, spec.bound));
  return out;
}

}  // namespace

// A file named by a string value: absolute, or relative to the configuration's directory (as a
// plugin's library); the absolute path, so that workers and resumed runs read the same file.
std::string resolved_path(const Node& node, std::string_view empty) {
  std::filesystem::path path = node.string();
  if (path.empty()) node.fail(std::string(empty));
  if (path.is_relative()) path = std::filesystem::path(node.directory()) / path;
  std::error_code error;
  const auto resolved = std::filesystem::weakly_canonical(std::filesystem::absolute(path), error);
  if (error || !std::filesystem::is_regular_file(resolved)) {
    node.fail(fmt::format("no such file: {}", path.string()));
  }
  return resolved.string();
}

library::RegisteredModel registered_model(const Node& n, const library::ModelEntry& entry) {
  const bool vowel = std::string_view("aeiou").find(entry.name.front()) != std::string_view::npos;
  n.allow_only(registered_model_keys(entry),
               fmt::format(" for {} {}", vowel ? "an" : "a", entry.name));
  library::RegisteredModel m{entry.name, {}};
  for (const auto& p : entry.parameters) {
    if (const auto v = n.find(p.name)) {
      m.values.set(p.name, read_value(*v, p));
    } else if (p.required) {
      (void)n.require(p.name);
    } else {
      m.values.set(p.name, p.default_value);
    }
  }
  if (entry.check) {
    if (const auto problem = entry.check(m.values)) {
      const Node at = problem->key.empty() ? n : n.require(problem->key);
      std::string message = problem->message;
      if (const auto got = message.find("{got}"); got != std::string::npos) {
        message.replace(got, 5, at.source_text());
      }
      at.fail(message);
    }
  }
  return m;
}

}  // namespace macrostep::config::detail

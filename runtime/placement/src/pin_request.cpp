// --pin and [placement] pin: parsing, printing and checking a PinRequest.
#include "macrostep/placement/placement.hpp"

#include <fmt/format.h>
#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>
#include <system_error>
#include <tuple>
#include <utility>

namespace macrostep::placement {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

unsigned parse_index(std::string_view item, std::string_view part, std::string_view whole,
                     std::string_view where) {
  unsigned value = 0;
  const auto* first = part.data();
  const auto* last = part.data() + part.size();
  const auto [ptr, ec] = std::from_chars(first, last, value);
  if (part.empty() || ec != std::errc() || ptr != last) {
    throw std::invalid_argument(fmt::format(
        "--pin '{}': {}'{}' in item '{}' is not a PU number (write OS PU indices and ranges such "
        "as 0,2,4-7{})",
        whole, where, part, item, where.empty() ? "" : ", or * for a process the OS places"));
  }
  if (value >= static_cast<unsigned>(CPU_SETSIZE)) {
    throw std::invalid_argument(fmt::format("--pin '{}': {}PU {} is out of range (at most {})",
                                            whole, where, value, CPU_SETSIZE - 1));
  }
  return value;
}

}  // namespace

// ------------------------------------------------------------------------------- parse_pin

std::string PinRequest::to_string() const {
  switch (policy) {
    case PinPolicy::kNone:
      return "none";
    case PinPolicy::kCompact:
      return "compact";
    case PinPolicy::kScatter:
      return "scatter";
    case PinPolicy::kList:
      return format_pu_list(list);
    case PinPolicy::kMap: {
      std::vector<std::string> entries;
      for (const auto& entry : map) entries.push_back(entry.empty() ? "*" : format_pu_list(entry));
      return fmt::format("map:{}", fmt::join(entries, "/"));
    }
  }
  return "?";
}

namespace {

constexpr std::string_view kAllowed =
    "allowed: none, compact, scatter, a list of OS PU indices and ranges such as 0,2,4-7, or a "
    "per-process map such as map:*/0/1/0/1/2/3";

// The PU items "0,2,4-7" of a list or of one map entry (`where`: "" for a list, "entry 'x' of
// subsystem 2: " for a map), in the given order; a PU may appear once.
std::vector<unsigned> parse_pu_items(std::string_view items, std::string_view whole,
                                     std::string_view where) {
  std::vector<unsigned> pus;
  std::set<unsigned> seen;
  std::string_view rest = items;
  while (true) {
    const std::size_t comma = rest.find(',');
    const std::string_view item = trim(rest.substr(0, comma));
    if (item.empty()) {
      throw std::invalid_argument(fmt::format(
          "--pin '{}': {}empty item in the PU list (write e.g. 0,2,4-7)", whole, where));
    }
    unsigned first = 0, last = 0;
    const std::size_t dash = item.find('-');
    if (dash == std::string_view::npos) {
      first = last = parse_index(item, item, whole, where);
    } else {
      first = parse_index(item, trim(item.substr(0, dash)), whole, where);
      last = parse_index(item, trim(item.substr(dash + 1)), whole, where);
      if (last < first) {
        throw std::invalid_argument(fmt::format(
            "--pin '{}': {}range '{}' is reversed (write {}-{})", whole, where, item, last, first));
      }
    }
    for (unsigned pu = first; pu <= last; ++pu) {
      if (!seen.insert(pu).second) {
        throw std::invalid_argument(
            fmt::format("--pin '{}': {}PU {} is listed twice (at '{}')", whole, where, pu, item));
      }
      pus.push_back(pu);
    }
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  return pus;
}

std::string entry_owner(std::size_t entry) {
  return entry == 0 ? "the master" : fmt::format("subsystem {}", entry);
}

// "map:M/S1/.../Sn" (`entries` is the part after "map:").
PinRequest parse_map(std::string_view entries, std::string_view whole) {
  PinRequest request{PinPolicy::kMap, {}, {}};
  std::string_view rest = entries;
  while (true) {
    const std::size_t slash = rest.find('/');
    const std::string_view entry = trim(rest.substr(0, slash));
    const std::string owner = entry_owner(request.map.size());
    if (entry.empty()) {
      throw std::invalid_argument(fmt::format(
          "--pin '{}': the entry of {} (entry {}) is empty (write * for a process the OS places, "
          "or its PUs such as 0 or 2,3)",
          whole, owner, request.map.size() + 1));
    }
    if (entry == "*") {
      request.map.emplace_back();
    } else {
      request.map.push_back(
          parse_pu_items(entry, whole, fmt::format("entry '{}' of {}: ", entry, owner)));
    }
    if (slash == std::string_view::npos) break;
    rest = rest.substr(slash + 1);
  }
  return request;
}

}  // namespace

PinRequest parse_pin(std::string_view text) {
  const std::string_view whole = trim(text);
  if (whole == "none") return {PinPolicy::kNone, {}, {}};
  if (whole == "compact") return {PinPolicy::kCompact, {}, {}};
  if (whole == "scatter") return {PinPolicy::kScatter, {}, {}};
  if (whole.empty()) throw std::invalid_argument(fmt::format("--pin is empty ({})", kAllowed));
  if (whole.substr(0, 4) == "map:") return parse_map(whole.substr(4), whole);
  const bool looks_like_list = std::all_of(whole.begin(), whole.end(), [](char c) {
    return (c >= '0' && c <= '9') || c == ',' || c == '-' || c == ' ' || c == '\t';
  });
  if (!looks_like_list) {
    throw std::invalid_argument(fmt::format("--pin '{}' is not a policy ({})", whole, kAllowed));
  }
  return {PinPolicy::kList, parse_pu_items(whole, whole, ""), {}};
}

void check_usable(const Topology& topology, const PinRequest& request) {
  std::vector<unsigned> named = request.list;
  for (const auto& entry : request.map) named.insert(named.end(), entry.begin(), entry.end());
  for (unsigned pu : named) {
    if (!topology.has_pu(pu)) {
      throw std::invalid_argument(
          fmt::format("--pin {}: PU {} is not usable by this process (usable PUs: {})",
                      request.to_string(), pu, format_pu_list(topology.pu_os_indices())));
    }
  }
}

std::string format_pu_list(const std::vector<unsigned>& pus) {
  std::string out;
  std::size_t i = 0;
  while (i < pus.size()) {
    std::size_t j = i;
    while (j + 1 < pus.size() && pus[j + 1] == pus[j] + 1) ++j;
    if (!out.empty()) out += ',';
    if (j - i >= 2) {
      out += fmt::format("{}-{}", pus[i], pus[j]);
    } else {
      for (std::size_t m = i; m <= j; ++m) {
        if (m > i) out += ',';
        out += fmt::format("{}", pus[m]);
      }
    }
    i = j + 1;
  }
  return out;
}

// -------------------------------------------------------------------------- plan_placement
}  // namespace macrostep::placement

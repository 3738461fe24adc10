#include "macrostep/control/error_norm.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace macrostep::control {

namespace {

struct GroupTol {
  double atol;
  const std::vector<double>* each;
};

GroupTol group_tol(const ErrorTolerances& tol, WeightGroup group) {
  switch (group) {
    case WeightGroup::kPosition:
      return {tol.atol_pos, &tol.atol_pos_each};
    case WeightGroup::kVelocity:
      return {tol.atol_vel, &tol.atol_vel_each};
    case WeightGroup::kCouplingVariable:
      break;
  }
  return {tol.atol_u, &tol.atol_u_each};
}

GroupTol checked_group_tol(const ErrorTolerances& tol, WeightGroup group, std::size_t n) {
  const GroupTol g = group_tol(tol, group);
  if (!g.each->empty() && g.each->size() != n) {
    throw std::invalid_argument(std::string("error weights: ") + atol_key(group) + " has " +
                                std::to_string(g.each->size()) + " components for " +
                                std::to_string(n) + " variables");
  }
  return g;
}

double atol_at(const GroupTol& g, std::size_t i) {
  return g.each->empty() ? g.atol : (*g.each)[i];
}

void check_atol(double a, const char* name) {
  if (!(a > 0.0) || !std::isfinite(a)) {
    throw std::invalid_argument(std::string("controller tolerances: ") + name +
                                " must be positive and finite, got " + std::to_string(a));
  }
}

}  // namespace

double component_atol(const ErrorTolerances& tol, WeightGroup group, std::size_t index) {
  const GroupTol g = group_tol(tol, group);
  return g.each->empty() ? g.atol : g.each->at(index);
}

const char* atol_key(WeightGroup group) {
  switch (group) {
    case WeightGroup::kPosition:
      return "atol_pos";
    case WeightGroup::kVelocity:
      return "atol_vel";
    case WeightGroup::kCouplingVariable:
      break;
  }
  return "atol_u";
}

ErrorTolerances ErrorTolerances::for_rtol(double rtol) {
  ErrorTolerances t;
  t.rtol = rtol;
  t.atol_pos = 1e-3 * rtol;
  t.atol_vel = rtol;
  t.atol_u = 1e4 * rtol;
  return t;
}

void ErrorTolerances::validate() const {
  if (!(rtol >= 0.0) || !std::isfinite(rtol)) {
    throw std::invalid_argument("controller tolerances: rtol must be >= 0 and finite, got " +
                                std::to_string(rtol));
  }
  check_atol(atol_pos, "atol_pos");
  check_atol(atol_vel, "atol_vel");
  check_atol(atol_u, "atol_u");
  for (double a : atol_pos_each) check_atol(a, "atol_pos (component)");
  for (double a : atol_vel_each) check_atol(a, "atol_vel (component)");
  for (double a : atol_u_each) check_atol(a, "atol_u (component)");
}

void error_weights(std::span<const double> x, const ErrorTolerances& tol, WeightGroup group,
                   std::span<double> w) {
  if (w.size() != x.size()) throw std::invalid_argument("error_weights: size mismatch");
  const GroupTol g = checked_group_tol(tol, group, x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    w[i] = 1.0 / (atol_at(g, i) + tol.rtol * std::abs(x[i]));
  }
}

double wrms_norm(std::span<const double> e, std::span<const double> w) {
  if (e.size() != w.size()) throw std::invalid_argument("wrms_norm: size mismatch");
  if (e.empty()) return 0.0;
  double sum = 0.0;
  for (std::size_t i = 0; i < e.size(); ++i) {
    const double ew = e[i] * w[i];
    sum += ew * ew;
  }
  return std::sqrt(sum / static_cast<double>(e.size()));
}

double scaled_difference_norm(std::span<const double> a, std::span<const double> b, double scale,
                              std::span<const double> reference, const ErrorTolerances& tol,
                              WeightGroup group) {
  if (a.size() != b.size() || a.size() != reference.size()) {
    throw std::invalid_argument("scaled_difference_norm: size mismatch");
  }
  if (a.empty()) return 0.0;
  const GroupTol g = checked_group_tol(tol, group, a.size());
  double sum = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double w = 1.0 / (atol_at(g, i) + tol.rtol * std::abs(reference[i]));
    const double ew = scale * std::abs(a[i] - b[i]) * w;
    sum += ew * ew;
  }
  return std::sqrt(sum / static_cast<double>(a.size()));
}

PerWeightGroup grouped_difference_norms(std::span<const double> a, std::span<const double> b,
                                        std::span<const WeightGroup> groups,
                                        const PerWeightGroup& scale,
                                        std::span<const double> reference,
                                        const ErrorTolerances& tol) {
  if (a.size() != b.size() || a.size() != reference.size() || a.size() != groups.size()) {
    throw std::invalid_argument("grouped_difference_norms: size mismatch");
  }
  std::array<std::size_t, kWeightGroupCount> count{};
  for (WeightGroup g : groups) {
    if (static_cast<std::size_t>(g) >= kWeightGroupCount) {
      throw std::invalid_argument("grouped_difference_norms: unknown weight group");
    }
    ++count[static_cast<std::size_t>(g)];
  }
  std::array<GroupTol, kWeightGroupCount> gt{};
  for (std::size_t g = 0; g < kWeightGroupCount; ++g) {
    // An empty group is never weighted, so its atol vector is not checked (as
    // scaled_difference_norm does for n = 0).
    gt[g] = count[g] == 0 ? GroupTol{0.0, nullptr}
                          : checked_group_tol(tol, static_cast<WeightGroup>(g), count[g]);
  }
  PerWeightGroup sum{};
  std::array<std::size_t, kWeightGroupCount> seen{};
  for (std::size_t i = 0; i < a.size(); ++i) {
    const auto g = static_cast<std::size_t>(groups[i]);
    const double w = 1.0 / (atol_at(gt[g], seen[g]++) + tol.rtol * std::abs(reference[i]));
    const double ew = scale[g] * std::abs(a[i] - b[i]) * w;
    sum[g] += ew * ew;
  }
  PerWeightGroup norm{};
  for (std::size_t g = 0; g < kWeightGroupCount; ++g) {
    if (count[g] > 0) norm[g] = std::sqrt(sum[g] / static_cast<double>(count[g]));
  }
  return norm;
}

double ErrorEstimate::norm() const {
  switch (kind) {
    case Kind::kStates:
      // NaN in either group must fail the test: std::max would drop a NaN second argument.
      if (std::isnan(pos) || std::isnan(vel)) return std::nan("");
      return std::max(pos, vel);
    case Kind::kCouplingVariables:
      return u;
    case Kind::kNone:
      break;
  }
  return 0.0;
}

bool ErrorEstimate::passed() const {
  return norm() <= 1.0;
}

}  // namespace macrostep::control

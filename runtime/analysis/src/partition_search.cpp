// The partition model and its search (partition_search.hpp, beyond the seeds).
#include "macrostep/analysis/partition_search.hpp"

#include "macrostep/polynomials/lagrange.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <span>
#include <stdexcept>
#include <string>

namespace macrostep::analysis {
namespace {

// A subsystem with at most this many micro steps per macro step was held by the macro step.
constexpr double kMacroBoundMicroSteps = 2.0;
constexpr std::size_t kMaxThresholds = 200;

void check_trial(const TrialRun& trial, std::size_t elements, unsigned cores) {
  if (!(trial.duration > 0.0) || !(trial.attempts > 0.0))
    throw std::invalid_argument("partition model: the trial has no duration or no attempts");
  if (trial.subsystems.empty() || trial.subsystems.front().first != 0)
    throw std::invalid_argument("partition model: the trial's subsystems do not start at mass 0");
  for (std::size_t j = 0; j < trial.subsystems.size(); ++j) {
    const TrialSubsystem& s = trial.subsystems[j];
    if (s.last <= s.first || (j > 0 && s.first != trial.subsystems[j - 1].last))
      throw std::invalid_argument("partition model: the trial's subsystems leave a gap");
    if (!(s.micro_steps > 0.0) || !(s.solver_s >= 0.0))
      throw std::invalid_argument("partition model: a trial subsystem took no micro step");
  }
  if (elements != trial.subsystems.back().last + 1)
    throw std::invalid_argument("partition model: one cut indicator per element is needed");
  if (cores == 0) throw std::invalid_argument("partition model: no core");
}

// Longest-first schedule of `loads` on `cores`: block indices per core, and the makespan.
double schedule_longest_first(const std::vector<double>& loads, unsigned cores,
                              std::vector<std::vector<std::size_t>>& schedule) {
  std::vector<std::size_t> order(loads.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return loads[a] > loads[b]; });
  const std::size_t used = std::min<std::size_t>(cores, loads.size());
  schedule.assign(used, {});
  std::vector<double> busy(used, 0.0);
  for (std::size_t b : order) {
    const auto core =
        static_cast<std::size_t>(std::min_element(busy.begin(), busy.end()) - busy.begin());
    busy[core] += loads[b];
    schedule[core].push_back(b);
  }
  return busy.empty() ? 0.0 : *std::max_element(busy.begin(), busy.end());
}

}  // namespace

PartitionModel::PartitionModel(TrialRun trial, std::vector<double> indicators, unsigned cores)
    : trial_(std::move(trial)), indicators_(std::move(indicators)), cores_(cores) {
  check_trial(trial_, indicators_.size(), cores_);
  for (double n : indicators_) {
    if (!std::isfinite(n) || n < 0.0)
      throw std::invalid_argument("partition model: a cut indicator is not a finite N_e >= 0");
  }
  const std::size_t n = trial_.subsystems.back().last;
  rate_.assign(n, 0.0);
  per_macro_.assign(n, 0.0);
  double sum_solver = 0.0, sum_work = 0.0;
  double mx = 0.0, my = 0.0;
  for (const TrialSubsystem& s : trial_.subsystems) {
    const double per_macro = s.micro_steps / trial_.attempts;
    for (std::size_t i = s.first; i < s.last; ++i) {
      if (per_macro <= kMacroBoundMicroSteps)
        per_macro_[i] = per_macro;
      else
        rate_[i] = s.micro_steps / trial_.duration;
    }
    const auto size = static_cast<double>(s.last - s.first);
    sum_solver += s.solver_s;
    sum_work += s.micro_steps * size;
    mx += size;
    my += s.solver_s / s.micro_steps;
  }
  // c(n) = c0 + c1 n by least squares over the trial's subsystems; through the origin when
  // their sizes do not differ or the fit is not increasing.
  const auto count = static_cast<double>(trial_.subsystems.size());
  mx /= count;
  my /= count;
  double sxx = 0.0, sxy = 0.0;
  for (const TrialSubsystem& s : trial_.subsystems) {
    const double dx = static_cast<double>(s.last - s.first) - mx;
    sxx += dx * dx;
    sxy += dx * (s.solver_s / s.micro_steps - my);
  }
  c1_ = sum_solver / sum_work;
  if (sxx > 0.0 && sxy > 0.0 && my - (sxy / sxx) * mx >= 0.0) {
    c1_ = sxy / sxx;
    c0_ = my - c1_ * mx;
  }
  double raw = 0.0;
  for (std::size_t j = 1; j < trial_.subsystems.size(); ++j)
    raw = std::max(raw, indicators_[trial_.subsystems[j].first]);
  calibration_ = raw > 0.0 ? trial_.attempts / raw : 1.0;
}

double PartitionModel::block_micro_steps(std::size_t first, std::size_t last,
                                         double macro_steps) const {
  double m = macro_steps;  // at least one micro step per macro step
  for (std::size_t i = first; i < last; ++i)
    m = std::max(m, per_macro_[i] > 0.0 ? per_macro_[i] * macro_steps : rate_[i] * trial_.duration);
  return m;
}

double PartitionModel::block_load(std::size_t first, std::size_t last, double macro_steps) const {
  return (1.0 + trial_.extra_share) * block_micro_steps(first, last, macro_steps) *
         cost_per_step(last - first);
}

PartitionModel::Prediction PartitionModel::predict(
    const std::vector<std::size_t>& boundaries) const {
  const std::size_t n = masses();
  if (boundaries.size() < 2 || boundaries.front() != 0 || boundaries.back() != n ||
      !std::is_sorted(boundaries.begin(), boundaries.end(), std::less_equal<>()) ||
      std::adjacent_find(boundaries.begin(), boundaries.end()) != boundaries.end())
    throw std::invalid_argument("partition model: boundaries must rise from 0 to the chain's end");
  Prediction p;
  p.boundaries = boundaries;
  double raw = 0.0;
  for (std::size_t j = 1; j + 1 < boundaries.size(); ++j)
    raw = std::max(raw, indicators_[boundaries[j]]);
  p.macro_steps = boundaries.size() > 2 ? calibration_ * raw : 0.0;
  for (std::size_t j = 0; j + 1 < boundaries.size(); ++j) {
    p.micro_steps.push_back(block_micro_steps(boundaries[j], boundaries[j + 1], p.macro_steps));
    p.load_s.push_back(block_load(boundaries[j], boundaries[j + 1], p.macro_steps));
  }
  const double makespan = schedule_longest_first(p.load_s, cores_, p.schedule);
  p.wall_s = p.macro_steps * trial_.overhead_per_attempt_s + makespan;
  const double largest = *std::max_element(p.load_s.begin(), p.load_s.end());
  const double mean =
      std::accumulate(p.load_s.begin(), p.load_s.end(), 0.0) / static_cast<double>(p.load_s.size());
  p.idle_share = largest > 0.0 ? 1.0 - mean / largest : 0.0;
  return p;
}

std::vector<std::size_t> PartitionModel::fill(std::size_t subsystems,
                                              const std::vector<bool>& allowed, double macro_steps,
                                              double limit) const {
  const std::size_t n = masses();
  std::vector<std::size_t> bounds{0};
  std::size_t first = 0;
  while (first < n) {
    std::size_t last = first, cut = 0;
    while (last < n && block_load(first, last + 1, macro_steps) <= limit) {
      ++last;
      if (last < n && allowed[last]) cut = last;
    }
    if (last == n) break;
    if (cut == 0 || bounds.size() == subsystems) return {};  // a block over the limit, or too many
    bounds.push_back(cut);
    first = cut;
  }
  bounds.push_back(n);
  // Fewer blocks than asked: split the most loaded block that has an allowed element, where
  // the larger half is least (splitting never raises a load).
  while (bounds.size() < subsystems + 1) {
    std::size_t best_block = 0, best_cut = 0;
    double best_load = -1.0, best_half = 0.0;
    for (std::size_t j = 0; j + 1 < bounds.size(); ++j) {
      const double load = block_load(bounds[j], bounds[j + 1], macro_steps);
      if (load < best_load) continue;
      std::size_t cut = 0;
      double half = INFINITY;
      for (std::size_t c = bounds[j] + 1; c < bounds[j + 1]; ++c) {
        if (!allowed[c]) continue;
        const double larger = std::max(block_load(bounds[j], c, macro_steps),
                                       block_load(c, bounds[j + 1], macro_steps));
        if (larger < half) {
          half = larger;
          cut = c;
        }
      }
      if (cut != 0 && (load > best_load || half < best_half)) {
        best_load = load;
        best_block = j;
        best_cut = cut;
        best_half = half;
      }
    }
    if (best_cut == 0) return {};
    bounds.insert(bounds.begin() + static_cast<std::ptrdiff_t>(best_block) + 1, best_cut);
  }
  return bounds;
}

std::vector<std::size_t> PartitionModel::least_largest_load(std::size_t subsystems,
                                                            const std::vector<bool>& allowed,
                                                            double macro_steps) const {
  double hi = block_load(0, masses(), macro_steps);
  std::vector<std::size_t> best = fill(subsystems, allowed, macro_steps, hi);
  if (best.empty()) return best;
  double lo = 0.0;
  for (int i = 0; i < 60 && hi - lo > 1e-9 * hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    std::vector<std::size_t> cuts = fill(subsystems, allowed, macro_steps, mid);
    if (cuts.empty()) {
      lo = mid;
    } else {
      hi = mid;
      best = std::move(cuts);
    }
  }
  return best;
}

PartitionModel::Prediction PartitionModel::search(std::size_t subsystems) const {
  const std::size_t n = masses();
  if (subsystems < 2 || subsystems > n)
    throw std::invalid_argument("partition model: between 2 and " + std::to_string(n) +
                                " subsystems can be formed");
  std::vector<double> levels(indicators_.begin() + 1, indicators_.end() - 1);
  std::sort(levels.begin(), levels.end());
  levels.erase(std::unique(levels.begin(), levels.end()), levels.end());
  // The smallest threshold that allows subsystems - 1 cuts, then up to kMaxThresholds levels.
  std::vector<double> sorted(indicators_.begin() + 1, indicators_.end() - 1);
  std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(subsystems - 2),
                   sorted.end());
  const double lowest = sorted[subsystems - 2];
  levels.erase(levels.begin(), std::lower_bound(levels.begin(), levels.end(), lowest));
  const std::size_t stride = std::max<std::size_t>(1, levels.size() / kMaxThresholds);

  Prediction best;
  best.wall_s = INFINITY;
  if (trial_.subsystems.size() == subsystems) {
    std::vector<std::size_t> own{0};
    for (const TrialSubsystem& s : trial_.subsystems) own.push_back(s.last);
    best = predict(own);
  }
  std::vector<bool> allowed(n + 1, false);
  for (std::size_t l = 0; l < levels.size(); l += stride) {
    const double threshold = (l + stride >= levels.size()) ? levels.back() : levels[l];
    for (std::size_t e = 1; e < n; ++e) allowed[e] = indicators_[e] <= threshold;
    const std::vector<std::size_t> cuts =
        least_largest_load(subsystems, allowed, calibration_ * threshold);
    if (cuts.empty()) continue;
    Prediction p = predict(cuts);
    if (p.wall_s < best.wall_s) best = std::move(p);
  }
  return best;
}

CutIndicatorSampler::CutIndicatorSampler(std::size_t channels, int kappa_min, int kappa_max,
                                         double rtol, double atol)
    : kappa_min_(kappa_min),
      kappa_max_(kappa_max),
      rtol_(rtol),
      atol_(atol),
      values_(channels),
      sum_(channels, 0.0) {
  if (kappa_min < 0 || kappa_max < kappa_min || kappa_max > 5 || !(rtol > 0.0) || !(atol > 0.0))
    throw std::invalid_argument(
        "cut indicators: 0 <= kappa_min <= kappa_max <= 5 and positive tolerances are needed");
}

void CutIndicatorSampler::add(double t, const std::vector<double>& values) {
  if (values.size() != sum_.size())
    throw std::invalid_argument("cut indicators: one value per channel is needed");
  if (!times_.empty() && !(t > times_.back()))
    throw std::invalid_argument("cut indicators: sample times must increase");
  const auto depth = static_cast<std::size_t>(kappa_max_) + 1;
  const bool full = times_.size() == depth;
  if (full) {
    // The extrapolation weights depend on the times only: once per order, not per channel.
    for (int kappa = kappa_min_; kappa <= kappa_max_; ++kappa) {
      const auto points = static_cast<std::size_t>(kappa) + 1;
      weights_[static_cast<std::size_t>(kappa)].resize(points);
      polynomials::lagrange_basis(std::span<const double>(times_.data() + depth - points, points),
                                  t, weights_[static_cast<std::size_t>(kappa)]);
    }
  }
  for (std::size_t e = 0; e < values.size(); ++e) {
    std::vector<double>& history = values_[e];
    if (full) {
      const double scale = atol_ + rtol_ * std::abs(values[e]);
      double steps = INFINITY;
      for (int kappa = kappa_min_; kappa <= kappa_max_; ++kappa) {
        const std::vector<double>& w = weights_[static_cast<std::size_t>(kappa)];
        const std::size_t first = depth - w.size();
        double predicted = 0.0;
        for (std::size_t j = 0; j < w.size(); ++j) predicted += w[j] * history[first + j];
        const double err = std::abs(values[e] - predicted) / scale;
        steps = std::min(steps, std::pow(err, 1.0 / static_cast<double>(w.size())));
      }
      sum_[e] += steps;
      history.erase(history.begin());
    }
    history.push_back(values[e]);
  }
  if (full) {
    ++samples_;
    times_.erase(times_.begin());
  }
  times_.push_back(t);
}

std::string sizes_array(const std::vector<std::size_t>& boundaries) {
  std::string s = "[";
  for (std::size_t j = 0; j + 1 < boundaries.size(); ++j) {
    if (j > 0) s += ", ";
    s += std::to_string(boundaries[j + 1] - boundaries[j]);
  }
  return s + "]";
}

}  // namespace macrostep::analysis

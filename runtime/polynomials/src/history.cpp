#include "macrostep/polynomials/history.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace macrostep::polynomials {

CouplingHistory::CouplingHistory(std::size_t channels, std::size_t capacity)
    : channels_(channels), capacity_(capacity) {
  if (channels == 0) throw std::invalid_argument("CouplingHistory: zero coupling channels");
  if (capacity == 0) throw std::invalid_argument("CouplingHistory: zero capacity");
  times_.assign(capacity_, 0.0);
  values_.assign(capacity_ * channels_, 0.0);
}

void CouplingHistory::push(double t, std::span<const double> u) {
  if (u.size() != channels_) {
    throw std::invalid_argument("CouplingHistory::push: " + std::to_string(u.size()) +
                                " values for " + std::to_string(channels_) + " channels");
  }
  if (!std::isfinite(t)) throw std::invalid_argument("CouplingHistory::push: non-finite time");
  if (size_ > 0 && !(t > newest_time())) {
    throw std::invalid_argument("CouplingHistory::push: time " + std::to_string(t) +
                                " does not follow the newest point " +
                                std::to_string(newest_time()));
  }
  for (std::size_t c = 0; c < channels_; ++c) {
    if (!std::isfinite(u[c])) {
      throw std::invalid_argument("CouplingHistory::push: non-finite value in channel " +
                                  std::to_string(c) + " at t = " + std::to_string(t));
    }
  }
  std::size_t s;
  if (size_ < capacity_) {
    s = slot(size_);
    ++size_;
  } else {
    s = first_;
    first_ = (first_ + 1) % capacity_;
  }
  times_[s] = t;
  for (std::size_t c = 0; c < channels_; ++c) values_[s * channels_ + c] = u[c];
}

void CouplingHistory::clear() {
  first_ = 0;
  size_ = 0;
}

void CouplingHistory::replace_newest(std::span<const double> u) {
  if (size_ == 0) throw std::logic_error("CouplingHistory::replace_newest: empty history");
  if (u.size() != channels_) {
    throw std::invalid_argument("CouplingHistory::replace_newest: " + std::to_string(u.size()) +
                                " values for " + std::to_string(channels_) + " channels");
  }
  for (std::size_t c = 0; c < channels_; ++c) {
    if (!std::isfinite(u[c])) {
      throw std::invalid_argument("CouplingHistory::replace_newest: non-finite value in channel " +
                                  std::to_string(c));
    }
  }
  const std::size_t s = slot(size_ - 1);
  for (std::size_t c = 0; c < channels_; ++c) values_[s * channels_ + c] = u[c];
}

void CouplingHistory::jump_newest(std::span<const double> after, std::span<const double> moved) {
  if (!moved.empty() && moved.size() != channels_) {
    throw std::invalid_argument("CouplingHistory::jump_newest: one bound per channel");
  }
  const std::vector<double> before(newest_values().begin(), newest_values().end());
  replace_newest(after);
  for (std::size_t c = 0; c < channels_; ++c) {
    if (std::abs(after[c] - before[c]) > (moved.empty() ? 0.0 : moved[c])) hold_newest(c);
  }
}

void CouplingHistory::hold_newest(std::size_t channel) {
  if (size_ == 0) throw std::logic_error("CouplingHistory::hold_newest: empty history");
  if (channel >= channels_) throw std::out_of_range("CouplingHistory::hold_newest: channel");
  const double v = values_[slot(size_ - 1) * channels_ + channel];
  for (std::size_t i = 0; i + 1 < size_; ++i) values_[slot(i) * channels_ + channel] = v;
}

void CouplingHistory::erase_back(std::size_t j) {
  if (j == 0 || j >= size_)
    throw std::out_of_range("CouplingHistory::erase_back: not an older point");
  for (std::size_t i = size_ - 1 - j; i + 1 < size_; ++i) {
    times_[slot(i)] = times_[slot(i + 1)];
    std::copy_n(values_.begin() + static_cast<std::ptrdiff_t>(slot(i + 1) * channels_), channels_,
                values_.begin() + static_cast<std::ptrdiff_t>(slot(i) * channels_));
  }
  --size_;
}

double CouplingHistory::time(std::size_t i) const {
  if (i >= size_) throw std::out_of_range("CouplingHistory::time: index beyond history");
  return times_[slot(i)];
}

std::span<const double> CouplingHistory::values(std::size_t i) const {
  if (i >= size_) throw std::out_of_range("CouplingHistory::values: index beyond history");
  return std::span<const double>(values_.data() + slot(i) * channels_, channels_);
}

std::size_t CouplingHistory::check_back(std::size_t j) const {
  if (j >= size_) {
    throw std::out_of_range("CouplingHistory: point " + std::to_string(j) +
                            " back requested, history holds " + std::to_string(size_));
  }
  return j;
}

}  // namespace macrostep::polynomials

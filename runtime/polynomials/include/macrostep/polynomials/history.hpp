// The accepted macro points (T_k, u_k) of the coupling variables (METHODS §2, §6.4).
//
// Contract:
//  - Only accepted points enter: the owner appends (T_{N+1}, u_{N+1}) after a passed error
//    test and never for a rejected or failed attempt, so a rejection needs no undo here
//    (the MacroStepController in macrostep_control is the one owner that appends).
//  - Times strictly increase; push() rejects anything else, and non-finite values.
//  - The capacity is fixed at construction; when it is full the oldest point is dropped.
//    push() never allocates. All storage is allocated once in the constructor.
//  - Index convention: "back" indices count from the newest point, time_back(0) = T_M,
//    time_back(j) = T_{M−j}; chronological indices 0..size()−1 run oldest to newest.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace macrostep::polynomials {

class CouplingHistory {
 public:
  // κ_max = 5 needs κ+1 = 6 points for the predictor, κ+2 = 7 for exLE/exMD and the
  // a-priori estimate, κ+3 = 8 for SDN(κ+2); the least-squares predictor uses N_sp = 8 by
  // default. 16 leaves room for larger N_sp.
  static constexpr std::size_t kDefaultCapacity = 16;

  // Throws std::invalid_argument for channels == 0 or capacity == 0.
  explicit CouplingHistory(std::size_t channels, std::size_t capacity = kDefaultCapacity);

  std::size_t channels() const { return channels_; }
  std::size_t capacity() const { return capacity_; }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  // Appends (t, u); drops the oldest point when full. Throws std::invalid_argument if
  // u.size() != channels(), a value is not finite, or t is not finite or not > newest time.
  void push(double t, std::span<const double> u);
  void clear();
  // A jump at the newest point (a subsystem's event there): its values become u (the values
  // right after the jump). Throws std::invalid_argument like push() (sizes, non-finite values)
  // and std::logic_error on an empty history.
  void replace_newest(std::span<const double> u);
  // Every point's value of `channel` becomes the newest point's: the channel's polynomials are
  // that constant until new points come (its values before a jump are not its past any more).
  // Throws std::out_of_range for a channel >= channels(), std::logic_error on an empty history.
  void hold_newest(std::size_t channel);
  // Both for a jump to `after` at the newest point: replace_newest(after), then hold_newest for
  // every channel c whose value it changed by more than moved[c] (any change where `moved` is
  // empty; otherwise moved.size() == channels(), std::invalid_argument).
  void jump_newest(std::span<const double> after, std::span<const double> moved = {});

  // Removes the point j back from the newest (1 <= j < size(); the newest stays): a macro point
  // that served the steps up to the next one only. Throws std::out_of_range otherwise.
  void erase_back(std::size_t j);

  // Chronological access, i = 0 oldest .. size()−1 newest. Throws std::out_of_range.
  double time(std::size_t i) const;
  std::span<const double> values(std::size_t i) const;

  // Access from the newest point: j = 0 is (T_M, u_M). Throws std::out_of_range.
  double time_back(std::size_t j) const { return time(size_ - 1 - check_back(j)); }
  std::span<const double> values_back(std::size_t j) const {
    return values(size_ - 1 - check_back(j));
  }
  double newest_time() const { return time_back(0); }
  std::span<const double> newest_values() const { return values_back(0); }

 private:
  std::size_t check_back(std::size_t j) const;
  std::size_t slot(std::size_t i) const { return (first_ + i) % capacity_; }

  std::size_t channels_;
  std::size_t capacity_;
  std::size_t first_ = 0;  // slot of the oldest point
  std::size_t size_ = 0;
  std::vector<double> times_;   // capacity_
  std::vector<double> values_;  // capacity_ × channels_, one contiguous row per slot
};

}  // namespace macrostep::polynomials

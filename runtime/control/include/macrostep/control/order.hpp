// Order (polynomial degree κ) control (METHODS §6.3; seed 000 §3.3, Listings 3.1 and 3.2).
//
// Scaled derivative norms SDN(j) = ‖H^j·j!·u[T_M, …, T_{M−j}]‖_{W^u at u_M} (D-28), H the
// current step size T_{N+1} − T_N. SDN(j) exists only if the history holds j+1 points (D-29);
// a test that needs a missing SDN is skipped (it neither lowers nor raises κ).
//
// Listing 3.2 (default, IDA-like):
//   lower if κ = 1 and SDN1 ≤ SDN2/2, or κ > 1 and max(SDNκ, SDNκ−1) ≤ SDNκ+1
//   N_fail > 3 → κ_new ≤ 1; N_fail > 5 → κ_new = 0 (unconditional, T8)
//   if κ < κ_max, N_succ > κ and κ_new = κ (compute SDNκ+2):
//     κ = 0: raise if SDN2 < SDN1/2; κ > 0: lower if SDNκ ≤ min(SDNκ+1, SDNκ+2),
//     else raise if SDNκ+2 < SDNκ+1
// Listing 3.1 (conservative): lower while NOT(SDNκnew+1 < SDNκnew < … < SDN1); raise (same
// guard) if SDNκ+2 < SDNκ+1. The N_fail overrides are applied after the lowering here too:
// this is a decision of this implementation (the listing has none), so that repeated
// failures lower κ under either strategy.
// Finally κ ≤ κ_max and κ ≤ n_hist − 1 (D-31).
//
// N_succ: consecutive accepted steps with unchanged κ and no H reduction. record_attempt()
// counts an accepted step (before select) and resets on a failure; record_decision() resets
// when κ changed or r < 1.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string_view>
#include <vector>

#include "macrostep/control/error_norm.hpp"
#include "macrostep/model/name_table.hpp"
#include "macrostep/polynomials/history.hpp"

namespace macrostep::control {

enum class OrderStrategy : std::uint8_t {
  kIdaLike,       // Listing 3.2 (default, D-30)
  kConservative,  // Listing 3.1
  // Fixed degree κ = kappa_max as soon as the history allows (κ ≤ n_hist − 1), no SDN tests
  // and no failure overrides: the "fixed κ, variable H" runs of seed 000 §5.8 (K-5.8).
  kFixed,
};

// The names of the configuration ([cosim] order_strategy, where a user chooses between the
// first two; "fixed" is what order = K implies), the run metadata and the summary.
inline constexpr model::NameTable<OrderStrategy, 3> kOrderStrategyNames{{
    {OrderStrategy::kIdaLike, "ida"},
    {OrderStrategy::kConservative, "conservative"},
    {OrderStrategy::kFixed, "fixed"},
}};
std::optional<OrderStrategy> parse_order_strategy(std::string_view name);
const char* to_string(OrderStrategy s);
std::vector<std::string_view> order_strategy_names();

inline constexpr int kMaxKappa = 5;  // D-4

struct OrderOptions {
  OrderStrategy strategy = OrderStrategy::kIdaLike;
  int kappa_max = kMaxKappa;
  // Throws std::invalid_argument unless 0 ≤ kappa_max ≤ kMaxKappa.
  void validate() const;
};

// SDN(0..highest()); SDN(0) = ‖u_M‖_W. Orders above highest() are unavailable.
class ScaledDerivativeNorms {
 public:
  static constexpr int kMaxOrder = kMaxKappa + 2;

  ScaledDerivativeNorms() = default;
  // From explicit values (tests, diagnostics): SDN(j) = values[j], highest = size − 1.
  static ScaledDerivativeNorms from_values(std::initializer_list<double> values);

  int highest() const { return highest_; }
  bool available(int j) const { return j >= 0 && j <= highest_; }
  // Throws std::out_of_range for an unavailable order.
  double operator[](int j) const;
  void set(int j, double value);  // extends highest() to j if needed (j ≤ kMaxOrder)

 private:
  std::array<double, kMaxOrder + 1> value_{};
  int highest_ = -1;
};

// SDN(j) for j = 0..min(max_order, history.size() − 1) with step size h (D-28, D-29).
ScaledDerivativeNorms scaled_derivative_norms(const polynomials::CouplingHistory& history, double h,
                                              int max_order, const ErrorTolerances& tol);

class OrderController {
 public:
  explicit OrderController(OrderOptions options = {});
  const OrderOptions& options() const { return options_; }

  // κ_new for the next step from degree κ, the SDNs of the history to T_M, N_fail (consecutive
  // failed attempts incl. the one just made) and n_hist = history points at T_M.
  int select(int kappa, const ScaledDerivativeNorms& sdn, int n_fail,
             std::size_t history_points) const;

  // The failure overrides alone (corrector failure: "κ via overrides only"), then D-31/κ_max.
  int overrides_only(int kappa, int n_fail, std::size_t history_points) const;

  // The highest SDN order select() may read for degree κ (κ+2; κ+1 if no raise is possible).
  static int highest_sdn_needed(int kappa) { return kappa + 2; }

  // N_succ bookkeeping.
  int successes() const { return n_succ_; }
  // An attempt at degree κ with step size h was accepted or failed (also counts down D-49's
  // hold, and ends its count of failed lowerings once κ = 0 has held for kLoweringKeptSteps
  // accepted steps).
  void record_attempt(bool accepted, double h, int kappa);
  void record_decision(int kappa_old, int kappa_new, double r) {
    if (kappa_new != kappa_old || r < 1.0) n_succ_ = 0;
  }
  void reset() { n_succ_ = 0; }
  // N_succ of an exported controller (MacroStepController::import_state); n >= 0.
  void set_successes(int n) { n_succ_ = n; }

  // D-49: a lowering from κ = 1 to 0 checked against the attempt that follows it. Listing 3.2
  // decides from scaled derivative norms of the coupling history alone. On a stiff interface the
  // coupling variable is slaved to the states and the κ = 1 step polynomial leaves a zigzag on
  // it (its parasitic root is −1) that the states do not see; SDN(2) takes it for a rough
  // variable and lowers to κ = 0, which needs a far smaller H, fails, is raised again, and the
  // cycle repeats. (At κ ≥ 2 the parasitic root lies outside the unit circle: lowering is
  // right there, and those lowerings are not checked.)
  //  - A lowering fails when the first attempt at the lowered degree fails the error test.
  //    One such failure is left to Listing 3.2 (the lowered degree may only have been given
  //    too large a step); the second in a row refutes it, unless a lowering was kept between
  //    them (its first attempt accepted with its own factor r ≥ 1, or κ = 0 held for 8
  //    accepted steps: the lowering was right, as where a system comes to rest, and the
  //    cycle is one that returns to κ = 1 within a few steps). A refutation: the next attempt
  //    returns to κ = 1, with the step κ = 1's own estimate asked for (0.25 to 0.9 of the failed
  //    H), and the SDN tests may not lower κ to 0 for `hold` accepted steps (4, doubling with each
  //    refutation until a lowering is kept, at most 1024). A failed attempt, or an accepted
  //    step below a quarter of the refuted one, ends the hold.
  //  - The caller notes lowerings of iterative steps only (MacroStepController: an implicit
  //    estimator). Off with the fixed strategy. The state is part of the controller's
  //    exported state.
  struct OrderChangeCheck {
    static constexpr int kFirstHold = 4;
    static constexpr int kLongestHold = 1024;
    int lowered_from = -1;    // >= 0: the pending attempt is the first after a lowering
    double fallback_h = 0.0;  // the step the degree left asked for
    double refuted_h = 0.0;   // the step at which the last lowering was refuted
    static constexpr int kLoweringKeptSteps = 8;
    int failed_lowerings = 0;  // lowerings in a row whose first attempt failed
    int steps_at_zero = 0;     // accepted steps in a row at κ = 0
    int lower_hold = 0;        // accepted steps left without SDN lowering
    int next_lower_hold = kFirstHold;
  };
  const OrderChangeCheck& change_check() const { return check_; }
  void set_change_check(const OrderChangeCheck& c) { check_ = c; }
  bool lowering_pending() const { return check_.lowered_from >= 0; }
  // The next attempt is the first at a degree lowered from κ, whose own estimate asked for h
  // (ignored unless κ = 1 and the strategy is not fixed).
  void note_lowering(int kappa_from, double fallback_h);
  // The first attempt after a lowering was accepted; `kept` if its own factor r ≥ 1.
  void confirm_lowering(bool kept);
  // The first attempt after a lowering, with step h, failed the error test: returns the degree
  // to go back to (take the step from change_check().fallback_h) if this refutes the lowering,
  // else −1 (Listing 3.2 decides as without the check).
  int lowering_failed(double h);
  // A corrector or subsystem failure says nothing about the degree.
  void forget_lowering() { check_.lowered_from = -1; }

 private:
  int cap(int kappa, std::size_t history_points) const;
  int select_ida_like(int kappa, const ScaledDerivativeNorms& sdn, int n_fail) const;
  int select_conservative(int kappa, const ScaledDerivativeNorms& sdn, int n_fail) const;

  OrderOptions options_;
  int n_succ_ = 0;
  OrderChangeCheck check_;
};

// The N_fail overrides: N_fail > 3 → min(1, κ); N_fail > 5 → 0.
int apply_failure_overrides(int kappa, int n_fail);

}  // namespace macrostep::control

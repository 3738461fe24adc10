// What a subsystem's runs do where their input polynomial jumps at a macro point, and the
// names of those policies (header-only: the configuration reads them without the runner).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "macrostep/model/name_table.hpp"

namespace macrostep::runner {

// What a run does with the jump of its input polynomial at T_N (METHODS §2.2: explicit
// polynomials jump at T_N). IDA's BDF history holds the states of the previous polynomial; with
// about one micro step per macro step it sees the new polynomial only at T_{N+1}, and the
// co-simulation error grows by up to 2.7× the scheme's own.
enum class JumpPolicy : std::uint8_t {
  kKeep = 0,  // keep the history as it is (the default)
  // Rewrite the history as if the new polynomial had driven it (ida::AdvanceControl::
  // previous_input with the last accepted step's polynomial): no extra micro step.
  kShift = 1,
  // Restart IDA at T_N (DESIGN contract 2: a restart only where the input polynomial jumps and
  // the configuration asks for it): order 1 again, many more micro steps.
  kRestart = 2,
  // Restart only where it matters: the jump moves the states by more than the integrator's
  // tolerance within one micro step (Integrator::input_jump_norm() > 1), or fewer micro steps
  // than the current BDF order are expected in the macro step.
  kRestartAuto = 3,
};

// The names of the configuration ([cosim] jump_handling), the command line (--jump-handling),
// the run metadata and the messages.
inline constexpr model::NameTable<JumpPolicy, 4> kJumpPolicyNames{{
    {JumpPolicy::kKeep, "keep"},
    {JumpPolicy::kShift, "shift"},
    {JumpPolicy::kRestart, "restart"},
    {JumpPolicy::kRestartAuto, "restart-auto"},
}};
constexpr std::optional<JumpPolicy> parse_jump_policy(std::string_view name) {
  return model::parse_name(kJumpPolicyNames, name);
}
constexpr const char* to_string(JumpPolicy p) {
  return model::name_of(kJumpPolicyNames, p);
}
inline std::vector<std::string_view> jump_policy_names() {
  return model::names_of(kJumpPolicyNames);
}

// How the runs of a step treat the input's jump at T_N. The defaults change nothing. Both apply
// alike to the nominal and the extra runs of a pass.
struct JumpOptions {
  JumpPolicy policy = JumpPolicy::kKeep;
  // >= 2: every micro step at most H/micro_steps (the polynomial sampled at least that often).
  int micro_steps = 0;
  bool operator==(const JumpOptions&) const = default;
};

}  // namespace macrostep::runner

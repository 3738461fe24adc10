// A coupled system that starts in the middle of a solution: the same subsystems, laws, feeds and
// monitored outputs as a given system, but every subsystem's initial time is t and its initial
// state a given one (the state an exact solution has there). The local-error analysis
// (run/local_error.hpp; methods.md "Local error with the exact history") runs one macro step
// of a scheme from it.
//
// The subsystems are views of the base system's (model::SubsystemView): evaluations, Jacobians
// and feed-through forward to the base models; only initial_time() and initial_state() differ.
// initial_state() returns the given z and z' = 0: an integrator started from it must be
// restarted at t with a z' consistent with its input (runner::JumpPolicy::kRestart, which
// computes that z'), as the local-error analysis does. The laws are views that forward to the
// base system's laws.
//
// Ownership: the result references `base`, which must outlive it.
#pragma once

#include <span>
#include <vector>

#include "macrostep/system/coupled_system.hpp"

namespace macrostep::system {

// The restarted copy of `base` at time t with states[i] the state of subsystem i (size
// base.subsystem(i).state_size()). Throws std::invalid_argument for a count or size that does
// not fit, a non-finite value, and for subsystems with events (model::Subsystem::events(): the
// mode at t is not known from a state).
CoupledSystem restarted_system(const CoupledSystem& base, double t,
                               std::span<const std::vector<double>> states);

}  // namespace macrostep::system

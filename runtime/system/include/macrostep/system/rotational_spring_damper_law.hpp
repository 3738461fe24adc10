// The torsional spring/damper between two rotating bodies as a coupling law (seed 003 §2.6,
// table "rotational mechanic": y = [φ, φ̇], u = M = c_r·Δφ; MODELS.md §1.2 for the law shape):
//   τ = c·Δφ + d·Δω + C·sgn(Δφ)|Δφ|^e_x + D·sgn(Δω)|Δω|^e_v,
//   Δφ = φ_right − φ_left, Δω = ω_right − ω_left,
// i.e. the chain's element law (seed 000 Eq. 2.9, general exponents D-2) with angles and speeds
// in place of positions and velocities; library::ElementLaw carries its coefficients (c [N·m/rad],
// d [N·m·s/rad], C, D, e_x, e_v).
//
// Sign convention (as the chain's cut element, seed 000 Eq. 2.16): the shaft twisted by Δφ > 0
// pulls the left body forward (+τ) and the right body back (−τ). library::DriveTrainSegment
// follows it: its right-end input enters as +τ, its left-end input as −τ.
// The law is the translational one with other names, so it is the same class: one
// implementation of force, stiffness and damping for cut elements and shafts alike. Reads
// [φ_left, ω_left, φ_right, ω_right] in the order of SpringDamperLaw's [x_left, v_left, x_right,
// v_right].
#pragma once

#include "macrostep/system/spring_damper_law.hpp"

namespace macrostep::system {

using RotationalSpringDamperLaw = SpringDamperLaw;

}  // namespace macrostep::system

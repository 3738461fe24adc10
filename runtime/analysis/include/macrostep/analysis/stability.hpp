// Linear stability of explicit co-simulation on the two-mass oscillator (METHODS.md §1.2, §7.1,
// §7.4; seed 001 §3; seed 003 §2.3.2; seed 000 App. C): the one-step recurrence
// X_{N+1} = M·X_N of the coupled system with exact subsystem integration (matrix exponential,
// D-37), and its spectral radius ρ(M) over the macro-step size.
//
// State X = [z; u_N, u_{N−1}, …; u̇_N, u̇_{N−1}, …; z_{N−1}, …] with z = [x1, v1, x2, v2] and u
// the coupling variables of the decomposition: F/F u = [λ]; F/D u = [λ, x̃1, ṽ1]; D/D
// u = [x̃2, ṽ2, x̃1, ṽ1] (METHODS §1.2, D-40); the past states only for the sequential
// Gauss–Seidel end value. Every step: the subsystems integrate [T_N, T_{N+1}] exactly with the
// approximation's polynomial (polynomials::make_stencil on the uniform grid — the runtime's own
// weights); then u_{N+1} = G z_{N+1} (consistent update, D-1), u̇_{N+1} = G A z_{N+1} for the
// seed-003 sets with rates (these need a coupling without dampers, G·B = 0).
//
// Gauss–Seidel (METHODS §3.2, seed 001 Eq. 13/17): subsystem 1 runs first with the approximation;
// subsystem 2 interpolates its inputs with the Lagrange polynomial of degree κ through
// T_{N−κ+1}..T_N and the new value u_{N+1} = G z_{N+1}. For F/D and D/D that value is subsystem
// 1's new output; for F/F λ_{N+1} also depends on subsystem 2's own end state, and the
// recurrence takes one of two end values (GaussSeidelEndValue): the converged one (subsystem 2
// iterated to consistency, the runtime's default) or the sequential one of seed 000 App. C
// (subsystem 2's own state extrapolated from its past states, one run each, no repetition).
#pragma once

#include <functional>
#include <optional>
#include <string_view>
#include <vector>

#include "macrostep/analysis/dense.hpp"
#include "macrostep/polynomials/approximation.hpp"

namespace macrostep::analysis {

// wall –(c1, d1)– m1 –(cc, dc)– m2 –(c2, d2)– wall (METHODS §1.2).
struct TwoMass {
  double m1 = 1.0, m2 = 1.0;
  double c1 = 1.0, c2 = 1.0, cc = 1.0;
  double d1 = 0.0, d2 = 0.0, dc = 0.0;

  // ω̂ = H·sqrt(c1/m1): the dimensionless frequency of subsystem 1 alone (METHODS §7.1 D-39 with
  // d = 0; seed 003's ω̂ = ωH).
  double omega1() const;
};

enum class Decomposition { kForceForce, kForceDisplacement, kDisplacementDisplacement };
enum class Scheme { kJacobi, kGaussSeidel };

// "ff" | "fd" | "dd" and "jacobi" | "gauss-seidel"; throw std::invalid_argument otherwise.
Decomposition parse_decomposition(std::string_view name);
Scheme parse_scheme(std::string_view name);
std::string_view decomposition_name(Decomposition d);
std::string_view scheme_name(Scheme s);

// Gauss–Seidel's end value u_{N+1} of an input of the later subsystem whose law also reads that
// subsystem's own outputs (F/F: λ = G1 z1 + G2 z2), through which it interpolates:
//  - kConverged: u_{N+1} = G1 z1_{N+1} + G2 z2_{N+1} with the z2_{N+1} its own run ends with
//    (the fixed point the runtime's repetitions converge to);
//  - kSequential: u_{N+1} = G1 z1_{N+1} + G2 ẑ2, ẑ2 = P_κ(T_{N+1}) the Lagrange extrapolation of
//    degree κ through z2 at T_{N−κ} … T_N (seed 000 App. C: each subsystem runs once).
// Decompositions without such a law (F/D, D/D) give the same recurrence with either.
enum class GaussSeidelEndValue { kConverged, kSequential };

struct Method {
  Decomposition decomposition = Decomposition::kForceForce;
  Scheme scheme = Scheme::kJacobi;
  GaussSeidelEndValue end_value = GaussSeidelEndValue::kConverged;  // Gauss–Seidel only
  polynomials::Approximation approximation;                         // Lagrange by default
  int order = 2;  // κ (Lagrange), k (C0/C1); unused by seed-003 sets
};

// The exact monolithic system ż = A_mono z of the two-mass model (for reference solutions).
Matrix monolithic_matrix(const TwoMass& model);

// The recurrence of one macro step of size h, and the layout of its state.
struct Recurrence {
  Matrix m;                   // X_{N+1} = m X_N
  std::size_t couplings = 0;  // n_u
  std::size_t points = 0;     // u history depth (u_N … u_{N−points+1})
  bool rates = false;         // u̇ history of the same depth follows
  // Past states z_{N−1} … z_{N−state_points} follow the u (and u̇) history: the sequential
  // Gauss–Seidel end value extrapolates from them (0 otherwise).
  std::size_t state_points = 0;
  Matrix g;  // u = g z (n_u × 4)
  Matrix a;  // the subsystems' own dynamics (4 × 4): u̇ = g a z
};

// Throws std::invalid_argument for a method that does not apply: a Gauss–Seidel or D/D method
// with a seed-003 set using rates where the coupling needs accelerations (dampers), h ≤ 0.
Recurrence recurrence(const TwoMass& model, const Method& method, double h);

// ρ(M) of recurrence(model, method, h).m.
double spectral_radius(const TwoMass& model, const Method& method, double h);

// Classification tolerance: stable if ρ ≤ 1 + tol (D-38).
inline constexpr double kStabilityTolerance = 1e-8;

struct ScanPoint {
  double h = 0.0;
  double omega_hat = 0.0;
  double rho = 0.0;
  bool stable() const { return rho <= 1.0 + kStabilityTolerance; }
};

// ρ at `count` log-spaced step sizes from h_min to h_max.
std::vector<ScanPoint> scan(const TwoMass& model, const Method& method, double h_min, double h_max,
                            std::size_t count);

// ω̂_max = max{ω̂ : ρ ≤ 1 + tol} over the scan (METHODS §7.4, D-38): the largest stable grid
// point, refined by bisection towards the next one to relative width 1e-6. Weak growth at
// small ω̂ (some seed-003 sets reach ρ − 1 ≈ 1e-7 there) does not end the band, as in seed 003's
// tables. nullopt if no scan point is stable; the scan's last h if that one is stable.
std::optional<double> largest_stable_h(const TwoMass& model, const Method& method,
                                       const std::vector<ScanPoint>& scan_points);

// Weak growth: ρ − 1 up to this counts as stable where D-38 asks for it (seed 003's tables ignore
// ρ − 1 ≈ 1e-7 at small ω̂); a doubling then takes more than 7e5 macro steps.
inline constexpr double kWeakGrowth = 1e-6;

// The step sizes a fixed-H run can use: the band of stable H that starts at the scan's smallest
// H. Above its edge the stable set may have gaps (unstable between two stable ranges); an H
// beyond a gap is stable for this linear model but one parameter change away from instability.
struct StableBand {
  // The band's edge (ρ ≤ 1 + kStabilityTolerance at every scan point up to it), refined by
  // bisection to relative width 1e-6; nullopt if the smallest H is unstable; the scan's last h
  // if every point is stable.
  std::optional<double> edge_h;
  // The same band with weak growth (ρ − 1 ≤ kWeakGrowth) counted as stable; weak_growth: it
  // holds scan points the strict band does not.
  std::optional<double> weak_edge_h;
  bool weak_growth = false;
  double first_rho = 0.0;  // ρ at the smallest H
  // A stable scan point (weak growth counted) lies above an unstable one above the weak band.
  bool gaps = false;
  double gap_rho = 0.0;  // the largest ρ between the weak band's edge and the largest stable H
  // The largest stable H of the scan, refined (largest_stable_h); nullopt if none is stable.
  std::optional<double> largest_h;
};

// ρ as a function of the macro-step size, for the bisections.
using RhoOfH = std::function<double(double)>;

StableBand stable_band(const std::vector<ScanPoint>& scan_points, const RhoOfH& rho);
// ρ(h) at `count` log-spaced step sizes from h_min to h_max; omega_hat = h·omega_ref. Throws
// std::invalid_argument unless 0 < h_min < h_max and count >= 2.
std::vector<ScanPoint> scan(double h_min, double h_max, std::size_t count, double omega_ref,
                            const RhoOfH& rho);
StableBand stable_band(const TwoMass& model, const Method& method,
                       const std::vector<ScanPoint>& scan_points);

}  // namespace macrostep::analysis

"""The stability tables (K-C, F-2.8, seed 001's orderings, S3) and the order studies of seeds 001
and 003 (B-2016, F-2.6): `macrostep stability` and `macrostep local-error` against the published
limits and orders (spec/MODELS.md §3)."""
from .runner import config_path
from .study import Result, fit_slope

# As in studies.py: small models in one process with one thread.
INPROC = ["--executor", "inprocess", "--threads", "1"]


def stability(runner, quick):
    r = Result()
    r.note("`macrostep stability`: exact subsystem solution, spectral radius over omega_hat "
           "(seed 000 App. C, seed 003 §2.3.2 Tables 2.4-2.7); F = c/c_A via --cc")
    r.row("K-C: F/F Jacobi, Lagrange kappa = 2, omega_hat_max", runner.stability([], "kc"),
          0.596)
    for name, approx, seed in (("Const 2,3,Opt", "const-2-3-opt", 0.109),
                               ("Lin 2,3 p = -0.20322", "lin-2-3:p=-0.20322", 0.13335)):
        ours = runner.stability(["--cc", "100", "--approximation", approx, "--omega-max", "1"],
                                "f28_" + approx.replace(":", "_"))
        r.row(f"F-2.8: {name}, F = 100, omega_hat_max", ours, seed)
    # Seed 001 (B-2016) states orderings only: the damped symmetric model (m = c = 1,
    # d = 0.1 in every element), F/F, degree 2 (Jacobi) and 1 (Gauss-Seidel vs Jacobi).
    damped = ["--d1", "0.1", "--d2", "0.1", "--dc", "0.1", "--omega-max", "3"]
    w = {a: runner.stability(damped + ["--approximation", a, "--order", "2"], f"b2016_{a}")
         for a in ("c0", "c1", "lagrange")}
    r.row("B-2016: omega_hat_max C0 / C1, k = 2", w["c0"] / w["c1"], "slightly > 1")
    r.row("B-2016: omega_hat_max C1 / Lagrange, k = 2", w["c1"] / w["lagrange"], 1.0,
          note="seed 001: C1 about Lagrange; not reproduced on this model (README)")
    gs = runner.stability(damped + ["--order", "1", "--scheme", "gauss-seidel"], "b2016_gs")
    jac = runner.stability(damped + ["--order", "1"], "b2016_jacobi")
    r.row("B-2016: omega_hat_max Gauss-Seidel / Jacobi, Lagrange k = 1", gs / jac, "> 1",
          note="seed 001: Jacobi less stable than Gauss-Seidel")
    # S3 (seed 000 App. C, Figs. C.3-C.6), undamped symmetric model: the d = 0 symbols for
    # kappa = 0, 1, 2, Gauss-Seidel as the seed defines it (--gauss-seidel sequential; the
    # default converged end value is stable at F/F kappa = 0). tools/s3-table adds d > 0.
    for dec, scheme, seed in (("ff", "jacobi", "- - +"), ("ff", "gauss-seidel", "- - +"),
                              ("fd", "jacobi", "- - -"), ("fd", "gauss-seidel", "- - +")):
        extra = ["--gauss-seidel", "sequential"] if scheme == "gauss-seidel" else []
        ours = " ".join(runner.stability_symbol(["--decomposition", dec, "--scheme", scheme,
                                                 "--order", str(k)] + extra,
                                                f"s3_{dec}_{scheme}_k{k}") for k in range(3))
        r.row(f"S3: {dec.upper()} {scheme} d = 0, kappa = 0 1 2", ours, seed,
              note="sequential end values" if extra else "")
    return r



def b2016(runner, quick):
    r = Result()
    r.note("`macrostep stability` on seed 001's model: m_1 = m_2 = 10 kg, c_1 = 1e6, c_2 = 1e7 "
           "N/m, d_1 = 1, d_2 = 2 N s/m [S]; coupling c_k = 1e6 N/m, d_k = 10 N s/m [SI, inside "
           "the stand-in ranges]; exact subsystems; H = 1e-5 .. 1e-2 s; the seed's stability "
           "maps over (c_k, d_k, H) are reduced to the largest stable H of the grid")
    base = ["--m1", "10", "--m2", "10", "--c1", "1e6", "--c2", "1e7", "--d1", "1", "--d2", "2",
            "--h-min", "1e-5", "--h-max", "1e-2"]
    top = 1e-2 * (1e6 / 10) ** 0.5  # omega_hat at the grid's largest H
    cache = {}

    def hmax(dec, scheme, approx, k, cc=1e6, dc=10):
        key = (dec, scheme, approx, k, cc, dc)
        if key not in cache:
            w = runner.stability(base + ["--cc", f"{cc:g}", "--dc", f"{dc:g}", "--decomposition",
                                         dec, "--scheme", scheme, "--approximation", approx,
                                         "--order", str(k)],
                                 f"b2016_{dec}_{scheme}_{approx}_k{k}_c{cc:g}_d{dc:g}")
            cache[key] = w / (1e6 / 10) ** 0.5  # back to H [s]
        return cache[key]

    gs = "gauss-seidel"
    hs = [hmax("fd", gs, "lagrange", 1, cc=c) for c in (1e5, 1e6, 1e7)]
    r.row("larger c_k destabilises: H_max at c_k = 1e5, 1e6, 1e7 decreasing (F/D GS, k = 1)",
          "yes" if hs[0] > hs[1] > hs[2] else "no", "yes",
          note="H_max " + ", ".join(f"{h:.3g}" for h in hs) + " s")
    hd = [hmax("fd", gs, "lagrange", 1, dc=d) for d in (1, 1e2, 1e4)]
    r.row("larger d_k destabilises: H_max at d_k = 1, 1e2, 1e4 not increasing (F/D GS, k = 1)",
          "yes" if hd[0] >= hd[1] >= hd[2] else "no", "yes", note="H_max " + ", ".join(f"{h:.3g}" for h in hd)
          + " s: at this c_k more coupling damping stabilises (a finding, not investigated)")
    fd = {k: hmax("fd", gs, "lagrange", k) for k in range(4)}
    r.row("F/D GS Lagrange: H_max(k = 1) / H_max(k = 0)", fd[1] / fd[0], "> 1", note="seed 001: degree 1 more stable than 0")
    for k in (2, 3):
        r.row(f"F/D GS Lagrange: H_max(k = {k}) / H_max(k = 1)", fd[k] / fd[1], "< 1",
              note="seed 001: degrees 2-3 less stable than 1; here the reduction of the map "
                   "to H_max at one (c_k, d_k) point does not show it")
    for k in (1, 2):
        r.row(f"F/D GS: H_max C1 / Lagrange, k = {k}",
              hmax("fd", gs, "c1", k) / fd[k], 1.0, note="seed 001: C1 about Lagrange")
    for k in (1, 2, 3):
        j = hmax("fd", "jacobi", "lagrange", k)
        r.row(f"F/D Lagrange k = {k}: H_max Jacobi / Gauss-Seidel", j / fd[k], "< 1",
              note="seed 001: Jacobi less stable than GS (within 1 % counts as equal)")
    c0c1 = [hmax(d, sc, "c0", k) / hmax(d, sc, "c1", k) for d in ("ff", "fd", "dd")
            for sc in ("jacobi", gs) for k in (1, 2)]
    r.row("H_max C0 / C1 (F/F, F/D, D/D x Jacobi, GS x k = 1, 2): range",
          f"{min(c0c1):.3f} - {max(c0c1):.3f}", "slightly > 1",)
    dd_l, dd_c1 = hmax("dd", gs, "lagrange", 0), hmax("dd", gs, "c1", 1)
    r.row("D/D GS constant (k = 0) Lagrange: stable on the whole grid",
          "yes" if dd_l * (1e6 / 10) ** 0.5 >= 0.999 * top else f"no (H_max {dd_l:.3g} s)",
          "yes (no unstable points)")
    r.row("D/D GS C1 (k = 1): unstable region at large H",
          f"yes (H_max {dd_c1:.3g} s)" if dd_c1 * (1e6 / 10) ** 0.5 < 0.999 * top else "no",
          "yes (small region at large c_k)",
          note="seed 001's constant C1 is k = 1 here (C0/C1 take k >= 1 under Gauss-Seidel)")
    l3 = hmax("dd", gs, "lagrange", 3)
    for a in ("c0", "c1"):
        ratio = hmax("dd", gs, a, 3) / l3
        r.row(f"D/D GS cubic (k = 3): H_max {a.upper()} / Lagrange", ratio, "slightly > 1",)
    _b2016_local_error(runner, r)
    r.note("STAB's B-2016 rows use the damped symmetric model (m = c = 1, d = 0.1); this study "
           "uses seed 001's own parameters and also F/D, D/D and the degree orderings")
    return r


def _b2016_local_error(runner, r):
    """Seed 001 Eq. 26 / Fig. 15: the order of one step's error from the exact history
    (`macrostep local-error`, methods.md §7.6) for F/D and D/D, Gauss-Seidel and Jacobi,
    Lagrange, C1 and C0 of degree k = 0..3."""
    hs, at = "5e-5,2.5e-5,1.25e-5,6.25e-6", "3e-3,4e-3,5e-3,6e-3,7e-3"
    for dec in ("fd", "dd"):
        for scheme in ("gauss-seidel", "explicit"):
            for approx in ("lagrange", "c1", "c0"):
                ours, want, coupling = [], [], []
                for k in range(4):
                    le = runner.local_error(
                        config_path(f"b-2016-{dec}.toml"),
                        ["--scheme", scheme, "--approximation", approx, "--order", str(k),
                         "--step-sizes", hs, "--at", at],
                        f"b2016_local_{dec}_{scheme}_{approx}_k{k}")
                    ours.append(le["order"])
                    coupling.append(le["slopes"]["coupling"])
                    w = k + (1 if dec == "fd" and scheme == "explicit" else 2)
                    want.append(min(w, 3) if approx == "c0" else w)
                bad = any(not abs(o - w) <= 0.3 for o, w in zip(ours, want))
                name = "Jacobi" if scheme == "explicit" else "GS"
                note = ("coupling variable after the consistent update: " +
                        " ".join(f"{c:.2f}" for c in coupling))
                r.row(f"local-error order (Eq. 26) {dec.upper()[0]}/{dec.upper()[1]} {name} "
                      f"{approx}, k = 0 1 2 3", " ".join(f"{o:.2f}" for o in ours),
                      " ".join(str(w) for w in want), failed=bad, note=note)
    r.note("local-error rows: `macrostep local-error configs/b-2016-fd.toml|b-2016-dd.toml "
           f"--step-sizes {hs} --at {at} --scheme S --approximation A --order k`: one macro "
           "step from the states and coupling history of a monolithic reference (IDA rtol "
           "1e-12), the largest relative error over the five start times, the lowest slope of "
           "the states and outputs (the order of seed 001's whole vector). Seed column: seed "
           "001 §4 states C1 = Lagrange, C0 capped at 3, F/D Jacobi one order below "
           "Gauss-Seidel, no drop in D/D; the numbers are those orders as methods.md §7.6 "
           "derives them (k + 2; C0 min(k + 2, 3); F/D Jacobi k + 1, C0 min(k + 1, 3)). "
           "Stand-ins: c_k = 1e6 N/m, d_k = 10 N s/m, x = (0.01, 0) m at t = 0")


def f26(runner, quick):
    r = Result()
    r.note("configs/f-2.6.toml: seed 003's two nonlinear oscillators as a two-mass chain (A: "
           "100 x^3, 10 v^3, 200 cos 24t; B: 200 x^2, 5 v^4; master spring 1e4), t_sim = 0.1 s "
           "[SI]; explicit Jacobi at fixed H = 4e-4, 2e-4, 1e-4 s with seed 003's sets "
           "(--approximation); IDA at rtol 1e-10 in place of RK5; in-process, one thread")
    cfg = config_path("f-2.6.toml")
    hs = [4e-4, 2e-4, 1e-4]
    # (name, --approximation, seed 003 Table 2.3 order q / v)
    sets = (("Const 2,1", "const-1-1", (2, 1)), ("Const 2,2", "const-2-2-b0", (2, 2)),
            ("Lin 2,2", "lin-2-2-b0", (3, 2)), ("Lin 2,3,Opt", "lin-2-3-opt", (3, 3)))
    for name, approx, (q, v) in sets:
        errs = []
        for h in hs:
            meta = runner.run(cfg, f"f26_{approx}_H{h:g}", INPROC + [
                "--approximation", approx, "--step-size", f"{h:g}"])
            errs.append(runner.nrmse(cfg, meta["csv"])["all"])
        r.row(f"global order (NRMSE slope), {name} = {approx}", fit_slope(hs, errs), float(v),
              note=f"seed orders q/v {q}/{v}; global = v [D]; NRMSE " +
                   ", ".join(f"{e:.2e}" for e in errs))
    # Seed 003 §2.3.1 / Fig. 2.7: one step from the exact history (`macrostep local-error`).
    local_sets = sets + (("Const 2,3,Opt", "const-2-3-opt", (2, 2)),
                         ("Lin 2,2,Opt", "lin-2-2-opt", (3, 2)))
    hs, at = "2e-4,1e-4,5e-5", "0.01,0.02,0.03"
    for name, approx, (q, v) in local_sets:
        le = runner.local_error(cfg, ["--approximation", approx, "--order", "0",
                                      "--step-sizes", hs, "--at", at], f"f26_local_{approx}")
        for group, order in (("positions", q), ("velocities", v)):
            ours = le["slopes"][group]
            r.row(f"local-error slope of {group}, {name} = {approx}", ours, float(order + 1),
                  failed=not abs(ours - (order + 1)) <= 0.3,
                  note=f"seed 003 Table 2.3: order {order}, per-step error H^{order + 1}")
    r.note(f"local-error rows: `macrostep local-error configs/f-2.6.toml --step-sizes {hs} "
           f"--at {at} --approximation A --order 0`: one macro step from the states and the "
           "K - 1 past samples of a monolithic reference (IDA rtol 1e-12, in place of seed "
           "003's RK5), the largest relative error over the three start times; expected slope "
           "= Table 2.3's order + 1 (methods.md §7.6)")
    r.note("seed column of the global rows: a per-step local error O(H^(v+1)) in the velocity "
           "sums over 1/H steps to a global O(H^v) (as seed 000's kappa + 1 = Lagrange's "
           "local v-order), derived, not printed in seed 003; sets: Const 2,1 = const-1-1 "
           "(a = 1), Const 2,2 = const-2-2-b0 and Lin 2,2 = lin-2-2-b0 (a = (1.5, -0.5), "
           "b = 0)")
    return r

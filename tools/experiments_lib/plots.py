"""The report's figures (matplotlib of /usr/bin/python3, Agg backend, small PNGs)."""
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402


def _save(fig, workdir, name):
    path = os.path.join(workdir, name)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return name


def failed_vs_safety(workdir, curves):
    """Failed-step ratio N_fail/N_mac over the safety factor Gamma (seed 000 §5.3).
    curves: {estimator: [(gamma, ratio), ...]}."""
    fig, ax = plt.subplots(figsize=(5.5, 3.6))
    for est, points in curves.items():
        g = [p[0] for p in points]
        v = [100 * p[1] for p in points]
        ax.plot(g, v, "o-" if est.startswith("ex") else "s--", label=est)
    ax.fill_between([0.6, 1.4], 35, 55, color="tab:red", alpha=0.2, label="seed: 35-55 % at Γ = 1")
    ax.fill_between([5.6, 6.4], 1, 5, color="tab:green", alpha=0.3, label="seed: 1-5 % at Γ = 6")
    ax.set_xlabel("safety factor Γ")
    ax.set_ylabel("failed-step ratio [%]")
    ax.set_title("K-5.3: failed macro steps vs safety factor")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    return _save(fig, workdir, "k53_failed_vs_safety.png")


def speedup_vs_ns(workdir, points, p):
    """Speed-up T_mono/T and T_mono/T_solv over n_s against the ideal n_s^P (seed 000
    Fig. 5.75 style). points: [(n_s, wall, solver seconds)], the first being n_s = 1."""
    t_mono, s_mono = points[0][1], points[0][2]
    ns = [q[0] for q in points]
    fig, ax = plt.subplots(figsize=(5.5, 3.6))
    ax.loglog(ns, [n ** p for n in ns], "k-", label=f"ideal n_s^P (P = {p:.2f})")
    ax.loglog(ns, [t_mono / q[1] for q in points], "o-", label="wall: T_mono / T")
    ax.loglog(ns[1:], [s_mono / q[2] for q in points[1:]], "s--",
              label="solver: T_mono,solv / T_solv")
    ax.axvline(2, color="grey", ls=":", lw=1)
    ax.text(2.05, 0.2, "2 CPUs", fontsize=8, color="grey", va="top",
            transform=ax.get_xaxis_transform())
    ax.set_xlabel("subsystems n_s")
    ax.set_ylabel("speed-up")
    ax.set_xticks(ns)
    ax.set_xticklabels([str(n) for n in ns])
    ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    ax.set_title("S-5.6: speed-up vs n_s")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    return _save(fig, workdir, "s56_speedup_vs_ns.png")


def convergence(workdir, hs, errors, order):
    """Global NRMSE over the macro step at fixed kappa against the slope kappa + 1 (seed 000
    §5.1, Fig. 5.3 style)."""
    fig, ax = plt.subplots(figsize=(5.5, 3.6))
    ax.loglog(hs, errors, "o-", label="ours (NRMSE vs global reference)")
    ax.loglog(hs, [errors[0] * (h / hs[0]) ** order for h in hs], "k--",
              label=f"slope {order} (seed: κ + 1)")
    ax.set_xlabel("macro step H [s]")
    ax.set_ylabel("NRMSE")
    ax.set_title("K-5.1: global error, explicit κ = 2")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    return _save(fig, workdir, "k51_convergence.png")

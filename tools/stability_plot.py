#!/usr/bin/python3
"""Plot of `macrostep stability`: spectral radius over omega_hat (log axis), the stability
border rho = 1 and the edge of the stable band that starts at small omega_hat. Usage:
    stability_plot.py SCAN.csv OUT.png TITLE OMEGA_MAX|none
SCAN.csv has the columns h, omega_hat, rho, stable (as `macrostep stability --csv` writes it)."""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    scan, png, title, omega_max = sys.argv[1:]
    with open(scan, newline="") as f:
        rows = list(csv.DictReader(f))
    w = [float(r["omega_hat"]) for r in rows]
    rho = [float(r["rho"]) for r in rows]
    fig, ax = plt.subplots(figsize=(8, 4.5))
    ax.plot(w, rho, color="tab:blue", lw=1.5, label="spectral radius")
    ax.axhline(1.0, color="black", lw=0.8, ls="--", label="rho = 1")
    if omega_max != "none":
        ax.axvline(float(omega_max), color="tab:red", lw=1.0,
                   label=f"edge of the stable band from small H: omega_hat = {float(omega_max):.4g}")
    ax.set_xscale("log")
    ax.set_xlabel("omega_hat = H sqrt(c1/m1)")
    ax.set_ylabel("spectral radius of the recurrence")
    top = max(1.2, min(max(rho), 3.0))
    ax.set_ylim(min(0.9, min(rho) - 0.02), top)
    ax.set_title(title, fontsize=8)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(png, dpi=120)


if __name__ == "__main__":
    main()

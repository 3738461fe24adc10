#!/usr/bin/python3
"""The standard figures of a macrostep run (`macrostep plot RESULT [--dir DIR]` calls this).

Usage: plot_run.py [--dir DIR] [--reference REF] RESULT...
Each RESULT is a run's result CSV (STEM.csv), its metadata (STEM.json) or its HDF5 file
(STEM.h5); the other files of the run are found beside it. REF is a result of the same system
(a reference or monolithic run). Writes into DIR (created with its parents if missing; default:
the folder of each RESULT):
  STEM.coupling.png   coupling variables and states over time (every run), one panel per unit
                      where the run's files record units (an angle never among torques)
  STEM.reference.png  with --reference: per unit, the run over REF (the columns both have) and
                      below it the difference run - REF (REF interpolated to the run's times)
  STEM.steps.png      macro-step size H and degree kappa over time, rejected attempts marked
                      (seed 000 Fig. 5.87 style; co-simulations with a steps file)
  STEM.breakdown.png  time breakdown of the master (seed 000 Eq. 4.5, Fig. 4.9) and per
                      subsystem solver / idle time (co-simulations)
and prints one line per file. Problems are one line on stderr, "macrostep plot: ...", exit 2.
The steps file STEM.steps.csv (or /steps in STEM.h5) has one row per macro-step attempt:
attempt, t_start, h, kappa, accepted, error_estimate, corrector_passes, wall_s,
solver_s_1..n, idle_s_1..n."""
import csv
import json
import math
import os
import sys

USAGE_ERROR = 2
MAX_STATE_CURVES = 8  # a figure with more curves than this is unreadable


class PlotError(Exception):
    """A problem the user can fix; reported as one line with exit status 2."""


def fail(message):
    print(f"macrostep plot: {message}", file=sys.stderr)
    sys.exit(USAGE_ERROR)


def read_csv_table(path, first):
    """Columns of a CSV whose header starts with `first`, as {name: [float]} in header order."""
    try:
        with open(path, newline="") as f:
            reader = csv.reader(f)
            header = next(reader, None)
            if not header or header[0] != first:
                raise PlotError(f"{path}: the first line is not a header starting with "
                                f"'{first}': not a macrostep {what(first)}")
            columns = {name: [] for name in header}
            for line, row in enumerate(reader, start=2):
                if len(row) != len(header):
                    raise PlotError(f"{path}:{line}: {len(row)} fields, the header has "
                                    f"{len(header)}")
                for name, value in zip(header, row):
                    columns[name].append(float(value))
    except UnicodeDecodeError:
        raise PlotError(f"{path}: not a text CSV: not a macrostep {what(first)}") from None
    except ValueError as e:
        raise PlotError(f"{path}: a field is not a number ({e})") from None
    return columns


def what(first):
    return "result" if first == "time" else "steps file"


def read_result_csv(path):
    columns = read_csv_table(path, "time")
    if not columns["time"]:
        raise PlotError(f"{path}: no rows")
    return columns


def read_h5(path):
    """(result columns, steps columns or None, metadata dict or None) from a run's HDF5 file."""
    try:
        import h5py
    except ImportError:
        raise PlotError("reading .h5 needs h5py (apt-get install python3-h5py)") from None
    try:
        f = h5py.File(path, "r")
    except OSError as e:
        raise PlotError(f"{path}: not an HDF5 file ({e})") from None
    with f:
        if "results" not in f:
            raise PlotError(f"{path}: no /results dataset: not a macrostep result")

        def table(name):
            data = f[name][()]
            names = [n.decode() if isinstance(n, bytes) else str(n)
                     for n in f[name].attrs.get("columns", [])]
            if data.dtype.names:  # a compound dataset
                return {n: [float(v) for v in data[n]] for n in data.dtype.names}
            if len(names) != data.shape[1]:
                raise PlotError(f"{path}: /{name} has no 'columns' attribute matching its width")
            return {n: [float(v) for v in data[:, j]] for j, n in enumerate(names)}

        results = table("results")
        steps = table("steps") if "steps" in f else None
        raw = f.attrs.get("metadata_json")  # the run's JSON document (docs/reference/commands.md)
        metadata = None if raw is None else json.loads(
            raw.decode() if isinstance(raw, bytes) else raw)
        units = [u.decode() if isinstance(u, bytes) else str(u)
                 for u in f["results"].attrs.get("units", [])]
    if "time" not in results:
        raise PlotError(f"{path}: /results has no 'time' column: not a macrostep result")
    if metadata is not None and len(units) == len(results) and "columns" not in metadata:
        metadata["columns"] = [{"name": n, "unit": u} for n, u in zip(results, units)]
    return results, steps, metadata


class Run:
    """A run's result, metadata and steps, located from any one of its files."""

    def __init__(self, path):
        if not os.path.exists(path):
            raise PlotError(f"{path}: no such file")
        if os.path.isdir(path):
            raise PlotError(f"{path}: is a directory, not a result")
        base, ext = os.path.splitext(path)
        self.stem = os.path.basename(base)
        self.folder = os.path.dirname(path)
        self.metadata = None
        self.steps = None
        self.steps_source = None
        if ext == ".h5":
            self.results, self.steps, self.metadata = read_h5(path)
            self.steps_source = path if self.steps is not None else None
        elif ext == ".json":
            self.metadata = self._read_json(path)
            self.results = read_result_csv(base + ".csv")
        else:
            self.results = read_result_csv(path)
        if self.metadata is None and os.path.exists(base + ".json"):
            self.metadata = self._read_json(base + ".json")
        if self.steps is None:
            self._find_steps(base)

    @staticmethod
    def _read_json(path):
        try:
            with open(path) as f:
                data = json.load(f)
        except (ValueError, UnicodeDecodeError) as e:
            raise PlotError(f"{path}: not JSON ({e})") from None
        if not isinstance(data, dict) or "mode" not in data:
            raise PlotError(f"{path}: no 'mode' key: not a macrostep run's metadata")
        return data

    def _find_steps(self, base):
        candidates = [base + ".steps.csv"]
        named = (self.metadata or {}).get("steps_file")
        if named:
            candidates.insert(0, named if os.path.isabs(named)
                              else os.path.join(self.folder, os.path.basename(named)))
        for candidate in candidates:
            if os.path.exists(candidate):
                self.steps = read_csv_table(candidate, "attempt")
                missing = [c for c in ("t_start", "h", "kappa", "accepted") if c not in self.steps]
                if missing:
                    raise PlotError(f"{candidate}: no column {missing[0]}: not a steps file")
                self.steps_source = candidate
                return

    @property
    def mode(self):
        return (self.metadata or {}).get("mode", "unknown")

    @property
    def cosimulation(self):
        return self.mode == "cosimulation"

    def units(self):
        """{column: unit} as the metadata's "columns" records them ("" or absent: unknown)."""
        columns = (self.metadata or {}).get("columns")
        if not isinstance(columns, list):
            return {}
        return {c["name"]: c["unit"] for c in columns
                if isinstance(c, dict) and isinstance(c.get("name"), str)
                and isinstance(c.get("unit"), str) and c["unit"]}

    def coupling_names(self):
        """The coupling-variable columns: the last n_c columns (DESIGN column order)."""
        names = [n for n in self.results if n != "time"]
        count = ((self.metadata or {}).get("partition") or {}).get("coupling_variables")
        if isinstance(count, int) and 0 < count <= len(names):
            return names[-count:]
        return [n for n in names if n.startswith("lambda_")]

    def title(self):
        """STEM: the description's first line, at most ~100 characters (some are paragraphs)."""
        text = ((self.metadata or {}).get("description") or "").strip().split("\n")[0]
        if len(text) > 100:
            text = text[:100].rsplit(" ", 1)[0] + " ..."
        return f"{self.stem}: {text}" if text else self.stem


def plt_module():
    try:
        import matplotlib
    except ImportError:
        raise PlotError("needs matplotlib for /usr/bin/python3 "
                        "(apt-get install python3-matplotlib)") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def unit_groups(names, units):
    """[(unit, [name, ...])]: the names by unit, units in the order they first appear, the names
    without a unit last (unit ""); every name in exactly one group, in its order."""
    groups = {}
    for name in names:
        groups.setdefault(units.get(name, ""), []).append(name)
    unknown = groups.pop("", None)
    return list(groups.items()) + ([("", unknown)] if unknown else [])


def unit_label(label, unit):
    return f"{label} [{unit}]" if unit else label


def coupling_panels(names, couplings, units):
    """[(names, label)]: the panels of the coupling figure. With units: one panel per unit
    (its coupling variables and outputs together); without (a result of an older version): the
    coupling variables, then positions and velocities / other outputs by their names."""
    if units:
        panels = []
        for unit, group in unit_groups(names, units):
            kinds = {"coupling variables" if n in couplings else "outputs" for n in group}
            panels.append((group, unit_label(" and ".join(sorted(kinds)), unit)))
        return panels
    states = [n for n in names if n not in couplings]
    positions = [n for n in states if n.split(".")[-1].startswith(("x", "phi"))]
    others = [n for n in states if n not in positions]
    panels = [([n for n in names if n in couplings], "coupling variables")]
    if positions and others:
        panels += [(positions, "positions"), (others, "velocities and other outputs")]
    elif states:
        panels.append((states, "states and outputs"))
    return [(group, label) for group, label in panels if group]


def plot_coupling(plt, run, png):
    time = run.results["time"]
    names = [n for n in run.results if n != "time"]
    panels = coupling_panels(names, set(run.coupling_names()), run.units())
    fig, axes = plt.subplots(len(panels), 1, figsize=(9, 2.6 * len(panels) + 0.6),
                             sharex=True, squeeze=False, layout="constrained")
    for ax, (names, label) in zip(axes[:, 0], panels):
        shown = names[:MAX_STATE_CURVES]
        for name in shown:
            ax.plot(time, run.results[name], lw=1.0, label=name)
        more = f" (first {len(shown)} of {len(names)})" if len(shown) < len(names) else ""
        ax.set_ylabel(label + more, fontsize=8)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7, loc="upper right", ncol=min(4, len(shown)))
    axes[-1, 0].set_xlabel("time [s]")
    fig.suptitle(f"{run.title()} ({run.mode})", fontsize=9)
    fig.savefig(png, dpi=110)
    plt.close(fig)


def interpolate(times, t, y):
    """y(t) at `times`, linear between the samples (held beyond the ends)."""
    import numpy
    return numpy.interp(times, t, y)


def reference_panels(run, reference):
    """[(unit, [name, ...])]: the columns run and reference both have, grouped by unit (the
    run's units, else the reference's)."""
    names = [n for n in run.results if n != "time" and n in reference.results]
    if not names:
        raise PlotError(f"no column of {run.stem} is in the reference {reference.stem}")
    units = dict(reference.units())
    units.update(run.units())
    return unit_groups(names, units)


def plot_reference(plt, run, reference, png):
    """Per unit: the run (solid) over the reference (dashed), and below the difference."""
    time = run.results["time"]
    groups = reference_panels(run, reference)
    fig, axes = plt.subplots(2 * len(groups), 1, figsize=(9, 3.4 * len(groups) + 0.6),
                             sharex=True, squeeze=False,
                             gridspec_kw={"height_ratios": [2, 1] * len(groups)},
                             layout="constrained")
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for k, (unit, names) in enumerate(groups):
        top, bottom = axes[2 * k, 0], axes[2 * k + 1, 0]
        shown = names[:MAX_STATE_CURVES]
        for j, name in enumerate(shown):
            colour = colours[j % len(colours)]
            ref = interpolate(time, reference.results["time"], reference.results[name])
            top.plot(reference.results["time"], reference.results[name], lw=1.6, ls="--",
                     color=colour, alpha=0.6)
            top.plot(time, run.results[name], lw=0.9, color=colour, label=name)
            bottom.plot(time, [r - f for r, f in zip(run.results[name], ref)], lw=0.9,
                        color=colour)
        more = f" (first {len(shown)} of {len(names)})" if len(shown) < len(names) else ""
        top.set_ylabel(unit_label("value", unit) + more, fontsize=8)
        bottom.set_ylabel(unit_label("run - reference", unit), fontsize=8)
        for ax in (top, bottom):
            ax.grid(True, alpha=0.3)
        top.legend(fontsize=7, loc="upper right", ncol=min(4, len(shown)))
    axes[-1, 0].set_xlabel("time [s]")
    fig.suptitle(f"{run.title()} ({run.mode}, solid) over {reference.stem} "
                 f"({reference.mode}, dashed)", fontsize=9)
    fig.savefig(png, dpi=110)
    plt.close(fig)


def plot_steps(plt, run, png):
    """H and kappa over time; rejected attempts as red crosses (seed 000 Fig. 5.87 style)."""
    s = run.steps
    accepted = [a >= 0.5 for a in s["accepted"]]
    t_acc = [t for t, a in zip(s["t_start"], accepted) if a]
    h_acc = [h for h, a in zip(s["h"], accepted) if a]
    k_acc = [k for k, a in zip(s["kappa"], accepted) if a]
    t_rej = [t for t, a in zip(s["t_start"], accepted) if not a]
    h_rej = [h for h, a in zip(s["h"], accepted) if not a]
    k_rej = [k for k, a in zip(s["kappa"], accepted) if not a]
    has_error = "error_estimate" in s and any(math.isfinite(e) for e in s["error_estimate"])
    rows = 3 if has_error else 2
    fig, axes = plt.subplots(rows, 1, figsize=(9, 2.4 * rows + 0.8), sharex=True,
                             gridspec_kw={"height_ratios": [2, 1, 1][:rows]},
                             layout="constrained")
    ax = axes[0]
    ax.step(t_acc, h_acc, where="post", lw=0.9, color="tab:blue",
            label=f"accepted H ({len(t_acc)} steps)")
    if t_rej:
        ax.plot(t_rej, h_rej, "x", color="tab:red", ms=5,
                label=f"rejected attempt ({len(t_rej)})")
    ax.set_yscale("log")
    ax.set_ylabel("macro-step size H [s]")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    ax = axes[1]
    ax.step(t_acc, k_acc, where="post", lw=0.9, color="tab:green")
    if t_rej:
        ax.plot(t_rej, k_rej, "x", color="tab:red", ms=5)
    ax.set_ylabel("degree kappa")
    top = int(max(k_acc + k_rej + [1]))
    ax.set_yticks(range(0, top + 1))
    ax.set_ylim(-0.3, top + 0.3)
    ax.grid(True, alpha=0.3)
    # Share of the simulated time per degree, as in the pie charts of Fig. 5.87.
    total = sum(h_acc) or 1.0
    shares = ", ".join(f"{k}: {100.0 * sum(h for h, kk in zip(h_acc, k_acc) if kk == k) / total:.0f} %"
                       for k in sorted(set(int(k) for k in k_acc)))
    ax.set_title(f"share of the simulated time per kappa: {shares}", fontsize=8)
    if has_error:
        ax = axes[2]
        e_acc = [e for e, a in zip(s["error_estimate"], accepted) if a]
        e_rej = [e for e, a in zip(s["error_estimate"], accepted) if not a]
        ax.plot(t_acc, e_acc, ".", ms=2, color="tab:blue")
        if t_rej:
            ax.plot(t_rej, e_rej, "x", color="tab:red", ms=5)
        ax.axhline(1.0, color="black", lw=0.8, ls="--")
        ax.set_yscale("log")
        ax.set_ylabel("error estimate")
        ax.grid(True, which="both", alpha=0.3)
    axes[-1].set_xlabel("time T_N [s]")
    fig.suptitle(f"{run.title()}: macro steps", fontsize=9)
    fig.savefig(png, dpi=110)
    plt.close(fig)


BREAKDOWN_PARTS = [  # JSON key in "time", label, colour (seed 000 Fig. 4.9 colours)
    ("solver_s", "solver (slowest subsystem)", "tab:blue"),
    ("idle_s", "idle (Eq. 4.5)", "lightsteelblue"),
    ("extra_runs_s", "extra runs (estimator, Jacobian)", "tab:purple"),
    ("interface_s", "interface", "tab:green"),
    ("snapshot_s", "snapshot", "tab:brown"),
    ("communication_s", "communication", "gold"),
    ("output_s", "output", "tab:red"),
]


def subsystem_times(run):
    """Per subsystem (solver, idle) seconds from the steps file, else solver from the JSON."""
    if run.steps is not None:
        count = sum(1 for name in run.steps if name.startswith("solver_s_"))
        solver = [sum(run.steps[f"solver_s_{i}"]) for i in range(1, count + 1)]
        idle = [sum(run.steps[f"idle_s_{i}"]) for i in range(1, count + 1)
                if f"idle_s_{i}" in run.steps]
        if count:
            return solver, idle if len(idle) == count else None
    subsystems = ((run.metadata or {}).get("statistics") or {}).get("subsystems") or []
    solver = [s.get("solver_s") for s in subsystems]
    if solver and all(isinstance(v, (int, float)) for v in solver):
        return solver, None
    return [], None


def plot_breakdown(plt, run, png):
    times = run.metadata.get("time") or {}
    solver, idle = subsystem_times(run)
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.4),
                                      gridspec_kw={"width_ratios": [1, 1.3]},
                                      layout="constrained")
    parts = [(key, label, colour, times.get(key)) for key, label, colour in BREAKDOWN_PARTS
             if isinstance(times.get(key), (int, float))]
    bottom = 0.0
    for key, label, colour, value in parts:
        left.bar(0, value, bottom=bottom, color=colour, width=0.6,
                 label=f"{label}: {value:.3g} s")
        bottom += value
    wall = times.get("wall_s")
    if isinstance(wall, (int, float)):
        left.axhline(wall, color="black", ls="--", lw=1.0, label=f"wall time: {wall:.3g} s")
    left.set_xticks([])
    left.set_xlim(-0.5, 2.2)
    left.set_ylabel("seconds")
    left.set_title("master: parts of the run time (seed 000 Eq. 4.5)\n"
                   "extra runs run beside the nominal ones, so the parts may exceed the wall",
                   fontsize=8)
    left.legend(fontsize=7, loc="lower right")
    if solver:
        index = list(range(1, len(solver) + 1))
        right.bar(index, solver, color="tab:blue", label="solver (nominal runs)")
        if idle:
            right.bar(index, idle, bottom=solver, color="lightsteelblue",
                      label="idle_s: the attempts' wall minus this solver (waiting for the "
                            "others, its extra runs, the master's work)")
        micro = [s.get("micro_steps") for s in
                 ((run.metadata.get("statistics") or {}).get("subsystems") or [])]
        readable = len(solver) <= 12  # more bars: no labels, fewer ticks
        if readable and len(micro) == len(solver) and all(isinstance(m, int) for m in micro):
            for i, m in zip(index, micro):
                right.annotate(f"{m} micro", (i, solver[i - 1]), ha="center", va="bottom",
                               fontsize=7, xytext=(0, 2), textcoords="offset points")
        if readable:
            right.set_xticks(index)
        else:
            from matplotlib.ticker import MaxNLocator
            right.xaxis.set_major_locator(MaxNLocator(nbins=10, integer=True))
        right.set_xlabel("subsystem")
        right.set_ylabel("seconds")
        source = "steps file" if idle else "metadata (no steps file: solver only)"
        right.set_title(f"per subsystem, summed over the attempts ({source})", fontsize=8)
        right.legend(fontsize=7)
    else:
        right.text(0.5, 0.5, "no per-subsystem times in this run", ha="center",
                   transform=right.transAxes)
        right.set_axis_off()
    fig.suptitle(f"{run.title()}: time breakdown", fontsize=9)
    fig.savefig(png, dpi=110)
    plt.close(fig)


def plot_run(plt, path, folder, reference=None):
    """The figures of one run (and its comparison with `reference`, a Run, if given); returns
    [(png, what)] and a note or None. A reference that shares no column with the run is refused
    before any figure is written."""
    run = Run(path)
    folder = run.folder if folder is None else folder
    out = os.path.join(folder, run.stem)
    if reference is not None:
        reference_panels(run, reference)
    written = []
    plot_coupling(plt, run, out + ".coupling.png")
    written.append((out + ".coupling.png", "coupling variables and states over time"))
    if reference is not None:
        plot_reference(plt, run, reference, out + ".reference.png")
        written.append((out + ".reference.png",
                        f"over the reference {reference.stem}, the difference below"))
    if run.steps is not None:
        accepted = sum(1 for a in run.steps["accepted"] if a >= 0.5)
        rejected = len(run.steps["accepted"]) - accepted
        plot_steps(plt, run, out + ".steps.png")
        written.append((out + ".steps.png",
                        f"macro-step size and kappa: {accepted} accepted steps, {rejected} "
                        f"rejected attempts, from {run.steps_source}"))
    if run.cosimulation and run.metadata is not None:
        plot_breakdown(plt, run, out + ".breakdown.png")
        written.append((out + ".breakdown.png", "time breakdown"))
    note = None
    if run.cosimulation and run.steps is None:
        note = f"{path}: no steps file beside the result: no macro-step plot"
    return written, note


def main(argv):
    args = argv[1:]
    options = {"--dir": None, "--reference": None}
    while len(args) >= 2 and args[0] in options:
        options[args[0]], args = args[1], args[2:]
    folder, reference_path = options["--dir"], options["--reference"]
    if not args:
        fail("usage: plot_run.py [--dir DIR] [--reference REF] RESULT...")
    try:
        if folder is not None and os.path.exists(folder) and not os.path.isdir(folder):
            raise PlotError(f"{folder}: is a file, not a directory for the figures")
        for path in args + ([reference_path] if reference_path else []):
            if not os.path.exists(path):  # every file is checked before the first figure
                raise PlotError(f"{path}: no such file")
        reference = Run(reference_path) if reference_path else None
        plt = plt_module()
        if folder is not None:
            os.makedirs(folder, exist_ok=True)  # with its parents, like the result's folder
        for path in args:
            written, note = plot_run(plt, path, folder, reference)
            for png, what in written:
                print(f"plot: {png} ({what})")
            if note:
                print(note)
            sys.stdout.flush()
    except PlotError as e:
        fail(str(e))
    except OSError as e:
        fail(f"{e.filename or ''}: {e.strerror}")


if __name__ == "__main__":
    main(sys.argv)

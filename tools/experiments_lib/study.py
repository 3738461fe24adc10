"""What a study returns: rows of (quantity, ours, seed's figure, ratio, note), notes, plots."""
import math


class Row:
    """One compared figure. ours and seed are numbers or short texts (a qualitative published
    statement); ratio = ours / seed when both are numbers."""

    def __init__(self, quantity, ours, seed, note="", failed=False):
        self.quantity = quantity
        self.ours = ours
        self.seed = seed
        self.note = note
        self.failed = failed

    @property
    def ratio(self):
        if isinstance(self.ours, (int, float)) and isinstance(self.seed, (int, float)) \
                and self.seed != 0 and math.isfinite(self.ours):
            return self.ours / self.seed
        return None


class Result:
    """The outcome of one study: rows, notes (what was scaled down, why a figure differs),
    plots (PNG file names in the output directory), and the measured runs' wall seconds."""

    def __init__(self):
        self.rows = []
        self.notes = []
        self.plots = []

    def row(self, *args, **kwargs):
        self.rows.append(Row(*args, **kwargs))

    def note(self, text):
        self.notes.append(text)


class Study:
    """A study of spec/MODELS.md: id (as in MODELS.md), title, source (seed reference), and
    run(runner, quick) -> Result. `smoke` marks the one tiny study CI runs; quick_repeat: how
    many interleaved rounds its time ratios take in --quick (cheap studies take 3)."""

    def __init__(self, sid, title, source, run, smoke=False, quick_repeat=1):
        self.id = sid
        self.title = title
        self.source = source
        self.run = run
        self.smoke = smoke
        self.quick_repeat = quick_repeat  # rounds of its timed comparisons in --quick


def fit_slope(xs, ys):
    """Least-squares slope of log(y) over log(x)."""
    lx = [math.log(x) for x in xs]
    ly = [math.log(y) for y in ys]
    mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
    sxx = sum((a - mx) ** 2 for a in lx)
    return sum((a - mx) * (b - my) for a, b in zip(lx, ly)) / sxx


def micro_per_macro(meta):
    """Mean over subsystems of micro steps per accepted macro step."""
    subs = meta["statistics"]["subsystems"]
    steps = meta["statistics"]["macro_steps"]
    return sum(s["micro_steps"] for s in subs) / len(subs) / max(steps, 1)


def idle_share(meta):
    """T_idle / (T_solv + T_idle) (seed 000 Eq. 4.5)."""
    t = meta["time"]
    total = t["solver_s"] + t["idle_s"]
    return t["idle_s"] / total if total > 0 else 0.0


def ideal_parallel(meta):
    """The run's time with every run of a pass on its own core (MODELS.md §4.4, small
    machines): solver + idle + communication + interface + snapshot."""
    t = meta["time"]
    return t["solver_s"] + t["idle_s"] + t["communication_s"] + t["interface_s"] + \
        t["snapshot_s"]


def spread(metas):
    """'median of N rounds, min-max' of the runs' walls, for a note."""
    parts = []
    for name, m in metas.items():
        w = m.get("walls", [m["wall"]])
        if len(w) > 1:
            parts.append(f"{name} {m['wall']:.2f} s ({w[0]:.2f}-{w[-1]:.2f})")
        else:
            parts.append(f"{name} {m['wall']:.2f} s")
    rounds = len(next(iter(metas.values())).get("walls", [0]))
    return (f"wall, median of {rounds} interleaved rounds (min-max): " if rounds > 1 else
            "wall, one run: ") + ", ".join(parts)

"""The trace-driven projection of a co-simulation's wall time onto P cores (tools/project-cores
documents the model; tools/bench-scaling prints it for its sweeps)."""
import csv
import json
import os


class TraceError(Exception):
    """A run whose metadata or steps file cannot be read as a trace."""


def load(path):
    """(attempts, subsystems, threads per subsystem, measured cores) of a run's metadata."""
    try:
        with open(path) as f:
            meta = json.load(f)
    except (OSError, ValueError) as e:
        raise TraceError(f"{path}: {e}")
    steps = meta.get("steps_file")
    if not steps:
        raise TraceError(f"{path}: the run has no steps file (a monolithic run, or steps "
                         "written elsewhere)")
    steps = os.path.join(os.path.dirname(os.path.abspath(path)), steps)
    placement = meta.get("placement") or {}
    try:
        with open(steps) as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        raise TraceError(f"{steps}: {e}")
    if not rows or "executor_s" not in rows[0]:
        raise TraceError(f"{steps}: no trace columns (executor_s, extra_runs_L, extra_s_L): a "
                         "steps file of an older macrostep")
    n = sum(1 for name in rows[0] if name.startswith("solver_s_"))
    attempts = []
    for r in rows:
        passes = int(float(r["corrector_passes"])) + 1
        attempts.append({
            "passes": passes,
            "wall": float(r["wall_s"]),
            "executor": float(r["executor_s"]),
            "nominal": [float(r[f"solver_s_{i}"]) for i in range(1, n + 1)],
            "extra_runs": [float(r[f"extra_runs_{i}"]) for i in range(1, n + 1)],
            "extra": [float(r[f"extra_s_{i}"]) for i in range(1, n + 1)],
        })
    threads = int(placement.get("pus_per_subsystem") or 1)
    cores = int(placement.get("available_pus") or os.cpu_count() or 1)
    return attempts, n, threads, cores


def arena(tasks, k):
    """Makespan of `tasks` (durations) on k threads, longest first to the least loaded."""
    loads = [0.0] * max(1, k)
    for t in sorted(tasks, reverse=True):
        i = loads.index(min(loads))
        loads[i] += t
    return max(loads)


def pass_time(attempt, p, k):
    """One pass of `attempt` on p cores with k threads per subsystem."""
    n = attempt["passes"]
    critical, work = 0.0, 0.0
    for nominal, runs, extra in zip(attempt["nominal"], attempt["extra_runs"], attempt["extra"]):
        tasks = [nominal / n]
        per_pass = runs / n
        if per_pass > 0:
            whole = max(1, round(per_pass))
            tasks += [extra / n / whole] * whole
        critical = max(critical, arena(tasks, k))
        work += sum(tasks)
    return max(critical, work / p)


def project(attempts, subsystems, threads, measured, cores, fixed_threads, communication):
    def k_for(p):
        return fixed_threads or min(threads, max(1, p // subsystems))
    k_measured = k_for(measured)
    totals = {p: 0.0 for p in cores}
    for a in attempts:
        master = max(0.0, a["wall"] - a["executor"])
        runs_measured = a["passes"] * pass_time(a, measured, k_measured)
        overhead = max(0.0, a["executor"] - runs_measured) if communication == "measured" else 0
        for p in cores:
            totals[p] += master + overhead + a["passes"] * pass_time(a, p, k_for(p))
    return totals

#!/usr/bin/python3
"""The demo of tools/run: co-simulation against the monolithic solver on one model.

Usage: demo.py MACROSTEP CONFIG OUTDIR ROUNDS [RUN_ARG...]
Runs `macrostep run CONFIG` (co-simulation, RUN_ARGs appended) and `macrostep run CONFIG
--monolithic` ROUNDS times, interleaved, timing each command from start to exit; computes one
tight reference (`macrostep reference --at`, rtol 1e-10) at the union of both runs' output
times, so that `compare` measures both errors without interpolating; plots the co-simulation
(`macrostep plot`); prints wall times (median and range over the rounds), the speed-up, both
NRMSEs, the co-simulation's time breakdown from its JSON and the plot files."""
import json
import os
import re
import statistics
import subprocess
import sys
import time


def run(command, quiet=True):
    """Runs a command; returns (seconds from start to exit, stdout). Exits on failure."""
    start = time.monotonic()
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    seconds = time.monotonic() - start
    if done.returncode != 0:
        sys.stdout.write(done.stdout)
        sys.exit(f"demo: `{' '.join(command)}` failed with status {done.returncode}")
    if not quiet:
        sys.stdout.write(done.stdout)
    return seconds, done.stdout


def times_of(path):
    with open(path) as f:
        next(f)
        return [float(line.split(",", 1)[0]) for line in f if line.strip()]


def write_union_times(path, *csvs):
    """A CSV with one `time` column: every time point of the given results, sorted."""
    union = sorted(set(t for csv in csvs for t in times_of(csv)))
    with open(path, "w") as f:
        f.write("time\n")
        f.writelines(repr(t) + "\n" for t in union)  # repr: shortest exact form


def nrmse(compare_output):
    match = re.search(r"NRMSE \(2-norm over \d+ variables\): (\S+)", compare_output)
    if not match:
        sys.exit("demo: no NRMSE line in the output of compare")
    return float(match.group(1))


def spread(values):
    if len(values) == 1:
        return f"{values[0]:.2f} s"
    return (f"{statistics.median(values):.2f} s (median of {len(values)}, "
            f"{min(values):.2f} .. {max(values):.2f})")


def load():
    return os.getloadavg()[0]


def main(argv):
    if len(argv) < 5:
        sys.exit(__doc__)
    macrostep, config, outdir, rounds = argv[1], argv[2], argv[3], int(argv[4])
    extra = argv[5:]
    stem = os.path.join(outdir, os.path.splitext(os.path.basename(config))[0])
    cosim_csv, mono_csv = stem + ".csv", stem + ".monolithic.csv"
    began = time.monotonic()
    load_before = load()
    cosim_s, mono_s, summary = [], [], ""
    for r in range(rounds):
        seconds, output = run([macrostep, "run", config, "--output", cosim_csv] + extra)
        cosim_s.append(seconds)
        summary = output  # the last round's: its JSON is the one read below
        mono_s.append(run([macrostep, "run", config, "--monolithic", "--output", mono_csv])[0])
        if rounds > 1:
            print(f"round {r + 1}: co-simulation {cosim_s[-1]:.2f} s, "
                  f"monolithic {mono_s[-1]:.2f} s", flush=True)
    load_after = load()
    print(summary, end="")

    times_csv, reference_csv = stem + ".times.csv", stem + ".reference.csv"
    write_union_times(times_csv, cosim_csv, mono_csv)
    reference_s = run([macrostep, "reference", config, "--at", times_csv, "--output",
                       reference_csv])[0]
    error_cosim = nrmse(run([macrostep, "compare", cosim_csv, reference_csv])[1])
    error_mono = nrmse(run([macrostep, "compare", mono_csv, reference_csv])[1])
    plots = run([macrostep, "plot", cosim_csv])[1]

    with open(stem + ".json") as f:
        cosim = json.load(f)
    with open(stem + ".monolithic.json") as f:
        mono = json.load(f)
    t = cosim["time"]
    ratios = [m / c for c, m in zip(cosim_s, mono_s)]
    subsystems = cosim["statistics"]["subsystems"]
    print()
    print(f"demo: {config}: {cosim.get('description', '')}")
    print(f"  co-simulation wall time  {spread(cosim_s)}   "
          f"({cosim['cosim']['scheme']} Jacobi, {cosim['cosim']['method']} rtol "
          f"{cosim['cosim']['rtol']:g}, {len(subsystems)} subsystems, "
          f"{cosim['cosim']['executor']}; IDA rtol {cosim['solver']['rtol']:g}, "
          f"{cosim['solver']['linear_solver'].upper()})")
    print(f"  monolithic wall time     {spread(mono_s)}   "
          f"(one IDA, rtol {mono['solver']['rtol']:g}, "
          f"{mono['solver']['linear_solver'].upper()})")
    ratio_text = f"{statistics.median(ratios):.2f}x"
    if rounds > 1:
        ratio_text += (f" (median of the {rounds} interleaved rounds' ratios, "
                       f"{min(ratios):.2f} .. {max(ratios):.2f})")
    print(f"  speed-up                 {ratio_text}")
    print(f"  NRMSE against the reference (monolithic, rtol 1e-10, at both runs' output times):")
    print(f"    co-simulation {error_cosim:.3e} at {len(times_of(cosim_csv))} macro points, "
          f"monolithic {error_mono:.3e} at {len(times_of(mono_csv))} grid points")
    last = " (last round)" if rounds > 1 else ""
    print(f"  co-simulation time breakdown{last} [s] (seed 000 Eq. 4.5): "
          + ", ".join(f"{label} {t[key]:.3f}" for key, label in [
              ("solver_s", "solver"), ("idle_s", "idle"), ("extra_runs_s", "extra runs"),
              ("interface_s", "interface"), ("snapshot_s", "snapshot"),
              ("communication_s", "communication"), ("output_s", "output"),
              ("wall_s", "wall")]))
    print(f"  per subsystem{last} (masses: micro steps, solver s): " + "; ".join(
        f"{s['masses'][1] - s['masses'][0] + 1}: {s['micro_steps']}, {s['solver_s']:.3f}"
        if "masses" in s else f"{s['subsystem']}: {s['micro_steps']}, {s['solver_s']:.3f}"
        for s in subsystems))
    print(f"  monolithic: {mono['statistics']['micro_steps']} micro steps")
    for line in plots.splitlines():
        print("  " + line)
    print(f"  load average {load_before:.1f} before, {load_after:.1f} after the timed runs; "
          f"reference {reference_s:.1f} s; the demo took {time.monotonic() - began:.0f} s")


if __name__ == "__main__":
    main(sys.argv)

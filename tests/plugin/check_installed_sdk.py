#!/usr/bin/python3
"""The installed SDK as a user meets it: install the release build into a temporary prefix,
build examples/duffing out of tree against that prefix's package (find_package(macrostep),
macrostep::sdk), and co-simulate two of its oscillators with the installed binary, which also
finds its plot script in the prefix and nowhere else.

  check_installed_sdk.py --build DIR --source DIR --cmake CMAKE --cxx CXX --version V --commit C

exit 0 if every step holds, 1 with the step and its output if not.
"""
import argparse
import csv
import json
import math
import os
import subprocess
import sys
import tempfile
import time

# What a plugin includes (plugin_api.hpp, the Subsystem interface it includes, and the interface of
# models with events: their modes and the view a mode's equations are), nothing more.
HEADERS = {"macrostep/model/events.hpp", "macrostep/model/subsystem.hpp",
           "macrostep/model/subsystem_view.hpp", "macrostep/plugin/plugin_api.hpp"}
END_TIME, INTERVAL = 0.5, 1e-2  # s
START = time.monotonic()

CONFIG = """description = "two Duffing oscillators from a plugin built against the installed SDK"
[[subsystem]]
name = "left"
model = "plugin"
library = "{library}"
parameters = {{mass = 1.0, stiffness = 100.0, cubic = 1.0e4, damping = 0.5, amplitude = 20.0, omega = 7.0, x0 = 0.05}}
[[subsystem]]
name = "right"
model = "plugin"
library = "{library}"
parameters = {{mass = 0.5, stiffness = 50.0, cubic = 2.0e3, damping = 0.2, force_sign = -1}}
[[connection]]
name = "spring"
law = "spring_damper"
from = ["left.x", "left.v", "right.x", "right.v"]
to = ["left.force", "right.force"]
c = 400.0
d = 1.0
[simulation]
end_time = {end_time}
output_interval = {interval}
[cosim]
rtol = 1e-5
"""


def fail(step, why):
    print(f"installed SDK: {step}: {why}", file=sys.stderr)
    sys.exit(1)


def run(step, command, cwd=None, expect=0):
    """Runs `command` without MACROSTEP_TOOLS_DIR (the binary must find its scripts itself)."""
    env = {k: v for k, v in os.environ.items() if k != "MACROSTEP_TOOLS_DIR"}
    proc = subprocess.run(command, cwd=cwd, env=env, text=True, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, timeout=120)
    print(f"{step}: done at {time.monotonic() - START:.1f} s", flush=True)
    if proc.returncode != expect:
        fail(step, f"{' '.join(command)} exited {proc.returncode} (expected {expect}):\n"
                   f"{proc.stdout}")
    return proc.stdout


def check_layout(prefix):
    headers = {os.path.relpath(os.path.join(d, f), os.path.join(prefix, "include"))
               for d, _, files in os.walk(os.path.join(prefix, "include")) for f in files}
    if headers != HEADERS:
        fail("install", f"headers {sorted(headers)}, expected {sorted(HEADERS)}")
    for path in ("bin/macrostep", "share/macrostep/plot_run.py",
                 "share/macrostep/stability_plot.py", "lib/libmacrostep_model.a",
                 "lib/cmake/macrostep/macrostepConfig.cmake"):
        if not os.path.isfile(os.path.join(prefix, path)):
            fail("install", f"{path} is missing under {prefix}")


def build_plugin(a, prefix, build):
    # Warnings are errors, as in macrostep's own build: the installed headers compile cleanly.
    run("configure the plugin", [a.cmake, "-S", os.path.join(a.source, "examples", "duffing"),
                                 "-B", build, "-G", "Ninja", f"-DCMAKE_PREFIX_PATH={prefix}",
                                 f"-DCMAKE_CXX_COMPILER={a.cxx}",
                                 "-DCMAKE_CXX_FLAGS=-Wall -Wextra -Wpedantic -Werror"])
    with open(os.path.join(build, "CMakeCache.txt")) as f:
        found = [line.strip() for line in f if line.startswith("macrostep_DIR:")]
    expected = os.path.join(prefix, "lib", "cmake", "macrostep")
    if found != [f"macrostep_DIR:PATH={expected}"]:
        fail("configure the plugin", f"found the package at {found}, not at {expected}")
    run("build the plugin", [a.cmake, "--build", build, "--target", "duffing_oscillator"])
    return os.path.join(build, "duffing_oscillator.so")


def check_result(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    if rows[0] != ["time", "left.x", "left.v", "right.x", "right.v", "spring"]:
        fail("run", f"columns {rows[0]}")
    values = [[float(v) for v in row] for row in rows[1:]]
    times = [row[0] for row in values]
    # A co-simulation writes its accepted macro points, from 0 to the end time.
    if (len(times) < 10 or times[0] != 0.0 or abs(times[-1] - END_TIME) > 1e-12
            or any(b <= a for a, b in zip(times, times[1:]))):
        fail("run", f"{len(times)} rows from t = {times[0]} to {times[-1]}, or not increasing")
    if not all(math.isfinite(v) for row in values for v in row):
        fail("run", "a value that is not finite")
    if max(abs(row[5]) for row in values) < 1.0:  # the forced left body stretches the spring
        fail("run", "the spring's force stays below 1 N: the bodies did not move")


def check_binary(a, prefix, work, plugin):
    binary = os.path.join(prefix, "bin", "macrostep")
    first = run("--version", [binary, "--version"]).splitlines()[0]
    if first != f"macrostep {a.version} (commit {a.commit})":
        fail("--version", f"'{first}', configured: {a.version} (commit {a.commit}); a build "
                          "configured anew needs the macrostep target rebuilt before this test")
    config = os.path.join(work, "pair.toml")
    with open(config, "w") as f:
        f.write(CONFIG.format(library=plugin, end_time=END_TIME, interval=INTERVAL))
    result = os.path.join(work, "pair.csv")
    # Worker processes: the installed binary starts itself and each loads the plugin.
    run("run", [binary, "run", config, "--executor", "processes", "--output", result], cwd=work)
    check_result(result)
    with open(os.path.join(work, "pair.json")) as f:
        json.load(f)
    run("plot", [binary, "plot", result], cwd=work)
    if not os.path.isfile(os.path.join(work, "pair.coupling.png")):
        fail("plot", "no pair.coupling.png")
    # Without the installed script the binary has no other: the source tree is not used.
    os.remove(os.path.join(prefix, "share", "macrostep", "plot_run.py"))
    out = run("plot without the script", [binary, "plot", result], cwd=work, expect=2)
    if "plot_run.py not found" not in out:
        fail("plot without the script", out)


def main():
    p = argparse.ArgumentParser()
    for option in ("--build", "--source", "--cmake", "--cxx", "--version", "--commit"):
        p.add_argument(option, required=True)
    a = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="macrostep-sdk-") as work:
        prefix = os.path.join(work, "prefix")
        run("install", [a.cmake, "--install", a.build, "--prefix", prefix])
        check_layout(prefix)
        plugin = build_plugin(a, prefix, os.path.join(work, "plugin-build"))
        check_binary(a, prefix, work, plugin)
    print("installed SDK: install, out-of-tree plugin, run, plot and --version hold")


if __name__ == "__main__":
    main()

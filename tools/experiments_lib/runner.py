"""Running `macrostep` for the experiments: one run, its JSON, its error against a reference.

Every run writes into the study's own directory under the output directory; a run that fails
raises RunFailed with the last line macrostep printed, which the study turns into a failed row.
"""
import json
import os
import re
import subprocess
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CONFIGS = os.path.join(ROOT, "configs")


class RunFailed(RuntimeError):
    """A macrostep command exited with an error or timed out (message: why, in one line)."""


class Runner:
    """Runs macrostep commands in a work directory and reports each one as a progress line.

    binary: the macrostep executable; workdir: where results go (created); plotdir: where the
    report's PNGs go; log: callable taking one progress line. Runs are sequential: the studies
    measure wall times, and a second run beside one would disturb it."""

    def __init__(self, binary, workdir, plotdir, log):
        self.binary = binary
        self.workdir = workdir
        self.plotdir = plotdir
        self.log = log
        self.count = 0
        self.repeat = 1  # rounds of the timed comparisons (rounds())
        os.makedirs(workdir, exist_ok=True)

    def path(self, name):
        return os.path.join(self.workdir, name)

    def _call(self, args, name, timeout):
        start = time.monotonic()
        try:
            proc = subprocess.run([self.binary] + args, cwd=self.workdir, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            self.log(f"    {name}: stopped after the {timeout:.0f} s cap")
            raise RunFailed(f"{name}: exceeded the {timeout:.0f} s cap") from None
        seconds = time.monotonic() - start
        self.count += 1
        self.log(f"    {name}: exit {proc.returncode}, {seconds:.1f} s")
        if proc.returncode != 0:
            lines = (proc.stderr or proc.stdout).strip().splitlines()
            raise RunFailed(f"{name}: exit {proc.returncode}: {lines[-1] if lines else ''}")
        return proc.stdout, seconds

    def run(self, config, name, options=(), timeout=600):
        """`macrostep run CONFIG OPTIONS --output NAME.csv`; returns the parsed JSON with
        'wall' (seconds of the whole command) and 'csv' (path of the result) added."""
        csv = self.path(name + ".csv")
        _, seconds = self._call(["run", config] + list(options) + ["--output", csv], name,
                                timeout)
        with open(self.path(name + ".json")) as f:
            meta = json.load(f)
        if meta.get("status") != "completed":
            raise RunFailed(f"{name}: status {meta.get('status')}")
        meta["wall"] = seconds
        meta["csv"] = csv
        return meta

    def rounds(self, specs, timeout=600):
        """Runs to be compared in time, interleaved: `self.repeat` rounds of every spec
        (key, config, name, options) in turn. Returns {key: JSON of the first round} with
        'wall' the median over the rounds and 'walls' all of them (the load varies between
        rounds; interleaving gives every run the same share of it)."""
        walls, first = {}, {}
        for i in range(self.repeat):
            for key, config, name, options in specs:
                meta = self.run(config, name if i == 0 else f"{name}_r{i + 1}", options,
                                timeout)
                first.setdefault(key, meta)
                walls.setdefault(key, []).append(meta["wall"])
        for key, meta in first.items():
            w = sorted(walls[key])
            meta["walls"] = w
            meta["wall"] = w[len(w) // 2] if len(w) % 2 else 0.5 * (w[len(w) // 2 - 1] +
                                                                    w[len(w) // 2])
        return first

    def nrmse(self, config, result, options=(), timeout=600):
        """NRMSE (seed 000 Eq. 5.1) of a result CSV against the reference at its own time
        points (`reference --at`, then `compare`): a dict with 'all', 'states', 'lambda'."""
        stem = os.path.splitext(os.path.basename(result))[0]
        ref = self.path(stem + ".ref.csv")
        self._call(["reference", config, "--at", result, "--output", ref] + list(options),
                   stem + " reference", timeout)
        out, _ = self._call(["compare", result, ref], stem + " compare", timeout)
        values = {}
        m = re.search(r"NRMSE \(2-norm over \d+ variables\): (\S+)", out)
        if m:
            values["all"] = float(m.group(1))
        m = re.search(r"states \(x_\*, v_\*\): (\S+?),", out)
        if m:
            values["states"] = float(m.group(1))
        m = re.search(r"coupling variables \(lambda_\*\): (\S+)", out)
        if m:
            values["lambda"] = float(m.group(1))
        if "all" not in values:
            raise RunFailed(f"{stem}: compare printed no NRMSE")
        return values

    def stability_symbol(self, options, name):
        """Seed 000 App. C's d = 0 symbol of `macrostep stability OPTIONS` over omega_hat
        0.05..3 (METHODS §7.3 S3, the rule of tools/s3-table): "-" unstable at every point,
        "+" a stable band from 0.05 reaching at least 0.1, "?" otherwise."""
        out, _ = self._call(["stability"] + list(options) +
                            ["--omega-min", "0.05", "--omega-max", "3", "--points", "60",
                             "--no-plot"], name, 120)
        if "unstable at every H of the scan" in out:
            return "-"
        m = re.search(r"stable band from the smallest H: up to H = \S+ s \(omega_hat (\S+)\)", out)
        return "+" if m and float(m.group(1)) >= 0.1 else "?"

    def local_error(self, config, options, name):
        """`macrostep local-error CONFIG OPTIONS` (one macro step from the exact history):
        {'slopes': {group: slope}, 'order': the order of the step's error, 'text': stdout}."""
        out, _ = self._call(["local-error", config] + list(options), name, 300)
        m = re.search(r"slope \(least squares, log-log\): (.*)", out)
        order = re.search(r"order of the step's error \([^)]*\): (\S+)", out)
        if not m or not order:
            raise RunFailed(f"{name}: local-error printed no slopes")
        slopes = {}
        for part in m.group(1).split(","):
            group, value = part.strip().rsplit(" ", 1)
            slopes[group] = float(value)
        return {"slopes": slopes, "order": float(order.group(1)), "text": out}

    def stability(self, options, name):
        """`macrostep stability OPTIONS --no-plot`: the largest stable omega_hat it prints."""
        out, _ = self._call(["stability"] + list(options) + ["--no-plot"], name, 120)
        m = re.search(r"largest stable H: \S+ s \(omega_hat (\S+)\)", out)
        if not m:
            raise RunFailed(f"{name}: no stable limit printed")
        return float(m.group(1))


def config_path(name):
    return os.path.join(CONFIGS, name)


def _set_key(lines, section, key, value):
    """Set `key = value` in the first table named `section` ([section] or [[section]]),
    replacing the key's line or inserting it after the header."""
    header = re.compile(r"^\s*\[\[?\s*" + re.escape(section) + r"\s*\]\]?\s*(#.*)?$")
    any_header = re.compile(r"^\s*\[")
    keyline = re.compile(r"^\s*" + re.escape(key) + r"\s*=")
    start = next((i for i, line in enumerate(lines) if header.match(line)), None)
    if start is None:
        raise RunFailed(f"config variant: no table [{section}]")
    end = next((i for i in range(start + 1, len(lines)) if any_header.match(lines[i])),
               len(lines))
    for i in range(start + 1, end):
        if keyline.match(lines[i]):
            lines[i] = f"{key} = {value}"
            return
    lines.insert(start + 1, f"{key} = {value}")


def config_variant(runner, base, name, keys, drop_tables=(), append=""):
    """Write a copy of configs/BASE with the given keys changed into the work directory and
    return its path. keys: {"cosim.safety": "1.0", "model.masses": "200"} (values as TOML
    text; the table is everything before the last dot). drop_tables: headers of array-of-table
    entries to remove whole (e.g. "model.force" removes every [[model.force]]); append: TOML
    text added at the end (new array-of-table entries)."""
    with open(config_path(base)) as f:
        lines = f.read().splitlines()
    for table in drop_tables:
        header = re.compile(r"^\s*\[\[\s*" + re.escape(table) + r"\s*\]\]")
        kept, skipping = [], False
        for line in lines:
            if line.lstrip().startswith("["):
                skipping = bool(header.match(line))
            if not skipping:
                kept.append(line)
        lines = kept
    for dotted, value in keys.items():
        section, key = dotted.rsplit(".", 1)
        _set_key(lines, section, key, value)
    path = runner.path(name + ".toml")
    with open(path, "w") as f:
        f.write(f"# {base} with {keys} (written by tools/experiments)\n")
        f.write("\n".join(lines) + "\n" + append)
    return path

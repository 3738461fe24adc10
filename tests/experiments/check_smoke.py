#!/usr/bin/python3
"""CI smoke of tools/experiments: run `tools/experiments --smoke` into a temporary
directory and check that REPORT.md holds, for the smoke study, a table whose rows carry our
figure, the seed's published figure and their ratio, and that report.json agrees with it.

  check_smoke.py MACROSTEP        exit 0 if the report is complete, 1 with the reason if not
"""
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NUMBER = re.compile(r"^-?\d+(\.\d+)?(e[-+]?\d+)?$")


def fail(why):
    print(f"experiments smoke: {why}", file=sys.stderr)
    sys.exit(1)


def main():
    with tempfile.TemporaryDirectory(prefix="experiments-smoke-") as out:
        proc = subprocess.run([os.path.join(ROOT, "tools", "experiments"), "--smoke", "--out",
                               out, "--macrostep", sys.argv[1]], text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300)
        print(proc.stdout)
        if proc.returncode != 0:
            fail(f"tools/experiments --smoke exited {proc.returncode}")
        with open(os.path.join(out, "REPORT.md")) as f:
            text = f.read()
        for needed in ("CPUs usable", "load average", "date (UTC)", "git commit"):
            if needed not in text:
                fail(f"REPORT.md lacks '{needed}'")
        rows = [line for line in text.splitlines() if line.startswith("| ")
                and not line.startswith("| quantity") and not line.startswith("| study")
                and not line.startswith("| [")]
        complete = 0
        for line in rows:
            cells = [c.strip() for c in line.strip("|").split("|")]
            if len(cells) != 5:
                fail(f"table row with {len(cells)} cells: {line}")
            _, ours, seed, ratio, _ = cells
            if all(NUMBER.match(c) for c in (ours, seed, ratio)):
                if abs(float(ours) / float(seed) / float(ratio) - 1) > 0.01:
                    fail(f"ratio is not ours / seed: {line}")
                complete += 1
        if complete == 0:
            fail("no table row has our figure, the seed's figure and a ratio")
        with open(os.path.join(out, "report.json")) as f:
            data = json.load(f)
        study = data["studies"][0]
        if study["error"] or not study["rows"]:
            fail(f"report.json: study {study['id']} failed: {study['error']}")
        print(f"experiments smoke: {complete} of {len(rows)} rows have ours, seed and ratio")


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Smoke check of tools/pinning-experiment: one round of a few variants on the
3-subsystem chain for 2e-6 s (seconds), with a per-process --map (`map:`, master left to the OS)
and one of the wrong length (skipped with the counts), then the JSON and the printed table, the
heaviest variant's map (only heavy subsystems pinned), and the one-line exit-2 errors for a
missing binary, an unknown config and an unknown variant.

  check_pinning.py MACROSTEP      exit 0 if all holds, 1 with the reason if not
"""
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOL = os.path.join(ROOT, "tools", "pinning-experiment")


def fail(why):
    print(f"pinning smoke: {why}", file=sys.stderr)
    sys.exit(1)


def run(args):
    return subprocess.run([TOOL] + args, text=True, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, timeout=300)


def main():
    binary = os.path.abspath(sys.argv[1])
    pu = min(os.sched_getaffinity(0))
    with tempfile.TemporaryDirectory(prefix="pinning-smoke-") as out:
        doc_path = os.path.join(out, "pin.json")
        proc = run(["--macrostep", binary, "--configs", "pinning-heavy-middle", "--rounds", "1",
                    "--stop-time", "2e-6", "--variants", "none,compact,one-pu,heaviest",
                    "--map", f"shared=map:*/{pu}/*/{pu}", "--map", f"short=map:*/{pu}",
                    "--json", doc_path])
        print(proc.stdout + proc.stderr)
        if proc.returncode != 0:
            fail(f"the tool exited {proc.returncode}")
        for needed in ("machine:", "macrostep topology:", "load average", "/none", "idle %"):
            if needed not in proc.stdout:
                fail(f"the output lacks '{needed}'")
        with open(doc_path) as f:
            doc = json.load(f)
        if not doc["machine"]["usable_pus"] or not doc["machine"]["cores"]:
            fail("the JSON lacks the machine's PUs and cores")
        variants = doc["results"][0]["variants"]
        for name in ("none", "compact", "one-pu", "shared"):
            s = variants[name].get("summary")
            if not s or s["runs"] != 1 or not s["wall_median_s"] > 0:
                fail(f"variant {name}: no completed run in the JSON")
            if not 0 <= s["idle_share_median"] < 1:
                fail(f"variant {name}: idle share {s['idle_share_median']} outside [0, 1)")
        if variants["shared"].get("map") != f"PU {pu}: 1,3 | OS: master,2":
            fail(f"shared: map {variants['shared'].get('map')!r}")
        if "2 entries given, 4 needed" not in variants["short"].get("skipped", ""):
            fail(f"short: not skipped with the counts: {variants['short']}")
        heaviest = variants["heaviest"]
        if not (heaviest.get("summary") or heaviest.get("skipped")):
            fail("heaviest: neither run nor skipped with a reason")
        if heaviest.get("pin"):
            heavy = heaviest["heavy"]
            entries = heaviest["pin"].removeprefix("map:").split("/")
            pinned = [s for s in range(1, len(entries)) if entries[s] != "*"]
            if entries[0] != "*" or pinned != sorted(heavy):
                fail(f"heaviest: {heaviest['pin']} should pin exactly subsystems {heavy}")
    for args, what in ((["--macrostep", "/nonexistent/macrostep"], "no macrostep binary"),
                       (["--macrostep", binary, "--configs", "no-such"], "unknown config"),
                       (["--macrostep", binary, "--variants", "none,bogus"], "unknown variant")):
        proc = run(args)
        lines = proc.stderr.strip().splitlines()
        if proc.returncode != 2 or len(lines) != 1 or what not in lines[0]:
            fail(f"{' '.join(args)}: expected exit 2 and one line with '{what}', got "
                 f"{proc.returncode}: {proc.stderr.strip()!r}")
    print("pinning smoke: ok")


if __name__ == "__main__":
    main()

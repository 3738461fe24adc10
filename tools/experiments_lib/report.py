"""REPORT.md: the machine, the run, and per study a table of our figure against the seed's."""
import json
import os
import platform
import subprocess

from .runner import ROOT


def machine():
    """CPUs usable by this process, the CPU model and the host (what the figures depend on)."""
    model = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {"cpus": len(os.sched_getaffinity(0)), "cpu_model": model,
            "host": platform.node(), "kernel": platform.release()}


def git_commit():
    try:
        out = subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty"],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        return out.stdout.strip() or "unknown"
    except OSError:
        return "unknown"


def fmt(value):
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value}"
    if isinstance(value, float):
        return f"{value:.3g}"
    return str(value).replace("|", "/")


def _table(rows):
    lines = ["| quantity | ours | seed | ratio ours/seed | note |",
             "|---|---:|---:|---:|---|"]
    for r in rows:
        quantity = ("**FAILED** " if r.failed else "") + r.quantity
        lines.append(f"| {fmt(quantity)} | {fmt(r.ours)} | {fmt(r.seed)} | {fmt(r.ratio)} | "
                     f"{fmt(r.note)} |")
    return lines


def write(out_dir, header, outcomes):
    """Write REPORT.md and report.json into out_dir. header: dict with date, command, mode,
    machine, load_start, load_end, commit, seconds; outcomes: [(study, result or None,
    error text or None, seconds)]."""
    m = header["machine"]
    md = ["# macrostep experiments: seed studies reproduced (scaled)", "",
          f"- date (UTC): {header['date']}",
          f"- command: `{header['command']}` ({header['mode']})",
          f"- git commit: {header['commit']}",
          f"- machine: {m['cpus']} CPUs usable, {m['cpu_model']}, host {m['host']}, "
          f"kernel {m['kernel']}",
          f"- load average (1/5/15 min) at start: {header['load_start']}, at end: "
          f"{header['load_end']} (other work shared the machine: wall times and speed-ups "
          "carry that noise; time ratios are medians of interleaved rounds where a note "
          "gives the rounds, otherwise one run)",
          f"- total time: {header['seconds']:.0f} s, {header['runs']} macrostep commands",
          "",
          "Figures: *ours* is measured here, *seed* is the published figure or target of "
          "spec/MODELS.md §3 (seed 000 unless named), *ratio* = ours / seed. Studies are "
          "scaled down (MODELS.md §5, and further in `--quick`: each study's notes say how), "
          "so a ratio far from 1 is explained in the notes or is a finding, not a typo.", "",
          "## Summary", "", "| study | what | status | rows | seconds |",
          "|---|---|---|---:|---:|"]
    for study, result, error, seconds in outcomes:
        if result is None:
            status = "failed: " + fmt(error)
        else:
            bad = sum(1 for r in result.rows if r.failed)
            status = "ran" if not bad else f"ran, {bad} row(s) not done"
        rows = len(result.rows) if result else 0
        md.append(f"| [{study.id}](#{study.id.lower().replace('.', '')}) | {study.title} | "
                  f"{status} | {rows} | {seconds:.0f} |")
    data = {"header": header, "studies": []}
    for study, result, error, seconds in outcomes:
        md += ["", f"## {study.id}", "", f"{study.title} ({study.source}); {seconds:.0f} s.", ""]
        entry = {"id": study.id, "title": study.title, "seconds": seconds, "error": error,
                 "rows": [], "notes": [], "plots": []}
        if result is None:
            md.append(f"**Failed:** {error}")
        else:
            md += _table(result.rows)
            if result.notes:
                md.append("")
                md += [f"- {n}" for n in result.notes]
            for p in result.plots:
                md += ["", f"![{study.id}]({p})"]
            entry["rows"] = [{"quantity": r.quantity, "ours": r.ours, "seed": r.seed,
                              "ratio": r.ratio, "note": r.note, "failed": r.failed}
                             for r in result.rows]
            entry["notes"] = result.notes
            entry["plots"] = result.plots
        data["studies"].append(entry)
    with open(os.path.join(out_dir, "REPORT.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    with open(os.path.join(out_dir, "report.json"), "w") as f:
        json.dump(data, f, indent=1, default=str)

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
    """The commit, "-dirty" if files outside experiments/ differ from it (the report and its
    plots, which the runs themselves rewrite, do not make the code that ran dirty)."""
    try:
        head = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        changed = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no",
                                  "--", ".", ":(exclude)experiments"],
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        commit = head.stdout.strip() or "unknown"
        return commit + ("-dirty" if changed.stdout.strip() else "")
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


def study_entry(study, result, error, seconds, header):
    """report.json's record of one study's run (rows, notes, plots) with the run it came from."""
    entry = {"id": study.id, "title": study.title, "source": study.source, "seconds": seconds,
             "error": error, "mode": header["mode"], "date": header["date"],
             "commit": header["commit"], "rows": [], "notes": [], "plots": []}
    if result is not None:
        entry["rows"] = [{"quantity": r.quantity, "ours": r.ours, "seed": r.seed,
                          "ratio": r.ratio, "note": r.note, "failed": r.failed}
                         for r in result.rows]
        entry["notes"] = result.notes
        entry["plots"] = result.plots
    return entry


def _header_lines(header, reruns, remarks=()):
    m = header["machine"]
    lines = [f"- date (UTC): {header['date']}",
             f"- command: `{header['command']}` ({header['mode']})",
             f"- git commit: {header['commit']}",
             f"- machine: {m['cpus']} CPUs usable, {m['cpu_model']}, host {m['host']}, "
             f"kernel {m['kernel']}",
             f"- load average (1/5/15 min) at start: {header['load_start']}, at end: "
             f"{header['load_end']} (other work shared the machine: wall times and speed-ups "
             "carry that noise; time ratios are medians of interleaved rounds where a note "
             "gives the rounds, otherwise one run)"]
    for r in reruns:
        what = "sections" if len(r["studies"]) > 1 else "section"
        lines.append(f"- {what} {', '.join(r['studies'])} (summary rows too) rerun "
                     f"on {r['date']} ({r['mode']}, commit {r['commit']}) with "
                     f"`{r['command']}` ({r['seconds']:.0f} s; load {r['load_start']} at "
                     f"start, {r['load_end']} at end)")
    lines += [f"- {r}" for r in remarks]
    lines.append(f"- total time: {header['seconds']:.0f} s, {header['runs']} macrostep commands"
                 + (" (the first run; the reruns above add theirs)" if reruns else ""))
    return lines


def _summary_lines(studies):
    lines = ["## Summary", "", "| study | what | status | rows | seconds |",
             "|---|---|---|---:|---:|"]
    for e in studies:
        if e["error"] is not None and not e["rows"]:
            status = "failed: " + fmt(e["error"])
        else:
            bad = sum(1 for r in e["rows"] if r["failed"])
            status = "ran" if not bad else f"ran, {bad} row(s) not done"
        lines.append(f"| [{e['id']}](#{e['id'].lower().replace('.', '')}) | {e['title']} | "
                     f"{status} | {len(e['rows'])} | {e['seconds']:.0f} |")
    return lines


def _study_lines(e, header):
    commit, mode = e.get("commit", header["commit"]), e.get("mode", header["mode"])
    run = "" if (commit, mode) == (header["commit"], header["mode"]) else \
        f"; {mode} run of {e.get('date')}, commit {commit}"
    lines = ["", f"## {e['id']}", "", f"{e['title']} ({e.get('source', '')}); "
             f"{e['seconds']:.0f} s{run}.", ""]
    if e["error"] is not None and not e["rows"]:
        return lines + [f"**Failed:** {e['error']}"]
    rows = [Row(r) for r in e["rows"]]
    lines += _table(rows)
    if e["notes"]:
        lines.append("")
        lines += [f"- {n}" for n in e["notes"]]
    for p in e["plots"]:
        lines += ["", f"![{e['id']}]({p})"]
    return lines


class Row:
    """A report.json row as _table reads it."""
    def __init__(self, r):
        self.quantity, self.ours, self.seed = r["quantity"], r["ours"], r["seed"]
        self.ratio, self.note, self.failed = r["ratio"], r["note"], r["failed"]


def render(out_dir, data):
    """REPORT.md and report.json from report.json's data: header, reruns, remarks (free lines
    for the header, kept across merges), studies."""
    header = data["header"]
    md = ["# macrostep experiments: seed studies reproduced (scaled)", ""]
    md += _header_lines(header, data.get("reruns", []), data.get("remarks", []))
    md += ["", "Figures: *ours* is measured here, *seed* is the published figure or target of "
           "spec/MODELS.md §3 (seed 000 unless named), *ratio* = ours / seed. Studies are "
           "scaled down (MODELS.md §5, and further in `--quick`: each study's notes say how), "
           "so a ratio far from 1 is explained in the notes or is a finding, not a typo.", ""]
    md += _summary_lines(data["studies"])
    for e in data["studies"]:
        md += _study_lines(e, header)
    with open(os.path.join(out_dir, "REPORT.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    with open(os.path.join(out_dir, "report.json"), "w") as f:
        json.dump(data, f, indent=1, default=str)


def write(out_dir, header, outcomes):
    """Write REPORT.md and report.json into out_dir. header: dict with date, command, mode,
    machine, load_start, load_end, commit, seconds, runs; outcomes: [(study, result or None,
    error text or None, seconds)]."""
    render(out_dir, {"header": header,
                     "studies": [study_entry(*o, header) for o in outcomes]})


def merge(out_dir, header, outcomes, suite):
    """Replace (or add) the studies of `outcomes` in out_dir's report.json and re-render
    REPORT.md; the rerun is listed in the header with its command, commit, mode and load.
    `suite`: every study in the suite's order (the sections keep it; a record without its
    source gets it from there). Raises OSError or ValueError when there is no report."""
    with open(os.path.join(out_dir, "report.json")) as f:
        data = json.load(f)
    if "header" not in data or "studies" not in data:
        raise ValueError("report.json has no header and studies")
    entries = {e["id"]: e for e in data["studies"]}
    for o in outcomes:
        entries[o[0].id] = study_entry(*o, header)
    rank = {st.id: i for i, st in enumerate(suite)}
    for st in suite:
        if st.id in entries:
            entries[st.id].setdefault("source", st.source)
    data["studies"] = sorted(entries.values(), key=lambda e: rank.get(e["id"], len(rank)))
    rerun = {k: header[k] for k in ("date", "command", "mode", "commit", "load_start",
                                    "load_end", "seconds")}
    rerun["studies"] = [o[0].id for o in outcomes]
    data.setdefault("reruns", []).append(rerun)
    render(out_dir, data)

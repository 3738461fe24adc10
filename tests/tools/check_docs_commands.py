#!/usr/bin/python3
"""The commands that README.md and the docs show, run as a reader would.

Every line of a plain code block that starts with `macrostep ` (or README's
`build/release/runtime/app/macrostep `; a line ending in `\\` continues on the next) runs, in
the order of its page, in a fresh directory per page that holds links to the repository's
configs/ and examples/, with the binary under test in its place; its comment (`  # ...`) is
dropped. Each must exit with status 0, and a
`compare` whose comment says "about X" must print a 2-norm NRMSE within a factor 3 of X. A code
block right after a line `<!-- file: PATH -->` must be PATH's text, so that a page that shows a
file shows it as it is. Usage: check_docs_commands.py --binary MACROSTEP --source REPO
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

PAGES = ["README.md", "docs/getting-started.md", "docs/guide/schemes.md",
         "docs/guide/stability.md", "docs/reference/configuration.md"]
PREFIXES = ["build/release/runtime/app/macrostep ", "macrostep "]


def blocks(text):
    """(info string, lines, line number of the first line, the line before the fence)."""
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        if lines[i].startswith("```"):
            info = lines[i][3:].strip()
            before = lines[i - 1] if i > 0 else ""
            start = i + 1
            j = start
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            yield info, lines[start:j], start + 1, before
            i = j + 1
        else:
            i += 1


def joined(lines):
    """(index of the first line, the line with its `\\` continuations joined) of a block."""
    k = 0
    while k < len(lines):
        first, line = k, lines[k].rstrip()
        while line.endswith("\\") and k + 1 < len(lines):
            k += 1
            line = line[:-1].rstrip() + " " + lines[k].strip()
        yield first, line
        k += 1


def command_of(line, binary):
    """The shell command of a shown line and its comment, or (None, None)."""
    for prefix in PREFIXES:
        if line.startswith(prefix):
            parts = re.split(r"\s+#\s", line[len(prefix):], maxsplit=1)
            return f"'{binary}' {parts[0].strip()}", parts[1] if len(parts) > 1 else ""
    return None, None


def claim_failure(command, comment, output):
    """What is wrong with a compare's "about X" claim, or None."""
    claim = re.search(r"about (\d[\d.e+-]*)", comment)
    if " compare " not in command + " " or claim is None:
        return None
    shown = re.search(r"NRMSE \(2-norm over \d+ variables\): (\S+)", output)
    if shown is None:
        return "printed no NRMSE"
    value, said = float(shown.group(1)), float(claim.group(1))
    if not said / 3 <= value <= said * 3:
        return f"printed NRMSE {value:.3g}, the page says about {claim.group(1)}"
    return None


def check_page(page, source, binary):
    failures = []
    text = open(os.path.join(source, page), encoding="utf-8").read()
    work = tempfile.mkdtemp(prefix="macrostep-docs-")
    try:
        for name in ("configs", "examples"):
            os.symlink(os.path.join(source, name), os.path.join(work, name))
        for info, lines, first, before in blocks(text):
            shown = re.match(r"<!-- file: (\S+) -->", before.strip())
            if shown:
                path = os.path.join(source, shown.group(1))
                actual = open(path, encoding="utf-8").read().rstrip("\n").split("\n")
                if lines != actual:
                    failures.append(f"{page}:{first}: the block is not {shown.group(1)} as it is")
                continue
            if info not in ("", "sh", "console"):
                continue
            for k, line in joined(lines):
                command, comment = command_of(line.strip(), binary)
                if command is None:
                    continue
                run = subprocess.run(command, shell=True, cwd=work, capture_output=True,
                                     text=True, timeout=300)
                status = "ok" if run.returncode == 0 else f"exit {run.returncode}"
                print(f"{page}:{first + k}: {line.strip()}: {status}")
                if run.returncode != 0:
                    failures.append(f"{page}:{first + k}: `{line.strip()}` exited "
                                    f"{run.returncode}:\n{run.stderr[-2000:]}")
                elif (why := claim_failure(command, comment, run.stdout)) is not None:
                    failures.append(f"{page}:{first + k}: `{line.strip()}` {why}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return failures


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True)
    parser.add_argument("--source", required=True)
    args = parser.parse_args()
    failures = []
    for page in PAGES:
        failures += check_page(page, args.source, os.path.abspath(args.binary))
    for f in failures:
        print(f, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

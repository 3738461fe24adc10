"""macrostep from Python: the runs of the `macrostep` command, with numpy results.

    import macrostep
    r = macrostep.run("configs/sources.toml", set={"subsystem.supply.final": 48.0},
                      stop_time=0.3, executor="inprocess")
    r.time, r.columns, r.values      # numpy arrays: values[row, column]
    r["load.omega_2"], r.units       # a column by name; the unit of every column ("" unknown)
    r.statistics["macro_steps"]      # the run's statistics, from its metadata
    ref = macrostep.reference("configs/sources.toml", stop_time=0.3)
    macrostep.compare(r, ref)        # NRMSE per variable

Every run goes through the run driver of the `macrostep` command (the same configuration
reader, checks, schemes, executors and result files), so a run here and `macrostep run` with the
same configuration and flags give bit-identical results. docs/guide/python.md is the guide.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import shlex
import shutil
import tempfile
import threading
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from . import _macrostep
from ._macrostep import ConfigError, RunError

__all__ = [
    "ConfigError",
    "RunError",
    "Result",
    "Comparison",
    "run",
    "reference",
    "compare",
    "sweep",
    "to_toml",
    "worker_binary",
]
__version__ = _macrostep.version

# The name a configuration given as a dict has in messages; its relative file names (a table
# source's `file`, a plugin's `library`) resolve against the working directory.
DICT_NAME = "<dict>"


class Result:
    """The result of one run: its table, units, statistics and metadata.

    time        numpy array, one entry per output point (s)
    columns     the column names (DESIGN.md naming: x_17, v_17, lambda_1, motor.omega, ...)
    values      numpy array values[row, column]
    units       {column: unit}: an output's unit as its model reports it, a state's derived from
                its outputs, a coupling variable's from its law; "" where nothing says (a
                plugin's or an FMU's outputs, a source without `unit`); the result files carry
                the same (the JSON's "columns", the HDF5 attribute "units")
    descriptions {column: text}: what the model or law says the variable is ("angle of inertia
                2", "spring-damper force ..."); "" where it says nothing
    statistics  the "statistics" object of the metadata as the run wrote it (a co-simulation:
                macro_steps, rejected, order_histogram, per subsystem its micro_steps, ...; a
                monolithic run: IDA's micro_steps, ...), with "time", the metadata's time
                breakdown, and "wall_time_s", the run's wall time in seconds
    metadata    the JSON metadata the run wrote beside its result, as a dict
    summary     the summary the command prints after the run
    kind        "cosimulation", "monolithic" or "reference"
    files       {"result", "metadata", "steps"} paths when the run wrote to `output=`, else None
    case        a sweep's case as {key: value}; None outside a sweep
    """

    def __init__(self, kind: str, time: np.ndarray, columns: list[str], values: np.ndarray,
                 units: dict[str, str], metadata: dict, wall_s: float, summary: str,
                 files: dict[str, str] | None, descriptions: dict[str, str] | None = None):
        self.kind = kind
        self.time = time
        self.columns = list(columns)
        self.values = values
        self.units = units
        self.descriptions = descriptions if descriptions is not None else {c: "" for c in columns}
        self.metadata = metadata
        self.statistics = dict(metadata.get("statistics", {}))
        self.statistics["time"] = metadata.get("time", {})
        self.statistics["wall_time_s"] = wall_s
        self.summary = summary
        self.files = files
        self.case: dict[str, Any] | None = None

    def __getitem__(self, name: str) -> np.ndarray:
        """The column `name` ("time" too) as a 1-D array."""
        if name == "time":
            return self.time
        try:
            return self.values[:, self.columns.index(name)]
        except ValueError:
            raise KeyError(f"no column {name!r}; the columns are {', '.join(self.columns)}") from None

    def __contains__(self, name: str) -> bool:
        return name == "time" or name in self.columns

    @property
    def final(self) -> dict[str, float]:
        """{column: value} of the last row."""
        return {c: float(v) for c, v in zip(self.columns, self.values[-1])}

    def as_dict(self) -> dict[str, np.ndarray]:
        """{"time": time, column: values, ...} (views, not copies)."""
        return {"time": self.time, **{c: self.values[:, j] for j, c in enumerate(self.columns)}}

    def __repr__(self) -> str:
        case = f", case={self.case}" if self.case else ""
        return (f"<macrostep.Result {self.kind}: {len(self.time)} rows x {len(self.columns)} "
                f"columns, t = {self.time[0]:g}..{self.time[-1]:g} s{case}>")


class Comparison(dict):
    """{variable: NRMSE} of a result against a reference (`macrostep compare`).

    A variable whose reference is (nearly) constant has no spread to normalise by: its NRMSE is
    NaN and it is listed in `near_constant`; `max_abs_difference` measures every variable.
    `norm` is the 2-norm over the varying variables (seed 000 Eq. 5.2), `largest` the varying
    variable with the largest NRMSE as (name, value).
    """

    def __init__(self, report: dict):
        super().__init__((name, nrmse) for name, nrmse, _, _ in report["variables"])
        self.max_abs_difference = {name: diff for name, _, diff, _ in report["variables"]}
        self.near_constant = [name for name, _, _, near in report["variables"] if near]
        self.norm = report["norm"]
        self.interpolated = report["interpolated"]
        self.time_points = report["time_points"]
        varying = [(n, v) for n, v in self.items() if not math.isnan(v)]
        self.largest = max(varying, key=lambda item: item[1]) if varying else None


def worker_binary() -> str | None:
    """The `macrostep` binary that the process executor starts as its workers.

    $MACROSTEP_BINARY if set, else the binary of the build this module comes from, if it is
    there; None otherwise (then only executor="inprocess" runs).
    """
    given = os.environ.get("MACROSTEP_BINARY")
    if given:
        return given
    built = _macrostep.build_binary
    return built if built and os.access(built, os.X_OK) else None


def to_toml(config: Mapping[str, Any]) -> str:
    """A configuration dict as the TOML text that `run(dict)` reads (toml++ renders it)."""
    return _macrostep.toml_document(dict(config))


def _edits(set: Mapping[str, Any] | Sequence[str] | str | None) -> list[str]:
    """The KEY=VALUE edits of `set`: a dict {key: Python value}, a list of "KEY=VALUE" (VALUE as
    TOML text, as on the command line), or one such string."""
    if set is None:
        return []
    if isinstance(set, str):
        return [set]
    if isinstance(set, Mapping):
        return [f"{key}={_toml_value(value, str(key))}" for key, value in set.items()]
    return [str(edit) for edit in set]


def _toml_value(value: Any, key: str) -> str:
    """`value` as TOML text for the edit of `key`: ConfigError for what TOML cannot hold."""
    def check(v: Any) -> None:
        if isinstance(v, int) and not isinstance(v, bool) and not -2**63 <= v < 2**63:
            raise ConfigError(f"set: {key}: the integer {v} does not fit in 64 bits")
        if isinstance(v, str):
            try:
                v.encode("utf-8")
            except UnicodeEncodeError as e:
                raise ConfigError(f"set: {key}: the string is not valid Unicode ({e.reason})") from None
        if isinstance(v, Mapping):
            for item in v.values():
                check(item)
        elif isinstance(v, (list, tuple)):
            for item in v:
                check(item)

    check(value)
    return _macrostep.toml_value(value, key)


def _options(options: dict[str, Any]) -> None:
    """Checks and converts run()'s keyword options in place: ValueError naming the argument."""
    if options.get("order") is not None:
        options["order"] = str(options["order"])
    for name in ("stop_time", "rtol", "step_size"):
        if options.get(name) is not None:
            try:
                options[name] = float(options[name])
            except (TypeError, ValueError):
                raise ValueError(f"{name}={options[name]!r}: not a number") from None
    for name in ("scheme", "estimator", "executor"):
        if options.get(name) is not None and not isinstance(options[name], str):
            raise ValueError(f"{name}={options[name]!r}: a name (str) or None")
    for name in ("all_states", "progress"):
        if name in options and not isinstance(options[name], bool):
            raise ValueError(f"{name}={options[name]!r}: True or False")


def _path_text(value: str | os.PathLike, what: str) -> str:
    """`value` as a path string; ValueError for a NUL in it (the system would cut the name
    there, and a run would write or read another file than the one named)."""
    path = os.fspath(value)
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if "\0" in path:
        raise ValueError(f"{what}: embedded null byte in {path!r}")
    return path


def _source(config: str | os.PathLike | Mapping[str, Any]) -> tuple[str, str | None, str]:
    """(path or name, text or None, stem of the default file names) of a configuration."""
    if isinstance(config, Mapping):
        return DICT_NAME, to_toml(config), "config"
    path = _path_text(config, "config")
    return path, None, Path(path).stem


_SUFFIX = {"cosimulation": "", "monolithic": ".monolithic", "reference": ".reference"}


def _files_of(result: Path, kind: str) -> dict[str, str]:
    files = {"result": str(result), "metadata": str(result.with_suffix(".json"))}
    if kind == "cosimulation" and result.suffix.lower() not in (".h5", ".hdf5"):
        files["steps"] = str(result.with_suffix(".steps.csv"))
    return files


def _target(output: str | os.PathLike, stem: str, kind: str, overwrite: bool) -> Path:
    """The result file for `output=`: a file name, or a folder that gets the default name."""
    text = _path_text(output, "output")
    path = Path(text)
    if path.is_dir():
        path = path / f"{stem}{_SUFFIX[kind]}.csv"
    elif text.endswith(("/", os.sep)):
        raise FileNotFoundError(f"output={text!r}: no such folder (a folder must exist; a name "
                                "without the trailing '/' names the result file)")
    if path.is_char_device():
        raise ValueError(f"output={text!r}: a character device; the Result is read back from the "
                         "result file (output=None writes to a temporary folder instead)")
    if not overwrite:
        existing = [f for f in _files_of(path, kind).values() if os.path.lexists(f)]
        if existing:
            raise FileExistsError(f"{', '.join(existing)} exist{'s' if len(existing) == 1 else ''}; "
                                  "pass overwrite=True to replace them, or another output")
    return path


_FLAGS = {"stop_time": "--stop-time", "scheme": "--scheme", "estimator": "--estimator",
          "order": "--order", "rtol": "--rtol", "step_size": "--step-size",
          "executor": "--executor"}


def _command(kind: str, path: str, edits: list[str], target: Path | None,
             options: Mapping[str, Any]) -> str:
    """The metadata's "command": the `macrostep` command line that makes the same run (without
    --output for a run into a temporary folder), marked as coming from Python."""
    words = ["macrostep", "reference" if kind == "reference" else "run", path]
    if kind == "monolithic":
        words.append("--monolithic")
    for edit in edits:
        words += ["--set", edit]
    for name, flag in _FLAGS.items():
        if options.get(name) is not None:
            words += [flag, str(options[name])]
    if options.get("all_states"):
        words.append("--all-states")
    if target is not None:
        words += ["--output", str(target)]
    return "python: " + shlex.join(words)


# One run at a time in this process (the run driver's crash guard is one per process). Held from
# the check of the output's files until the result is read back, so that another thread's run
# with the same output= can neither pass the check beside this one nor replace the files before
# they are read; waiting on it, the main thread still takes Ctrl-C.
_ONE_RUN = threading.Lock()


def _run(kind: str, config, *, set=None, output=None, overwrite=False, **options) -> Result:
    with _ONE_RUN:
        return _run_alone(kind, config, set=set, output=output, overwrite=overwrite, **options)


def _run_alone(kind: str, config, *, set=None, output=None, overwrite=False, **options) -> Result:
    path, text, stem = _source(config)
    edits = _edits(set)
    if not isinstance(overwrite, bool):
        raise ValueError(f"overwrite={overwrite!r}: True or False")
    _options(options)
    scratch = None
    if output is None:
        scratch = tempfile.mkdtemp(prefix="macrostep-")
        target = Path(scratch) / f"{stem}{_SUFFIX[kind]}.csv"
    else:
        target = _target(output, stem, kind, overwrite)
    try:
        reply = _macrostep.run(
            config_path=path, config_text=text, sets=edits, kind=kind, output=str(target),
            overwrite=overwrite,
            worker=worker_binary() or "",
            command_line=_command(kind, path, edits, None if scratch else target, options),
            **options)
        time, columns, values = _macrostep.read_table(reply["result"])
        metadata = {}
        if reply["metadata"]:
            with open(reply["metadata"], encoding="utf-8") as f:
                metadata = json.load(f)
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
    files = None
    if scratch is None:
        files = {"result": reply["result"], "metadata": reply["metadata"]}
        if reply["steps"]:
            files["steps"] = reply["steps"]
    summary = reply["summary"]
    if scratch is not None:  # its files are gone: the summary does not point there
        summary = summary.replace(str(scratch), "<a temporary folder, removed>")
    units = dict(zip(reply["columns"], reply["units"]))
    descriptions = dict(zip(reply["columns"], reply["descriptions"]))
    return Result(kind, time, columns, values, {c: units.get(c, "") for c in columns}, metadata,
                  reply["wall_s"], summary, files,
                  {c: descriptions.get(c, "") for c in columns})


def run(config: str | os.PathLike | Mapping[str, Any], *,
        set: Mapping[str, Any] | Sequence[str] | str | None = None,
        stop_time: float | None = None, scheme: str | None = None, estimator: str | None = None,
        order: int | str | None = None, rtol: float | None = None,
        step_size: float | None = None, executor: str | None = None, monolithic: bool = False,
        output: str | os.PathLike | None = None, overwrite: bool = False,
        all_states: bool = False, progress: bool = False) -> Result:
    """Runs a configuration as `macrostep run` does and returns its Result.

    config      a TOML file, or a dict of the same tables (rendered by to_toml and read by the
                same reader: the same checks and messages, which then name "<dict>")
    set         edits as with --set: {key: value} or ["KEY=VALUE", ...]
    stop_time, scheme, estimator, order ("auto" or 0..5), rtol, step_size, executor
                ("inprocess" or "processes"), all_states, progress: the flags of the same names;
                None keeps the configuration's value (the executor: processes by default, whose
                workers are worker_binary())
    monolithic  the whole model in one IDA (`run --monolithic`)
    output      None: the files go to a temporary folder, removed after reading. A file name
                (.csv, or .h5 for HDF5) or a folder: the files stay there (Result.files); an
                existing one is replaced only with overwrite=True.

    Raises ConfigError (a ValueError) for a configuration or setup error, with the command's
    message; ValueError for an unusable argument; RunError (a RuntimeError) when the run fails;
    KeyboardInterrupt on Ctrl-C (the run stops after its macro step). One run at a time runs in
    a process; the GIL is released while it runs.
    """
    kind = "monolithic" if monolithic else "cosimulation"
    return _run(kind, config, set=set, output=output, overwrite=overwrite, stop_time=stop_time,
                scheme=scheme, estimator=estimator, order=order, rtol=rtol, step_size=step_size,
                executor=executor, all_states=all_states, progress=progress)


def reference(config: str | os.PathLike | Mapping[str, Any], *,
              set: Mapping[str, Any] | Sequence[str] | str | None = None,
              stop_time: float | None = None, output: str | os.PathLike | None = None,
              overwrite: bool = False, all_states: bool = False,
              progress: bool = False) -> Result:
    """The tight-tolerance monolithic reference of `macrostep reference` (arguments as run)."""
    return _run("reference", config, set=set, output=output, overwrite=overwrite,
                stop_time=stop_time, all_states=all_states, progress=progress)


def _table(x: Result | str | os.PathLike) -> tuple[np.ndarray, list[str], np.ndarray]:
    if isinstance(x, Result):
        return x.time, x.columns, x.values
    return _macrostep.read_table(os.fspath(x))


def compare(result: Result | str | os.PathLike,
            reference: Result | str | os.PathLike, *, weights: str = "equal") -> Comparison:
    """NRMSE per variable of `result` against `reference` (Results or result files), computed
    by the code of `macrostep compare`: columns matched by name, the reference interpolated to
    the result's times where they differ. `weights` as `macrostep compare --weights`: "equal"
    (every row alike) or "time" (each row by the time it stands for, so that a variable-step
    run's short steps count by their duration). Raises RunError when the tables cannot be
    compared, ValueError for other weights."""
    return Comparison(_macrostep.nrmse(*_table(result), *_table(reference), weights))


def sweep(config: str | os.PathLike | Mapping[str, Any], grid: Mapping[str, Iterable[Any]], *,
          set: Mapping[str, Any] | Sequence[str] | str | None = None,
          output: str | os.PathLike | None = None, overwrite: bool = False,
          **options: Any) -> list[Result]:
    """Runs every combination of the grid's values, like `macrostep sweep --grid`.

    grid        {key: [value, ...]}: every combination is one case, the run of `config` with
                the `set` edits and one edit per key (the first key varies slowest)
    output      None: temporary files; a folder: each case's files as case-001.csv, ...
    options     the keyword arguments of run() (stop_time, scheme, executor, monolithic, ...)

    Every case's configuration is read and checked before the first case runs (ConfigError
    names the case's edit). The cases run one after the other in this process; each Result has
    `case` = {key: value}.
    """
    keys = list(grid)
    axes = [list(grid[key]) for key in keys]
    if not keys or any(not axis for axis in axes):
        raise ValueError("sweep: the grid needs at least one key, each with at least one value")
    base = _edits(set)
    cases = [dict(zip(keys, values)) for values in itertools.product(*axes)]
    edits = [base + _edits(case) for case in cases]
    path, text, _ = _source(config)
    for case_edits in edits:  # every configuration is checked before anything runs
        _macrostep.check(config_path=path, config_text=text, sets=case_edits)
    width = max(3, len(str(len(cases))))
    targets: list[Path | None] = [None] * len(cases)
    if output is not None:
        folder = Path(output)
        folder.mkdir(parents=True, exist_ok=True)
        kind = "monolithic" if options.get("monolithic") else "cosimulation"
        # Every case's files are checked before the first case writes any.
        targets = [_target(folder / f"case-{i:0{width}}.csv", "", kind, overwrite)
                   for i in range(1, len(cases) + 1)]
        ours = {os.path.basename(f) for t in targets for f in _files_of(t, kind).values()}
        stale = sorted(f.name for f in folder.glob("case-*") if f.name not in ours)
        if stale:  # an earlier sweep's cases beside this one's would read as one sweep
            raise FileExistsError(
                f"{folder} holds case files that this sweep of {len(cases)} cases would not "
                f"replace ({', '.join(stale[:4])}{', ...' if len(stale) > 4 else ''}); remove them "
                "or choose another folder")
    results = []
    for case, case_edits, target in zip(cases, edits, targets):
        result = run(config, set=case_edits, output=target, overwrite=overwrite, **options)
        result.case = case
        results.append(result)
    return results

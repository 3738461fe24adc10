"""The Python package (python/macrostep; docs/guide/python.md), run by ctest as python_package.

ctest gives PYTHONPATH (the build's python/ folder), MACROSTEP_CLI (the build's macrostep
binary) and MACROSTEP_SOURCE_DIR. The runs use configs/sources.toml (a voltage step drives a DC
motor that turns a load through a shaft; a brake torque from a table from t = 0.3 s) over
0.4 s: about 800 macro steps of H = 0.5 ms, a few hundredths of a second each, with rows on the
output grid of 1 ms (the default of a described system).
"""

import csv
import os
import signal
import subprocess
import sys
import threading
import tomllib
from pathlib import Path

import numpy as np
import pytest

import macrostep

SOURCE = Path(os.environ.get("MACROSTEP_SOURCE_DIR", Path(__file__).resolve().parents[2]))
CLI = os.environ.get("MACROSTEP_CLI", "")
SOURCES = SOURCE / "configs" / "sources.toml"
STOP = 0.4
H = 5e-4  # the file's fixed macro step
DT = 1e-3  # the file's output_interval: the rows' grid
RUN = {"stop_time": STOP, "executor": "inprocess"}


@pytest.fixture(scope="module")
def base():
    return macrostep.run(SOURCES, **RUN)


def read_csv(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    return rows[0], np.array([[float(x) for x in row] for row in rows[1:]])


def test_arrays_names_units_statistics(base):
    # H = 0.5 ms once the start-up ramp is over; a row at every grid time k·1 ms.
    n = base.statistics["macro_steps"]
    assert round(STOP / H) <= n < round(STOP / H) + 20
    assert base.kind == "cosimulation"
    assert base.time.shape == (round(STOP / DT) + 1,) and base.time[0] == 0.0
    assert np.allclose(base.time, DT * np.arange(len(base.time)), rtol=0, atol=1e-12)
    assert base.time[-1] == pytest.approx(STOP, abs=1e-12)
    assert np.all(np.diff(base.time) > 0)
    assert base.values.shape == (len(base.time), len(base.columns))
    for name in ("supply.y", "brake.torque", "motor.omega", "load.omega_2", "voltage"):
        assert name in base.columns
    # The sources say the units their [[subsystem]] tables declare (unit = ...), the motor its
    # own, a signal connection its source's.
    assert base.units["supply.y"] == "V"
    assert base.units["brake.torque"] == "N m"
    assert base.units["motor.omega"] == "rad/s" and base.units["voltage"] == "V"
    assert base.units["shaft"] == "N m"  # a rotational spring/damper between angles
    assert set(base.units) == set(base.columns)
    # Every column described by its model or law: the motor's output, the shaft's sign convention.
    assert base.descriptions["motor.omega"] == "angular velocity at the gearbox output"
    assert "acts + on the left body" in base.descriptions["shaft"]
    assert set(base.descriptions) == set(base.columns)
    # The step source: 0 V before t = 0.1 s, 24 V once its 5 ms ramp is over.
    assert base["supply.y"][base.time < 0.099].max() == 0.0
    assert np.all(base["supply.y"][base.time > 0.106] == 24.0)
    stats = base.statistics
    assert stats["rejected"] == 0
    assert [s["micro_steps"] > 0 for s in stats["subsystems"]] == [False, False, True, True]
    assert 0 < stats["time"]["solver_s"] < stats["wall_time_s"]
    assert base.metadata["status"] == "completed"
    assert base.files is None


def test_override_changes_the_result_as_the_physics_says(base):
    # The drive is linear in the supply voltage: the load speed's change from 24 V to 48 V equals
    # its change from 0 V to 24 V (the brake torque acts alike in all three runs), up to the
    # solvers' tolerances, and more voltage turns the load faster.
    low = macrostep.run(SOURCES, set={"subsystem.supply.final": 0.0}, **RUN)
    high = macrostep.run(SOURCES, set=["subsystem.supply.final=48.0"], **RUN)
    assert high["supply.y"][-1] == 48.0 and low["supply.y"][-1] == 0.0
    w0, w24, w48 = (r["load.omega_2"][-1] for r in (low, base, high))
    assert w48 > w24 > 0.0
    assert w48 - w24 == pytest.approx(w24 - w0, rel=1e-3)
    assert high.metadata["config"]["overrides"] == ["subsystem.supply.final=48.0"]
    assert low.metadata["config"]["overrides"] == ["subsystem.supply.final=0.0"]


def test_two_point_sweep(base):
    cases = macrostep.sweep(SOURCES, {"subsystem.supply.final": [24.0, 12.0]}, **RUN)
    assert [c.case for c in cases] == [{"subsystem.supply.final": 24.0},
                                       {"subsystem.supply.final": 12.0}]
    # The case of the file's own value is the plain run, bit for bit.
    assert np.array_equal(cases[0].values, base.values)
    assert cases[1]["supply.y"][-1] == 12.0
    assert cases[1]["load.omega_2"][-1] < cases[0]["load.omega_2"][-1]


def test_sweep_checks_every_case_first(tmp_path):
    with pytest.raises(macrostep.ConfigError, match="rtol"):
        macrostep.sweep(SOURCES, {"cosim.rtol": [1e-4, 2.0]}, output=tmp_path, **RUN)
    assert list(tmp_path.iterdir()) == []  # nothing ran


def cli(*args):
    return subprocess.run([CLI, *map(str, args)], capture_output=True, text=True, timeout=60)


@pytest.mark.skipif(not CLI, reason="MACROSTEP_CLI names the build's macrostep binary")
def test_bit_identical_to_the_command(tmp_path):
    out = tmp_path / "cli.csv"
    done = cli("run", SOURCES, "--set", "subsystem.supply.final=48.0", "--stop-time", STOP,
               "--executor", "inprocess", "--output", out)
    assert done.returncode == 0, done.stderr
    header, rows = read_csv(out)
    r = macrostep.run(SOURCES, set={"subsystem.supply.final": 48.0}, **RUN)
    assert header == ["time", *r.columns]
    assert np.array_equal(rows[:, 0], r.time) and np.array_equal(rows[:, 1:], r.values)


def test_a_dict_runs_as_its_file(base):
    config = tomllib.loads(SOURCES.read_text())
    config["subsystem"][1]["file"] = str(SOURCE / "configs" / "sources-load.csv")
    r = macrostep.run(config, **RUN)
    assert r.columns == base.columns and np.array_equal(r.values, base.values)


def test_config_errors_raise_the_commands_message(tmp_path):
    with pytest.raises(macrostep.ConfigError) as error:
        macrostep.run(SOURCES, set={"cosim.rtl": 1e-5}, **RUN)
    assert isinstance(error.value, ValueError)
    message = str(error.value)
    assert "--set cosim.rtl=1e-05" in message and "did you mean 'rtol'" in message
    if CLI:
        done = cli("run", SOURCES, "--set", "cosim.rtl=1e-05", "--output", tmp_path / "x.csv")
        assert done.returncode == 2 and done.stderr.strip() == message
    bad = tomllib.loads(SOURCES.read_text())
    bad["subsystem"][1]["file"] = str(SOURCE / "configs" / "sources-load.csv")
    bad["cosim"]["scheme"] = "explict"
    line = macrostep.to_toml(bad).splitlines().index("scheme = 'explict'") + 1
    with pytest.raises(macrostep.ConfigError, match=rf"^<dict>:{line}: cosim.scheme: .*implicit"):
        macrostep.run(bad, **RUN)
    with pytest.raises(ValueError, match="allowed: explicit, implicit"):
        macrostep.run(SOURCES, scheme="jacobi", **RUN)
    assert list(tmp_path.iterdir()) == []


def test_compare_against_the_reference(base):
    ref = macrostep.reference(SOURCES, stop_time=STOP)
    assert ref.kind == "reference" and ref.columns == base.columns
    error = macrostep.compare(base, ref)
    # The rows are on the reference's grid: nothing is interpolated.
    assert set(error) == set(base.columns) and not error.interpolated
    assert error.largest[1] < 1e-2  # H = 0.5 ms sees the voltage step within 0.5 ms
    # The comparison tells a different run apart: 48 V against the 24 V reference.
    high = macrostep.run(SOURCES, set={"subsystem.supply.final": 48.0}, **RUN)
    assert macrostep.compare(high, ref)["load.omega_2"] > 0.5
    # Rows weighted by the time they stand for: on this uniform grid the end rows weigh half.
    timed = macrostep.compare(base, ref, weights="time")
    assert set(timed) == set(error) and timed.norm != error.norm
    with pytest.raises(ValueError, match="allowed: equal, time"):
        macrostep.compare(base, ref, weights="rows")


def test_output_files_stay_and_are_not_overwritten_unasked(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    macrostep.run(SOURCES, **RUN)
    assert list(tmp_path.iterdir()) == []  # the default: a temporary folder, removed
    out = tmp_path / "run.csv"
    r = macrostep.run(SOURCES, output=out, **RUN)
    assert r.files["result"] == str(out) and Path(r.files["steps"]).exists()
    header, rows = read_csv(out)
    assert np.array_equal(rows[:, 1:], r.values)
    with pytest.raises(FileExistsError, match="overwrite=True"):
        macrostep.run(SOURCES, output=out, **RUN)
    macrostep.run(SOURCES, output=out, overwrite=True, **RUN)


def test_process_executor_gives_the_same_bits(base, monkeypatch):
    assert macrostep.worker_binary(), "the build's macrostep binary is the workers' program"
    r = macrostep.run(SOURCES, stop_time=STOP, executor="processes")
    assert r.metadata["cosim"]["executor"] == "processes"
    assert len(r.metadata["placement"]["subsystems"]) == 4  # one worker process each
    assert np.array_equal(r.values, base.values)
    monkeypatch.delenv("MACROSTEP_BINARY", raising=False)
    monkeypatch.setattr(macrostep._macrostep, "build_binary", "")
    with pytest.raises(ValueError, match="MACROSTEP_BINARY"):
        macrostep.run(SOURCES, stop_time=STOP, executor="processes")


def test_monolithic_run():
    r = macrostep.run(SOURCES, stop_time=STOP, monolithic=True)
    assert r.kind == "monolithic" and r.units["supply.y"] == "V"
    assert r["supply.y"][-1] == 24.0


def test_ctrl_c_stops_the_run_and_the_command_resumes_it(tmp_path):
    # 10 s of the drive: about 20 000 macro steps, about 0.5 s, five times the 0.1 s until SIGINT.
    out = tmp_path / "long.csv"
    run = {"set": {"subsystem.supply.final": 30.0}, "stop_time": 10.0, "executor": "inprocess"}
    timer = threading.Timer(0.1, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            macrostep.run(SOURCES, output=out, **run)
    finally:
        timer.cancel()
    time, _, _ = macrostep._macrostep.read_table(str(out))  # the rows so far: a valid table
    assert 0 <= time[-1] < 10.0
    assert '"status": "interrupted"' in out.with_suffix(".json").read_text()
    if not CLI:
        return
    # The final checkpoint holds the run's arguments: the command continues it to the same bits.
    done = cli("resume", out.with_suffix(".ckpt"))
    assert done.returncode == 0, done.stderr
    whole = macrostep.run(SOURCES, **run)
    header, rows = read_csv(out)
    assert header[1:] == whole.columns
    assert np.array_equal(rows[:, 0], whole.time) and np.array_equal(rows[:, 1:], whole.values)


def test_the_example_runs():
    done = subprocess.run([sys.executable, str(SOURCE / "examples" / "python" / "sources_sweep.py")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert [line.split(":")[0] for line in lines] == ["supply 12 V", "supply 24 V", "supply 48 V"]


def test_two_threads_with_one_output_get_one_run_each(tmp_path):
    # Each thread's check, run and reading back happen while no other run in the process can
    # replace the files: the second finds the first's files (FileExistsError) or, with
    # overwrite=True, reads its own run, never a torn or empty table.
    out = tmp_path / "r.csv"
    finals = [12.0, 48.0]
    outcomes = [None, None]

    def job(i, overwrite):
        try:
            r = macrostep.run(SOURCES, set={"subsystem.supply.final": finals[i]}, output=out,
                              overwrite=overwrite, **RUN)
            outcomes[i] = float(r["supply.y"][-1])
        except Exception as e:  # noqa: BLE001 - the test looks at every outcome
            outcomes[i] = e

    for overwrite in (False, True):
        for f in tmp_path.iterdir():
            f.unlink()
        threads = [threading.Thread(target=job, args=(i, overwrite)) for i in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if overwrite:
            assert outcomes == finals
        else:
            assert sorted(map(type, outcomes), key=str) == sorted([float, FileExistsError],
                                                                   key=str), outcomes
        header, rows = read_csv(out)
        assert rows[-1, header.index("supply.y")] in finals


def test_paths_that_name_another_file_are_refused(tmp_path):
    with pytest.raises(ValueError, match="null byte"):
        macrostep.run(SOURCES, output=str(tmp_path / "a\0b.csv"), **RUN)
    with pytest.raises(ValueError, match="null byte"):
        macrostep.run(str(SOURCES) + "\0x", **RUN)
    with pytest.raises(FileNotFoundError, match="no such folder"):
        macrostep.run(SOURCES, output=str(tmp_path / "missing") + "/", **RUN)
    with pytest.raises(ValueError, match="character device"):
        macrostep.run(SOURCES, output="/dev/null", overwrite=True, **RUN)
    assert list(tmp_path.iterdir()) == []


def test_overwrite_keeps_another_results_metadata(tmp_path):
    macrostep.run(SOURCES, output=tmp_path / "r.h5", **RUN)
    meta = (tmp_path / "r.json").read_text()
    with pytest.raises(macrostep.ConfigError, match="describes the result"):
        macrostep.run(SOURCES, output=tmp_path / "r.csv", overwrite=True, **RUN)
    assert (tmp_path / "r.json").read_text() == meta


def test_a_sweep_does_not_mix_with_an_earlier_larger_one(tmp_path):
    grid = {"subsystem.supply.final": [12.0, 24.0, 48.0]}
    macrostep.sweep(SOURCES, grid, output=tmp_path, **RUN)
    with pytest.raises(FileExistsError, match="case-003"):
        macrostep.sweep(SOURCES, {"subsystem.supply.final": [6.0]}, output=tmp_path,
                        overwrite=True, **RUN)
    assert (tmp_path / "case-001.json").exists() and (tmp_path / "case-003.csv").exists()


@pytest.mark.skipif(not CLI, reason="MACROSTEP_CLI names the build's macrostep binary")
def test_a_worker_that_cannot_start_is_a_run_error(monkeypatch):
    monkeypatch.setenv("MACROSTEP_BINARY", "/nonexistent/macrostep")
    with pytest.raises(macrostep.RunError):
        macrostep.run(SOURCES, stop_time=0.01, executor="processes")


def test_arguments_python_cannot_pass_are_named():
    with pytest.raises(macrostep.ConfigError, match="64 bits"):
        macrostep.run(SOURCES, set={"subsystem.supply.final": 2**70}, **RUN)
    with pytest.raises(macrostep.ConfigError, match="not valid Unicode"):
        macrostep.run(SOURCES, set={"subsystem.supply.unit": "\udcff"}, **RUN)
    with pytest.raises(ValueError, match="stop_time='abc'"):
        macrostep.run(SOURCES, stop_time="abc", executor="inprocess")
    with pytest.raises(ValueError, match="scheme=3"):
        macrostep.run(SOURCES, scheme=3, **RUN)
    with pytest.raises(ValueError, match="overwrite='no'"):
        macrostep.run(SOURCES, overwrite="no", **RUN)


@pytest.mark.skipif(not CLI, reason="MACROSTEP_CLI names the build's macrostep binary")
def test_the_metadata_names_the_command_of_the_same_run(tmp_path):
    out = tmp_path / "p.csv"
    r = macrostep.run(SOURCES, set={"subsystem.supply.final": 48.0}, output=out, **RUN)
    command = r.metadata["command"]
    assert command.startswith("python: macrostep run ")
    words = command.split()[2:]  # after "python: macrostep"
    again = tmp_path / "again.csv"
    words[words.index("--output") + 1] = str(again)
    done = cli(*words)
    assert done.returncode == 0, done.stderr
    assert again.read_bytes() == out.read_bytes()
    temporary = macrostep.run(SOURCES, **RUN)
    assert "--output" not in temporary.metadata["command"]
    assert "tmp" not in temporary.summary.split("wrote ")[-1].split()[0]

#!/usr/bin/python3
"""Co-simulates configs/sources.toml with three supply voltages, compares each with the
tight-tolerance reference of the same voltage and prints the load speed with its unit, the
statistics and the NRMSE (docs/guide/python.md).

    PYTHONPATH=build/release/python examples/python/sources_sweep.py
"""

from pathlib import Path

import macrostep

CONFIG = Path(__file__).resolve().parents[2] / "configs" / "sources.toml"
STOP = 0.5  # s: the voltage step at 0.1 s, the brake from 0.3 s

for case in macrostep.sweep(CONFIG, {"subsystem.supply.final": [12.0, 24.0, 48.0]},
                            stop_time=STOP, executor="inprocess"):
    volts = case.case["subsystem.supply.final"]
    reference = macrostep.reference(CONFIG, set=case.case, stop_time=STOP)
    error = macrostep.compare(case, reference)
    name, worst = error.largest
    print(f"supply {volts:g} {case.units['supply.y']}: load.omega_2 = "
          f"{case['load.omega_2'][-1]:.3f} at t = {case.time[-1]:g} s, "
          f"{case.statistics['macro_steps']} macro steps in "
          f"{case.statistics['wall_time_s'] * 1e3:.0f} ms; largest NRMSE {worst:.1e} ({name})")

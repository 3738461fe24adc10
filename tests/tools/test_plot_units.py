#!/usr/bin/python3
"""tools/plot_run.py's grouping of columns into panels by unit (no matplotlib needed): an
angle never shares a panel with a torque, every column is in exactly one panel, a result
without units keeps the panels by name, and the units come from the metadata's "columns"."""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
import plot_run  # noqa: E402


class UnitGroups(unittest.TestCase):
    def test_one_group_per_unit_in_first_appearance_order_unknown_last(self):
        units = {"motor.phi": "rad", "shaft": "N m", "motor.omega": "rad/s",
                 "load.phi_1": "rad", "brake.torque": "N m"}
        names = ["motor.phi", "motor.omega", "extra", "load.phi_1", "brake.torque", "shaft"]
        self.assertEqual(plot_run.unit_groups(names, units), [
            ("rad", ["motor.phi", "load.phi_1"]),
            ("rad/s", ["motor.omega"]),
            ("N m", ["brake.torque", "shaft"]),
            ("", ["extra"]),
        ])

    def test_panels_by_unit_name_their_kind_and_unit(self):
        units = {"x_5": "m", "v_5": "m/s", "x_6": "m", "lambda_1": "N"}
        panels = plot_run.coupling_panels(["x_5", "v_5", "x_6", "lambda_1"], {"lambda_1"}, units)
        self.assertEqual(panels, [
            (["x_5", "x_6"], "outputs [m]"),
            (["v_5"], "outputs [m/s]"),
            (["lambda_1"], "coupling variables [N]"),
        ])
        mixed = plot_run.coupling_panels(["two.force", "lambda"], {"lambda"},
                                         {"two.force": "N", "lambda": "N"})
        self.assertEqual(mixed, [(["two.force", "lambda"], "coupling variables and outputs [N]")])

    def test_without_units_the_panels_by_name_stay(self):
        panels = plot_run.coupling_panels(["x_5", "v_5", "lambda_1"], {"lambda_1"}, {})
        self.assertEqual(panels, [(["lambda_1"], "coupling variables"), (["x_5"], "positions"),
                                  (["v_5"], "velocities and other outputs")])

    def test_units_come_from_the_metadata_columns(self):
        run = plot_run.Run.__new__(plot_run.Run)
        run.metadata = {"columns": [{"name": "time", "unit": "s"}, {"name": "x", "unit": "m"},
                                    {"name": "c", "unit": ""}, {"bad": 1}]}
        self.assertEqual(run.units(), {"time": "s", "x": "m"})
        run.metadata = {"mode": "cosimulation"}  # an older result: none
        self.assertEqual(run.units(), {})


if __name__ == "__main__":
    unittest.main()

"""F-HYD (spec/MODELS.md): the hydraulic node's bulk-modulus variants, its Newton statistics and
the F-2.8 pair built from hydraulic lines (seed 003 §2.4)."""
import csv
import re

from .runner import RunFailed, config_path
from .study import Result, spread

# As in studies.py: small models in one process with one thread.
INPROC = ["--executor", "inprocess", "--threads", "1"]


def fhyd(runner, quick):
    r = Result()
    stop = 0.6 if quick else 1.5
    r.note("the runtime's hydraulic node law on configs/drivetrain-belt.toml (a hydraulic "
           "tensioner: cylinder cap side on a 0.1 l node with seed 003 Eq. 2.94's "
           f"pressure-dependent modulus, rod side on a constant-modulus tank node); t_sim = "
           f"{stop:g} s (file: 1.5 s); explicit exMD rtol 1e-5; in-process, one thread")
    base = config_path("drivetrain-belt.toml")
    with open(base) as f:
        text = f.read()
    m = re.search(r'initial_pressure = (\S+).*?\nbulk_modulus = "pressure_dependent"\n'
                  r'modulus_a = (\S+)\nmodulus_b = (\S+)\nmodulus_c = (\S+)\n', text, re.S)
    if not m:
        raise RunFailed("configs/drivetrain-belt.toml: no pressure-dependent node found")
    p0, a, b, c = (float(m.group(i)) for i in range(1, 5))
    e0 = a / (1 + b * p0 ** c)  # E(p0), seed 003 Eq. 2.94
    const = runner.path("fhyd_constant.toml")
    with open(const, "w") as f:
        block = m.group(0)[m.group(0).index("bulk_modulus"):]
        f.write("# drivetrain-belt.toml, cap node at constant E(p0) (tools/experiments)\n" +
                text.replace(block, f"modulus = {e0:.6g}\n", 1))
    stepped = runner.path("fhyd_stepped.toml")
    with open(stepped, "w") as f:
        f.write("# drivetrain-belt.toml, cap node with the stepped modulus (tools/experiments)\n" +
                text.replace('bulk_modulus = "pressure_dependent"', 'bulk_modulus = "stepped"', 1))
    so = INPROC + ["--stop-time", f"{stop:g}"]
    t = runner.rounds([("pressure-dependent", base, "fhyd_pdep", so),
                       ("constant", const, "fhyd_const", so),
                       ("stepped", stepped, "fhyd_stepped", so)])
    pd, co, st = t["pressure-dependent"], t["constant"], t["stepped"]
    r.row("T(pressure-dependent E) / T(constant E)", pd["wall"] / co["wall"], 1.0,
          note="target within 5 % (seed 003 Table 4.7: the same speed-up 2.1 for every E "
               f"variant); constant E = E(p0) = {e0:.3g} Pa")
    r.row("T(stepped E) / T(constant E)", st["wall"] / co["wall"], 1.0,
          note="stepped: E frozen at the last accepted pressure over each macro step (seed 003 "
               "Eq. 2.93, bulk_modulus = \"stepped\")")
    steps = {k: v["statistics"]["macro_steps"] for k, v in t.items()}
    r.row("macro steps pressure-dependent / constant", steps["pressure-dependent"] /
          steps["constant"], 1.0, note=f"{steps['pressure-dependent']} / {steps['constant']}")
    r.row("macro steps stepped / constant", steps["stepped"] / steps["constant"], 1.0,
          note=f"{steps['stepped']} / {steps['constant']}")
    _fhyd_newton(r, pd)
    _fhyd_stepped_accuracy(runner, r, pd, st)
    _fhyd_pair(runner, r)
    r.note(spread(t))
    r.note("the runs last about 0.2 s each, so a 5 % time difference is within their noise; "
           "the macro-step ratio is the steadier figure (the moduli differ away from p0, "
           "so the runs are not the same trajectory)")
    return r


def _fhyd_newton(r, pd):
    """Seed 003 §2.4: Newton from p^(l-1), 2-3 iterations; the run's statistics.laws."""
    laws = pd["statistics"].get("laws", [])
    if not laws:
        raise RunFailed("fhyd_pdep: no statistics.laws in the JSON")
    newton = laws[0]["newton_iterations"]
    share = newton["share_at_most_3"]
    hist = newton["histogram"]
    r.row("share of macro steps with <= 3 Newton corrections of the node", share, 0.95,
          failed=share < 0.95,
          note="target >= 95 %; histogram of corrections 0, 1, 2, ...: " +
               " ".join(str(n) for n in hist[:6]) + f" over {newton['steps']} accepted steps "
               "(statistics.laws of the run's JSON; Newton from the last accepted pressure)")


def _fhyd_stepped_accuracy(runner, r, pd, st):
    """Stepped vs pressure-dependent: the cap pressure at the end of the runs."""
    def last(meta):
        with open(meta["csv"]) as f:
            rows = list(csv.DictReader(f))
        return float(rows[-1]["cap_pressure"])
    a, b = last(st), last(pd)
    r.row("cap pressure at the end, stepped / pressure-dependent", a / b, 1.0,
          note=f"{a:.7g} / {b:.7g} Pa (each on its own macro grid)")


# Two hydraulic_lines on one node with seed 003's fluid at 100 bar (F = E(p0)/V_K / k = 8.9),
# the node 15 bar above it: the stepped node against the pressure-dependent one on an
# oscillating pair (controlled steps, a row at every accepted point). The absolute tolerances
# fit the volumes (2e-8 m^3) and flows (1e-4 m^3/s): the defaults (atol_pos = 1e-3 rtol) would
# let the controller accept errors of several percent of the volume swing.
_LINE = """model = "hydraulic_line"
length = 1.0
area = 1.0e-4
chamber_volume = 1.0e-4
chamber_modulus = 8.5e8
chamber_pressure = 1.0e7
"""
_PAIR = ("[[subsystem]]\nname = \"a\"\n" + _LINE + "volume0 = 2.0e-8\n[[subsystem]]\n"
         "name = \"b\"\n" + _LINE + """[[connection]]
name = "p_node"
law = "hydraulic_node"
from = ["a.volume", "b.volume"]
to = ["a.pressure", "b.pressure"]
volume = 1.0e-5
initial_pressure = 1.0e7
bulk_modulus = "{model}"
modulus_a = 8.8668e8
modulus_b = 1.7490e11
modulus_c = -1.7142857142857142
[solver]
rtol = 1e-10
[simulation]
end_time = 0.05
output_interval = 1e-3
[output]
rows = "macro"
[cosim]
rtol = 1e-6
atol_pos = 1e-14
atol_vel = 1e-10
""")


def _fhyd_pair(runner, r):
    """MODELS F-HYD / F-2.8: configs/f-2.8-hydraulic.toml against the mechanical pair, and the
    stepped node on an oscillating line pair."""
    cfg = config_path("f-2.8-hydraulic.toml")

    def h_max(options, name):
        out, _ = runner._call(["stability"] + options + ["--no-plot"], name, 120)
        m = re.search(r"largest stable H: (\S+) s", out)
        if not m:
            raise RunFailed(f"{name}: no stable limit printed")
        return float(m.group(1))
    # (name, options, seed 003 omega_hat_max at F = 100 for the fixed sets, MODELS F-2.8)
    sets = (("Lagrange kappa = 2 (default)", [], None),
            ("Const 2,3,Opt", ["--approximation", "const-2-3-opt"], 0.109),
            ("Lin 2,3,Opt", ["--approximation", "lin-2-3-opt"], 0.133),
            ("Const 2,2,Opt", ["--approximation", "const-2-2-opt"], 0.133),
            ("Lin 2,2,Opt", ["--approximation", "lin-2-2-opt"], 0.141))
    worst = 0.0
    for name, options, seed in sets:
        tag = options[-1] if options else "default"
        hyd = 1000.0 * h_max([cfg] + options, f"fhyd_pair_{tag}")
        mech = h_max(["--cc", "100", "--omega-max", "1"] + options, f"fhyd_mech_{tag}")
        worst = max(worst, abs(hyd / mech - 1.0))
        r.row(f"F-2.8 by a hydraulic line pair, F = 100, {name}: omega H_max", hyd,
              seed if seed is not None else mech,
              note=f"mechanical pair (macrostep stability --cc 100): {mech:.6g}" +
                   ("" if seed is not None else "; seed column: the mechanical pair (no seed "
                                                  "figure for Lagrange)"))
    r.row("hydraulic / mechanical omega H_max, largest deviation over the five sets",
          f"{worst:.1e}", "<= 1 %", failed=worst > 0.01)
    for name, options in (("Lagrange", []), ("Const 2,3,Opt", ["--approximation",
                                                               "const-2-3-opt"])):
        tag = options[-1] if options else "default"
        h = h_max([cfg] + options, f"fhyd_pair_hmax_{tag}")
        grow = {}
        for factor in (0.9, 1.1):
            run = f"fhyd_pair_run_{tag}_{factor:g}"
            try:
                meta = runner.run(cfg, run, INPROC + options + ["--step-size", f"{factor * h:.6g}"])
                path = meta["csv"]
            except RunFailed:
                path = runner.path(run + ".csv")  # stopped by the divergence guard or IDA
            with open(path) as f:
                grow[factor] = max(abs(float(x["a.volume"])) for x in csv.DictReader(f)) / 1e-7
        r.row(f"runs of configs/f-2.8-hydraulic.toml at 0.9 / 1.1 H_max, {name}: largest "
              "volume / initial", f"{grow[0.9]:.2g} / {grow[1.1]:.2g}", "bounded / grows",
              failed=not (grow[0.9] <= 1.0 and grow[1.1] > 10.0),
              note=f"H_max = {h:.4g} s; 0.05 s fixed-step explicit Jacobi; a growing run ends "
                   "at the divergence guard or a failing line")
    r.note("hydraulic pair rows: configs/f-2.8-hydraulic.toml (two hydraulic_lines, I = rho L/A "
           "= 8.5e6 kg/m^4, own chambers k = E_C/V_C = 8.5e12 Pa/m^3, omega = 1000 rad/s, node "
           "E/V_K = 100 k) with `macrostep stability CONFIG [--approximation A]`; omega H_max "
           "= 1000 rad/s x the largest stable H. The node also reads the lines' flows "
           "(reads_flows) for its rate dp/dt, which the b != 0 sets use")
    swing, paths = {}, {}
    for model in ("pressure_dependent", "stepped"):
        path = paths[model] = runner.path(f"fhyd_linepair_{model}.toml")
        with open(path, "w") as f:
            f.write(_PAIR.replace("{model}", model))
        runs = [("cosim", INPROC)]
        if model == "pressure_dependent":
            runs.append(("mono", ["--monolithic", "--set", "simulation.output_interval=1e-5"]))
        for kind, options in runs:
            meta = runner.run(path, f"fhyd_linepair_{model}_{kind}", options)
            with open(meta["csv"]) as f:
                rows = [(float(x["time"]), float(x["p_node"])) for x in csv.DictReader(f)]
            last = [p for t, p in rows if t >= 0.04]  # the last 10 ms (14 slow periods)
            swing[(model, kind)] = (max(last) - min(last),
                                    meta["statistics"].get("macro_steps"))
    mono = swing[("pressure_dependent", "mono")][0]
    pdep, pdep_steps = swing[("pressure_dependent", "cosim")]
    step, step_steps = swing[("stepped", "cosim")]
    r.row("line pair (F = 8.9, 100 bar +- 15 bar): node pressure swing in 40-50 ms, "
          "pressure-dependent co-simulation / monolithic", pdep / mono, 1.0,
          note=f"{pdep:.5g} / {mono:.5g} Pa; exMD rtol 1e-6 with atol fitted to the volumes")
    r.row("the same, stepped / pressure-dependent", step / pdep, 1.0,
          note=f"{step:.5g} / {pdep:.5g} Pa; the stepped node is an explicit Euler step in the "
               "volume per macro step (its amplitude drifts slowly)")
    r.row("the same, macro steps stepped / pressure-dependent (controlled)",
          step_steps / pdep_steps, "-",
          note=f"{step_steps} / {pdep_steps}; a finding, not the seed's comparison: the stepped "
               "node freezes E over a step, a first-order error in p per macro step that enters "
               "the lines' flows and volumes, which exMD watches, so the controller takes "
               "smaller steps; seed 003 Table 4.7 compares the variants at a fixed H (next rows)")
    _fhyd_fixed_h(runner, r, paths)


def _fhyd_fixed_h(runner, r, paths):
    """Seed 003 Table 4.7's comparison: the E variants at the same fixed H = 1e-5 s (there with
    Lin 2,3,Opt; here the default Lagrange polynomials), cost and result; 0.5 s (50 000 macro
    steps) so that the time is measurable."""
    fixed = INPROC + ["--estimator", "none", "--step-size", "1e-5", "--stop-time", "0.5"]
    t = runner.rounds([(model, paths[model], f"fhyd_linepair_{model}_fixed", fixed)
                       for model in ("pressure_dependent", "stepped")])
    pd, st = t["pressure_dependent"], t["stepped"]
    r.row("line pair at the seed's fixed H = 1e-5 s: T(stepped) / T(pressure-dependent)",
          st["wall"] / pd["wall"], 1.0,
          note=f"target within 5 % (seed 003 Table 4.7: the same speed-up 2.1 for every E "
               f"variant at H = 1e-5 s); 0.5 s, {st['statistics']['macro_steps']} macro steps "
               "each; "
               "medians of interleaved rounds: " + spread(t))
    swing = {}
    for model, meta in t.items():
        with open(meta["csv"]) as f:
            last = [float(x["p_node"]) for x in csv.DictReader(f)
                    if 0.04 <= float(x["time"]) <= 0.05]  # as the controlled rows
        swing[model] = max(last) - min(last)
    ratio = swing["stepped"] / swing["pressure_dependent"]
    r.row("the same: node pressure swing in 40-50 ms, stepped / pressure-dependent", ratio, 1.0,
          note=f"{swing['stepped']:.5g} / {swing['pressure_dependent']:.5g} Pa (seed 003: the "
               "result is not influenced appreciably)")

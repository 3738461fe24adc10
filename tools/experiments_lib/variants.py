"""The benchmark tools' names for ways to run a configuration (tools/bench-implicit,
tools/bench-scaling), turned into `macrostep run` options.

  monolithic            the model in one IDA
  exMD                  explicit scheme, exMD
  auto                  scheme auto (explicit, semi-implicit or implicit steps), exMD/imMD
  semi-implicit         semi-implicit with the fd Jacobian
  SCHEME:JACOBIAN       an iterative scheme with imMD and that interface Jacobian
  NAME@R                NAME with the controller's --rtol R
  NAME+KEY=VALUE        NAME with `--set cosim.KEY=VALUE` (repeatable); a key of the iterative
                        schemes is checked against the file's scheme, so the scheme and the
                        estimator are set the same way: implicit:reuse+final_pass=false
"""


def variant_args(name):
    if "@" in name:
        base, rtol = name.rsplit("@", 1)
        return variant_args(base) + ["--rtol", rtol]
    if "+" in name:
        base, *sets = name.split("+")
        args = variant_args(base)
        for flag in ("--scheme", "--estimator"):
            if flag in args:
                args += ["--set", f"cosim.{flag[2:]}={args[args.index(flag) + 1]}"]
        for kv in sets:
            args += ["--set", f"cosim.{kv}"]
        return args
    if name == "monolithic":
        return ["--monolithic"]
    if name == "exMD":
        return ["--scheme", "explicit", "--estimator", "exMD"]
    if name == "auto":  # explicit, semi-implicit or implicit steps by their cost (methods.md §4.8)
        return ["--scheme", "auto", "--estimator", "exMD"]
    if name == "semi-implicit":  # one corrector pass (docs/design/methods.md §4.4)
        name = "semi-implicit:fd"
    scheme, jac = name.split(":")
    return ["--scheme", scheme, "--estimator", "imMD", "--jacobian", jac]

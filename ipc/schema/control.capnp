# Control messages between the master and a subsystem process (DESIGN.md contract 3): the
# subsystem's configuration, the handshake and the shutdown notice. They are exchanged once per
# run through regions of the shared-memory segment; the per-step traffic stays POD
# (ipc/include/macrostep/ipc/protocol.hpp).
#
# Floating-point data travels as Float64 bit patterns, so a worker rebuilds its model
# bit-identically (contract 1).
@0xbe6249cbd9197433;

$import "/capnp/c++.capnp".namespace("macrostep::ipc::schema");

# F_SD = c*dx + d*dv + C*sgn(dx)*|dx|^ex + D*sgn(dv)*|dv|^ev (library::ElementLaw; C, D are cc, dd).
struct ElementLaw {
  c @0 :Float64;
  d @1 :Float64;
  cc @2 :Float64;
  dd @3 :Float64;
  ex @4 :Float64;
  ev @5 :Float64;
}

struct HarmonicForce { amplitude @0 :Float64; omega @1 :Float64; phase @2 :Float64; }
struct ContactForce { amplitude @0 :Float64; stiffness @1 :Float64; }
struct ImpulseForce {
  amplitude @0 :Float64; start @1 :Float64; duration @2 :Float64; edge @3 :Float64;
}
struct ModifiedSineForce {
  amplitude @0 :Float64; omega @1 :Float64; phase @2 :Float64; exponent @3 :Float64;
}

struct MassForces {
  harmonic @0 :List(HarmonicForce);
  contact @1 :List(ContactForce);
  impulse @2 :List(ImpulseForce);
  modifiedSine @3 :List(ModifiedSineForce);
}

# ida::IntegratorOptions.
struct IntegratorOptions {
  rtol @0 :Float64;
  atolPos @1 :Float64;
  atolVel @2 :Float64;
  denseLinearSolver @3 :Bool;  # false: KLU
  maxOrder @4 :Int32;
  maxSteps @5 :Int64;
  initialStep @6 :Float64;
  stopAdjustment @7 :Bool;
  overshoot @8 :Bool;  # METHODS §6.6 option (a)
}

# One chain segment: masses [firstMass, lastMass) of a chain of chainSize masses (0-based), with
# the explicit parameters of those masses and of elements firstMass..lastMass (the segment's
# own elements plus the two cut elements at its ends, which the segment replaces by inputs).
struct ChainSegmentConfig {
  chainSize @0 :UInt64;
  firstMass @1 :UInt64;
  lastMass @2 :UInt64;
  mass @3 :List(Float64);          # lastMass - firstMass
  element @4 :List(ElementLaw);    # lastMass - firstMass + 1
  forces @5 :List(MassForces);     # lastMass - firstMass
  x0 @6 :List(Float64);
  v0 @7 :List(Float64);
}

# T(t) = constant + step*(1 + tanh((t - stepTime)/stepWidth))/2 (library::LoadTorque).
struct LoadTorque {
  constant @0 :Float64; step @1 :Float64; stepTime @2 :Float64; stepWidth @3 :Float64;
}

# library::DriveTrainParameters: n inertias, n - 1 shafts; bearingDamping and load empty or n.
struct DriveTrainConfig {
  inertia @0 :List(Float64);
  shaft @1 :List(ElementLaw);
  bearingDamping @2 :List(Float64);
  load @3 :List(LoadTorque);
  angle0 @4 :List(Float64);
  speed0 @5 :List(Float64);
  leftCoupled @6 :Bool;
  rightCoupled @7 :Bool;
}

# One value of a registered model's parameter (library::ParameterValue): doubles travel as
# Float64 bit patterns, so the worker's model is bit-identical (contract 1).
struct ParameterValue {
  name @0 :Text;
  union {
    number @1 :Float64;
    integer @2 :Int64;
    boolean @3 :Bool;
    text @4 :Text;
    numbers @5 :List(Float64);
  }
}

# A model of the library's registry (library::RegisteredModel): its name and every parameter's
# value; one schema serves every such model.
struct RegisteredModelConfig {
  model @0 :Text;
  values @1 :List(ParameterValue);
}

# A user's model (plugin::PluginDescription): the worker loads the library itself.
struct PluginConfig {
  library @0 :Text;     # absolute path of the shared library
  parameters @1 :Text;  # JSON object text for the plugin's constructor
  checkJacobians @2 :Bool = true;  # compare its Jacobians with finite differences at loading
}

# An FMI Model Exchange FMU (fmu::FmuDescription): the worker unzips and loads it itself.
struct FmuConfig {
  path @0 :Text;                # absolute path of the .fmu archive
  parameters @1 :Text;          # JSON object: variable name -> start value
  inputs @2 :List(Text);        # variable names; empty: every Real input
  outputs @3 :List(Text);       # variable names; empty: every Real output
  interface @4 :Text;           # "model-exchange", "co-simulation" or empty (the FMU's choice)
  inputsListed @5 :Bool;        # inputs lists every input, even none (fmu::FmuDescription)
}

# The subsystem's model (library::ModelDescription): one alternative per model type.
struct ModelConfig {
  union {
    none @0 :Void;                          # no model: a worker refuses the configuration
    chainSegment @1 :ChainSegmentConfig;
    driveTrain @2 :DriveTrainConfig;
    registered @3 :RegisteredModelConfig;
    plugin @4 :PluginConfig;
    fmu @5 :FmuConfig;
  }
}

struct SubsystemConfig {
  protocolVersion @0 :UInt32;
  index @1 :UInt32;              # 0-based subsystem index
  subsystemCount @2 :UInt32;
  masterPid @3 :Int32;
  model @4 :ModelConfig;
  initialInputs @5 :List(Float64);  # the subsystem's inputs at t0 (from the initial couplings)
  solver @6 :IntegratorOptions;
  rollback @7 :Bool;             # keep a T_N snapshot (needed for reject and extra runs)
  cpuset @8 :List(UInt32);       # PU indices to pin to; empty: unpinned
  extraRuns @9 :UInt32;          # extra runs per step it should be ready for (capacity)
  threads @10 :Int32;            # TBB arena size for its runs; 0: default
  recoveryPath @11 :Text;        # where to keep the accepted state for a restart; empty: nowhere
  recoveryIntervalMs @12 :UInt32;  # least time between two saves of it (0: at every accept)
  jumps @13 :JumpOptions;        # runner::JumpOptions (absent: none)
  outputInterval @14 :Float64;   # runner::RunnerOptions::output_interval (0: no samples)
  processes @15 :UInt32;         # processes that compute the run's subsystems (0: one each)
}

# runner::JumpOptions: how the runs treat the input polynomial's jump at T_N.
struct JumpOptions {
  policy @0 :UInt8;              # runner::JumpPolicy: 0 keep, 1 shift, 2 restart, 3 restart-auto
  microSteps @1 :Int32;          # >= 2: micro steps at most H/microSteps
}

struct Handshake {
  protocolVersion @0 :UInt32;
  layoutVersion @1 :UInt32;      # ipc::kSegmentLayoutVersion the worker was built with
  workerPid @2 :Int32;
  ready @3 :Bool;
  error @4 :Text;                # why not ready
  stateSize @5 :UInt64;
}

struct Shutdown {
  reason @0 :Text;
}

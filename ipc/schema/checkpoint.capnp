# A co-simulation checkpoint (runtime/checkpoint/.../checkpoint.hpp): everything
# `macrostep resume CHECKPOINT` needs to continue a run bit-identically, in one file.
#
# The file is one CheckpointFile message: a fixed frame (magic, format version, the FNV-1a hash
# of the body) around the body, itself a Checkpoint message. The reader checks the frame before
# it reads the body, so that a truncated, corrupted or foreign-version file is refused with a
# clear message and never half read. Doubles travel as Float64 bit patterns; the exported states
# inside (IdaSnapshot, ControllerState of state.capnp) carry their own format versions.
# Field numbers are never reused; any change of meaning changes checkpoint::kFormatVersion.
@0xfb6af4ac45470f57;

$import "/capnp/c++.capnp".namespace("macrostep::ipc::schema");

struct CheckpointFile {
  magic @0 :UInt64;           # checkpoint::kMagic ("MSTEPCKP" as little-endian bytes)
  formatVersion @1 :UInt32;   # checkpoint::kFormatVersion of the writer
  bodyHash @2 :UInt64;        # FNV-1a 64 of body
  body @3 :Data;              # a Checkpoint message (flat array)
}

struct Checkpoint {
  # The run: its configuration (absolute path, for messages and the paths relative to it, and
  # the complete text, so that resume needs nothing else) and its `run` arguments.
  configPath @0 :Text;
  configText @1 :Text;
  arguments @2 :List(Text);   # the words after `macrostep run`
  # The output position: the CSV (absolute path) is cut to csvBytes (csvRows rows) on resume.
  csvPath @3 :Text;
  csvBytes @4 :UInt64;
  csvRows @5 :UInt64;
  # The steps CSV beside it (one row per macro-step attempt), cut likewise; its
  # attempt numbers continue from acceptedSteps + rejectedSteps.
  stepsBytes @17 :UInt64;
  stepsRows @18 :UInt64;
  # FNV-1a 64 of the two files' first csvBytes and stepsBytes bytes: resume refuses a file whose
  # prefix is not what this run wrote (another run's output of the same columns, an edit).
  csvHash @19 :UInt64;
  stepsHash @20 :UInt64;
  # The result row of the newest accepted point, and whether it is not in the CSV yet
  # (output_every > 1).
  lastRow @6 :List(Float64);
  lastRowTime @7 :Float64;
  lastRowPending @16 :Bool;
  # The run driver's counters (the run's JSON statistics continue from them).
  time @8 :Float64;               # T_N, the newest accepted macro point
  acceptedSteps @9 :UInt64;
  rejectedSteps @10 :UInt64;
  acceptedByKappa @11 :List(UInt64);
  timeByKappa @12 :List(Float64);
  # The macro-step pipeline: the controller (state.capnp ControllerState), the scheme's own
  # arrays (MacroStepScheme::export_state) and every subsystem's accepted workspace
  # (state.capnp IdaSnapshot, as Executor::export_state writes it).
  controller @13 :Data;
  scheme @14 :List(List(Float64));
  subsystems @15 :List(Data);
  # The stateful coupling laws' accepted state (CoupledSystem::export_law_states): one array
  # per law, empty when no law has state.
  laws @21 :List(List(Float64));
}

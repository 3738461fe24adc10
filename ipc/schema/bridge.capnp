# Control messages of the MPI bridge between rank 0, the master, and the node agents
# (ranks 1..R-1), each of which drives the worker processes of its group of subsystems through
# the rings of its node. The subsystems' own configuration travels as the SubsystemConfig of
# control.capnp, and the per-step payload as the POD worker::StepCommand / StepReply bytes of the
# rings (ipc/.../protocol.hpp), so a node agent forwards them unchanged.
#
# Order on the MPI tags of the bridge (runtime/executors/mpi/.../mpi_executor.hpp):
#   agent -> master  BridgeHello                    once, at start-up (versions, host)
#   master -> agent  BridgeSetup                    once: its group, or "no run" (why)
#   agent -> master  BridgeReply (ready)            its workers' handshakes and placement
#   master -> agent  BridgeRequest ...              per pass one step request (and any number
#                                                   of output evaluations), per macro step one
#                                                   accept or reject, queries, shutdown
#   agent -> master  BridgeReply                    one per step / query request, in order
@0xe79f0ea4d1c5b2a3;

$import "/capnp/c++.capnp".namespace("macrostep::ipc::schema");

struct BridgeHello {
  version @0 :Text;            # macrostep version and protocol ("0.1.0 protocol 5 bridge 1")
  host @1 :Text;               # MPI_Get_processor_name
  pid @2 :Int32;
  rank @3 :UInt32;
}

struct BridgeSetup {
  run @0 :Bool;                # false: the master stops before the run (reason); the agent exits
  reason @1 :Text;
  subsystems @2 :List(UInt32); # the group: global 0-based subsystem indices, ascending
  configs @3 :List(Data);      # per group subsystem its SubsystemConfig (control.capnp)
  outputs @4 :List(UInt32);    # per group subsystem its output count
  states @5 :List(UInt64);     # per group subsystem its state size
  initialTime @6 :Float64;
  pin @7 :Text;                # the --pin request, planned on the agent's node (per node)
  pusPerSubsystem @8 :UInt32;  # 1 + extra runs (DESIGN.md contract 4)
  hangTimeoutMs @9 :UInt64;
  handshakeTimeoutMs @10 :UInt64;
  extraRuns @11 :UInt32;
}

struct BridgeRequest {
  kind @0 :Kind;
  enum Kind {
    step @0;                   # commands: one StepCommand (wire bytes) per group subsystem
    accept @1;                 # no reply
    reject @2;                 # no reply
    states @3;                 # reply: every group subsystem's accepted state, concatenated
    stats @4;                  # reply: totals and snapshot times
    exportState @5;            # subsystem, path; reply: exportedBytes
    importState @6;            # subsystem, path; reply: time
    shutdown @7;               # reason; no reply; the agent ends its workers and exits
    evaluate @8;               # commands: per group subsystem a kEvaluate StepCommand (wire
                               # bytes) or empty (not asked); reply: its StepReply or empty
  }
  tEnd @1 :Float64;
  commands @2 :List(Data);
  subsystem @3 :UInt32;        # export / import: 0-based index in the group
  path @4 :Text;
  reason @5 :Text;
  macroStep @6 :UInt64;        # accepted steps + 1 (for the agent's messages)
}

struct BridgeReply {
  ok @0 :Bool;
  error @1 :Text;              # when not ok: what failed, naming the subsystem (global number)
  failedSubsystem @2 :UInt32;  # global 0-based
  workerFailure @3 :Bool;      # a worker process died or hung (else: setup or command error)
  replies @4 :List(Data);      # step: one StepReply (wire bytes) per group subsystem
  states @5 :List(Float64);    # states: concatenated in group order
  totals @6 :List(Data);       # stats: ida::AdvanceStats bytes per group subsystem
  snapshotNs @7 :List(Int64);  # stats: per group subsystem
  time @8 :Float64;            # import: the imported time
  exportedBytes @9 :UInt64;
  communicationNs @10 :Int64;  # step: the agent's own ring communication (slowest subsystem)
  placement @11 :Text;         # ready: the node's placement (PlacementMap::describe)
  placementJson @12 :Text;     # ready: PlacementMap::to_json
  workerPids @13 :List(Int32); # ready
  busyNs @14 :Int64;           # the agent's wall time for the request (communication figure)
}

# Exportable state: an IDA workspace snapshot (ida::Integrator::export_snapshot) and
# the macro-step controller (control::MacroStepController::export_state). A message written by
# one process and imported by a freshly started one continues bit-identically (DESIGN.md
# contract 2), so every floating-point value travels as its Float64 bit pattern.
#
# Each root carries formatVersion: the writers' constants (kSnapshotFormatVersion in
# subsystems/ida, kControllerStateFormatVersion in runtime/control) change with any change of
# meaning, and readers accept only their own. Field numbers are never reused.
@0xda2db78032bd7f92;

$import "/capnp/c++.capnp".namespace("macrostep::ipc::schema");

using Control = import "control.capnp";

# ---- IDA workspace snapshot ------------------------------------------------------------------

# One scalar of a C struct of SUNDIALS or KLU, by its field name there (ida/ida_impl.h:
# "ida_kk", ida/ida_ls_impl.h: "nje", klu.h: "rcond"). Lists of them are written and read in
# one fixed order; the names make a mismatch readable.
struct NamedScalar {
  name @0 :Text;
  union {
    real @1 :Float64;
    integer @2 :Int64;
  }
}

# A fixed-size realtype array of IDAMemRec ("ida_psi", ...).
struct NamedArray {
  name @0 :Text;
  values @1 :List(Float64);
}

# klu.h's klu_l_numeric, the factorization SUNLinSol_KLU refactors into: klu_l_refactor keeps
# the pivot order of an earlier klu_l_factor, so it cannot be recomputed from the current
# Jacobian values alone. Lists have n entries unless noted; entries that KLU never writes
# (singleton blocks' lip/uip/llen/ulen) are 0.
struct KluNumeric {
  n @0 :Int64;
  nblocks @1 :Int64;
  lnz @2 :Int64;
  unz @3 :Int64;
  maxLnzBlock @4 :Int64;
  maxUnzBlock @5 :Int64;
  nzoff @6 :Int64;
  pnum @7 :List(Int64);
  pinv @8 :List(Int64);
  lip @9 :List(Int64);
  uip @10 :List(Int64);
  llen @11 :List(Int64);
  ulen @12 :List(Int64);
  offp @13 :List(Int64);       # n + 1
  offi @14 :List(Int64);       # nzoff
  offx @15 :List(Float64);     # nzoff
  udiag @16 :List(Float64);
  rs @17 :List(Float64);       # empty without row scaling
  luSize @18 :List(UInt64);    # nblocks: 64-bit units of each block's LUbx (0: singleton)
  luUnits @19 :List(UInt64);   # the LUbx blocks back to back as raw 64-bit units: KLU packs
                               # row indices (Int64) and values (Float64) into one buffer
  worksize @20 :UInt64;
}

struct KluState {
  firstFactorize @0 :Bool;     # true: nothing factorized yet, numeric absent
  lastFlag @1 :Int32;
  common @2 :List(NamedScalar);  # klu_l_common's parameters and statistics, not its pointers
                                 # nor memusage/mempeak (the process's own allocations)
  numeric @3 :KluNumeric;
}

struct DenseState {
  pivots @0 :List(Int64);      # n
  lastFlag @1 :Int64;
}

struct IdaSnapshot {
  formatVersion @0 :UInt32;
  sundialsVersion @1 :Text;    # SUNDIALS_VERSION of the writer ("6.4.1")
  kluVersion @2 :Text;         # "1.3.9"
  stateSize @3 :UInt64;
  nonzeros @4 :UInt64;         # of the subsystem's Jacobian pattern
  structureHash @5 :UInt64;    # FNV-1a of sizes, state roles and Jacobian pattern
  options @6 :Control.IntegratorOptions;
  vectors @7 :List(List(Float64));  # phi[0..maxOrder], ewt, ee: n values each
  ida @8 :List(NamedScalar);   # IDAMemRec scalars that steer the continuation
  idaArrays @9 :List(NamedArray);
  linearSolverInterface @10 :List(NamedScalar);  # IDALsMemRec
  newton @11 :List(NamedScalar);  # SUNNonlinearSolverContent_Newton
  matrix @12 :List(Float64);   # Jacobian values: CSC data (nonzeros) or dense column-major (n*n)
  union {
    klu @13 :KluState;
    dense @14 :DenseState;
  }
  mode @15 :Data;              # model::Mode::serialize() of a subsystem with events, else empty
}

# ---- a subsystem runner (runner::SubsystemRunner::export_state) ----------------------------------

# The nominal input polynomial of the last accepted step (model::SupportPoints): what the T_N
# history was integrated with, which jump_handling = "shift" moves the BDF history from.
struct InputPolynomial {
  degree @0 :Int32;
  stepBegin @1 :Float64;
  times @2 :List(Float64);          # degree + 1 node times
  values @3 :List(List(Float64));   # per channel, degree + 1 node values
}

# A runner's accepted state: its IDA workspace (an IdaSnapshot message) and the accepted input.
struct RunnerState {
  formatVersion @0 :UInt32;         # runner::kRunnerStateFormatVersion
  workspace @1 :Data;
  acceptedInput @2 :InputPolynomial;
}

# ---- macro-step controller -------------------------------------------------------------------

# control::MacroStepOptions. Enumerations travel as the C++ enumerators' values:
# mode (StepSizeMode) kVariable 0, kFixed 1; estimator (Estimator) kNone 0, kExLE 1, kExMD 2,
# kExCV 3, kImMD 4, kImCV 5; orderStrategy (OrderStrategy) kIdaLike 0, kConservative 1, kFixed 2.
struct MacroStepOptions {
  mode @0 :UInt8;
  tStart @1 :Float64;
  tEnd @2 :Float64;
  h @3 :Float64;
  estimator @4 :UInt8;
  kappaFixed @5 :Int32;
  variableStart @6 :Bool;
  fixedStartRamp @7 :Bool;
  historyCapacity @8 :UInt64;
  orderStrategy @9 :UInt8;
  kappaMax @10 :Int32;
  safety @11 :Float64;
  rMin @12 :Float64;
  rMax @13 :Float64;
  deadZone @14 :Bool;
  hMax @15 :Float64;
  rtol @16 :Float64;
  atolPos @17 :Float64;
  atolVel @18 :Float64;
  atolU @19 :Float64;
  atolPosEach @20 :List(Float64);
  atolVelEach @21 :List(Float64);
  atolUEach @22 :List(Float64);
}

# control::StepPlan.
struct StepPlan {
  attempt @0 :UInt64;
  step @1 :UInt64;
  repeat @2 :Int32;
  tBegin @3 :Float64;
  tEnd @4 :Float64;
  kappa @5 :Int32;
  estimator @6 :UInt8;
}

# control::MacroStepStatistics.
struct MacroStepStatistics {
  accepted @0 :UInt64;
  rejected @1 :UInt64;
  correctorFailures @2 :UInt64;
  acceptedByKappa @3 :List(UInt64);  # kMaxKappa + 1
  hMin @4 :Float64;
  hMax @5 :Float64;
  subsystemFailures @6 :UInt64;
}

# control::OrderController::OrderChangeCheck (D-49: a lowering checked against the next attempt).
struct OrderChangeCheck {
  loweredFrom @0 :Int32;
  fallbackH @1 :Float64;
  refutedH @2 :Float64;
  failedLowerings @3 :Int32;
  lowerHold @4 :Int32;
  nextLowerHold @5 :Int32;
  stepsAtZero @6 :Int32;
}

struct ControllerState {
  formatVersion @0 :UInt32;
  options @1 :MacroStepOptions;  # the writer's; an import must be given equal options
  channels @2 :UInt64;
  historyTimes @3 :List(Float64);   # accepted points, oldest first
  historyValues @4 :List(Float64);  # channels values per point, in the same order
  plan @5 :StepPlan;
  consecutiveFailures @6 :Int32;    # N_fail
  consecutiveSuccesses @7 :Int32;   # N_succ of the order controller
  startPhase @8 :Bool;              # the variable-step start-up phase is still running
  finished @9 :Bool;
  statistics @10 :MacroStepStatistics;
  orderChangeCheck @11 :OrderChangeCheck;
  eventLimit @12 :Float64 = inf;    # the next time event no plan steps over (+inf: none)
  eventClippedStep @13 :Float64;    # the plan's H before that event shortened it (0: it did not)
}

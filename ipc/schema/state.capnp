# Exportable state (issue 8): an IDA workspace snapshot (ida::Integrator::export_snapshot) and
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
}

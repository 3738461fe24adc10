// The contents of a WorkspaceSnapshot, shared by the integrator (save/restore, integrator.cpp)
// and the snapshot's Cap'n Proto export (snapshot_export.cpp). Private to macrostep_ida.
//
// These structs mirror IDA's and KLU's private memory (ida/ida_impl.h, ida/ida_ls_impl.h,
// klu.h). That layout belongs to exactly one SUNDIALS release, hence the version guard below
// (CMake checks it as well).
#pragma once

#include <ida/ida_impl.h>
#include <ida/ida_ls_impl.h>
#include <klu.h>
#include <sundials/sundials_config.h>

#include <cstddef>
#include <memory>
#include <span>
#include <vector>

#include "macrostep/ida/integrator.hpp"

#if SUNDIALS_VERSION_MAJOR != 6 || SUNDIALS_VERSION_MINOR != 4 || SUNDIALS_VERSION_PATCH != 1
#error "macrostep's workspace snapshot reads IDA's private layout of SUNDIALS 6.4.1 exactly"
#endif
static_assert(sizeof(sunindextype) == 8, "SUNDIALS built with 64-bit indices (klu_l_*) expected");
static_assert(MXORDP1 == 6, "IDA 6.4.1 has MXORDP1 == 6");

namespace macrostep::ida {
namespace detail {

// Every scalar of IDAMemRec that steers the continuation: step, order, Newton and Jacobian
// reuse decisions and the counters IDA branches on (nst == 0 selects the first-call path).
// Configuration fields (tolerances, limits, function pointers) are equal in clones by
// construction and not copied. X(name) expands once per field.
// (clang-format does not reach a fixed point on these lists.)
// clang-format off
#define MACROSTEP_IDA_SCALARS(X)                                                        \
  X(ida_tstopset) X(ida_tstop) X(ida_t0)                                                \
  X(ida_kk) X(ida_kused) X(ida_knew) X(ida_phase) X(ida_ns)                             \
  X(ida_hin) X(ida_h0u) X(ida_hh) X(ida_hused) X(ida_eta) X(ida_tn) X(ida_tretlast)     \
  X(ida_cj) X(ida_cjlast) X(ida_cjold) X(ida_cjratio) X(ida_ss) X(ida_oldnrm)           \
  X(ida_epsNewt) X(ida_toldel)                                                          \
  X(ida_nst) X(ida_nre) X(ida_ncfn) X(ida_netf) X(ida_nni) X(ida_nnf) X(ida_nsetups)    \
  X(ida_tolsf) X(ida_SetupDone)                                                         \
  X(ida_irfnd) X(ida_toutc) X(ida_taskc) X(ida_nge) X(ida_tlo) X(ida_thi) X(ida_trout)

#define MACROSTEP_IDA_ARRAYS(X) \
  X(ida_psi) X(ida_alpha) X(ida_beta) X(ida_sigma) X(ida_gamma) X(ida_cvals) X(ida_dvals)

#define MACROSTEP_IDALS_SCALARS(X)                                                      \
  X(nje) X(npe) X(nli) X(nps) X(ncfl) X(nreDQ) X(njtsetup) X(njtimes)                   \
  X(nst0) X(nni0) X(ncfn0) X(ncfl0) X(nwarn) X(last_flag)
// clang-format on

struct IdaScalars {
#define DECLARE_FIELD(f) decltype(IDAMemRec::f) f;
  MACROSTEP_IDA_SCALARS(DECLARE_FIELD)
  MACROSTEP_IDA_ARRAYS(DECLARE_FIELD)
#undef DECLARE_FIELD
};

struct IdaLsScalars {
#define DECLARE_FIELD(f) decltype(IDALsMemRec::f) f;
  MACROSTEP_IDALS_SCALARS(DECLARE_FIELD)
#undef DECLARE_FIELD
};

struct NewtonScalars {
  booleantype jcur;
  int curiter;
  long niters;
  long nconvfails;
};

// Deep copy of a KLU numeric factorization in plain buffers (klu.h's klu_l_numeric).
struct KluNumericCopy {
  bool present = false;
  SuiteSparse_long n = 0, nblocks = 0, lnz = 0, unz = 0, max_lnz_block = 0, max_unz_block = 0,
                   nzoff = 0;
  std::vector<SuiteSparse_long> Pnum, Pinv, Lip, Uip, Llen, Ulen, Offp, Offi;
  std::vector<std::size_t> LUsize;
  std::vector<double> LUbx;  // all blocks back to back, LUsize[k] doubles each (Unit = double)
  std::vector<double> Udiag, Rs, Offx;
  bool has_rs = false;
  std::size_t worksize = 0;

  std::size_t bytes() const {
    return sizeof(SuiteSparse_long) * (Pnum.size() + Pinv.size() + Lip.size() + Uip.size() +
                                       Llen.size() + Ulen.size() + Offp.size() + Offi.size()) +
           sizeof(std::size_t) * LUsize.size() +
           sizeof(double) * (LUbx.size() + Udiag.size() + Rs.size() + Offx.size());
  }
};

}  // namespace detail

struct WorkspaceSnapshot::Data {
  std::size_t n = 0;
  int vectors = 0;  // phi[0..maxord], ewt, ee
  std::vector<double> vectors_buffer;
  detail::IdaScalars ida{};
  detail::IdaLsScalars ls{};
  detail::NewtonScalars newton{};
  std::vector<double> matrix_values;  // sparse data (nnz) or dense column-major data (LU)
  // KLU
  int klu_first_factorize = 1;
  int klu_last_flag = 0;
  klu_l_common klu_common{};
  detail::KluNumericCopy klu_numeric;
  // dense
  std::vector<sunindextype> pivots;
  sunindextype dense_last_flag = 0;
  LinearSolver solver = LinearSolver::kKlu;
  // The mode of a subsystem with events (shared: modes are immutable), else null.
  std::shared_ptr<const model::Mode> mode;

  std::size_t bytes() const {
    return sizeof(double) * (vectors_buffer.size() + matrix_values.size()) + klu_numeric.bytes() +
           sizeof(sunindextype) * pivots.size() + sizeof(detail::IdaScalars) +
           sizeof(detail::IdaLsScalars) + sizeof(detail::NewtonScalars) + sizeof(klu_l_common);
  }
};

namespace detail {

// What the export format checks a snapshot against: the integrator it is exported from or
// imported into.
struct SnapshotTarget {
  const model::Subsystem& subsystem;
  const IntegratorOptions& options;
  std::size_t vectors;             // phi[0..maxord], ewt, ee
  const klu_l_common* klu_common;  // the KLU solver's (parameters); nullptr for dense LU
};

// Integrator::export_snapshot / import_snapshot (snapshot_export.cpp); d must belong to t.
std::vector<std::byte> encode_snapshot(const WorkspaceSnapshot::Data& d, const SnapshotTarget& t);
// Throws std::invalid_argument (not for t) or std::runtime_error (malformed or inconsistent).
WorkspaceSnapshot::Data decode_snapshot(std::span<const std::byte> bytes, const SnapshotTarget& t);

}  // namespace detail

}  // namespace macrostep::ida

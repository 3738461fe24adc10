// Cap'n Proto export and import of a WorkspaceSnapshot (DESIGN.md contract 2; schema
// ipc/schema/state.capnp, IdaSnapshot).
//
// The KLU factorization travels as KLU's own arrays, not as "Jacobian values, refactor on
// import": SUNLinSol_KLU refactors with the pivot order of an earlier full factorization, and a
// fresh klu_l_factor of the same values may pivot differently (tests/ida, KluFactorization).
//
// Import trusts nothing in the bytes. Besides matching the integrator (versions, sizes,
// structure, options), everything that IDA or KLU later uses as an index is range-checked
// (orders, pivots, KLU's permutations and the row indices packed into its L/U buffers), so that
// a corrupt file is an exception here and not a crash in a later advance_to().
#include <capnp/message.h>
#include <capnp/serialize.h>
#include <kj/exception.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "macrostep/ipc/capnp_bytes.hpp"
#include "macrostep/ipc/schema/state.capnp.h"
#include "workspace_data.hpp"

namespace macrostep::ida::detail {
namespace {

namespace schema = ipc::schema;
using ScalarList = capnp::List<schema::NamedScalar>;

// clang-format off
#define MACROSTEP_KLU_PARAMETERS(X)                                                      \
  X(tol) X(memgrow) X(initmem_amd) X(initmem) X(maxwork) X(btf) X(ordering) X(scale)     \
  X(halt_if_singular)
#define MACROSTEP_KLU_STATISTICS(X)                                                      \
  X(status) X(nrealloc) X(structural_rank) X(numerical_rank) X(singular_col) X(noffdiag) \
  X(flops) X(rcond) X(condest) X(rgrowth) X(work)
#define MACROSTEP_NEWTON_FIELDS(X) X(jcur) X(curiter) X(niters) X(nconvfails)
// clang-format on
#define MACROSTEP_COUNT(f) +1

constexpr unsigned kIdaScalarCount = 0 MACROSTEP_IDA_SCALARS(MACROSTEP_COUNT);
constexpr unsigned kIdaArrayCount = 0 MACROSTEP_IDA_ARRAYS(MACROSTEP_COUNT);
constexpr unsigned kLsScalarCount = 0 MACROSTEP_IDALS_SCALARS(MACROSTEP_COUNT);
constexpr unsigned kNewtonCount = 0 MACROSTEP_NEWTON_FIELDS(MACROSTEP_COUNT);
constexpr unsigned kKluCommonCount =
    0 MACROSTEP_KLU_PARAMETERS(MACROSTEP_COUNT) MACROSTEP_KLU_STATISTICS(MACROSTEP_COUNT);

[[noreturn]] void malformed(const std::string& what) {
  throw std::runtime_error("WorkspaceSnapshot import: malformed or inconsistent snapshot: " + what);
}
[[noreturn]] void mismatch(const std::string& what) {
  throw std::invalid_argument("WorkspaceSnapshot import: " + what);
}

std::string klu_version() {
  return fmt::format("{}.{}.{}", KLU_MAIN_VERSION, KLU_SUB_VERSION, KLU_SUBSUB_VERSION);
}

// FNV-1a over the subsystem's sizes, state roles and Jacobian pattern: a snapshot of another
// model with the same sizes is refused instead of continuing wrongly.
std::uint64_t structure_hash(const model::Subsystem& s) {
  std::uint64_t h = 14695981039346656037ull;
  auto mix = [&h](std::uint64_t v) {
    for (int b = 0; b < 8; ++b, v >>= 8) h = (h ^ (v & 0xff)) * 1099511628211ull;
  };
  mix(s.state_size());
  mix(s.input_size());
  mix(s.output_size());
  for (const auto role : s.state_roles()) mix(static_cast<std::uint64_t>(role));
  // The nominals set the solver's tolerances (empty for most models: their hash is unchanged).
  for (const double nominal : s.state_nominals()) mix(std::bit_cast<std::uint64_t>(nominal));
  const auto& p = s.jacobian_pattern();
  for (const auto v : p.column_start) mix(static_cast<std::uint64_t>(v));
  for (const auto v : p.row_index) mix(static_cast<std::uint64_t>(v));
  return h;
}

template <class T>
bool same_bits(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::bit_cast<std::uint64_t>(static_cast<double>(a)) ==
           std::bit_cast<std::uint64_t>(static_cast<double>(b));
  } else {
    return a == b;
  }
}

// Writes NamedScalars in call order.
class ScalarWriter {
 public:
  explicit ScalarWriter(ScalarList::Builder list) : list_(list) {}
  template <class T>
  void operator()(const char* name, T value) {
    auto s = list_[index_++];
    s.setName(name);
    if constexpr (std::is_floating_point_v<T>) {
      s.setReal(value);
    } else {
      s.setInteger(static_cast<std::int64_t>(value));
    }
  }

 private:
  ScalarList::Builder list_;
  unsigned index_ = 0;
};

// Reads NamedScalars in the order they were written, checking name, kind and range.
class ScalarReader {
 public:
  ScalarReader(ScalarList::Reader list, const char* group, unsigned expected)
      : list_(list), group_(group) {
    if (list.size() != expected) {
      malformed(fmt::format("{} has {} fields, this build has {}", group, list.size(), expected));
    }
  }
  template <class T>
  void operator()(const char* name, T& out) {
    const auto s = list_[index_++];
    if (s.getName() != name) {
      malformed(fmt::format("{} field {} is '{}', expected '{}'", group_, index_ - 1,
                            s.getName().cStr(), name));
    }
    if constexpr (std::is_floating_point_v<T>) {
      if (!s.isReal()) malformed(fmt::format("{}.{} is not a real", group_, name));
      out = s.getReal();
    } else {
      if (!s.isInteger()) malformed(fmt::format("{}.{} is not an integer", group_, name));
      const std::int64_t v = s.getInteger();
      if (v < std::numeric_limits<T>::min() || v > std::numeric_limits<T>::max()) {
        malformed(fmt::format("{}.{} = {} is out of range", group_, name, v));
      }
      out = static_cast<T>(v);
    }
  }

 private:
  ScalarList::Reader list_;
  const char* group_;
  unsigned index_ = 0;
};

template <class List, class T>
void put_list(List list, const std::vector<T>& v, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) list.set(static_cast<unsigned>(i), v[i]);
}

// Reads a list of exactly `count` entries into v (resized to count + pad, the pad zeroed).
template <class Reader, class T>
void get_list(Reader list, std::vector<T>& v, std::size_t count, const char* what,
              std::size_t pad = 0) {
  if (list.size() != count) {
    malformed(fmt::format("{} has {} entries, expected {}", what, list.size(), count));
  }
  v.assign(count + pad, T{});
  for (std::size_t i = 0; i < count; ++i) v[i] = static_cast<T>(list[static_cast<unsigned>(i)]);
}

// ---- header and options ------------------------------------------------------------------

void write_options(schema::IntegratorOptions::Builder b, const IntegratorOptions& o) {
  b.setRtol(o.rtol);
  b.setAtolPos(o.atol_pos);
  b.setAtolVel(o.atol_vel);
  b.setDenseLinearSolver(o.linear_solver == LinearSolver::kDense);
  b.setMaxOrder(o.max_order);
  b.setMaxSteps(o.max_steps);
  b.setInitialStep(o.initial_step);
  b.setStopAdjustment(o.stop_adjustment);
  b.setOvershoot(o.overshoot);
}

// Every option steers the continuation (tolerances, order and step limits, Listing 4.1).
void check_options(schema::IntegratorOptions::Reader r, const IntegratorOptions& o) {
  auto field = [](const char* name, auto snapshot, auto own) {
    if (!same_bits(snapshot, own)) {
      mismatch(fmt::format("snapshot taken with IntegratorOptions::{} = {}, this integrator has {}",
                           name, snapshot, own));
    }
  };
  field("rtol", r.getRtol(), o.rtol);
  field("atol_pos", r.getAtolPos(), o.atol_pos);
  field("atol_vel", r.getAtolVel(), o.atol_vel);
  field("max_order", r.getMaxOrder(), o.max_order);
  field("max_steps", static_cast<long>(r.getMaxSteps()), o.max_steps);
  field("initial_step", r.getInitialStep(), o.initial_step);
  field("stop_adjustment", r.getStopAdjustment(), o.stop_adjustment);
  field("overshoot", r.getOvershoot(), o.overshoot);
}

void write_header(schema::IdaSnapshot::Builder root, const SnapshotTarget& t) {
  root.setFormatVersion(kSnapshotFormatVersion);
  root.setSundialsVersion(SUNDIALS_VERSION);
  root.setKluVersion(klu_version());
  root.setStateSize(t.subsystem.state_size());
  root.setNonzeros(t.subsystem.jacobian_pattern().nonzeros());
  root.setStructureHash(structure_hash(t.subsystem));
  write_options(root.initOptions(), t.options);
}

void check_header(schema::IdaSnapshot::Reader root, const SnapshotTarget& t) {
  if (root.getFormatVersion() != kSnapshotFormatVersion) {
    mismatch(fmt::format("snapshot format version {}, this build reads version {}",
                         root.getFormatVersion(), kSnapshotFormatVersion));
  }
  if (root.getSundialsVersion() != SUNDIALS_VERSION || root.getKluVersion() != klu_version()) {
    mismatch(fmt::format("snapshot of SUNDIALS {} / KLU {}, this build has SUNDIALS {} / KLU {}",
                         root.getSundialsVersion().cStr(), root.getKluVersion().cStr(),
                         SUNDIALS_VERSION, klu_version()));
  }
  const std::size_t n = t.subsystem.state_size();
  const std::size_t nnz = t.subsystem.jacobian_pattern().nonzeros();
  if (root.getStateSize() != n || root.getNonzeros() != nnz) {
    mismatch(
        fmt::format("snapshot of a subsystem with {} states and {} Jacobian nonzeros, this "
                    "integrator's has {} and {}",
                    root.getStateSize(), root.getNonzeros(), n, nnz));
  }
  if (root.getStructureHash() != structure_hash(t.subsystem)) {
    mismatch("snapshot of a subsystem with other state roles or another Jacobian pattern");
  }
  const bool dense = t.options.linear_solver == LinearSolver::kDense;
  if (root.isDense() != dense || (!dense && !root.isKlu())) {
    mismatch(fmt::format("snapshot of an integrator with {}, this one uses {}",
                         root.isDense() ? "dense LU" : (root.isKlu() ? "KLU" : "an unknown solver"),
                         dense ? "dense LU" : "KLU"));
  }
  check_options(root.getOptions(), t.options);
}

// ---- IDA, IDALs and Newton state -----------------------------------------------------------

void write_ida(schema::IdaSnapshot::Builder root, const WorkspaceSnapshot::Data& d) {
  const auto count = static_cast<unsigned>(d.vectors);
  auto vectors = root.initVectors(count);
  for (unsigned j = 0; j < count; ++j) {
    auto v = vectors.init(j, static_cast<unsigned>(d.n));
    for (std::size_t i = 0; i < d.n; ++i)
      v.set(static_cast<unsigned>(i), d.vectors_buffer[j * d.n + i]);
  }
  ScalarWriter ida(root.initIda(kIdaScalarCount));
#define WRITE_FIELD(f) ida(#f, d.ida.f);
  MACROSTEP_IDA_SCALARS(WRITE_FIELD)
#undef WRITE_FIELD
  auto arrays = root.initIdaArrays(kIdaArrayCount);
  unsigned a = 0;
#define WRITE_ARRAY(f)                                                           \
  {                                                                              \
    auto array = arrays[a++];                                                    \
    array.setName(#f);                                                           \
    auto values = array.initValues(std::size(d.ida.f));                          \
    for (unsigned i = 0; i < std::size(d.ida.f); ++i) values.set(i, d.ida.f[i]); \
  }
  MACROSTEP_IDA_ARRAYS(WRITE_ARRAY)
#undef WRITE_ARRAY
  ScalarWriter ls(root.initLinearSolverInterface(kLsScalarCount));
#define WRITE_LS(f) ls(#f, d.ls.f);
  MACROSTEP_IDALS_SCALARS(WRITE_LS)
#undef WRITE_LS
  ScalarWriter newton(root.initNewton(kNewtonCount));
#define WRITE_NEWTON(f) newton(#f, d.newton.f);
  MACROSTEP_NEWTON_FIELDS(WRITE_NEWTON)
#undef WRITE_NEWTON
  put_list(root.initMatrix(static_cast<unsigned>(d.matrix_values.size())), d.matrix_values,
           d.matrix_values.size());
}

// IDA indexes phi, psi, sigma, ... with these; anything else is a corrupt snapshot.
void check_ida_ranges(const IdaScalars& s, int maxord) {
  auto in = [](const char* name, long v, long lo, long hi) {
    if (v < lo || v > hi) malformed(fmt::format("{} = {} outside {}..{}", name, v, lo, hi));
  };
  in("ida_kk", s.ida_kk, s.ida_nst > 0 ? 1 : 0, maxord);
  in("ida_kused", s.ida_kused, 0, maxord);
  in("ida_knew", s.ida_knew, 0, maxord);
  in("ida_ns", s.ida_ns, 0, maxord + 2);
  in("ida_phase", s.ida_phase, 0, 1);
  in("ida_nst", s.ida_nst, 0, std::numeric_limits<long>::max());
  in("ida_tstopset", s.ida_tstopset, 0, 1);
  in("ida_SetupDone", s.ida_SetupDone, 0, 1);
  in("ida_irfnd", s.ida_irfnd, 0, 1);
  in("ida_taskc", s.ida_taskc, 0, IDA_ONE_STEP);
}

void read_vectors(schema::IdaSnapshot::Reader root, const SnapshotTarget& t,
                  WorkspaceSnapshot::Data& d) {
  const auto vectors = root.getVectors();
  if (vectors.size() != t.vectors) {
    malformed(fmt::format("{} state vectors, expected {}", vectors.size(), t.vectors));
  }
  d.n = t.subsystem.state_size();
  d.vectors = static_cast<int>(t.vectors);
  d.vectors_buffer.resize(t.vectors * d.n);
  for (unsigned j = 0; j < vectors.size(); ++j) {
    const auto v = vectors[j];
    if (v.size() != d.n) malformed(fmt::format("state vector {} has {} values", j, v.size()));
    for (std::size_t i = 0; i < d.n; ++i)
      d.vectors_buffer[j * d.n + i] = v[static_cast<unsigned>(i)];
  }
}

void read_ida(schema::IdaSnapshot::Reader root, const SnapshotTarget& t,
              WorkspaceSnapshot::Data& d) {
  read_vectors(root, t, d);
  ScalarReader ida(root.getIda(), "ida", kIdaScalarCount);
#define READ_FIELD(f) ida(#f, d.ida.f);
  MACROSTEP_IDA_SCALARS(READ_FIELD)
#undef READ_FIELD
  const auto arrays = root.getIdaArrays();
  if (arrays.size() != kIdaArrayCount) malformed(fmt::format("{} IDA arrays", arrays.size()));
  unsigned a = 0;
#define READ_ARRAY(f)                                                                      \
  {                                                                                        \
    const auto array = arrays[a++];                                                        \
    if (array.getName() != #f)                                                             \
      malformed(fmt::format("IDA array '{}', expected '" #f "'", array.getName().cStr())); \
    std::vector<double> v;                                                                 \
    get_list(array.getValues(), v, std::size(d.ida.f), #f);                                \
    std::copy(v.begin(), v.end(), d.ida.f);                                                \
  }
  MACROSTEP_IDA_ARRAYS(READ_ARRAY)
#undef READ_ARRAY
  ScalarReader ls(root.getLinearSolverInterface(), "IDALs", kLsScalarCount);
#define READ_LS(f) ls(#f, d.ls.f);
  MACROSTEP_IDALS_SCALARS(READ_LS)
#undef READ_LS
  ScalarReader newton(root.getNewton(), "Newton", kNewtonCount);
#define READ_NEWTON(f) newton(#f, d.newton.f);
  MACROSTEP_NEWTON_FIELDS(READ_NEWTON)
#undef READ_NEWTON
  check_ida_ranges(d.ida, t.options.max_order);
  const std::size_t n = d.n;
  const bool dense = t.options.linear_solver == LinearSolver::kDense;
  get_list(root.getMatrix(), d.matrix_values,
           dense ? n * n : t.subsystem.jacobian_pattern().nonzeros(), "Jacobian matrix");
  d.solver = t.options.linear_solver;
}

// ---- dense LU ------------------------------------------------------------------------------

void read_dense(schema::DenseState::Reader r, WorkspaceSnapshot::Data& d) {
  get_list(r.getPivots(), d.pivots, d.n, "dense pivots");
  for (const auto p : d.pivots) {
    if (p < 0 || static_cast<std::size_t>(p) >= d.n) malformed(fmt::format("dense pivot {}", p));
  }
  d.dense_last_flag = r.getLastFlag();
}

// ---- KLU -----------------------------------------------------------------------------------

void write_klu_numeric(schema::KluNumeric::Builder b, const KluNumericCopy& c) {
  const auto n = static_cast<std::size_t>(c.n);
  const auto nzoff = static_cast<std::size_t>(c.nzoff);
  const auto nb = static_cast<std::size_t>(c.nblocks);
  b.setN(c.n);
  b.setNblocks(c.nblocks);
  b.setLnz(c.lnz);
  b.setUnz(c.unz);
  b.setMaxLnzBlock(c.max_lnz_block);
  b.setMaxUnzBlock(c.max_unz_block);
  b.setNzoff(c.nzoff);
  put_list(b.initPnum(static_cast<unsigned>(n)), c.Pnum, n);
  put_list(b.initPinv(static_cast<unsigned>(n)), c.Pinv, n);
  put_list(b.initLip(static_cast<unsigned>(n)), c.Lip, n);
  put_list(b.initUip(static_cast<unsigned>(n)), c.Uip, n);
  put_list(b.initLlen(static_cast<unsigned>(n)), c.Llen, n);
  put_list(b.initUlen(static_cast<unsigned>(n)), c.Ulen, n);
  put_list(b.initOffp(static_cast<unsigned>(n + 1)), c.Offp, n + 1);
  put_list(b.initOffi(static_cast<unsigned>(nzoff)), c.Offi, nzoff);
  put_list(b.initOffx(static_cast<unsigned>(nzoff)), c.Offx, nzoff);
  put_list(b.initUdiag(static_cast<unsigned>(n)), c.Udiag, n);
  const std::size_t rs = c.has_rs ? n : 0;
  put_list(b.initRs(static_cast<unsigned>(rs)), c.Rs, rs);
  put_list(b.initLuSize(static_cast<unsigned>(nb)), c.LUsize, nb);
  auto units = b.initLuUnits(static_cast<unsigned>(c.LUbx.size()));
  for (unsigned i = 0; i < units.size(); ++i) units.set(i, std::bit_cast<std::uint64_t>(c.LUbx[i]));
  b.setWorksize(c.worksize);
}

void write_klu(schema::KluState::Builder b, const WorkspaceSnapshot::Data& d) {
  b.setFirstFactorize(d.klu_first_factorize != 0);
  b.setLastFlag(d.klu_last_flag);
  ScalarWriter common(b.initCommon(kKluCommonCount));
#define WRITE_COMMON(f) common(#f, d.klu_common.f);
  MACROSTEP_KLU_PARAMETERS(WRITE_COMMON)
  MACROSTEP_KLU_STATISTICS(WRITE_COMMON)
#undef WRITE_COMMON
  if (d.klu_numeric.present && !d.klu_first_factorize) {
    write_klu_numeric(b.initNumeric(), d.klu_numeric);
  }
}

struct SymbolicDeleter {
  klu_l_common common;
  void operator()(klu_l_symbolic* s) { klu_l_free_symbolic(&s, &common); }
};
using Symbolic = std::unique_ptr<klu_l_symbolic, SymbolicDeleter>;

// The analysis SUNLinSol_KLU makes of the same pattern with the same parameters (deterministic):
// the block structure the imported factorization must fit.
Symbolic analyze(const model::SparsityPattern& p, const klu_l_common& params) {
  klu_l_common common = params;
  std::vector<SuiteSparse_long> ap(p.column_start.begin(), p.column_start.end());
  std::vector<SuiteSparse_long> ai(p.row_index.begin(), p.row_index.end());
  klu_l_symbolic* s =
      klu_l_analyze(static_cast<SuiteSparse_long>(p.n), ap.data(), ai.data(), &common);
  if (!s) throw std::runtime_error("WorkspaceSnapshot import: KLU analysis of the pattern failed");
  return Symbolic(s, SymbolicDeleter{common});
}

void read_klu_numeric(schema::KluNumeric::Reader r, const klu_l_symbolic& s, KluNumericCopy& c) {
  if (r.getN() != s.n || r.getNblocks() != s.nblocks || r.getNzoff() != s.nzoff) {
    malformed(
        fmt::format("KLU factorization with n {}, {} blocks, {} off-block entries; the "
                    "pattern's analysis has {}, {}, {}",
                    r.getN(), r.getNblocks(), r.getNzoff(), s.n, s.nblocks, s.nzoff));
  }
  const auto n = static_cast<std::size_t>(s.n);
  const auto nzoff = static_cast<std::size_t>(s.nzoff);
  c.present = true;
  c.n = s.n;
  c.nblocks = s.nblocks;
  c.nzoff = s.nzoff;
  c.lnz = r.getLnz();
  c.unz = r.getUnz();
  c.max_lnz_block = r.getMaxLnzBlock();
  c.max_unz_block = r.getMaxUnzBlock();
  get_list(r.getPnum(), c.Pnum, n, "KLU Pnum");
  get_list(r.getPinv(), c.Pinv, n, "KLU Pinv");
  get_list(r.getLip(), c.Lip, n, "KLU Lip");
  get_list(r.getUip(), c.Uip, n, "KLU Uip");
  get_list(r.getLlen(), c.Llen, n, "KLU Llen");
  get_list(r.getUlen(), c.Ulen, n, "KLU Ulen");
  get_list(r.getOffp(), c.Offp, n + 1, "KLU Offp");
  get_list(r.getOffi(), c.Offi, nzoff, "KLU Offi", 1);  // KLU allocates nzoff + 1
  get_list(r.getOffx(), c.Offx, nzoff, "KLU Offx", 1);
  get_list(r.getUdiag(), c.Udiag, n, "KLU Udiag");
  c.has_rs = r.getRs().size() > 0;
  get_list(r.getRs(), c.Rs, c.has_rs ? n : 0, "KLU Rs");
  get_list(r.getLuSize(), c.LUsize, static_cast<std::size_t>(s.nblocks), "KLU LUsize");
  const auto units = r.getLuUnits();
  std::size_t total = 0;
  for (const auto size : c.LUsize) {
    if (size > units.size() - total) malformed("KLU LUsize exceeds the LU units");
    total += size;
  }
  if (total != units.size()) malformed("KLU LU units do not add up to LUsize");
  c.LUbx.resize(total);
  for (unsigned i = 0; i < units.size(); ++i) c.LUbx[i] = std::bit_cast<double>(units[i]);
  c.worksize = r.getWorksize();
}

// Pnum and Pinv are inverse permutations, and every pivot row stays in its diagonal block.
void check_klu_permutation(const KluNumericCopy& c, const klu_l_symbolic& s) {
  const SuiteSparse_long n = c.n;
  std::vector<SuiteSparse_long> block_of_row(static_cast<std::size_t>(n));
  for (SuiteSparse_long b = 0; b < s.nblocks; ++b) {
    for (SuiteSparse_long k = s.R[b]; k < s.R[b + 1]; ++k) block_of_row[s.P[k]] = b;
  }
  for (SuiteSparse_long b = 0; b < s.nblocks; ++b) {
    for (SuiteSparse_long k = s.R[b]; k < s.R[b + 1]; ++k) {
      const SuiteSparse_long row = c.Pnum[static_cast<std::size_t>(k)];
      if (row < 0 || row >= n || c.Pinv[static_cast<std::size_t>(row)] != k) {
        malformed("KLU Pnum and Pinv are not inverse permutations");
      }
      if (block_of_row[static_cast<std::size_t>(row)] != b)
        malformed("KLU pivot outside its block");
    }
  }
}

// Entries off the diagonal blocks: column pointers, and rows in the blocks above the column's.
void check_klu_offdiagonal(const KluNumericCopy& c, const klu_l_symbolic& s) {
  const auto n = static_cast<std::size_t>(c.n);
  if (c.Offp[0] != 0 || c.Offp[n] != c.nzoff) malformed("KLU Offp does not span the entries");
  for (std::size_t k = 0; k < n; ++k) {
    if (c.Offp[k + 1] < c.Offp[k]) malformed("KLU Offp decreases");
  }
  for (SuiteSparse_long b = 0; b < s.nblocks; ++b) {
    for (SuiteSparse_long k = s.R[b]; k < s.R[b + 1]; ++k) {
      for (auto p = c.Offp[static_cast<std::size_t>(k)];
           p < c.Offp[static_cast<std::size_t>(k) + 1]; ++p) {
        const auto row = c.Offi[static_cast<std::size_t>(p)];
        if (row < 0 || row >= s.R[b]) malformed("KLU off-block row index out of range");
      }
    }
  }
}

// One column of L or U in a block's buffer: len row indices, then len values, from ip on.
void check_lu_column(const double* lu, std::size_t units, SuiteSparse_long ip, SuiteSparse_long len,
                     SuiteSparse_long nk) {
  const auto uip = static_cast<std::size_t>(ip), ulen = static_cast<std::size_t>(len);
  if (ip < 0 || len < 0 || ulen > units / 2 || uip > units - 2 * ulen) {
    malformed("KLU L/U column outside its block's buffer");
  }
  for (std::size_t j = 0; j < ulen; ++j) {
    const auto row = std::bit_cast<SuiteSparse_long>(lu[uip + j]);
    if (row < 0 || row >= nk) malformed("KLU L/U row index outside its block");
  }
}

// Refactorization writes values into every column, so the columns must not overlap either
// (a value written over another column's row index would send KLU anywhere).
void check_lu_blocks(const KluNumericCopy& c, const klu_l_symbolic& s) {
  std::size_t offset = 0;
  std::vector<std::pair<SuiteSparse_long, SuiteSparse_long>> spans;
  for (SuiteSparse_long b = 0; b < s.nblocks; ++b) {
    const SuiteSparse_long k1 = s.R[b], nk = s.R[b + 1] - k1;
    const std::size_t units = c.LUsize[static_cast<std::size_t>(b)];
    if (nk == 1 && units != 0) malformed("KLU singleton block with an LU buffer");
    spans.clear();
    for (SuiteSparse_long k = k1; nk > 1 && k < k1 + nk; ++k) {
      const auto i = static_cast<std::size_t>(k);
      check_lu_column(c.LUbx.data() + offset, units, c.Lip[i], c.Llen[i], nk);
      check_lu_column(c.LUbx.data() + offset, units, c.Uip[i], c.Ulen[i], nk);
      if (c.Llen[i] > 0) spans.emplace_back(c.Lip[i], c.Lip[i] + 2 * c.Llen[i]);
      if (c.Ulen[i] > 0) spans.emplace_back(c.Uip[i], c.Uip[i] + 2 * c.Ulen[i]);
    }
    std::sort(spans.begin(), spans.end());
    for (std::size_t j = 1; j < spans.size(); ++j) {
      if (spans[j].first < spans[j - 1].second) malformed("KLU L/U columns overlap");
    }
    offset += units;
  }
}

// klu_factor.c: n Entries + max(3n Entries, 6 maxblock Ints).
std::size_t klu_worksize(const klu_l_symbolic& s) {
  const auto n = static_cast<std::size_t>(s.n), maxblock = static_cast<std::size_t>(s.maxblock);
  return n * sizeof(double) +
         std::max(3 * n * sizeof(double), 6 * maxblock * sizeof(SuiteSparse_long));
}

void read_klu(schema::KluState::Reader r, const SnapshotTarget& t, WorkspaceSnapshot::Data& d) {
  d.klu_first_factorize = r.getFirstFactorize() ? 1 : 0;
  d.klu_last_flag = r.getLastFlag();
  // Parameters are configuration and must agree; statistics are state (and this process's
  // memusage/mempeak stay its own).
  klu_l_common common = *t.klu_common, params = common;
  ScalarReader reader(r.getCommon(), "KLU common", kKluCommonCount);
#define READ_PARAMETER(f) reader(#f, params.f);
#define READ_STATISTIC(f) reader(#f, common.f);
#define CHECK_PARAMETER(f)                                                                        \
  if (!same_bits(params.f, common.f)) {                                                           \
    mismatch(fmt::format("snapshot taken with KLU parameter " #f " = {}, this integrator has {}", \
                         params.f, common.f));                                                    \
  }
  MACROSTEP_KLU_PARAMETERS(READ_PARAMETER)
  MACROSTEP_KLU_STATISTICS(READ_STATISTIC)
  MACROSTEP_KLU_PARAMETERS(CHECK_PARAMETER)
#undef READ_PARAMETER
#undef READ_STATISTIC
#undef CHECK_PARAMETER
  d.klu_common = common;
  d.klu_numeric = KluNumericCopy{};
  if (!r.hasNumeric()) return;
  if (d.klu_first_factorize) malformed("a KLU factorization before the first factorization");
  const Symbolic s = analyze(t.subsystem.jacobian_pattern(), common);
  KluNumericCopy& c = d.klu_numeric;
  read_klu_numeric(r.getNumeric(), *s, c);
  if (c.worksize != klu_worksize(*s)) malformed("KLU worksize does not fit the analysis");
  if (c.has_rs != (common.scale > 0)) malformed("KLU row scaling does not fit the parameters");
  check_klu_permutation(c, *s);
  check_klu_offdiagonal(c, *s);
  check_lu_blocks(c, *s);
}

// The mode of a subsystem with events (model::Events::mode_from_bytes), none for another.
void read_mode(schema::IdaSnapshot::Reader root, const SnapshotTarget& t,
               WorkspaceSnapshot::Data& d) {
  const auto bytes = root.getMode();
  const model::Events* events = t.subsystem.events();
  if (!events) {
    if (bytes.size() != 0) mismatch("snapshot of a subsystem with events, this one has none");
    return;
  }
  if (bytes.size() == 0) malformed("no mode for a subsystem with events");
  try {
    d.mode = events->mode_from_bytes(std::span<const std::byte>(
        reinterpret_cast<const std::byte*>(bytes.begin()), bytes.size()));
  } catch (const std::runtime_error& e) {
    malformed(fmt::format("the model refuses its mode: {}", e.what()));
  }
  if (!d.mode) malformed("the model gave no mode for its bytes");
}

}  // namespace

std::vector<std::byte> encode_snapshot(const WorkspaceSnapshot::Data& d, const SnapshotTarget& t) {
  capnp::MallocMessageBuilder message;
  auto root = message.initRoot<schema::IdaSnapshot>();
  write_header(root, t);
  write_ida(root, d);
  if (d.solver == LinearSolver::kKlu) {
    write_klu(root.initKlu(), d);
  } else {
    auto dense = root.initDense();
    put_list(dense.initPivots(static_cast<unsigned>(d.n)), d.pivots, d.n);
    dense.setLastFlag(d.dense_last_flag);
  }
  if (d.mode) {
    const std::vector<std::byte> mode = d.mode->serialize();
    root.setMode(capnp::Data::Reader(reinterpret_cast<const kj::byte*>(mode.data()), mode.size()));
  }
  return ipc::to_flat_bytes(message);
}

WorkspaceSnapshot::Data decode_snapshot(std::span<const std::byte> bytes, const SnapshotTarget& t) {
  if (bytes.empty() || bytes.size() % sizeof(capnp::word) != 0) {
    malformed(fmt::format("{} bytes is not a whole number of 8-byte words", bytes.size()));
  }
  // A copy: the caller's bytes need not be word-aligned.
  const std::vector<capnp::word> words = ipc::aligned_words(bytes);
  capnp::ReaderOptions options;
  options.traversalLimitInWords = std::max<std::uint64_t>(4 * words.size(), 8u << 20);
  try {
    capnp::FlatArrayMessageReader reader(kj::arrayPtr(words.data(), words.size()), options);
    const auto root = reader.getRoot<schema::IdaSnapshot>();
    check_header(root, t);
    WorkspaceSnapshot::Data d;
    read_ida(root, t, d);
    if (root.isKlu()) {
      read_klu(root.getKlu(), t, d);
    } else {
      read_dense(root.getDense(), d);
    }
    read_mode(root, t, d);
    return d;
  } catch (const kj::Exception& e) {
    malformed(e.getDescription().cStr());
  }
}

}  // namespace macrostep::ida::detail

// IDA + KLU/dense integrator with exact workspace snapshots.
// METHODS.md §4.7 (rollback), §6.6 (micro steps at macro boundaries, Listing 4.1 / D-35);
// DESIGN.md contract 2.
//
// The snapshot reads and writes IDA's private memory (ida/ida_impl.h, ida/ida_ls_impl.h), the
// Newton solver's content and the KLU numeric factorization. That layout belongs to exactly one
// SUNDIALS release, hence the version guard in workspace_data.hpp (CMake checks it as well).
#include "macrostep/ida/integrator.hpp"

#include <ida/ida.h>
#include <ida/ida_impl.h>
#include <ida/ida_ls.h>
#include <ida/ida_ls_impl.h>
#include <klu.h>
#include <nvector/nvector_serial.h>
#include <sundials/sundials_config.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunlinsol/sunlinsol_klu.h>
#include <sunmatrix/sunmatrix_dense.h>
#include <sunmatrix/sunmatrix_sparse.h>
#include <sunnonlinsol/sunnonlinsol_newton.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "macrostep/model/names.hpp"
#include "macrostep/model/support_points.hpp"
#include "workspace_data.hpp"

// Exported by libsundials_ida but declared in no public header. Running it on a fresh
// integrator makes it a valid restore/clone target (otherwise IDASolve would dereference the
// linear solver's unset pointers after a restore with nst > 0).
extern "C" int IDAInitialSetup(IDAMem IDA_mem);

namespace macrostep::ida {

AdvanceStats& AdvanceStats::operator+=(const AdvanceStats& o) {
  steps += o.steps;
  residual_evals += o.residual_evals;
  jacobian_evals += o.jacobian_evals;
  nonlinear_iterations += o.nonlinear_iterations;
  nonlinear_failures += o.nonlinear_failures;
  error_test_failures += o.error_test_failures;
  step_sum += o.step_sum;
  step_square_sum += o.step_square_sum;
  linear_setups += o.linear_setups;
  wall_ns += o.wall_ns;
  return *this;
}

AdvanceStats& AdvanceStats::operator-=(const AdvanceStats& o) {
  steps -= o.steps;
  residual_evals -= o.residual_evals;
  jacobian_evals -= o.jacobian_evals;
  nonlinear_iterations -= o.nonlinear_iterations;
  nonlinear_failures -= o.nonlinear_failures;
  error_test_failures -= o.error_test_failures;
  step_sum -= o.step_sum;
  step_square_sum -= o.step_square_sum;
  linear_setups -= o.linear_setups;
  wall_ns -= o.wall_ns;
  return *this;
}

namespace {

using detail::KluNumericCopy;

// Residual or Jacobian values that are not finite, met before IDA has passed the earliest time
// at which one was met: then the model fails from that time on, and IDA can only creep towards
// it (Impl::check_finite_residual). An overflow at too long a step costs one or a few before
// IDA passes that step's end with shorter steps.
constexpr long kMaxNonFiniteBeforePassing = 50;

template <class T>
void copy_into(std::vector<T>& dst, const T* src, std::size_t count) {
  dst.resize(count);
  if (count > 0) std::memcpy(dst.data(), src, count * sizeof(T));
}

// LU units of block k: KLU leaves LUbx[k] null and LUsize[k] unset (uninitialized memory) for
// a singleton block, whose only entry lives in Udiag.
std::size_t lu_block_units(const klu_l_numeric* num, std::size_t k) {
  return num->LUbx[k] != nullptr ? num->LUsize[k] : 0;
}

// Copies `num` (analyzed as `sym`). Entries KLU never writes (the singleton blocks' Lip, Uip,
// Llen, Ulen and the spare Offi/Offx slot at nzoff) are stored as 0, so that equal
// factorizations give equal copies.
void capture_klu_numeric(const klu_l_numeric* num, const klu_l_symbolic* sym, KluNumericCopy& out) {
  out.present = num != nullptr;
  if (!num) return;
  const auto n = static_cast<std::size_t>(num->n);
  out.n = num->n;
  out.nblocks = num->nblocks;
  out.lnz = num->lnz;
  out.unz = num->unz;
  out.max_lnz_block = num->max_lnz_block;
  out.max_unz_block = num->max_unz_block;
  out.nzoff = num->nzoff;
  out.worksize = num->worksize;
  const auto nzoff = static_cast<std::size_t>(num->nzoff);
  copy_into(out.Pnum, num->Pnum, n);
  copy_into(out.Pinv, num->Pinv, n);
  copy_into(out.Lip, num->Lip, n);
  copy_into(out.Uip, num->Uip, n);
  copy_into(out.Llen, num->Llen, n);
  copy_into(out.Ulen, num->Ulen, n);
  copy_into(out.Offp, num->Offp, n + 1);
  copy_into(out.Offi, num->Offi, nzoff + 1);
  copy_into(out.Offx, static_cast<const double*>(num->Offx), nzoff + 1);
  out.Offi[nzoff] = 0;
  out.Offx[nzoff] = 0.0;
  copy_into(out.Udiag, static_cast<const double*>(num->Udiag), n);
  out.has_rs = num->Rs != nullptr;
  if (out.has_rs)
    copy_into(out.Rs, num->Rs, n);
  else
    out.Rs.clear();
  const auto nb = static_cast<std::size_t>(num->nblocks);
  out.LUsize.resize(nb);
  std::size_t total = 0;
  for (std::size_t k = 0; k < nb; ++k) {
    out.LUsize[k] = lu_block_units(num, k);
    total += out.LUsize[k];
  }
  out.LUbx.resize(total);
  std::size_t offset = 0;
  for (std::size_t k = 0; k < nb; ++k) {
    if (out.LUsize[k] > 0) {
      std::memcpy(out.LUbx.data() + offset, num->LUbx[k], out.LUsize[k] * sizeof(double));
    }
    offset += out.LUsize[k];
    const auto k1 = static_cast<std::size_t>(sym->R[k]);
    if (sym->R[k + 1] - sym->R[k] == 1) out.Lip[k1] = out.Uip[k1] = out.Llen[k1] = out.Ulen[k1] = 0;
  }
}

// True if `num` has exactly the allocation shape of `src`, so values can be copied in place.
bool klu_shape_matches(const klu_l_numeric* num, const KluNumericCopy& src) {
  if (!num || num->n != src.n || num->nblocks != src.nblocks || num->nzoff != src.nzoff ||
      (num->Rs != nullptr) != src.has_rs || num->worksize != src.worksize) {
    return false;
  }
  for (std::size_t k = 0; k < src.LUsize.size(); ++k) {
    if (lu_block_units(num, k) != src.LUsize[k]) return false;
  }
  return true;
}

// Allocates a numeric object of src's shape with KLU's own allocator, so that
// klu_l_free_numeric releases it with matching sizes.
klu_l_numeric* allocate_klu_numeric(const KluNumericCopy& src, klu_l_common* common) {
  const auto n = static_cast<std::size_t>(src.n);
  const auto nb = static_cast<std::size_t>(src.nblocks);
  const auto nzoff1 = static_cast<std::size_t>(src.nzoff) + 1;
  auto* num = static_cast<klu_l_numeric*>(klu_l_malloc(1, sizeof(klu_l_numeric), common));
  if (!num) throw std::bad_alloc();
  std::memset(num, 0, sizeof(klu_l_numeric));
  num->n = src.n;
  num->nblocks = src.nblocks;
  num->nzoff = src.nzoff;
  auto alloc = [&](std::size_t count, std::size_t size) {
    void* p = klu_l_malloc(count, size, common);
    if (!p && count > 0) throw std::bad_alloc();
    return p;
  };
  num->Pnum = static_cast<SuiteSparse_long*>(alloc(n, sizeof(SuiteSparse_long)));
  num->Offp = static_cast<SuiteSparse_long*>(alloc(n + 1, sizeof(SuiteSparse_long)));
  num->Offi = static_cast<SuiteSparse_long*>(alloc(nzoff1, sizeof(SuiteSparse_long)));
  num->Offx = alloc(nzoff1, sizeof(double));
  num->Lip = static_cast<SuiteSparse_long*>(alloc(n, sizeof(SuiteSparse_long)));
  num->Uip = static_cast<SuiteSparse_long*>(alloc(n, sizeof(SuiteSparse_long)));
  num->Llen = static_cast<SuiteSparse_long*>(alloc(n, sizeof(SuiteSparse_long)));
  num->Ulen = static_cast<SuiteSparse_long*>(alloc(n, sizeof(SuiteSparse_long)));
  num->LUsize = static_cast<std::size_t*>(alloc(nb, sizeof(std::size_t)));
  num->LUbx = static_cast<void**>(alloc(nb, sizeof(void*)));
  for (std::size_t k = 0; k < nb; ++k) num->LUbx[k] = nullptr;
  for (std::size_t k = 0; k < nb; ++k) {
    num->LUsize[k] = src.LUsize[k];
    if (src.LUsize[k] > 0) num->LUbx[k] = alloc(src.LUsize[k], sizeof(double));
  }
  num->Udiag = alloc(n, sizeof(double));
  num->Rs = src.has_rs ? static_cast<double*>(alloc(n, sizeof(double))) : nullptr;
  num->Pinv = static_cast<SuiteSparse_long*>(alloc(n, sizeof(SuiteSparse_long)));
  num->worksize = src.worksize;
  num->Work = alloc(src.worksize, 1);
  num->Xwork = num->Work;
  num->Iwork = reinterpret_cast<SuiteSparse_long*>(static_cast<double*>(num->Xwork) + n);
  return num;
}

// Writes src into *num_handle, reallocating only if the shape differs. Work/Xwork/Iwork are
// scratch that KLU overwrites before reading and are not copied.
void apply_klu_numeric(const KluNumericCopy& src, klu_l_numeric** num_handle,
                       klu_l_common* common) {
  if (!src.present) return;
  if (!klu_shape_matches(*num_handle, src)) {
    if (*num_handle) klu_l_free_numeric(num_handle, common);
    *num_handle = allocate_klu_numeric(src, common);
  }
  klu_l_numeric* num = *num_handle;
  const auto n = static_cast<std::size_t>(src.n);
  num->lnz = src.lnz;
  num->unz = src.unz;
  num->max_lnz_block = src.max_lnz_block;
  num->max_unz_block = src.max_unz_block;
  auto put = [](auto* dst, const auto& v) {
    if (!v.empty()) std::memcpy(dst, v.data(), v.size() * sizeof(v[0]));
  };
  put(num->Pnum, src.Pnum);
  put(num->Pinv, src.Pinv);
  put(num->Lip, src.Lip);
  put(num->Uip, src.Uip);
  put(num->Llen, src.Llen);
  put(num->Ulen, src.Ulen);
  put(num->Offp, src.Offp);
  put(num->Offi, src.Offi);
  put(static_cast<double*>(num->Offx), src.Offx);
  put(static_cast<double*>(num->Udiag), src.Udiag);
  if (src.has_rs) put(num->Rs, src.Rs);
  std::size_t offset = 0;
  for (SuiteSparse_long k = 0; k < src.nblocks; ++k) {
    const std::size_t size = src.LUsize[static_cast<std::size_t>(k)];
    if (size > 0) std::memcpy(num->LUbx[k], src.LUbx.data() + offset, size * sizeof(double));
    offset += size;
  }
  (void)n;
}

// Solves the dense system A·X = B in place (A: size×size row-major, B: size×cols row-major) by
// Gaussian elimination with partial pivoting; for the few small systems of shift_history.
void solve_small(std::vector<double>& a, std::vector<double>& b, std::size_t size,
                 std::size_t cols) {
  for (std::size_t k = 0; k < size; ++k) {
    std::size_t piv = k;
    for (std::size_t i = k + 1; i < size; ++i) {
      if (std::abs(a[i * size + k]) > std::abs(a[piv * size + k])) piv = i;
    }
    if (piv != k) {
      for (std::size_t j = 0; j < size; ++j) std::swap(a[k * size + j], a[piv * size + j]);
      for (std::size_t j = 0; j < cols; ++j) std::swap(b[k * cols + j], b[piv * cols + j]);
    }
    for (std::size_t i = k + 1; i < size; ++i) {
      const double f = a[i * size + k] / a[k * size + k];
      for (std::size_t j = k; j < size; ++j) a[i * size + j] -= f * a[k * size + j];
      for (std::size_t j = 0; j < cols; ++j) b[i * cols + j] -= f * b[k * cols + j];
    }
  }
  for (std::size_t k = size; k-- > 0;) {
    for (std::size_t j = 0; j < cols; ++j) {
      double v = b[k * cols + j];
      for (std::size_t i = k + 1; i < size; ++i) v -= a[k * size + i] * b[i * cols + j];
      b[k * cols + j] = v / a[k * size + k];
    }
  }
}

}  // namespace

WorkspaceSnapshot::WorkspaceSnapshot() : data_(std::make_unique<Data>()) {}
WorkspaceSnapshot::~WorkspaceSnapshot() = default;
std::size_t WorkspaceSnapshot::bytes() const {
  return data_->bytes();
}
double WorkspaceSnapshot::time() const {
  return data_->ida.ida_tn;
}

struct Integrator::Impl {
  const model::Subsystem& subsystem;
  IntegratorOptions options;
  const model::InputFunction* input = nullptr;
  std::atomic<std::uint64_t>* progress = nullptr;  // set_progress_counter()

  // One tick per model evaluation; this integrator is the counter's only writer.
  void tick() const noexcept {
    if (progress != nullptr) {
      progress->store(progress->load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    }
  }

  SUNContext ctx = nullptr;
  void* mem = nullptr;
  N_Vector yy = nullptr, yp = nullptr, atol = nullptr;
  SUNMatrix matrix = nullptr;
  SUNLinearSolver ls = nullptr;
  std::size_t n = 0;
  std::size_t nu = 0;

  // Residual/Jacobian scratch (inputs at t, pattern values).
  std::vector<double> u;
  std::vector<double> jac_values;
  std::vector<double> z_scratch, zp_scratch;  // outputs()
  const model::SparsityPattern* pattern = nullptr;

  std::string last_error;
  // Why the model failed in a residual / Jacobian call: what it threw, or the last value it
  // returned that is not finite (until IDA has passed first_non_finite).
  std::string model_error;
  // Residual / Jacobian calls with a value that is not finite since IDA last passed the
  // earliest time of one (first_non_finite; infinity: none pending).
  long non_finite_pending = 0;
  double first_non_finite = std::numeric_limits<double>::infinity();
  AdvanceStats totals;
  std::unique_ptr<WorkspaceSnapshot> scratch;  // for copy_state_from

  // consistent_derivative(): dF/dz' on the Jacobian pattern, its KLU analysis (made once) and
  // scratch. Not part of the workspace.
  mutable klu_l_common zp_common{};
  mutable klu_l_symbolic* zp_symbolic = nullptr;
  mutable std::vector<double> zp_matrix, zp_j0, zp_rhs, zp_z;
  std::unique_ptr<model::EntryPattern> ju_pattern;  // dF/du, read once (shift_history)

  Impl(const model::Subsystem& s, const IntegratorOptions& o) : subsystem(s), options(o) {}
  ~Impl() {
    if (zp_symbolic) klu_l_free_symbolic(&zp_symbolic, &zp_common);
    if (mem) IDAFree(&mem);
    if (ls) SUNLinSolFree(ls);
    if (matrix) SUNMatDestroy(matrix);
    if (atol) N_VDestroy(atol);
    if (yp) N_VDestroy(yp);
    if (yy) N_VDestroy(yy);
    if (ctx) SUNContext_Free(&ctx);
  }

  IDAMem ida() const { return static_cast<IDAMem>(mem); }
  IDALsMem lsmem() const { return static_cast<IDALsMem>(ida()->ida_lmem); }
  SUNNonlinearSolverContent_Newton newton() const {
    return static_cast<SUNNonlinearSolverContent_Newton>(ida()->NLS->content);
  }
  SUNLinearSolverContent_KLU klu() const {
    return static_cast<SUNLinearSolverContent_KLU>(ls->content);
  }
  SUNLinearSolverContent_Dense dense() const {
    return static_cast<SUNLinearSolverContent_Dense>(ls->content);
  }

  void evaluate_input(double t) {
    if (nu == 0) return;
    if (!input) {
      throw std::logic_error("Integrator: subsystem has inputs but no InputFunction was set");
    }
    input->evaluate(t, u);
  }

  void check(int flag, const char* what) const {
    if (flag < 0) {
      throw IntegrationError(fmt::format("{} failed (flag {}): {}", what, flag, last_error),
                             mem ? ida()->ida_tn : 0.0, flag);
    }
  }

  // Overshoot mode (IntegratorOptions::overshoot): the macro time the last advance_to reached,
  // which IDA's own time has passed; NaN otherwise (then time() is IDA's tn).
  double interpolate_at = std::numeric_limits<double>::quiet_NaN();
  double now() const { return std::isnan(interpolate_at) ? ida()->ida_tn : interpolate_at; }
  void no_interpolated_state(const char* what) const {
    if (!std::isnan(interpolate_at)) {
      throw std::logic_error(fmt::format(
          "Integrator::{}: the state at t = {:.9g} is interpolated (overshoot mode) and has no "
          "workspace of its own",
          what, interpolate_at));
    }
  }

  // The state at time() (phi[0], or IDAGetDky after the first step) and the history's z'.
  void current_state(std::span<double> z, std::span<double> zp) const;
  // dF/dz (zp_j0) and dF/dz' (zp_matrix) at (t, z, z', u(t)); returns the factored dF/dz'
  // (the caller frees it). Throws IntegrationError if dF/dz' is singular.
  klu_l_numeric* linearize(double t, std::span<const double> z, std::span<const double> zp) const;
  void solve_dfdzp(klu_l_numeric* num, double* rhs) const;
  void consistent_derivative(std::span<const double> z, std::span<double> zp) const;
  void shift_history(const model::InputFunction& previous);
  void restart();

  AdvanceStats counters() const {
    AdvanceStats s;
    // Counters are restored with the snapshot; deltas are taken within one call only.
    s.steps = ida()->ida_nst;
    s.residual_evals = ida()->ida_nre;
    s.jacobian_evals = lsmem()->nje;
    s.nonlinear_iterations = ida()->ida_nni;
    s.nonlinear_failures = ida()->ida_ncfn;
    s.error_test_failures = ida()->ida_netf;
    s.linear_setups = ida()->ida_nsetups;
    return s;
  }

  // A model that throws (an FMU whose function returned an error) stops IDA with an
  // unrecoverable residual / Jacobian failure; the exception's message becomes the failure's
  // cause (error_fn). No exception crosses IDA's C frames.
  static int residual_fn(realtype t, N_Vector y, N_Vector ydot, N_Vector r, void* user) {
    try {
      return residual_unguarded(t, y, ydot, r, user);
    } catch (const std::exception& e) {
      static_cast<Impl*>(user)->model_error = e.what();
      return -1;
    }
  }

  static int jacobian_fn(realtype t, realtype cj, N_Vector y, N_Vector ydot, N_Vector r,
                         SUNMatrix J, void* user, N_Vector t1, N_Vector t2, N_Vector t3) {
    try {
      return jacobian_unguarded(t, cj, y, ydot, r, J, user, t1, t2, t3);
    } catch (const std::exception& e) {
      static_cast<Impl*>(user)->model_error = e.what();
      return -1;
    }
  }

  static int residual_unguarded(realtype t, N_Vector y, N_Vector ydot, N_Vector r, void* user) {
    auto* self = static_cast<Impl*>(user);
    const std::size_t n = self->n;
    std::span<const double> z(N_VGetArrayPointer(y), n);
    std::span<const double> zp(N_VGetArrayPointer(ydot), n);
    std::span<double> res(N_VGetArrayPointer(r), n);
    self->tick();
    self->evaluate_input(t);
    self->subsystem.residual(t, z, zp, self->u, res);
    return self->check_finite_residual(t, res);
  }

  // A residual or Jacobian value that is not finite is recoverable for IDA, which retries the
  // step with a smaller h (a stiff law can overflow at a Newton iterate of too long a step). The
  // value, its states and the time are kept as the cause of a failure that follows: IDA's own
  // (repeated recoverable errors in one step), or advance_to()'s when the model keeps failing
  // without IDA passing the earliest failing time (a barrier in time that IDA would creep
  // towards until max_steps).
  int check_finite_residual(double t, std::span<const double> res) {
    for (std::size_t i = 0; i < res.size(); ++i) {
      if (std::isfinite(res[i])) continue;
      model_error = fmt::format("the model's residual r[{}] (row of state {}) is {} at t = {:.9g}",
                                i, model::quoted(subsystem.state_name(i)), res[i], t);
      return non_finite_at(t);
    }
    return 0;
  }

  void clear_non_finite() {
    model_error.clear();
    non_finite_pending = 0;
    first_non_finite = std::numeric_limits<double>::infinity();
  }

  int non_finite_at(double t) {
    first_non_finite = std::min(first_non_finite, t);
    ++non_finite_pending;
    return 1;
  }

  int check_finite_jacobian(double t, double cj, std::span<const double> values) {
    const auto& p = *pattern;
    for (std::size_t col = 0; col < n; ++col) {
      for (auto k = p.column_start[col]; k < p.column_start[col + 1]; ++k) {
        const double v = values[static_cast<std::size_t>(k)];
        if (std::isfinite(v)) continue;
        const auto row = static_cast<std::size_t>(p.row_index[static_cast<std::size_t>(k)]);
        model_error = fmt::format(
            "the model's Jacobian entry values[{}] (row {} of state {}, column {} of state {}; "
            "cj = {:.9g}) is {} at t = {:.9g}",
            k, row, model::quoted(subsystem.state_name(row)), col,
            model::quoted(subsystem.state_name(col)), cj, v, t);
        return non_finite_at(t);
      }
    }
    return 0;
  }

  static int jacobian_unguarded(realtype t, realtype cj, N_Vector y, N_Vector ydot, N_Vector,
                                SUNMatrix J, void* user, N_Vector, N_Vector, N_Vector) {
    auto* self = static_cast<Impl*>(user);
    const std::size_t n = self->n;
    std::span<const double> z(N_VGetArrayPointer(y), n);
    std::span<const double> zp(N_VGetArrayPointer(ydot), n);
    self->tick();
    self->evaluate_input(t);
    const auto& p = *self->pattern;
    if (self->options.linear_solver == LinearSolver::kKlu) {
      // SUNMatZero_Sparse clears the index arrays too; write the fixed pattern every time.
      std::memcpy(SUNSparseMatrix_IndexPointers(J), p.column_start.data(),
                  p.column_start.size() * sizeof(sunindextype));
      std::memcpy(SUNSparseMatrix_IndexValues(J), p.row_index.data(),
                  p.row_index.size() * sizeof(sunindextype));
      const std::span<double> values(SUNSparseMatrix_Data(J), p.nonzeros());
      self->subsystem.jacobian(t, z, zp, self->u, cj, values);
      return self->check_finite_jacobian(t, cj, values);
    } else {
      self->subsystem.jacobian(t, z, zp, self->u, cj, self->jac_values);
      if (const int flag = self->check_finite_jacobian(t, cj, self->jac_values); flag != 0) {
        return flag;
      }
      for (std::size_t col = 0; col < n; ++col) {
        double* column = SUNDenseMatrix_Column(J, static_cast<sunindextype>(col));
        for (auto k = p.column_start[col]; k < p.column_start[col + 1]; ++k) {
          column[p.row_index[static_cast<std::size_t>(k)]] =
              self->jac_values[static_cast<std::size_t>(k)];
        }
      }
    }
    return 0;
  }

  static void error_fn(int code, const char* module, const char* function, char* msg, void* user) {
    auto* self = static_cast<Impl*>(user);
    self->last_error = fmt::format("{}:{}: {} (code {})", module, function, msg, code);
    // IDA may report one failure more than once (the linear solver, then IDASolve): each
    // report keeps the model's cause, which advance_to() clears once it has passed.
    if (!self->model_error.empty()) {
      self->last_error = self->model_error + " (" + self->last_error + ")";
    }
  }

  // ---- snapshot ----------------------------------------------------------------------------

  std::size_t vector_count() const { return static_cast<std::size_t>(ida()->ida_maxord) + 3; }
  detail::SnapshotTarget snapshot_target() const;

  std::vector<N_Vector> state_vectors() const {
    std::vector<N_Vector> v;
    for (int j = 0; j <= ida()->ida_maxord; ++j) v.push_back(ida()->ida_phi[j]);
    v.push_back(ida()->ida_ewt);
    v.push_back(ida()->ida_ee);
    return v;
  }

  void save(WorkspaceSnapshot::Data& d) const {
    IDAMem m = ida();
    d.n = n;
    d.solver = options.linear_solver;
    const auto vecs = state_vectors();
    d.vectors = static_cast<int>(vecs.size());
    d.vectors_buffer.resize(vecs.size() * n);
    for (std::size_t j = 0; j < vecs.size(); ++j) {
      std::memcpy(d.vectors_buffer.data() + j * n, N_VGetArrayPointer(vecs[j]), n * sizeof(double));
    }
#define SAVE_FIELD(f) d.ida.f = m->f;
    MACROSTEP_IDA_SCALARS(SAVE_FIELD)
#undef SAVE_FIELD
#define SAVE_ARRAY(f) std::memcpy(d.ida.f, m->f, sizeof(m->f));
    MACROSTEP_IDA_ARRAYS(SAVE_ARRAY)
#undef SAVE_ARRAY
    IDALsMem l = lsmem();
#define SAVE_LS(f) d.ls.f = l->f;
    MACROSTEP_IDALS_SCALARS(SAVE_LS)
#undef SAVE_LS
    auto nw = newton();
    d.newton = {nw->jcur, nw->curiter, nw->niters, nw->nconvfails};
    if (options.linear_solver == LinearSolver::kKlu) {
      copy_into(d.matrix_values, SUNSparseMatrix_Data(matrix),
                static_cast<std::size_t>(SUNSparseMatrix_NNZ(matrix)));
      auto k = klu();
      d.klu_first_factorize = k->first_factorize;
      d.klu_last_flag = k->last_flag;
      d.klu_common = k->common;
      if (k->first_factorize)
        d.klu_numeric.present = false;
      else
        capture_klu_numeric(k->numeric, k->symbolic, d.klu_numeric);
    } else {
      copy_into(d.matrix_values, SUNDenseMatrix_Data(matrix), n * n);
      auto dn = dense();
      copy_into(d.pivots, dn->pivots, n);
      // SUNLinSol_Dense leaves its pivots uninitialized until the first setup.
      if (m->ida_nsetups == 0) std::fill(d.pivots.begin(), d.pivots.end(), 0);
      d.dense_last_flag = dn->last_flag;
    }
  }

  void restore(const WorkspaceSnapshot::Data& d) {
    if (d.n != n || d.solver != options.linear_solver) {
      throw std::invalid_argument(
          "WorkspaceSnapshot::restore: snapshot of a different subsystem size or solver");
    }
    IDAMem m = ida();
    const auto vecs = state_vectors();
    if (static_cast<int>(vecs.size()) != d.vectors) {
      throw std::invalid_argument("WorkspaceSnapshot::restore: different maximum order");
    }
    for (std::size_t j = 0; j < vecs.size(); ++j) {
      std::memcpy(N_VGetArrayPointer(vecs[j]), d.vectors_buffer.data() + j * n, n * sizeof(double));
    }
#define RESTORE_FIELD(f) m->f = d.ida.f;
    MACROSTEP_IDA_SCALARS(RESTORE_FIELD)
#undef RESTORE_FIELD
#define RESTORE_ARRAY(f) std::memcpy(m->f, d.ida.f, sizeof(m->f));
    MACROSTEP_IDA_ARRAYS(RESTORE_ARRAY)
#undef RESTORE_ARRAY
    IDALsMem l = lsmem();
#define RESTORE_LS(f) l->f = d.ls.f;
    MACROSTEP_IDALS_SCALARS(RESTORE_LS)
#undef RESTORE_LS
    auto nw = newton();
    nw->jcur = d.newton.jcur;
    nw->curiter = d.newton.curiter;
    nw->niters = d.newton.niters;
    nw->nconvfails = d.newton.nconvfails;
    if (options.linear_solver == LinearSolver::kKlu) {
      std::memcpy(SUNSparseMatrix_Data(matrix), d.matrix_values.data(),
                  d.matrix_values.size() * sizeof(double));
      // The matrix may have been zeroed (index arrays included) by a setup in between.
      const auto& p = *pattern;
      std::memcpy(SUNSparseMatrix_IndexPointers(matrix), p.column_start.data(),
                  p.column_start.size() * sizeof(sunindextype));
      std::memcpy(SUNSparseMatrix_IndexValues(matrix), p.row_index.data(),
                  p.row_index.size() * sizeof(sunindextype));
      auto k = klu();
      k->last_flag = d.klu_last_flag;
      k->common = d.klu_common;
      if (!d.klu_first_factorize) {
        // Same pattern and KLU settings give the same symbolic analysis in every clone.
        if (!k->symbolic) {
          k->symbolic =
              klu_l_analyze(static_cast<SuiteSparse_long>(n), SUNSparseMatrix_IndexPointers(matrix),
                            SUNSparseMatrix_IndexValues(matrix), &k->common);
          if (!k->symbolic) throw std::runtime_error("KLU symbolic analysis failed on restore");
        }
        apply_klu_numeric(d.klu_numeric, &k->numeric, &k->common);
      }
      k->first_factorize = d.klu_first_factorize;
    } else {
      std::memcpy(SUNDenseMatrix_Data(matrix), d.matrix_values.data(),
                  d.matrix_values.size() * sizeof(double));
      auto dn = dense();
      std::memcpy(dn->pivots, d.pivots.data(), n * sizeof(sunindextype));
      dn->last_flag = d.dense_last_flag;
    }
  }
};

Integrator::Integrator(const model::Subsystem& subsystem, const IntegratorOptions& options,
                       const model::InputFunction* input)
    : impl_(std::make_unique<Impl>(subsystem, options)) {
  if (!(options.rtol > 0.0) || !(options.atol_pos > 0.0) || !(options.atol_vel > 0.0)) {
    throw std::invalid_argument(
        fmt::format("Integrator: tolerances must be > 0 (rtol {}, atol_pos {}, atol_vel {})",
                    options.rtol, options.atol_pos, options.atol_vel));
  }
  if (options.max_order < 1 || options.max_order > 5) {
    throw std::invalid_argument(
        fmt::format("Integrator: max_order must be in 1..5 (got {})", options.max_order));
  }
  if (options.max_steps < 1) throw std::invalid_argument("Integrator: max_steps must be >= 1");
  auto& I = *impl_;
  I.input = input;
  I.n = subsystem.state_size();
  I.nu = subsystem.input_size();
  I.u.assign(I.nu, 0.0);
  I.pattern = &subsystem.jacobian_pattern();
  if (I.n == 0) throw std::invalid_argument("Integrator: subsystem has no states");
  if (I.pattern->n != I.n || I.pattern->column_start.size() != I.n + 1) {
    throw std::invalid_argument("Integrator: Jacobian pattern does not match the state size");
  }
  I.jac_values.assign(I.pattern->nonzeros(), 0.0);

  const auto n = static_cast<sunindextype>(I.n);
  if (SUNContext_Create(nullptr, &I.ctx) != 0) throw std::runtime_error("SUNContext_Create");
  I.yy = N_VNew_Serial(n, I.ctx);
  I.yp = N_VNew_Serial(n, I.ctx);
  I.atol = N_VNew_Serial(n, I.ctx);
  if (!I.yy || !I.yp || !I.atol) throw std::bad_alloc();

  const double t0 = subsystem.initial_time();
  I.evaluate_input(t0);
  subsystem.initial_state(I.u, std::span<double>(N_VGetArrayPointer(I.yy), I.n),
                          std::span<double>(N_VGetArrayPointer(I.yp), I.n));
  const auto roles = subsystem.state_roles();
  double* atol = N_VGetArrayPointer(I.atol);
  for (std::size_t i = 0; i < I.n; ++i) {
    atol[i] = roles[i] == model::StateRole::kPosition ? options.atol_pos : options.atol_vel;
  }

  I.mem = IDACreate(I.ctx);
  if (!I.mem) throw std::runtime_error("IDACreate failed");
  IDASetErrHandlerFn(I.mem, &Impl::error_fn, &I);
  I.check(IDAInit(I.mem, &Impl::residual_fn, t0, I.yy, I.yp), "IDAInit");
  I.check(IDASetUserData(I.mem, &I), "IDASetUserData");
  I.check(IDASVtolerances(I.mem, options.rtol, I.atol), "IDASVtolerances");
  I.check(IDASetMaxOrd(I.mem, options.max_order), "IDASetMaxOrd");
  I.check(IDASetMaxNumSteps(I.mem, options.max_steps), "IDASetMaxNumSteps");
  if (options.initial_step > 0.0)
    I.check(IDASetInitStep(I.mem, options.initial_step), "IDASetInitStep");

  if (options.linear_solver == LinearSolver::kKlu) {
    I.matrix =
        SUNSparseMatrix(n, n, static_cast<sunindextype>(I.pattern->nonzeros()), CSC_MAT, I.ctx);
    if (!I.matrix) throw std::bad_alloc();
    std::memcpy(SUNSparseMatrix_IndexPointers(I.matrix), I.pattern->column_start.data(),
                (I.n + 1) * sizeof(sunindextype));
    std::memcpy(SUNSparseMatrix_IndexValues(I.matrix), I.pattern->row_index.data(),
                I.pattern->nonzeros() * sizeof(sunindextype));
    I.ls = SUNLinSol_KLU(I.yy, I.matrix, I.ctx);
  } else {
    I.matrix = SUNDenseMatrix(n, n, I.ctx);
    if (!I.matrix) throw std::bad_alloc();
    I.ls = SUNLinSol_Dense(I.yy, I.matrix, I.ctx);
  }
  if (!I.ls) throw std::runtime_error("creating the linear solver failed");
  I.check(IDASetLinearSolver(I.mem, I.ls, I.matrix), "IDASetLinearSolver");
  I.check(IDASetJacFn(I.mem, &Impl::jacobian_fn), "IDASetJacFn");

  // IDAInit sets phi[0], phi[1] only; the rest is written before it is read, but zeroing it
  // makes snapshots of equal states equal byte for byte (export_snapshot).
  for (int j = 2; j <= I.ida()->ida_maxord; ++j) N_VConst(0.0, I.ida()->ida_phi[j]);
  N_VConst(0.0, I.ida()->ida_ee);

  // Run IDA's one-time setup now so that every integrator, also a fresh clone target, is in the
  // state IDASolve expects after its first call.
  I.check(IDAInitialSetup(I.ida()), "IDAInitialSetup");
  I.ida()->ida_SetupDone = SUNTRUE;
}

Integrator::~Integrator() = default;

const model::Subsystem& Integrator::subsystem() const {
  return impl_->subsystem;
}
const IntegratorOptions& Integrator::options() const {
  return impl_->options;
}
void Integrator::set_input(const model::InputFunction* input) {
  impl_->input = input;
}
void Integrator::set_progress_counter(std::atomic<std::uint64_t>* counter) {
  impl_->progress = counter;
}
double Integrator::time() const {
  return impl_->now();
}
int Integrator::current_order() const {
  return impl_->ida()->ida_kused;
}
double Integrator::next_step_size() const {
  return impl_->ida()->ida_hh;
}
AdvanceStats Integrator::total_stats() const {
  return impl_->totals;
}

AdvanceStats Integrator::advance_to(double t_end, const AdvanceControl& control) {
  auto& I = *impl_;
  IDAMem m = I.ida();
  const double t_start = I.now();
  if (!(t_end > t_start)) {
    throw std::invalid_argument(fmt::format(
        "Integrator::advance_to: target {} is not after the current time {}", t_end, t_start));
  }
  const bool overshoot = I.options.overshoot;
  if (overshoot && (control.restart || control.previous_input != nullptr)) {
    throw std::logic_error(
        "Integrator::advance_to: overshoot mode neither restarts nor shifts the history (D-36)");
  }
  const auto clock_start = std::chrono::steady_clock::now();
  I.clear_non_finite();
  // A restart resets IDA's counters, so this call's counters are taken after it.
  if (control.previous_input != nullptr && !control.restart)
    I.shift_history(*control.previous_input);
  if (control.restart) I.restart();
  const AdvanceStats before = I.counters();
  // The longest micro step: this call's limit, and in overshoot mode the macro step (h <= H).
  double limit = control.max_step;
  if (overshoot) {
    limit = limit > 0.0 ? std::min(limit, t_end - t_start) : t_end - t_start;
    I.check(IDASetMaxStep(I.mem, limit), "IDASetMaxStep");
  } else {
    // IDA clears the stop time once reached, so it is set again for every macro step (D-35).
    I.check(IDASetStopTime(I.mem, t_end), "IDASetStopTime");
  }
  long steps = 0;
  double step_sum = 0.0, step_square_sum = 0.0;
  // In overshoot mode IDA may already be past t_end (the previous call's last step).
  while (!(overshoot && m->ida_tn >= t_end)) {
    if (m->ida_nst > 0) {
      // The step limit of this call (before Listing 4.1, which then fits it to T_{N+1}).
      if (limit > 0.0 && m->ida_hh > limit) m->ida_hh = limit;
    }
    if (!overshoot && I.options.stop_adjustment && m->ida_nst > 0) {
      // seed 000 Listing 4.1: stretch the last micro step by up to 10 %, or split the rest in
      // two equal steps instead of leaving a tiny final one. IDA's own tstop clipping does the
      // same kind of hh change, so the BDF coefficients follow from psi as usual.
      const double h = m->ida_hh;
      const double left = t_end - m->ida_tn;
      if (left < 1.1 * h) {
        m->ida_hh = left;
      } else if (left < 2.0 * h) {
        m->ida_hh = 0.5 * left;
      }
    }
    realtype tret = 0.0;
    const int flag = IDASolve(I.mem, t_end, &tret, I.yy, I.yp, IDA_ONE_STEP);
    if (flag < 0) {
      AdvanceStats partial = I.counters();
      I.totals.steps += partial.steps - before.steps;
      throw IntegrationError(
          fmt::format("IDA failed at t = {:.9g} (flag {}): {}", m->ida_tn, flag, I.last_error),
          m->ida_tn, flag);
    }
    if (m->ida_tn >= I.first_non_finite) {
      I.clear_non_finite();  // stepped over: the failure has passed
    } else if (I.non_finite_pending >= kMaxNonFiniteBeforePassing) {
      I.totals.steps += I.counters().steps - before.steps;
      throw IntegrationError(
          fmt::format("IDA failed at t = {:.9g}: {} (and {} times more before t = {:.9g}, which "
                      "IDA cannot pass: the model fails from that time on)",
                      m->ida_tn, I.model_error, I.non_finite_pending - 1, I.first_non_finite),
          m->ida_tn, IDA_RES_FAIL);
    }
    ++steps;
    step_sum += m->ida_hused;
    step_square_sum += m->ida_hused * m->ida_hused;
    if (!overshoot && flag == IDA_TSTOP_RETURN) break;
    if (steps >= I.options.max_steps) {
      throw IntegrationError(fmt::format("more than {} micro steps between t = {:.9g} and {:.9g}",
                                         I.options.max_steps, t_start, t_end),
                             m->ida_tn, IDA_TOO_MUCH_WORK);
    }
  }
  if (overshoot)
    I.interpolate_at = m->ida_tn > t_end ? t_end : std::numeric_limits<double>::quiet_NaN();
  const AdvanceStats after = I.counters();
  AdvanceStats s;
  s.steps = after.steps - before.steps;
  s.residual_evals = after.residual_evals - before.residual_evals;
  s.jacobian_evals = after.jacobian_evals - before.jacobian_evals;
  s.nonlinear_iterations = after.nonlinear_iterations - before.nonlinear_iterations;
  s.nonlinear_failures = after.nonlinear_failures - before.nonlinear_failures;
  s.error_test_failures = after.error_test_failures - before.error_test_failures;
  s.linear_setups = after.linear_setups - before.linear_setups;
  s.step_sum = step_sum;
  s.step_square_sum = step_square_sum;
  s.wall_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                  std::chrono::steady_clock::now() - clock_start)
                  .count();
  I.totals += s;
  return s;
}

void Integrator::state(std::span<double> z, std::span<double> zp) const {
  if (z.size() != impl_->n || zp.size() != impl_->n) {
    throw std::invalid_argument("Integrator::state: span sizes differ from the state size");
  }
  impl_->current_state(z, zp);
}

void Integrator::Impl::current_state(std::span<double> z, std::span<double> zp) const {
  IDAMem m = ida();
  if (m->ida_nst == 0) {
    // Before the first step phi[0] = y0 and phi[1] = y'0 (IDASolve scales it by h later).
    std::memcpy(z.data(), N_VGetArrayPointer(m->ida_phi[0]), n * sizeof(double));
    std::memcpy(zp.data(), N_VGetArrayPointer(m->ida_phi[1]), n * sizeof(double));
    return;
  }
  N_Vector vz = N_VMake_Serial(static_cast<sunindextype>(n), z.data(), ctx);
  N_Vector vzp = N_VMake_Serial(static_cast<sunindextype>(n), zp.data(), ctx);
  const int f1 = IDAGetDky(mem, now(), 0, vz);
  const int f2 = IDAGetDky(mem, now(), 1, vzp);
  N_VDestroy(vz);
  N_VDestroy(vzp);
  check(f1, "IDAGetDky(y)");
  check(f2, "IDAGetDky(y')");
}

klu_l_numeric* Integrator::Impl::linearize(double t, std::span<const double> z,
                                           std::span<const double> zp) const {
  const auto& p = *pattern;
  const std::size_t nnz = p.nonzeros();
  zp_matrix.resize(nnz);
  zp_j0.resize(nnz);
  auto& self = const_cast<Impl&>(*this);  // the input scratch u only
  self.evaluate_input(t);
  subsystem.jacobian(t, z, zp, u, 1.0, zp_matrix);
  subsystem.jacobian(t, z, zp, u, 0.0, zp_j0);
  tick();
  for (std::size_t k = 0; k < nnz; ++k) zp_matrix[k] -= zp_j0[k];
  auto* cp = const_cast<SuiteSparse_long*>(
      reinterpret_cast<const SuiteSparse_long*>(p.column_start.data()));
  auto* ri =
      const_cast<SuiteSparse_long*>(reinterpret_cast<const SuiteSparse_long*>(p.row_index.data()));
  if (!zp_symbolic) {
    klu_l_defaults(&zp_common);
    zp_symbolic = klu_l_analyze(static_cast<SuiteSparse_long>(n), cp, ri, &zp_common);
  }
  klu_l_numeric* num =
      zp_symbolic ? klu_l_factor(cp, ri, zp_matrix.data(), zp_symbolic, &zp_common) : nullptr;
  if (!num || zp_common.status != KLU_OK) {
    if (num) klu_l_free_numeric(&num, &zp_common);
    throw IntegrationError(fmt::format("dF/dz' is singular at t = {:.9g}", t), t, IDA_LSETUP_FAIL);
  }
  return num;
}

void Integrator::Impl::solve_dfdzp(klu_l_numeric* num, double* rhs) const {
  klu_l_solve(zp_symbolic, num, static_cast<SuiteSparse_long>(n), 1, rhs, &zp_common);
}

void Integrator::Impl::consistent_derivative(std::span<const double> z,
                                             std::span<double> zp) const {
  const double t = now();
  klu_l_numeric* num = linearize(t, z, zp);
  zp_rhs.resize(n);
  subsystem.residual(t, z, zp, u, zp_rhs);
  solve_dfdzp(num, zp_rhs.data());
  klu_l_free_numeric(&num, &zp_common);
  for (std::size_t i = 0; i < n; ++i) zp[i] -= zp_rhs[i];
}

void Integrator::Impl::shift_history(const model::InputFunction& previous) {
  IDAMem m = ida();
  const int k = m->ida_kused;
  if (m->ida_nst == 0 || k < 1 || nu == 0 || !input) return;
  const double t = m->ida_tn;
  zp_z.resize(2 * n);
  std::span<double> z(zp_z.data(), n), zp(zp_z.data() + n, n);
  current_state(z, zp);
  klu_l_numeric* num = linearize(t, z, zp);
  if (!ju_pattern)
    ju_pattern = std::make_unique<model::EntryPattern>(subsystem.input_jacobian_pattern());
  const model::EntryPattern& ju = *ju_pattern;
  std::vector<double> ju_values(ju.nonzeros()), u_new(nu), u_old(nu);
  subsystem.input_jacobian(t, z, zp, u, ju_values);
  // δ' = −(dF/dz')⁻¹ (dF/dz δ + dF/du Δu), Δu = new input − previous input, δ(0) = 0, as a
  // Taylor series in σ = s/span over the history span [−span, 0]: Δu is a polynomial of degree
  // <= D = SupportPoints::kMaxDegree (coefficients d_j from D + 1 samples), and δ has
  // coefficients c_{j+1} = −span·(dF/dz')⁻¹ (dF/dz c_j + dF/du d_j)/(j + 1), kept to degree D + 3
  // (two integrations beyond Δu and one more for the homogeneous part).
  const auto ku = static_cast<std::size_t>(k);
  const double span = m->ida_psi[ku - 1];
  constexpr std::size_t kD = model::SupportPoints::kMaxDegree, kTerms = kD + 3;
  std::vector<double> vand((kD + 1) * (kD + 1)), du((kD + 1) * nu);  // du[j * nu + c] = d_j
  for (std::size_t i = 0; i <= kD; ++i) {
    const double sigma = -static_cast<double>(i) / kD;
    input->evaluate(t + sigma * span, u_new);
    previous.evaluate(t + sigma * span, u_old);
    double pw = 1.0;
    for (std::size_t j = 0; j <= kD; ++j, pw *= sigma) vand[i * (kD + 1) + j] = pw;
    for (std::size_t c = 0; c < nu; ++c) du[i * nu + c] = u_new[c] - u_old[c];
  }
  solve_small(vand, du, kD + 1, nu);
  const auto& p = *pattern;
  std::vector<std::vector<double>> coef(kTerms + 1, std::vector<double>(n, 0.0));
  for (std::size_t j = 0; j < kTerms; ++j) {
    std::vector<double>& out = coef[j + 1];
    for (std::size_t c = 0; c < n; ++c) {
      for (auto q = p.column_start[c]; q < p.column_start[c + 1]; ++q) {
        out[static_cast<std::size_t>(p.row_index[static_cast<std::size_t>(q)])] +=
            zp_j0[static_cast<std::size_t>(q)] * coef[j][c];
      }
    }
    if (j <= kD) {
      for (std::size_t q = 0; q < ju.nonzeros(); ++q) {
        out[ju.row[q]] += ju_values[q] * du[j * nu + ju.column[q]];
      }
    }
    solve_dfdzp(num, out.data());
    for (double& v : out) v *= -span / static_cast<double>(j + 1);
  }
  // δ at the history's nodes s_i = −psi[i−1] (Horner).
  std::vector<std::vector<double>> dd(ku + 1, std::vector<double>(n, 0.0));
  std::vector<double> node(ku + 1, 0.0);
  for (std::size_t i = 1; i <= ku; ++i) {
    node[i] = -m->ida_psi[i - 1];
    const double sigma = node[i] / span;
    for (std::size_t j = kTerms; j >= 1; --j) {
      for (std::size_t r = 0; r < n; ++r) dd[i][r] = dd[i][r] * sigma + coef[j][r];
    }
    for (std::size_t r = 0; r < n; ++r) dd[i][r] *= sigma;
  }
  klu_l_free_numeric(&num, &zp_common);
  // Newton divided differences δ[s_0..s_j]; phi[j] holds (Π_{i<j} psi[i])·y[s_0..s_j].
  for (std::size_t l = 1; l <= ku; ++l) {
    for (std::size_t i = ku; i >= l; --i) {
      for (std::size_t r = 0; r < n; ++r)
        dd[i][r] = (dd[i][r] - dd[i - 1][r]) / (node[i] - node[i - l]);
    }
  }
  double scale = 1.0;
  for (std::size_t j = 1; j <= ku; ++j) {
    scale *= m->ida_psi[j - 1];
    double* phi = N_VGetArrayPointer(m->ida_phi[j]);
    for (std::size_t r = 0; r < n; ++r) phi[r] += scale * dd[j][r];
  }
}

void Integrator::Impl::restart() {
  IDAMem m = ida();
  const double t = m->ida_tn;
  zp_z.resize(2 * n);
  std::span<double> z(zp_z.data(), n), zp(zp_z.data() + n, n);
  current_state(z, zp);
  consistent_derivative(z, zp);
  std::memcpy(N_VGetArrayPointer(yy), z.data(), n * sizeof(double));
  std::memcpy(N_VGetArrayPointer(yp), zp.data(), n * sizeof(double));
  check(IDAReInit(mem, t, yy, yp), "IDAReInit");
  // As after construction: unused history vectors zero, so equal states give equal snapshots.
  for (int j = 2; j <= m->ida_maxord; ++j) N_VConst(0.0, m->ida_phi[j]);
  N_VConst(0.0, m->ida_ee);
}

void Integrator::consistent_derivative(std::span<double> zp) const {
  auto& I = *impl_;
  if (zp.size() != I.n) throw std::invalid_argument("consistent_derivative: span size");
  I.zp_z.resize(2 * I.n);
  std::span<double> z(I.zp_z.data(), I.n), zh(I.zp_z.data() + I.n, I.n);
  I.current_state(z, zh);
  std::copy(zh.begin(), zh.end(), zp.begin());
  I.consistent_derivative(z, zp);
}

double Integrator::input_jump_norm() const {
  auto& I = *impl_;
  IDAMem m = I.ida();
  if (m->ida_nst == 0) return 0.0;
  I.zp_z.resize(3 * I.n);
  std::span<double> z(I.zp_z.data(), I.n), zh(I.zp_z.data() + I.n, I.n),
      zc(I.zp_z.data() + 2 * I.n, I.n);
  I.current_state(z, zh);
  std::copy(zh.begin(), zh.end(), zc.begin());
  I.consistent_derivative(z, zc);
  const double* w = N_VGetArrayPointer(m->ida_ewt);
  double sum = 0.0;
  for (std::size_t i = 0; i < I.n; ++i) {
    const double e = m->ida_hh * (zc[i] - zh[i]) * w[i];
    sum += e * e;
  }
  return std::sqrt(sum / static_cast<double>(I.n));
}

void Integrator::outputs(std::span<double> y) const {
  auto& I = *impl_;
  // Called at every macro point of every run: reuse the scratch state instead of allocating.
  I.z_scratch.resize(I.n);
  I.zp_scratch.resize(I.n);
  state(I.z_scratch, I.zp_scratch);
  I.evaluate_input(time());
  I.subsystem.outputs(time(), I.z_scratch, I.u, y);
}

void Integrator::feedthrough_jacobian(std::span<double> values) const {
  auto& I = *impl_;
  I.z_scratch.resize(I.n);
  I.zp_scratch.resize(I.n);
  state(I.z_scratch, I.zp_scratch);
  I.evaluate_input(time());
  I.subsystem.feedthrough_jacobian(time(), I.z_scratch, I.u, values);
}

std::unique_ptr<WorkspaceSnapshot> Integrator::make_snapshot() const {
  std::unique_ptr<WorkspaceSnapshot> s(new WorkspaceSnapshot());
  save(*s);
  return s;
}

void Integrator::save(WorkspaceSnapshot& snapshot) const {
  impl_->no_interpolated_state("save");
  impl_->save(*snapshot.data_);
}

void Integrator::restore(const WorkspaceSnapshot& snapshot) {
  impl_->restore(*snapshot.data_);
  impl_->interpolate_at = std::numeric_limits<double>::quiet_NaN();
}

detail::SnapshotTarget Integrator::Impl::snapshot_target() const {
  return {subsystem, options, vector_count(),
          options.linear_solver == LinearSolver::kKlu ? &klu()->common : nullptr};
}

std::vector<std::byte> Integrator::export_snapshot(const WorkspaceSnapshot& snapshot) const {
  const auto& d = *snapshot.data_;
  if (d.n != impl_->n || d.solver != impl_->options.linear_solver ||
      static_cast<std::size_t>(d.vectors) != impl_->vector_count()) {
    throw std::invalid_argument(
        "Integrator::export_snapshot: snapshot of another subsystem size, solver or max_order");
  }
  return detail::encode_snapshot(d, impl_->snapshot_target());
}

void Integrator::import_snapshot(std::span<const std::byte> bytes,
                                 WorkspaceSnapshot& snapshot) const {
  *snapshot.data_ = detail::decode_snapshot(bytes, impl_->snapshot_target());
}

void Integrator::copy_state_from(const Integrator& other) {
  if (&other.impl_->subsystem != &impl_->subsystem && other.impl_->n != impl_->n) {
    throw std::invalid_argument("Integrator::copy_state_from: different subsystem");
  }
  if (!impl_->scratch) impl_->scratch.reset(new WorkspaceSnapshot());
  other.save(*impl_->scratch);
  restore(*impl_->scratch);
}

}  // namespace macrostep::ida

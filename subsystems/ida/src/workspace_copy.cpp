// Workspace snapshots of the IDA + KLU/dense integrator: IDA's private memory, the Newton
// solver's content, the matrix and the KLU numeric factorization, copied exactly
// (DESIGN.md contract 2; METHODS.md §4.7).
#include <cstring>
#include <stdexcept>

#include "integrator_impl.hpp"

namespace macrostep::ida {

namespace {

using detail::KluNumericCopy;

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

}  // namespace

WorkspaceSnapshot::WorkspaceSnapshot() : data_(std::make_unique<Data>()) {}
WorkspaceSnapshot::~WorkspaceSnapshot() = default;
std::size_t WorkspaceSnapshot::bytes() const {
  return data_->bytes();
}
double WorkspaceSnapshot::time() const {
  return data_->ida.ida_tn;
}

void Integrator::Impl::save(WorkspaceSnapshot::Data& d) const {
  if (algebraic()) {
    d = WorkspaceSnapshot::Data{};
    d.solver = options.linear_solver;
    d.ida.ida_tn = algebraic_time;
    d.klu_common = algebraic_klu;
    d.mode = mode;
    return;
  }
  IDAMem m = ida();
  d.mode = mode;
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

void Integrator::Impl::restore(const WorkspaceSnapshot::Data& d) {
  if (d.n != n || d.solver != options.linear_solver) {
    throw std::invalid_argument(
        "WorkspaceSnapshot::restore: snapshot of a different subsystem size or solver");
  }
  left_present = false;
  left_mode.reset();
  if (events) {
    if (!d.mode) throw std::invalid_argument("WorkspaceSnapshot::restore: snapshot without a mode");
    mode = d.mode;
  }
  if (algebraic()) {
    algebraic_time = d.ida.ida_tn;
    return;
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
  // Only modes change the nominals: a subsystem without events restores no compare.
  if (events) take_mode_tolerances();
}

}  // namespace macrostep::ida

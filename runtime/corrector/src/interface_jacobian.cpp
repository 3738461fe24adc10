// Interface Jacobian of the Newton corrector (interface_jacobian.hpp; METHODS.md §4.1, D-11,
// D-12; seed 000 Eq. 2.27-2.29).
#include "macrostep/corrector/interface_jacobian.hpp"

#include <klu.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>
#include <type_traits>
#include <utility>

namespace macrostep::corrector {

static_assert(std::is_same_v<SuiteSparse_long, std::int64_t>,
              "KLU's long index type must be the 64-bit integer of the CSC arrays");

InputSensitivities::InputSensitivities(const system::CoupledSystem& system) {
  std::size_t offset = 0;
  for (std::size_t i = 0; i < system.subsystem_count(); ++i) {
    const auto& s = system.subsystem(i);
    offsets_.push_back(offset);
    sizes_.push_back(s.output_size() * s.input_size());
    inputs_.push_back(s.input_size());
    offset += sizes_.back();
  }
  values_.assign(offset, 0.0);
}

void InputSensitivities::set_forward_difference(std::size_t subsystem,
                                                std::span<const double> nominal,
                                                std::span<const std::vector<double>> perturbed,
                                                std::span<const double> delta) {
  const std::size_t n_in = inputs_.at(subsystem);
  if (perturbed.size() != n_in || delta.size() != n_in ||
      nominal.size() * n_in != sizes_[subsystem]) {
    throw std::invalid_argument("InputSensitivities: one perturbed run per input required");
  }
  for (std::size_t c = 0; c < n_in; ++c) {
    if (perturbed[c].size() != nominal.size()) {
      throw std::invalid_argument("InputSensitivities: perturbed outputs of the wrong size");
    }
    for (std::size_t o = 0; o < nominal.size(); ++o) {
      at(subsystem, o, c) = (perturbed[c][o] - nominal[o]) / delta[c];
    }
  }
}

struct InterfaceJacobian::Klu {
  klu_l_common common{};
  klu_l_symbolic* symbolic = nullptr;
  klu_l_numeric* numeric = nullptr;
};

InterfaceJacobian::InterfaceJacobian(const system::CoupledSystem& system)
    : system_(system), n_(system.coupling_count()), klu_(std::make_unique<Klu>()) {
  build_pattern(system);
  values_.assign(row_index_.size(), 0.0);
  klu_l_defaults(&klu_->common);
  klu_->symbolic = klu_l_analyze(static_cast<SuiteSparse_long>(n_), column_start_.data(),
                                 row_index_.data(), &klu_->common);
  if (klu_->symbolic == nullptr) {
    throw std::runtime_error("InterfaceJacobian: KLU could not analyse the pattern");
  }
}

InterfaceJacobian::~InterfaceJacobian() {
  free_numeric();
  if (klu_->symbolic != nullptr) klu_l_free_symbolic(&klu_->symbolic, &klu_->common);
}

void InterfaceJacobian::free_numeric() {
  if (klu_->numeric != nullptr) klu_l_free_numeric(&klu_->numeric, &klu_->common);
}

// D-12: (i, k) for every law variable i and every input coupling k of every subsystem whose
// output the law reads, plus the diagonal; entries sorted column by column, rows increasing.
void InterfaceJacobian::build_pattern(const system::CoupledSystem& system) {
  struct Pending {
    std::size_t row, col, dphi_index, subsystem, output, channel;
  };
  std::vector<Pending> pending;
  std::map<std::pair<std::size_t, std::size_t>, std::size_t> entries;  // (col, row) → index
  for (std::size_t i = 0; i < n_; ++i) entries.emplace(std::pair{i, i}, 0);
  std::size_t dphi_size = 0;
  for (std::size_t k = 0; k < system.law_count(); ++k) {
    const auto& law = system.law(k);
    const auto reads = law.reads();
    dphi_offset_.push_back(dphi_size);
    for (std::size_t w = 0; w < law.write_count(); ++w) {
      const std::size_t row = system.law_offset(k) + w;
      for (std::size_t r = 0; r < reads.size(); ++r) {
        const std::size_t sub = reads[r].subsystem;
        for (std::size_t c = 0; c < system.subsystem(sub).input_size(); ++c) {
          // ∂y/∂(input c) enters the column of every coupling variable feeding input c.
          for (const std::size_t f : system.input_feeds(sub, c)) {
            entries.emplace(std::pair{f, row}, 0);
            pending.push_back({row, f, dphi_size + w * reads.size() + r, sub, reads[r].output, c});
          }
        }
      }
    }
    dphi_size += law.write_count() * reads.size();
  }
  dphi_.assign(dphi_size, 0.0);
  column_start_.assign(n_ + 1, 0);
  for (auto& [key, index] : entries) {  // std::map order: by column, then row
    index = row_index_.size();
    row_index_.push_back(static_cast<std::int64_t>(key.second));
    ++column_start_[key.first + 1];
  }
  for (std::size_t c = 0; c < n_; ++c) column_start_[c + 1] += column_start_[c];
  diagonal_.resize(n_);
  for (std::size_t i = 0; i < n_; ++i) diagonal_[i] = entries.at({i, i});
  terms_.reserve(pending.size());
  for (const Pending& p : pending) {
    terms_.push_back({entries.at({p.col, p.row}), p.dphi_index, p.subsystem, p.output, p.channel});
  }
}

bool InterfaceJacobian::assemble(std::span<const std::vector<double>> outputs,
                                 const InputSensitivities& dyds) {
  for (std::size_t k = 0; k < system_.law_count(); ++k) {
    const auto& law = system_.law(k);
    const std::size_t size = law.write_count() * law.reads().size();
    system_.coupling_jacobian(k, outputs, std::span<double>(dphi_).subspan(dphi_offset_[k], size));
  }
  std::fill(values_.begin(), values_.end(), 0.0);
  // J = I − ∂φ/∂y·∂y/∂s; a constraint's row has no identity (its r = −g(y), METHODS §8).
  for (std::size_t i = 0; i < n_; ++i) values_[diagonal_[i]] = system_.is_constraint(i) ? 0.0 : 1.0;
  for (const Term& t : terms_) {
    values_[t.entry] -= dphi_[t.dphi_index] * dyds.at(t.subsystem, t.output, t.channel);
  }
  return factorize_values();
}

bool InterfaceJacobian::factorize(std::span<const double> values) {
  if (values.size() != values_.size()) {
    throw std::invalid_argument("InterfaceJacobian::factorize: wrong number of values");
  }
  std::copy(values.begin(), values.end(), values_.begin());
  return factorize_values();
}

bool InterfaceJacobian::factorize_values() {
  free_numeric();
  for (double v : values_) {
    if (!std::isfinite(v)) return false;
  }
  klu_->numeric = klu_l_factor(column_start_.data(), row_index_.data(), values_.data(),
                               klu_->symbolic, &klu_->common);
  if (klu_->numeric == nullptr || klu_->common.status != KLU_OK) {
    free_numeric();
    return false;
  }
  // D-11: a (nearly) singular J gives no usable Newton step.
  if (klu_l_rcond(klu_->symbolic, klu_->numeric, &klu_->common) == 0 ||
      !(klu_->common.rcond > 1e3 * std::numeric_limits<double>::epsilon())) {
    free_numeric();
    return false;
  }
  return true;
}

void InterfaceJacobian::solve(std::span<double> rhs) {
  if (klu_->numeric == nullptr) {
    throw std::logic_error("InterfaceJacobian::solve without a successful assemble()");
  }
  if (rhs.size() != n_) throw std::invalid_argument("InterfaceJacobian::solve: wrong size");
  klu_l_solve(klu_->symbolic, klu_->numeric, static_cast<SuiteSparse_long>(n_), 1, rhs.data(),
              &klu_->common);
}

std::vector<double> InterfaceJacobian::dense() const {
  std::vector<double> a(n_ * n_, 0.0);
  for (std::size_t c = 0; c < n_; ++c) {
    for (auto p = column_start_[c]; p < column_start_[c + 1]; ++p) {
      a[static_cast<std::size_t>(row_index_[static_cast<std::size_t>(p)]) * n_ + c] =
          values_[static_cast<std::size_t>(p)];
    }
  }
  return a;
}

}  // namespace macrostep::corrector

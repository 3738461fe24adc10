// METHODS.md §1.1 (seed 000 Eq. 2.4): the coupled system as one index-1 DAE in (z, u).
#include "macrostep/system/monolithic_system.hpp"

#include <algorithm>
#include <cassert>
#include <stdexcept>

namespace macrostep::system {

struct MonolithicSystem::Scratch {
  std::vector<std::vector<double>> inputs, outputs, block_values, input_values, output_values, dphi,
      feedthrough;
  std::vector<double> phi, reads;
};

namespace {

template <class Size>
void resize_each(std::vector<std::vector<double>>& vectors, std::size_t count, Size size_of) {
  vectors.resize(count);
  for (std::size_t i = 0; i < count; ++i) vectors[i].resize(size_of(i));
}

}  // namespace

MonolithicSystem::MonolithicSystem(const CoupledSystem& system) : system_(system) {
  if (system_.depends_on_macro_grid()) {
    throw std::invalid_argument(
        "MonolithicSystem: a coupling law depends on the macro-step grid (one IDA has none)");
  }
  const std::size_t ns = system_.subsystem_count();
  initial_time_ = system_.subsystem(0).initial_time();
  state_offsets_.assign(1, 0);
  output_offsets_.assign(1, 0);
  for (std::size_t L = 0; L < ns; ++L) {
    const model::Subsystem& s = system_.subsystem(L);
    if (s.initial_time() != initial_time_) {
      throw std::invalid_argument("MonolithicSystem: subsystems start at different times");
    }
    state_offsets_.push_back(state_offsets_.back() + s.state_size());
    output_offsets_.push_back(output_offsets_.back() + s.output_size());
    const auto roles = s.state_roles();
    roles_.insert(roles_.end(), roles.begin(), roles.end());
    const auto nominals = s.state_nominals();
    if (!nominals.empty()) {
      nominals_.resize(state_offsets_[L], 1.0);
      nominals_.insert(nominals_.end(), nominals.begin(), nominals.end());
    }
    output_patterns_.push_back(s.output_jacobian_pattern());
    input_patterns_.push_back(s.input_jacobian_pattern());
    parts_.push_back(&s);
  }
  coupling_offset_ = state_offsets_.back();
  state_offsets_.pop_back();
  roles_.resize(coupling_offset_ + system_.coupling_count(), model::StateRole::kOther);
  if (!nominals_.empty()) nominals_.resize(roles_.size(), 1.0);
  std::vector<Entry> entries;
  collect_entries(entries);
  build_pattern(std::move(entries));
  index_values();
  set_up_events();
}

// Every structural entry: subsystem blocks, their input columns, the coupling rows' output
// dependencies (a law's written variables depend on every state that an output it reads depends
// on) and the identity of ∂g/∂u.
void MonolithicSystem::collect_entries(std::vector<Entry>& entries) const {
  for (std::size_t L = 0; L < system_.subsystem_count(); ++L) {
    const auto& p = system_.subsystem(L).jacobian_pattern();
    const std::size_t off = state_offsets_[L];
    for (std::size_t c = 0; c < p.n; ++c) {
      for (auto k = p.column_start[c]; k < p.column_start[c + 1]; ++k) {
        entries.push_back({off + c, off + static_cast<std::size_t>(p.row_index[k])});
      }
    }
    const auto& inputs = input_patterns_[L];
    for (std::size_t k = 0; k < inputs.nonzeros(); ++k) {
      for (const std::size_t c : system_.input_feeds(L, inputs.column[k])) {
        entries.push_back({coupling_offset_ + c, off + inputs.row[k]});
      }
    }
  }
  for (std::size_t k = 0; k < system_.law_count(); ++k) {
    const CouplingLaw& law = system_.law(k);
    for (std::size_t w = 0; w < law.write_count(); ++w) {
      const std::size_t row = coupling_offset_ + system_.law_offset(k) + w;
      for (const OutputRef& read : law.reads()) {
        const auto& outputs = output_patterns_[read.subsystem];
        for (std::size_t e = 0; e < outputs.nonzeros(); ++e) {
          if (outputs.row[e] != read.output) continue;
          entries.push_back({state_offsets_[read.subsystem] + outputs.column[e], row});
        }
        if (!system_.subsystem(read.subsystem).has_feedthrough()) continue;
        for (std::size_t c : system_.feed_channels(read.subsystem)) {
          entries.push_back({coupling_offset_ + c, row});
        }
      }
    }
  }
  for (std::size_t c = 0; c < system_.coupling_count(); ++c) {
    entries.push_back({coupling_offset_ + c, coupling_offset_ + c});
  }
}

void MonolithicSystem::build_pattern(std::vector<Entry> entries) {
  std::sort(entries.begin(), entries.end());
  entries.erase(std::unique(entries.begin(), entries.end()), entries.end());
  pattern_.n = roles_.size();
  pattern_.column_start.assign(pattern_.n + 1, 0);
  for (const Entry& e : entries) {
    pattern_.column_start[e.column + 1] += 1;
    pattern_.row_index.push_back(static_cast<std::int64_t>(e.row));
  }
  for (std::size_t c = 0; c < pattern_.n; ++c) {
    pattern_.column_start[c + 1] += pattern_.column_start[c];
  }
}

std::size_t MonolithicSystem::value_index(std::size_t row, std::size_t column) const {
  const auto begin = pattern_.row_index.begin() + pattern_.column_start[column];
  const auto end = pattern_.row_index.begin() + pattern_.column_start[column + 1];
  const auto it = std::lower_bound(begin, end, static_cast<std::int64_t>(row));
  assert(it != end && *it == static_cast<std::int64_t>(row));
  return static_cast<std::size_t>(it - pattern_.row_index.begin());
}

// Where every contribution lands in the value array (the same walk as collect_entries).
void MonolithicSystem::index_values() {
  const std::size_t ns = system_.subsystem_count();
  block_index_.resize(ns);
  input_index_.resize(ns);
  for (std::size_t L = 0; L < ns; ++L) {
    const auto& p = system_.subsystem(L).jacobian_pattern();
    const std::size_t off = state_offsets_[L];
    for (std::size_t c = 0; c < p.n; ++c) {
      for (auto k = p.column_start[c]; k < p.column_start[c + 1]; ++k) {
        block_index_[L].push_back(
            value_index(off + static_cast<std::size_t>(p.row_index[k]), off + c));
      }
    }
    const auto& inputs = input_patterns_[L];
    for (std::size_t k = 0; k < inputs.nonzeros(); ++k) {
      for (const std::size_t c : system_.input_feeds(L, inputs.column[k])) {
        input_index_[L].push_back(value_index(off + inputs.row[k], coupling_offset_ + c));
      }
    }
  }
  for (std::size_t k = 0; k < system_.law_count(); ++k) {
    const CouplingLaw& law = system_.law(k);
    const auto reads = law.reads();
    for (std::size_t w = 0; w < law.write_count(); ++w) {
      const std::size_t row = coupling_offset_ + system_.law_offset(k) + w;
      for (std::size_t r = 0; r < reads.size(); ++r) {
        const auto& outputs = output_patterns_[reads[r].subsystem];
        for (std::size_t e = 0; e < outputs.nonzeros(); ++e) {
          if (outputs.row[e] != reads[r].output) continue;
          const std::size_t column = state_offsets_[reads[r].subsystem] + outputs.column[e];
          coupling_terms_.push_back(
              {value_index(row, column), k, w * reads.size() + r, reads[r].subsystem, e});
        }
        const model::Subsystem& sub = system_.subsystem(reads[r].subsystem);
        if (!sub.has_feedthrough()) continue;
        for (std::size_t j = 0; j < sub.input_size(); ++j) {
          for (const std::size_t c : system_.input_feeds(reads[r].subsystem, j)) {
            feedthrough_terms_.push_back({value_index(row, coupling_offset_ + c), k,
                                          w * reads.size() + r, reads[r].subsystem,
                                          j * sub.output_size() + reads[r].output,
                                          row - coupling_offset_, c});
          }
        }
      }
    }
  }
  for (std::size_t c = 0; c < system_.coupling_count(); ++c) {
    identity_index_.push_back(value_index(coupling_offset_ + c, coupling_offset_ + c));
  }
}

MonolithicSystem::Scratch& MonolithicSystem::scratch() const {
  thread_local Scratch s;
  const std::size_t ns = system_.subsystem_count();
  const auto sub = [this](std::size_t L) -> const model::Subsystem& {
    return system_.subsystem(L);
  };
  resize_each(s.inputs, ns, [&](std::size_t L) { return sub(L).input_size(); });
  resize_each(s.outputs, ns, [&](std::size_t L) { return sub(L).output_size(); });
  resize_each(s.block_values, ns,
              [&](std::size_t L) { return sub(L).jacobian_pattern().nonzeros(); });
  resize_each(s.input_values, ns, [&](std::size_t L) { return input_patterns_[L].nonzeros(); });
  resize_each(s.output_values, ns, [&](std::size_t L) { return output_patterns_[L].nonzeros(); });
  resize_each(s.feedthrough, ns, [&](std::size_t L) {
    return sub(L).has_feedthrough() ? sub(L).output_size() * sub(L).input_size() : 0;
  });
  resize_each(s.dphi, system_.law_count(), [&](std::size_t k) {
    return system_.law(k).write_count() * system_.law(k).reads().size();
  });
  s.phi.resize(system_.coupling_count());
  std::size_t max_reads = 0;
  for (std::size_t k = 0; k < system_.law_count(); ++k) {
    max_reads = std::max(max_reads, system_.law(k).reads().size());
  }
  s.reads.resize(max_reads);
  return s;
}

void MonolithicSystem::gather_inputs(std::size_t subsystem, std::span<const double> z,
                                     std::span<double> inputs) const {
  system_.gather_inputs(subsystem, z.subspan(coupling_offset_, system_.coupling_count()), inputs);
}

void MonolithicSystem::evaluate_outputs(const Parts& parts, double t, std::span<const double> z,
                                        Scratch& s) const {
  for (std::size_t L = 0; L < system_.subsystem_count(); ++L) {
    const model::Subsystem& sub = *parts[L];
    gather_inputs(L, z, s.inputs[L]);
    sub.outputs(t, z.subspan(state_offsets_[L], sub.state_size()), s.inputs[L], s.outputs[L]);
  }
}

void MonolithicSystem::evaluate_coupling_derivatives(const Parts& parts, double t,
                                                     std::span<const double> z, Scratch& s) const {
  evaluate_outputs(parts, t, z, s);
  for (std::size_t L = 0; L < system_.subsystem_count(); ++L) {
    const model::Subsystem& sub = *parts[L];
    sub.output_jacobian(t, z.subspan(state_offsets_[L], sub.state_size()), s.inputs[L],
                        s.output_values[L]);
    if (sub.has_feedthrough()) {
      sub.feedthrough_jacobian(t, z.subspan(state_offsets_[L], sub.state_size()), s.inputs[L],
                               s.feedthrough[L]);
    }
  }
  for (std::size_t k = 0; k < system_.law_count(); ++k) {
    const CouplingLaw& law = system_.law(k);
    const auto reads = law.reads();
    for (std::size_t r = 0; r < reads.size(); ++r) {
      s.reads[r] = s.outputs[reads[r].subsystem][reads[r].output];
    }
    law.jacobian(std::span<const double>(s.reads).first(reads.size()), s.dphi[k]);
  }
}

std::string MonolithicSystem::state_name(std::size_t i) const {
  if (i >= state_size()) throw std::out_of_range("MonolithicSystem::state_name: out of range");
  if (i >= coupling_offset_) return system_.coupling_name(i - coupling_offset_);
  const auto L =
      static_cast<std::size_t>(std::upper_bound(state_offsets_.begin(), state_offsets_.end(), i) -
                               state_offsets_.begin() - 1);
  return system_.subsystem(L).state_name(i - state_offsets_[L]);
}

std::string MonolithicSystem::output_name(std::size_t i) const {
  if (i >= output_size()) throw std::out_of_range("MonolithicSystem::output_name: out of range");
  const auto L =
      static_cast<std::size_t>(std::upper_bound(output_offsets_.begin(), output_offsets_.end(), i) -
                               output_offsets_.begin() - 1);
  return system_.subsystem(L).output_name(i - output_offsets_[L]);
}

std::string MonolithicSystem::input_name(std::size_t) const {
  throw std::out_of_range("MonolithicSystem::input_name: a monolithic system has no inputs");
}

void MonolithicSystem::initial_state(std::span<const double> /*u0*/, std::span<double> z0,
                                     std::span<double> zp0) const {
  assert(z0.size() == state_size() && zp0.size() == state_size());
  const std::vector<double> u = system_.initial_couplings();
  std::copy(u.begin(), u.end(), z0.begin() + static_cast<std::ptrdiff_t>(coupling_offset_));
  Scratch& s = scratch();
  for (std::size_t L = 0; L < system_.subsystem_count(); ++L) {
    const model::Subsystem& sub = system_.subsystem(L);
    gather_inputs(L, z0, s.inputs[L]);
    sub.initial_state(s.inputs[L], z0.subspan(state_offsets_[L], sub.state_size()),
                      zp0.subspan(state_offsets_[L], sub.state_size()));
  }
  // u̇0 = ∂φ/∂y·∂y/∂z·ż0 (time derivative of g = 0; the laws and outputs do not depend on t).
  std::fill(zp0.begin() + static_cast<std::ptrdiff_t>(coupling_offset_), zp0.end(), 0.0);
  evaluate_coupling_derivatives(parts_, initial_time_, z0, s);
  for (const CouplingTerm& term : coupling_terms_) {
    const std::size_t row = pattern_.row_index[term.destination];
    const std::size_t column = static_cast<std::size_t>(
        std::upper_bound(pattern_.column_start.begin(), pattern_.column_start.end(),
                         static_cast<std::int64_t>(term.destination)) -
        pattern_.column_start.begin() - 1);
    zp0[row] += s.dphi[term.law][term.dphi_entry] *
                s.output_values[term.subsystem][term.output_entry] * zp0[column];
  }
  for (std::size_t c = 0; c < system_.coupling_count(); ++c) {
    if (system_.is_constraint(c)) zp0[coupling_offset_ + c] = 0.0;  // a multiplier: unknown
  }
  if (feedthrough_terms_.empty()) return;
  const std::vector<double> direct(zp0.begin() + static_cast<std::ptrdiff_t>(coupling_offset_),
                                   zp0.end());
  for (std::size_t sweep = 0; sweep < system_.coupling_count(); ++sweep) {
    std::vector<double> next = direct;
    for (const FeedthroughTerm& term : feedthrough_terms_) {
      next[term.row] += s.dphi[term.law][term.dphi_entry] *
                        s.feedthrough[term.subsystem][term.d_entry] *
                        zp0[coupling_offset_ + term.coupling];
    }
    std::copy(next.begin(), next.end(),
              zp0.begin() + static_cast<std::ptrdiff_t>(coupling_offset_));
  }
}

void MonolithicSystem::residual_in(const Parts& parts, double t, std::span<const double> z,
                                   std::span<const double> zp, std::span<double> r) const {
  assert(z.size() == state_size() && zp.size() == state_size() && r.size() == state_size());
  Scratch& s = scratch();
  for (std::size_t L = 0; L < system_.subsystem_count(); ++L) {
    const model::Subsystem& sub = *parts[L];
    const std::size_t off = state_offsets_[L], n = sub.state_size();
    gather_inputs(L, z, s.inputs[L]);
    sub.residual(t, z.subspan(off, n), zp.subspan(off, n), s.inputs[L], r.subspan(off, n));
  }
  evaluate_outputs(parts, t, z, s);
  system_.evaluate_couplings(s.outputs, s.phi);
  for (std::size_t c = 0; c < s.phi.size(); ++c) {
    // A constraint's row is its g(y) = −φ itself: the multiplier is what makes it hold (an
    // index-2 DAE then, METHODS §8).
    r[coupling_offset_ + c] =
        system_.is_constraint(c) ? -s.phi[c] : z[coupling_offset_ + c] - s.phi[c];
  }
}

void MonolithicSystem::jacobian_in(const Parts& parts, double t, std::span<const double> z,
                                   std::span<const double> zp, double cj,
                                   std::span<double> values) const {
  assert(z.size() == state_size() && values.size() == pattern_.nonzeros());
  Scratch& s = scratch();
  std::fill(values.begin(), values.end(), 0.0);
  for (std::size_t L = 0; L < system_.subsystem_count(); ++L) {
    const model::Subsystem& sub = *parts[L];
    const std::size_t off = state_offsets_[L], n = sub.state_size();
    gather_inputs(L, z, s.inputs[L]);
    sub.jacobian(t, z.subspan(off, n), zp.subspan(off, n), s.inputs[L], cj, s.block_values[L]);
    for (std::size_t k = 0; k < s.block_values[L].size(); ++k) {
      values[block_index_[L][k]] += s.block_values[L][k];
    }
    sub.input_jacobian(t, z.subspan(off, n), zp.subspan(off, n), s.inputs[L], s.input_values[L]);
    // ∂F/∂(input) lands in the column of each coupling variable feeding the input.
    const auto& inputs = input_patterns_[L];
    for (std::size_t k = 0, e = 0; k < s.input_values[L].size(); ++k) {
      for (std::size_t f = 0; f < system_.input_feeds(L, inputs.column[k]).size(); ++f) {
        values[input_index_[L][e++]] += s.input_values[L][k];
      }
    }
  }
  evaluate_coupling_derivatives(parts, t, z, s);
  for (const CouplingTerm& term : coupling_terms_) {
    values[term.destination] -=
        s.dphi[term.law][term.dphi_entry] * s.output_values[term.subsystem][term.output_entry];
  }
  for (const FeedthroughTerm& term : feedthrough_terms_) {
    values[term.destination] -=
        s.dphi[term.law][term.dphi_entry] * s.feedthrough[term.subsystem][term.d_entry];
  }
  for (std::size_t c = 0; c < identity_index_.size(); ++c) {
    if (!system_.is_constraint(c)) values[identity_index_[c]] += 1.0;
  }
}

void MonolithicSystem::outputs_in(const Parts& parts, double t, std::span<const double> z,
                                  std::span<double> y) const {
  assert(z.size() == state_size() && y.size() == output_size());
  Scratch& s = scratch();
  for (std::size_t L = 0; L < system_.subsystem_count(); ++L) {
    const model::Subsystem& sub = *parts[L];
    gather_inputs(L, z, s.inputs[L]);
    sub.outputs(t, z.subspan(state_offsets_[L], sub.state_size()), s.inputs[L],
                y.subspan(output_offsets_[L], sub.output_size()));
  }
}

bool MonolithicSystem::settle_couplings(const Parts& parts, double t, std::span<double> z) const {
  Scratch& s = scratch();
  bool changed = false;
  for (std::size_t sweep = 0; sweep <= system_.coupling_count(); ++sweep) {
    evaluate_outputs(parts, t, z, s);
    system_.evaluate_couplings(s.outputs, s.phi);
    bool moved = false;
    for (std::size_t c = 0; c < s.phi.size(); ++c) {
      double& u = z[coupling_offset_ + c];
      if (system_.is_constraint(c) || u == s.phi[c]) continue;
      u = s.phi[c];
      moved = true;
    }
    changed = changed || moved;
    if (!moved || feedthrough_terms_.empty()) break;
  }
  return changed;
}

}  // namespace macrostep::system

// The Jacobian check (jacobian_check.hpp).
#include "macrostep/plugin/jacobian_check.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <utility>

#include "macrostep/model/names.hpp"

namespace macrostep::plugin {

namespace {

constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();

// The cube root of the machine epsilon: the step of central differences that balances their
// truncation error (step²) against rounding (eps / step).
const double kRelativeStep = std::cbrt(std::numeric_limits<double>::epsilon());

// An analytic Jacobian by columns: the rows of column c are row[start[c] .. start[c + 1]), their
// values beside them.
struct Columns {
  std::size_t rows = 0;
  std::vector<std::size_t> start, row;
  std::vector<double> value;
};

// What the Jacobian differentiates: f at the point x, and each variable's scale (its magnitude,
// at least its nominal), which sizes its step and weighs its column.
struct Differentiated {
  std::vector<double> x, scale;
  std::function<void(std::span<const double>, std::span<double>)> f;
};

struct Entry {
  std::size_t row = 0, column = 0;
  double analytic = 0.0, differences = 0.0;
  bool in_pattern = true;
};

Columns from_csc(const model::SparsityPattern& p, std::vector<double> values) {
  Columns m;
  m.rows = p.n;
  m.start.assign(p.column_start.begin(), p.column_start.end());
  m.row.assign(p.row_index.begin(), p.row_index.end());
  m.value = std::move(values);
  return m;
}

// A coordinate pattern (unique entries, any order) by columns (a counting sort).
Columns from_entries(const model::EntryPattern& p, std::size_t rows, std::size_t columns,
                     std::span<const double> values) {
  Columns m;
  m.rows = rows;
  m.start.assign(columns + 1, 0);
  for (const std::size_t c : p.column) ++m.start[c + 1];
  for (std::size_t c = 0; c < columns; ++c) m.start[c + 1] += m.start[c];
  std::vector<std::size_t> fill(m.start.begin(), m.start.end() - 1);
  m.row.resize(p.nonzeros());
  m.value.resize(p.nonzeros());
  for (std::size_t k = 0; k < p.nonzeros(); ++k) {
    const std::size_t at = fill[p.column[k]]++;
    m.row[at] = p.row[k];
    m.value[at] = values[k];
  }
  return m;
}

// Groups of columns that share no row (greedy colouring of the column intersection graph): one
// difference of a group gives every entry of its columns.
std::vector<std::vector<std::size_t>> column_groups(const Columns& m) {
  const std::size_t columns = m.start.size() - 1;
  std::vector<std::size_t> row_start(m.rows + 1, 0), row_column(m.row.size());
  for (const std::size_t r : m.row) ++row_start[r + 1];
  for (std::size_t r = 0; r < m.rows; ++r) row_start[r + 1] += row_start[r];
  std::vector<std::size_t> fill(row_start.begin(), row_start.end() - 1);
  for (std::size_t c = 0; c < columns; ++c) {
    for (std::size_t k = m.start[c]; k < m.start[c + 1]; ++k) row_column[fill[m.row[k]]++] = c;
  }
  std::vector<std::size_t> group_of(columns, kNone), taken;  // taken[g] == c: not for column c
  std::vector<std::vector<std::size_t>> groups;
  for (std::size_t c = 0; c < columns; ++c) {
    for (std::size_t k = m.start[c]; k < m.start[c + 1]; ++k) {
      const std::size_t r = m.row[k];
      for (std::size_t j = row_start[r]; j < row_start[r + 1]; ++j) {
        if (const std::size_t g = group_of[row_column[j]]; g != kNone) taken[g] = c;
      }
    }
    std::size_t g = 0;
    while (g < groups.size() && taken[g] == c) ++g;
    if (g == groups.size()) {
      groups.emplace_back();
      taken.push_back(kNone);
    }
    groups[g].push_back(c);
    group_of[c] = g;
  }
  return groups;
}

// f(x + h) and f(x − h) with the columns of `group` moved together; step[c] = the exact 2h of
// column c (as the moved values represent it).
void difference(const Differentiated& d, std::span<const std::size_t> group,
                std::vector<double>& up, std::vector<double>& down, std::vector<double>& step) {
  std::vector<double> xu = d.x, xd = d.x;
  for (const std::size_t c : group) {
    const double h = kRelativeStep * d.scale[c];
    xu[c] = d.x[c] + h;
    xd[c] = d.x[c] - h;
    step[c] = xu[c] - xd[c];
  }
  d.f(xu, up);
  d.f(xd, down);
}

// The entries of a group from one difference of it. Returns false if a row outside the group's
// pattern changed: an entry outside the pattern, whose column only single differences tell.
bool grouped_entries(const Columns& m, const Differentiated& d, std::span<const std::size_t> group,
                     std::vector<Entry>& out) {
  std::vector<double> up(m.rows), down(m.rows), step(d.x.size());
  difference(d, group, up, down, step);
  std::vector<bool> covered(m.rows, false);
  for (const std::size_t c : group) {
    for (std::size_t k = m.start[c]; k < m.start[c + 1]; ++k) {
      const std::size_t r = m.row[k];
      covered[r] = true;
      out.push_back({r, c, m.value[k], (up[r] - down[r]) / step[c], true});
    }
  }
  for (std::size_t r = 0; r < m.rows; ++r) {
    if (!covered[r] && up[r] != down[r]) return false;
  }
  return true;
}

// The entries of a group column by column, with every row outside a column's pattern that moves.
void single_entries(const Columns& m, const Differentiated& d, std::span<const std::size_t> group,
                    std::vector<Entry>& out) {
  std::vector<double> up(m.rows), down(m.rows), step(d.x.size());
  std::vector<bool> covered(m.rows);
  for (const std::size_t c : group) {
    difference(d, std::span<const std::size_t>(&c, 1), up, down, step);
    std::fill(covered.begin(), covered.end(), false);
    for (std::size_t k = m.start[c]; k < m.start[c + 1]; ++k) {
      const std::size_t r = m.row[k];
      covered[r] = true;
      out.push_back({r, c, m.value[k], (up[r] - down[r]) / step[c], true});
    }
    for (std::size_t r = 0; r < m.rows; ++r) {
      if (!covered[r] && up[r] != down[r])
        out.push_back({r, c, 0.0, (up[r] - down[r]) / step[c], false});
    }
  }
}

// How far each entry is outside the tolerance (> 1: a mismatch; infinity: not finite), by the
// rule of jacobian_check.hpp: |analytic − differences|·scale_c against kJacobianTolerance times
// its row's largest weighted entry plus the noise floor of the whole matrix.
std::vector<std::vector<double>> excess(const std::vector<std::vector<Entry>>& groups,
                                        const Differentiated& d, std::size_t rows) {
  std::vector<double> row_scale(rows, 0.0);
  for (const auto& entries : groups) {
    for (const Entry& e : entries) {
      const double size = std::max(std::fabs(e.analytic), std::fabs(e.differences));
      if (std::isfinite(size)) {
        row_scale[e.row] = std::max(row_scale[e.row], size * d.scale[e.column]);
      }
    }
  }
  const double floor = kJacobianNoiseFloor * *std::max_element(row_scale.begin(), row_scale.end());
  std::vector<std::vector<double>> out(groups.size());
  for (std::size_t g = 0; g < groups.size(); ++g) {
    for (const Entry& e : groups[g]) {
      const double error = std::fabs(e.analytic - e.differences) * d.scale[e.column];
      const double allowed = kJacobianTolerance * row_scale[e.row] + floor;
      if (!std::isfinite(error)) {
        out[g].push_back(std::numeric_limits<double>::infinity());
      } else {
        out[g].push_back(error == 0.0 ? 0.0 : allowed > 0.0 ? error / allowed : 2.0);
      }
    }
  }
  return out;
}

std::optional<JacobianMismatch> compare(JacobianKind kind, const Columns& m,
                                        const Differentiated& d) {
  if (m.rows == 0 || d.x.empty()) return std::nullopt;
  const auto groups = column_groups(m);
  std::vector<std::vector<Entry>> entries(groups.size());
  std::vector<bool> single(groups.size(), false);
  for (std::size_t g = 0; g < groups.size(); ++g) {
    if (!grouped_entries(m, d, groups[g], entries[g])) {
      entries[g].clear();
      single_entries(m, d, groups[g], entries[g]);
      single[g] = true;
    }
  }
  // A group with a mismatch is resolved column by column too: an entry outside the pattern may
  // have added to a row of another column of its group.
  auto over = excess(entries, d, m.rows);
  bool resolved = false;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    if (single[g] || std::none_of(over[g].begin(), over[g].end(), [](double x) { return x > 1.0; }))
      continue;
    entries[g].clear();
    single_entries(m, d, groups[g], entries[g]);
    resolved = true;
  }
  if (resolved) over = excess(entries, d, m.rows);
  JacobianMismatch worst{kind};
  double largest = 1.0;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    for (std::size_t k = 0; k < entries[g].size(); ++k) {
      ++worst.checked;
      if (!(over[g][k] > 1.0)) continue;
      ++worst.mismatched;
      if (over[g][k] <= largest && worst.mismatched > 1) continue;
      largest = over[g][k];
      const Entry& e = entries[g][k];
      worst.row = e.row;
      worst.column = e.column;
      worst.in_pattern = e.in_pattern;
      worst.analytic = e.analytic;
      worst.differences = e.differences;
    }
  }
  if (worst.mismatched == 0) return std::nullopt;
  return worst;
}

// Each variable's scale: its magnitude, at least its nominal (1 where the model gives none).
std::vector<double> scales(std::span<const double> x, std::span<const double> nominals) {
  std::vector<double> out(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double nominal = i < nominals.size() ? nominals[i] : 1.0;
    out[i] = std::max(std::fabs(x[i]), nominal);
  }
  return out;
}

}  // namespace

std::vector<JacobianMismatch> jacobian_mismatches(const model::Subsystem& s,
                                                  const JacobianPoint& at) {
  const std::size_t n = s.state_size(), nu = s.input_size(), ny = s.output_size();
  const auto nominals = s.state_nominals();
  const double t = at.t;
  std::vector<JacobianMismatch> out;
  const auto add = [&](std::optional<JacobianMismatch> m) {
    if (m) out.push_back(*m);
  };
  if (n > 0) {
    const model::SparsityPattern& p = s.jacobian_pattern();
    std::vector<double> at0(p.nonzeros()), atc(p.nonzeros());
    s.jacobian(t, at.z, at.zp, at.u, 0.0, at0);
    s.jacobian(t, at.z, at.zp, at.u, kCheckCj, atc);
    for (std::size_t k = 0; k < atc.size(); ++k) atc[k] = (atc[k] - at0[k]) / kCheckCj;
    add(compare(
        JacobianKind::kStates, from_csc(p, std::move(at0)),
        {at.z, scales(at.z, nominals), [&](auto x, auto r) { s.residual(t, x, at.zp, at.u, r); }}));
    add(compare(JacobianKind::kDerivatives, from_csc(p, std::move(atc)),
                {at.zp, scales(at.zp, nominals),
                 [&](auto x, auto r) { s.residual(t, at.z, x, at.u, r); }}));
    if (ny > 0) {
      const model::EntryPattern op = s.output_jacobian_pattern();
      std::vector<double> values(op.nonzeros());
      s.output_jacobian(t, at.z, at.u, values);
      add(compare(
          JacobianKind::kOutputs, from_entries(op, ny, n, values),
          {at.z, scales(at.z, nominals), [&](auto x, auto y) { s.outputs(t, x, at.u, y); }}));
    }
    if (nu > 0) {
      const model::EntryPattern ip = s.input_jacobian_pattern();
      std::vector<double> values(ip.nonzeros());
      s.input_jacobian(t, at.z, at.zp, at.u, values);
      add(compare(
          JacobianKind::kInputs, from_entries(ip, n, nu, values),
          {at.u, scales(at.u, {}), [&](auto x, auto r) { s.residual(t, at.z, at.zp, x, r); }}));
    }
  }
  if (s.has_feedthrough() && ny > 0 && nu > 0) {
    model::EntryPattern dense;
    for (std::size_t c = 0; c < nu; ++c) {
      for (std::size_t r = 0; r < ny; ++r) {
        dense.row.push_back(r);
        dense.column.push_back(c);
      }
    }
    std::vector<double> values(ny * nu);
    s.feedthrough_jacobian(t, at.z, at.u, values);
    add(compare(JacobianKind::kFeedthrough, from_entries(dense, ny, nu, values),
                {at.u, scales(at.u, {}), [&](auto x, auto y) { s.outputs(t, at.z, x, y); }}));
  }
  return out;
}

std::string describe(const model::Subsystem& s, const JacobianMismatch& m) {
  const auto state = [&](std::size_t i) { return model::quoted(s.state_name(i)); };
  const bool of_outputs = m.kind == JacobianKind::kOutputs || m.kind == JacobianKind::kFeedthrough;
  const std::string row = of_outputs
                              ? "output " + model::quoted(s.output_name(m.row))
                              : fmt::format("r[{}] (the row of state {})", m.row, state(m.row));
  const char* label = "";
  const char* pattern = "jacobian_pattern()";
  std::string column = "state " + state(m.column);
  switch (m.kind) {
    case JacobianKind::kStates:
      label = "dF/dz (jacobian() at cj = 0)";
      break;
    case JacobianKind::kDerivatives:
      label = "dF/dz' (the part of jacobian() proportional to cj)";
      column = "the derivative of state " + state(m.column);
      break;
    case JacobianKind::kOutputs:
      label = "dy/dz (output_jacobian())";
      pattern = "output_jacobian_pattern()";
      break;
    case JacobianKind::kInputs:
    case JacobianKind::kFeedthrough:
      label = m.kind == JacobianKind::kInputs ? "dF/du (input_jacobian())"
                                              : "dy/du (feedthrough_jacobian())";
      pattern = "input_jacobian_pattern()";
      column = "input " + model::quoted(s.input_name(m.column));
      break;
  }
  const std::string value = m.in_pattern ? fmt::format("is {:.9g} analytically but", m.analytic)
                                         : fmt::format("is not in {} but is", pattern);
  return fmt::format(
      "{}: the entry ({}, {}) {} {:.9g} by central differences ({} of {} entries "
      "differ)",
      label, row, column, value, m.differences, m.mismatched, m.checked);
}

}  // namespace macrostep::plugin

// Output samples on the grid (Integrator::set_output_grid): the outputs at the grid times inside
// an advance, from IDA's interpolant over the micro step that holds each.
#include <fmt/format.h>

#include "integrator_impl.hpp"
#include "macrostep/model/output_grid.hpp"

namespace macrostep::ida {

void Integrator::set_output_grid(double interval) {
  if (!(interval >= 0.0) || !std::isfinite(interval)) {
    throw std::invalid_argument(
        fmt::format("Integrator::set_output_grid: interval {} is not >= 0", interval));
  }
  impl_->sample_interval = interval;
}

const OutputSamples& Integrator::samples() const {
  return impl_->samples;
}

void Integrator::Impl::begin_samples(double t_start, double t_end) {
  samples.times.clear();
  samples.values.clear();
  next_sample = 0;
  last_sample = -1;
  if (!(sample_interval > 0.0)) return;
  if (events && events->advances_itself()) {
    throw std::logic_error(
        "Integrator: a subsystem that advances itself has no dense output to sample on the "
        "output grid");
  }
  const model::GridRange range = model::grid_inside(t_start, t_end, sample_interval);
  next_sample = range.first;
  last_sample = range.last;
}

void Integrator::Impl::sample_through(double t, bool event_at_t) {
  if (next_sample > last_sample) return;
  const std::size_t outputs = model().output_size();
  while (next_sample <= last_sample) {
    const double tk = model::grid_time(next_sample, sample_interval);
    if (tk > t || (event_at_t && tk == t)) return;
    std::span<const double> z;
    if (n > 0) {
      if (sample_z == nullptr) sample_z = N_VNew_Serial(static_cast<sunindextype>(n), ctx);
      check(IDAGetDky(mem, tk, 0, sample_z), "IDAGetDky (output sample)");
      z = {N_VGetArrayPointer(sample_z), n};
    }
    evaluate_input(tk);
    sample_y.resize(outputs);
    model().outputs(tk, z, u, sample_y);
    samples.times.push_back(tk);
    samples.values.insert(samples.values.end(), sample_y.begin(), sample_y.end());
    ++next_sample;
  }
}

}  // namespace macrostep::ida

// SubsystemRunner (subsystem_runner.hpp; METHODS.md §3.1 step 3, §4.2, §4.7, §5.1, D-23).
#include "macrostep/runner/subsystem_runner.hpp"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include <capnp/message.h>
#include <capnp/serialize.h>

#include "macrostep/ipc/capnp_bytes.hpp"
#include "macrostep/ipc/schema/state.capnp.h"
#include "macrostep/model/clock.hpp"
#include "macrostep/model/names.hpp"
#include "macrostep/runner/parallel_runs.hpp"

namespace macrostep::runner {

namespace {

using model::now_ns;

}  // namespace

// The integrator's view of a run's polynomial. Held by pointer so that integrators keep a stable
// address to evaluate while the pool grows.
class SubsystemRunner::Input final : public model::InputFunction {
 public:
  model::SupportPoints points;
  void evaluate(double t, std::span<double> u) const override { points.evaluate(t, u); }
  int polynomial_degree() const override { return points.degree; }
};

SubsystemRunner::SubsystemRunner(const model::Subsystem& subsystem,
                                 std::span<const double> initial_inputs,
                                 const RunnerOptions& options)
    : subsystem_(subsystem),
      options_(options),
      nominal_input_(std::make_unique<Input>()),
      accepted_input_(std::make_unique<Input>()) {
  if (initial_inputs.size() != subsystem.input_size()) {
    throw std::invalid_argument("SubsystemRunner: " + std::to_string(initial_inputs.size()) +
                                " initial inputs for a subsystem with " +
                                std::to_string(subsystem.input_size()));
  }
  if (initial_inputs.size() > model::SupportPoints::kMaxChannels) {
    throw std::invalid_argument("SubsystemRunner: more inputs than SupportPoints::kMaxChannels");
  }
  // Until the first step the inputs are the constant u0 (a degree-0 polynomial), which makes the
  // integrator's initial state consistent with the initial coupling variables.
  const double t0 = subsystem.initial_time();
  auto& p = nominal_input_->points;
  p.degree = 0;
  p.channels = static_cast<std::uint32_t>(initial_inputs.size());
  p.step_begin = t0;
  p.time[0] = t0 + 1.0;
  for (std::size_t c = 0; c < initial_inputs.size(); ++c) p.value[c][0] = initial_inputs[c];
  accepted_input_->points = p;
  nominal_ = std::make_unique<ida::Integrator>(
      subsystem, options.solver, initial_inputs.empty() ? nullptr : nominal_input_.get());
  nominal_->set_output_grid(options.output_interval);  // extra runs sample nothing
  if (options.rollback) snapshot_ = nominal_->make_snapshot();
  accepted_time_ = nominal_->time();
  results_.resize(1);
  restore_ns_.assign(1, 0);
}

SubsystemRunner::~SubsystemRunner() = default;

void SubsystemRunner::set_progress_counters(
    std::function<std::atomic<std::uint64_t>*(std::size_t)> counter) {
  counter_ = std::move(counter);
  nominal_->set_progress_counter(counter_ ? counter_(0) : nullptr);
  for (std::size_t j = 0; j < pool_.size(); ++j) {
    if (pool_[j]) pool_[j]->set_progress_counter(counter_ ? counter_(1 + j) : nullptr);
  }
}

ida::Integrator& SubsystemRunner::pool_integrator(std::size_t j) {
  // Created on first use, outside any parallel region (IDA set-up must not race with runs).
  while (pool_.size() <= j) pool_.push_back(nullptr);
  if (!pool_[j]) {
    pool_[j] = std::make_unique<ida::Integrator>(subsystem_, options_.solver, nominal_input_.get());
    if (counter_) pool_[j]->set_progress_counter(counter_(1 + j));
  }
  return *pool_[j];
}

void SubsystemRunner::prepare(double t_end, const model::SupportPoints& nominal,
                              std::span<const ExtraRun> extra) {
  const std::size_t inputs = subsystem_.input_size();
  if (nominal.channels != inputs) {
    throw std::invalid_argument("SubsystemRunner: nominal polynomial with " +
                                std::to_string(nominal.channels) + " channels for " +
                                std::to_string(inputs) + " inputs");
  }
  if (!options_.rollback && (!extra.empty() || advanced_)) {
    throw std::logic_error(extra.empty()
                               ? "SubsystemRunner: a repeated pass from T_N needs rollback"
                               : "SubsystemRunner: extra runs need rollback snapshots");
  }
  for (const auto& e : extra) {
    if (e.role == RunRole::kPerturbed ? e.channel >= inputs : e.points.channels != inputs) {
      throw std::invalid_argument(
          e.role == RunRole::kPerturbed
              ? "SubsystemRunner: perturbed run of input " + std::to_string(e.channel) +
                    " of a subsystem with " + std::to_string(inputs) + " inputs"
              : "SubsystemRunner: comparison polynomial with " + std::to_string(e.points.channels) +
                    " channels for " + std::to_string(inputs) + " inputs");
    }
  }
  collect_clone_times();
  if (advanced_) {  // a corrector pass: start again from T_N
    const auto t0 = now_ns();
    nominal_->restore(*snapshot_);
    snapshot_ns_ += now_ns() - t0;
  }
  nominal_input_->points = nominal;
  while (extra_inputs_.size() < extra.size()) extra_inputs_.push_back(std::make_unique<Input>());
  for (std::size_t k = 0; k < extra.size(); ++k) {
    auto& points = extra_inputs_[k]->points;
    if (extra[k].role == RunRole::kPerturbed) {
      points = nominal;
      points.set_end_value(extra[k].channel, extra[k].end_value);
    } else {
      points = extra[k].points;
    }
    pool_integrator(k).set_input(extra_inputs_[k].get());
  }
  extra_count_ = extra.size();
  t_end_ = t_end;
  results_.resize(1 + extra.size());
  for (auto& r : results_) {
    r.error.clear();
    r.terminated = false;
  }
  restore_ns_.assign(1 + extra.size(), 0);
  advanced_ = true;  // from here on the nominal integrator may have left T_N
}

void SubsystemRunner::execute(std::size_t r) noexcept {
  RunResult& result = results_[r];
  try {
    ida::Integrator* integ = nominal_.get();
    if (r > 0) {
      integ = pool_[r - 1].get();
      const auto t0 = now_ns();
      integ->restore(*snapshot_);  // the clone of the T_N workspace (D-23)
      restore_ns_[r] = now_ns() - t0;
    }
    result.stats = integ->advance_to(t_end_, jump_control(*integ));
    result.outputs.resize(subsystem_.output_size());
    const bool event_at_end = integ->event_at_end();
    if (event_at_end) {
      integ->outputs_before_event(result.outputs);
      result.event_outputs.resize(subsystem_.output_size());
      integ->outputs(result.event_outputs);
    } else {
      integ->outputs(result.outputs);
      result.event_outputs.clear();
    }
    const model::Mode* mode = integ->mode();
    result.next_event = mode ? mode->next_time_event() : std::numeric_limits<double>::infinity();
    if (r == 0 && subsystem_.has_feedthrough()) {
      result.feedthrough.resize(subsystem_.output_size() * subsystem_.input_size());
      if (event_at_end) {
        integ->feedthrough_jacobian_before_event(result.feedthrough);
      } else {
        integ->feedthrough_jacobian(result.feedthrough);
      }
    }
    if (r == 0) {
      const ida::OutputSamples& samples = integ->samples();
      result.sample_times.assign(samples.times.begin(), samples.times.end());
      result.sample_values.assign(samples.values.begin(), samples.values.end());
    }
  } catch (const ida::ModelTerminated& e) {
    result.error = e.what();
    result.terminated = true;
  } catch (const std::exception& e) {
    result.error = e.what();
  }
}

namespace {

std::string number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", v);
  return text;
}

// "x_in = 0.001, v_in = 0.2" for an evaluation's error message.
std::string describe_inputs(const model::Subsystem& s, std::span<const double> u) {
  std::string text;
  for (std::size_t c = 0; c < u.size(); ++c) {
    text += (c > 0 ? ", " : "") + model::quoted(s.input_name(c)) + " = " + number(u[c]);
  }
  return text;
}

}  // namespace

const RunResult& SubsystemRunner::evaluate_outputs(std::span<const double> inputs, EventSide side) {
  if (!advanced_ || !results_[0].error.empty()) {
    throw std::logic_error(
        "SubsystemRunner::evaluate_outputs: needs a pass whose nominal run succeeded, before "
        "accept() / reject()");
  }
  if (inputs.size() != subsystem_.input_size()) {
    throw std::invalid_argument(
        "SubsystemRunner::evaluate_outputs: " + std::to_string(inputs.size()) +
        " inputs for a subsystem with " + std::to_string(subsystem_.input_size()));
  }
  RunResult& r = evaluated_;
  r.error.clear();
  r.stats = {};
  const double t = nominal_->time();
  try {
    if (side == EventSide::kBefore && nominal_->event_at_end()) {
      model::evaluate_outputs(nominal_->equations_before_event(), t, nominal_->state_before_event(),
                              inputs, r.outputs, r.feedthrough);
    } else {
      // The same end state Integrator::outputs() reads (IDAGetDky at t_end), other inputs.
      end_z_.resize(subsystem_.state_size());
      end_zp_.resize(end_z_.size());
      nominal_->state(end_z_, end_zp_);
      model::evaluate_outputs(nominal_->equations(), t, end_z_, inputs, r.outputs, r.feedthrough);
    }
  } catch (const std::exception& e) {
    r.error = "output evaluation at t = " + number(t) + " with " +
              describe_inputs(subsystem_, inputs) + ": " + e.what();
  }
  return r;
}

ida::AdvanceControl SubsystemRunner::jump_control(const ida::Integrator& integ) const {
  const JumpOptions& j = options_.jumps;
  ida::AdvanceControl c;
  const double h = t_end_ - integ.time();
  if (j.micro_steps > 1) c.max_step = h / j.micro_steps;
  switch (j.policy) {
    case JumpPolicy::kKeep:
      break;
    case JumpPolicy::kShift:
      c.previous_input = accepted_input_.get();
      break;
    case JumpPolicy::kRestart:
      c.restart = true;
      break;
    case JumpPolicy::kRestartAuto:
      c.restart =
          h < integ.current_order() * integ.next_step_size() || integ.input_jump_norm() > 1.0;
      break;
  }
  return c;
}

void SubsystemRunner::run_all(tbb::task_arena* arena) {
  if (arena == nullptr || run_count() == 1) {
    for (std::size_t r = 0; r < run_count(); ++r) execute(r);
  } else {
    parallel_runs(*arena, run_count(), [this](std::size_t r) { execute(r); });
  }
}

void run_prepared(std::span<SubsystemRunner* const> runners, tbb::task_arena* arena,
                  std::vector<std::pair<std::size_t, std::size_t>>& tasks) {
  tasks.clear();
  for (std::size_t i = 0; i < runners.size(); ++i) {
    for (std::size_t r = 0; r < runners[i]->run_count(); ++r) tasks.emplace_back(i, r);
  }
  if (arena == nullptr || tasks.size() == 1) {
    for (const auto& [i, r] : tasks) runners[i]->execute(r);
  } else {
    parallel_runs(*arena, tasks.size(),
                  [&](std::size_t k) { runners[tasks[k].first]->execute(tasks[k].second); });
  }
}

std::size_t SubsystemRunner::failed_run() const {
  for (std::size_t r = 0; r < run_count(); ++r) {
    if (!results_[r].error.empty()) return r;
  }
  return run_count();
}

bool SubsystemRunner::terminated() const {
  const std::size_t r = failed_run();
  return r < run_count() && results_[r].terminated;
}

std::string SubsystemRunner::failure() const {
  const std::size_t r = failed_run();
  if (r == run_count()) return {};
  return (r == 0 ? "nominal run: " : "extra run: ") + results_[r].error;
}

std::int64_t SubsystemRunner::extra_ns() const {
  std::int64_t ns = 0;
  for (std::size_t r = 1; r < run_count(); ++r) ns += results_[r].stats.wall_ns;
  return ns;
}

// The clones of a pass are part of the snapshot cost. They are summed on the driving thread
// after the runs, so that execute() writes only its own run's slot.
void SubsystemRunner::collect_clone_times() {
  for (auto& ns : restore_ns_) {
    snapshot_ns_ += ns;
    ns = 0;
  }
}

void SubsystemRunner::accept() {
  if (!advanced_) throw std::logic_error("SubsystemRunner::accept: no pass to accept");
  collect_clone_times();
  if (options_.rollback) {
    const auto t0 = now_ns();
    nominal_->save(*snapshot_);
    snapshot_ns_ += now_ns() - t0;
  }
  accepted_time_ = nominal_->time();
  accepted_input_->points = nominal_input_->points;
  advanced_ = false;
}

void SubsystemRunner::reject() {
  if (!options_.rollback) {
    throw std::logic_error("SubsystemRunner::reject: rollback is disabled (fixed-step mode)");
  }
  collect_clone_times();
  if (advanced_) {
    const auto t0 = now_ns();
    nominal_->restore(*snapshot_);
    snapshot_ns_ += now_ns() - t0;
  }
  advanced_ = false;
}

double SubsystemRunner::accepted_time() const {
  return accepted_time_;
}

void SubsystemRunner::accepted_state(std::span<double> z) const {
  if (advanced_) {
    throw std::logic_error("SubsystemRunner::accepted_state: call between steps");
  }
  if (z.size() != subsystem_.state_size()) {
    throw std::invalid_argument("SubsystemRunner::accepted_state: wrong size");
  }
  zp_.resize(z.size());
  nominal_->state(z, zp_);
}

namespace {

// The RunnerState message (ipc/schema/state.capnp): the workspace bytes and the accepted input.
std::vector<std::byte> encode_runner_state(std::span<const std::byte> workspace,
                                           const model::SupportPoints& accepted) {
  capnp::MallocMessageBuilder message;
  auto root = message.initRoot<ipc::schema::RunnerState>();
  root.setFormatVersion(kRunnerStateFormatVersion);
  root.setWorkspace(
      kj::arrayPtr(reinterpret_cast<const kj::byte*>(workspace.data()), workspace.size()));
  auto in = root.initAcceptedInput();
  in.setDegree(accepted.degree);
  in.setStepBegin(accepted.step_begin);
  const auto nodes = static_cast<unsigned>(accepted.node_count());
  auto times = in.initTimes(nodes);
  for (unsigned m = 0; m < nodes; ++m) times.set(m, accepted.time[m]);
  auto values = in.initValues(accepted.channels);
  for (unsigned c = 0; c < accepted.channels; ++c) {
    auto v = values.init(c, nodes);
    for (unsigned m = 0; m < nodes; ++m) v.set(m, accepted.value[c][m]);
  }
  return ipc::to_flat_bytes(message);
}

[[noreturn]] void bad_state(const std::string& what) {
  throw std::runtime_error("SubsystemRunner::import_state: not a runner state of this subsystem: " +
                           what);
}

// Decodes `bytes` into the workspace bytes and the accepted input (checked: version, degree,
// channels, node times); std::runtime_error names what does not fit.
std::vector<std::byte> decode_runner_state(std::span<const std::byte> bytes, std::size_t channels,
                                           model::SupportPoints& accepted) {
  if (bytes.empty() || bytes.size() % sizeof(capnp::word) != 0) {
    bad_state(std::to_string(bytes.size()) + " bytes is not a whole number of 8-byte words");
  }
  const std::vector<capnp::word> words = ipc::aligned_words(bytes);
  capnp::ReaderOptions options;
  options.traversalLimitInWords = std::max<std::uint64_t>(4 * words.size(), 8u << 20);
  try {
    capnp::FlatArrayMessageReader reader(kj::arrayPtr(words.data(), words.size()), options);
    const auto root = reader.getRoot<ipc::schema::RunnerState>();
    if (root.getFormatVersion() != kRunnerStateFormatVersion) {
      bad_state("format version " + std::to_string(root.getFormatVersion()) + ", this build has " +
                std::to_string(kRunnerStateFormatVersion));
    }
    const auto in = root.getAcceptedInput();
    const auto times = in.getTimes();
    const auto values = in.getValues();
    if (in.getDegree() < 0 || in.getDegree() > model::SupportPoints::kMaxDegree ||
        times.size() != static_cast<unsigned>(in.getDegree()) + 1 || values.size() != channels) {
      bad_state("its accepted input polynomial has the wrong degree or channel count");
    }
    model::SupportPoints p{};
    p.degree = in.getDegree();
    p.channels = static_cast<std::uint32_t>(channels);
    p.step_begin = in.getStepBegin();
    for (unsigned m = 0; m < times.size(); ++m) p.time[m] = times[m];
    for (unsigned c = 0; c < values.size(); ++c) {
      if (values[c].size() != times.size()) bad_state("an input channel has the wrong node count");
      for (unsigned m = 0; m < times.size(); ++m) p.value[c][m] = values[c][m];
    }
    if (channels > 0) p.validate();
    accepted = p;
    const auto w = root.getWorkspace();
    const auto* first = reinterpret_cast<const std::byte*>(w.begin());
    return std::vector<std::byte>(first, first + w.size());
  } catch (const kj::Exception& e) {
    bad_state(e.getDescription().cStr());
  } catch (const std::invalid_argument& e) {
    bad_state(e.what());
  }
}

}  // namespace

std::vector<std::byte> SubsystemRunner::export_state() const {
  if (advanced_) throw std::logic_error("SubsystemRunner::export_state: call between steps");
  if (snapshot_) {
    return encode_runner_state(nominal_->export_snapshot(*snapshot_), accepted_input_->points);
  }
  // Without rollback the live workspace is the accepted one between steps: a one-off snapshot
  // of it (the final checkpoint of a fixed-step run stopped by a signal).
  const std::unique_ptr<ida::WorkspaceSnapshot> once = nominal_->make_snapshot();
  nominal_->save(*once);
  return encode_runner_state(nominal_->export_snapshot(*once), accepted_input_->points);
}

void SubsystemRunner::import_state(std::span<const std::byte> bytes) {
  if (advanced_ || !snapshot_) {
    throw std::logic_error(snapshot_ ? "SubsystemRunner::import_state: call between steps"
                                     : "SubsystemRunner::import_state: rollback is disabled");
  }
  const auto t0 = now_ns();
  model::SupportPoints accepted{};
  const std::vector<std::byte> workspace =
      decode_runner_state(bytes, subsystem_.input_size(), accepted);
  nominal_->import_snapshot(workspace, *snapshot_);  // leaves the snapshot alone if it throws
  nominal_->restore(*snapshot_);
  accepted_input_->points = accepted;
  accepted_time_ = nominal_->time();
  snapshot_ns_ += now_ns() - t0;
}

std::size_t SubsystemRunner::export_state_to(const std::string& path, bool durable) const {
  const std::vector<std::byte> bytes = export_state();
  const std::string tmp = path + ".tmp-" + std::to_string(getpid());
  const auto fail = [&](const char* what) {
    const int err = errno;
    std::remove(tmp.c_str());
    throw std::runtime_error("cannot " + std::string(what) + " " + path + ": " +
                             std::strerror(err));
  };
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) fail("create");
  const bool written = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size() &&
                       std::fflush(f) == 0 && (!durable || fsync(fileno(f)) == 0);
  if (std::fclose(f) != 0 || !written) fail("write");
  if (std::rename(tmp.c_str(), path.c_str()) != 0) fail("rename the temporary file to");
  return bytes.size();
}

void SubsystemRunner::import_state_from(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    throw std::runtime_error("cannot open " + path + ": " + std::strerror(errno));
  }
  std::vector<std::byte> bytes;
  std::byte buffer[1 << 16];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, f)) > 0;) {
    bytes.insert(bytes.end(), buffer, buffer + n);
  }
  const bool failed = std::ferror(f) != 0;
  std::fclose(f);
  if (failed) throw std::runtime_error("cannot read " + path);
  try {
    import_state(bytes);
  } catch (const std::exception& e) {
    throw std::runtime_error(path + ": " + e.what());
  }
}

double SubsystemRunner::time() const {
  return nominal_->time();
}

ida::AdvanceStats SubsystemRunner::total_stats() const {
  ida::AdvanceStats total = nominal_->total_stats();
  for (const auto& p : pool_) {
    if (p) total += p->total_stats();
  }
  return total;
}

}  // namespace macrostep::runner

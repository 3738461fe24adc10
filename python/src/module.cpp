// _macrostep: the compiled half of the Python package (python/macrostep/__init__.py is the API
// users call; docs/guide/python.md). It runs the run driver of the `macrostep` command
// (run_call.hpp) with the GIL released and Ctrl-C turned into the driver's stop request, reads
// result tables into numpy arrays, computes the NRMSE of `macrostep compare`, and renders Python
// values as TOML. Errors become Python exceptions: ConfigError (a ValueError) with the message
// the command prints for a configuration or setup error, ValueError for an unusable argument,
// RunError (a RuntimeError) for a run that failed, KeyboardInterrupt for an interrupted one.
#include <fmt/format.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>
#include <csignal>
#include <future>
#include <stdexcept>
#include <thread>

#include "macrostep/config/run_config.hpp"
#include "macrostep/output/csv.hpp"
#include "macrostep/output/hdf5.hpp"
#include "macrostep/output/nrmse.hpp"
#include "macrostep/run/failure.hpp"
#include "macrostep/run/interrupt.hpp"
#include "macrostep/run/monolithic.hpp"
#include "run_call.hpp"
#include "toml_values.hpp"

namespace py = pybind11;
using namespace macrostep;

namespace {

// How often a waiting run looks for Python's pending signals (Ctrl-C).
constexpr std::chrono::milliseconds kSignalPoll{50};

// Runs `request` on its own thread with the GIL released; meanwhile this thread polls Python's
// signal handlers. When one raises (KeyboardInterrupt on Ctrl-C), the run is asked to stop after
// its macro step or output row, is waited for, and the handler's exception is raised here. What
// the run throws otherwise propagates (translated by the module's translator).
python::RunReply run_released(const python::RunRequest& request) {
  run::StopFlag stop{0};
  std::packaged_task<python::RunReply()> task(
      [&request, &stop] { return python::run(request, &stop); });
  std::future<python::RunReply> reply = task.get_future();
  bool raised = false;
  {
    py::gil_scoped_release release;
    std::thread thread(std::move(task));
    while (reply.wait_for(kSignalPoll) != std::future_status::ready) {
      if (raised) continue;
      py::gil_scoped_acquire acquire;
      if (PyErr_CheckSignals() != 0) {  // the handler's exception is now pending
        raised = true;
        stop.store(SIGINT, std::memory_order_relaxed);
      }
    }
    thread.join();
  }
  if (raised) throw py::error_already_set();
  return reply.get();
}

py::dict reply_dict(const python::RunReply& r) {
  py::dict d;
  d["result"] = r.result_path;
  d["metadata"] = r.json_path;
  d["steps"] = r.steps_path;
  d["columns"] = r.columns;
  d["units"] = r.units;
  d["descriptions"] = r.descriptions;
  d["summary"] = r.summary;
  d["wall_s"] = r.wall_s;
  return d;
}

// A result table (CSV or HDF5) as (time, columns, values): values has one row per time point.
py::tuple read_table(const std::string& path) {
  const output::CsvTable table = output::read_result_table(path);
  const auto rows = static_cast<py::ssize_t>(table.rows());
  const auto cols = static_cast<py::ssize_t>(table.columns.size());
  py::array_t<double> time(rows, table.time.data());
  py::array_t<double> values({rows, cols});
  auto v = values.mutable_unchecked<2>();
  for (py::ssize_t c = 0; c < cols; ++c) {
    for (py::ssize_t r = 0; r < rows; ++r) v(r, c) = table.values[c][r];
  }
  return py::make_tuple(time, table.columns, values);
}

using Array = py::array_t<double, py::array::c_style | py::array::forcecast>;

output::CsvTable table_of(const Array& time, const std::vector<std::string>& columns,
                          const Array& values, const char* what) {
  if (time.ndim() != 1 || values.ndim() != 2 || values.shape(0) != time.shape(0) ||
      values.shape(1) != static_cast<py::ssize_t>(columns.size())) {
    throw python::ArgumentError(fmt::format(
        "{}: time must be 1-D and values 2-D with one row per time and one column per name", what));
  }
  output::CsvTable t;
  t.columns = columns;
  t.time.assign(time.data(), time.data() + time.shape(0));
  auto v = values.unchecked<2>();
  t.values.assign(columns.size(), std::vector<double>(static_cast<std::size_t>(time.shape(0))));
  for (py::ssize_t c = 0; c < values.shape(1); ++c) {
    for (py::ssize_t r = 0; r < values.shape(0); ++r) t.values[c][r] = v(r, c);
  }
  return t;
}

// output::compute_nrmse of two tables, the rows weighted as `weights` names
// (output::kRowWeightNames; ArgumentError otherwise): a dict with "variables" (name, nrmse or NaN
// when the reference is near-constant, max_abs_difference, near_constant), "norm",
// "interpolated", "time_points".
py::dict nrmse(const Array& time, const std::vector<std::string>& columns, const Array& values,
               const Array& ref_time, const std::vector<std::string>& ref_columns,
               const Array& ref_values, const std::string& weights) {
  output::RowWeights rows;
  try {
    rows = output::parse_row_weights(weights);
  } catch (const std::invalid_argument& e) {
    throw python::ArgumentError(fmt::format("compare: weights {}", e.what()));
  }
  const output::CsvTable result = table_of(time, columns, values, "result");
  const output::CsvTable reference = table_of(ref_time, ref_columns, ref_values, "reference");
  const output::NrmseReport report =
      output::compute_nrmse(result, reference, {"result", "reference"}, rows);
  py::list variables;
  for (const auto& v : report.variables) {
    variables.append(py::make_tuple(v.name, v.nrmse, v.max_abs_difference, v.near_constant));
  }
  py::dict d;
  d["variables"] = variables;
  d["norm"] = report.norm;
  d["interpolated"] = report.interpolated;
  d["time_points"] = report.time_points;
  return d;
}

// The module's exceptions (created once, at import, under the GIL; never freed: the
// interpreter holds them for the process's life).
PyObject* g_config_error = nullptr;
PyObject* g_run_error = nullptr;

void translate(std::exception_ptr p) {
  try {
    if (p) std::rethrow_exception(p);
  } catch (const config::ConfigError& e) {
    PyErr_SetString(g_config_error, e.what());
  } catch (const run::SetupError& e) {
    PyErr_SetString(g_config_error, e.what());
  } catch (const python::ArgumentError& e) {
    PyErr_SetString(PyExc_ValueError, e.what());
  } catch (const run::RunInterrupted& e) {
    PyErr_SetString(PyExc_KeyboardInterrupt, e.what());
  } catch (const output::OutputError& e) {
    PyErr_SetString(g_run_error, e.what());
  } catch (const py::builtin_exception&) {
    throw;  // pybind11's own translation (TypeError, ValueError, ...)
  } catch (const std::bad_alloc&) {
    throw;  // MemoryError
  } catch (const std::exception& e) {
    // Anything else ended a run (a worker that cannot start, a failing executor): RunError,
    // with the run's failure message where there is one.
    const std::string failure = run::failure_message(e);
    PyErr_SetString(g_run_error, failure.empty() ? e.what() : failure.c_str());
  }
}

}  // namespace

PYBIND11_MODULE(_macrostep, m) {
  m.doc() = "The compiled half of the macrostep package; use `import macrostep`.";
  g_config_error = PyErr_NewExceptionWithDoc(
      "macrostep.ConfigError",
      "A configuration or setup error: the message names file, line, key and allowed values, "
      "as the macrostep command prints it.",
      PyExc_ValueError, nullptr);
  g_run_error = PyErr_NewExceptionWithDoc(
      "macrostep.RunError", "A run that failed: the message names the time and the cause.",
      PyExc_RuntimeError, nullptr);
  m.add_object("ConfigError", py::handle(g_config_error));
  m.add_object("RunError", py::handle(g_run_error));
  py::register_exception_translator(translate);

  m.def(
      "run",
      [](const std::string& config_path, std::optional<std::string> config_text,
         std::vector<std::string> sets, const std::string& kind, std::optional<double> stop_time,
         std::optional<double> rtol, std::optional<double> step_size,
         std::optional<std::string> scheme, std::optional<std::string> estimator,
         std::optional<std::string> order, std::optional<std::string> executor,
         const std::string& output, bool overwrite, bool all_states, bool progress,
         const std::string& worker, const std::string& command_line) {
        python::RunRequest r;
        r.config_path = config_path;
        r.config_text = std::move(config_text);
        r.sets = std::move(sets);
        r.kind = kind;
        r.stop_time = stop_time;
        r.rtol = rtol;
        r.step_size = step_size;
        r.scheme = std::move(scheme);
        r.estimator = std::move(estimator);
        r.order = std::move(order);
        r.executor = std::move(executor);
        r.output = output;
        r.overwrite = overwrite;
        r.all_states = all_states;
        r.progress = progress;
        r.worker = worker;
        r.command_line = command_line;
        return reply_dict(run_released(r));
      },
      py::kw_only(), py::arg("config_path"), py::arg("config_text") = py::none(),
      py::arg("sets") = std::vector<std::string>{}, py::arg("kind") = "cosimulation",
      py::arg("stop_time") = py::none(), py::arg("rtol") = py::none(),
      py::arg("step_size") = py::none(), py::arg("scheme") = py::none(),
      py::arg("estimator") = py::none(), py::arg("order") = py::none(),
      py::arg("executor") = py::none(), py::arg("output"), py::arg("overwrite") = false,
      py::arg("all_states") = false, py::arg("progress") = false, py::arg("worker") = "",
      py::arg("command_line") = "",
      "One run through the run driver (run_call.hpp); returns the paths, columns, units, "
      "summary and wall time.");
  m.def(
      "check",
      [](const std::string& config_path, const std::optional<std::string>& config_text,
         const std::vector<std::string>& sets) { python::load(config_path, config_text, sets); },
      py::kw_only(), py::arg("config_path"), py::arg("config_text") = py::none(),
      py::arg("sets") = std::vector<std::string>{},
      "Reads and checks a configuration with its edits (ConfigError), running nothing.");
  m.def("read_table", &read_table, py::arg("path"),
        "A result table (CSV or HDF5) as (time, columns, values[row, column]).");
  m.def("nrmse", &nrmse, py::arg("time"), py::arg("columns"), py::arg("values"),
        py::arg("ref_time"), py::arg("ref_columns"), py::arg("ref_values"), py::arg("weights"),
        "NRMSE per variable of a result against a reference (macrostep compare).");
  m.def(
      "toml_document", [](const py::dict& d) { return python::toml_document(d); },
      py::arg("document"), "A dict as a TOML document.");
  m.def(
      "toml_value",
      [](const py::handle& v, const std::string& key) { return python::toml_value(v, key); },
      py::arg("value"), py::arg("key"), "One value as the VALUE of KEY=VALUE.");
#ifdef MACROSTEP_BUILD_BINARY
  m.attr("build_binary") = MACROSTEP_BUILD_BINARY;
#else
  m.attr("build_binary") = "";
#endif
  m.attr("version") = MACROSTEP_VERSION;
}

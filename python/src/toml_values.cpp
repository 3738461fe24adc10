// Python values as TOML (toml_values.hpp).
#include "toml_values.hpp"

#include <fmt/format.h>

#include <toml++/toml.h>
#include <sstream>

#include "run_call.hpp"

namespace macrostep::python {

namespace py = pybind11;

namespace {

toml::table to_table(const py::handle& object, const std::string& where);

// The TOML node of one Python value; `where` names it in messages ("subsystem[1].mass").
std::unique_ptr<toml::node> to_node(const py::handle& value, const std::string& where) {
  PyObject* o = value.ptr();
  if (PyBool_Check(o)) return std::make_unique<toml::value<bool>>(o == Py_True);
  if (PyUnicode_Check(o)) {
    return std::make_unique<toml::value<std::string>>(value.cast<std::string>());
  }
  if (PyLong_Check(o)) {
    return std::make_unique<toml::value<std::int64_t>>(value.cast<std::int64_t>());
  }
  if (PyFloat_Check(o)) return std::make_unique<toml::value<double>>(value.cast<double>());
  // numpy scalars and arrays: their Python values (tolist() gives a scalar or nested lists).
  if (!PyDict_Check(o) && !PyList_Check(o) && !PyTuple_Check(o) && py::hasattr(value, "tolist")) {
    return to_node(value.attr("tolist")(), where);
  }
  if (PyDict_Check(o)) return std::make_unique<toml::table>(to_table(value, where));
  if (PyList_Check(o) || PyTuple_Check(o)) {
    auto array = std::make_unique<toml::array>();
    std::size_t i = 0;
    for (const py::handle item : value) {
      auto node = to_node(item, fmt::format("{}[{}]", where, i++));
      array->push_back(std::move(*node));
    }
    return array;
  }
  throw ArgumentError(fmt::format("{}: a {} has no TOML form (str, bool, int, float, list or dict)",
                                  where,
                                  py::str(value.get_type().attr("__name__")).cast<std::string>()));
}

toml::table to_table(const py::handle& object, const std::string& where) {
  toml::table table;
  for (const auto& [key, value] : py::reinterpret_borrow<py::dict>(object)) {
    if (!PyUnicode_Check(key.ptr())) {
      throw ArgumentError(fmt::format("{}: the keys of a configuration are strings (got {})",
                                      where.empty() ? "the configuration" : where,
                                      py::repr(key).cast<std::string>()));
    }
    const std::string name = key.cast<std::string>();
    auto node = to_node(value, where.empty() ? name : where + "." + name);
    table.insert_or_assign(name, std::move(*node));
  }
  return table;
}

}  // namespace

std::string toml_document(const py::handle& document) {
  if (!PyDict_Check(document.ptr()))
    throw ArgumentError("a configuration must be a dict or a path");
  std::ostringstream text;
  text << toml::toml_formatter(to_table(document, ""));
  return text.str() + "\n";
}

std::string toml_value(const py::handle& value, const std::string& key) {
  if (PyDict_Check(value.ptr())) {
    throw ArgumentError(fmt::format(
        "set['{}']: a dict cannot be one edit; give its keys one by one ('{}.KEY': value)", key,
        key));
  }
  toml::table wrapper;
  wrapper.insert("v", std::move(*to_node(value, key)));
  std::ostringstream text;
  text << toml::toml_formatter(wrapper);
  const std::string rendered = text.str();
  if (rendered.rfind("v = ", 0) != 0 || rendered.find('\n') != std::string::npos) {
    throw ArgumentError(
        fmt::format("set['{}']: this value has no one-line TOML form; give the edit as the text "
                    "'{}=VALUE'",
                    key, key));
  }
  return rendered.substr(4);
}

}  // namespace macrostep::python

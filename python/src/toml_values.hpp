// Python values as TOML (toml++ renders them): a configuration given as a dict, and the values of
// the edits given as {key: value}, go through the configuration reader as text, so that they are
// checked, and their errors told, exactly as a file's.
#pragma once

#include <pybind11/pybind11.h>

#include <string>

namespace macrostep::python {

// The TOML document of `document` (a dict of str keys): str, bool, int, float (numpy scalars
// too), lists and tuples (arrays; a list of dicts is an array of tables, [[name]]) and dicts
// (tables). Throws ArgumentError (run_call.hpp) naming the key of a value of another type or
// of a non-string key. Needs the GIL.
std::string toml_document(const pybind11::handle& document);

// One value as the VALUE of an edit KEY=VALUE: "1e-05", "true", "\"text\"", "[1.0, 2.0]".
// Throws ArgumentError for a dict (give its keys one by one) and as above. Needs the GIL.
std::string toml_value(const pybind11::handle& value, const std::string& key);

}  // namespace macrostep::python

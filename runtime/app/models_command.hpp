// `macrostep models`: the reference of every model with a parameter description
// (library::ModelEntry, model_registry.hpp) as Markdown: its summary and, per parameter, the key,
// type, default, unit and meaning. docs/reference/models.md is this output; a test keeps the two
// equal, so the documentation cannot drift from the parameters the reader accepts.
#pragma once

#include <string>

namespace macrostep::app {

// The Markdown text (deterministic: registration order, then parameter order).
std::string models_reference();

}  // namespace macrostep::app

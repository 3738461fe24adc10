// Names in messages. A name that a model declares (a plugin's or an FMU's variable names) or
// that a user wrote reaches error messages through quoted(), so that a message stays one line
// and shows exactly what the name holds, whatever bytes it contains.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace macrostep::model {

// The name in double quotes, with '"' and '\' escaped as \" and \\, and control characters
// (bytes below 0x20 and 0x7f) as \n, \r, \t or \xNN; other bytes (UTF-8 included) unchanged.
// A name longer than 80 bytes is cut there: "<first 80 bytes>..." (N characters).
std::string quoted(std::string_view name);

// The position of the first control character (a byte below 0x20, or 0x7f) in `text`, if any.
// Names with one are refused where they are declared: they would split messages and result
// columns.
std::optional<std::size_t> control_character(std::string_view text);

}  // namespace macrostep::model

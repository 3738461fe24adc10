// Names in messages (names.hpp).
#include "macrostep/model/names.hpp"

#include <cstdio>

namespace macrostep::model {

namespace {

constexpr std::size_t kShownBytes = 80;

bool is_control(char c) {
  const auto b = static_cast<unsigned char>(c);
  return b < 0x20 || b == 0x7f;
}

}  // namespace

std::string quoted(std::string_view name) {
  const std::string_view shown = name.substr(0, kShownBytes);
  std::string text = "\"";
  for (const char c : shown) {
    switch (c) {
      case '"':
        text += "\\\"";
        break;
      case '\\':
        text += "\\\\";
        break;
      case '\n':
        text += "\\n";
        break;
      case '\r':
        text += "\\r";
        break;
      case '\t':
        text += "\\t";
        break;
      default:
        if (is_control(c)) {
          char hex[8];
          std::snprintf(hex, sizeof hex, "\\x%02x",
                        static_cast<unsigned>(static_cast<unsigned char>(c)));
          text += hex;
        } else {
          text += c;
        }
    }
  }
  if (shown.size() < name.size()) {
    return text + "...\" (" + std::to_string(name.size()) + " characters)";
  }
  return text + "\"";
}

std::optional<std::size_t> control_character(std::string_view text) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (is_control(text[i])) return i;
  }
  return std::nullopt;
}

}  // namespace macrostep::model

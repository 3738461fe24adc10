// The entries of the built-in coupling laws (private to macrostep_system). Each is defined in
// its law's own source file; law_registry.cpp registers them, which also keeps their object
// files in every program linked against the static library.
#pragma once

#include <string>
#include <string_view>

#include "macrostep/system/law_registry.hpp"

namespace macrostep::system::detail {

// The unit of an effort between two positions of `position_unit`: "N" for "m", "N m" for
// "rad", "" otherwise (spring/damper and joint laws).
std::string effort_unit(std::string_view position_unit);

LawEntry spring_damper_entry();
LawEntry rotational_spring_damper_entry();
LawEntry signal_entry();
LawEntry displacement_entry();
LawEntry hydraulic_node_entry();
LawEntry joint_entry();

}  // namespace macrostep::system::detail

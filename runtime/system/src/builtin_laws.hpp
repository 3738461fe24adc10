// The entries of the built-in coupling laws (private to macrostep_system). Each is defined in
// its law's own source file; law_registry.cpp registers them, which also keeps their object
// files in every program linked against the static library.
#pragma once

#include "macrostep/system/law_registry.hpp"

namespace macrostep::system::detail {

LawEntry spring_damper_entry();
LawEntry rotational_spring_damper_entry();
LawEntry signal_entry();
LawEntry displacement_entry();
LawEntry hydraulic_node_entry();
LawEntry joint_entry();

}  // namespace macrostep::system::detail

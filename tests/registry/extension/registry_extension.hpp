// A coupling law and a model defined outside the runtime and the library, registered through
// the registries alone (law_registry.hpp, model_registry.hpp).
//
//  - law "scaled_difference": reads [y_a, y_b], writes u = factor·(y_a − y_b); key `factor`
//    (required). A linear spring between two positions when factor is a stiffness.
//  - model "test_body": one mass on a spring to ground, driven by the input `force`; keys
//    `mass` (> 0, required), `stiffness` (>= 0, default 0), `x0` (default 0); outputs x, v.
#pragma once

namespace macrostep::test {

// Registers both, once per process however often it is called. Thread-safe.
void register_registry_extension();

}  // namespace macrostep::test

// The test-only model "test_body" and the registration of the extension (registry_extension.hpp).
#include <memory>
#include <mutex>
#include <string>

#include "macrostep/library/model_registry.hpp"
#include "macrostep/library/oscillator_mass.hpp"
#include "macrostep/system/law_registry.hpp"
#include "registry_extension.hpp"

namespace macrostep::test {

system::LawEntry scaled_difference_entry();

namespace {

// The body's own parameter struct; the library's OscillatorMass integrates it.
struct TestBodyParameters {
  double mass = 0.0, stiffness = 0.0, x0 = 0.0;
};

const library::ParameterBinding<TestBodyParameters>& body_binding() {
  using P = TestBodyParameters;
  static const auto binding = [] {
    library::ParameterBinding<P> b;
    b.number("mass", &P::mass, library::Bound::kPositive, true, "kg", "the body's mass")
        .number("stiffness", &P::stiffness, library::Bound::kNonNegative, false, "N/m",
                "spring to ground")
        .number("x0", &P::x0, library::Bound::kAny, false, "m", "initial position");
    return b;
  }();
  return binding;
}

library::ModelEntry test_body_entry() {
  library::ModelEntry e;
  e.name = "test_body";
  e.summary = "one mass on a spring to ground, driven by a force";
  e.parameters = body_binding().specs();
  e.build = [](const library::ParameterValues& v) -> std::unique_ptr<model::Subsystem> {
    const TestBodyParameters p = body_binding().to_struct(v);
    library::OscillatorMassParameters o;
    o.mass = p.mass;
    o.stiffness = p.stiffness;
    o.x0 = p.x0;
    o.force_input = true;
    return std::make_unique<library::OscillatorMass>(o);
  };
  return e;
}

}  // namespace

void register_registry_extension() {
  static std::once_flag once;
  std::call_once(once, [] {
    system::register_law(scaled_difference_entry());
    library::register_model(test_body_entry());
  });
}

}  // namespace macrostep::test

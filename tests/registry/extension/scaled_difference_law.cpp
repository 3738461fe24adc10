// The test-only coupling law "scaled_difference" (registry_extension.hpp).
#include <array>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "macrostep/system/law_registry.hpp"
#include "registry_extension.hpp"

namespace macrostep::test {

namespace {

struct ScaledDifferenceParameters final : system::LawParameters {
  double factor = 0.0;
};

class ScaledDifferenceLaw final : public system::CouplingLaw {
 public:
  ScaledDifferenceLaw(std::string name, system::OutputRef a, system::OutputRef b, double factor)
      : name_(std::move(name)), reads_{a, b}, factor_(factor) {}
  std::span<const system::OutputRef> reads() const override { return reads_; }
  std::span<const std::string> variable_names() const override { return {&name_, 1}; }
  void evaluate(std::span<const double> y, std::span<double> u) const override {
    u[0] = factor_ * (y[0] - y[1]);
  }
  void jacobian(std::span<const double>, std::span<double> d) const override {
    d[0] = factor_;
    d[1] = -factor_;
  }
  bool has_feedthrough() const override { return false; }

 private:
  std::string name_;
  std::array<system::OutputRef, 2> reads_;
  double factor_;
};

}  // namespace

system::LawEntry scaled_difference_entry() {
  system::LawEntry e;
  e.name = "scaled_difference";
  e.reads = 2;
  e.read_order = "[a, b]";
  e.writes = {{"", ""}};
  e.keys = {{"factor", "u = factor·(a − b) (required)"}};
  e.parse = [](const system::LawTable& table,
               std::size_t) -> std::shared_ptr<const system::LawParameters> {
    auto p = std::make_shared<ScaledDifferenceParameters>();
    p->factor = table.number("factor");
    return p;
  };
  e.make = [](std::vector<std::string> names, std::span<const system::OutputRef> reads,
              const system::LawParameters& p) -> std::unique_ptr<system::CouplingLaw> {
    const auto& s = system::law_parameters<ScaledDifferenceParameters>(p, "scaled_difference");
    return std::make_unique<ScaledDifferenceLaw>(std::move(names[0]), reads[0], reads[1], s.factor);
  };
  return e;
}

}  // namespace macrostep::test

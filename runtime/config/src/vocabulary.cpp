// The names of the configuration's own concepts (run_config.hpp: schemes, Gauss–Seidel end
// values, predictors, executors, micro-step stops, row times) and which estimators belong to
// which scheme.
#include <optional>
#include <string_view>
#include <vector>

#include "macrostep/config/run_config.hpp"

namespace macrostep::config {

std::optional<CosimScheme> parse_scheme(std::string_view name) {
  return model::parse_name(kCosimSchemeNames, name);
}
std::optional<PredictorKind> parse_predictor(std::string_view name) {
  return model::parse_name(kPredictorNames, name);
}
std::optional<GaussSeidelEndValue> parse_gauss_seidel_end_value(std::string_view name) {
  return model::parse_name(kGaussSeidelEndValueNames, name);
}
std::optional<ExecutorKind> parse_executor(std::string_view name) {
  return model::parse_name(kExecutorNames, name);
}
std::optional<MicroStepStop> parse_micro_step_stop(std::string_view name) {
  return model::parse_name(kMicroStepStopNames, name);
}

std::optional<RowTimes> parse_row_times(std::string_view name) {
  return model::parse_name(kRowTimesNames, name);
}
const char* to_string(RowTimes r) {
  return model::name_of(kRowTimesNames, r);
}
std::vector<std::string_view> row_times_names() {
  return model::names_of(kRowTimesNames);
}

const char* to_string(CosimScheme s) {
  return model::name_of(kCosimSchemeNames, s);
}
const char* to_string(PredictorKind p) {
  return model::name_of(kPredictorNames, p);
}
const char* to_string(GaussSeidelEndValue e) {
  return model::name_of(kGaussSeidelEndValueNames, e);
}
const char* to_string(ExecutorKind e) {
  return model::name_of(kExecutorNames, e);
}
const char* to_string(MicroStepStop m) {
  return model::name_of(kMicroStepStopNames, m);
}

std::vector<std::string_view> scheme_names() {
  return model::names_of(kCosimSchemeNames);
}
std::vector<std::string_view> predictor_names() {
  return model::names_of(kPredictorNames);
}
std::vector<std::string_view> gauss_seidel_end_value_names() {
  return model::names_of(kGaussSeidelEndValueNames);
}
std::vector<std::string_view> executor_names() {
  return model::names_of(kExecutorNames);
}
std::vector<std::string_view> micro_step_stop_names() {
  return model::names_of(kMicroStepStopNames);
}

control::Estimator default_estimator(CosimScheme s) {
  if (s == CosimScheme::kGaussSeidel) return control::Estimator::kNone;  // fixed H (D-10)
  return s == CosimScheme::kExplicit || s == CosimScheme::kAuto ? control::Estimator::kExMD
                                                                : control::Estimator::kImMD;
}

bool estimator_fits(CosimScheme s, control::Estimator e) {
  if (s == CosimScheme::kAuto) return e != control::Estimator::kNone;  // chooses by the estimate
  if (e == control::Estimator::kNone) return true;
  if (s == CosimScheme::kGaussSeidel) return false;  // fixed H only (METHODS D-10)
  const bool implicit_estimator = e == control::Estimator::kImMD || e == control::Estimator::kImCV;
  return implicit_estimator == (s != CosimScheme::kExplicit);
}

std::vector<std::string_view> fitting_estimator_names(CosimScheme s) {
  const control::Estimator first = default_estimator(s);
  std::vector<std::string_view> names;
  if (first != control::Estimator::kNone) names.push_back(control::to_string(first));
  for (const auto& [e, name] : control::kEstimatorNames) {
    if (e != first && e != control::Estimator::kNone && estimator_fits(s, e)) {
      names.push_back(name);
    }
  }
  if (estimator_fits(s, control::Estimator::kNone)) {
    names.push_back(control::to_string(control::Estimator::kNone));
  }
  return names;
}

}  // namespace macrostep::config

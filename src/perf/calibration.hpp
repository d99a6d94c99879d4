#pragma once
// Calibration from a measurement (docs/perf-model.md, "Calibration"): a user who ran the workload
// on the GPU they have gives its measured speed; one multiplier on the stack's efficiency factors
// (EfficiencyTable::speed_scale) is fitted so that the model reproduces it, and every other GPU's
// prediction moves by the same stack factor. Pure.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/catalog.hpp"
#include "inputs/efficiency.hpp"
#include "inputs/layout.hpp"
#include "inputs/workload.hpp"
#include "perf/perf.hpp"

namespace gpusel {

// Whether a larger value is faster (rates) or slower (times).
bool higher_is_faster(MeasuredMetric metric);
// The figure of `estimate` the metric names; 0 when the estimate has no such figure.
double speed_metric_value(const PerfEstimate& estimate, MeasuredMetric metric);

// The validation group whose out-of-sample error bands a workload's speed (the keys of
// EfficiencyTable::speed_bands): "non-llm" for models without tokens, "training", "prefill" for
// inference bound by its TTFT target or without output tokens, otherwise "decode".
std::string_view speed_band_group(const Workload& workload);

// One measured point against the model, before and after the fit.
struct CalibratedPoint {
    SpeedCalibrationPoint point;
    MeasuredMetric metric = MeasuredMetric::training_tokens_per_s;
    double predicted_before = 0;
    double predicted_after = 0;
    double point_scale = 1;  // the multiplier this point alone asks for
    // The size of the configuration measured (configuration_gpus of the layout it was predicted
    // on): the GPUs of one model copy (inference) or of the whole job (training).
    int configuration_gpus = 0;
};

struct SpeedCalibration {
    bool applied = false;  // false: no speed points in the workload
    double scale = 1;      // geometric mean of the points' multipliers, within [0.2, 5]
    std::vector<CalibratedPoint> points;
    std::vector<std::string> notes;  // a multiplier at its bound, fractions capped at 0.98
};

// The software stack the points ran on: `perf --stack` when given (a class, or an engine whose
// rules apply), else what the workload implies.
struct CalibrationStack {
    ServingStack stack = ServingStack::automatic;
    std::string engine;  // empty: the workload's runtime.engine
};

// The speed_scale that makes the model reproduce the workload's calibration.speed points (each on
// its GPU, count and batch, laid out by fitting_layout, predicted on `stack`), combined as a
// geometric mean. Points on a GPU the catalog lacks, or that no layout holds, are InputErrors
// (their file position is in the message). `efficiency` is the table before calibration.
SpeedCalibration calibrate_speed(const Workload& workload, const Catalog& catalog, const EfficiencyTable& efficiency,
                                 const CalibrationStack& stack = {});

// One sentence for a plan: the points, what the model said and the factor every GPU now carries.
// Empty when not applied.
std::string describe_calibration(const SpeedCalibration& calibration);

// The GPUs that decide how a configuration runs, the size its measurement carries to: inference,
// one model copy's (tensor × pipeline parallel; replicas are copies of it, run independently);
// training, the whole job's (its data-parallel communication is part of the step).
int configuration_gpus(const Workload& workload, const Layout& layout);

// A measured speed's own uncertainty, ± of the speed (10th–90th percentile): the run-to-run spread
// of a benchmark run again on the same system. MLPerf Inference's TEST05 accepts a re-run with
// other random seeds within 5 % of the submitted performance (mlcommons/inference,
// compliance/nvidia/TEST05/README.md); that tolerance is taken as the band. An assumption: how far
// a user's own benchmark strays between runs is not measured here.
inline constexpr double measured_speed_noise_fraction = 0.05;

// The speed band of a prediction on `gpu` at `configuration_gpus` (configuration_gpus): where
// a calibration point measured that GPU type at that size and the calibrated model reproduces it
// within the noise, the measurement's noise (1 ± measured_speed_noise_fraction, median 1) replaces
// the model's out-of-sample band; elsewhere none (the caller keeps the cross-validated band:
// other GPU types and sizes are carried from the measurement by the model, docs/perf-model.md
// "Calibration").
std::optional<SpeedBandFactors> measured_speed_band(const SpeedCalibration& calibration, std::string_view gpu,
                                                    int configuration_gpus);

// `efficiency` with the calibration applied (speed_scale multiplied in).
EfficiencyTable calibrated_efficiency(const EfficiencyTable& efficiency, const SpeedCalibration& calibration);

}  // namespace gpusel

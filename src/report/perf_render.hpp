#pragma once
// Renderers of `gpusel perf`: the terminal view and JSON format 1 of one estimate. Pure
// functions of the result: they format what estimate_perf() computed and never recompute.

#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "inputs/workload.hpp"
#include "perf/calibration.hpp"
#include "perf/perf.hpp"

namespace gpusel {

enum class PerfFormat { table, json };

// One workload estimated on `count` GPUs of one catalog type.
struct PerfResult {
    Workload workload;
    std::string gpu_id;
    int count = 1;
    PerfEstimate estimate;
    SpeedCalibration calibration;  // measured speeds the estimate was calibrated on (applied: false = none)
    std::string band_group;        // speed_band_group(workload)
    SpeedBandFactors band;         // measured / predicted speed, 10th–90th percentile out of sample
    // The calibration measured this GPU at this size: `band` is the measurement's noise
    // (measured_speed_band, perf/calibration.hpp), not the model's out-of-sample band.
    bool band_measured = false;
    // deployment.redundancy (plan/redundancy.hpp): the replicas of the `count` GPUs ordered that are
    // held out as spares, carrying no load (the estimate's layout serves on the rest), and the
    // spares an order for the estimate's replicas_needed would add.
    int spare_replicas = 0;
    int spare_replicas_for_needed = 0;
};

struct PerfStyle {
    bool quiet = false;  // --quiet: no notes block
};

// A few lines per phase: step time, throughput, MFU and time to train for training; batch,
// latency, throughput, the percentile under the offered load and the SLO for inference; then
// the bottleneck with its detail and remedy, and the estimate's notes unless quiet.
void render_perf_table(const PerfResult& result, std::ostream& out, const PerfStyle& style);

// JSON format 1: {format_version, workload, estimates: [one entry]}. Each entry's `band` gives
// low/high for every speed figure (times divide by the band's factors), and `calibration` the
// measured points with the model's figure before and after (null without calibration). Numbers follow the one
// JSON number policy (io/json_output.hpp); token rates of a model without tokens are null with
// a note saying why.
void render_perf_json(const PerfResult& result, std::ostream& out);

// {group, low_factor, high_factor, figures: {"training.tokens_per_s": {low, high}, ...}}: the band
// of every speed figure present in the `training` and `inference` objects (rates × the factors,
// times ÷ them); shared by perf and plan JSON (`perf.band`).
nlohmann::ordered_json speed_band_json(std::string_view group, const SpeedBandFactors& band,
                                       const nlohmann::ordered_json& training, const nlohmann::ordered_json& inference,
                                       std::vector<std::string>& notes);

// {tensor_parallel, pipeline_parallel, data_parallel, sharding, expert_parallel, context_parallel,
// offload}: one layout as perf, memory and plan JSON print it.
nlohmann::ordered_json layout_json(const Layout& layout);

// {scale, points: [{gpu, count, metric, measured, predicted_before, predicted_after, from}]}, or
// null when no calibration was applied; shared by perf and plan JSON.
nlohmann::ordered_json speed_calibration_json(const SpeedCalibration& calibration, std::vector<std::string>& notes);

}  // namespace gpusel

#pragma once
// Renderers of `gpusel perf`: the terminal view and JSON format 1 of one estimate. Pure
// functions of the result: they format what estimate_perf() computed and never recompute.

#include <iosfwd>
#include <string>

#include "inputs/workload.hpp"
#include "perf/perf.hpp"

namespace gpusel {

enum class PerfFormat { table, json };

// One workload estimated on `count` GPUs of one catalog type.
struct PerfResult {
    Workload workload;
    std::string gpu_id;
    int count = 1;
    PerfEstimate estimate;
};

struct PerfStyle {
    bool quiet = false;  // --quiet: no notes block
};

// A few lines per phase: step time, throughput, MFU and time to train for training; batch,
// latency, throughput, the percentile under the offered load and the SLO for inference; then
// the bottleneck with its detail and remedy, and the estimate's notes unless quiet.
void render_perf_table(const PerfResult& result, std::ostream& out, const PerfStyle& style);

// JSON format 1: {format_version, workload, estimates: [one entry]}. Numbers follow the one
// JSON number policy (io/json_output.hpp); token rates of a model without tokens are null with
// a note saying why.
void render_perf_json(const PerfResult& result, std::ostream& out);

}  // namespace gpusel

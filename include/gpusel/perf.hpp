#pragma once
// Performance model: a roofline with measured efficiency, per phase. Pure.
// Equations and factors with sources: docs/perf-model.md, data/efficiency.yaml.

#include <optional>
#include <string>
#include <vector>

#include "gpusel/catalog.hpp"
#include "gpusel/layout.hpp"
#include "gpusel/workload.hpp"

namespace gpusel {

// Achieved fractions of peak, by GPU family and phase (data/efficiency.yaml, compiled in).
struct EfficiencyFactors {
    double training_compute = 0.45;       // MFU-level fraction of dense peak, large transformers
    double cnn_training_compute = 0.2;
    double prefill_compute = 0.6;
    double decode_bandwidth = 0.75;       // fraction of DRAM bandwidth at large batch
    double decode_bandwidth_batch1 = 0.5;
    double decode_overhead_s = 0.0;       // fixed per generated token (kernel launches)
    double prefill_floor_s = 0.0;
    double interconnect = 0.75;           // fraction of unidirectional link bandwidth
    std::string source;
};

struct EfficiencyTable {
    // Factors for `gpu`: the entry of its architecture family, else the default entry.
    EfficiencyFactors for_gpu(const GpuSpec& gpu) const;
    std::vector<std::pair<std::string, EfficiencyFactors>> by_family;  // "ampere", "hopper", ...
    EfficiencyFactors fallback;
};

EfficiencyTable builtin_efficiency();

enum class Resource { compute, memory_bandwidth, memory_capacity, interconnect, host_link, input_pipeline };
std::string_view to_string(Resource resource);  // "compute", "memory-bandwidth", ...

struct Bottleneck {
    Resource resource = Resource::compute;
    double share = 0;            // share of step time spent on this resource, 0..1
    double gpu_utilization = 0;  // what nvidia-smi's utilisation would show, 0..1
    std::string detail;          // the numbers that show it
    std::string remedy;          // the fix that pays most
};

struct TrainingPerf {
    double step_time_s = 0;
    double tokens_per_s = 0;   // whole candidate
    double samples_per_s = 0;
    double mfu = 0;
    double time_to_train_s = 0;
    double compute_s = 0, memory_s = 0, communication_s = 0, input_s = 0;  // per step
    bool meets_deadline = true;
};

struct InferencePerf {
    double ttft_s = 0;
    double tpot_s = 0;
    double output_tokens_per_s = 0;
    double prefill_tokens_per_s = 0;
    double requests_per_s = 0;     // capacity of the candidate at `batch`
    double p99_ttft_s = 0;
    double p99_tpot_s = 0;
    double p99_e2e_s = 0;
    int batch = 0;
    int replicas = 1;
    bool meets_slo = true;
    double max_requests_per_s_meeting_slo = 0;
};

struct PerfEstimate {
    std::optional<TrainingPerf> training;
    std::optional<InferencePerf> inference;
    Bottleneck bottleneck;
    std::vector<std::string> notes;
};

struct PerfQuery {
    Layout layout;
    int micro_batch = 0;  // 0 = from workload
    int batch = 0;        // inference batch per replica; 0 = workload or planner's choice
};

PerfEstimate estimate_perf(const Workload& workload, const GpuSpec& gpu, const PerfQuery& query,
                           const EfficiencyTable& efficiency);

}  // namespace gpusel

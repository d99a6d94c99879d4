#pragma once
// Prefill/decode disaggregation (issue 34 item 4; docs/perf-model.md, "Disaggregated serving"):
// x prefill and y decode workers per replica, sized against TTFT and TPOT, the KV cache moved
// between them over the real interconnect, compared with co-located serving on cost per million
// tokens. Plain values; plan/disaggregation.cpp fills them, make_plan stores them in
// RolePlan::disaggregated.

#include <string>
#include <vector>

namespace gpusel {

struct DisaggregatedPhase {
    std::string gpu;  // catalog id
    std::string gpu_name;
    int workers = 0;          // per replica
    int tensor_parallel = 1;  // GPUs per worker
    int expert_parallel = 1;
    int gpus = 0;             // workers × tensor_parallel × replicas
    double utilisation = 0;   // busy share of the phase's workers at the load
};

struct DisaggregatedPlan {
    DisaggregatedPhase prefill;
    DisaggregatedPhase decode;
    int replicas = 1;                  // prefill+decode groups serving the load
    double kv_transfer_s = 0;          // one request's KV cache, prefill worker → decode worker
    std::string kv_link;               // the link it moves over, e.g. "NVLink 900 GB/s" or "InfiniBand 400 Gb/s"
    double ttft_s = 0;                 // at the SLO percentile, transfer included
    double tpot_s = 0;
    bool meets_slo = false;
    double tco_usd = 0;                // over the horizon
    double usd_per_million_tokens = 0;
    double colocated_usd_per_million_tokens = 0;  // the role's co-located pick
    bool chosen = false;               // cheaper than co-located by more than the tie margin, SLO met
    std::string why;
};

}  // namespace gpusel

#pragma once
// Prefill/decode disaggregation (issue 34 item 4; docs/perf-model.md, "Disaggregated serving"):
// x prefill and y decode workers per replica, sized against TTFT and TPOT, the KV cache moved
// between them over the real interconnect, compared with co-located serving on cost per million
// tokens. Plain values; plan/disaggregation.cpp fills them, make_plan stores them in
// RolePlan::disaggregated.

#include <optional>
#include <string>
#include <vector>

#include "cost/cost.hpp"

namespace gpusel {

struct DisaggregatedPhase {
    std::string gpu;  // catalog id
    std::string gpu_name;
    int workers = 0;          // per replica
    int tensor_parallel = 1;  // GPUs per worker
    int expert_parallel = 1;
    int gpus = 0;            // (workers × replicas + spare_workers) × tensor_parallel
    double utilisation = 0;  // busy share of the phase's workers at the load
    int spare_workers = 0;   // deployment.redundancy: workers kept spare, carrying no load (all replicas)
    int batch = 0;           // decode: most sequences a worker runs (the largest meeting the TPOT SLO); prefill: 1
    double step_s = 0;       // prefill: one prompt's prefill; decode: one step at `batch`
};

// What a split orders: one entry per GPU type (one when both phases use the same type), priced
// as the co-located pick prices that type (estimate_cost with its best candidate's offer).
struct DisaggregatedOrder {
    std::string gpu;  // catalog id
    std::string gpu_name;
    int gpus = 0;  // spare workers included
    CostEstimate cost;
};

struct DisaggregatedPlan {
    DisaggregatedPhase prefill;
    DisaggregatedPhase decode;
    int replicas = 1;              // prefill+decode groups serving the load
    double kv_transfer_s = 0;      // one request's KV cache, prefill worker → decode worker
    std::string kv_link;           // the link it moves over, e.g. "NVLink 900 GB/s" or "InfiniBand 400 Gb/s"
    double kv_bytes = 0;           // one prompt's KV cache, whole model
    double percentile = 99;        // inference.slo.percentile, the one ttft_s and tpot_s are at
    double ttft_s = 0;             // at the SLO percentile, transfer included
    double request_latency_s = 0;  // the engine's per request (front end, hand-off), in ttft_s
    double tpot_s = 0;
    bool meets_slo = false;
    double tco_usd = 0;  // over the horizon
    double usd_per_million_tokens = 0;
    double colocated_usd_per_million_tokens = 0;  // the role's co-located pick
    double colocated_tco_usd = 0;
    int colocated_gpus = 0;
    double requests_per_s = 0;  // the offered load
    // The speed band's slow quantile at objective.confidence (<= 1): the split is sized for
    // requests_per_s / speed_margin, as the co-located pick adds margin replicas for the band.
    double speed_margin = 1;
    double prefill_share = 0;  // of the split's busy GPU-seconds, the prefill's
    bool chosen = false;       // cheaper than co-located by more than the tie margin, SLO met
    bool requested = false;    // the workload fixed both phases (GPU and count): deploy emits it
    std::string why;
    // When chosen: what the procurement orders in place of the co-located pick; their TCOs sum to
    // tco_usd.
    std::vector<DisaggregatedOrder> order;
};

// Seconds to move `bytes` over `lanes` links of `bytes_per_s` each in parallel, plus one latency:
// bytes / (lanes × bytes_per_s) + latency_s.
double kv_transfer_seconds(double bytes, int lanes, double bytes_per_s, double latency_s);

// The prefill pool of one replica group: `workers` servers, Poisson arrivals of `requests_per_s`,
// each prompt `prefill_s` (deterministic service). M/D/c waits approximated as half the M/M/c
// (Erlang C) wait, with the exponential tail P(W > t) = P_w·exp(−P_w·t / W̄), as the co-located
// model does (perf/inference.cpp). Unstable (utilisation ≥ 1): stable = false.
struct PrefillQueue {
    bool stable = false;
    double utilisation = 0;
    double wait_s = 0;  // at `quantile`
};
PrefillQueue prefill_queue(int workers, double requests_per_s, double prefill_s, double quantile);

// Forward declarations: the planner's types (plan/plan.hpp includes this header).
struct RolePlan;
class Catalog;
struct EfficiencyTable;

// Sizes the disaggregated deployment of a generation serving role whose workload has
// deployment.disaggregated, against its co-located pick (plan.winner; the GPU types tried are
// the ranked candidates', or the fixed ones). Empty when the role has no pick or no
// deployment.disaggregated. Every time comes from estimate_perf; every price from estimate_cost
// with the offer of the co-located candidate of that GPU type.
std::optional<DisaggregatedPlan> plan_disaggregated(const RolePlan& plan, const Catalog& catalog,
                                                    const EfficiencyTable& efficiency);

}  // namespace gpusel

#pragma once
// Mixed GPU types in one serving role (issue 37 item 3; docs/cost-model.md, "Mixed fleets"):
// requests routed by length to GPU types (e.g. short prompts on L4s, long ones on H100s), sized
// so that each type's share meets the SLO, compared with the best single type. Plain values;
// plan/mix.cpp fills them, make_plan stores them in RolePlan::mix.

#include <string>
#include <vector>

#include "cost/cost.hpp"

namespace gpusel {

// One GPU type of a mix: the requests it serves and what it costs.
struct MixPart {
    std::string gpu;  // catalog id
    std::string gpu_name;
    int replicas = 0;
    int gpus = 0;
    int max_input_tokens = 0;  // the routing rule: requests up to this length (the last part: all longer)
    double request_share = 0;  // of all requests, (0, 1]
    double tco_usd = 0;        // over the horizon
    // What the part orders (the procurement's line when the mix is chosen): its GPUs in use and
    // the cost model's estimate of them, offer and spares included.
    int count = 0;
    Acquisition acquisition = Acquisition::buy_new;
    CostEstimate cost;
};

struct MixPlan {
    std::vector<MixPart> parts;      // by ascending max_input_tokens
    std::string routing_rule;        // in words, e.g. "input ≤ 1,024 tokens → L4, longer → H100-SXM5"
    double tco_usd = 0;              // the mix's
    double best_single_tco_usd = 0;  // the role's pick's
    double saving_fraction = 0;      // 1 − tco / best_single
    bool chosen = false;             // saves more than the tie margin (plan.hpp)
    std::string why;                 // why chosen, or why not
};

}  // namespace gpusel

#pragma once
// What a role's decision rests on and how firmly (docs/cost-model.md, "Robustness"): bands on
// the estimates that rank candidates, the share of sampled scenarios in which the pick stays
// best and feasible, and the input values at which the winner changes. Plain results; the
// analysis is plan/robustness.hpp.

#include <string>
#include <vector>

namespace gpusel {

// One ranked candidate's band (error bars): 5th–95th percentile of the sampled scenarios.
struct EstimateBand {
    // Multipliers on every time and latency of the candidate (time-to-train, step, P99 TTFT,
    // TPOT, e2e: all scale as 1 / speed here): low is the fast end.
    double time_low_factor = 1;
    double time_high_factor = 1;
    double tco_low_usd = 0;
    double tco_high_usd = 0;
    int replicas_low = 0;  // inference: replicas needed at the fast and the slow end
    int replicas_high = 0;
    double p_feasible = 0;  // share of scenarios in which it still fits and meets deadline, SLO, budget as ordered
    bool sampled = false;   // the analysis re-ranked it (a row outside its pool has no band: the figures above are 0)
};

// Where the winner changes when one input moves, the rest held.
struct Sensitivity {
    std::string input;  // "horizon_months", "utilization", "price:<offer>:<acquisition>", ...
    std::string label;  // the input in words: "horizon", "price of h100-hgx-thinkmate (buy new)"
    std::string unit;   // "months", "fraction", "USD/kWh", "USD", "req/s", "tokens", "runs", "s"
    double current = 0;
    double break_even = 0;   // the nearest value at which another candidate wins (or none is feasible)
    std::string new_winner;  // "H100-SXM5 ×8 buy new", or "none feasible"
    double distance = 0;     // |ln(break_even / current)|: smaller is more decisive
};

// The pick's objective score as one input moves over a plausible span (the tornado chart).
struct Swing {
    std::string input;
    std::string label;
    std::string unit;
    double low_value = 0;
    double high_value = 0;
    double low_score = 0;  // the pick's score (objective units) at low_value
    double high_score = 0;
    bool flips_low = false;  // another candidate wins at low_value
    bool flips_high = false;
};

struct RoleUncertainty {
    bool computed = false;  // false: no winner, or nothing to compare
    int samples = 0;
    unsigned long long seed = 0;
    double p_best = 0;                  // share of scenarios in which the pick ranks first
    double p_feasible = 0;              // ... in which the pick as ordered still fits and meets deadline, SLO, budget
    double confidence = 0.9;            // objective.confidence: the p_feasible a pick must reach
    std::vector<int> tied_with;         // ranks (1-based, in RolePlan::ranked) statistically tied with the pick
    std::string speed_phase;            // the validation group whose error bands the pick's speed
    double speed_band_fraction = 0;     // ± of the pick's speed
    bool speed_band_measured = false;   // the pick's GPU and size were measured: the band is the noise of
                                        // the measurement (perf/calibration.hpp, measured_speed_band)
    double price_band_fraction = 0;     // ± of the pick's price (by its price kind)
    std::string score_unit;             // what the scores in `tornado` count ("USD", "s", "kWh", "USD per <unit>")
    double score = 0;                   // the pick's score now
    std::vector<EstimateBand> bands;    // aligned with RolePlan::ranked (empty entries when not sampled)
    std::vector<std::string> warnings;  // one line each
    std::vector<Sensitivity> sensitivity;  // most decisive first
    std::vector<Swing> tornado;            // largest swing first
};

}  // namespace gpusel

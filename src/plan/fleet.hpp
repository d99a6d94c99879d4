#pragma once
// Fleets over time (issue 37 items 1-2; docs/cost-model.md, "Fleets over time"): a serving
// role whose load moves hour by hour (inference.load) is priced as an owned base of replicas
// plus replicas rented on demand for the hours above it. Plain values; plan/fleet.cpp fills
// them from a role's pick, make_plan stores them in RolePlan::fleet.

#include <string>
#include <vector>

namespace gpusel {

// One hour of the load profile in the horizon's last month (growth applied): the SLO holds in
// the hour when the replicas running carry the load (capacity_requests_per_s ≥ requests_per_s).
struct FleetHour {
    int hour = 0;                        // of the profile: 0..23 or 0..167
    double requests_per_s = 0;           // the load
    int replicas_needed = 0;             // the fewest that carry it at the SLO and confidence level
    int owned_replicas = 0;              // running (every owned replica, every hour)
    int rented_replicas = 0;             // rented on demand for this hour
    double capacity_requests_per_s = 0;  // (owned + rented) × one replica's capacity at the SLO
};

// One way of splitting the fleet: `owned_replicas` bought, the rest rented hour by hour.
struct FleetOption {
    int owned_replicas = 0;
    double owned_tco_usd = 0;           // capex + opex of the owned replicas over the horizon
    double rented_usd = 0;              // on-demand replica-hours over the horizon, start-up lag included
    double rented_replica_hours = 0;    // over the horizon
    double tco_usd = 0;                 // owned_tco_usd + rented_usd
};

struct FleetPlan {
    std::string gpu;                          // catalog id: the role's pick
    int gpus_per_replica = 1;
    double replica_capacity_requests_per_s = 0;  // one replica at the SLO, at the confidence level
    double startup_lag_s = 0;                 // a rented replica's start before it serves (sourced)
    std::string startup_lag_source;
    std::string rental_offer;                 // the on-demand offer the peak is rented from
    double rental_usd_per_replica_hour = 0;
    FleetOption chosen;                       // the least TCO
    FleetOption all_owned;                    // owned_replicas = the peak's need, nothing rented
    FleetOption all_rented;                   // owned_replicas = 0
    double owned_load_percentile = 0;         // share of hours the owned base carries alone, [0, 1]
    // TCO change of one more owned replica than chosen (> 0: it does not pay) and the rented
    // hours per month above which it would.
    double one_more_owned_delta_usd = 0;
    double break_even_rented_hours_per_month = 0;
    std::vector<FleetHour> hours;             // the profile in the horizon's last month
    std::vector<std::string> notes;           // assumptions, in words
};

}  // namespace gpusel

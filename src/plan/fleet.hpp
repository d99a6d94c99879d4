#pragma once
// Fleets over time (issue 37 items 1-2; docs/cost-model.md, "Fleets over time"): a serving
// role whose load moves hour by hour (inference.load) is priced as an owned base of replicas
// plus replicas rented on demand for the hours above it. Plain values; plan/fleet.cpp fills
// them from a role's pick, make_plan stores them in RolePlan::fleet.

#include <optional>
#include <string>
#include <vector>

#include "cost/cost.hpp"

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
    double owned_tco_usd = 0;         // capex + opex of the owned replicas over the horizon
    double rented_usd = 0;            // on-demand replica-hours over the horizon, start-up lag included
    double rented_replica_hours = 0;  // over the horizon
    double tco_usd = 0;               // owned_tco_usd + rented_usd
    double rented_launches = 0;       // rental blocks started over the horizon (each billed the lag)
    int rented_replicas_at_peak = 0;  // the busiest hour of the horizon's last month
};

// One month of the horizon (growth applied), under the chosen split.
struct FleetMonth {
    int month = 1;                   // 1-based
    double peak_requests_per_s = 0;  // the profile's busiest hour this month
    int peak_replicas_needed = 0;
    // The owned base's utilisation: the load it carries over its capacity, over the month's hours
    // (0 when nothing is owned).
    double owned_utilization = 0;
    double rented_replica_hours = 0;
    double rented_usd = 0;  // start-up lag included
};

// What price_fleet needs, all of it from the planner and the cost model (plan/fleet.cpp's
// fleet_for fills it from a role's pick).
struct FleetPricing {
    std::vector<double> hourly_shares;  // LoadProfile::hourly_shares: 24 or 168, the largest 1
    double peak_requests_per_s = 0;     // at share 1 in month 1
    double growth_per_month = 0;
    double horizon_months = 0;  // a fractional last month counts its share of the hours
    // [k − 1]: what k replicas carry at the SLO at the confidence level, non-decreasing in k.
    // Beyond the last entry, k replicas carry k × (last entry / its count).
    std::vector<double> capacity_requests_per_s;
    // [k]: k replicas' GPUs bought and run over the horizon (the cost model's TCO); [0] = 0. At
    // least one entry past the largest hourly need (the break-even of one more replica).
    std::vector<double> owned_tco_usd;
    // Renting: a block is the fewest whole rental units that hold a replica; it holds
    // replicas_per_block replicas and is billed per hour it runs, plus the start-up lag each
    // time one is started.
    double rental_usd_per_block_hour = 0;
    int replicas_per_block = 1;
    double startup_lag_hours = 0;
    // deployment.redundancy's spare replicas when nothing is owned: rented every hour of every
    // month (in FleetOption::rented_usd of the all-rented option and its months), as the pick
    // rented whole keeps them; with an owned base they are bought with it (owned_tco_usd).
    double spares_rented_usd_per_month = 0;
};

struct FleetPlan {
    std::string gpu;  // catalog id: the role's pick
    int gpus_per_replica = 1;
    double replica_capacity_requests_per_s = 0;  // one replica at the SLO, at the confidence level
    double startup_lag_s = 0;                    // a rented replica's start before it serves (sourced)
    std::string startup_lag_source;
    std::string rental_offer;  // the on-demand offer the peak is rented from
    double rental_usd_per_replica_hour = 0;
    FleetOption chosen;                // the least TCO
    FleetOption all_owned;             // owned_replicas = the peak's need, nothing rented
    FleetOption all_rented;            // owned_replicas = 0
    double owned_load_percentile = 0;  // share of hours the owned base carries alone, [0, 1]
    // TCO change of one more owned replica than chosen (> 0: it does not pay) and the rented
    // hours per month above which it would.
    double one_more_owned_delta_usd = 0;
    double break_even_rented_hours_per_month = 0;
    std::vector<FleetHour> hours;    // the profile in the horizon's last month
    std::vector<std::string> notes;  // assumptions, in words
    // Added by plan/fleet.cpp (issue 37 items 1-2).
    // Why the split was not priced (no purchase or no on-demand rental of the pick's GPU type the
    // workload may use); empty when it was. Only `gpu` is set besides.
    std::string not_priced_reason;
    std::string owned_offer;  // the purchase the base is bought from
    double horizon_months = 0;
    std::vector<double> capacity_requests_per_s;  // FleetPricing's: [k − 1] = k replicas
    std::vector<FleetMonth> months;               // under the chosen split
    // The rented replica-hours per month above the chosen base, averaged over the horizon: what
    // one more owned replica would displace at most.
    double rented_hours_above_base_per_month = 0;
    int peak_replicas_needed = 0;  // the busiest hour of the horizon
    // The split as ordered (plan/planner.cpp's procurement and cash flow). `ordered` when the
    // chosen split rents some hours and costs less than the pick by more than the tie margin
    // (ranking's tie_tolerance): the procurement then holds the owned base (with the pick's
    // spare replicas) and the rented peak in place of the pick's line.
    bool ordered = false;
    std::string ordered_why;  // why ordered, or why the pick is ordered instead
    // deployment.redundancy's spare replicas, bought with the owned base (a rented replica that
    // fails is replaced by renting another; an owned one takes weeks): included in every
    // owned_tco_usd with at least one owned replica, so that all-owned is the pick bought.
    int spare_replicas = 0;
    std::optional<CostEstimate> owned_cost;  // the chosen base and its spares; absent when none is owned
    // The rented peak's offer at its busiest hour (offer.units = rental units then) with the
    // rent of FleetOption::rented_usd: tco_usd = rented_usd, breakdown.hidden_usd = start-ups.
    std::optional<CostEstimate> rented_cost;
    double pick_tco_usd = 0;  // the role's pick, as ordered without the split
};

// The replicas that carry `requests_per_s` (capacity as in FleetPricing): the fewest k with
// capacity(k) ≥ the load; 0 for no load.
int fleet_replicas_needed(const std::vector<double>& capacity_requests_per_s, double requests_per_s);

// Every owned count from 0 to the horizon's largest hourly need, priced: owned TCO plus the
// replicas rented on demand in each hour above the base, month by month with growth; the least
// TCO is chosen (ties: fewer owned). Pure. Fills everything but the identity strings (gpu,
// offers, lag source) and the figures of one replica.
FleetPlan price_fleet(const FleetPricing& pricing);

}  // namespace gpusel

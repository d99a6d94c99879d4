// Fleets over time (issue 37 items 1-2; docs/cost-model.md, "Fleets over time"): a serving
// role whose load moves hour by hour, priced as an owned base plus replicas rented on demand
// in the hours above it. price_fleet is the pure arithmetic; fleet_for takes its inputs from
// the role's pick, the perf model and the cost model.

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "base/format.hpp"
#include "base/units.hpp"
#include "plan/internal.hpp"

namespace gpusel {

namespace {

// What k replicas carry; beyond the table, k × the last entry's capacity per replica (the
// additive model of the robustness analysis, plan/robustness.cpp).
double capacity_of(const std::vector<double>& capacity, int replicas) {
    if (replicas <= 0 || capacity.empty()) {
        return 0;
    }
    const auto size = static_cast<int>(capacity.size());
    if (replicas <= size) {
        return capacity[static_cast<std::size_t>(replicas - 1)];
    }
    return capacity.back() / size * replicas;
}

// The load of every hour of the profile in every month of the horizon, and the replicas it needs.
struct HourlyNeeds {
    std::vector<std::vector<double>> load;  // [month][hour]
    std::vector<std::vector<int>> needed;   // [month][hour]
    std::vector<double> month_weight;       // share of the month's hours within the horizon
    double cycles_per_month = 0;            // how often the profile repeats in a month
    int peak_needed = 0;
};

HourlyNeeds hourly_needs(const FleetPricing& pricing) {
    HourlyNeeds needs;
    const int months = std::max(1, static_cast<int>(std::ceil(pricing.horizon_months - 1e-9)));
    needs.cycles_per_month = hours_per_month / static_cast<double>(pricing.hourly_shares.size());
    for (int month = 0; month < months; ++month) {
        const double scale = pricing.peak_requests_per_s * std::pow(1 + pricing.growth_per_month, month);
        std::vector<double>& load = needs.load.emplace_back();
        std::vector<int>& needed = needs.needed.emplace_back();
        for (const double share : pricing.hourly_shares) {
            load.push_back(scale * share);
            needed.push_back(fleet_replicas_needed(pricing.capacity_requests_per_s, load.back()));
            needs.peak_needed = std::max(needs.peak_needed, needed.back());
        }
        needs.month_weight.push_back(std::clamp(pricing.horizon_months - month, 0.0, 1.0));
    }
    return needs;
}

int blocks_for(int replicas, int replicas_per_block) {
    return (replicas + replicas_per_block - 1) / replicas_per_block;
}

// The replicas rented in one month's profile above `owned`: replica-hours, block-hours and block
// starts per repetition of the profile. A block running in the hour before is not started again
// (the profile repeats, so hour 0 follows the last hour).
struct MonthRental {
    double replica_hours = 0;
    double block_hours = 0;
    double launches = 0;
};

MonthRental rent_month(const std::vector<int>& needed, int owned, int replicas_per_block) {
    MonthRental rental;
    int before = blocks_for(std::max(0, needed.back() - owned), replicas_per_block);
    for (const int need : needed) {
        const int rented = std::max(0, need - owned);
        const int blocks = blocks_for(rented, replicas_per_block);
        rental.replica_hours += rented;
        rental.block_hours += blocks;
        rental.launches += std::max(0, blocks - before);
        before = blocks;
    }
    return rental;
}

FleetOption price_option(const FleetPricing& pricing, const HourlyNeeds& needs, int owned) {
    FleetOption option;
    option.owned_replicas = owned;
    option.owned_tco_usd = pricing.owned_tco_usd.at(static_cast<std::size_t>(owned));
    const int replicas_per_block = std::max(1, pricing.replicas_per_block);
    double block_hours = 0;
    for (std::size_t month = 0; month < needs.needed.size(); ++month) {
        const MonthRental rental = rent_month(needs.needed[month], owned, replicas_per_block);
        const double repeats = needs.cycles_per_month * needs.month_weight[month];
        option.rented_replica_hours += rental.replica_hours * repeats;
        block_hours += rental.block_hours * repeats;
        option.rented_launches += rental.launches * repeats;
    }
    // Each block started is billed its start-up before it serves (data/cost.yaml
    // rental.startup_minutes_per_launch, the cost model's hidden cost per launch).
    option.rented_usd =
        (block_hours + option.rented_launches * pricing.startup_lag_hours) * pricing.rental_usd_per_block_hour +
        (owned == 0 ? pricing.spares_rented_usd_per_month * pricing.horizon_months : 0.0);
    option.tco_usd = option.owned_tco_usd + option.rented_usd;
    const std::vector<int>& last = needs.needed.back();
    option.rented_replicas_at_peak = std::max(0, *std::max_element(last.begin(), last.end()) - owned);
    return option;
}

}  // namespace

int fleet_replicas_needed(const std::vector<double>& capacity_requests_per_s, double requests_per_s) {
    if (requests_per_s <= 0 || capacity_requests_per_s.empty() || capacity_requests_per_s.back() <= 0) {
        return 0;
    }
    const double needed = requests_per_s * (1 - 1e-9);
    const auto size = static_cast<int>(capacity_requests_per_s.size());
    for (int replicas = 1; replicas <= size; ++replicas) {
        if (capacity_requests_per_s[static_cast<std::size_t>(replicas - 1)] >= needed) {
            return replicas;
        }
    }
    const double per_replica = capacity_requests_per_s.back() / size;
    return std::max(size + 1, static_cast<int>(std::ceil(needed / per_replica)));
}

FleetPlan price_fleet(const FleetPricing& pricing) {
    FleetPlan fleet;
    if (pricing.hourly_shares.empty() || pricing.horizon_months <= 0) {
        return fleet;
    }
    const HourlyNeeds needs = hourly_needs(pricing);
    fleet.horizon_months = pricing.horizon_months;
    fleet.capacity_requests_per_s = pricing.capacity_requests_per_s;
    fleet.replica_capacity_requests_per_s = capacity_of(pricing.capacity_requests_per_s, 1);
    fleet.rental_usd_per_replica_hour = pricing.rental_usd_per_block_hour / std::max(1, pricing.replicas_per_block);
    fleet.startup_lag_s = pricing.startup_lag_hours * seconds_per_hour;
    fleet.peak_replicas_needed = needs.peak_needed;
    fleet.all_rented = price_option(pricing, needs, 0);
    fleet.chosen = fleet.all_rented;
    for (int owned = 1; owned <= needs.peak_needed; ++owned) {
        const FleetOption option = price_option(pricing, needs, owned);
        if (option.tco_usd < fleet.chosen.tco_usd) {
            fleet.chosen = option;
        }
        if (owned == needs.peak_needed) {
            fleet.all_owned = option;
        }
    }
    if (needs.peak_needed == 0) {
        fleet.all_owned = fleet.all_rented;
    }
    const int owned = fleet.chosen.owned_replicas;
    const auto owned_index = static_cast<std::size_t>(owned);
    // One more owned replica than chosen: its TCO change, and the rented replica-hours per month
    // it would have to displace to pay for its own cost.
    if (owned_index + 1 < pricing.owned_tco_usd.size()) {
        fleet.one_more_owned_delta_usd = price_option(pricing, needs, owned + 1).tco_usd - fleet.chosen.tco_usd;
        const double extra_owned_usd = pricing.owned_tco_usd[owned_index + 1] - pricing.owned_tco_usd[owned_index];
        if (fleet.rental_usd_per_replica_hour > 0) {
            fleet.break_even_rented_hours_per_month =
                extra_owned_usd / pricing.horizon_months / fleet.rental_usd_per_replica_hour;
        }
    }
    double hours_alone = 0;
    double hours_above = 0;
    double hours_all = 0;
    const double owned_capacity = capacity_of(pricing.capacity_requests_per_s, owned);
    const int replicas_per_block = std::max(1, pricing.replicas_per_block);
    for (std::size_t month = 0; month < needs.needed.size(); ++month) {
        const std::vector<int>& needed = needs.needed[month];
        const std::vector<double>& load = needs.load[month];
        const double repeats = needs.cycles_per_month * needs.month_weight[month];
        FleetMonth row;
        row.month = static_cast<int>(month) + 1;
        row.peak_requests_per_s = *std::max_element(load.begin(), load.end());
        row.peak_replicas_needed = *std::max_element(needed.begin(), needed.end());
        double carried = 0;
        for (std::size_t hour = 0; hour < needed.size(); ++hour) {
            carried += std::min(load[hour], owned_capacity);
            (needed[hour] <= owned ? hours_alone : hours_above) += repeats;
            hours_all += repeats;
        }
        row.owned_utilization =
            owned_capacity > 0 ? carried / (owned_capacity * static_cast<double>(needed.size())) : 0;
        const MonthRental rental = rent_month(needed, owned, replicas_per_block);
        row.rented_replica_hours = rental.replica_hours * repeats;
        row.rented_usd = (rental.block_hours + rental.launches * pricing.startup_lag_hours) * repeats *
                             pricing.rental_usd_per_block_hour +
                         (owned == 0 ? pricing.spares_rented_usd_per_month * needs.month_weight[month] : 0.0);
        fleet.months.push_back(row);
    }
    fleet.owned_load_percentile = hours_all > 0 ? hours_alone / hours_all : 0;
    fleet.rented_hours_above_base_per_month = hours_above / pricing.horizon_months;
    const std::vector<int>& last_needed = needs.needed.back();
    const std::vector<double>& last_load = needs.load.back();
    for (std::size_t hour = 0; hour < last_needed.size(); ++hour) {
        FleetHour row;
        row.hour = static_cast<int>(hour);
        row.requests_per_s = last_load[hour];
        row.replicas_needed = last_needed[hour];
        row.owned_replicas = owned;
        row.rented_replicas = std::max(0, last_needed[hour] - owned);
        row.capacity_requests_per_s =
            capacity_of(pricing.capacity_requests_per_s, row.owned_replicas + row.rented_replicas);
        fleet.hours.push_back(row);
    }
    return fleet;
}

namespace plan_detail {

namespace {

// The purchase the owned base is bought from: the pick's own offer when the pick is bought,
// else the cheapest purchase of the same GPU type the workload may use.
std::optional<OfferQuote> owned_quote(const RolePlan& plan, const Catalog& catalog, const GpuSpec& gpu) {
    const Workload& workload = plan.workload;
    const Candidate& pick = *plan.winner;
    const std::vector<Acquisition> allowed = acquisitions_for(workload);
    if (is_purchase(pick.acquisition)) {
        if (const Offer* offer = catalog.find_offer(pick.cost.offer.id)) {
            if (std::optional<OfferQuote> quote = quote_offer(catalog, workload, *offer, pick.acquisition)) {
                return quote;
            }
        }
    }
    for (const Acquisition acquisition : {Acquisition::buy_new, Acquisition::buy_used}) {
        if (std::find(allowed.begin(), allowed.end(), acquisition) == allowed.end()) {
            continue;
        }
        const std::vector<OfferQuote> quotes = quotes_for(catalog, workload, gpu, acquisition);
        if (!quotes.empty()) {
            return quotes.front();
        }
    }
    return std::nullopt;
}

// The pick's capacity at 1..N replicas (N its serving replicas): perf's queueing model over
// the pooled replicas, as the planner sized them (candidates.cpp, replicas_for and
// margin_replicas), times the speed band's slow quantile at objective.confidence. At N the
// pick's own figure, so that all-owned is the pick.
std::vector<double> replica_capacities(const RolePlan& plan, const Catalog& catalog, const GpuSpec& gpu,
                                       const EfficiencyTable& efficiency) {
    const Workload& workload = plan.workload;
    const Candidate& pick = *plan.winner;
    const CandidateEvaluator evaluator(workload, catalog, efficiency, CandidatePolicy::search(workload),
                                       &plan.calibration);
    const double slow = evaluator.slow_speed(gpu, pick.layout);
    const int serving = std::max(1, pick.layout.data_parallel);
    std::vector<double> capacity;
    for (int replicas = 1; replicas <= serving; ++replicas) {
        double carried = pick.perf.inference->max_requests_per_s_meeting_slo;
        if (replicas != serving) {
            PerfQuery query;
            query.layout = pick.layout;
            query.layout.data_parallel = replicas;
            query.batch = pick.batch;
            query.precision = pick.precision;
            const PerfEstimate estimate = estimate_perf(workload, gpu, query, efficiency);
            carried = estimate.inference ? estimate.inference->max_requests_per_s_meeting_slo : 0;
        }
        // More replicas never carry less (the queueing model pools them behind one balancer).
        capacity.push_back(std::max(carried * slow, capacity.empty() ? 0.0 : capacity.back()));
    }
    return capacity;
}

// The rented peak as an order line: the on-demand offer at the busiest hour's blocks, billed
// the chosen split's rent (hours above the base, start-ups included).
CostEstimate rented_peak_cost(const Workload& workload, const GpuSpec& gpu, const OfferQuote& rented,
                              const FleetPlan& fleet, int per_replica) {
    const int block_units = units_for(*rented.offer, per_replica);
    const FleetOption& chosen = fleet.chosen;
    const int spares = chosen.owned_replicas == 0 ? fleet.spare_replicas : 0;
    UsageProfile usage;
    usage.service = true;
    usage.gpus = (chosen.rented_replicas_at_peak + spares) * per_replica;
    CostEstimate cost = estimate_cost(workload, gpu, rented, usage);
    const double startup_usd =
        chosen.rented_launches * fleet.startup_lag_s / seconds_per_hour * block_units * rented.price.usd;
    cost.capex_usd = 0;
    cost.tco_usd = chosen.rented_usd;
    cost.monthly_opex_usd = chosen.rented_usd / fleet.horizon_months;
    cost.billed_months = fleet.horizon_months;
    cost.breakdown = CostBreakdown{};
    cost.breakdown.hidden_usd = startup_usd;
    cost.spare_units = 0;
    cost.spare_gpus = 0;
    cost.notes = {
        fmt::format("rented only for the hours the owned base cannot carry: {:.0f} replica-hours over "
                    "{:g} months, up to {} at the busiest hour{}",
                    chosen.rented_replica_hours, fleet.horizon_months, chosen.rented_replicas_at_peak,
                    spares > 0 ? fmt::format(", plus {} spare rented every hour", spares) : std::string())};
    return cost;
}

// Whether the split is ordered: it must rent some hours (else it is the pick bought) and save
// more than the tie margin, the rule every other choice of the planner follows.
void decide_order(FleetPlan& fleet, const Candidate& pick) {
    fleet.pick_tco_usd = pick.cost.tco_usd;
    const double margin_usd = tie_tolerance(pick.cost.tco_usd);
    const double saving_usd = pick.cost.tco_usd - fleet.chosen.tco_usd;
    if (fleet.chosen.rented_replicas_at_peak == 0) {
        fleet.ordered_why = "the split rents nothing: the pick is ordered";
    } else if (saving_usd <= margin_usd) {
        fleet.ordered_why = fmt::format(
            "the split saves {:.1f} % of the pick's TCO, within the tie margin: the pick "
            "is ordered (simpler to run)",
            pick.cost.tco_usd > 0 ? saving_usd / pick.cost.tco_usd * 100 : 0.0);
    } else {
        fleet.ordered = true;
        fleet.ordered_why =
            fmt::format("the split saves {:.1f} % of the pick's TCO (more than the tie margin): it is ordered",
                        saving_usd / pick.cost.tco_usd * 100);
    }
}

}  // namespace

std::optional<FleetPlan> fleet_for(const RolePlan& plan, const Catalog& catalog, const EfficiencyTable& efficiency) {
    const Workload& workload = plan.workload;
    if (!plan.winner || !workload.inference.load.given() || !plan.winner->perf.inference ||
        workload.deployment.horizon_months <= 0) {
        return std::nullopt;
    }
    const Candidate& pick = *plan.winner;
    const GpuSpec* gpu = catalog.find(pick.gpu);
    if (gpu == nullptr) {
        return std::nullopt;
    }
    const std::vector<Acquisition> allowed = acquisitions_for(workload);
    const bool may_rent = std::find(allowed.begin(), allowed.end(), Acquisition::cloud_on_demand) != allowed.end();
    const std::optional<OfferQuote> bought = owned_quote(plan, catalog, *gpu);
    const std::vector<OfferQuote> rentals =
        may_rent ? quotes_for(catalog, workload, *gpu, Acquisition::cloud_on_demand) : std::vector<OfferQuote>{};
    if (!bought || rentals.empty()) {
        FleetPlan unpriced;
        unpriced.gpu = pick.gpu;
        unpriced.not_priced_reason =
            !bought ? fmt::format("no purchase of {} the workload may use: nothing to own, the pick is all {}",
                                  pick.gpu, describe(pick.acquisition))
                    : fmt::format(
                          "no on-demand rental of {} the workload may use: the peak cannot be rented, the "
                          "pick is all owned",
                          pick.gpu);
        return unpriced;
    }
    const int per_replica = std::max(1, pick.layout.gpu_count() / std::max(1, pick.layout.data_parallel));
    const LoadProfile& load = workload.inference.load;
    const CostAssumptions& assumptions = builtin_cost_assumptions();
    FleetPricing pricing;
    pricing.hourly_shares = load.hourly_shares;
    pricing.peak_requests_per_s = load.peak_requests_per_s;
    pricing.growth_per_month = load.growth_per_month;
    pricing.horizon_months = workload.deployment.horizon_months;
    pricing.capacity_requests_per_s = replica_capacities(plan, catalog, *gpu, efficiency);
    pricing.startup_lag_hours = assumptions.startup_hours_per_launch;
    const int peak = fleet_replicas_needed(pricing.capacity_requests_per_s, workload.inference.requests_per_s);
    // The owned replicas are priced as the pick is (its usage: a service at deployment.utilization),
    // at their own count of GPUs, with the pick's spare replicas: they stand in for an owned
    // replica that fails, which takes weeks to replace; a rented one is replaced by renting
    // another within the start-up lag, so the rented part carries none.
    const int spares = pick.spare_replicas;
    std::vector<CostEstimate> owned_costs(1);
    for (int replicas = 0; replicas <= peak + 1; ++replicas) {
        if (replicas == 0) {
            pricing.owned_tco_usd.push_back(0);
            continue;
        }
        UsageProfile usage = pick.usage;
        usage.gpus = (replicas + spares) * per_replica;
        usage.min_gpus = std::min(usage.gpus, pick.usage.min_gpus);
        owned_costs.push_back(estimate_cost(workload, *gpu, *bought, usage));
        pricing.owned_tco_usd.push_back(owned_costs.back().available ? owned_costs.back().tco_usd : 0);
    }
    // The on-demand offer whose blocks rent the all-rented fleet for least.
    std::optional<FleetPlan> best;
    const OfferQuote* rented = nullptr;
    for (const OfferQuote& quote : rentals) {
        FleetPricing trial = pricing;
        const int units = units_for(*quote.offer, per_replica);
        trial.replicas_per_block = std::max(1, units * quote.offer->gpus_per_unit / per_replica);
        trial.rental_usd_per_block_hour = units * quote.price.usd;
        trial.spares_rented_usd_per_month =
            blocks_for(spares, trial.replicas_per_block) * trial.rental_usd_per_block_hour * hours_per_month;
        FleetPlan fleet = price_fleet(trial);
        if (!best || fleet.all_rented.tco_usd < best->all_rented.tco_usd) {
            best = std::move(fleet);
            rented = &quote;
        }
    }
    FleetPlan fleet = std::move(*best);
    fleet.gpu = pick.gpu;
    fleet.gpus_per_replica = per_replica;
    // What the chosen base orders (one replica's order where nothing is owned, for the reader).
    fleet.owned_offer = owned_costs[static_cast<std::size_t>(std::max(1, fleet.chosen.owned_replicas))].offer.order;
    fleet.rental_offer = order_text(*rented, units_for(*rented->offer, per_replica));
    fleet.spare_replicas = spares;
    if (fleet.chosen.owned_replicas > 0) {
        fleet.owned_cost = owned_costs[static_cast<std::size_t>(fleet.chosen.owned_replicas)];
    }
    if (fleet.chosen.rented_replicas_at_peak > 0) {
        fleet.rented_cost = rented_peak_cost(workload, *gpu, *rented, fleet, per_replica);
    }
    decide_order(fleet, pick);
    const auto source = assumptions.sources.find("rental.startup_minutes_per_launch");
    fleet.startup_lag_source = source != assumptions.sources.end()
                                   ? fmt::format("data/cost.yaml rental.startup_minutes_per_launch: {} ({})",
                                                 source->second.source, source->second.as_of)
                                   : "data/cost.yaml rental.startup_minutes_per_launch";
    fleet.notes.push_back(
        fmt::format("capacity per hour: perf's queueing model over the replicas running, at the speed band's {:.0f} % "
                    "quantile (objective.confidence {:g}), as the planner sizes the pick",
                    (1 - workload.confidence) * 100, workload.confidence));
    fleet.notes.push_back(
        fmt::format("each rented block is billed for the hours it runs plus {:g} min of start-up "
                    "each time it starts (the profile repeats: a block kept from the hour before "
                    "is not started again)",
                    fleet.startup_lag_s / 60));
    if (spares > 0) {
        fleet.notes.push_back(
            fmt::format("deployment.redundancy's {} spare replica{} bought with the owned base, "
                        "or rented every hour when nothing is owned",
                        spares, spares == 1 ? " is" : "s are"));
    }
    return fleet;
}

}  // namespace plan_detail

}  // namespace gpusel

#include "cost/cost.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "base/units.hpp"

namespace gpusel {

constexpr double hours_per_day = 24.0;

// The decision constants (failure curve, resale, spares, warranties, reservation term, hidden
// cloud costs, office and edge sites, strategy by horizon) are data/cost.yaml, each with its
// source and date: builtin_cost_assumptions().

std::string_view describe(Acquisition acquisition) {
    switch (acquisition) {
        case Acquisition::buy_new:
            return "buy new";
        case Acquisition::buy_used:
            return "buy used";
        case Acquisition::cloud_on_demand:
            return "cloud on-demand";
        case Acquisition::cloud_spot:
            return "cloud spot";
        case Acquisition::cloud_reserved:
            return "cloud reserved 1y";
        case Acquisition::cloud_reserved_3y:
            return "cloud reserved 3y";
        case Acquisition::cloud_capacity_block:
            return "cloud capacity block";
    }
    return "";
}

std::optional<double> break_even_month(double capex_usd, double monthly_opex_usd, double monthly_rent_usd) {
    if (!(monthly_rent_usd > monthly_opex_usd)) {
        return std::nullopt;
    }
    return capex_usd / (monthly_rent_usd - monthly_opex_usd);
}

double expected_failure_fraction(double months, const CostAssumptions& assumptions) {
    // Monthly hazard: constant in the early period, constant from the start of the late one,
    // linear in between; integrated in closed form per segment.
    const FailureCurve& curve = assumptions.failures;
    const double early = curve.early_failed_fraction / curve.early_end_months;
    const double late = curve.late_failed_fraction / (curve.late_end_months - curve.late_start_months);
    double failed = early * std::min(months, curve.early_end_months);
    if (months > curve.early_end_months) {
        const double span = std::min(months, curve.late_start_months) - curve.early_end_months;
        const double slope = (late - early) / (curve.late_start_months - curve.early_end_months);
        failed += early * span + 0.5 * slope * span * span;
    }
    if (months > curve.late_start_months) {
        failed += late * (months - curve.late_start_months);
    }
    return std::min(failed, 1.0);
}

double residual_value_fraction(double months, const CostAssumptions& assumptions) {
    return std::pow(assumptions.resale_value_kept_fraction, std::max(months, 0.0) / assumptions.resale_after_months);
}

int warranty_months(const GpuSpec& gpu, const Offer& offer, const CostAssumptions& assumptions) {
    if (offer.condition != UnitCondition::new_unit) {
        return assumptions.used_warranty_months;
    }
    switch (gpu.segment) {
        case Segment::consumer:
            return assumptions.consumer_warranty_months;
        case Segment::edge:
            return assumptions.edge_warranty_months;
        case Segment::workstation:
            return assumptions.workstation_warranty_months;
        case Segment::datacenter:
            break;
    }
    return assumptions.datacenter_warranty_months;
}

Site costing_site(const Workload& workload, const Offer& offer) {
    if (offer.kind == OfferKind::rental) {
        return Site::datacenter;
    }
    if (workload_may_run_at(workload, Site::edge) && offer.may_run_at(Site::edge)) {
        return Site::edge;
    }
    if (workload_may_run_at(workload, Site::office) && offer.may_run_at(Site::office)) {
        return Site::office;
    }
    return Site::datacenter;
}

std::string horizon_strategy(double horizon_months, const CostAssumptions& assumptions) {
    const int rent_below = assumptions.rent_below_months;
    const int own_above = assumptions.own_above_months;
    if (horizon_months < rent_below) {
        return fmt::format("under {} months: rent", rent_below);
    }
    if (horizon_months <= own_above) {
        return fmt::format("{}-{} months: own the base load, rent peaks", rent_below, own_above);
    }
    return fmt::format("over {} months: own, with hardware-independent serving", own_above);
}

double capacity_block_days(double hours, const CostAssumptions& assumptions) {
    const double daily_until = assumptions.capacity_block_daily_until_days;
    const double step = assumptions.capacity_block_step_days;
    double days = std::max(1.0, std::ceil(hours / hours_per_day));
    if (days > daily_until) {
        days = daily_until + std::ceil((days - daily_until) / step) * step;
    }
    return days <= assumptions.capacity_block_max_days ? days : 0.0;
}

namespace {

// Why a capacity block cannot hold the work: it is booked for a known length (a training job
// with a dataset size, not a service) of at most the longest block, and at most one block's
// instances; empty when it can.
std::string capacity_block_exclusion(const UsageProfile& usage, int instances) {
    const CostAssumptions& assumptions = builtin_cost_assumptions();
    if (usage.service || !(usage.job_seconds > 0)) {
        return "a capacity block is booked for a known length: a training job with a dataset size";
    }
    const double hours = usage.job_seconds / seconds_per_hour + usage.launches * assumptions.startup_hours_per_launch;
    if (capacity_block_days(hours, assumptions) == 0) {
        return fmt::format("the job's {:.0f} days exceed the longest capacity block ({:.0f} days)",
                           std::ceil(hours / hours_per_day), assumptions.capacity_block_max_days);
    }
    if (instances > assumptions.capacity_block_max_instances) {
        return fmt::format("{} instances exceed one capacity block's {:.0f}", instances,
                           assumptions.capacity_block_max_instances);
    }
    return {};
}

OfferUse describe_offer(const OfferQuote& quote, double price_usd, int units, int gpus, CostDetail detail) {
    const Offer& offer = *quote.offer;
    OfferUse use;
    use.kind = offer.kind;
    use.gpus_per_unit = offer.gpus_per_unit;
    use.units = units;
    use.idle_gpus = units * offer.gpus_per_unit - gpus;
    use.price_usd = price_usd;
    use.price_kind = quote.price.kind;
    if (detail == CostDetail::figures) {
        return use;
    }
    use.id = offer.id;
    use.provider = offer.provider;
    use.provider_name = quote.provider_name;
    use.tier = quote.tier;
    use.instance_type = offer.instance_type;
    use.form = offer.form;
    use.name = offer.name;
    use.region = quote.region;
    use.zones_usd = quote.price.zones_usd;
    use.as_of = quote.price.as_of;
    use.sources = quote.price.sources;
    OfferQuote shown = quote;
    shown.price.usd = price_usd;
    use.order = order_text(shown, units);
    return use;
}

// The units bought or rented: `units` per seat (a replica of the workload) at `price_usd` each.
struct UnitsBought {
    double price_usd = 0;
    int units = 0;
    int seats = 1;
    int all_units() const { return units * seats; }
};

// What the owned units in service draw at full load, GPUs included: a server's or rack's
// published system power, else its GPUs' board power × the ratio of the makers' published
// systems (data/cost.yaml system_power); a card's or baseboard's board power plus its hosts'
// published power, else the same ratio. Spares on the shelf draw nothing. Finance pays the
// wall socket, not the GPU boards: a DGX H100 is 10.2 kW, its eight boards 5.6 kW.
double owned_system_watts(const GpuSpec& gpu, const OfferQuote& quote, int hosts, double owned_gpus,
                          CostEstimate& cost) {
    const Offer& offer = *quote.offer;
    const double boards_watts = owned_gpus * gpu.power_watts;
    const double ratio = builtin_cost_assumptions().server_over_board_ratio;
    const bool whole_system = offer.form == UnitForm::server || offer.form == UnitForm::rack;
    if (whole_system && offer.system_power_watts > 0) {
        return std::max(boards_watts, owned_gpus / offer.gpus_per_unit * offer.system_power_watts);
    }
    if (!whole_system && quote.host == nullptr) {
        return boards_watts;  // a self-contained module or a card in no catalogued host
    }
    if (!whole_system && quote.host->power_watts > 0) {
        return boards_watts + hosts * quote.host->power_watts;
    }
    cost.notes.push_back(
        fmt::format("system power estimated: {:.2f} × the GPUs' board power (no published figure "
                    "for the {})",
                    ratio, whole_system ? "system" : "host"));
    return boards_watts * ratio;
}

// Owning over the horizon: the units, spares and hosts, power and operations by site, failures
// after the warranty, resale, and the month from which owning costs less than renting.
void add_purchase_cost(const Workload& workload, const GpuSpec& gpu, const OfferQuote& quote, const UnitsBought& bought,
                       CostEstimate& cost) {
    const DeploymentSpec& deployment = workload.deployment;
    const CostAssumptions& assumptions = builtin_cost_assumptions();
    const Offer& offer = *quote.offer;
    const double months = deployment.horizon_months;
    const double horizon_hours = months * hours_per_month;
    const double price = bought.price_usd;
    const int all_units = bought.all_units();
    const double per_unit_gpus = offer.gpus_per_unit;
    CostBreakdown& part = cost.breakdown;
    const double owned_gpus = all_units * per_unit_gpus;
    // Spares are bought in the offer's units. Rounded, not ceiled: one spare for a
    // single-GPU box would double its cost, which no one budgets; 15 % of 4 to 9 cards is one.
    cost.spare_units = months > assumptions.spare_above_horizon_months
                           ? static_cast<int>(std::lround(assumptions.spare_fraction * all_units))
                           : 0;
    cost.spare_gpus = cost.spare_units * offer.gpus_per_unit;
    part.gpus_usd = all_units * price;
    if (quote.host != nullptr) {
        // Spare cards wait on a shelf: hosts only for the units in service.
        const int hosts = hosts_for(offer, *quote.host, bought.units) * bought.seats;
        part.servers_usd = hosts * quote.host->price.usd;
        cost.offer.host_id = quote.host->id;
        cost.offer.host_name = quote.host->name;
        cost.offer.hosts = hosts;
        cost.offer.host_price_usd = quote.host->price.usd;
        cost.offer.host_price_kind = quote.host->price.kind;
        cost.offer.host_price_as_of = quote.host->price.as_of;
    }
    part.spares_usd = cost.spare_units * price;
    // Power and operations by where the units run: a data centre's PUE and staff, the office's or
    // the edge's (data/cost.yaml: none of either) unless the file sets them.
    cost.site = costing_site(workload, offer);
    const bool datacenter = cost.site == Site::datacenter;
    const bool office = cost.site == Site::office;
    const double pue = datacenter || deployment.pue_given ? deployment.pue
                       : office                           ? assumptions.office_pue
                                                          : assumptions.edge_pue;
    const double ops = datacenter || deployment.ops_given ? deployment.ops_usd_per_gpu_month
                       : office                           ? assumptions.office_ops_usd_per_gpu_month
                                                          : assumptions.edge_ops_usd_per_gpu_month;
    const double owned_busy_hours = horizon_hours * deployment.utilization;
    cost.system_power_watts = owned_system_watts(gpu, quote, cost.offer.hosts, owned_gpus, cost);
    cost.energy_kwh = cost.system_power_watts / watts_per_kilowatt * owned_busy_hours * pue;
    part.power_usd = cost.energy_kwh * deployment.energy_usd_per_kwh;
    part.operations_usd = owned_gpus * ops * months;
    // Failures within the warranty are replaced by the maker (the spares cover the downtime);
    // only those after it cost a GPU.
    cost.warranty_months = warranty_months(gpu, offer, assumptions);
    const double covered = std::min(months, static_cast<double>(cost.warranty_months));
    const double failed_after_warranty =
        owned_gpus * (expected_failure_fraction(months, assumptions) - expected_failure_fraction(covered, assumptions));
    part.failures_usd = std::max(0.0, failed_after_warranty - cost.spare_gpus) * price / per_unit_gpus;
    part.resale_usd = (all_units + cost.spare_units) * price * residual_value_fraction(months, assumptions);
    cost.resale_counted = deployment.count_resale;
    cost.capex_usd = part.gpus_usd + part.servers_usd + part.spares_usd;
    const double monthly_running = (part.power_usd + part.operations_usd) / months;
    cost.monthly_opex_usd = monthly_running + part.failures_usd / months;
    cost.tco_usd = cost.capex_usd + part.power_usd + part.operations_usd + part.failures_usd -
                   (cost.resale_counted ? part.resale_usd : 0.0);
    // Finance books owned servers straight-line over their life, not over one project's horizon
    // (docs/cost-model.md, "Depreciation"); what is left at the horizon is the book value.
    cost.depreciation_months = deployment.asset_life_months.value_or(assumptions.asset_life_months);
    cost.depreciation_usd_per_month = cost.capex_usd / cost.depreciation_months;
    cost.book_value_at_horizon_usd = cost.capex_usd * std::max(0.0, 1.0 - months / cost.depreciation_months);
    if (!offer.needs_host.empty() && quote.host == nullptr) {
        cost.notes.push_back(fmt::format("needs host {}, which the catalog does not price", offer.needs_host));
    }
    // Against renting on demand the GPU-hours this workload needs (cloud_equivalent_usd),
    // spread over the horizon: the month from which owning has cost less in total.
    cost.break_even_month = break_even_month(cost.capex_usd, cost.monthly_opex_usd, cost.cloud_equivalent_usd / months);
}

// Weeks from order to delivery of `offer`: its own lead_time, else data/cost.yaml's by form.
std::pair<double, std::string> lead_time_of(const Offer& offer, const CostAssumptions& assumptions) {
    if (offer.lead_time_weeks > 0) {
        return {offer.lead_time_weeks, "the offer's lead_time"};
    }
    const auto [key, weeks] = [&]() -> std::pair<const char*, double> {
        switch (offer.form) {
            case UnitForm::card:
                return {"card_weeks", assumptions.card_lead_weeks};
            case UnitForm::module:
                return {"module_weeks", assumptions.module_lead_weeks};
            case UnitForm::baseboard:
                return {"baseboard_weeks", assumptions.baseboard_lead_weeks};
            case UnitForm::server:
                return {"server_weeks", assumptions.server_lead_weeks};
            case UnitForm::rack:
                return {"rack_weeks", assumptions.rack_lead_weeks};
        }
        return {"server_weeks", assumptions.server_lead_weeks};
    }();
    const std::string field = std::string("lead_time.") + key;
    const auto source = assumptions.sources.find(field);
    const bool estimate = source != assumptions.sources.end() && source->second.estimate();
    return {weeks, fmt::format("data/cost.yaml {} ({} {})", field, estimate ? "estimate" : "reported",
                               source != assumptions.sources.end() ? source->second.as_of : "")};
}

// Availability as a cost (docs/cost-model.md, "Delivery and the wait"): a purchase ordered in
// deployment.order_date arrives its lead time later; the weeks past deployment.deliver_by are
// bridged by renting the same GPUs on demand (a batch job: at most its own run), and a purchase
// nothing can bridge is not available in time.
void add_delivery_wait(const Workload& workload, const Offer& offer, const UsageProfile& usage, CostEstimate& cost) {
    const DeploymentSpec& deployment = workload.deployment;
    if (deployment.deliver_by.empty()) {
        return;
    }
    const auto [lead_weeks, basis] = lead_time_of(offer, builtin_cost_assumptions());
    cost.lead_time_weeks = lead_weeks;
    cost.lead_time_basis = basis;
    constexpr double weeks_per_month = 365.25 / 12 / 7;
    const double weeks_until_due = months_between(deployment.order_date, deployment.deliver_by) * weeks_per_month;
    cost.wait_weeks = std::max(0.0, lead_weeks - weeks_until_due);
    if (cost.wait_weeks <= 0) {
        return;
    }
    double wait_hours = cost.wait_weeks * 7 * 24;
    if (!usage.service) {
        wait_hours = std::min(wait_hours, usage.job_seconds / seconds_per_hour);
    }
    if (usage.reference_rent_usd_per_gpu_hour <= 0) {
        cost.available = false;
        cost.unavailable_reason = fmt::format(
            "delivered ~{:g} weeks after the order ({}, {}), {:.1f} weeks after deployment.deliver_by {}; no "
            "on-demand rental of the GPU to bridge the wait",
            lead_weeks, deployment.order_date, basis, cost.wait_weeks, deployment.deliver_by);
        return;
    }
    cost.breakdown.wait_usd =
        usage.reference_rent_usd_per_gpu_hour * usage.gpus * std::max(1, usage.seats) * wait_hours;
    cost.tco_usd += cost.breakdown.wait_usd;
    cost.notes.push_back(
        fmt::format("delivered ~{:g} weeks after the order ({}; {}): {:.1f} weeks after "
                    "deployment.deliver_by {}, bridged by renting the same GPUs on demand",
                    lead_weeks, deployment.order_date, basis, cost.wait_weeks, deployment.deliver_by));
}

// Renting: a rented instance is billed for every hour it is provisioned: a service around the
// clock, unless it scales down when idle (deployment.autoscale), and then never below its
// minimum replicas; reserved capacity for whole terms; spot with its restart overhead.
void add_rental_cost(const Workload& workload, const GpuSpec& gpu, const OfferQuote& quote, const UsageProfile& usage,
                     const UnitsBought& bought, double busy_hours, CostEstimate& cost) {
    const DeploymentSpec& deployment = workload.deployment;
    const CostAssumptions& assumptions = builtin_cost_assumptions();
    const Acquisition acquisition = quote.acquisition;
    const double months = deployment.horizon_months;
    const double horizon_hours = months * hours_per_month;
    const double price = bought.price_usd;
    const int all_units = bought.all_units();
    const double per_unit_gpus = quote.offer->gpus_per_unit;
    CostBreakdown& part = cost.breakdown;
    double rented_hours = usage.job_seconds / seconds_per_hour;
    if (usage.service) {
        const double floor_share =
            usage.min_gpus > 0 ? std::min(1.0, static_cast<double>(usage.min_gpus) / (all_units * per_unit_gpus)) : 0.0;
        rented_hours =
            deployment.autoscale ? horizon_hours * std::max(usage.average_utilization, floor_share) : horizon_hours;
    }
    // Whole reservation terms, at least one: a 1-year or a 3-year commitment.
    const bool reserved = acquisition == Acquisition::cloud_reserved || acquisition == Acquisition::cloud_reserved_3y;
    const double term_months = acquisition == Acquisition::cloud_reserved_3y ? assumptions.reservation_3y_term_months
                                                                             : assumptions.reservation_term_months;
    const double committed_months = std::ceil(std::max(months, 1.0) / term_months) * term_months;
    const double startup_hours = usage.launches * assumptions.startup_hours_per_launch;
    cost.billed_months = months;
    double block_days = 0;
    if (reserved) {
        rented_hours = committed_months * hours_per_month;
        cost.billed_months = committed_months;
    } else if (acquisition == Acquisition::cloud_spot) {
        rented_hours *= 1.0 + deployment.spot_overhead_fraction;
    } else if (acquisition == Acquisition::cloud_capacity_block) {
        // The block holds the runs and their start-ups, rounded up to the lengths AWS sells; its
        // instances are not billed again for starting.
        block_days = capacity_block_days(rented_hours + startup_hours, assumptions);
        rented_hours = block_days * hours_per_day;
    }
    part.rental_usd = all_units * rented_hours * price;
    part.hidden_usd = (acquisition == Acquisition::cloud_capacity_block ? 0.0 : startup_hours * all_units * price) +
                      usage.transfer_bytes * assumptions.transfer_usd_per_byte;
    cost.tco_usd = part.rental_usd + part.hidden_usd;
    cost.monthly_opex_usd = cost.tco_usd / months;
    cost.energy_kwh = usage.gpus * bought.seats * gpu.power_watts / watts_per_kilowatt * busy_hours * deployment.pue;
    if (reserved) {
        cost.notes.push_back(fmt::format("reserved for {:.0f} months, billed whether used or not", committed_months));
    }
    if (acquisition == Acquisition::cloud_capacity_block) {
        cost.notes.push_back(fmt::format(
            "capacity block of {:.0f} day{} × {} instance{}, paid in full at booking, not cancellable; unused "
            "hours are not refunded",
            block_days, block_days == 1 ? "" : "s", all_units, all_units == 1 ? "" : "s"));
    }
}

}  // namespace

CostEstimate estimate_cost(const Workload& workload, const GpuSpec& gpu, const OfferQuote& quote,
                           const UsageProfile& usage, std::optional<double> unit_price_usd, CostDetail detail) {
    CostEstimate cost;
    const Acquisition acquisition = quote.acquisition;
    cost.acquisition = acquisition;
    cost.unit = usage.unit;
    const DeploymentSpec& deployment = workload.deployment;
    const double months = deployment.horizon_months;
    const double horizon_hours = months * hours_per_month;
    const double busy_hours =
        usage.service ? horizon_hours * usage.average_utilization : usage.job_seconds / seconds_per_hour;
    if (acquisition == Acquisition::cloud_spot && usage.service) {
        // Spot capacity can be reclaimed with 30 s to 2 min notice: not for a serving path.
        cost.unavailable_reason = "spot capacity can be reclaimed at short notice; not for serving";
        return cost;
    }
    const Offer& offer = *quote.offer;
    UnitsBought bought;
    bought.price_usd = unit_price_usd.value_or(quote.price.usd);
    bought.units = units_for(offer, usage.gpus);
    bought.seats = std::max(1, usage.seats);
    if (acquisition == Acquisition::cloud_capacity_block) {
        const std::string why = capacity_block_exclusion(usage, bought.units * bought.seats);
        if (!why.empty()) {
            cost.unavailable_reason = why;
            return cost;
        }
    }
    cost.available = true;
    cost.unit_price_usd = bought.price_usd;
    cost.offer = describe_offer(quote, bought.price_usd, bought.units, usage.gpus, detail);
    if (unit_price_usd) {
        cost.offer.price_kind = PriceKind::quote;
    }
    // What renting the same GPUs on demand would bill: every hour of a service (unless it
    // autoscales), the runs of a batch job.
    const double billed_hours = usage.service && !deployment.autoscale ? horizon_hours : busy_hours;
    cost.cloud_equivalent_usd =
        usage.reference_rent_usd_per_gpu_hour * usage.gpus * std::max(1, usage.seats) * billed_hours;
    if (bought.seats > 1) {
        cost.offer.units *= bought.seats;
        cost.offer.idle_gpus *= bought.seats;
    }
    if (is_purchase(acquisition)) {
        add_purchase_cost(workload, gpu, quote, bought, cost);
        add_delivery_wait(workload, offer, usage, cost);
    } else {
        add_rental_cost(workload, gpu, quote, usage, bought, busy_hours, cost);
    }
    if (cost.offer.idle_gpus > 0) {
        cost.notes.push_back(fmt::format("{} of the {} GPUs bought or rented sit idle ({} per unit)",
                                         cost.offer.idle_gpus, bought.all_units() * offer.gpus_per_unit,
                                         offer.gpus_per_unit));
    }
    cost.usd_per_unit = usage.work_units > 0 ? cost.tco_usd / usage.work_units : 0;
    return cost;
}

}  // namespace gpusel

// The order line of a role's pick: what finance signs (units of the offer, unit price, totals,
// the reason and the alternative), taken from the pick's cost estimate without recomputing it.

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "base/units.hpp"
#include "plan/plan.hpp"

namespace gpusel {

ProcurementLine procurement_line(const RolePlan& plan) {
    ProcurementLine line;
    if (!plan.winner) {
        return line;
    }
    const Candidate& winner = *plan.winner;
    line.role = plan.role;
    line.gpu = winner.gpu;
    line.gpu_name = winner.gpu_name;
    line.quantity = winner.cost.offer.units + winner.cost.spare_units;
    line.gpus = winner.cost.offer.units * winner.cost.offer.gpus_per_unit + winner.cost.spare_gpus;
    line.offer = winner.cost.offer;
    line.acquisition = winner.acquisition;
    line.unit_price_usd = winner.cost.unit_price_usd;
    line.total_usd = winner.cost.capex_usd;
    line.host_usd = winner.cost.breakdown.servers_usd;
    line.resale_usd = winner.cost.breakdown.resale_usd;
    line.resale_counted = winner.cost.resale_counted;
    line.depreciation_usd_per_month = winner.cost.depreciation_usd_per_month;
    line.depreciation_months = winner.cost.depreciation_months;
    line.monthly_opex_usd = winner.cost.monthly_opex_usd;
    if (!is_purchase(winner.acquisition)) {
        line.rental_extras_usd = winner.cost.breakdown.hidden_usd;
        line.billed_months = winner.cost.billed_months;
    }
    line.tco_usd = winner.cost.tco_usd;
    line.lead_time_weeks = winner.cost.lead_time_weeks;
    line.wait_weeks = winner.cost.wait_weeks;
    line.wait_usd = winner.cost.breakdown.wait_usd;
    line.lead_time_basis = winner.cost.lead_time_basis;
    line.horizon_months = plan.workload.deployment.horizon_months;
    line.reason = winner.reason;
    line.precision = winner.precision;
    if (plan.alternative) {
        line.alternative = fmt::format("{} ×{} ({}, {})", plan.alternative->gpu, plan.alternative->count,
                                       describe(plan.alternative->acquisition), plan.alternative->cost.offer.id);
        line.alternative_reason = plan.alternative_why_not;
    }
    return line;
}

std::string_view to_string(OrderItem item) {
    return item == OrderItem::host ? "host" : "gpus";
}

std::vector<OrderLine> order_lines(const ProcurementLine& line) {
    const bool bought = is_purchase(line.acquisition);
    const OfferUse& offer = line.offer;
    OrderLine units;
    units.role = line.role;
    units.item = OrderItem::gpus;
    units.acquisition = line.acquisition;
    units.id = offer.id;
    units.name = offer.kind == OfferKind::rental && !offer.instance_type.empty() ? offer.instance_type : offer.name;
    units.provider = offer.provider;
    units.quantity_units = line.quantity;
    units.spare_units = line.quantity - offer.units;
    units.gpus_per_unit = offer.gpus_per_unit;
    units.gpus = line.gpus;
    units.unit_price_usd = line.unit_price_usd;
    units.price_per = offer.price_per();
    units.price_kind = offer.price_kind;
    units.price_as_of = offer.as_of;
    units.horizon_months = line.horizon_months;
    if (bought) {
        units.capex_usd = line.quantity * line.unit_price_usd;
        units.opex_usd_per_month = line.monthly_opex_usd;
        units.resale_usd = line.resale_usd;
        units.resale_subtracted_usd = line.resale_counted ? line.resale_usd : 0.0;
        units.depreciation_usd_per_month =
            line.depreciation_months > 0 ? units.capex_usd / line.depreciation_months : 0.0;
        units.rent_usd = line.wait_usd;
    } else {
        // The cost model's monthly opex of a rental is its rent spread over the horizon: the rent
        // column carries it whole (a reserved term may bill past the horizon).
        units.rent_usd = line.tco_usd;
    }
    // The role's TCO less its hosts: the lines add up to the role's TCO as the cost model summed it
    // (capex + opex × months + rent − counted resale, the same terms).
    const bool with_hosts = bought && offer.hosts > 0;
    units.tco_usd = line.tco_usd - (with_hosts ? line.host_usd : 0.0);
    std::vector<OrderLine> lines{units};
    if (with_hosts) {
        OrderLine hosts;
        hosts.role = line.role;
        hosts.item = OrderItem::host;
        hosts.acquisition = line.acquisition;
        hosts.id = offer.host_id;
        hosts.name = offer.host_name;
        hosts.quantity_units = offer.hosts;
        hosts.unit_price_usd = offer.host_price_usd;
        hosts.price_per = "unit";
        hosts.price_kind = offer.host_price_kind;
        hosts.price_as_of = offer.host_price_as_of;
        hosts.horizon_months = line.horizon_months;
        hosts.capex_usd = line.host_usd;
        hosts.depreciation_usd_per_month =
            line.depreciation_months > 0 ? hosts.capex_usd / line.depreciation_months : 0.0;
        hosts.tco_usd = hosts.capex_usd;
        lines.push_back(hosts);
    }
    return lines;
}

OrderLineTotals order_line_totals(const std::vector<ProcurementLine>& procurement) {
    OrderLineTotals totals;
    for (const ProcurementLine& procured : procurement) {
        for (const OrderLine& line : order_lines(procured)) {
            totals.gpus += line.gpus;
            totals.capex_usd += line.capex_usd;
            totals.opex_usd_per_month += line.opex_usd_per_month;
            totals.rent_usd += line.rent_usd;
            totals.resale_usd += line.resale_usd;
            totals.resale_subtracted_usd += line.resale_subtracted_usd;
            totals.tco_usd += line.tco_usd;
        }
    }
    return totals;
}

namespace {

// The share of month `month` (1-based) that a span of `months` from month 1 covers: 1 for the
// months inside it, the fraction for a last partial month, 0 beyond.
double month_share(double months, int month) {
    return std::clamp(months - (month - 1), 0.0, 1.0);
}

}  // namespace

std::vector<CashFlowMonth> cash_flow(const ProcurementLine& line) {
    const bool bought = is_purchase(line.acquisition);
    const bool block = line.acquisition == Acquisition::cloud_capacity_block;
    const double horizon = line.horizon_months;
    const double billed = bought ? horizon : std::max(line.billed_months, horizon);
    const int last = horizon > 0 ? static_cast<int>(std::ceil(std::max(horizon, billed))) : 0;
    const int resale_month = horizon > 0 ? static_cast<int>(std::ceil(horizon)) : 0;
    std::vector<CashFlowMonth> months(static_cast<std::size_t>(last) + 1);
    for (int month = 0; month <= last; ++month) {
        CashFlowMonth& flow = months[static_cast<std::size_t>(month)];
        flow.month = month;
        if (month == 0) {
            flow.capex_usd = bought ? line.total_usd : 0.0;
            if (block) {
                // A capacity block is paid in full when it is booked, before its first hour.
                flow.rent_usd = line.tco_usd - line.rental_extras_usd;
            }
        } else if (bought) {
            flow.opex_usd = line.monthly_opex_usd * month_share(horizon, month);
            // The wait for delivery, bridged by renting, is billed from month 1 until the units arrive.
            const double wait_months = line.wait_weeks * 7 * 24 / hours_per_month;
            flow.rent_usd = wait_months > 0 ? line.wait_usd * month_share(wait_months, month) / wait_months : 0.0;
        } else if (!line.rent_usd_by_month.empty()) {
            // A fleet's rented peak: the hours each month rents, growth included (plan/fleet.hpp).
            flow.rent_usd = static_cast<std::size_t>(month) <= line.rent_usd_by_month.size()
                                ? line.rent_usd_by_month[static_cast<std::size_t>(month) - 1]
                                : 0.0;
        } else {
            // Instance-hours (the TCO less start-up and transfer) over the months billed — a
            // reservation through its whole committed term, past the horizon when the term is —
            // unless prepaid at booking (a capacity block); start-up and transfer with the runs,
            // over the horizon.
            flow.rent_usd =
                (block ? 0.0 : (line.tco_usd - line.rental_extras_usd) * month_share(billed, month) / billed) +
                line.rental_extras_usd * month_share(horizon, month) / horizon;
        }
        if (bought && month == resale_month) {
            (line.resale_counted ? flow.resale_usd : flow.resale_not_counted_usd) = line.resale_usd;
        }
        flow.net_usd = flow.capex_usd + flow.opex_usd + flow.rent_usd - flow.resale_usd;
    }
    return months;
}

}  // namespace gpusel

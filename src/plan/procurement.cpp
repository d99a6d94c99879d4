// The order line of a role's pick: what finance signs (units of the offer, unit price, totals,
// the reason and the alternative), taken from the pick's cost estimate without recomputing it.

#include <fmt/format.h>

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
    line.monthly_opex_usd = winner.cost.monthly_opex_usd;
    line.tco_usd = winner.cost.tco_usd;
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

}  // namespace gpusel

#pragma once
// The visual report: one self-contained HTML document for a plan. Pure: a PlanReport in, the
// document's text out; it never recomputes an estimate, only arranges what the plan holds.
//
// Contents: project summary and the assumptions (defaults applied); the procurement table and
// totals; then per role (each starting a new printed page): the restated question, the
// ranked candidates, a scatter plot (training: time to train vs TCO; inference: P99 latency vs
// throughput) with the Pareto front and every point labelled GPU × count, the memory per GPU
// of each candidate by component against its capacity, the cumulative cost over the horizon
// (bought vs rented, break-even marked), the bottleneck of each candidate, the advice, and the
// rejected catalog entries with the reason.
//
// Self-contained: no scripts, no external style sheets, fonts or images; inline CSS and SVG
// only, so it opens offline and prints on A4 (@media print). All text is escaped (xml_escape,
// text.hpp). The output is deterministic (no timestamps), so two runs on the same plan give the
// same bytes.

#include <optional>
#include <string>
#include <vector>

#include "plan/plan.hpp"
#include "report/svg.hpp"

namespace gpusel {

std::string render_plan_html(const PlanReport& report);

// Cumulative cost of a candidate at months 0, 1, …, horizon (and the horizon itself when it
// is not a whole number), from its CostEstimate: bought = capex at month 0 plus the monthly
// opex each month; rented = the monthly opex each month. Values in USD.
std::vector<svg::Point> cumulative_cost_by_month(const CostEstimate& cost, double horizon_months);

// For a bought candidate, the same GPU-hours rented on demand (cloud_equivalent_usd spread
// evenly over the horizon), in the same form; empty for a rented candidate or when the
// catalog has no on-demand price (cloud_equivalent_usd == 0).
std::vector<svg::Point> on_demand_equivalent_by_month(const CostEstimate& cost, double horizon_months);

// The month from which a bought candidate has cost less than renting the same GPU-hours on
// demand: where the two lines above cross, break_even_month(capex, monthly opex,
// cloud_equivalent_usd / horizon_months) of the cost model (cost.hpp); over the workload's
// horizon it is CostEstimate::break_even_month. May lie beyond the horizon. nullopt for a rented
// candidate, without an on-demand price, or when renting costs no more per month than running
// the owned GPUs.
std::optional<double> buy_versus_rent_break_even_month(const CostEstimate& cost, double horizon_months);

}  // namespace gpusel

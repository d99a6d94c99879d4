#pragma once
// Cost model: what a candidate costs over the workload's horizon, bought or rented. Pure.
// Defaults and their sources: docs/cost-model.md (docs/reference/formulas.md, cost section); the
// decision constants are data/cost.yaml (builtin_cost_assumptions(), each value with its source).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/catalog.hpp"
#include "cost/offer_selection.hpp"
#include "inputs/cost_assumptions.hpp"
#include "inputs/workload.hpp"

namespace gpusel {

// How much work the candidate must do, from the performance model.
struct UsageProfile {
    int gpus = 1;                      // GPUs in service (all replicas)
    double job_seconds = 0;            // batch work (training): wall-clock of all runs; 0 for a service
    bool service = false;              // inference: runs for the whole horizon
    double work_units = 0;             // units of work delivered over the horizon (see unit)
    std::string unit;                  // "1M tokens", "1k requests", "epoch"
    double average_utilization = 0.7;  // share of wall time the GPUs are busy (owned or rented service)
    double transfer_bytes = 0;         // data moved into a cloud per run (dataset)
    int launches = 1;                  // cloud instance starts over the horizon
    // The lowest on-demand price per GPU-hour of this GPU the workload may rent: what renting
    // the same GPU-hours would cost (break-even); 0 = none offered.
    double reference_rent_usd_per_gpu_hour = 0;
    int seats = 1;     // development: identical boxes, one per engineer (units × seats)
    int min_gpus = 0;  // service with autoscale: GPUs that always stay provisioned
};

// The offer a cost was computed from, as procurement and machine output name it (JSON `offer`).
struct OfferUse {
    std::string id;
    OfferKind kind = OfferKind::purchase;
    std::string provider;  // provider id
    std::string provider_name;
    ProviderTier tier = ProviderTier::none;  // rentals
    std::string instance_type;               // rentals
    UnitForm form = UnitForm::card;          // purchases
    std::string name;                        // the unit as an order names it
    std::string region;                      // rentals: where the price holds
    int gpus_per_unit = 1;
    int units = 0;         // units in service (spares not included)
    int idle_gpus = 0;     // GPUs of those units the candidate does not use
    double price_usd = 0;  // per unit, or per unit-hour
    // The zone prices behind a spot price_usd that is their median (PricePoint::zones_usd);
    // empty = one price.
    std::vector<double> zones_usd;
    PriceKind price_kind = PriceKind::estimate;
    std::string as_of;
    std::vector<std::string> sources;
    std::string host_id;  // the host a card or baseboard needs, priced in the capex
    std::string host_name;
    int hosts = 0;
    double host_price_usd = 0;
    PriceKind host_price_kind = PriceKind::estimate;
    std::string host_price_as_of;
    std::string order;  // "2 × p5.48xlarge (16 × H100-SXM5), AWS us-east-1, on-demand $55.04/h"
    bool estimated() const {
        return price_kind == PriceKind::estimate || (hosts > 0 && host_price_kind == PriceKind::estimate);
    }
    std::string_view price_per() const { return kind == OfferKind::rental ? "unit-hour" : "unit"; }
};

struct CostBreakdown {
    double gpus_usd = 0;        // purchase of GPUs
    double servers_usd = 0;     // host share
    double spares_usd = 0;      // spare GPUs of the same model
    double power_usd = 0;       // energy over the horizon incl. PUE
    double operations_usd = 0;  // people and facility, per GPU-month
    double failures_usd = 0;    // expected replacements not covered by spares
    double resale_usd = 0;      // expected value at the horizon's end (subtracted only when counted)
    double rental_usd = 0;      // cloud GPU-hours
    double hidden_usd = 0;      // start-up minutes, data transfer
    // Purchases delivered after deployment.deliver_by: the same GPUs rented on demand for the
    // wait (docs/cost-model.md, "Delivery and the wait"); in tco_usd.
    double wait_usd = 0;
};

struct CostEstimate {
    Acquisition acquisition = Acquisition::buy_new;
    bool available = false;  // false when the catalog lacks the price this needs
    std::string unavailable_reason;
    double unit_price_usd = 0;  // per unit (buy) or per unit-hour (rent) of the offer
    int spare_gpus = 0;
    int spare_units = 0;  // spare units of the offer (spare_gpus = spare_units × GPUs per unit)
    OfferUse offer;
    double capex_usd = 0;                   // bought up front
    double monthly_opex_usd = 0;            // average per month over the horizon
    double tco_usd = 0;                     // capex + opex over the horizon (− resale when resale_counted)
    bool resale_counted = false;            // deployment.count_resale: expected resale subtracted from tco_usd
    int warranty_months = 0;                // purchases: failures within it cost spares and downtime, not GPUs
    Site site = Site::datacenter;           // where the units run, for power and operations
    double depreciation_usd_per_month = 0;  // straight-line: capex / depreciation_months
    double depreciation_months = 0;         // purchases: the asset life; 0 when rented
    double book_value_at_horizon_usd = 0;   // capex × (1 − horizon / asset life), at least 0
    double billed_months = 0;               // rented: months billed (reserved: whole terms, may pass the horizon)
    double cloud_equivalent_usd = 0;        // the same GPU-hours rented on demand
    // Buying: break_even_month(capex_usd, monthly_opex_usd, cloud_equivalent_usd / horizon), the
    // month from which owning has cost less than renting the same GPU-hours on demand.
    std::optional<double> break_even_month;
    double usd_per_unit = 0;
    std::string unit;
    double energy_kwh = 0;
    // Owned: what the units in service draw at full load, GPUs, hosts, NICs and fans included
    // (before PUE); rented: 0 (the rent pays the power).
    double system_power_watts = 0;
    CostBreakdown breakdown;
    std::vector<std::string> notes;
    // Purchases, when the workload sets deployment.deliver_by (0 otherwise): weeks from order to
    // delivery (the offer's lead_time, else data/cost.yaml's by unit form) and the weeks of it
    // past deliver_by, bridged by renting (breakdown.wait_usd).
    double lead_time_weeks = 0;
    double wait_weeks = 0;
    std::string lead_time_basis;  // "quote" or "data/cost.yaml lead_time.server_weeks (reported 2024-04)"
};

// Words for a reader: "buy new", "buy used", "cloud on-demand", "cloud spot", "cloud reserved 1y",
// "cloud reserved 3y", "cloud capacity block".
// (Files and JSON use to_string's names, workload.hpp.)
std::string_view describe(Acquisition acquisition);

// The month from which owning has cost less in total than renting the same GPU-hours:
// capex_usd / (monthly_rent_usd − monthly_opex_usd). May lie beyond the horizon; absent when
// renting costs no more per month than running the owned GPUs (owning never catches up).
std::optional<double> break_even_month(double capex_usd, double monthly_opex_usd, double monthly_rent_usd);

// Prices `usage.gpus` GPUs of `gpu` acquired through `quote` (whole units of its offer, plus
// the hosts cards and baseboards need) for `usage` over the workload's horizon.
// `unit_price_usd` overrides the offer's price per unit or unit-hour (a quote). Never throws;
// spot for a service gives available = false with the reason. The decision constants are
// builtin_cost_assumptions()'s. CostDetail::figures leaves the offer's words out (OfferUse's
// names, sources and order text: empty), every figure as with `full`: for callers that re-price
// one configuration many times and read only the money (the robustness analysis).
enum class CostDetail { full, figures };
CostEstimate estimate_cost(const Workload& workload, const GpuSpec& gpu, const OfferQuote& quote,
                           const UsageProfile& usage, std::optional<double> unit_price_usd = std::nullopt,
                           CostDetail detail = CostDetail::full);

// The days of the shortest AWS Capacity Block that holds `hours`: whole days up to
// capacity_block_daily_until_days (14), then whole steps of capacity_block_step_days (7); 0 when
// longer than capacity_block_max_days (182) (data/cost.yaml, rental).
double capacity_block_days(double hours, const CostAssumptions& assumptions = builtin_cost_assumptions());

// The manufacturer's warranty of a unit, in months, by the GPU's segment for a new unit: 36 for
// datacenter and workstation parts and servers, 24 for GeForce cards, 12 for edge modules, 0 for
// used or refurbished units (data/cost.yaml `warranty`, with the sources).
int warranty_months(const GpuSpec& gpu, const Offer& offer,
                    const CostAssumptions& assumptions = builtin_cost_assumptions());

// Where a unit of `offer` runs for `workload`: office when the workload allows a desk-side box
// and the unit may stand there, edge for edge deployments, else a data centre.
Site costing_site(const Workload& workload, const Offer& offer);

// The acquisition strategy practitioners use by horizon (docs/reference/formulas.md): rent below 6 months,
// mix 6–24 months, own beyond (data/cost.yaml `strategy`).
std::string horizon_strategy(double horizon_months, const CostAssumptions& assumptions = builtin_cost_assumptions());

// Expected share of GPUs failing within `months` of service (the FailureCurve of data/cost.yaml):
// ≈1.8 % in the first 12 months, ≈11 % per 6 months from month 18 (docs/reference/formulas.md,
// cost section), linear in between; at most 1.
double expected_failure_fraction(double months, const CostAssumptions& assumptions = builtin_cost_assumptions());

// Share of the purchase price a GPU keeps after `months`: it loses ≈55 % in two years
// (docs/reference/formulas.md), i.e. 0.45^(months/24) (data/cost.yaml `resale`).
double residual_value_fraction(double months, const CostAssumptions& assumptions = builtin_cost_assumptions());

}  // namespace gpusel

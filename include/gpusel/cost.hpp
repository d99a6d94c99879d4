#pragma once
// Cost model: what a candidate costs over the workload's horizon, bought or rented. Pure.
// Defaults and their sources: docs/cost-model.md (formulas.md, cost section).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpusel/catalog.hpp"
#include "gpusel/workload.hpp"

namespace gpusel {

// How much work the candidate must do, from the performance model.
struct UsageProfile {
    int gpus = 1;                  // GPUs in service (all replicas)
    double job_seconds = 0;        // batch work (training): wall-clock of all runs; 0 for a service
    bool service = false;          // inference: runs for the whole horizon
    double work_units = 0;         // units of work delivered over the horizon (see unit)
    std::string unit;              // "1M tokens", "1k requests", "epoch"
    double average_utilization = 0.7;  // share of wall time the GPUs are busy (owned or rented service)
    double transfer_bytes = 0;     // data moved into a cloud per run (dataset)
    int launches = 1;              // cloud instance starts over the horizon
};

struct CostBreakdown {
    double gpus_usd = 0;          // purchase of GPUs
    double servers_usd = 0;       // host share
    double spares_usd = 0;        // spare GPUs of the same model
    double power_usd = 0;         // energy over the horizon incl. PUE
    double operations_usd = 0;    // people and facility, per GPU-month
    double failures_usd = 0;      // expected replacements not covered by spares
    double resale_usd = 0;        // value recovered at the horizon's end (subtracted)
    double rental_usd = 0;        // cloud GPU-hours
    double hidden_usd = 0;        // start-up minutes, data transfer
};

struct CostEstimate {
    Acquisition acquisition = Acquisition::buy_new;
    bool available = false;         // false when the catalog lacks the price this needs
    std::string unavailable_reason;
    double unit_price_usd = 0;      // per GPU (buy) or per GPU-hour (rent)
    int spare_gpus = 0;
    double capex_usd = 0;           // bought up front
    double monthly_opex_usd = 0;    // average per month over the horizon
    double tco_usd = 0;             // capex + opex over the horizon − resale
    double cloud_equivalent_usd = 0;  // the same GPU-hours rented on demand
    // Buying: break_even_month(capex_usd, monthly_opex_usd, cloud_equivalent_usd / horizon), the
    // month from which owning has cost less than renting the same GPU-hours on demand.
    std::optional<double> break_even_month;
    double usd_per_unit = 0;
    std::string unit;
    double energy_kwh = 0;
    CostBreakdown breakdown;
    std::vector<std::string> notes;
};

// True when `acquisition` buys the GPUs (new or used: capex now, resale at the horizon's end);
// false for every rental.
bool is_purchase(Acquisition acquisition);

// Words for a reader: "buy new", "buy used", "cloud on-demand", "cloud spot", "cloud reserved 1y".
// (Files and JSON use to_string's names, workload.hpp.)
std::string_view describe(Acquisition acquisition);

// The catalog's price of `gpu` for `acquisition`: USD per GPU when bought, per GPU-hour when
// rented; absent when the catalog does not list that price.
std::optional<double> catalog_unit_price(const GpuSpec& gpu, Acquisition acquisition);

// The month from which owning has cost less in total than renting the same GPU-hours:
// capex_usd / (monthly_rent_usd − monthly_opex_usd). May lie beyond the horizon; absent when
// renting costs no more per month than running the owned GPUs (owning never catches up).
std::optional<double> break_even_month(double capex_usd, double monthly_opex_usd, double monthly_rent_usd);

// Prices `count` GPUs of `gpu` acquired as `acquisition` for `usage` over the workload's
// horizon. `unit_price_usd` overrides the catalog price (a quote). Never throws; an
// unavailable price gives available = false with the reason.
CostEstimate estimate_cost(const Workload& workload, const GpuSpec& gpu, Acquisition acquisition,
                           const UsageProfile& usage, std::optional<double> unit_price_usd = std::nullopt);

// The acquisition strategy practitioners use by horizon (formulas.md): rent below 6 months,
// mix 6–24 months, own beyond.
std::string horizon_strategy(double horizon_months);

// Expected share of GPUs failing within `months` of service: ≈1.8 % in the first 12 months,
// ≈11 % per 6 months from month 18 (formulas.md, cost section), linear in between.
double expected_failure_fraction(double months);

// Share of the purchase price a GPU keeps after `months`: it loses ≈55 % in two years
// (formulas.md), i.e. 0.45^(months/24).
double residual_value_fraction(double months);

}  // namespace gpusel

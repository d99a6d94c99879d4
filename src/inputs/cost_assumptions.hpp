#pragma once
// The cost model's decision constants, loaded from data/cost.yaml (every value with its source
// and date). Data only: the cost model (cost/cost.hpp) applies them.

#include <string>
#include <string_view>
#include <vector>

#include "inputs/dated_values.hpp"

namespace gpusel {

// Expected share of owned GPUs that have failed by month m: a constant monthly hazard
// early_failed_fraction / early_end_months up to early_end_months, rising linearly to
// late_failed_fraction / (late_end_months − late_start_months) at late_start_months and constant
// from there on. 0 < early_end_months < late_start_months < late_end_months.
struct FailureCurve {
    double early_failed_fraction = 0;  // failed in months 0 … early_end_months
    double early_end_months = 0;
    double late_start_months = 0;
    double late_end_months = 0;
    double late_failed_fraction = 0;  // failed in months late_start_months … late_end_months
};

// A family of GPUs (ids starting with `family`, case-insensitive) and its published new price
// per GPU, USD: low_usd <= high_usd.
struct PriceBand {
    std::string family;  // "A100", "H100", "B200"
    double low_usd = 0;
    double high_usd = 0;
};

// The price sanity rules' constants (docs/cost-model.md, "Price sanity rules").
struct PriceSanityRules {
    double server_over_card_ratio = 0;  // a server's price per GPU may reach this × a band's top; >= 1
    double rent_years = 0;              // years of on-demand rent that must cost at least a purchase; > 0
    std::vector<PriceBand> bands;       // a100, h100, b200, in the file's order
};

struct CostAssumptions {
    FailureCurve failures;
    // Resale: a GPU keeps resale_value_kept_fraction^(months / resale_after_months) of its price.
    double resale_value_kept_fraction = 0;
    double resale_after_months = 0;
    // Spares: round(spare_fraction × units) when the horizon exceeds spare_above_horizon_months.
    double spare_fraction = 0;
    double spare_above_horizon_months = 0;
    // The maker's warranty of a new unit, by catalog segment; used and refurbished units.
    int datacenter_warranty_months = 0;
    int workstation_warranty_months = 0;
    int consumer_warranty_months = 0;
    int edge_warranty_months = 0;
    int used_warranty_months = 0;
    // Straight-line depreciation of owned units over this life unless the workload sets
    // deployment.asset_life; > 0.
    double asset_life_months = 0;
    // System power of owned units beyond their GPU boards (host CPUs, memory, NICs, fans, drives,
    // conversion losses), at the same full load as the boards' power: a server or rack without a
    // published system power, or a host without a published power, draws
    // server_over_board_ratio × its GPUs' board power in all (>= 1).
    double server_over_board_ratio = 0;
    // Renting: a reservation is billed for every hour of whole terms; hidden costs per launch and
    // per byte moved across zones (the file's startup_minutes_per_launch and transfer_usd_per_gb).
    double reservation_term_months = 0;
    double reservation_3y_term_months = 0;  // reserved_3y prices
    // AWS Capacity Blocks for ML: whole days up to capacity_block_daily_until_days, then steps of
    // capacity_block_step_days, at most capacity_block_max_days; at most
    // capacity_block_max_instances instances in one block.
    double capacity_block_daily_until_days = 0;
    double capacity_block_step_days = 0;
    double capacity_block_max_days = 0;
    double capacity_block_max_instances = 0;
    double startup_hours_per_launch = 0;
    double transfer_usd_per_byte = 0;
    // Owned units at a desk or at the edge, unless the workload sets deployment.pue / ops_per_gpu_month.
    double office_pue = 0;
    double office_ops_usd_per_gpu_month = 0;
    double edge_pue = 0;
    double edge_ops_usd_per_gpu_month = 0;
    // Strategy by horizon: rent below rent_below_months, mix up to own_above_months, own beyond.
    int rent_below_months = 0;
    int own_above_months = 0;
    PriceSanityRules price_sanity;
    // Purchase lead time, order to delivery, weeks, by unit form (the file's lead_time section;
    // an offer's own lead_time_weeks wins): card, module, baseboard, server, rack; each >= 0.
    double card_lead_weeks = 0;
    double module_lead_weeks = 0;
    double baseboard_lead_weeks = 0;
    double server_lead_weeks = 0;
    double rack_lead_weeks = 0;
    // Each value's source and date, by "section.key" as the file names it ("warranty.edge_months").
    DatedSources sources;
};

// Parses cost YAML (format in data/cost.yaml's header). Strict: every key is required, unknown
// keys, values out of range, missing sources and malformed dates are InputErrors at file:line:col,
// all of a file's problems at once.
CostAssumptions parse_cost_assumptions_text(std::string_view text, const std::string& file_name);

// The assumptions compiled into the binary from data/cost.yaml, parsed on first use and kept.
const CostAssumptions& builtin_cost_assumptions();

}  // namespace gpusel

// Loads data/cost.yaml: the cost model's decision constants, each with its source and date.

#include "inputs/cost_assumptions.hpp"

#include <fmt/format.h>

#include "base/text.hpp"
#include "io/yaml.hpp"

namespace gpusel::embedded {
std::string_view builtin_cost_yaml();
}

namespace gpusel {

namespace {

// Ranges reject unit slips (a fraction of 15 instead of 0.15, months written as years), not
// plausible values.
constexpr double max_months = 1200;

void read_failures(MapReader& section, CostAssumptions& assumptions) {
    FailureCurve& curve = assumptions.failures;
    DatedSources& sources = assumptions.sources;
    read_dated_number(section, "early_failed_fraction", UnitKind::fraction, 0, 1, curve.early_failed_fraction, sources);
    const bool early = read_dated_number(section, "early_end_months", UnitKind::plain, 0, max_months,
                                         curve.early_end_months, sources, true);
    const bool start = read_dated_number(section, "late_start_months", UnitKind::plain, 0, max_months,
                                         curve.late_start_months, sources, true);
    const bool end = read_dated_number(section, "late_end_months", UnitKind::plain, 0, max_months,
                                       curve.late_end_months, sources, true);
    read_dated_number(section, "late_failed_fraction", UnitKind::fraction, 0, 1, curve.late_failed_fraction, sources);
    // The hazard rises between the two periods: each starts after the one before it ends.
    if (early && start && !(curve.early_end_months < curve.late_start_months)) {
        dated_value_error(section, "late_start_months",
                          fmt::format("must be after early_end_months ({})", curve.early_end_months));
    }
    if (start && end && !(curve.late_start_months < curve.late_end_months)) {
        dated_value_error(section, "late_end_months",
                          fmt::format("must be after late_start_months ({})", curve.late_start_months));
    }
}

void read_warranty(MapReader& section, CostAssumptions& assumptions) {
    DatedSources& sources = assumptions.sources;
    constexpr int most = static_cast<int>(max_months);
    read_dated_integer(section, "datacenter_months", 0, most, assumptions.datacenter_warranty_months, sources);
    read_dated_integer(section, "workstation_months", 0, most, assumptions.workstation_warranty_months, sources);
    read_dated_integer(section, "consumer_months", 0, most, assumptions.consumer_warranty_months, sources);
    read_dated_integer(section, "edge_months", 0, most, assumptions.edge_warranty_months, sources);
    read_dated_integer(section, "used_months", 0, most, assumptions.used_warranty_months, sources);
}

void read_rental(MapReader& section, CostAssumptions& assumptions) {
    DatedSources& sources = assumptions.sources;
    read_dated_number(section, "reservation_term_months", UnitKind::plain, 0, max_months,
                      assumptions.reservation_term_months, sources, true);
    read_dated_number(section, "reservation_3y_term_months", UnitKind::plain, 0, max_months,
                      assumptions.reservation_3y_term_months, sources, true);
    read_dated_number(section, "capacity_block_daily_until_days", UnitKind::plain, 1, 366,
                      assumptions.capacity_block_daily_until_days, sources);
    read_dated_number(section, "capacity_block_step_days", UnitKind::plain, 1, 366,
                      assumptions.capacity_block_step_days, sources);
    read_dated_number(section, "capacity_block_max_days", UnitKind::plain, 1, 366, assumptions.capacity_block_max_days,
                      sources);
    read_dated_number(section, "capacity_block_max_instances", UnitKind::plain, 1, 1e6,
                      assumptions.capacity_block_max_instances, sources);
    double startup_minutes = 0;
    if (read_dated_number(section, "startup_minutes_per_launch", UnitKind::plain, 0, 24 * minutes_per_hour,
                          startup_minutes, sources)) {
        assumptions.startup_hours_per_launch = startup_minutes / minutes_per_hour;
    }
    double transfer_usd_per_gb = 0;
    if (read_dated_number(section, "transfer_usd_per_gb", UnitKind::plain, 0, 100, transfer_usd_per_gb, sources)) {
        assumptions.transfer_usd_per_byte = transfer_usd_per_gb / bytes_per_gb;
    }
}

void read_sites(MapReader& section, CostAssumptions& assumptions) {
    DatedSources& sources = assumptions.sources;
    read_dated_number(section, "office_pue", UnitKind::plain, 1, 5, assumptions.office_pue, sources);
    read_dated_number(section, "office_ops_usd_per_gpu_month", UnitKind::plain, 0, 1e6,
                      assumptions.office_ops_usd_per_gpu_month, sources);
    read_dated_number(section, "edge_pue", UnitKind::plain, 1, 5, assumptions.edge_pue, sources);
    read_dated_number(section, "edge_ops_usd_per_gpu_month", UnitKind::plain, 0, 1e6,
                      assumptions.edge_ops_usd_per_gpu_month, sources);
}

void read_strategy(MapReader& section, CostAssumptions& assumptions) {
    DatedSources& sources = assumptions.sources;
    constexpr int most = static_cast<int>(max_months);
    const bool rent = read_dated_integer(section, "rent_below_months", 0, most, assumptions.rent_below_months, sources);
    const bool own = read_dated_integer(section, "own_above_months", 0, most, assumptions.own_above_months, sources);
    if (rent && own && assumptions.own_above_months < assumptions.rent_below_months) {
        dated_value_error(section, "own_above_months",
                          fmt::format("must be at least rent_below_months ({})", assumptions.rent_below_months));
    }
}

void read_price_sanity(MapReader& section, CostAssumptions& assumptions) {
    DatedSources& sources = assumptions.sources;
    PriceSanityRules& rules = assumptions.price_sanity;
    read_dated_number(section, "server_over_card_ratio", UnitKind::plain, 1, 10, rules.server_over_card_ratio, sources);
    read_dated_number(section, "rent_years", UnitKind::plain, 0, 50, rules.rent_years, sources, true);
    // The families with a published band; a new one is a new pair of keys here and in the file.
    for (const char* family : {"A100", "H100", "B200"}) {
        const std::string prefix = to_lower(family);
        PriceBand band{family, 0, 0};
        const bool low =
            read_dated_number(section, prefix + "_low_usd", UnitKind::plain, 0, 1e7, band.low_usd, sources, true);
        const bool high =
            read_dated_number(section, prefix + "_high_usd", UnitKind::plain, 0, 1e7, band.high_usd, sources, true);
        if (low && high && band.high_usd < band.low_usd) {
            dated_value_error(section, prefix + "_high_usd",
                              fmt::format("must be at least {}_low_usd ({})", prefix, band.low_usd));
        }
        rules.bands.push_back(band);
    }
}

}  // namespace

CostAssumptions parse_cost_assumptions_text(std::string_view text, const std::string& file_name) {
    const YamlNode root = parse_yaml_text(text, file_name);
    Diagnostics diagnostics(file_name);
    MapReader top(root, "", diagnostics);
    CostAssumptions assumptions;
    top.require("format");
    top.format_version();
    read_dated_section(top, "failures", [&](MapReader& section) { read_failures(section, assumptions); });
    read_dated_section(top, "resale", [&](MapReader& section) {
        read_dated_number(section, "value_kept_fraction", UnitKind::fraction, 0, 1,
                          assumptions.resale_value_kept_fraction, assumptions.sources);
        read_dated_number(section, "after_months", UnitKind::plain, 0, max_months, assumptions.resale_after_months,
                          assumptions.sources, true);
    });
    read_dated_section(top, "spares", [&](MapReader& section) {
        read_dated_number(section, "fraction", UnitKind::fraction, 0, 1, assumptions.spare_fraction,
                          assumptions.sources);
        read_dated_number(section, "above_horizon_months", UnitKind::plain, 0, max_months,
                          assumptions.spare_above_horizon_months, assumptions.sources);
    });
    read_dated_section(top, "warranty", [&](MapReader& section) { read_warranty(section, assumptions); });
    read_dated_section(top, "depreciation", [&](MapReader& section) {
        read_dated_number(section, "asset_life_months", UnitKind::plain, 0, max_months, assumptions.asset_life_months,
                          assumptions.sources, true);
    });
    read_dated_section(top, "system_power", [&](MapReader& section) {
        read_dated_number(section, "server_over_board_ratio", UnitKind::plain, 1, 10,
                          assumptions.server_over_board_ratio, assumptions.sources);
    });
    read_dated_section(top, "rental", [&](MapReader& section) { read_rental(section, assumptions); });
    read_dated_section(top, "sites", [&](MapReader& section) { read_sites(section, assumptions); });
    read_dated_section(top, "strategy", [&](MapReader& section) { read_strategy(section, assumptions); });
    read_dated_section(top, "price_sanity", [&](MapReader& section) { read_price_sanity(section, assumptions); });
    read_dated_section(top, "lead_time", [&](MapReader& section) {
        // Up to two years: a longer figure is a unit slip (days or months written as weeks).
        for (const auto& [key, into] : {std::pair<const char*, double*>{"card_weeks", &assumptions.card_lead_weeks},
                                        {"module_weeks", &assumptions.module_lead_weeks},
                                        {"baseboard_weeks", &assumptions.baseboard_lead_weeks},
                                        {"server_weeks", &assumptions.server_lead_weeks},
                                        {"rack_weeks", &assumptions.rack_lead_weeks}}) {
            read_dated_number(section, key, UnitKind::plain, 0, 104, *into, assumptions.sources);
        }
    });
    top.finish();
    diagnostics.throw_if_any();
    return assumptions;
}

const CostAssumptions& builtin_cost_assumptions() {
    static const CostAssumptions assumptions =
        parse_cost_assumptions_text(embedded::builtin_cost_yaml(), "data/cost.yaml");
    return assumptions;
}

}  // namespace gpusel

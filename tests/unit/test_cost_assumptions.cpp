#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "base/error.hpp"
#include "inputs/cost_assumptions.hpp"
#include "support/test_support.hpp"

using gpusel::CostAssumptions;
using gpusel::parse_cost_assumptions_text;
using gpusel::test::input_errors;

namespace {

std::string read_text(const std::string& relative) {
    std::ifstream file(gpusel::test::source_path(relative));
    std::ostringstream text;
    text << file.rdbuf();
    return text.str();
}

// Replaces the one occurrence of `from` in `text` and returns the 1-based line it starts on.
int replace_once(std::string& text, const std::string& from, const std::string& to) {
    const std::size_t at = text.find(from);
    REQUIRE(at != std::string::npos);
    REQUIRE(text.find(from, at + 1) == std::string::npos);
    text.replace(at, from.size(), to);
    return 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n'));
}

}  // namespace

TEST_CASE("cost assumptions: the built-in data/cost.yaml holds the documented values", "[cost]") {
    const CostAssumptions& cost = gpusel::builtin_cost_assumptions();
    CHECK(&cost == &gpusel::builtin_cost_assumptions());  // parsed once
    // docs/cost-model.md and docs/reference/formulas.md, cost section.
    CHECK(cost.failures.early_failed_fraction == 0.018);
    CHECK(cost.failures.early_end_months == 12);
    CHECK(cost.failures.late_start_months == 18);
    CHECK(cost.failures.late_end_months == 24);
    CHECK(cost.failures.late_failed_fraction == 0.11);
    CHECK(cost.resale_value_kept_fraction == 0.45);
    CHECK(cost.resale_after_months == 24);
    CHECK(cost.spare_fraction == 0.15);
    CHECK(cost.spare_above_horizon_months == 24);
    CHECK(cost.datacenter_warranty_months == 36);
    CHECK(cost.workstation_warranty_months == 36);
    CHECK(cost.consumer_warranty_months == 24);
    CHECK(cost.edge_warranty_months == 12);
    CHECK(cost.used_warranty_months == 0);
    CHECK(cost.asset_life_months == 60);
    CHECK(cost.server_over_board_ratio == 1.82);  // median of DGX H100 1.82, A100 2.03, B200 1.79
    CHECK(cost.reservation_term_months == 12);
    // Converted from the file's units exactly as the constants they replace were written.
    CHECK(cost.startup_hours_per_launch == 4.0 / 60.0);
    CHECK(cost.transfer_usd_per_byte == 0.01 / 1e9);
    CHECK(cost.office_pue == 1.0);
    CHECK(cost.office_ops_usd_per_gpu_month == 0);
    CHECK(cost.edge_pue == 1.0);
    CHECK(cost.edge_ops_usd_per_gpu_month == 0);
    // AWS EC2 User Guide, "Find and purchase Capacity Blocks"; a 3-year term is 36 months.
    CHECK(cost.reservation_3y_term_months == 36);
    CHECK(cost.capacity_block_daily_until_days == 14);
    CHECK(cost.capacity_block_step_days == 7);
    CHECK(cost.capacity_block_max_days == 182);
    CHECK(cost.capacity_block_max_instances == 64);
    CHECK(cost.rent_below_months == 6);
    CHECK(cost.own_above_months == 24);
    // docs/cost-model.md, "Price sanity rules".
    CHECK(cost.price_sanity.server_over_card_ratio == 1.64);
    CHECK(cost.price_sanity.rent_years == 5);
    REQUIRE(cost.price_sanity.bands.size() == 3);
    CHECK(cost.price_sanity.bands[0].family == "A100");
    CHECK(cost.price_sanity.bands[0].low_usd == 10000);
    CHECK(cost.price_sanity.bands[0].high_usd == 25000);
    CHECK(cost.price_sanity.bands[1].family == "H100");
    CHECK(cost.price_sanity.bands[1].low_usd == 25000);
    CHECK(cost.price_sanity.bands[1].high_usd == 41250);
    CHECK(cost.price_sanity.bands[2].family == "B200");
    CHECK(cost.price_sanity.bands[2].low_usd == 30000);
    CHECK(cost.price_sanity.bands[2].high_usd == 40000);
    // docs/cost-model.md, "Delivery and the wait": weeks from order to delivery by unit form.
    CHECK(cost.card_lead_weeks == 1);
    CHECK(cost.module_lead_weeks == 1);
    CHECK(cost.baseboard_lead_weeks == 10);
    CHECK(cost.server_lead_weeks == 10);
    CHECK(cost.rack_lead_weeks == 26);
    CHECK_FALSE(cost.sources.at("lead_time.server_weeks").estimate());
    CHECK(cost.sources.at("lead_time.rack_weeks").estimate());
    // Every value has a source and a month; the ones no document gives say they are estimates.
    // 33 + the 3-year term and the four capacity-block limits + the five lead times by unit form.
    CHECK(cost.sources.size() == 43);
    for (const auto& [key, dated] : cost.sources) {
        INFO(key);
        CHECK_FALSE(dated.source.empty());
        CHECK(dated.as_of.size() == 7);
    }
    CHECK(cost.sources.at("warranty.edge_months").estimate());
    CHECK(cost.sources.at("warranty.used_months").estimate());
    CHECK_FALSE(cost.sources.at("warranty.datacenter_months").estimate());
    CHECK_FALSE(cost.sources.at("failures.late_failed_fraction").estimate());
}

TEST_CASE("cost assumptions: a malformed cost file gives every problem at file:line:col", "[cost]") {
    std::string text = read_text("data/cost.yaml");
    REQUIRE_NOTHROW(parse_cost_assumptions_text(text, "cost.yaml"));
    const int month =
        replace_once(text, "    as_of: 2026-11\n  early_end_months:", "    as_of: 2026-13\n  early_end_months:");
    const int fraction = replace_once(text, "    value: 0.15\n", "    value: 15\n");
    const int misspelt = replace_once(text, "  edge_months:\n", "  edge_month:\n");
    const int reason =
        replace_once(text,
                     "\"estimate: used and refurbished units are taken as sold as-is (docs/cost-model.md: "
                     "'none for used or refurbished units'); no reseller's term is cited\"",
                     "\"estimate: \"");
    const std::vector<std::string> errors = input_errors([&] { parse_cost_assumptions_text(text, "cost.yaml"); });
    REQUIRE(errors.size() == 5);
    CHECK(errors[0] == fmt::format("cost.yaml:{}:12: failures.early_failed_fraction.as_of: '2026-13' is not a month; "
                                   "write YYYY-MM, e.g. 2026-11",
                                   month));
    CHECK_THAT(errors[1], Catch::StartsWith(fmt::format("cost.yaml:{}:12: spares.fraction.value: ", fraction)));
    // The section misses edge_months (reported at the section) and has a key nobody asked for.
    CHECK_THAT(errors[2], Catch::Matches("cost.yaml:[0-9]+:[0-9]+: warranty.edge_months: missing required field"));
    CHECK(errors[3] == fmt::format("cost.yaml:{}:3: warranty.edge_month: unknown field 'edge_month', "
                                   "did you mean 'edge_months'?",
                                   misspelt));
    CHECK(errors[4] == fmt::format("cost.yaml:{}:13: warranty.used_months.source: an estimate says why: "
                                   "\"estimate: <reason>\"",
                                   reason));
}

TEST_CASE("cost assumptions: the failure curve's periods must follow each other", "[cost]") {
    std::string text = read_text("data/cost.yaml");
    const int late = replace_once(text, "    value: 18\n", "    value: 6\n");
    CHECK(input_errors([&] { parse_cost_assumptions_text(text, "cost.yaml"); }) ==
          std::vector<std::string>{fmt::format(
              "cost.yaml:{}:12: failures.late_start_months.value: must be after early_end_months (12)", late)});
}

TEST_CASE("cost assumptions: a price band's top is at least its bottom", "[cost]") {
    std::string text = read_text("data/cost.yaml");
    const int high = replace_once(text, "  h100_high_usd:\n    value: 41250\n", "  h100_high_usd:\n    value: 20000\n");
    CHECK(input_errors([&] { parse_cost_assumptions_text(text, "cost.yaml"); }) ==
          std::vector<std::string>{fmt::format(
              "cost.yaml:{}:12: price_sanity.h100_high_usd.value: must be at least h100_low_usd (25000)", high + 1)});
}

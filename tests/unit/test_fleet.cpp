// inference.load and the owned-base-plus-rented-peak fleet (plan/fleet.hpp; issue 37 items 1-2).

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "plan/internal.hpp"
#include "plan/plan.hpp"
#include "support/test_support.hpp"

using gpusel::FleetPlan;
using gpusel::FleetPricing;
using gpusel::Workload;
using gpusel::test::input_errors;

namespace {
using gpusel::test::catalog;
using gpusel::test::efficiency;
using gpusel::test::models;

// examples/chat-diurnal.yaml planned once for the tests that read it.
const gpusel::PlanReport& diurnal_report() {
    static const gpusel::PlanReport report = [] {
        gpusel::Project project;
        project.workloads.push_back(gpusel::load_workload_file(gpusel::test::source_path("examples/chat-diurnal.yaml"),
                                                               gpusel::LoadContext{&catalog(), &models()}));
        return gpusel::make_plan(project, catalog(), efficiency(), gpusel::PlanOptions{});
    }();
    return report;
}
// A 24-hour profile: `day` from 09:00 to 21:00, `night` otherwise, as YAML.
std::string day_profile(const char* day, const char* night) {
    std::string profile = "[";
    for (int hour = 0; hour < 24; ++hour) {
        profile += (hour == 0 ? "" : ", ") + std::string(hour >= 9 && hour < 21 ? day : night);
    }
    return profile + "]";
}
Workload load(const std::string& text) {
    return gpusel::load_workload_text(text, "w.yaml", gpusel::LoadContext{&catalog(), &models()});
}
std::vector<std::string> errors(const std::string& text) {
    return input_errors([&] { load(text); });
}
bool any_contains(const std::vector<std::string>& lines, const std::string& part) {
    return std::any_of(lines.begin(), lines.end(),
                       [&](const std::string& line) { return line.find(part) != std::string::npos; });
}
const gpusel::Assumption* assumption(const Workload& workload, const std::string& field) {
    for (const gpusel::Assumption& a : workload.assumptions) {
        if (a.field == field) {
            return &a;
        }
    }
    return nullptr;
}

// A chat service whose inference section is `inference`.
std::string chat(const std::string& inference, const std::string& horizon = "12mo") {
    return "name: chat\nkind: inference\nmodel: {preset: llama-3.1-8b}\n" + inference +
           "\ndeployment: {horizon: " + horizon + "}\n";
}
std::string shares(int count, double value) {
    std::string text = "[";
    for (int i = 0; i < count; ++i) {
        text += (i == 0 ? "" : ", ") + fmt::format("{:g}", value);
    }
    return text + "]";
}

// Half a day at a low share, half at the peak; capacities, owned and rental prices chosen so
// that every figure is checked by hand below.
FleetPricing two_level(double low_share) {
    FleetPricing pricing;
    for (int hour = 0; hour < 24; ++hour) {
        pricing.hourly_shares.push_back(hour < 12 ? low_share : 1.0);
    }
    pricing.peak_requests_per_s = 40;
    pricing.growth_per_month = 0;
    pricing.horizon_months = 2;
    pricing.capacity_requests_per_s = {10, 21, 32, 43};
    pricing.owned_tco_usd = {0, 2000, 4000, 6000, 8000, 10000};
    pricing.rental_usd_per_block_hour = 2;
    pricing.replicas_per_block = 1;
    pricing.startup_lag_hours = 0.1;
    return pricing;
}
}  // namespace

TEST_CASE("fleet: inference.load sets the rate to the horizon's largest hourly load, said as an assumption",
          "[fleet]") {
    const Workload workload = load(chat("inference: {load: {profile: " + shares(24, 0.5).replace(1, 3, "1.0") +
                                        ", peak_rps: 40, growth: 5%/mo}}"));
    REQUIRE(workload.inference.load.given());
    CHECK(workload.inference.load.hourly_shares.size() == 24);
    CHECK(workload.inference.load.hourly_shares[0] == 1.0);
    CHECK(workload.inference.load.growth_per_month == Approx(0.05));
    // 12 months: the peak of month 12 is 40 × 1.05^11 = 68.4136 req/s.
    CHECK(workload.inference.requests_per_s == Approx(40 * std::pow(1.05, 11)));
    const gpusel::Assumption* derived = assumption(workload, "inference.requests_per_s");
    REQUIRE(derived != nullptr);
    CHECK(derived->value == "68.4136");
    CHECK(derived->source.find("month 12") != std::string::npos);
    CHECK(assumption(workload, "inference.requests_per_s")->source.find("1.05^11") != std::string::npos);
}

TEST_CASE("fleet: a profile whose largest share is not 1 is normalised, and said so", "[fleet]") {
    // 168 shares (a week) of 2 and one of 8: each / 8.
    std::string week = shares(168, 2);
    week.replace(1, 1, "8");
    const Workload workload = load(chat("inference: {load: {profile: " + week + ", peak_rps: 10}}"));
    CHECK(workload.inference.load.hourly_shares.size() == 168);
    CHECK(workload.inference.load.hourly_shares[0] == 1.0);
    CHECK(workload.inference.load.hourly_shares[1] == 0.25);
    REQUIRE(assumption(workload, "inference.load.profile") != nullptr);
    CHECK(assumption(workload, "inference.load.profile")->value == "each share / 8");
    // No growth given: the default, said.
    REQUIRE(assumption(workload, "inference.load.growth") != nullptr);
    CHECK(workload.inference.requests_per_s == 10);
}

TEST_CASE("fleet: inference.load errors point at the field with a fix", "[fleet]") {
    CHECK(any_contains(errors(chat("inference: {load: {profile: " + shares(23, 1) + ", peak_rps: 4}}")),
                       "inference.load.profile: 23 shares; give 24 (one per hour of a day) or 168"));
    std::string negative = shares(24, 1);
    negative.replace(1, 1, "-1");
    CHECK(any_contains(errors(chat("inference: {load: {profile: " + negative + ", peak_rps: 4}}")),
                       "inference.load.profile[0]"));
    CHECK(any_contains(errors(chat("inference: {load: {profile: " + shares(24, 0) + ", peak_rps: 4}}")),
                       "every share is 0"));
    CHECK(any_contains(errors(chat("inference: {load: {profile: " + shares(24, 1) + ", peak_rps: 4, growth: 5%/y}}")),
                       "inference.load.growth: '5%/y' is not a monthly growth: write 5%/mo"));
    CHECK(any_contains(errors(chat("inference: {load: {profile: " + shares(24, 1) + "}}")),
                       "inference.load.peak_rps: missing required field"));
    CHECK(any_contains(
        errors(chat("inference: {requests_per_s: 5, load: {profile: " + shares(24, 1) + ", peak_rps: 4}}")),
        "inference.requests_per_s: inference.load sets the load hour by hour"));
    CHECK(any_contains(errors(chat("inference: {load: {peak_rps: 4}}")), "inference.load needs profile"));
    // The error is at the line and column of the value.
    const std::vector<std::string> at =
        errors(chat("inference:\n  load:\n    profile: " + shares(25, 1) + "\n    peak_rps: 4"));
    CHECK(any_contains(at, "w.yaml:6:14: inference.load.profile: 25 shares"));
}

TEST_CASE("fleet: a trace of requests per hour becomes the profile, and a longer one is folded onto its busiest day",
          "[fleet]") {
    const std::filesystem::path directory = std::filesystem::temp_directory_path() / "gpusel-test-fleet-trace";
    std::filesystem::create_directories(directory);
    const std::filesystem::path csv = directory / "requests.csv";
    {
        std::ofstream out(csv);
        out << "hour,requests\n";
        // Two days: day 1 hour h has 3600 × (h + 1) requests, day 2 hour h has 3600 × 2 at hour 0
        // and 0 elsewhere. Folded: hour 0 = max(3600, 7200) = 7200, hour h = 3600 (h + 1).
        for (int hour = 0; hour < 48; ++hour) {
            const int requests = hour < 24 ? 3600 * (hour + 1) : (hour == 24 ? 7200 : 0);
            out << hour << "," << requests << "\n";
        }
    }
    const Workload workload = load(chat("inference: {load: {trace: " + csv.string() + "}}"));
    REQUIRE(workload.inference.load.hourly_shares.size() == 24);
    // The busiest hour: 3600 × 24 requests = 24 req/s.
    CHECK(workload.inference.load.peak_requests_per_s == Approx(24));
    CHECK(workload.inference.load.hourly_shares[0] == Approx(2.0 / 24));
    CHECK(workload.inference.load.hourly_shares[5] == Approx(6.0 / 24));
    CHECK(workload.inference.requests_per_s == Approx(24));
    REQUIRE(assumption(workload, "inference.load.trace") != nullptr);
    CHECK(assumption(workload, "inference.load.trace")->value == "48 hours folded onto a day");
    {
        std::ofstream out(csv);
        out << "hour,requests\n0,10\n2,10\n";
    }
    CHECK(any_contains(errors(chat("inference: {load: {trace: " + csv.string() + "}}")),
                       "requests.csv:3:1: hour '2'; the rows must count the hours 0, 1, 2, ... (this is hour 1)"));
    {
        std::ofstream out(csv);
        out << "time,count\n0,10\n";
    }
    CHECK(any_contains(errors(chat("inference: {load: {trace: " + csv.string() + "}}")),
                       "the header must be hour,requests"));
    CHECK(any_contains(errors(chat("inference: {load: {trace: " + csv.string() + ", peak_rps: 3}}")),
                       "the trace sets the peak"));
    std::filesystem::remove_all(directory);
}

TEST_CASE("fleet: each part's TCO recomputed by hand, and the least is chosen", "[fleet]") {
    // Hours 0-11 at 0.2 × 40 = 8 req/s need 1 replica (capacity 10); hours 12-23 at 40 req/s
    // need 4 (32 < 40 ≤ 43). The profile repeats 730.5 / 24 = 30.4375 times a month, 60.875
    // times over 2 months. With k owned, a day rents max(0, 1 − k) × 12 + (4 − k) × 12
    // replica-hours and starts (4 − max(k, 1)) replicas at hour 12 (the ones kept overnight are
    // never restarted); each replica-hour costs $2 and each start 0.1 h more.
    const FleetPlan fleet = gpusel::price_fleet(two_level(0.2));
    const double days = 730.5 / 24 * 2;
    const auto rented = [&](double replica_hours, double starts) { return (replica_hours + starts * 0.1) * 2 * days; };
    // k = 0: 60 h, 3 starts → $7,341.525; k = 1: 36 h, 3 starts + $2,000 → $6,419.525;
    // k = 2: 24 h, 2 starts + $4,000 → $6,946.35; k = 3: 12 h, 1 start + $6,000 → $7,473.175;
    // k = 4: $8,000.
    CHECK(fleet.peak_replicas_needed == 4);
    CHECK(fleet.all_rented.owned_replicas == 0);
    CHECK(fleet.all_rented.tco_usd == Approx(rented(60, 3)).epsilon(1e-12));
    CHECK(fleet.all_rented.tco_usd == Approx(7341.525).epsilon(1e-12));
    CHECK(fleet.all_owned.owned_replicas == 4);
    CHECK(fleet.all_owned.tco_usd == Approx(8000).epsilon(1e-12));
    CHECK(fleet.all_owned.rented_usd == 0);
    CHECK(fleet.chosen.owned_replicas == 1);
    CHECK(fleet.chosen.owned_tco_usd == Approx(2000).epsilon(1e-12));
    CHECK(fleet.chosen.rented_usd == Approx(rented(36, 3)).epsilon(1e-12));
    CHECK(fleet.chosen.tco_usd == Approx(6419.525).epsilon(1e-12));
    CHECK(fleet.chosen.rented_replica_hours == Approx(36 * days).epsilon(1e-12));
    CHECK(fleet.chosen.rented_launches == Approx(3 * days).epsilon(1e-12));
    CHECK(fleet.chosen.rented_replicas_at_peak == 3);
    CHECK(fleet.chosen.tco_usd <= fleet.all_owned.tco_usd);
    CHECK(fleet.chosen.tco_usd <= fleet.all_rented.tco_usd);
    // One more owned (k = 2) costs $6,946.35 − $6,419.525 = $526.825 more; it would pay if it
    // displaced more than $2,000 / 2 months / $2 = 500 rented replica-hours a month; above the
    // base now: 12 h × 30.4375 = 365.25 a month.
    CHECK(fleet.one_more_owned_delta_usd == Approx(526.825).epsilon(1e-12));
    CHECK(fleet.one_more_owned_delta_usd > 0);
    CHECK(fleet.break_even_rented_hours_per_month == Approx(500).epsilon(1e-12));
    CHECK(fleet.rented_hours_above_base_per_month == Approx(365.25).epsilon(1e-12));
    CHECK(fleet.owned_load_percentile == Approx(0.5).epsilon(1e-12));
    // The base of one replica (10 req/s) carries 8 req/s for 12 h and 10 for 12 h: 216 / 240.
    REQUIRE(fleet.months.size() == 2);
    CHECK(fleet.months[0].owned_utilization == Approx(0.9).epsilon(1e-12));
    CHECK(fleet.months[1].rented_usd == Approx(rented(36, 3) / 2).epsilon(1e-12));
    CHECK(fleet.months[0].rented_usd + fleet.months[1].rented_usd == Approx(fleet.chosen.rented_usd).epsilon(1e-12));
    CHECK(fleet.rental_usd_per_replica_hour == 2);
    CHECK(fleet.startup_lag_s == Approx(360));
}

TEST_CASE("fleet: the SLO holds every hour of the profile: capacity ≥ load", "[fleet]") {
    // 10 %/mo growth over 3 months: month 3's peak is 40 × 1.21 = 48.4 req/s, beyond the four
    // replicas' table (43): the fifth carries 43 / 4 = 10.75 more, 5 × 10.75 = 53.75 ≥ 48.4.
    FleetPricing pricing = two_level(0.3);
    pricing.growth_per_month = 0.10;
    pricing.horizon_months = 3;
    pricing.owned_tco_usd = {0, 2000, 4000, 6000, 8000, 10000, 12000};
    const FleetPlan fleet = gpusel::price_fleet(pricing);
    CHECK(fleet.peak_replicas_needed == 5);
    REQUIRE(fleet.hours.size() == 24);
    for (const gpusel::FleetHour& hour : fleet.hours) {
        CHECK(hour.capacity_requests_per_s >= hour.requests_per_s);
        CHECK(hour.owned_replicas + hour.rented_replicas >= hour.replicas_needed);
    }
    CHECK(fleet.hours[12].requests_per_s == Approx(48.4));
    CHECK(fleet.hours[12].replicas_needed == 5);
    CHECK(fleet.hours[0].requests_per_s == Approx(12 * 1.21));
    CHECK(fleet.months[2].peak_replicas_needed == 5);
    CHECK(fleet.months[0].peak_replicas_needed == 4);
    CHECK(gpusel::fleet_replicas_needed({10, 21, 32, 43}, 48.4) == 5);
    CHECK(gpusel::fleet_replicas_needed({10, 21, 32, 43}, 21) == 2);
    CHECK(gpusel::fleet_replicas_needed({10, 21, 32, 43}, 0) == 0);
    // Owning one more than chosen costs more (the least was chosen).
    CHECK(fleet.one_more_owned_delta_usd >= 0);
}

TEST_CASE("fleet: rented replicas are billed in whole rental blocks", "[fleet]") {
    // Two replicas per block: k = 0 runs 1 block for 12 h and 2 for 12 h (36 block-hours a day),
    // starts 1 block a day; a block-hour costs $3.
    FleetPricing pricing = two_level(0.2);
    pricing.replicas_per_block = 2;
    pricing.rental_usd_per_block_hour = 3;
    const FleetPlan fleet = gpusel::price_fleet(pricing);
    const double days = 730.5 / 24 * 2;
    CHECK(fleet.all_rented.rented_usd == Approx((36 + 0.1) * 3 * days).epsilon(1e-12));
    CHECK(fleet.rental_usd_per_replica_hour == 1.5);
}

TEST_CASE("fleet: the planner prices a serving role with inference.load, and none without it", "[fleet]") {
    const std::string profile = day_profile("1", "0.25");
    const std::string text =
        "name: chat\nkind: inference\nmodel: {preset: llama-3.1-8b}\n"
        "inference: {input_tokens: 512, output_tokens: 256, slo: {tpot: 50ms},\n"
        "  load: {profile: " +
        profile +
        ", peak_rps: 20}}\n"
        "deployment: {horizon: 24mo}\n"
        "constraints: {allow: [L40S, H100-SXM5]}\n";
    gpusel::Project project;
    project.workloads.push_back(load(text));
    gpusel::PlanOptions options;
    const gpusel::PlanReport report = gpusel::make_plan(project, catalog(), efficiency(), options);
    REQUIRE(report.roles.size() == 1);
    const gpusel::RolePlan& plan = report.roles.front();
    REQUIRE(plan.winner);
    REQUIRE(plan.fleet);
    const FleetPlan& fleet = *plan.fleet;
    CHECK(fleet.gpu == plan.winner->gpu);
    CHECK(fleet.chosen.tco_usd <= fleet.all_owned.tco_usd);
    CHECK(fleet.chosen.tco_usd <= fleet.all_rented.tco_usd);
    CHECK(fleet.all_owned.owned_replicas == fleet.peak_replicas_needed);
    CHECK(fleet.peak_replicas_needed <= plan.winner->serving_replicas());
    for (const gpusel::FleetHour& hour : fleet.hours) {
        CHECK(hour.capacity_requests_per_s >= hour.requests_per_s);
    }
    CHECK(fleet.chosen.tco_usd == Approx(fleet.chosen.owned_tco_usd + fleet.chosen.rented_usd));
    CHECK(!fleet.startup_lag_source.empty());
    // The same service at a constant rate has no fleet.
    gpusel::Project flat;
    flat.workloads.push_back(
        load("name: chat\nkind: inference\nmodel: {preset: llama-3.1-8b}\n"
             "inference: {requests_per_s: 20, slo: {tpot: 50ms}}\n"
             "constraints: {allow: [L40S, H100-SXM5]}\n"));
    CHECK_FALSE(gpusel::make_plan(flat, catalog(), efficiency(), options).roles.front().fleet);
}

TEST_CASE("fleet: the diurnal chat example owns a base and rents the peak for less than either extreme", "[fleet]") {
    // examples/chat-diurnal.yaml: 40 req/s peak, 4× the trough, 2 %/mo over 24 months, data-centre
    // parts bought, hyperscaler rentals (issue 37's "Done when").
    const gpusel::PlanReport& report = diurnal_report();
    const gpusel::RolePlan& plan = report.roles.front();
    REQUIRE(plan.fleet);
    const FleetPlan& fleet = *plan.fleet;
    REQUIRE(fleet.not_priced_reason.empty());
    CHECK(fleet.chosen.owned_replicas > 0);
    CHECK(fleet.chosen.owned_replicas < fleet.peak_replicas_needed);
    CHECK(fleet.chosen.tco_usd < fleet.all_owned.tco_usd);
    CHECK(fleet.chosen.tco_usd < fleet.all_rented.tco_usd);
    // The rented part over the months adds up to the horizon's.
    double rented_usd = 0;
    for (const gpusel::FleetMonth& month : fleet.months) {
        rented_usd += month.rented_usd;
    }
    CHECK(rented_usd == Approx(fleet.chosen.rented_usd).epsilon(1e-9));
    CHECK(fleet.months.size() == 24);
    // The pick owned whole is sized for month 24's peak, 40 × 1.02^23 req/s.
    CHECK(plan.workload.inference.requests_per_s == Approx(40 * std::pow(1.02, 23)));
    for (const gpusel::FleetHour& hour : fleet.hours) {
        CHECK(hour.capacity_requests_per_s >= hour.requests_per_s);
    }
}

TEST_CASE("fleet: the diurnal chat example orders the owned base and the rented peak, and the cash flow rents by month",
          "[fleet][procurement]") {
    const gpusel::PlanReport& report = diurnal_report();
    const gpusel::RolePlan& plan = report.roles.front();
    REQUIRE(plan.fleet);
    const FleetPlan& fleet = *plan.fleet;
    // The pick (3 serving replicas + 1 spare, bought) is the all-owned option exactly: both carry
    // deployment.redundancy's spare.
    CHECK(fleet.spare_replicas == 1);
    CHECK(fleet.all_owned.tco_usd == Approx(plan.winner->cost.tco_usd).epsilon(1e-12));
    CHECK(fleet.pick_tco_usd == Approx(plan.winner->cost.tco_usd).epsilon(1e-12));
    // Saves more than the tie margin (max($50, 2 %), plan.hpp): ordered.
    CHECK(fleet.ordered);
    CHECK(fleet.pick_tco_usd - fleet.chosen.tco_usd > 0.02 * fleet.pick_tco_usd);
    REQUIRE(report.procurement.size() == 2);
    const gpusel::ProcurementLine& owned = report.procurement[0];
    const gpusel::ProcurementLine& rented = report.procurement[1];
    CHECK(owned.acquisition == gpusel::Acquisition::buy_new);
    CHECK(owned.gpus == (fleet.chosen.owned_replicas + 1) * fleet.gpus_per_replica);
    CHECK(owned.tco_usd == Approx(fleet.chosen.owned_tco_usd).epsilon(1e-12));
    CHECK(rented.acquisition == gpusel::Acquisition::cloud_on_demand);
    CHECK(rented.quantity == fleet.chosen.rented_replicas_at_peak);
    CHECK(rented.total_usd == 0);
    CHECK(rented.tco_usd == Approx(fleet.chosen.rented_usd).epsilon(1e-12));
    CHECK(report.total_tco_usd == Approx(fleet.chosen.tco_usd).epsilon(1e-12));
    CHECK(report.total_capex_usd == Approx(owned.total_usd).epsilon(1e-12));
    // The rented line's cash flow follows the profile's growth month by month, not an average:
    // month 24 rents 304.375 replica-hours at $6.98 plus one 4-minute start-up a day
    // (730.5 / 24 = 30.44 starts): 2,124.54 + 14.16 = $2,138.70 (worked by hand in
    // docs/cost-model.md, "Fleets over time").
    const std::vector<gpusel::CashFlowMonth> flow = gpusel::cash_flow(rented);
    REQUIRE(flow.size() == 25);
    double rent_usd = 0;
    for (const gpusel::CashFlowMonth& month : flow) {
        rent_usd += month.rent_usd;
        CHECK(month.capex_usd == 0);
    }
    CHECK(rent_usd == Approx(rented.tco_usd).epsilon(1e-9));
    CHECK(flow[24].rent_usd == Approx(304.375 * 6.98 + 730.5 / 24 * 4.0 / 60 * 6.98).epsilon(1e-6));
    CHECK(flow[24].rent_usd == Approx(2138.70).margin(0.01));
    CHECK(flow[1].rent_usd < flow[24].rent_usd);
}

TEST_CASE("fleet: a flat profile renting every hour costs what the rented pick costs, so the pick is ordered",
          "[fleet][procurement]") {
    const std::string profile = day_profile("1", "1");
    gpusel::Project project;
    project.workloads.push_back(
        load("name: chat\nkind: inference\nmodel: {preset: llama-3.1-8b}\n"
             "inference: {slo: {tpot: 50ms}, load: {profile: " +
             profile +
             ", peak_rps: 20}}\n"
             "deployment: {horizon: 24mo}\n"
             "constraints: {allow: [H100-SXM5]}\n"));
    const gpusel::PlanReport report = gpusel::make_plan(project, catalog(), efficiency(), gpusel::PlanOptions{});
    const gpusel::RolePlan& plan = report.roles.front();
    REQUIRE(plan.fleet);
    REQUIRE(plan.fleet->not_priced_reason.empty());
    // Over 24 months renting beats buying here: the pick is 1 replica + 1 spare rented around
    // the clock, and so is the all-rented split (the spare rented every hour, no block ever
    // restarted under a flat load): the same TCO but for the pick's one launch, 2 GPUs × $3.20/h
    // × 4 min of start-up = $0.43; within the tie margin.
    REQUIRE(plan.winner->acquisition == gpusel::Acquisition::cloud_on_demand);
    CHECK(plan.fleet->chosen.owned_replicas == 0);
    CHECK(plan.fleet->chosen.rented_launches == 0);
    CHECK(plan.fleet->chosen.tco_usd + 2 * 3.20 * 4.0 / 60 == Approx(plan.winner->cost.tco_usd).epsilon(1e-9));
    CHECK_FALSE(plan.fleet->ordered);
    CHECK(plan.fleet->ordered_why ==
          "the split saves 0.0 % of the pick's TCO, within the tie margin: the pick is ordered (simpler to run)");
    REQUIRE(report.procurement.size() == 1);
    CHECK(report.procurement.front().tco_usd == Approx(plan.winner->cost.tco_usd).epsilon(1e-12));
}

TEST_CASE("fleet: a pick whose GPU type cannot be rented on demand is not split, and says why", "[fleet]") {
    // Only purchases allowed: nothing to rent the peak from.
    const std::string profile = day_profile("1", "0.25");
    gpusel::Project project;
    project.workloads.push_back(
        load("name: chat\nkind: inference\nmodel: {preset: llama-3.1-8b}\n"
             "inference: {slo: {tpot: 50ms}, load: {profile: " +
             profile +
             ", peak_rps: 20}}\n"
             "constraints: {allow: [L40S], acquisitions: [buy-new]}\n"));
    const gpusel::PlanReport report = gpusel::make_plan(project, catalog(), efficiency(), gpusel::PlanOptions{});
    REQUIRE(report.roles.front().fleet);
    CHECK(report.roles.front().fleet->not_priced_reason ==
          "no on-demand rental of L40S the workload may use: the peak cannot be rented, the pick is all owned");
    CHECK(report.roles.front().fleet->hours.empty());
}

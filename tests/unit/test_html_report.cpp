#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "base/format.hpp"
#include "report/html_report.hpp"
#include "support/offer_support.hpp"
#include "support/sample_plan.hpp"

using namespace gpusel;

namespace {

std::size_t count_of(const std::string& text, const std::string& needle) {
    std::size_t count = 0;
    for (std::size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + needle.size())) {
        ++count;
    }
    return count;
}

CostEstimate bought(double capex_usd, double monthly_opex_usd, double cloud_equivalent_usd) {
    CostEstimate cost;
    cost.acquisition = Acquisition::buy_new;
    cost.available = true;
    cost.capex_usd = capex_usd;
    cost.monthly_opex_usd = monthly_opex_usd;
    cost.cloud_equivalent_usd = cloud_equivalent_usd;
    return cost;
}

}  // namespace

TEST_CASE("html_report::cumulative_cost_by_month: capex at month 0, then the monthly opex", "[html_report]") {
    const std::vector<svg::Point> buy = cumulative_cost_by_month(bought(1000, 100, 0), 3);
    REQUIRE(buy.size() == 4);
    for (std::size_t month = 0; month < 4; ++month) {
        CHECK(buy[month].x == static_cast<double>(month));
        CHECK(buy[month].y == 1000 + 100.0 * static_cast<double>(month));
    }
    CostEstimate rent;
    rent.acquisition = Acquisition::cloud_on_demand;
    rent.capex_usd = 999;  // ignored: nothing is bought
    rent.monthly_opex_usd = 50;
    const std::vector<svg::Point> rented = cumulative_cost_by_month(rent, 2.5);
    REQUIRE(rented.size() == 4);
    CHECK(rented[0].y == 0);
    CHECK(rented[2].y == 100);
    CHECK(rented[3].x == 2.5);  // the horizon's fractional end is a point of its own
    CHECK(rented[3].y == 125);
    CHECK(cumulative_cost_by_month(rent, 0).empty());
}

TEST_CASE("html_report::buy_versus_rent_break_even_month is where the chart's lines cross", "[html_report]") {
    // Buy: $1,000 up front and $100 a month; the same GPU-hours on demand: $7,200 over 24
    // months = $300 a month. 1000 + 100 m = 300 m at m = 5.
    const CostEstimate cost = bought(1000, 100, 7200);
    const std::optional<double> month = buy_versus_rent_break_even_month(cost, 24);
    REQUIRE(month.has_value());
    CHECK(*month == Approx(5));
    const std::vector<svg::Point> rent = on_demand_equivalent_by_month(cost, 24);
    REQUIRE(rent.size() == 25);
    CHECK(rent[24].y == Approx(7200));
    const std::optional<svg::Point> crossing = svg::first_crossing(rent, cumulative_cost_by_month(cost, 24));
    REQUIRE(crossing.has_value());
    CHECK(crossing->x == Approx(*month));

    // Beyond the horizon: $10,000 up front → month 50.
    CHECK(*buy_versus_rent_break_even_month(bought(10000, 100, 7200), 24) == Approx(50));
    // Renting costs no more per month than running the owned GPUs: never.
    CHECK_FALSE(buy_versus_rent_break_even_month(bought(1000, 100, 2400), 24).has_value());
    // No on-demand price, or not bought: no break-even, no rental line.
    CHECK_FALSE(buy_versus_rent_break_even_month(bought(1000, 100, 0), 24).has_value());
    CHECK(on_demand_equivalent_by_month(bought(1000, 100, 0), 24).empty());
    CostEstimate rented = cost;
    rented.acquisition = Acquisition::cloud_reserved;
    CHECK_FALSE(buy_versus_rent_break_even_month(rented, 24).has_value());
    CHECK(on_demand_equivalent_by_month(rented, 24).empty());
}

TEST_CASE("html_report::buy_versus_rent_break_even_month is the cost model's over the workload's horizon",
          "[html_report]") {
    GpuSpec gpu;
    gpu.id = "TEST";
    gpu.power_watts = 400;
    const Workload workload;  // 24 months
    UsageProfile service;
    service.gpus = 4;
    service.service = true;
    const CostEstimate cost =
        gpusel::test::test_cost(workload, gpu, {10000, {}, 2000, 2.0, {}, {}, {}, {}}, Acquisition::buy_new, service);
    REQUIRE(cost.break_even_month.has_value());
    // $48,000 capex; $5,844 a month rented around the clock against $850.16 owned
    // (tests/unit/test_cost.cpp).
    CHECK(*cost.break_even_month == Approx(48000.0 / (5844 - 850.1606016)));
    CHECK(buy_versus_rent_break_even_month(cost, workload.deployment.horizon_months) == cost.break_even_month);
}

TEST_CASE("html_report::render_plan_html is one self-contained, escaped, printable document", "[html_report]") {
    const PlanReport report = test::sample_plan_report(1);
    const std::string page = render_plan_html(report);
    CHECK(page.rfind("<!DOCTYPE html>\n<html lang=\"en\">", 0) == 0);
    CHECK(page.size() > 20000);
    CHECK(page.find("</html>\n") == page.size() - 8);
    // Self-contained: no scripts, no links, no fetched resources; the only URL is the SVG namespace.
    CHECK_THAT(page, !Catch::Matchers::Contains("<script"));
    CHECK_THAT(page, !Catch::Matchers::Contains("<link"));
    CHECK_THAT(page, !Catch::Matchers::Contains("@import"));
    CHECK_THAT(page, !Catch::Matchers::Contains("src="));
    CHECK(count_of(page, "http") == count_of(page, "http://www.w3.org/2000/svg"));
    CHECK(count_of(page, "url(") == count_of(page, "url(#"));
    // Two roles, each with its three charts, each chart with unique ids.
    CHECK(count_of(page, "<section class=\"role\"") == 2);
    CHECK(count_of(page, "<svg ") == 6);
    for (const char* id :
         {"role1-scatter", "role1-memory", "role1-cost", "role2-scatter", "role2-memory", "role2-cost"}) {
        CHECK(count_of(page, fmt::format("id=\"{}\"", id)) == 1);
    }
    // Printing: A4, each role on a new page.
    CHECK_THAT(page, Catch::Matchers::Contains("@page { size: A4; margin: 12mm; }"));
    CHECK_THAT(page, Catch::Matchers::Contains("section.role { break-before: page;"));
    // Escaping of names from the input.
    CHECK_THAT(page, Catch::Matchers::Contains("Quote &lt;ACME&gt; &amp; &quot;Sons&quot; × 2"));
    CHECK_THAT(page, !Catch::Matchers::Contains("<ACME>"));
    // Deterministic: the same plan gives the same bytes.
    CHECK(render_plan_html(report) == page);
}

TEST_CASE("html_report::render_plan_html shows the plan's numbers", "[html_report]") {
    const PlanReport report = test::sample_plan_report(1);
    const std::string page = render_plan_html(report);
    // Procurement totals as the plan holds them.
    // The bought L40S × 3 draws its hosts' share too (1.82 × 3 × 350 W: the test hosts publish no
    // power): 0.82 × 1,050 W × 24 × 730.5 h × 0.7 × PUE 1.4 at $0.12 = $1,775 over the boards alone.
    CHECK(report.total_tco_usd == Approx(46834).margin(0.5));
    CHECK(report.total_capex_usd == Approx(31500).margin(0.5));
    CHECK_THAT(page, Catch::Matchers::Contains("<td class=\"num\">$46,834</td>"));
    CHECK_THAT(page, Catch::Matchers::Contains("<td class=\"num\">$31,500</td>"));
    // Each order names the compute precision it was estimated at (and deploy launches).
    REQUIRE_FALSE(report.procurement.empty());
    for (const gpusel::ProcurementLine& line : report.procurement) {
        const auto role = std::find_if(report.roles.begin(), report.roles.end(),
                                       [&](const RolePlan& plan) { return plan.role == line.role; });
        REQUIRE(role != report.roles.end());
        CHECK(line.precision == role->winner->precision);
        CHECK_THAT(page, Catch::Matchers::Contains(fmt::format("<br><span class=\"muted\">{} compute</span></td>",
                                                               gpusel::to_string(line.precision))));
    }
    // Every ranked candidate appears in the table, the scatter, the memory chart; the top three in the cost chart.
    for (const RolePlan& plan : report.roles) {
        for (std::size_t i = 0; i < plan.ranked.size(); ++i) {
            const std::string label = fmt::format("{} × {}", plan.ranked[i].gpu, plan.ranked[i].count);
            INFO(label);
            CHECK(count_of(page, label) >= (i < 3 ? 5u : 4u));
        }
    }
    // The bought L40S of the training role: renting its GPU-hours stays cheaper, so buying never pays off.
    const Candidate& l40s = report.roles[0].ranked[2];
    REQUIRE(l40s.gpu == "L40S");
    CHECK_FALSE(buy_versus_rent_break_even_month(l40s.cost, 24).has_value());
    CHECK_THAT(page, Catch::Matchers::Contains("<td class=\"num wrap\">never (renting costs less per month)</td>"));
    CHECK_THAT(page,
               Catch::Matchers::Contains("#3 L40S × 8: buying does not break even against renting within 24 months."));
    // The memory bar note: total / capacity of the winner.
    CHECK_THAT(page, Catch::Matchers::Contains("41.2 / 80 GB"));
    // Assumptions and rejected entries are listed.
    CHECK(page.find("<li><code>deployment.pue</code> = 1.4 <span class=\"muted\">(default)</span></li>") !=
          std::string::npos);
    CHECK_THAT(page, Catch::Matchers::Contains("<tr><td>no BF16, and 16 GB &lt; 26.4 GB needed</td><td>T4</td></tr>"));
    CHECK_THAT(page, Catch::Matchers::Contains("<h3>Rejected (5)</h3>"));
}

TEST_CASE("html_report::render_plan_html says when no rental offer exists to compare buying with", "[html_report]") {
    PlanReport report = test::sample_plan_report(1);
    Candidate& l40s = report.roles[0].ranked[2];
    REQUIRE(l40s.gpu == "L40S");
    l40s.cost.cloud_equivalent_usd = 0;  // the catalog rents no L40S the workload may use
    const std::string page = gpusel::render_plan_html(report);
    CHECK_THAT(page, Catch::Matchers::Contains("<td class=\"num wrap\">no rental offer to compare</td>"));
    CHECK_THAT(page, Catch::Matchers::Contains("#3 L40S × 8: no rental offer of this GPU to compare buying with."));
    CHECK_FALSE(page.find("#3 L40S × 8: buying does not break even") != std::string::npos);
}

TEST_CASE("html_report::render_plan_html marks the break-even month where buying pays off", "[html_report]") {
    const PlanReport report = test::sample_plan_report(2);
    const std::string page = render_plan_html(report);
    const RolePlan& plan = report.roles.front();
    for (std::size_t i = 0; i < 3; ++i) {
        const std::optional<double> month = buy_versus_rent_break_even_month(plan.ranked[i].cost, 36);
        INFO(plan.ranked[i].gpu);
        REQUIRE(month.has_value());
        const std::string marker = fmt::format("#{} break-even: month {:.1f}", i + 1, *month);
        if (*month <= 36) {
            CHECK(page.find(marker) != std::string::npos);
            CHECK(page.find(fmt::format("<td class=\"num wrap\">month {:.1f}</td>", *month)) != std::string::npos);
        } else {
            CHECK(page.find(marker) == std::string::npos);
            CHECK(page.find(fmt::format("<td class=\"num wrap\">month {:.0f} (beyond)</td>", *month)) !=
                  std::string::npos);
        }
    }
    CHECK_THAT(page,
               Catch::Matchers::Contains("<title>edge-and-cloud &lt;sample&gt; &amp; co — gpusel report</title>"));
    // Throughput spans three decades: both scatter axes are logarithmic.
    CHECK(count_of(page, "— log scale") == 2);
}

TEST_CASE("html_report::render_plan_html states when nothing is feasible", "[html_report]") {
    PlanReport report;
    report.project = "nothing-fits";
    report.objective = "lowest TCO meeting every constraint";
    RolePlan plan;
    plan.role = Role::training;
    plan.workload = test::sample_training_workload();
    plan.question = "Llama-3.1-8B · full fine-tuning";
    plan.rejected = {{"T4", RejectionKind::memory, "memory per GPU", 130e9, 16e9, 64,
                      "needs 130 GB per GPU at 64 GPUs, has 16 GB", 0},
                     {"A10", RejectionKind::excluded, "", 0, 0, 0, "segment datacenter not allowed", 0},
                     {"L4", RejectionKind::excluded, "", 0, 0, 4, "segment datacenter not allowed", 0},
                     {"A30", RejectionKind::excluded, "", 0, 0, 0, "segment datacenter not allowed", 0}};
    plan.advice = {"nothing meets every constraint: relax the deadline, SLO or budget, or allow more GPUs"};
    report.roles.push_back(plan);
    const std::string page = render_plan_html(report);
    CHECK_THAT(page, Catch::Matchers::Contains("No candidate meets every constraint."));
    CHECK_THAT(page, Catch::Matchers::Contains("Nothing to buy or rent"));
    CHECK_THAT(page, !Catch::Matchers::Contains("<svg"));
    // Same reasons share a row, the rarer reason first.
    const std::size_t needs = page.find("<tr><td>needs 130 GB per GPU at 64 GPUs, has 16 GB</td><td>T4 × 64</td></tr>");
    const std::size_t segment = page.find("<tr><td>segment datacenter not allowed</td><td>A10, L4 × 4, A30</td></tr>");
    REQUIRE(needs != std::string::npos);
    REQUIRE(segment != std::string::npos);
    CHECK(needs < segment);
    CHECK_THAT(page, Catch::Matchers::Contains("<h3>Rejected (4)</h3>"));
}

TEST_CASE("html_report::render_plan_html in another currency prints no dollar amount", "[html_report][currency]") {
    PlanReport report = gpusel::test::sample_plan_report();
    const std::string in_usd = render_plan_html(report);
    REQUIRE(in_usd.find('$') != std::string::npos);
    for (RolePlan& role : report.roles) {
        role.workload.deployment.currency = CurrencySpec{"EUR", 0.86, "2026-11"};
        // The sample's hand-written sentences stand for the planner's, which it writes in the
        // currency (tests/cli/cases/currency-*); what is left are the renderer's own figures.
        role.alternative_why_not.clear();
    }
    for (ProcurementLine& line : report.procurement) {
        line.alternative_reason.clear();
    }
    const std::string page = render_plan_html(report);
    // Every money figure (tables, footnotes, chart ticks and labels, the planner's sentences) in
    // EUR: not one dollar sign is left, and the rate is stated.
    CHECK(page.find('$') == std::string::npos);
    CHECK(page.find("€") != std::string::npos);
    CHECK(page.find("Money in EUR at 0.86 per USD (2026-11, user-given)") != std::string::npos);
    CHECK(page.find("Cumulative cost (EUR)") != std::string::npos);
}

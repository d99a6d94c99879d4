// Availability as a cost: deployment.deliver_by, purchase lead times and the bridged wait
// (cost/cost.cpp add_delivery_wait; docs/cost-model.md, "Delivery and the wait"; issue 37 item 5).

#include <catch2/catch.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "plan/plan.hpp"
#include "support/test_support.hpp"

using gpusel::Workload;
using gpusel::test::catalog;
using gpusel::test::efficiency;
using gpusel::test::input_errors;
using gpusel::test::models;

namespace {

Workload load(const std::string& text) {
    return gpusel::load_workload_text(text, "w.yaml", gpusel::LoadContext{&catalog(), &models()});
}

gpusel::PlanReport plan_of(const Workload& workload) {
    gpusel::Project project;
    project.workloads.push_back(workload);
    return gpusel::make_plan(project, catalog(), efficiency(), gpusel::PlanOptions{});
}

const std::string serving =
    "name: launch\nkind: inference\nmodel: {preset: llama-3.1-70b}\nprecision: fp8\n"
    "inference: {input_tokens: 1024, output_tokens: 256, requests_per_s: 6, slo: {ttft: 1s, tpot: 50ms}}\n";

}  // namespace

TEST_CASE("delivery: a server ordered a month before deliver_by waits 5.65 weeks, bridged by renting",
          "[delivery][cost]") {
    // examples/serve-by-date.yaml: one HGX H100 8-GPU server (lead time 10 weeks, data/cost.yaml
    // lead_time.server_weeks), ordered 2026-12 for 2027-01: 1 month = 365.25 / 12 / 7 = 4.348
    // weeks, so 10 − 4.348 = 5.652 weeks late, bridged by 8 H100-SXM5 on demand at the cheapest
    // allowed rate, $3.20/GPU-h (Hyperstack): 5.652 × 168 × 8 × 3.20 = $24,307.
    const Workload workload = gpusel::load_workload_file(gpusel::test::source_path("examples/serve-by-date.yaml"),
                                                         gpusel::LoadContext{&catalog(), &models()});
    const gpusel::PlanReport report = plan_of(workload);
    REQUIRE(report.procurement.size() == 1);
    const gpusel::ProcurementLine& line = report.procurement.front();
    REQUIRE(line.acquisition == gpusel::Acquisition::buy_new);
    REQUIRE(line.gpus == 8);
    const double weeks_late = 10 - 365.25 / 12 / 7;
    CHECK(line.lead_time_weeks == 10);
    CHECK(line.wait_weeks == Approx(weeks_late).epsilon(1e-12));
    CHECK(line.wait_usd == Approx(weeks_late * 168 * 8 * 3.20).epsilon(1e-9));
    CHECK(line.wait_usd == Approx(24307).margin(1));
    CHECK(line.lead_time_basis == "data/cost.yaml lead_time.server_weeks (reported 2024-04)");
    // The wait is in the TCO: the same plan without deliver_by costs exactly the bridge less.
    Workload unhurried = workload;
    unhurried.deployment.deliver_by.clear();
    const gpusel::PlanReport without = plan_of(unhurried);
    REQUIRE(without.procurement.size() == 1);
    CHECK(without.procurement.front().wait_usd == 0);
    CHECK(without.procurement.front().lead_time_weeks == 0);
    CHECK(line.tco_usd - without.procurement.front().tco_usd == Approx(line.wait_usd).epsilon(1e-9));
    // The cash flow bills the bridge in the first months (5.652 weeks = 1.30 months), and the
    // order line's rent carries it so that capex + opex × months + rent = TCO.
    const std::vector<gpusel::CashFlowMonth> flow = gpusel::cash_flow(line);
    const double wait_months = weeks_late * 7 * 24 / 730.5;
    CHECK(flow[1].rent_usd == Approx(line.wait_usd / wait_months).epsilon(1e-9));
    CHECK(flow[2].rent_usd == Approx(line.wait_usd * (wait_months - 1) / wait_months).epsilon(1e-9));
    CHECK(flow[3].rent_usd == 0);
    double net_usd = 0;
    for (const gpusel::CashFlowMonth& month : flow) {
        net_usd += month.net_usd;
    }
    CHECK(net_usd == Approx(line.tco_usd).epsilon(1e-9));
    const std::vector<gpusel::OrderLine> order = gpusel::order_lines(line);
    REQUIRE(order.size() == 1);
    CHECK(order.front().rent_usd == Approx(line.wait_usd).epsilon(1e-12));
}

TEST_CASE("delivery: cards in stock arrive in a week and are not late", "[delivery][cost]") {
    const gpusel::PlanReport report =
        plan_of(load(serving + "deployment: {horizon: 36mo, deliver_by: 2027-01, order_date: 2026-12}\n"
                               "constraints: {allow: [H100-NVL], acquisitions: [buy-new]}\n"));
    REQUIRE(report.procurement.size() == 1);
    const gpusel::ProcurementLine& line = report.procurement.front();
    CHECK(line.lead_time_weeks == 1);
    CHECK(line.wait_weeks == 0);
    CHECK(line.wait_usd == 0);
}

TEST_CASE("delivery: a late purchase nothing rents is rejected, with the weeks late", "[delivery][cost]") {
    // Only purchases may be used: the bridge has no on-demand rate, so the server is not
    // available in time; the cards (1 week) still are.
    const gpusel::PlanReport report =
        plan_of(load(serving + "deployment: {horizon: 36mo, deliver_by: 2027-01, order_date: 2026-12}\n"
                               "constraints: {allow: [H100-SXM5], acquisitions: [buy-new]}\n"));
    const gpusel::RolePlan& plan = report.roles.front();
    CHECK_FALSE(plan.winner);
    bool named = false;
    for (const gpusel::Rejection& rejected : plan.rejected) {
        if (rejected.gpu == "H100-SXM5" &&
            rejected.why_not.find("5.7 weeks after deployment.deliver_by 2027-01; no on-demand rental") !=
                std::string::npos) {
            named = true;
        }
    }
    CHECK(named);
}

TEST_CASE("delivery: order_date defaults to this month, said as an assumption, and bad months are errors",
          "[delivery][workload]") {
    const Workload workload = load(serving + "deployment: {deliver_by: 2031-01}\n");
    const auto today = std::chrono::floor<std::chrono::days>(std::chrono::system_clock::now());
    const std::chrono::year_month_day date{today};
    const std::string this_month =
        fmt::format("{:04}-{:02}", static_cast<int>(date.year()), static_cast<unsigned>(date.month()));
    CHECK(workload.deployment.order_date == this_month);
    bool said = false;
    for (const gpusel::Assumption& assumption : workload.assumptions) {
        said = said || (assumption.field == "deployment.order_date" && assumption.value == this_month);
    }
    CHECK(said);
    CHECK(input_errors([&] { load(serving + "deployment: {deliver_by: 2027-1}\n"); }) ==
          std::vector<std::string>{
              "w.yaml:6:26: deployment.deliver_by: '2027-1' is not a month; write YYYY-MM, e.g. 2027-03"});
    CHECK(input_errors([&] { load(serving + "deployment: {deliver_by: 2026-10, order_date: 2026-12}\n"); }) ==
          std::vector<std::string>{"w.yaml:6:26: deployment.deliver_by: 2026-10 is before order_date (2026-12)"});
    CHECK(input_errors([&] { load(serving + "deployment: {order_date: 2026-12}\n"); }) ==
          std::vector<std::string>{
              "w.yaml:6:26: deployment.order_date: order_date dates the order against deployment.deliver_by; add "
              "deliver_by (YYYY-MM) or remove order_date"});
    // Without deliver_by nothing is dated.
    CHECK(load(serving).deployment.order_date.empty());
}

TEST_CASE(
    "delivery: deliver_by bridges purchases only, and a rental that ties the bridged purchase and fails "
    "confidence leaves a pick with its robustness",
    "[delivery][robustness]") {
    // examples/serve-by-date.yaml. The bridge ($24,307) lifts the H100 server from $391,720 to
    // $416,027; H200-SXM 4× on demand costs $419,717 with or without deliver_by (no lead time).
    // $419,717 − $416,027 = $3,690 is within the 2 % tie margin (2 % × $416,027 = $8,321), so the
    // tie rule (fewer GPUs: 4 < 8) ranks the rental first; it holds in 84 % of the robustness
    // scenarios (< objective.confidence 0.9) and is rejected. Without deliver_by the gap is
    // $27,997 > 2 % × $391,720 = $7,834: no tie, the purchase ranks first and holds, and the rental
    // stays ranked second (only candidates ranked above the first that holds are rejected).
    const Workload workload = gpusel::load_workload_file(gpusel::test::source_path("examples/serve-by-date.yaml"),
                                                         gpusel::LoadContext{&catalog(), &models()});
    Workload unhurried = workload;
    unhurried.deployment.deliver_by.clear();
    const gpusel::GpuSpec& h200 = *catalog().find("H200-SXM");
    const auto rent = [&](const Workload& w) {
        return gpusel::evaluate_fixed(w, catalog(), h200, 4, gpusel::Acquisition::cloud_on_demand, std::nullopt,
                                      nullptr, efficiency());
    };
    const gpusel::FixedEvaluation dated = rent(workload);
    const gpusel::FixedEvaluation undated = rent(unhurried);
    REQUIRE(dated.candidate);
    REQUIRE(undated.candidate);
    CHECK(dated.candidate->cost.wait_weeks == 0);
    CHECK(dated.candidate->cost.breakdown.wait_usd == 0);
    CHECK(dated.candidate->cost.tco_usd == undated.candidate->cost.tco_usd);
    CHECK(dated.candidate->cost.tco_usd == Approx(419717).margin(1));

    const gpusel::PlanReport report = plan_of(workload);
    const gpusel::RolePlan& role = report.roles.front();
    REQUIRE(role.winner);
    CHECK(role.winner->gpu == "H100-SXM5");
    CHECK(role.winner->cost.tco_usd == Approx(416027).margin(1));
    REQUIRE(!role.rejected.empty());
    CHECK(role.rejected.front().gpu == "H200-SXM");
    CHECK(role.rejected.front().kind == gpusel::RejectionKind::confidence);
    // The re-run analysis leaves the rejected type out, so it reproduces the new ranking.
    CHECK(role.uncertainty.computed);
    CHECK(role.uncertainty.p_feasible >= 0.9);

    const gpusel::PlanReport undated_report = plan_of(unhurried);
    const gpusel::RolePlan& without = undated_report.roles.front();
    REQUIRE(without.ranked.size() >= 2);
    CHECK(without.ranked[0].gpu == "H100-SXM5");
    CHECK(without.ranked[1].gpu == "H200-SXM");
    CHECK(without.ranked[1].cost.tco_usd == dated.candidate->cost.tco_usd);
    REQUIRE(without.uncertainty.bands.size() >= 2);
    CHECK(without.uncertainty.bands[1].p_feasible < 0.9);
}

// The prefill/decode split in the plan's Markdown, HTML and CSV (report/plan_markdown.cpp,
// html_report.cpp, plan_csv.cpp; docs/spec/plan-output.md): every cell is a figure of the
// planner's DisaggregatedPlan or co-located pick, formatted here independently of the renderers.

#include <catch2/catch.hpp>

#include <sstream>
#include <string>

#include <fmt/format.h>

#include "base/format.hpp"
#include "plan/plan.hpp"
#include "report/html_report.hpp"
#include "report/render.hpp"
#include "support/test_support.hpp"

namespace {

using gpusel::test::catalog;
using gpusel::test::efficiency;
using gpusel::test::models;

const gpusel::PlanReport& rag_report() {
    static const gpusel::PlanReport report = [] {
        gpusel::Project project;
        project.name = "rag";
        // examples/deepseek-r1-disagg.yaml: at 16 requests/s the split is chosen.
        project.workloads.push_back(gpusel::load_workload_file(
            gpusel::test::source_path("examples/deepseek-r1-disagg.yaml"), gpusel::LoadContext{&catalog(), &models()}));
        return gpusel::make_plan(project, catalog(), efficiency(), gpusel::PlanOptions{});
    }();
    return report;
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

std::string cents(double usd) {
    return fmt::format("${:.2f}", usd);
}

}  // namespace

TEST_CASE("plan markdown and html: the split against co-located, phase by phase", "[disaggregation][report]") {
    const gpusel::PlanReport& report = rag_report();
    const gpusel::RolePlan& plan = report.roles.front();
    REQUIRE(plan.winner);
    REQUIRE(plan.disaggregated);
    const gpusel::DisaggregatedPlan& split = *plan.disaggregated;
    REQUIRE(split.meets_slo);
    REQUIRE(split.chosen);
    REQUIRE(split.replicas == 1);
    const gpusel::Candidate& colocated = *plan.winner;
    REQUIRE(colocated.perf.inference);
    const auto workers = [](const gpusel::DisaggregatedPhase& side) {
        return fmt::format("{} worker{} × 1 group{}", side.workers, side.workers == 1 ? "" : "s",
                           side.spare_workers > 0 ? fmt::format(" + {} spare", side.spare_workers) : "");
    };
    const std::string ttft = gpusel::format_duration(split.ttft_s);
    const std::string tpot = gpusel::format_duration(split.tpot_s);
    const std::string colocated_latency =
        fmt::format("P99 TTFT {} · TPOT {}", gpusel::format_duration(*colocated.perf.inference->p99_ttft_s),
                    gpusel::format_duration(*colocated.perf.inference->p99_tpot_s));
    const std::string replicas = fmt::format("{} replicas ({} spare)", colocated.replicas, colocated.spare_replicas);

    std::ostringstream markdown;
    gpusel::render_plan_markdown(report, markdown);
    const std::string md = markdown.str();
    CHECK(contains(md,
                   "#### Disaggregated serving\n\n| Phase | GPU | Count | GPUs | TP/EP | Latency | \\$/1M output "
                   "tokens |\n| --- | --- | --- | --: | --- | --- | --: |\n"));
    CHECK(contains(
        md, fmt::format("| prefill | {} | {} | {} | TP{} EP{} | P99 TTFT {} (KV transfer {}) |  |\n", split.prefill.gpu,
                        workers(split.prefill), split.prefill.gpus, split.prefill.tensor_parallel,
                        split.prefill.expert_parallel, ttft, gpusel::format_duration(split.kv_transfer_s))));
    CHECK(contains(md, fmt::format("| decode | {} | {} | {} | TP{} EP{} | P99 TPOT {} |  |\n", split.decode.gpu,
                                   workers(split.decode), split.decode.gpus, split.decode.tensor_parallel,
                                   split.decode.expert_parallel, tpot)));
    // The split's GPUs are the two phases' (spares included); its cost per 1M tokens the planner's.
    CHECK(contains(
        md, fmt::format("| **split** | {} |  | {} |  | P99 TTFT {} · TPOT {} | \\{} |\n", split.prefill.gpu,
                        split.prefill.gpus + split.decode.gpus, ttft, tpot, cents(split.usd_per_million_tokens))));
    // Co-located: the pick's replicas and GPUs, its TP and the EP its estimate ran (8).
    CHECK(contains(md, fmt::format("| **co-located** | {} | {} | {} | TP{} EP8 | {} | \\{} |\n", colocated.gpu,
                                   replicas, colocated.count, colocated.layout.tensor_parallel, colocated_latency,
                                   cents(split.colocated_usd_per_million_tokens))));
    // The verdict as the terminal prints it.
    CHECK(contains(md, fmt::format("per 1M output tokens vs \\{} co-located: chosen — ",
                                   cents(split.colocated_usd_per_million_tokens))));

    const std::string page = gpusel::render_plan_html(report);
    CHECK(contains(page,
                   "<h3>Disaggregated serving</h3>\n<table class=\"disaggregated\">\n<thead><tr><th>phase</th>"
                   "<th>GPU</th><th>count</th><th class=\"num\">GPUs</th><th>TP/EP</th><th>latency</th>"
                   "<th class=\"num\">$/1M output tokens</th></tr></thead>\n"));
    CHECK(contains(page, fmt::format("<tr><td>decode</td><td>{}</td><td>{}</td><td class=\"num\">{}</td><td>TP{} "
                                     "EP{}</td><td>P99 TPOT {}</td><td class=\"num\"></td></tr>\n",
                                     split.decode.gpu, workers(split.decode), split.decode.gpus,
                                     split.decode.tensor_parallel, split.decode.expert_parallel, tpot)));
    CHECK(contains(page, fmt::format("<tr><td>co-located</td><td>{}</td><td>{}</td><td class=\"num\">{}</td>"
                                     "<td>TP{} EP8</td><td>{}</td><td class=\"num\">{}</td></tr>\n",
                                     colocated.gpu, replicas, colocated.count, colocated.layout.tensor_parallel,
                                     colocated_latency, cents(split.colocated_usd_per_million_tokens))));
}

TEST_CASE("plan csv: a chosen split's order rows say which phases they serve", "[disaggregation][report]") {
    const gpusel::PlanReport& report = rag_report();
    const gpusel::DisaggregatedPlan& split = *report.roles.front().disaggregated;
    REQUIRE(split.chosen);
    REQUIRE(split.prefill.gpu == split.decode.gpu);
    std::ostringstream csv;
    gpusel::render_plan_csv(report, csv);
    const std::string text = csv.str();
    // One GPU type: one order line of both phases' GPUs, the co-located pick as its alternative.
    REQUIRE(report.procurement.size() == 1);
    CHECK(report.procurement.front().gpus == split.prefill.gpus + split.decode.gpus);
    CHECK(contains(text, "\"disaggregated serving, prefill and decode workers: "));
    CHECK(contains(
        text, fmt::format("{} ×{} co-located", report.roles.front().winner->gpu, report.roles.front().winner->count)));
}

TEST_CASE("plan markdown: a role without deployment.disaggregated has no split section", "[disaggregation][report]") {
    gpusel::Workload workload = gpusel::load_workload_file(
        gpusel::test::source_path("examples/deepseek-r1-disagg.yaml"), gpusel::LoadContext{&catalog(), &models()});
    workload.deployment.disaggregated.reset();
    gpusel::Project project;
    project.name = "rag";
    project.workloads.push_back(workload);
    const gpusel::PlanReport report = gpusel::make_plan(project, catalog(), efficiency(), gpusel::PlanOptions{});
    std::ostringstream markdown;
    gpusel::render_plan_markdown(report, markdown);
    CHECK_FALSE(contains(markdown.str(), "Disaggregated serving"));
    CHECK_FALSE(contains(gpusel::render_plan_html(report), "Disaggregated serving"));
}

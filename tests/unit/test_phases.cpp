#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <numeric>
#include <string>

#include "base/units.hpp"
#include "plan/plan.hpp"
#include "support/test_support.hpp"

namespace {

using gpusel::test::catalog;
using gpusel::test::efficiency;
using gpusel::test::models;

gpusel::Project load_project(const std::string& path) {
    return gpusel::load_project_file(path, gpusel::LoadContext{&catalog(), &models()});
}

// A project file beside two small workloads, in a fresh directory; `phases` is its phases block.
std::string write_project(const std::string& name, const std::string& phases, const std::string& serve_extra = "") {
    const std::filesystem::path directory = std::filesystem::temp_directory_path() / ("gpusel-phases-" + name);
    std::filesystem::create_directories(directory);
    std::ofstream(directory / "train.yaml") << "name: tune\nkind: fine-tuning\nmodel: {preset: llama-3.1-8b}\n"
                                               "training: {seq_len: 2048, dataset_tokens: 100M, deadline: 7d}\n";
    std::ofstream(directory / "serve.yaml") << "name: chat\nkind: inference\nmodel: {preset: llama-3.1-8b}\n"
                                               "inference: {requests_per_s: 4, slo: {tpot: 50ms}}\n"
                                            << serve_extra;
    std::ofstream(directory / "project.yaml")
        << "project: p\nworkloads:\n  - file: ./train.yaml\n  - file: ./serve.yaml\n"
        << phases;
    return (directory / "project.yaml").string();
}

}  // namespace

TEST_CASE("phases: months from the earliest phase, and each phase sets its workload's horizon", "[phases]") {
    const gpusel::Project project = load_project(gpusel::test::source_path("examples/finetune-then-serve.yaml"));
    REQUIRE(project.phases.size() == 2);
    CHECK(project.phases[0].workload == "support-70b-finetune");
    CHECK(project.phases[0].first_month == 1);
    CHECK(project.phases[0].last_month == 2);
    CHECK(project.phases[1].workload == "support-70b-chat");
    CHECK(project.phases[1].first_month == 3);  // 2027-03 is two months after 2027-01
    CHECK(project.phases[1].last_month == 24);  // 2028-12: 12 + 12 months after 2027-01, inclusive
    CHECK(project.phases[1].months() == 22);
    CHECK(project.workloads[0].deployment.horizon_months == 2);
    CHECK(project.workloads[1].deployment.horizon_months == 22);
    const auto& assumptions = project.workloads[0].assumptions;
    const auto horizon = std::find_if(assumptions.begin(), assumptions.end(),
                                      [](const gpusel::Assumption& a) { return a.field == "deployment.horizon"; });
    REQUIRE(horizon != assumptions.end());
    CHECK(horizon->value == "2mo");
    CHECK(horizon->source == "its phase, 2027-01 to 2027-02");
}

TEST_CASE("phases: a phase's mistakes are errors at their position", "[phases]") {
    const auto errors = [](const std::string& name, const std::string& phases, const std::string& extra = "") {
        const std::string path = write_project(name, phases, extra);
        std::vector<std::string> lines = gpusel::test::input_errors([&] { load_project(path); });
        for (std::string& line : lines) {
            line = line.substr(line.find("project.yaml"));  // the temporary directory left out
        }
        return lines;
    };
    // Line 6 is "  - {workload: chta, from: 2027-01, to: 2027-02}": the workload's value starts at
    // column 16, from's at 28, to's at 41.
    CHECK(errors("unknown", "phases:\n  - {workload: chta, from: 2027-01, to: 2027-02}\n") ==
          std::vector<std::string>{
              "project.yaml:6:16: phases[0].workload: no workload of this project is named 'chta', did you mean "
              "'chat'?"});
    CHECK(errors("order", "phases:\n  - {workload: chat, from: 2027-05, to: 2027-02}\n") ==
          std::vector<std::string>{"project.yaml:6:41: phases[0].to: 2027-02 is before from (2027-05)"});
    CHECK(errors("month", "phases:\n  - {workload: tune, from: 2027-13, to: 2027-14}\n") ==
          std::vector<std::string>{
              "project.yaml:6:28: phases[0].from: '2027-13' is not a month; write YYYY-MM, e.g. 2027-01",
              "project.yaml:6:41: phases[0].to: '2027-14' is not a month; write YYYY-MM, e.g. 2027-02"});
    CHECK(errors("twice",
                 "phases:\n  - {workload: tune, from: 2027-01, to: 2027-02}\n"
                 "  - {workload: tune, from: 2027-03, to: 2027-04}\n") ==
          std::vector<std::string>{
              "project.yaml:7:16: phases[1].workload: 'tune' already has a phase (phases[0]); one phase per workload"});
    CHECK(errors("horizon", "phases:\n  - {workload: chat, from: 2027-03, to: 2027-12}\n",
                 "deployment: {horizon: 24mo}\n") ==
          std::vector<std::string>{"project.yaml:6:41: phases[0]: the phase is 10 months but 'chat' states "
                                   "deployment.horizon 24mo; remove its horizon (the phase sets it) or make them "
                                   "agree"});
    CHECK(errors("missing", "phases:\n  - {workload: chat, from: 2027-03}\n") ==
          std::vector<std::string>{"project.yaml:6:5: phases[0].to: missing required field"});
}

TEST_CASE("phases: a fine-tune then serving on one bought fleet, priced as owning it over the span", "[phases]") {
    const gpusel::Project project = load_project(gpusel::test::source_path("examples/finetune-then-serve.yaml"));
    const gpusel::PlanReport report = gpusel::make_plan(project, catalog(), efficiency());
    REQUIRE(report.shared_fleet);
    const gpusel::SharedFleet& fleet = *report.shared_fleet;
    CHECK(fleet.gpu == "H100-SXM5");
    CHECK(fleet.owned_gpus == 8);
    CHECK(fleet.span_months == 24);
    CHECK(fleet.capex_usd == 317000);  // one HGX H100 8-GPU server at the Thinkmate quote (data/offers.yaml)
    // Separate: each phase's own pick over its own months.
    REQUIRE(report.roles.size() == 2);
    CHECK(fleet.separate_tco_usd ==
          Approx(report.roles[0].winner->cost.tco_usd + report.roles[1].winner->cost.tco_usd).epsilon(1e-12));
    // Both phases run all 8 GPUs at the default utilisation, PUE and energy price, so the phases'
    // energy over their months adds up to the energy of owning the fleet for the whole span: the
    // shared TCO is the cost model's TCO of 8 bought H100s over 24 months for the serving workload.
    gpusel::Workload owner = project.workloads[1];
    owner.deployment.horizon_months = 24;
    const gpusel::FixedEvaluation owned =
        gpusel::evaluate_fixed(owner, catalog(), *catalog().find("H100-SXM5"), 8, gpusel::Acquisition::buy_new,
                               std::nullopt, nullptr, efficiency());
    REQUIRE(owned.candidate);
    CHECK(fleet.shared_tco_usd == Approx(owned.candidate->cost.tco_usd).epsilon(1e-9));
    // Operations alone: 8 GPUs × $150 per GPU-month × 24 months (data centre default).
    CHECK(owned.candidate->cost.breakdown.operations_usd == Approx(8 * 150 * 24));
    CHECK(fleet.chosen);
    CHECK(fleet.shared_tco_usd < fleet.separate_tco_usd - 0.02 * fleet.separate_tco_usd);
    // The procurement holds the fleet's one line, whose TCO is the shared one.
    REQUIRE(report.procurement.size() == 1);
    CHECK(report.procurement[0].gpus == 8);
    CHECK(report.procurement[0].tco_usd == fleet.shared_tco_usd);
    CHECK(report.total_tco_usd == fleet.shared_tco_usd);
    CHECK(report.procurement[0].total_usd + report.procurement[0].monthly_opex_usd * 24 ==
          Approx(fleet.shared_tco_usd).epsilon(1e-12));
    // Month by month: 8 owned, the fine-tune's wall-clock share in months 1-2, the service's
    // utilisation after; no idle GPU.
    REQUIRE(fleet.months.size() == 24);
    REQUIRE(fleet.phases.size() == 2);
    CHECK(fleet.months[0].phases == "support-70b-finetune");
    CHECK(fleet.months[1].busy_gpus == Approx(8 * fleet.phases[0].utilisation));
    CHECK(fleet.months[2].phases == "support-70b-chat");
    CHECK(fleet.months[23].busy_gpus == Approx(8 * 0.7));  // deployment.utilization default
    for (const gpusel::SharedFleetMonth& month : fleet.months) {
        CHECK(month.owned_gpus == 8);
        CHECK(month.idle_gpus == 0);
    }
    CHECK(fleet.idle_advice.empty());
}

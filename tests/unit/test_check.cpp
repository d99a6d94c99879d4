// gpusel check: the judgement from hand-built assessments (no estimator runs), the renderers
// and their escaping, and the command's exit codes and -o.

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "check/check.hpp"
#include "cli/cli.hpp"
#include "report/check_render.hpp"
#include "support/test_support.hpp"

using gpusel::Acquisition;
using gpusel::Candidate;
using gpusel::CheckReport;
using gpusel::Finding;
using gpusel::FindingSeverity;
using gpusel::GpuSpec;
using gpusel::HardwareAssessment;
using gpusel::Position;
using gpusel::Precision;
using gpusel::Proposal;
using gpusel::ProposedHardware;
using gpusel::Role;
using Severity = gpusel::FindingSeverity;
using gpusel::Workload;

namespace {

constexpr double GB = 1e9;

GpuSpec make_gpu(const std::string& id, double memory_gb, bool bf16 = true) {
    GpuSpec gpu;
    gpu.id = id;
    gpu.name = id;
    gpu.memory_bytes = memory_gb * GB;
    gpu.dense_flops_per_s[static_cast<std::size_t>(Precision::fp32)] = 20e12;
    gpu.dense_flops_per_s[static_cast<std::size_t>(Precision::fp16)] = 300e12;
    if (bf16) {
        gpu.dense_flops_per_s[static_cast<std::size_t>(Precision::bf16)] = 300e12;
    }
    gpu.interconnect.kind = "nvlink4";
    gpu.interconnect.domain_size = 8;
    return gpu;
}

Workload training_workload() {
    Workload workload;
    workload.name = "train";
    workload.kind = gpusel::WorkloadKind::training;
    workload.role = Role::training;
    workload.precision = Precision::bf16;
    workload.training.deadline_seconds = 10 * 86400.0;
    workload.deployment.horizon_months = 24;
    return workload;
}

Workload inference_workload() {
    Workload workload;
    workload.name = "serve";
    workload.kind = gpusel::WorkloadKind::inference;
    workload.role = Role::inference;
    workload.precision = Precision::fp16;
    workload.inference.requests_per_s = 20;
    workload.inference.slo.ttft_seconds = 0.3;
    workload.inference.slo.tpot_seconds = 0.05;
    workload.deployment.horizon_months = 24;
    return workload;
}

// A training candidate: `count` GPUs, `total_gb` per GPU of `capacity_gb`, `days` to train.
Candidate training_candidate(const std::string& gpu, int count, double total_gb, double capacity_gb, double days,
                             double deadline_days, double tco_usd, double capex_usd = 0, double monthly_usd = 0) {
    Candidate candidate;
    candidate.gpu = gpu;
    candidate.count = count;
    candidate.layout.data_parallel = count;
    candidate.memory.per_gpu.total_bytes = total_gb * GB;
    candidate.memory.capacity_bytes = capacity_gb * GB;
    gpusel::TrainingPerf training;
    training.time_to_train_s = days * 86400;
    training.meets_deadline = days <= deadline_days;
    training.step_time_s = 1.5;
    training.tokens_per_s = 10000;
    candidate.perf.training = training;
    candidate.cost.tco_usd = tco_usd;
    candidate.cost.capex_usd = capex_usd;
    candidate.cost.monthly_opex_usd = monthly_usd;
    return candidate;
}

ProposedHardware line(Role role, const std::string& gpu, int count, Acquisition acquisition, int row) {
    ProposedHardware hardware;
    hardware.role = role;
    hardware.gpu = gpu;
    hardware.count = count;
    hardware.acquisition = acquisition;
    hardware.entry_position = {row, 5};
    hardware.gpu_position = {row + 1, 10};
    hardware.count_position = {row + 2, 12};
    hardware.acquisition_position = {row + 3, 18};
    return hardware;
}

Proposal proposal_for(const Workload& workload, std::vector<ProposedHardware> hardware) {
    Proposal proposal;
    proposal.name = "test-proposal";
    proposal.file = "proposal.yaml";
    proposal.project.name = "project";
    proposal.project.workloads.push_back(workload);
    proposal.hardware = std::move(hardware);
    return proposal;
}

HardwareAssessment assessment_for(const GpuSpec& gpu, std::size_t index = 0) {
    HardwareAssessment assessment;
    assessment.line = index;
    assessment.workload = 0;
    assessment.gpu = gpu;
    return assessment;
}

std::vector<std::string> rules_of(const CheckReport& report) {
    std::vector<std::string> rules;
    for (const Finding& finding : report.findings) {
        rules.push_back(finding.rule);
    }
    return rules;
}

const Finding& only(const CheckReport& report, const std::string& rule) {
    const auto found = std::find_if(report.findings.begin(), report.findings.end(),
                                    [&](const Finding& finding) { return finding.rule == rule; });
    REQUIRE(found != report.findings.end());
    REQUIRE(std::count_if(report.findings.begin(), report.findings.end(),
                          [&](const Finding& finding) { return finding.rule == rule; }) == 1);
    return *found;
}

std::optional<double> evidence(const Finding& finding, const std::string& key) {
    for (const gpusel::EvidenceItem& item : finding.evidence) {
        if (item.key == key) {
            return item.number;
        }
    }
    return std::nullopt;
}

std::string evidence_text(const Finding& finding, const std::string& key) {
    for (const gpusel::EvidenceItem& item : finding.evidence) {
        if (item.key == key) {
            return item.text;
        }
    }
    return "<absent>";
}

bool skipped(const CheckReport& report, const std::string& role, const std::string& rule) {
    return std::any_of(report.skipped.begin(), report.skipped.end(),
                       [&](const gpusel::SkippedCheck& item) { return item.role == role && item.rule == rule; });
}

}  // namespace

TEST_CASE("check: a line that meets every constraint passes with no findings", "[check]") {
    const GpuSpec gpu = make_gpu("X80", 80);
    const Workload workload = training_workload();
    const Proposal proposal = proposal_for(workload, {line(Role::training, "X80", 2, Acquisition::buy_new, 5)});
    HardwareAssessment assessment = assessment_for(gpu);
    assessment.proposed = training_candidate("X80", 2, 50, 80, 4, 10, 30000, 40000);
    assessment.cheapest_feasible = training_candidate("X80", 2, 50, 80, 4, 10, 30000);  // the proposal itself

    const CheckReport report = gpusel::judge_proposal(proposal, {assessment});
    CHECK(report.findings.empty());
    CHECK(report.passed());
    CHECK(report.roles == std::vector<std::string>{"training"});
    REQUIRE(report.summary.size() == 1);
    CHECK(report.summary.front().find("training: 2× X80 buy-new") == 0);
    // No budget set, no quote: those rules are reported as not evaluated, with the reason.
    CHECK(skipped(report, "training", "over-budget"));
    CHECK(skipped(report, "training", "price-far-from-catalog"));
    CHECK(skipped(report, "training", "slo-missed"));
    CHECK_FALSE(skipped(report, "training", "deadline-missed"));
}

TEST_CASE("check: does-not-fit carries the breakdown and points at count when more GPUs fit", "[check]") {
    const GpuSpec gpu = make_gpu("X40", 40);
    const Workload workload = training_workload();
    const Proposal proposal = proposal_for(workload, {line(Role::training, "X40", 2, Acquisition::buy_new, 5)});
    HardwareAssessment assessment = assessment_for(gpu);
    assessment.obstacle = gpusel::Obstacle::memory;
    gpusel::MemoryEstimate miss;
    miss.per_gpu.weights_bytes = 14 * GB;
    miss.per_gpu.gradients_bytes = 14 * GB;
    miss.per_gpu.optimizer_bytes = 28 * GB;
    miss.per_gpu.activations_bytes = 2 * GB;
    miss.per_gpu.overhead_bytes = 3 * GB;
    miss.per_gpu.total_bytes = 61 * GB;
    miss.capacity_bytes = 40 * GB;
    miss.micro_batch = 4;
    assessment.closest_miss = miss;
    assessment.closest_layout.tensor_parallel = 2;

    SECTION("more GPUs of the type fit") {
        assessment.fewest_fitting = training_candidate("X40", 4, 33, 40, 3, 10, 1);
        const CheckReport report = gpusel::judge_proposal(proposal, {assessment});
        const Finding& finding = only(report, "does-not-fit");
        CHECK(finding.severity == Severity::error);
        CHECK(finding.field == "hardware[0].count");
        CHECK(finding.position.line == 7);
        CHECK(finding.position.column == 12);
        CHECK(evidence(finding, "total_bytes") == Approx(61e9));
        CHECK(evidence(finding, "capacity_bytes") == Approx(40e9));
        CHECK(evidence(finding, "optimizer_bytes") == Approx(28e9));
        CHECK(evidence(finding, "micro_batch") == Approx(4));
        CHECK(evidence_text(finding, "layout") == "tp2 pp1 dp1");
        CHECK(finding.message ==
              "2× X40 does not fit: 61.0 GB per GPU even with the layout that needs least "
              "(tp2 pp1 dp1), X40 has 40.0 GB");
        CHECK(finding.fix.rfind("count: 4 — 33.0 GB/40.0 GB per GPU", 0) == 0);
        CHECK_FALSE(report.passed());
        // Nothing ran, so nothing about speed or money is judged.
        CHECK(skipped(report, "training", "deadline-missed"));
        CHECK(skipped(report, "training", "overspend"));
    }
    SECTION("no count fits: the GPU line is blamed") {
        assessment.max_count_searched = 64;
        const CheckReport report = gpusel::judge_proposal(proposal, {assessment});
        const Finding& finding = only(report, "does-not-fit");
        CHECK(finding.field == "hardware[0].gpu");
        CHECK(finding.position.line == 6);
        CHECK(finding.fix.rfind("no count of X40 up to 64 fits; choose a GPU with more memory", 0) == 0);
    }
}

TEST_CASE("check: headroom below the policy is an error with the free share", "[check]") {
    const GpuSpec gpu = make_gpu("X80", 80);
    Proposal proposal = proposal_for(training_workload(), {line(Role::training, "X80", 1, Acquisition::buy_new, 5)});
    proposal.policy.memory_headroom_fraction = 0.10;
    HardwareAssessment assessment = assessment_for(gpu);
    assessment.proposed = training_candidate("X80", 1, 76, 80, 4, 10, 30000);
    assessment.meets_headroom = false;
    const CheckReport report = gpusel::judge_proposal(proposal, {assessment});
    const Finding& finding = only(report, "headroom-below-policy");
    CHECK(finding.severity == Severity::error);
    CHECK(evidence(finding, "free_fraction") == Approx(0.05));
    CHECK(evidence(finding, "required_free_fraction") == Approx(0.10));
    CHECK(evidence(finding, "free_bytes") == Approx(4e9));
    CHECK(finding.message ==
          "1× X80 leaves 5 % of memory free per GPU (76.0 GB/80.0 GB per GPU), below the "
          "policy's 10 %");
}

TEST_CASE("check: precision-not-native is judged from the GPU, fitting or not", "[check]") {
    const GpuSpec volta = make_gpu("V32", 32, /*bf16=*/false);
    const Proposal proposal =
        proposal_for(training_workload(), {line(Role::training, "V32", 4, Acquisition::buy_used, 5)});
    HardwareAssessment assessment = assessment_for(volta);
    SECTION("evaluated") {
        assessment.proposed = training_candidate("V32", 4, 10, 32, 4, 10, 1000);
    }
    SECTION("not fitting") {
        assessment.obstacle = gpusel::Obstacle::memory;
    }
    const CheckReport report = gpusel::judge_proposal(proposal, {assessment});
    const Finding& finding = only(report, "precision-not-native");
    CHECK(finding.severity == Severity::error);
    CHECK(finding.field == "hardware[0].gpu");
    CHECK(evidence_text(finding, "precision") == "bf16");
    CHECK(evidence_text(finding, "runs_as") == "fp16");
    CHECK(evidence(finding, "peak_fp16_flops_per_s") == Approx(300e12));
    CHECK(finding.message == "V32 has no native bf16: the workload would run in fp16 instead (native: fp16)");
}

TEST_CASE("check: runnable_precision follows the planner's widening rule", "[check]") {
    Workload workload = training_workload();
    CHECK(gpusel::runnable_precision(workload, make_gpu("A", 80, true)) == Precision::bf16);
    CHECK(gpusel::runnable_precision(workload, make_gpu("V", 32, false)) == Precision::fp16);
    GpuSpec fp32_only;
    fp32_only.dense_flops_per_s[static_cast<std::size_t>(Precision::fp32)] = 10e12;
    CHECK(gpusel::runnable_precision(workload, fp32_only) == Precision::fp32);
    workload.precision = Precision::fp8;
    CHECK(gpusel::runnable_precision(workload, make_gpu("A", 80, true)) == Precision::bf16);
    GpuSpec nothing;
    CHECK_FALSE(gpusel::runnable_precision(workload, nothing).has_value());
}

TEST_CASE("check: a missed deadline says by how much, require_slo sets the severity", "[check]") {
    const GpuSpec gpu = make_gpu("X80", 80);
    Proposal proposal = proposal_for(training_workload(), {line(Role::training, "X80", 2, Acquisition::buy_new, 5)});
    HardwareAssessment assessment = assessment_for(gpu);
    assessment.proposed = training_candidate("X80", 2, 50, 80, 12.5, 10, 30000);
    assessment.fewest_meeting_target = training_candidate("X80", 3, 40, 80, 8, 10, 42000);
    proposal.policy.require_slo = GENERATE(true, false);
    const CheckReport report = gpusel::judge_proposal(proposal, {assessment});
    const Finding& finding = only(report, "deadline-missed");
    CHECK(finding.severity == (proposal.policy.require_slo ? Severity::error : Severity::warning));
    CHECK(report.passed() == !proposal.policy.require_slo);
    CHECK(evidence(finding, "time_to_train_s") == Approx(12.5 * 86400));
    CHECK(evidence(finding, "deadline_s") == Approx(10 * 86400.0));
    CHECK(evidence(finding, "overrun_s") == Approx(2.5 * 86400));
    CHECK(evidence(finding, "overrun_fraction") == Approx(0.25));
    CHECK(finding.message == "2× X80 needs 12.5 d per run, 60.0 h (25 %) past the 10.0 d deadline");
    CHECK(finding.fix == "count: 3 — 8.0 d per run ≤ 10.0 d deadline (tp1 pp1 dp3, TCO $42,000)");
}

TEST_CASE("check: a missed SLO names each term over its target", "[check]") {
    const GpuSpec gpu = make_gpu("L48", 48);
    const Workload workload = inference_workload();
    const Proposal proposal = proposal_for(workload, {line(Role::inference, "L48", 4, Acquisition::buy_new, 5)});
    HardwareAssessment assessment = assessment_for(gpu);
    Candidate candidate;
    candidate.gpu = "L48";
    candidate.count = 4;
    candidate.replicas = 4;
    candidate.memory.per_gpu.total_bytes = 20 * GB;
    candidate.memory.capacity_bytes = 48 * GB;
    gpusel::InferencePerf inference;
    inference.p99_ttft_s = 0.45;
    inference.p99_tpot_s = 0.04;
    inference.p99_e2e_s = 10.7;
    inference.requests_per_s = 25;
    inference.max_requests_per_s_meeting_slo = 12;
    inference.batch = 16;
    inference.meets_slo = false;
    candidate.perf.inference = inference;
    candidate.cost.tco_usd = 100000;
    assessment.proposed = candidate;
    const CheckReport report = gpusel::judge_proposal(proposal, {assessment});
    const Finding& finding = only(report, "slo-missed");
    CHECK(finding.severity == Severity::error);
    CHECK(finding.message == "4× L48 misses the SLO at 20 req/s: P99 TTFT 450 ms > 300 ms");
    CHECK(evidence(finding, "p99_ttft_s") == Approx(0.45));
    CHECK(evidence(finding, "slo_ttft_s") == Approx(0.3));
    CHECK(evidence(finding, "slo_capacity_requests_per_s") == Approx(12));
    CHECK(skipped(report, "inference", "deadline-missed"));
}

TEST_CASE("check: over-budget compares capex and monthly cost with the workload's budget", "[check]") {
    const GpuSpec gpu = make_gpu("X80", 80);
    Workload workload = training_workload();
    workload.budget.capex_usd = 60000;
    workload.budget.monthly_usd = 1000;
    const Proposal proposal = proposal_for(workload, {line(Role::training, "X80", 4, Acquisition::buy_new, 5)});
    HardwareAssessment assessment = assessment_for(gpu);
    assessment.proposed = training_candidate("X80", 4, 30, 80, 2, 10, 110000, 100000, 1500);
    const CheckReport report = gpusel::judge_proposal(proposal, {assessment});
    REQUIRE(rules_of(report) == std::vector<std::string>{"over-budget", "over-budget"});
    const Finding& capex = report.findings[0];
    CHECK(capex.message == "4× X80 buy-new: capex $100,000 is $40,000 (67 %) over the budget of $60,000");
    CHECK(evidence(capex, "excess_usd") == Approx(40000));
    const Finding& monthly = report.findings[1];
    CHECK(evidence(monthly, "monthly_usd") == Approx(1500));
    CHECK(evidence(monthly, "budget_monthly_usd") == Approx(1000));
}

TEST_CASE("check: overspend fires only beyond max_overspend, and names the alternative", "[check]") {
    const GpuSpec gpu = make_gpu("X80", 80);
    Proposal proposal = proposal_for(training_workload(), {line(Role::training, "X80", 2, Acquisition::buy_new, 5)});
    proposal.policy.max_overspend_fraction = 0.25;
    HardwareAssessment assessment = assessment_for(gpu);
    Candidate cheaper = training_candidate("Y48", 1, 30, 48, 5, 10, 40000);
    cheaper.acquisition = Acquisition::cloud_on_demand;
    assessment.cheapest_feasible = cheaper;
    SECTION("exactly at the limit passes") {
        assessment.proposed = training_candidate("X80", 2, 30, 80, 3, 10, 50000);
        CHECK(gpusel::judge_proposal(proposal, {assessment}).findings.empty());
    }
    SECTION("beyond it fails") {
        assessment.proposed = training_candidate("X80", 2, 30, 80, 3, 10, 50001);
        const CheckReport report = gpusel::judge_proposal(proposal, {assessment});
        const Finding& finding = only(report, "overspend");
        CHECK(finding.severity == Severity::error);
        CHECK(evidence(finding, "saving_usd") == Approx(10001));
        CHECK(evidence(finding, "overspend_fraction") == Approx(0.250025));
        CHECK(evidence_text(finding, "alternative") == "1× Y48 cloud-on-demand");
        CHECK(finding.fix.rfind("gpu: Y48, count: 1, acquisition: cloud-on-demand — saves $10,001 over 24 months", 0) ==
              0);
        CHECK(evidence(finding, "min_saving_usd") == Approx(1000));
    }
    SECTION("a saving below policy.min_saving passes, whatever its ratio") {
        // $90 against $40 is +125 %, but $50 is below the default $1,000.
        Candidate small = training_candidate("Y48", 1, 30, 48, 5, 10, 40);
        small.acquisition = Acquisition::cloud_on_demand;
        assessment.cheapest_feasible = small;
        assessment.proposed = training_candidate("X80", 2, 30, 80, 3, 10, 90);
        CHECK(rules_of(gpusel::judge_proposal(proposal, {assessment})).empty());
        proposal.policy.min_saving_usd = 50;
        CHECK(rules_of(gpusel::judge_proposal(proposal, {assessment})) == std::vector<std::string>{"overspend"});
    }
}

TEST_CASE("check: oversized warns when fewer GPUs meet every constraint, unless the policy says not to", "[check]") {
    const GpuSpec gpu = make_gpu("H80", 80);
    Proposal proposal = proposal_for(training_workload(), {line(Role::training, "H80", 8, Acquisition::buy_new, 5)});
    HardwareAssessment assessment = assessment_for(gpu);
    assessment.proposed = training_candidate("H80", 8, 5, 80, 0.1, 10, 160000);
    assessment.fewest_meeting_all = training_candidate("H80", 1, 9, 80, 0.8, 10, 20000);
    SECTION("warn_oversize") {
        const CheckReport report = gpusel::judge_proposal(proposal, {assessment});
        const Finding& finding = only(report, "oversized");
        CHECK(finding.severity == Severity::warning);
        CHECK(report.passed());
        CHECK(finding.field == "hardware[0].count");
        CHECK(evidence(finding, "sufficient_count") == Approx(1));
        CHECK(evidence(finding, "saving_usd") == Approx(140000));
        CHECK(finding.fix == "count: 1 — saves $140,000 over 24 months");
    }
    SECTION("warn_oversize: false") {
        proposal.policy.warn_oversize = false;
        const CheckReport report = gpusel::judge_proposal(proposal, {assessment});
        CHECK(report.findings.empty());
        CHECK(skipped(report, "training", "oversized"));
    }
}

TEST_CASE("check: acquisition-mismatch for a short purchase and a long rental, with the break-even", "[check]") {
    const GpuSpec gpu = make_gpu("X80", 80);
    SECTION("buying for three months") {
        Workload workload = training_workload();
        workload.deployment.horizon_months = 3;
        const Proposal proposal = proposal_for(workload, {line(Role::training, "X80", 2, Acquisition::buy_new, 5)});
        HardwareAssessment assessment = assessment_for(gpu);
        assessment.proposed = training_candidate("X80", 2, 30, 80, 3, 10, 9000, 40000);
        assessment.same_count_on_demand = training_candidate("X80", 2, 30, 80, 3, 10, 300);
        const CheckReport report = gpusel::judge_proposal(proposal, {assessment});
        const Finding& finding = only(report, "acquisition-mismatch");
        CHECK(finding.severity == Severity::warning);
        CHECK(finding.field == "hardware[0].acquisition");
        CHECK(finding.position.line == 8);
        CHECK(evidence(finding, "horizon_months") == Approx(3));
        CHECK(evidence(finding, "on_demand_tco_usd") == Approx(300));
    }
    SECTION("renting for two years past the break-even") {
        Workload workload = training_workload();
        workload.deployment.horizon_months = 24;
        const Proposal proposal =
            proposal_for(workload, {line(Role::training, "X80", 2, Acquisition::cloud_on_demand, 5)});
        HardwareAssessment assessment = assessment_for(gpu);
        // Renting costs 10,000 a month; owning 100,000 up front and 2,000 a month: even after
        // 100,000 / (10,000 − 2,000) = 12.5 months.
        assessment.proposed = training_candidate("X80", 2, 30, 80, 3, 10, 240000, 0, 10000);
        assessment.same_count_bought = training_candidate("X80", 2, 30, 80, 3, 10, 120000, 100000, 2000);
        const CheckReport report = gpusel::judge_proposal(proposal, {assessment});
        const Finding& finding = only(report, "acquisition-mismatch");
        CHECK(evidence(finding, "break_even_months") == Approx(12.5));
        CHECK_THAT(finding.message, Catch::Matchers::Contains("buying them breaks even after 12.5 months"));
    }
    SECTION("renting for less than the break-even passes") {
        Workload workload = training_workload();
        workload.deployment.horizon_months = 12;
        const Proposal proposal =
            proposal_for(workload, {line(Role::training, "X80", 2, Acquisition::cloud_on_demand, 5)});
        HardwareAssessment assessment = assessment_for(gpu);
        assessment.proposed = training_candidate("X80", 2, 30, 80, 3, 10, 120000, 0, 10000);
        assessment.same_count_bought = training_candidate("X80", 2, 30, 80, 3, 10, 110000, 100000, 2000);
        CHECK(gpusel::judge_proposal(proposal, {assessment}).findings.empty());
    }
}

TEST_CASE("check: price-far-from-catalog flags quotes outside half to twice the catalog price", "[check]") {
    const GpuSpec gpu = make_gpu("X80", 80);  // catalog: 20,000 USD new
    ProposedHardware hardware = line(Role::training, "X80", 2, Acquisition::buy_new, 5);
    hardware.unit_price_position = {9, 17};
    const auto run = [&](double quote) {
        hardware.unit_price_usd = quote;
        const Proposal proposal = proposal_for(training_workload(), {hardware});
        HardwareAssessment assessment = assessment_for(gpu);
        assessment.proposed = training_candidate("X80", 2, 30, 80, 3, 10, 1000);
        assessment.catalog_price = gpusel::PricePoint{20000, gpusel::PriceKind::list, "2026-01", {"test"}, {}};
        assessment.catalog_offer = "x80-card";
        return gpusel::judge_proposal(proposal, {assessment});
    };
    CHECK(run(10000).findings.empty());
    CHECK(run(40000).findings.empty());
    const CheckReport low = run(2000);
    const Finding& finding = only(low, "price-far-from-catalog");
    CHECK(finding.severity == Severity::warning);
    CHECK(finding.position.line == 9);
    CHECK(evidence(finding, "quote_to_catalog_ratio") == Approx(0.1));
    CHECK(evidence(finding, "catalog_usd") == Approx(20000));
    CHECK(finding.message ==
          "quoted unit_price $2,000 is 0.10× the catalog's buy-new price of $20,000 for X80 "
          "(x80-card) (as of 2026-01): a typo or a stale quote?");
    CHECK(rules_of(run(9999)) == std::vector<std::string>{"price-far-from-catalog"});
    CHECK(rules_of(run(40001)) == std::vector<std::string>{"price-far-from-catalog"});
}

TEST_CASE("check: strict — every warning fails, and quotes beyond policy.max_price_gap are errors", "[check]") {
    const GpuSpec gpu = make_gpu("X80", 80);  // catalog: 20,000 USD new
    ProposedHardware hardware = line(Role::training, "X80", 2, Acquisition::buy_new, 5);
    hardware.unit_price_position = {9, 17};
    const auto run = [&](double quote, bool strict, double gap) {
        hardware.unit_price_usd = quote;
        Proposal proposal = proposal_for(training_workload(), {hardware});
        proposal.policy.strict = strict;
        proposal.policy.max_price_gap_fraction = gap;
        HardwareAssessment assessment = assessment_for(gpu);
        assessment.proposed = training_candidate("X80", 2, 30, 80, 3, 10, 1000);
        assessment.catalog_price = gpusel::PricePoint{20000, gpusel::PriceKind::list, "2026-01", {"test"}, {}};
        assessment.catalog_offer = "x80-card";
        return gpusel::judge_proposal(proposal, {assessment});
    };
    // 1.6× the catalog: within half to twice (no finding), beyond the 50 % gap when strict (an error).
    CHECK(run(32000, false, 0.5).findings.empty());
    const CheckReport strict = run(32000, true, 0.5);
    const Finding& finding = only(strict, "price-far-from-catalog");
    CHECK(finding.severity == Severity::error);
    CHECK_FALSE(strict.passed());
    CHECK_THAT(finding.fix,
               Catch::Matchers::Contains("0.5–1.5×") && Catch::Matchers::Contains("(policy.max_price_gap, strict)"));
    // A wider gap allows it; at 1.5× exactly it passes.
    CHECK(run(32000, true, 0.7).findings.empty());
    CHECK(run(30000, true, 0.5).findings.empty());
    // The lost zero: a warning that passes, or under strict an error that fails.
    const CheckReport lenient = run(2000, false, 0.5);
    CHECK(lenient.passed());
    CHECK(only(lenient, "price-far-from-catalog").severity == Severity::warning);
    const CheckReport failed = run(2000, true, 0.5);
    CHECK_FALSE(failed.passed());
    CHECK_THAT(only(failed, "price-far-from-catalog").message, Catch::Matchers::EndsWith("[strict: warnings fail]"));
}

TEST_CASE("check: layout notes for tensor parallel over PCIe and more GPUs per node than the NVLink domain",
          "[check]") {
    SECTION("fixed tensor parallel on a PCIe-only card") {
        GpuSpec pcie = make_gpu("P48", 48);
        pcie.interconnect = {};
        Workload workload = training_workload();
        workload.training.tensor_parallel = 4;
        const Proposal proposal = proposal_for(workload, {line(Role::training, "P48", 4, Acquisition::buy_new, 5)});
        HardwareAssessment assessment = assessment_for(pcie);
        assessment.proposed = training_candidate("P48", 4, 30, 48, 3, 10, 1000);
        const CheckReport report = gpusel::judge_proposal(proposal, {assessment});
        const Finding& finding = only(report, "layout");
        CHECK(finding.severity == Severity::note);
        CHECK(evidence(finding, "tensor_parallel") == Approx(4));
        CHECK(evidence(finding, "nvlink_domain") == Approx(1));
        CHECK(report.passed());
    }
    SECTION("four bridged pairs in one node") {
        GpuSpec bridged = make_gpu("B48", 48);
        bridged.interconnect = {"nvlink-bridge", 112.5e9, 2};
        const Proposal proposal =
            proposal_for(training_workload(), {line(Role::training, "B48", 8, Acquisition::buy_new, 5)});
        HardwareAssessment assessment = assessment_for(bridged);
        assessment.proposed = training_candidate("B48", 8, 30, 48, 3, 10, 1000);
        const CheckReport report = gpusel::judge_proposal(proposal, {assessment});
        const Finding& finding = only(report, "layout");
        CHECK(evidence(finding, "gpus_per_node") == Approx(8));
        CHECK(evidence(finding, "nvlink_domain") == Approx(2));
    }
}

TEST_CASE("check: roles — hardware without workload, workload without hardware, two lines for one role", "[check]") {
    const GpuSpec gpu = make_gpu("X80", 80);
    Proposal proposal = proposal_for(training_workload(), {line(Role::inference, "X80", 1, Acquisition::buy_new, 5),
                                                           line(Role::inference, "X80", 1, Acquisition::buy_new, 10)});
    const CheckReport report = gpusel::judge_proposal(proposal, {assessment_for(gpu, 0), assessment_for(gpu, 1)});
    // Errors first, in file order; then the warning.
    REQUIRE(rules_of(report) == std::vector<std::string>{"unknown-role", "unknown-role", "missing-role"});
    CHECK(report.findings[0].position.line == 5);
    CHECK(report.findings[1].position.line == 10);
    CHECK(report.findings[2].severity == Severity::warning);
    CHECK(report.findings[2].role == "training");
    CHECK(report.roles == std::vector<std::string>{"training", "inference"});

    proposal = proposal_for(training_workload(), {line(Role::training, "X80", 1, Acquisition::buy_new, 5),
                                                  line(Role::training, "X80", 2, Acquisition::buy_new, 10)});
    HardwareAssessment first = assessment_for(gpu, 0);
    first.proposed = training_candidate("X80", 1, 30, 80, 3, 10, 1000);
    HardwareAssessment second = assessment_for(gpu, 1);
    second.proposed = training_candidate("X80", 2, 30, 80, 3, 10, 1000);
    const CheckReport duplicated = gpusel::judge_proposal(proposal, {first, second});
    const Finding& duplicate = only(duplicated, "duplicate-role");
    CHECK(duplicate.position.line == 10);
    CHECK(evidence(duplicate, "first_line") == Approx(5));
}

TEST_CASE("check: the workload's constraints and the lines that cannot be evaluated", "[check]") {
    const GpuSpec gpu = make_gpu("X80", 80);
    Workload workload = inference_workload();
    workload.constraints.max_gpus = 4;
    const Proposal proposal = proposal_for(workload, {line(Role::inference, "X80", 8, Acquisition::cloud_spot, 5)});
    HardwareAssessment assessment = assessment_for(gpu);
    assessment.excluded_by = "segment datacenter not allowed";
    assessment.obstacle = gpusel::Obstacle::spot_serving;
    const CheckReport report = gpusel::judge_proposal(proposal, {assessment});
    CHECK(rules_of(report) ==
          std::vector<std::string>{"constraint-violated", "constraint-violated", "acquisition-mismatch"});
    CHECK(report.findings[0].field == "hardware[0].gpu");
    CHECK(report.findings[1].field == "hardware[0].count");
    CHECK(evidence(report.findings[1], "max_gpus") == Approx(4));
    CHECK(report.findings[2].field == "hardware[0].acquisition");

    assessment.excluded_by.clear();
    assessment.obstacle = gpusel::Obstacle::price;
    ProposedHardware rented = line(Role::inference, "X80", 4, Acquisition::cloud_reserved, 5);
    const CheckReport priced = gpusel::judge_proposal(proposal_for(workload, {rented}), {assessment});
    CHECK(rules_of(priced) == std::vector<std::string>{"price-missing"});
}

TEST_CASE("check: meets_every_constraint holds the policy's headroom, precision, target, count and budget", "[check]") {
    Workload workload = training_workload();
    workload.budget.capex_usd = 50000;
    workload.constraints.max_gpus = 4;
    gpusel::ProposalPolicy policy;
    policy.memory_headroom_fraction = 0.10;
    Candidate candidate = training_candidate("X80", 2, 72, 80, 5, 10, 1000, 50000);
    CHECK(gpusel::meets_every_constraint(workload, policy, candidate));  // exactly 10 % free, exactly on budget
    Candidate tight = candidate;
    tight.memory.per_gpu.total_bytes = 72.1 * GB;
    CHECK_FALSE(gpusel::meets_every_constraint(workload, policy, tight));
    Candidate fallback = candidate;
    fallback.precision_fallback = true;
    CHECK_FALSE(gpusel::meets_every_constraint(workload, policy, fallback));
    Candidate late = training_candidate("X80", 2, 50, 80, 11, 10, 1000);
    CHECK_FALSE(gpusel::meets_every_constraint(workload, policy, late));
    Candidate pricey = candidate;
    pricey.cost.capex_usd = 50001;
    CHECK_FALSE(gpusel::meets_every_constraint(workload, policy, pricey));
    Candidate many = candidate;
    many.count = 8;
    CHECK_FALSE(gpusel::meets_every_constraint(workload, policy, many));
}

// ---------------------------------------------------------------------------------------
// Escaping and rendering

TEST_CASE("check: GitHub workflow-command escaping follows actions/toolkit", "[check][render]") {
    CHECK(gpusel::escape_github_data("50 % of 80GB\r\nnext") == "50 %25 of 80GB%0D%0Anext");
    CHECK(gpusel::escape_github_data("a: b, c") == "a: b, c");
    CHECK(gpusel::escape_github_property("dir,x/p:q.yaml") == "dir%2Cx/p%3Aq.yaml");
    CHECK(gpusel::escape_github_property("100%\n") == "100%25%0A");
    // % first: an escape is never escaped twice.
    CHECK(gpusel::escape_github_property("%3A") == "%253A");
}

TEST_CASE("check: evidence reads with units", "[check][render]") {
    using gpusel::EvidenceItem;
    CHECK(gpusel::format_evidence_value(EvidenceItem{"total_bytes", 95.31e9, {}}) == "95.3 GB");
    CHECK(gpusel::format_evidence_value(EvidenceItem{"saving_usd", 12400.4, {}}) == "$12,400");
    CHECK(gpusel::format_evidence_value(EvidenceItem{"tco_usd", 0.47, {}}) == "$0.47");
    CHECK(gpusel::format_evidence_value(EvidenceItem{"quoted_usd_per_hour", 2.5, {}}) == "$2.50/h");
    CHECK(gpusel::format_evidence_value(EvidenceItem{"deadline_s", 14 * 86400.0, {}}) == "14.0 d");
    CHECK(gpusel::format_evidence_value(EvidenceItem{"offered_requests_per_s", 20000, {}}) == "20000/s");
    CHECK(gpusel::format_evidence_value(EvidenceItem{"free_fraction", 0.05, {}}) == "5 %");
    CHECK(gpusel::format_evidence_value(EvidenceItem{"power_watts", 400, {}}) == "400 W");
    CHECK(gpusel::format_evidence_value(EvidenceItem{"count", 8, {}}) == "8");
    CHECK(gpusel::format_evidence_value(EvidenceItem{"gpu", std::nullopt, "H100-SXM5"}) == "H100-SXM5");
    CHECK(gpusel::evidence_label("time_to_train_s") == "time to train");
    CHECK(gpusel::evidence_label("offered_requests_per_s") == "offered requests");
    CHECK(gpusel::evidence_label("count") == "count");
}

namespace {
CheckReport sample_report() {
    CheckReport report;
    report.proposal = "q1 <draft>";
    report.file = "proposals/a,b.yaml";
    report.roles = {"training"};
    Finding finding;
    finding.severity = Severity::error;
    finding.rule = "over-budget";
    finding.role = "training";
    finding.field = "hardware[0].count";
    finding.position = {7, 12};
    finding.message = "capex $100,000 is 67 % over";
    finding.evidence = {
        {"capex_usd", 100000.004, {}}, {"total_bytes", 1.5e9 + 0.4, {}}, {"layout", std::nullopt, "tp2"}};
    finding.fix = "count: 1";
    report.findings.push_back(finding);
    Finding note = finding;
    note.severity = Severity::note;
    note.rule = "layout";
    note.position = {};
    note.message = "a\nb";
    note.evidence.clear();
    report.findings.push_back(note);
    report.skipped.push_back({"training", "overspend", "no alternative"});
    return report;
}
}  // namespace

TEST_CASE("check: github format annotates the file's positions and escapes them", "[check][render]") {
    const std::string out = gpusel::render_check_github(sample_report());
    std::istringstream lines(out);
    std::string first;
    std::string second;
    std::string third;
    std::getline(lines, first);
    std::getline(lines, second);
    std::getline(lines, third);
    CHECK(first ==
          "::error file=proposals/a%2Cb.yaml,line=7,col=12,title=gpusel over-budget (training)::training: capex "
          "$100,000 is 67 %25 over%0Aevidence: capex $100,000 · total 1.5 GB · layout tp2%0Afix: count: 1");
    CHECK(second ==
          "::notice file=proposals/a%2Cb.yaml,title=gpusel layout (training)::training: a%0Ab%0Afix: count: 1");
    CHECK(third == "gpusel check: proposals/a,b.yaml: check failed: 1 error, 0 warnings, 1 note");
}

TEST_CASE("check: junit has one test case per rule per role and counts the failures", "[check][render]") {
    const std::string out = gpusel::render_check_junit(sample_report());
    const auto count = [&](const std::string& needle) {
        std::size_t found = 0;
        for (std::size_t at = out.find(needle); at != std::string::npos; at = out.find(needle, at + 1)) {
            ++found;
        }
        return found;
    };
    const std::size_t rules = gpusel::check_rules().size();
    CHECK(count("<testcase ") == rules);
    CHECK(count("<failure ") == 1);
    CHECK(count("<skipped ") == 1);
    CHECK(out.find(fmt::format("<testsuites name=\"gpusel check\" tests=\"{}\" failures=\"1\" errors=\"0\" "
                               "skipped=\"1\">",
                               rules)) != std::string::npos);
    CHECK_THAT(out, Catch::Matchers::Contains("<testsuite name=\"q1 &lt;draft&gt;\""));
    CHECK_THAT(out,
               Catch::Matchers::Contains("<failure type=\"over-budget\" message=\"capex $100,000 is 67 % over\">"));
    // The note is not a failure: it is printed as output of its (passing) test case.
    CHECK(out.find("<system-out>proposals/a,b.yaml: note: training: a\nb [layout]\nfix: count: 1\n</system-out>") !=
          std::string::npos);
    CHECK(out.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", 0) == 0);
}

TEST_CASE("check: json follows the format-1 shape, rounds by unit, and writes null for no position",
          "[check][render]") {
    const nlohmann::json document = nlohmann::json::parse(gpusel::render_check_json(sample_report()));
    CHECK(document["format_version"] == 1);
    CHECK(document["proposal"] == "q1 <draft>");
    CHECK(document["passed"] == false);
    REQUIRE(document["findings"].size() == 2);
    const nlohmann::json& first = document["findings"][0];
    CHECK(first["severity"] == "error");
    CHECK(first["rule"] == "over-budget");
    CHECK(first["file"] == "proposals/a,b.yaml");
    CHECK(first["line"] == 7);
    CHECK(first["column"] == 12);
    CHECK(first["evidence"]["capex_usd"].get<double>() == 100000.0);
    CHECK(first["evidence"]["total_bytes"].is_number_integer());
    CHECK(first["evidence"]["total_bytes"] == 1500000000);
    CHECK(first["evidence"]["layout"] == "tp2");
    CHECK(document["findings"][1]["line"].is_null());
    CHECK(document["summary"]["errors"] == 1);
    CHECK(document["summary"]["notes"] == 1);
    CHECK(document["skipped"][0]["rule"] == "overspend");
}

TEST_CASE("check: input errors in the machine formats keep their positions", "[check][render]") {
    const std::vector<gpusel::Diagnostic> diagnostics = {{"p.yaml", {6, 10}, "hardware[0].gpu", "unknown GPU 'H100'"}};
    CHECK(gpusel::render_input_errors_github(diagnostics) ==
          "::error file=p.yaml,line=6,col=10,title=gpusel%3A invalid input::hardware[0].gpu: unknown GPU 'H100'\n");
    const nlohmann::json document = nlohmann::json::parse(gpusel::render_input_errors_json("p.yaml", diagnostics));
    CHECK(document["passed"] == false);
    CHECK(document["input_errors"][0]["line"] == 6);
    CHECK(document["input_errors"][0]["path"] == "hardware[0].gpu");
    const std::string junit = gpusel::render_input_errors_junit("p.yaml", diagnostics);
    CHECK(junit.find(
              "failure type=\"input-error\" message=\"p.yaml:6:10: hardware[0].gpu: unknown GPU &apos;H100&apos;\"") !=
          std::string::npos);
}

// ---------------------------------------------------------------------------------------
// The command

TEST_CASE("check: the command writes -o whole and exits 1 on an error finding", "[check][cli]") {
    const std::filesystem::path directory =
        std::filesystem::temp_directory_path() / ("gpusel-check-" + std::to_string(::getpid()));
    std::filesystem::create_directories(directory);
    const std::string target = (directory / "result.json").string();
    std::ostringstream out;
    std::ostringstream err;
    const int code = gpusel::cli::run(
        {"check", gpusel::test::source_path("examples/proposals/does-not-fit.yaml"), "--format", "json", "-o", target},
        out, err);
    CHECK(code == 1);
    CHECK(out.str().empty());
    CHECK(err.str().empty());
    std::ifstream file(target);
    const nlohmann::json document = nlohmann::json::parse(file);
    CHECK(document["passed"] == false);
    CHECK(document["findings"][0]["rule"] == "does-not-fit");

    // An existing file is not replaced without --force: exit 4, file unchanged.
    std::ostringstream out2;
    std::ostringstream err2;
    CHECK(gpusel::cli::run({"check", gpusel::test::source_path("examples/proposals/good.yaml"), "-o", target}, out2,
                           err2) == 4);
    std::ifstream again(target);
    CHECK(nlohmann::json::parse(again)["passed"] == false);
    std::filesystem::remove_all(directory);
}

TEST_CASE("check: a bad --format is a usage error", "[check][cli]") {
    std::ostringstream out;
    std::ostringstream err;
    CHECK(gpusel::cli::run({"check", "x.yaml", "--format", "sarif"}, out, err) == 2);
    CHECK_THAT(err.str(), Catch::Matchers::Contains("--format: 'sarif' is not one of text, json, github, junit"));
}

// ---------------------------------------------------------------------------------------
// The assessment, with the real estimators: properties that hold whatever the numbers

namespace {
gpusel::Proposal load_example(const std::string& name, const gpusel::Catalog& catalog,
                              const gpusel::ModelLibrary& models) {
    return gpusel::load_proposal_file(gpusel::test::source_path("examples/proposals/" + name),
                                      gpusel::LoadContext{&catalog, &models});
}
}  // namespace

TEST_CASE("check: assessments are consistent with what they claim", "[check][assess]") {
    static const gpusel::Catalog catalog = gpusel::builtin_catalog();
    static const gpusel::ModelLibrary models = gpusel::builtin_models();
    static const gpusel::EfficiencyTable efficiency = gpusel::builtin_efficiency();
    const std::string name =
        GENERATE("good.yaml", "oversized.yaml", "does-not-fit.yaml", "unsupported-precision.yaml", "over-budget.yaml");
    CAPTURE(name);
    const Proposal proposal = load_example(name, catalog, models);
    const std::vector<HardwareAssessment> assessments = gpusel::assess_proposal(proposal, catalog, efficiency);
    REQUIRE(assessments.size() == proposal.hardware.size());
    for (const HardwareAssessment& assessment : assessments) {
        const ProposedHardware& hardware = proposal.hardware[assessment.line];
        REQUIRE(assessment.workload.has_value());
        Workload workload = proposal.project.workloads[*assessment.workload];
        CHECK(workload.role == hardware.role);
        workload.constraints.memory_headroom_fraction = proposal.policy.memory_headroom_fraction;
        if (assessment.proposed) {
            CHECK(assessment.proposed->count == hardware.count);
            CHECK(assessment.proposed->acquisition == hardware.acquisition);
            CHECK(assessment.obstacle == gpusel::Obstacle::none);
        } else {
            CHECK(assessment.obstacle != gpusel::Obstacle::none);
        }
        if (assessment.obstacle == gpusel::Obstacle::memory) {
            REQUIRE(assessment.closest_miss.has_value());
            CHECK(assessment.closest_miss->per_gpu.total_bytes >
                  assessment.closest_miss->capacity_bytes * (1 - proposal.policy.memory_headroom_fraction));
        }
        if (assessment.fewest_meeting_all) {
            CHECK(assessment.fewest_meeting_all->count < hardware.count);
            CHECK(gpusel::meets_every_constraint(workload, proposal.policy, *assessment.fewest_meeting_all));
        }
        if (assessment.fewest_fitting) {
            CHECK(assessment.fewest_fitting->count > hardware.count);
            CHECK(assessment.fewest_fitting->memory.per_gpu.total_bytes <=
                  assessment.fewest_fitting->memory.capacity_bytes * (1 - proposal.policy.memory_headroom_fraction));
        }
        if (assessment.cheapest_feasible) {
            CHECK(gpusel::meets_every_constraint(workload, proposal.policy, *assessment.cheapest_feasible));
            const GpuSpec* gpu = catalog.find(assessment.cheapest_feasible->gpu);
            REQUIRE(gpu != nullptr);
            CHECK(gpusel::constraint_exclusion(workload, *gpu).empty());
        }
    }
}

TEST_CASE("check: the example proposals give the findings they were written for", "[check][assess]") {
    static const gpusel::Catalog catalog = gpusel::builtin_catalog();
    static const gpusel::ModelLibrary models = gpusel::builtin_models();
    static const gpusel::EfficiencyTable efficiency = gpusel::builtin_efficiency();
    const auto judge = [&](const std::string& name) {
        const Proposal proposal = load_example(name, catalog, models);
        return gpusel::judge_proposal(proposal, gpusel::assess_proposal(proposal, catalog, efficiency));
    };
    const auto has = [](const CheckReport& report, const std::string& rule, FindingSeverity severity) {
        return std::any_of(report.findings.begin(), report.findings.end(), [&](const Finding& finding) {
            return finding.rule == rule && finding.severity == severity;
        });
    };
    const CheckReport good = judge("good.yaml");
    CHECK(good.findings.empty());
    // H100 SXM5 comes in 8-GPU servers: fewer cannot be bought, so the finding is the overspend.
    CHECK(has(judge("oversized.yaml"), "overspend", Severity::error));
    CHECK_FALSE(has(judge("oversized.yaml"), "oversized", Severity::warning));
    CHECK(has(judge("does-not-fit.yaml"), "does-not-fit", Severity::error));
    CHECK(has(judge("unsupported-precision.yaml"), "precision-not-native", Severity::error));
    CHECK(has(judge("over-budget.yaml"), "over-budget", Severity::error));
}

TEST_CASE("check: docs/ci.md and check --help name every rule of check_rules(), in its order", "[check]") {
    std::ifstream in(std::string(GPUSEL_SOURCE_DIR) + "/docs/ci.md");
    REQUIRE(in);
    std::vector<std::string> documented;  // the first cell of each row of the Rules table
    for (std::string line; std::getline(in, line);) {
        if (line.rfind("| `", 0) == 0) {
            const std::size_t end = line.find('`', 3);
            REQUIRE(end != std::string::npos);
            documented.push_back(line.substr(3, end - 3));
        }
    }
    std::vector<std::string> rules;
    for (const std::string_view rule : gpusel::check_rules()) {
        rules.emplace_back(rule);
    }
    CHECK(documented == rules);

    // The help's "Rules: a, b, ..., z (docs/ci.md: when each fires)." paragraph, line breaks undone.
    std::ostringstream out, err;
    CHECK(gpusel::cli::run({"check", "--help"}, out, err) == 0);
    std::string help = out.str();
    std::replace(help.begin(), help.end(), '\n', ' ');
    const std::size_t start = help.find("Rules: ");
    const std::size_t end = help.find(" (docs/ci.md: when each fires).");
    REQUIRE(start != std::string::npos);
    REQUIRE(end != std::string::npos);
    std::vector<std::string> listed;
    std::istringstream words(help.substr(start + 7, end - start - 7));
    for (std::string word; words >> word;) {
        listed.push_back(word.back() == ',' ? word.substr(0, word.size() - 1) : word);
    }
    CHECK(listed == rules);
}

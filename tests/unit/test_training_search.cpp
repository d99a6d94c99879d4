#include <catch2/catch.hpp>

#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "plan/plan.hpp"
#include "search/training_search.hpp"
#include "support/search_checks.hpp"
#include "support/test_support.hpp"

// The pruned, fast search against the unpruned reference (full estimators, every point), and the
// large-scale scenario's counts against an independent enumeration of its space.

namespace {

using namespace gpusel;

using test::catalog;
using test::efficiency;
using test::models;

Workload load_example(const std::string& relative) {
    const LoadContext context{&catalog(), &models()};
    return load_workload_file(test::source_path(relative), context);
}

// The scale scenario cut down so that the reference search stays quick in a Debug or sanitiser
// build: fewer GPUs per cluster, micro-batches 1-4.
Workload reduced(Workload workload, int max_gpus) {
    workload.constraints.max_gpus = max_gpus;
    workload.training.micro_batch_options = {1, 2, 3, 4};
    return workload;
}

void check_same_choices(const Workload& workload, const std::string& gpu_id, std::optional<int> fixed_count = {}) {
    INFO(workload.name << " on " << gpu_id);
    TrainingSearchOptions options;
    options.fixed_count = fixed_count;
    options.require_deadline = !fixed_count;
    test::check_pruned_search_matches_reference(workload, *catalog().find(gpu_id), efficiency(), options);
}

// The scenario's search space counted directly from its definition (examples/scale/*.yaml):
// precision (bf16, fp8 where native) × recompute (3) × TP (powers of two up to the NVLink domain
// and 8) × PP (divisors of the layers) × DP (divisors of the global batch, tp·pp·dp ≤ max) ×
// ZeRO (4 when dp > 1, else 1) × micro-batches 1..16 dividing global / dp.
std::size_t enumerate_space(const Workload& workload) {
    std::size_t space = 0;
    const int global = workload.training.global_batch;
    const int layers = workload.model.layers;
    for (const GpuSpec& gpu : catalog().gpus()) {
        if (gpu.segment != Segment::datacenter) {
            continue;
        }
        std::size_t precisions = (gpu.supports(Precision::bf16) ? 1U : 0U) + (gpu.supports(Precision::fp8) ? 1U : 0U);
        if (precisions == 0) {
            precisions = 1;  // the fp16 fallback of bf16
        }
        const int domain = gpu.has_gpu_interconnect() ? gpu.interconnect.domain_size : 1;
        std::size_t per_precision = 0;
        for (int tp = 1; tp <= std::min(domain, 8); tp *= 2) {
            for (int pp = 1; pp <= layers; ++pp) {
                if (layers % pp != 0) {
                    continue;
                }
                for (int dp = 1; static_cast<long long>(tp) * pp * dp <= workload.constraints.max_gpus; ++dp) {
                    if (global % dp != 0) {
                        continue;
                    }
                    int micro_batches = 0;
                    for (int micro_batch = 1; micro_batch <= 16; ++micro_batch) {
                        micro_batches += global % (micro_batch * dp) == 0 ? 1 : 0;
                    }
                    per_precision += static_cast<std::size_t>(micro_batches) * (dp > 1 ? 4 : 1);
                }
            }
        }
        space += precisions * 3 * per_precision;
    }
    return space;
}

}  // namespace

TEST_CASE("training search: pruning keeps the fastest point of every GPU count", "[training_search]") {
    const Workload llama = reduced(load_example("examples/scale/llama-405b-pretrain.yaml"), 256);
    const Workload gpt = reduced(load_example("examples/scale/gpt-1t-pretrain.yaml"), 256);
    const Workload small = load_example("examples/pretrain-7b.yaml");  // no global batch: powers of two
    for (const std::string gpu : {"H100-SXM5", "MI300X", "A100-80GB-SXM4", "GAUDI3"}) {
        check_same_choices(llama, gpu);
        check_same_choices(gpt, gpu);
        check_same_choices(small, gpu);
        // gpusel check's fixed counts, also ones that do not divide the global batch.
        for (const int count : {24, 64, 96}) {
            check_same_choices(llama, gpu, count);
            check_same_choices(gpt, gpu, count);
        }
    }
}

TEST_CASE("training search: the reduced scale plan has the unpruned plan's winner", "[training_search]") {
    Project project;
    project.name = "reduced";
    Workload workload = reduced(load_example("examples/scale/llama-405b-pretrain.yaml"), 512);
    workload.constraints.allow = {"H100-SXM5", "H200-SXM", "MI300X", "GAUDI3", "B200", "A100-80GB-SXM4"};
    workload.training.deadline_seconds = 0;
    workload.training.dataset_tokens = 50e9;
    project.workloads.push_back(workload);
    PlanOptions reference_options;
    reference_options.reference_search = true;
    const PlanReport fast = make_plan(project, catalog(), efficiency());
    const PlanReport reference = make_plan(project, catalog(), efficiency(), reference_options);
    const RolePlan& a = fast.roles.front();
    const RolePlan& b = reference.roles.front();
    REQUIRE(a.winner);
    REQUIRE(b.winner);
    CHECK(a.winner->gpu == b.winner->gpu);
    CHECK(a.winner->count == b.winner->count);
    CHECK(describe(a.winner->layout) == describe(b.winner->layout));
    CHECK(a.winner->micro_batch == b.winner->micro_batch);
    CHECK(a.winner->checkpointing == b.winner->checkpointing);
    CHECK(a.winner->precision == b.winner->precision);
    CHECK(a.winner->acquisition == b.winner->acquisition);
    CHECK(a.winner->cost.tco_usd == Approx(b.winner->cost.tco_usd).epsilon(1e-9));
    REQUIRE(a.ranked.size() == b.ranked.size());
    for (std::size_t index = 0; index < a.ranked.size(); ++index) {
        CHECK(a.ranked[index].gpu == b.ranked[index].gpu);
        CHECK(a.ranked[index].count == b.ranked[index].count);
    }
    CHECK(a.space == b.space);
    CHECK(b.evaluated == b.space);
    CHECK(a.evaluated < b.evaluated);
}

TEST_CASE("training search: the scale scenarios search their whole space", "[training_search]") {
    // evaluated and winner: what the pruned search gives on this catalog and data; a change means
    // the pruning, the space, the estimators or the data changed (then check the winner against the
    // reference tests above before updating). The space is checked against its own enumeration.
    struct Scenario {
        std::string file;
        std::size_t evaluated;
        std::string winner;
    };
    const std::vector<Scenario> scenarios = {
        // 8192 H100s on GCP a3-highgpu-8g spot ($20.04/h, 2026-09): AWS p6-b200 spot ($21.01/h, one
        // AZ of an undated snapshot) no longer ranks (quota-gated, and older than max_spot_age).
        // B300, GB300, MI350X, MI355X and RTX-PRO-6000-SE (2026-12) widen both spaces; the winners hold.
        {"examples/scale/llama-405b-pretrain.yaml", 245693, "H100-SXM5x8192 tp4 pp1 dp2048 zero3 mb1 full fp8"},
        // 256 B200s at tp8 pp16 dp2 zero2 (the pick at the estimate) fit only below the memory
        // band's 90th percentile (objective.confidence 0.9); the search offers one point per count,
        // so the next count that holds is taken.
        {"examples/scale/gpt-1t-pretrain.yaml", 239772, "B200x1024 tp8 pp32 dp4 zero1 mb1 none fp8"},
    };
    for (const Scenario& scenario : scenarios) {
        Project project;
        project.name = "scale";
        project.workloads.push_back(load_example(scenario.file));
        const PlanReport report = make_plan(project, catalog(), efficiency());
        const RolePlan& plan = report.roles.front();
        INFO(scenario.file);
        CHECK(plan.space == enumerate_space(plan.workload));
        CHECK(plan.evaluated == scenario.evaluated);
        REQUIRE(plan.winner);
        CHECK(fmt::format("{}x{} {} mb{} {} {}", plan.winner->gpu, plan.winner->count, describe(plan.winner->layout),
                          plan.winner->micro_batch, to_string(plan.winner->checkpointing),
                          to_string(plan.winner->precision)) == scenario.winner);
    }
}

TEST_CASE("training search: context parallelism keeps whole sequence replicas", "[training_search]") {
    // The scale scenario with each 8192-token sequence split over 2 GPUs: every layout's data-parallel
    // degree is replicas × 2, the replicas divide the global batch, and the pruned search still
    // finds the reference's winners.
    Workload llama = reduced(load_example("examples/scale/llama-405b-pretrain.yaml"), 256);
    llama.training.context_parallel = 2;
    TrainingSearchOptions options;
    options.require_deadline = false;
    const TrainingSearchResult result = search_training(llama, *catalog().find("H100-SXM5"), efficiency(), options);
    REQUIRE(!result.best_per_count.empty());
    for (const TrainingChoice& choice : result.best_per_count) {
        INFO(describe(choice.layout));
        CHECK(choice.layout.data_parallel % 2 == 0);
        CHECK(choice.layout.context_parallel == 2);
        CHECK(llama.training.global_batch % (choice.micro_batch * choice.layout.data_parallel / 2) == 0);
    }
    check_same_choices(llama, "H100-SXM5");
    check_same_choices(llama, "H100-SXM5", 128);
}

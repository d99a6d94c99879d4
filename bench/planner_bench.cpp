// Benchmarks of the planner's hot paths: loading the built-in data, evaluating one candidate
// (memory + perf + cost), and the full plan of each example. Run from the repository root:
//   cmake --preset bench && cmake --build --preset bench && ./build/bench/bench/gpusel_bench
// Each candidate benchmark reports candidates/s (items_per_second).

#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "gpusel/plan.hpp"

namespace {

const gpusel::Catalog& catalog() {
    static const gpusel::Catalog value = gpusel::builtin_catalog();
    return value;
}
const gpusel::ModelLibrary& models() {
    static const gpusel::ModelLibrary value = gpusel::builtin_models();
    return value;
}
const gpusel::EfficiencyTable& efficiency() {
    static const gpusel::EfficiencyTable value = gpusel::builtin_efficiency();
    return value;
}
std::string example(const char* name) { return std::string(GPUSEL_SOURCE_DIR) + "/examples/" + name; }

void load_catalog(benchmark::State& state) {
    for (auto _ : state) {
        benchmark::DoNotOptimize(gpusel::builtin_catalog());
    }
}
BENCHMARK(load_catalog)->Unit(benchmark::kMillisecond);

void load_models(benchmark::State& state) {
    for (auto _ : state) {
        benchmark::DoNotOptimize(gpusel::builtin_models());
    }
}
BENCHMARK(load_models)->Unit(benchmark::kMillisecond);

// One training candidate: memory breakdown, performance and one cost, as the planner does.
void evaluate_training_candidate(benchmark::State& state, const char* file, const char* gpu_id, int count) {
    const gpusel::Workload workload = gpusel::load_workload_file(example(file), {&catalog(), &models()});
    const gpusel::GpuSpec& gpu = *catalog().find(gpu_id);
    gpusel::Layout layout;
    layout.data_parallel = count;
    layout.sharding = gpusel::Sharding::zero1;
    for (auto _ : state) {
        gpusel::MemoryQuery memory_query;
        memory_query.layout = layout;
        benchmark::DoNotOptimize(gpusel::memory_breakdown(workload, gpu, memory_query));
        gpusel::PerfQuery perf_query;
        perf_query.layout = layout;
        const gpusel::PerfEstimate perf = gpusel::estimate_perf(workload, gpu, perf_query, efficiency());
        gpusel::UsageProfile usage;
        usage.gpus = count;
        usage.job_seconds = perf.training ? perf.training->time_to_train_s.value_or(3600) : 3600;
        benchmark::DoNotOptimize(gpusel::estimate_cost(workload, gpu, gpusel::Acquisition::buy_new, usage));
    }
    state.SetItemsProcessed(state.iterations());
}
BENCHMARK_CAPTURE(evaluate_training_candidate, small_model_roberta, "roberta-finetune.yaml", "A100-80GB-SXM4", 1);
BENCHMARK_CAPTURE(evaluate_training_candidate, large_model_llama70b, "llama3-70b-finetune.yaml", "H100-SXM5", 64);

void plan_example(benchmark::State& state, const char* file) {
    const gpusel::Project project = gpusel::load_plan_input_file(example(file), {&catalog(), &models()});
    std::size_t evaluated = 0;
    for (auto _ : state) {
        const gpusel::PlanReport report = gpusel::make_plan(project, catalog(), efficiency());
        evaluated = 0;
        for (const gpusel::RolePlan& role : report.roles) {
            evaluated += role.evaluated;
        }
        benchmark::DoNotOptimize(report);
    }
    state.counters["candidates"] = static_cast<double>(evaluated);
    state.counters["candidates_per_s"] =
        benchmark::Counter(static_cast<double>(evaluated), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK_CAPTURE(plan_example, smart_support, "smart-support.yaml")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(plan_example, chat_llama2_13b_int4, "chat-llama2-13b-int4.yaml")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(plan_example, pretrain_7b, "pretrain-7b.yaml")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(plan_example, llama3_70b_finetune, "llama3-70b-finetune.yaml")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(plan_example, vit_base_training, "vit-base-training.yaml")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(plan_example, edge_ocr_jetson, "edge-ocr-jetson.yaml")->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();

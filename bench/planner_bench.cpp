// Benchmarks of the planner (docs/performance.md holds the results and the targets):
//  - loading the built-in catalog, model presets and efficiency factors;
//  - one training candidate, by the fast path (CompiledTraining: memory + step time) and by the
//    full estimators (memory + perf + one cost), for a small and a large model;
//  - the training search of one GPU type, with and without pruning;
//  - the whole plan of every example, including the large-scale scenarios (examples/scale/), the
//    robustness analysis included (`robust_roles`: the roles whose analysis was computed); the
//    targets (issue 39): every example under 20 ms median, the largest search space
//    (scale/gpt-1t-pretrain, `space`) under 200 ms;
//  - the real binary: process start to its first output line, the whole run, its peak RSS.
// Run from the repository root:
//   cmake --preset bench && cmake --build --preset bench && ./build/bench/bench/gpusel_bench
// Candidate benchmarks report candidates/s (items_per_second) on one thread.

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <benchmark/benchmark.h>

#include "plan/plan.hpp"
#include "search/compiled_training.hpp"
#include "search/training_search.hpp"
#include "support/test_support.hpp"

extern char** environ;

namespace {

using gpusel::test::catalog;
using gpusel::test::efficiency;
using gpusel::test::models;

std::string example(const char* name) {
    return std::string(GPUSEL_SOURCE_DIR) + "/examples/" + name;
}
gpusel::Workload load(const char* file) {
    return gpusel::load_workload_file(example(file), {&catalog(), &models()});
}

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

void load_efficiency(benchmark::State& state) {
    for (auto _ : state) {
        benchmark::DoNotOptimize(gpusel::builtin_efficiency());
    }
}
BENCHMARK(load_efficiency)->Unit(benchmark::kMillisecond);

// The points the search visits for one (tp, pp, dp): every ZeRO stage × micro-batch 1..16.
struct Point {
    gpusel::TrainingLayoutTerms terms;
    gpusel::Sharding sharding = gpusel::Sharding::none;
    int micro_batch = 1;
};

std::vector<Point> points(const gpusel::CompiledTraining& compiled, int layers) {
    std::vector<Point> list;
    for (const int tp : {1, 2, 4, 8}) {
        for (int pp = 1; pp <= layers; ++pp) {
            if (layers % pp != 0) {
                continue;
            }
            for (const int dp : {1, 8, 64, 512}) {
                const gpusel::TrainingLayoutTerms terms = compiled.layout_terms(tp, pp, dp);
                for (const gpusel::Sharding sharding : {gpusel::Sharding::none, gpusel::Sharding::zero1,
                                                        gpusel::Sharding::zero2, gpusel::Sharding::zero3}) {
                    for (int micro_batch = 1; micro_batch <= 16; ++micro_batch) {
                        list.push_back({terms, sharding, micro_batch});
                    }
                }
            }
        }
    }
    return list;
}

// One candidate by the fast path: the memory total and, as the search does when it fits, the
// step time, throughput and time to train. The (tp, pp, dp) terms are shared by 64 points and
// built outside the loop, as in the search.
void fast_candidate(benchmark::State& state, const char* file, const char* gpu_id) {
    const gpusel::Workload workload = load(file);
    const gpusel::GpuSpec& gpu = *catalog().find(gpu_id);
    const std::optional<gpusel::CompiledTraining> compiled =
        gpusel::CompiledTraining::compile(workload, gpu, efficiency());
    if (!compiled) {
        state.SkipWithError("the workload is outside the fast path");
        return;
    }
    const std::vector<Point> list = points(*compiled, workload.model.layers);
    std::size_t index = 0;
    double sink = 0;
    for (auto _ : state) {
        const Point& point = list[index];
        index = index + 1 == list.size() ? 0 : index + 1;
        const gpusel::TrainingPointResult result = compiled->evaluate(point.terms, point.sharding, point.micro_batch);
        sink += result.samples_per_s + result.memory_total_bytes;
    }
    benchmark::DoNotOptimize(sink);
    state.SetItemsProcessed(state.iterations());
}
BENCHMARK_CAPTURE(fast_candidate, small_model_llama7b, "pretrain-7b.yaml", "H100-SXM5");
BENCHMARK_CAPTURE(fast_candidate, large_model_llama405b, "scale/llama-405b-pretrain.yaml", "H100-SXM5");
BENCHMARK_CAPTURE(fast_candidate, large_model_gpt1t, "scale/gpt-1t-pretrain.yaml", "H100-SXM5");

// One training candidate by the full estimators: memory breakdown, performance and one cost.
void full_candidate(benchmark::State& state, const char* file, const char* gpu_id, int count) {
    const gpusel::Workload workload = load(file);
    const gpusel::GpuSpec& gpu = *catalog().find(gpu_id);
    gpusel::Layout layout;
    layout.data_parallel = count;
    layout.sharding = gpusel::Sharding::zero1;
    std::vector<gpusel::OfferQuote> quotes;
    for (const gpusel::Acquisition acquisition :
         {gpusel::Acquisition::buy_new, gpusel::Acquisition::buy_used, gpusel::Acquisition::cloud_on_demand}) {
        quotes = gpusel::quotes_for(catalog(), workload, gpu, acquisition);
        if (!quotes.empty()) {
            state.SetLabel(std::string(gpusel::to_string(acquisition)));
            break;
        }
    }
    if (quotes.empty()) {
        state.SkipWithError("no quote");
        return;
    }
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
        benchmark::DoNotOptimize(gpusel::estimate_cost(workload, gpu, quotes.front(), usage));
    }
    state.SetItemsProcessed(state.iterations());
}
BENCHMARK_CAPTURE(full_candidate, small_model_roberta, "roberta-finetune.yaml", "A100-80GB-SXM4", 1);
BENCHMARK_CAPTURE(full_candidate, large_model_llama70b, "llama3-70b-finetune.yaml", "H100-SXM5", 64);

// The search of one GPU type for the 405B scenario: pruned fast path, the fast path without
// pruning is not offered (the reference mode is the unpruned one, on the full estimators).
void search_one_gpu(benchmark::State& state, const char* gpu_id, bool reference) {
    gpusel::Workload workload = load("scale/llama-405b-pretrain.yaml");
    if (reference) {
        workload.constraints.max_gpus = 1024;  // the full estimators on the whole space take minutes
    }
    gpusel::TrainingSearchOptions options;
    options.reference = reference;
    std::size_t evaluated = 0;
    std::size_t space = 0;
    for (auto _ : state) {
        const gpusel::TrainingSearchResult result =
            gpusel::search_training(workload, *catalog().find(gpu_id), efficiency(), options);
        evaluated = result.evaluated;
        space = result.space;
        benchmark::DoNotOptimize(result);
    }
    state.counters["space"] = static_cast<double>(space);
    state.counters["evaluated"] = static_cast<double>(evaluated);
    state.counters["candidates_per_s"] =
        benchmark::Counter(static_cast<double>(evaluated), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK_CAPTURE(search_one_gpu, h100_pruned_fast, "H100-SXM5", false)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(search_one_gpu, h100_reference_1024_gpus, "H100-SXM5", true)->Unit(benchmark::kMillisecond);

void plan_example(benchmark::State& state, const char* file) {
    const gpusel::Project project = gpusel::load_plan_input_file(example(file), {&catalog(), &models()});
    std::size_t evaluated = 0;
    std::size_t space = 0;
    std::size_t robust_roles = 0;
    for (auto _ : state) {
        const gpusel::PlanReport report = gpusel::make_plan(project, catalog(), efficiency());
        evaluated = 0;
        space = 0;
        robust_roles = 0;
        for (const gpusel::RolePlan& role : report.roles) {
            evaluated += role.evaluated;
            space += role.space;
            robust_roles += role.uncertainty.computed ? 1 : 0;
        }
        benchmark::DoNotOptimize(report);
    }
    state.counters["space"] = static_cast<double>(space);
    state.counters["evaluated"] = static_cast<double>(evaluated);
    state.counters["robust_roles"] = static_cast<double>(robust_roles);
    state.counters["candidates_per_s"] =
        benchmark::Counter(static_cast<double>(evaluated), benchmark::Counter::kIsIterationInvariantRate);
}
// Wall-clock (UseRealTime): the training search runs on every hardware thread.
#define GPUSEL_PLAN_BENCHMARK(name, file) \
    BENCHMARK_CAPTURE(plan_example, name, file)->Unit(benchmark::kMillisecond)->UseRealTime()
GPUSEL_PLAN_BENCHMARK(scale_llama_405b, "scale/llama-405b-pretrain.yaml");
GPUSEL_PLAN_BENCHMARK(scale_gpt_1t, "scale/gpt-1t-pretrain.yaml");
GPUSEL_PLAN_BENCHMARK(smart_support, "smart-support.yaml");
GPUSEL_PLAN_BENCHMARK(chat_llama2_13b_int4, "chat-llama2-13b-int4.yaml");
GPUSEL_PLAN_BENCHMARK(bert_embeddings, "bert-embeddings.yaml");
GPUSEL_PLAN_BENCHMARK(sdxl_serving, "sdxl-serving.yaml");
GPUSEL_PLAN_BENCHMARK(edge_ocr_jetson, "edge-ocr-jetson.yaml");
GPUSEL_PLAN_BENCHMARK(llama_finetune, "llama-finetune.yaml");
GPUSEL_PLAN_BENCHMARK(llama3_70b_finetune, "llama3-70b-finetune.yaml");
GPUSEL_PLAN_BENCHMARK(pretrain_7b, "pretrain-7b.yaml");
GPUSEL_PLAN_BENCHMARK(recsys_serving, "recsys-serving.yaml");
GPUSEL_PLAN_BENCHMARK(resnet50_train_cpu_decode, "resnet50-train-cpu-decode.yaml");
GPUSEL_PLAN_BENCHMARK(roberta_finetune, "roberta-finetune.yaml");
GPUSEL_PLAN_BENCHMARK(sdxl_lora, "sdxl-lora.yaml");
GPUSEL_PLAN_BENCHMARK(unet3d_medical, "unet3d-medical.yaml");
GPUSEL_PLAN_BENCHMARK(vit_base_training, "vit-base-training.yaml");
GPUSEL_PLAN_BENCHMARK(yolov8_training, "yolov8-training.yaml");
GPUSEL_PLAN_BENCHMARK(chat_diurnal, "chat-diurnal.yaml");
GPUSEL_PLAN_BENCHMARK(chat_length_mix, "chat-length-mix.yaml");
GPUSEL_PLAN_BENCHMARK(deepseek_r1_disagg, "deepseek-r1-disagg.yaml");
GPUSEL_PLAN_BENCHMARK(finetune_then_serve, "finetune-then-serve.yaml");
GPUSEL_PLAN_BENCHMARK(serve_by_date, "serve-by-date.yaml");

// The real binary, `gpusel plan FILE`: iteration time = process start to the first line of
// output; counters: the whole run (ms) and the child's peak resident set (MB, from wait4).
void binary_plan(benchmark::State& state, const char* file) {
    const std::string path = example(file);
    double whole_ms = 0;
    double peak_rss_mb = 0;
    for (auto _ : state) {
        int pipe_ends[2];
        if (pipe(pipe_ends) != 0) {
            state.SkipWithError("pipe failed");
            return;
        }
        posix_spawn_file_actions_t actions;
        posix_spawn_file_actions_init(&actions);
        posix_spawn_file_actions_adddup2(&actions, pipe_ends[1], STDOUT_FILENO);
        posix_spawn_file_actions_addclose(&actions, pipe_ends[0]);
        std::string binary = GPUSEL_BINARY;
        std::string command = "plan";
        std::string argument = path;
        char* argv[] = {binary.data(), command.data(), argument.data(), nullptr};
        const auto start = std::chrono::steady_clock::now();
        pid_t child = 0;
        if (posix_spawn(&child, binary.c_str(), &actions, nullptr, argv, environ) != 0) {
            state.SkipWithError("spawn failed");
            return;
        }
        posix_spawn_file_actions_destroy(&actions);
        close(pipe_ends[1]);
        FILE* output = fdopen(pipe_ends[0], "r");
        for (int character = std::fgetc(output); character != EOF && character != '\n';) {
            character = std::fgetc(output);
        }
        const auto first_line = std::chrono::steady_clock::now();
        while (std::fgetc(output) != EOF) {
        }
        std::fclose(output);
        int status = 0;
        rusage usage{};
        wait4(child, &status, 0, &usage);
        const auto end = std::chrono::steady_clock::now();
        state.SetIterationTime(std::chrono::duration<double>(first_line - start).count());
        whole_ms = std::chrono::duration<double, std::milli>(end - start).count();
        peak_rss_mb = static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
    }
    state.counters["whole_run_ms"] = whole_ms;
    state.counters["peak_rss_MB"] = peak_rss_mb;
}
#define GPUSEL_BINARY_BENCHMARK(name, file) \
    BENCHMARK_CAPTURE(binary_plan, name, file)->Unit(benchmark::kMillisecond)->UseManualTime()->Iterations(10)
GPUSEL_BINARY_BENCHMARK(scale_llama_405b, "scale/llama-405b-pretrain.yaml");
GPUSEL_BINARY_BENCHMARK(scale_gpt_1t, "scale/gpt-1t-pretrain.yaml");
GPUSEL_BINARY_BENCHMARK(smart_support, "smart-support.yaml");
GPUSEL_BINARY_BENCHMARK(chat_llama2_13b_int4, "chat-llama2-13b-int4.yaml");
GPUSEL_BINARY_BENCHMARK(bert_embeddings, "bert-embeddings.yaml");
GPUSEL_BINARY_BENCHMARK(sdxl_serving, "sdxl-serving.yaml");
GPUSEL_BINARY_BENCHMARK(edge_ocr_jetson, "edge-ocr-jetson.yaml");
GPUSEL_BINARY_BENCHMARK(llama_finetune, "llama-finetune.yaml");
GPUSEL_BINARY_BENCHMARK(llama3_70b_finetune, "llama3-70b-finetune.yaml");
GPUSEL_BINARY_BENCHMARK(pretrain_7b, "pretrain-7b.yaml");
GPUSEL_BINARY_BENCHMARK(recsys_serving, "recsys-serving.yaml");
GPUSEL_BINARY_BENCHMARK(resnet50_train_cpu_decode, "resnet50-train-cpu-decode.yaml");
GPUSEL_BINARY_BENCHMARK(roberta_finetune, "roberta-finetune.yaml");
GPUSEL_BINARY_BENCHMARK(sdxl_lora, "sdxl-lora.yaml");
GPUSEL_BINARY_BENCHMARK(unet3d_medical, "unet3d-medical.yaml");
GPUSEL_BINARY_BENCHMARK(vit_base_training, "vit-base-training.yaml");
GPUSEL_BINARY_BENCHMARK(yolov8_training, "yolov8-training.yaml");
GPUSEL_BINARY_BENCHMARK(chat_diurnal, "chat-diurnal.yaml");
GPUSEL_BINARY_BENCHMARK(chat_length_mix, "chat-length-mix.yaml");
GPUSEL_BINARY_BENCHMARK(deepseek_r1_disagg, "deepseek-r1-disagg.yaml");
GPUSEL_BINARY_BENCHMARK(finetune_then_serve, "finetune-then-serve.yaml");
GPUSEL_BINARY_BENCHMARK(serve_by_date, "serve-by-date.yaml");

}  // namespace

BENCHMARK_MAIN();

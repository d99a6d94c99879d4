#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "inputs/models.hpp"
#include "memory/memory.hpp"
#include "search/compiled_training.hpp"
#include "support/test_support.hpp"

// The fast path must give the figures of the full estimators: every transformer preset, random
// settings and layouts, memory and speed compared point by point.

namespace {

using namespace gpusel;

using test::catalog;
using test::efficiency;
using test::models;

template <typename T>
const T& pick(std::mt19937_64& random, const std::vector<T>& options) {
    return options[std::uniform_int_distribution<std::size_t>(0, options.size() - 1)(random)];
}

// A random training workload of `preset` exercising every field the closed forms read.
std::string random_workload(std::mt19937_64& random, const std::string& preset) {
    const std::string precision = pick(random, std::vector<std::string>{"bf16", "fp16", "fp32", "fp8", "tf32"});
    const std::string weights = pick(random, std::vector<std::string>{"", "", "fp32"});
    std::string text =
        fmt::format("format: 1\nname: t\nkind: training\nmodel: {{preset: {}}}\nprecision: {}\n", preset, precision);
    if (!weights.empty()) {
        text += "weights: " + weights + "\n";
    }
    text += fmt::format("runtime: {{framework: {}}}\n",
                        pick(random, std::vector<std::string>{"pytorch", "pytorch-1", "megatron", "llm.c"}));
    text += "training:\n";
    text +=
        fmt::format("  optimizer: {}\n", pick(random, std::vector<std::string>{"adamw", "adam", "sgd", "sgd-momentum",
                                                                               "adamw-8bit", "adafactor", "lion"}));
    text += fmt::format("  master_weights: {}\n", pick(random, std::vector<std::string>{"true", "false"}));
    text += fmt::format("  seq_len: {}\n", pick(random, std::vector<int>{128, 512, 2048, 4096}));
    text += fmt::format("  checkpointing: {}\n", pick(random, std::vector<std::string>{"none", "selective", "full"}));
    const std::string flash_attention = pick(random, std::vector<std::string>{"true", "false"});
    text += fmt::format("  flash_attention: {}\n", flash_attention);
    if (flash_attention == "true") {  // ring attention needs the fused kernels; every seq_len above splits 2·4 ways
        text += fmt::format("  context_parallel: {}\n", pick(random, std::vector<int>{1, 1, 2, 4}));
    }
    text +=
        fmt::format("  optimizer_step: {}\n", pick(random, std::vector<std::string>{"foreach", "for-loop", "fused"}));
    text += fmt::format("  zero_grad: {}\n", pick(random, std::vector<std::string>{"set-to-none", "zero"}));
    text += fmt::format("  gradient_dtype: {}\n", pick(random, std::vector<std::string>{"auto", "fp32"}));
    text += fmt::format("  loss: {}\n", pick(random, std::vector<std::string>{"standard", "chunked", "fused"}));
    text += fmt::format("  recompute_ffn_activation: {}\n", pick(random, std::vector<std::string>{"true", "false"}));
    const int global = pick(random, std::vector<int>{0, 0, 64, 1024, 3072});
    if (global > 0) {
        text += fmt::format("  global_batch: {}\n", global);
    }
    text += fmt::format("  dataset_tokens: {}\n", pick(random, std::vector<std::string>{"1B", "300B", "15T"}));
    text += "  deadline: 30d\n";
    text += fmt::format("deployment: {{interconnect: {}}}\n",
                        pick(random, std::vector<std::string>{"auto", "infiniband", "ethernet", "pcie", "nvlink"}));
    text += fmt::format("constraints: {{gpus_per_node: {}}}\n", pick(random, std::vector<int>{8, 4, 72}));
    return text;
}

bool close(double fast, double reference) {
    return std::fabs(fast - reference) <= 1e-9 * std::max(std::fabs(reference), 1e-30);
}

}  // namespace

TEST_CASE("compiled training: same memory and speed as the full estimators", "[compiled_training]") {
    const std::vector<std::string> gpus = {"H100-SXM5", "A100-40GB-PCIE", "RTX-4090",       "MI300X",
                                           "GAUDI3",    "GB200",          "V100-SXM2-16GB", "L4"};
    std::mt19937_64 random(20261130);
    const LoadContext context{&catalog(), &models()};
    std::size_t compared = 0;
    for (const ModelSpec& model : models().models()) {
        if (!model.is_transformer()) {
            continue;
        }
        for (int round = 0; round < 12; ++round) {
            const std::string text = random_workload(random, model.name);
            const Workload workload = load_workload_text(text, "random.yaml", context);
            const GpuSpec& gpu = *catalog().find(pick(random, gpus));
            const std::optional<CompiledTraining> compiled = CompiledTraining::compile(workload, gpu, efficiency());
            if (!compiled) {
                // Only the per-sample-activation transformers and the image models whose input
                // pipeline is assumed (ViT) are outside the fast path.
                CHECK((model.activation_bytes_per_sample > 0 || workload.assumes_image_pipeline()));
                continue;
            }
            for (int point = 0; point < 6; ++point) {
                const int tp = pick(random, std::vector<int>{1, 2, 4, 8});
                std::vector<int> stages;
                for (int p = 1; p <= std::min(model.layers, 16); ++p) {
                    if (model.layers % p == 0) {
                        stages.push_back(p);
                    }
                }
                const int pp = pick(random, stages);
                const int dp = pick(random, std::vector<int>{1, 2, 3, 8, 64, 1024});
                const int micro_batch = pick(random, std::vector<int>{1, 2, 3, 8});
                const Sharding sharding = pick(
                    random, std::vector<Sharding>{Sharding::none, Sharding::zero1, Sharding::zero2, Sharding::zero3});
                Layout layout;
                layout.tensor_parallel = tp;
                layout.pipeline_parallel = pp;
                layout.data_parallel = dp;
                layout.sharding = sharding;
                if (model.is_moe()) {
                    layout.expert_parallel = std::min(dp, model.experts);
                }
                INFO(text);
                INFO(fmt::format("{} on {} {} micro-batch {}", model.name, gpu.id, describe(layout), micro_batch));
                const TrainingLayoutTerms terms = compiled->layout_terms(tp, pp, dp);
                const TrainingPointResult fast = compiled->evaluate(terms, sharding, micro_batch);

                MemoryQuery memory_query;
                memory_query.layout = layout;
                memory_query.micro_batch = micro_batch;
                const double reference_memory = memory_breakdown(workload, gpu, memory_query).total_bytes;
                CHECK(close(fast.memory_total_bytes, reference_memory));
                CHECK(close(compiled->memory_total_bytes(terms, sharding, micro_batch), reference_memory));

                PerfQuery perf_query;
                perf_query.layout = layout;
                perf_query.micro_batch = micro_batch;
                const PerfEstimate reference = estimate_perf(workload, gpu, perf_query, efficiency());
                REQUIRE(reference.training);
                CHECK(close(fast.step_time_s, reference.training->step_time_s));
                CHECK(close(fast.samples_per_s, reference.training->samples_per_s));
                CHECK(close(fast.time_to_train_s, reference.training->time_to_train_s.value_or(0)));
                CHECK(fast.meets_deadline == reference.training->meets_deadline);
                // The pruning bound is a bound wherever the search uses it (micro-batch × sequence
                // replicas divides the global batch, and dp is a multiple of context_parallel).
                const int global = workload.training.global_batch;
                const int context_parallel = workload.training.context_parallel;
                if (dp % context_parallel == 0 &&
                    (global <= 0 || global % (micro_batch * (dp / context_parallel)) == 0)) {
                    CHECK(compiled->step_time_lower_bound_s(tp, pp, dp) * micro_batch /
                              (workload.training.global_batch > 0 ? micro_batch : 1) <=
                          fast.step_time_s * (1 + 1e-12));
                }
                ++compared;
            }
        }
    }
    CHECK(compared > 1500);
}

TEST_CASE("compiled training: workloads outside the closed forms are left to the full estimators",
          "[compiled_training]") {
    const LoadContext context{&catalog(), &models()};
    const GpuSpec& gpu = *catalog().find("H100-SXM5");
    const auto compiles = [&](const std::string& text) {
        return CompiledTraining::compile(load_workload_text(text, "w.yaml", context), gpu, efficiency()).has_value();
    };
    const std::string base =
        "format: 1\nname: t\nkind: training\nmodel: {preset: llama-2-7b}\ntraining:\n  seq_len: 2048\n";
    CHECK(compiles(base));
    CHECK_FALSE(
        compiles("format: 1\nname: t\nkind: fine-tuning\nmodel: {preset: llama-2-7b}\ntraining:\n"
                 "  lora: {rank: 16, targets: [q_proj, v_proj]}\n"));
    CHECK_FALSE(compiles(base + "  offload: optimizer\n"));
    CHECK_FALSE(compiles(base + "data: {sample_bytes: 8KB}\n"));
    CHECK_FALSE(compiles(base + "calibration:\n  memory:\n    - {gpu: H100-SXM5, micro_batch: 1, peak: 60GB}\n"));
    CHECK_FALSE(compiles("format: 1\nname: t\nkind: training\nmodel: {preset: resnet-50}\n"));
    CHECK_FALSE(compiles("format: 1\nname: t\nkind: inference\nmodel: {preset: llama-2-7b}\n"));
}

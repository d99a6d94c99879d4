// explain/: the bottleneck's detail and remedy, written from a typed PerfEstimate. The estimates
// here are built by hand, so each sentence is checked against figures chosen for the test.

#include <string>

#include <catch2/catch.hpp>

#include "explain/explain.hpp"
#include "inputs/workload.hpp"
#include "perf/perf.hpp"
#include "support/test_support.hpp"

using namespace gpusel;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

namespace {

const char* const decoder_model = R"(model:
  family: decoder
  layers: 32
  hidden: 4096
  heads: 32
  ffn: 11008
  ffn_gated: true
  vocab: 32000
)";

Workload training_workload() {
    return load_workload_text(std::string("format: 1\nname: t\nkind: training\n") + decoder_model +
                                  "precision: bf16\ntraining:\n  optimizer: adamw\n  micro_batch: 2\n  seq_len: 2048\n",
                              "test.yaml", LoadContext{});
}

Workload serving_workload() {
    return load_workload_text(std::string("format: 1\nname: s\nkind: inference\n") + decoder_model +
                                  "precision: fp16\nweights: fp16\nkv_cache: fp16\ninference:\n  input_tokens: 512\n"
                                  "  output_tokens: 128\n  requests_per_s: 4\n",
                              "test.yaml", LoadContext{});
}

const GpuSpec& h100() {
    const GpuSpec* gpu = test::catalog().find("H100-SXM5");  // 80 GiB, 3350 GB/s, FP8 tensor cores
    REQUIRE(gpu != nullptr);
    return *gpu;
}

PerfEstimate training_estimate(Resource resource, Precision precision) {
    PerfEstimate estimate;
    estimate.training = TrainingPerf{};
    estimate.training->mfu = 0.45;
    estimate.training->bubble_fraction = 0.05;
    estimate.training->step_time_s = 2.0;
    estimate.precision = precision;
    estimate.bottleneck.resource = resource;
    estimate.bottleneck.phase = BottleneckPhase::step;
    return estimate;
}

}  // namespace

TEST_CASE("explain: estimate_perf returns numbers only, the prose is explain's", "[explain]") {
    const Workload training = training_workload();
    const Workload serving = serving_workload();
    for (const Workload* workload : {&training, &serving}) {
        CAPTURE(workload->name);
        PerfQuery query;
        query.layout = fitting_layout(*workload, h100(), 1, ServingStack::automatic).layout;
        PerfEstimate estimate = estimate_perf(*workload, h100(), query, test::efficiency());
        CHECK(estimate.bottleneck.detail.empty());
        CHECK(estimate.bottleneck.remedy.empty());
        fill_bottleneck_explanation(*workload, h100(), estimate);
        CHECK_FALSE(estimate.bottleneck.detail.empty());
        CHECK_FALSE(estimate.bottleneck.remedy.empty());
        const BottleneckExplanation again = explain_bottleneck(*workload, h100(), estimate);
        CHECK(again.detail == estimate.bottleneck.detail);
        CHECK(again.remedy == estimate.bottleneck.remedy);
    }
}

TEST_CASE("explain: an estimate with neither training nor inference figures says what to give", "[explain]") {
    const BottleneckExplanation text = explain_bottleneck(training_workload(), h100(), PerfEstimate{});
    CHECK(text.detail == "no speed estimate for this model");
    CHECK(text.remedy == "give flops_per_sample (forward FLOPs per sample) or the transformer fields");
}

TEST_CASE("explain: compute-bound training names the MFU, the precision and the FP8 remedy it carries", "[explain]") {
    const Workload workload = training_workload();
    const BottleneckExplanation bf16 =
        explain_bottleneck(workload, h100(), training_estimate(Resource::compute, Precision::bf16));
    CHECK(bf16.detail == "MFU 45 % of H100-SXM5's dense bf16 peak; pipeline bubble 5 %");
    CHECK_THAT(bf16.remedy, StartsWith("compute-bound, as training should be: FP8"));
    // The estimate already runs FP8: the remedy no longer offers it.
    const BottleneckExplanation fp8 =
        explain_bottleneck(workload, h100(), training_estimate(Resource::compute, Precision::fp8));
    CHECK(fp8.detail == "MFU 45 % of H100-SXM5's dense fp8 peak; pipeline bubble 5 %");
    CHECK(fp8.remedy ==
          "compute-bound, as training should be: a GPU with more tensor TFLOPS or more GPUs shorten the run");
    // A 20 % bubble is the first thing to fix.
    PerfEstimate bubbly = training_estimate(Resource::compute, Precision::bf16);
    bubbly.training->bubble_fraction = 0.2;
    CHECK_THAT(explain_bottleneck(workload, h100(), bubbly).remedy,
               StartsWith("compute-bound with a 20 % pipeline bubble"));
}

TEST_CASE("explain: a training memory overflow is told from the measured use, states or activations", "[explain]") {
    const Workload workload = training_workload();
    PerfEstimate states = training_estimate(Resource::memory_capacity, Precision::bf16);
    states.training->memory_use = TrainingMemoryUse{112e9, 4e9, 3e9, 72e9};
    const BottleneckExplanation states_text = explain_bottleneck(workload, h100(), states);
    CHECK(states_text.detail == "weights, gradients and optimizer state alone need 112 GB of 72.0 GB usable per GPU");
    CHECK(states_text.remedy ==
          "shard the optimizer state (ZeRO-1/2, FSDP), split the model further, or use more GPUs");

    PerfEstimate activations = training_estimate(Resource::memory_capacity, Precision::bf16);
    activations.training->memory_use = TrainingMemoryUse{30e9, 45.5e9, 6e9, 72e9};
    const BottleneckExplanation activations_text = explain_bottleneck(workload, h100(), activations);
    CHECK(activations_text.detail ==
          "the micro-batch's activations (45.5 GB) and the overheads (6.0 GB) do not fit beside the weights, "
          "gradients and optimizer state (30.0 GB) in 72.0 GB usable per GPU");
    CHECK_THAT(activations_text.remedy, StartsWith("recompute activations (training.checkpointing)"));
}

TEST_CASE("explain: bandwidth-bound decode shows the bytes, the step and the achieved bandwidth", "[explain]") {
    const Workload workload = serving_workload();
    PerfEstimate estimate;
    estimate.inference = InferencePerf{};
    InferencePerf& inference = *estimate.inference;
    inference.batch = 8;
    inference.max_batch_memory = 200;
    inference.decode_bytes_per_step = 16e9;
    inference.decode_memory_s = 0.008;
    inference.decode_step_s = 0.010;
    estimate.precision = Precision::fp16;
    estimate.bottleneck.resource = Resource::memory_bandwidth;
    estimate.bottleneck.phase = BottleneckPhase::decode;
    const BottleneckExplanation text = explain_bottleneck(workload, h100(), estimate);
    // 16 GB per 10 ms step = 1600 GB/s achieved against the H100's 3350 GB/s.
    CHECK(text.detail ==
          "decode reads 16.0 GB per GPU per step: 8.0 ms of the 10.0 ms step at batch 8 (1600 GB/s of 3350 GB/s "
          "end to end)");
    // 16-bit weights: int4/FP8 weights are the remedy.
    CHECK_THAT(text.remedy, StartsWith("memory-bandwidth-bound decode: int4 (AWQ) or FP8 weights"));
}

TEST_CASE("explain: a prefill-bound SLO miss speaks of TTFT and prompts, not decode", "[explain]") {
    const Workload workload = serving_workload();
    PerfEstimate estimate;
    estimate.inference = InferencePerf{};
    estimate.inference->ttft_s = 0.25;
    estimate.inference->percentile = 99;
    estimate.precision = Precision::fp16;
    estimate.bottleneck.resource = Resource::compute;
    estimate.bottleneck.phase = BottleneckPhase::prefill;
    const BottleneckExplanation text = explain_bottleneck(workload, h100(), estimate);
    CHECK(text.detail ==
          "P99 TTFT binds: each 512-token prompt takes 250 ms of tensor-core time to prefill, and prompts queue "
          "behind each other");
    CHECK_THAT(text.remedy, StartsWith("compute-bound prefill: more replicas share the prompts; FP8 GEMMs"));
    CHECK_THAT(text.detail + text.remedy, !Contains("decode"));
}

TEST_CASE("explain: a memory-capacity bound names only the savings the workload does not already use", "[explain]") {
    const auto explain_capacity = [](const std::string& weights, const std::string& kv_cache) {
        const Workload workload =
            load_workload_text(std::string("format: 1\nname: s\nkind: inference\n") + decoder_model +
                                   "precision: fp16\nweights: " + weights + "\nkv_cache: " + kv_cache +
                                   "\ninference:\n  input_tokens: 512\n  output_tokens: 128\n  requests_per_s: 4\n",
                               "test.yaml", LoadContext{});
        PerfEstimate estimate;
        estimate.inference = InferencePerf{};
        estimate.inference->batch = 64;
        estimate.inference->max_batch_memory = 40;
        estimate.inference->batch_fits = false;
        estimate.precision = Precision::fp16;
        estimate.bottleneck.resource = Resource::memory_capacity;
        estimate.bottleneck.phase = BottleneckPhase::decode;
        return explain_bottleneck(workload, h100(), estimate).remedy;
    };
    CHECK(explain_capacity("fp16", "fp16") ==
          "lower the batch, use an FP8 KV cache or int4 weights, or a GPU with "
          "more memory");
    // Already an FP8 KV cache: only the weights can still shrink.
    CHECK(explain_capacity("fp16", "fp8") == "lower the batch, use int4 weights, or a GPU with more memory");
    CHECK(explain_capacity("awq", "fp16") == "lower the batch, use an FP8 KV cache, or a GPU with more memory");
    CHECK(explain_capacity("awq", "fp8") ==
          "lower the batch, or a GPU with more memory (weights and KV cache are already as small as gpusel "
          "models them)");
}

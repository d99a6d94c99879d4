// The `perf` renderers on hand-built estimates: exact text, and the JSON number policy.

#include <catch2/catch.hpp>

#include <limits>
#include <sstream>

#include "report/perf_render.hpp"

namespace {

using gpusel::PerfResult;

// A training estimate of a model without tokens (a CNN) on one GPU.
PerfResult cnn_training() {
    PerfResult result;
    result.workload.name = "resnet";
    result.workload.kind = gpusel::WorkloadKind::training;
    result.gpu_id = "L4";
    result.count = 1;
    gpusel::TrainingPerf training;
    training.step_time_s = 0.25;
    training.samples_per_s = 256;
    training.mfu = 0.4;
    training.micro_batch = 64;
    training.gradient_accumulation = 1;
    training.global_batch = 64;
    result.estimate.training = training;
    result.estimate.precision = gpusel::Precision::fp16;  // the header names the estimate's, not a default
    result.estimate.bottleneck = {gpusel::Resource::compute, gpusel::BottleneckPhase::step, 0.7, 0.95, "convolutions",
                                  "use channels_last"};
    result.estimate.notes = {"an assumption"};
    return result;
}

std::string table(const PerfResult& result, bool quiet) {
    std::ostringstream out;
    gpusel::render_perf_table(result, out, gpusel::PerfStyle{quiet});
    return out.str();
}

}  // namespace

TEST_CASE("render::perf table: a training estimate of a model without tokens", "[render][perf]") {
    const std::string expected_head =
        "resnet on 1 × L4 (tp1 pp1 dp1, fp16), PyTorch DDP\n"
        "  step        250 ms per optimizer step: micro-batch 64 × 1 accumulation × 1 data parallel = 64 samples\n"
        "  throughput  256 samples/s, MFU 40 %\n"
        "  bottleneck  compute (70 % of the step time; GPU utilisation 95 %)\n"
        "              convolutions\n"
        "  remedy      use channels_last\n";
    CHECK(table(cnn_training(), true) == expected_head);
    CHECK(table(cnn_training(), false) == expected_head + "  notes\n    - an assumption\n");
}

TEST_CASE("render::perf table names every parallel dimension of the layout", "[render][perf]") {
    PerfResult result = cnn_training();
    result.estimate.layout.expert_parallel = 4;
    CHECK_THAT(table(result, true),
               Catch::Matchers::StartsWith("resnet on 1 × L4 (tp1 pp1 dp1 ep4, fp16), PyTorch DDP\n"));
}

TEST_CASE("render::perf json: null with a note for a value not computed and for tokens of a CNN",
          "[render][perf][json]") {
    PerfResult result = cnn_training();
    result.estimate.training->mfu = std::numeric_limits<double>::quiet_NaN();
    std::ostringstream out;
    gpusel::render_perf_json(result, out);
    const std::string json = out.str();
    CHECK_THAT(json, Catch::Matchers::Contains("\"mfu\": null,"));
    CHECK_THAT(json, Catch::Matchers::Contains("\"tokens_per_s\": null,"));
    CHECK_THAT(json, Catch::Matchers::Contains("\"step_time_s\": 0.25,"));
    CHECK_THAT(json, Catch::Matchers::Contains(
                         "\"notes\": [\n"
                         "        \"an assumption\",\n"
                         "        \"training.tokens_per_s is null: the model has no tokens; see samples_per_s\",\n"
                         "        \"training.mfu: the computed value is not a finite number (nan); written as null\"\n"
                         "      ]"));
}

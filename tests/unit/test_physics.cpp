// Physics guards (docs/perf-model.md, "Physics guards"): over a generated grid of serving models
// (dense, GQA, MoE, MLA: every decoder preset and the DeepSeek-V3 / Qwen3-30B-A3B Hugging Face
// fixtures) × every catalog GPU that holds them × tensor parallel 1/2/4/8 (MoE: with and without
// expert parallelism and DP attention) × batches, no estimate may move more bytes, FLOPs or link
// bytes per second than the part's peak, nor take less time than the roofline of the work it
// must do. The bounds here are computed from the model and the GPU, not from the estimate.

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <fmt/format.h>

#include "inputs/layout.hpp"
#include "inputs/workload.hpp"
#include "perf/perf.hpp"
#include "support/test_support.hpp"

namespace gpusel::test {
namespace {

// The fastest dense matrix rate the part has in any precision: no kernel beats it.
double peak_flops(const GpuSpec& gpu) {
    double peak = 0;
    for (std::size_t index = 0; index < precision_count; ++index) {
        peak = std::max(peak, gpu.dense_flops_per_s[index]);
    }
    return peak;
}

// The most one GPU can send over any of its links at once (one direction).
double peak_link(const GpuSpec& gpu) {
    return std::max(gpu.interconnect.bidirectional_bytes_per_s / 2, gpu.host_link_bytes_per_s());
}

struct GridModel {
    std::string yaml;  // the workload's model: line
    std::string name;
    bool moe = false;
};

std::vector<GridModel> grid_models() {
    std::vector<GridModel> grid;
    for (const ModelSpec& model : models().models()) {
        if (model.is_transformer() &&
            (model.family == ModelFamily::decoder || model.family == ModelFamily::moe_decoder)) {
            grid.push_back({fmt::format("{{preset: {}}}", model.name), model.name, model.is_moe()});
        }
    }
    for (const char* fixture : {"hf-config-deepseek-v3.json", "hf-config-qwen3-30b-a3b.json"}) {
        grid.push_back(
            {fmt::format("{{hf_config: {}}}", source_path(std::string("tests/data/hf/") + fixture)), fixture, true});
    }
    return grid;
}

Workload serving_workload(const GridModel& model, const std::string& weights, int tensor_parallel,
                          const std::string& parallel_extra) {
    const std::string yaml = fmt::format(
        "format: 1\nname: physics\nkind: inference\nmodel: {}\nprecision: bf16\nweights: {}\nkv_cache: bf16\n"
        "inference: {{requests_per_s: 0.5, input_tokens: 600, output_tokens: 300, tensor_parallel: {}{}}}\n"
        "runtime: {{engine: sglang}}\n",
        model.yaml, weights, tensor_parallel, parallel_extra);
    return load_workload_text(yaml, "physics.yaml", LoadContext{&catalog(), &models()});
}

struct Violation {
    int checked = 0;
    std::vector<std::string> failures;
    void expect(bool holds, const std::string& what) {
        ++checked;
        if (!holds && failures.size() < 20) {
            failures.push_back(what);
        }
    }
};

// A relative slack for rounding only: the bounds are exact inequalities of the model.
constexpr double slack = 1 + 1e-9;

void check_estimate(const Workload& workload, const GpuSpec& gpu, const InferencePerf& perf, const std::string& label,
                    Violation& violation) {
    const double bandwidth = gpu.memory_bandwidth_bytes_per_s;
    const double flops = peak_flops(gpu);
    const double link = peak_link(gpu);
    const int t = std::max(1, workload.inference.tensor_parallel);
    // Achieved rates of the full-batch decode step and of the full-batch prefill.
    violation.expect(perf.decode_bytes_per_step / perf.decode_step_s <= bandwidth * slack,
                     fmt::format("{}: decode {:.0f} GB/s of {:.0f}", label,
                                 perf.decode_bytes_per_step / perf.decode_step_s / 1e9, bandwidth / 1e9));
    violation.expect(perf.decode_flops_per_step / perf.decode_step_s <= flops * slack,
                     fmt::format("{}: decode {:.0f} TFLOP/s of {:.0f}", label,
                                 perf.decode_flops_per_step / perf.decode_step_s / 1e12, flops / 1e12));
    violation.expect(perf.batch_prefill_bytes / perf.batch_prefill_s <= bandwidth * slack,
                     fmt::format("{}: prefill {:.0f} GB/s of {:.0f}", label,
                                 perf.batch_prefill_bytes / perf.batch_prefill_s / 1e9, bandwidth / 1e9));
    violation.expect(perf.batch_prefill_flops / perf.batch_prefill_s <= flops * slack,
                     fmt::format("{}: prefill {:.0f} TFLOP/s of {:.0f}", label,
                                 perf.batch_prefill_flops / perf.batch_prefill_s / 1e12, flops / 1e12));
    if (perf.decode_link_bytes_per_step > 0) {
        violation.expect(perf.decode_link_bytes_per_step / perf.decode_communication_s <= link * slack,
                         fmt::format("{}: decode link {:.0f} GB/s of {:.0f}", label,
                                     perf.decode_link_bytes_per_step / perf.decode_communication_s / 1e9, link / 1e9));
        violation.expect(
            perf.batch_prefill_link_bytes / perf.batch_prefill_communication_s <= link * slack,
            fmt::format("{}: prefill link {:.0f} GB/s of {:.0f}", label,
                        perf.batch_prefill_link_bytes / perf.batch_prefill_communication_s / 1e9, link / 1e9));
    }
    // Roofline floors from the model alone: every active matmul weight is read once per step
    // (spread at best evenly over the t GPUs), every token's KV cache once per step, and every
    // token costs 2 FLOPs per active matmul parameter.
    const double weights = weight_bytes(workload) / t;
    const double context = workload.inference.input_tokens + workload.inference.output_tokens / 2.0;
    const double kv = perf.batch * context * kv_bytes_per_token(workload) / t;
    const double matmul = matmul_params(workload.model);
    violation.expect(perf.decode_step_s * slack >= (weights + kv) / bandwidth,
                     fmt::format("{}: decode step {:.3g} s below the bandwidth bound {:.3g} s", label,
                                 perf.decode_step_s, (weights + kv) / bandwidth));
    violation.expect(perf.decode_step_s * slack >= 2 * perf.batch * matmul / t / flops,
                     fmt::format("{}: decode step {:.3g} s below the FLOP bound", label, perf.decode_step_s));
    const double prompt = workload.inference.input_tokens;
    violation.expect(perf.ttft_s * slack >= std::max(2 * prompt * matmul / t / flops, weights / bandwidth),
                     fmt::format("{}: TTFT {:.3g} s below the prefill roofline {:.3g} s", label, perf.ttft_s,
                                 std::max(2 * prompt * matmul / t / flops, weights / bandwidth)));
    violation.expect(perf.batch_prefill_s * slack >= 2 * perf.batch * prompt * matmul / t / flops,
                     fmt::format("{}: batch prefill {:.3g} s below the FLOP bound", label, perf.batch_prefill_s));
}

TEST_CASE("physics: no serving estimate beats the part's peaks or its roofline", "[physics]") {
    const std::vector<GridModel> grid = grid_models();
    REQUIRE(grid.size() >= 20);
    Violation violation;
    int estimates = 0;
    int moe_estimates = 0;
    int expert_parallel_estimates = 0;
    for (const GridModel& model : grid) {
        for (const GpuSpec& gpu : catalog().gpus()) {
            const std::string weights = gpu.supports(Precision::fp8) && model.moe ? "fp8" : "bf16";
            for (const int tensor_parallel : {1, 2, 4, 8}) {
                std::vector<std::string> extras = {""};
                if (model.moe && tensor_parallel > 1) {
                    extras.push_back(fmt::format(", expert_parallel: {}", tensor_parallel));
                    extras.push_back(fmt::format(", expert_parallel: {}, dp_attention: true", tensor_parallel));
                }
                for (const std::string& extra : extras) {
                    const Workload workload = serving_workload(model, weights, tensor_parallel, extra);
                    Layout layout;
                    layout.tensor_parallel = tensor_parallel;
                    if (inference_batch_capacity(workload, gpu, layout) <= 0) {
                        continue;  // the GPU does not hold the model at this count
                    }
                    for (const int batch : {1, 32, 256}) {
                        PerfQuery query;
                        query.layout = layout;
                        query.batch = batch;
                        query.search_capacity = false;
                        const PerfEstimate estimate = estimate_perf(workload, gpu, query, efficiency());
                        REQUIRE(estimate.inference.has_value());
                        const std::string label =
                            fmt::format("{} on {} tp{}{} batch {}", model.name, gpu.id, tensor_parallel, extra, batch);
                        check_estimate(workload, gpu, *estimate.inference, label, violation);
                        ++estimates;
                        moe_estimates += model.moe ? 1 : 0;
                        expert_parallel_estimates += extra.empty() ? 0 : 1;
                    }
                }
            }
        }
    }
    INFO(fmt::format("{} estimates, {} checks", estimates, violation.checked));
    for (const std::string& failure : violation.failures) {
        UNSCOPED_INFO(failure);
    }
    CHECK(violation.failures.empty());
    // The grid reaches every kind it claims to: MLA and MoE on GPUs that hold them, with and
    // without expert parallelism.
    CHECK(estimates > 1000);
    CHECK(moe_estimates > 100);
    CHECK(expert_parallel_estimates > 50);
}

}  // namespace
}  // namespace gpusel::test

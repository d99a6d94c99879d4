// Performance model: building blocks and phase times against hand-computed values.

#include <algorithm>
#include <cmath>
#include <string>

#include <catch2/catch.hpp>

#include <fmt/format.h>

#include "base/error.hpp"
#include "explain/explain.hpp"
#include "inputs/workload.hpp"
#include "perf/internal.hpp"
#include "perf/perf.hpp"
#include "support/test_support.hpp"

using namespace gpusel;
using Catch::Matchers::Contains;
using Catch::Matchers::WithinRel;

namespace {

// An A100-80GB-SXM4-like part with round, stated numbers.
GpuSpec test_gpu() {
    GpuSpec gpu;
    gpu.id = "TEST-A100";
    gpu.vendor = "nvidia";
    gpu.architecture = "ampere";
    gpu.segment = Segment::datacenter;
    gpu.form_factor = FormFactor::sxm;
    gpu.memory_bytes = 80e9;
    gpu.memory_type = "HBM2e";
    gpu.memory_bandwidth_bytes_per_s = 2039e9;
    gpu.dense_flops_per_s[static_cast<std::size_t>(Precision::fp32)] = 19.5e12;
    gpu.dense_flops_per_s[static_cast<std::size_t>(Precision::fp16)] = 312e12;
    gpu.dense_flops_per_s[static_cast<std::size_t>(Precision::bf16)] = 312e12;
    gpu.host_link_generation = 4;
    gpu.host_link_lanes = 16;
    gpu.interconnect = GpuInterconnect{"nvlink3", 600e9, 8};
    return gpu;
}

EfficiencyTable test_efficiency() {
    EfficiencyTable table;
    table.defaults.decode_bandwidth = 0.84;
    table.defaults.overhead_per_layer_s = 67e-6;
    table.defaults.prefill_compute = 0.73;
    table.defaults.training_compute = 0.5;
    table.defaults.request_floor_s = 0;
    table.platform.storage_bytes_per_s = {{Storage::nvme, 3.5e9}, {Storage::hdd, 0.2e9}};
    return table;
}

const std::string llama2_7b_model = R"(model:
  family: decoder
  params: 6.74B
  layers: 32
  hidden: 4096
  heads: 32
  kv_heads: 32
  ffn: 11008
  ffn_gated: true
  vocab: 32000
)";

Workload inference_workload(int input_tokens, int output_tokens, double requests_per_s, const std::string& extra = "") {
    const std::string text =
        "format: 1\nname: t\nkind: inference\n" + llama2_7b_model +
        "precision: fp16\nweights: fp16\nkv_cache: fp16\ninference:\n  input_tokens: " + std::to_string(input_tokens) +
        "\n  output_tokens: " + std::to_string(output_tokens) +
        "\n  batch: 1\n  requests_per_s: " + std::to_string(requests_per_s) + "\n" + extra;
    return load_workload_text(text, "test.yaml", LoadContext{});
}

PerfEstimate run(const Workload& workload, const GpuSpec& gpu, const EfficiencyTable& table, int count = 1) {
    PerfQuery query;
    query.layout = fitting_layout(workload, gpu, count, ServingStack::automatic).layout;
    return estimate_perf(workload, gpu, query, table);
}

}  // namespace

TEST_CASE("perf::ring all-reduce and all-gather follow 2(n-1)/n and (n-1)/n", "[perf]") {
    // 1 GB over 8 GPUs at 100 GB/s: 2·7/8·0.01 s.
    CHECK_THAT(ring_all_reduce_s(1e9, 8, 100e9), WithinRel(0.0175, 1e-12));
    // Plus 2(n−1) latency steps of 10 µs.
    CHECK_THAT(ring_all_reduce_s(1e9, 8, 100e9, 10e-6), WithinRel(0.0175 + 14 * 10e-6, 1e-12));
    CHECK_THAT(ring_all_gather_s(1e9, 4, 50e9), WithinRel(0.015, 1e-12));
    CHECK(ring_all_reduce_s(1e9, 1, 100e9) == 0);
    CHECK(ring_all_gather_s(0, 8, 100e9) == 0);
}

TEST_CASE("perf::collectives: bus bandwidth, floor and per-step latency", "[perf]") {
    // The measured anchors: 8 H100 over NVLink4 (450 GB/s unidirectional × 1.6), 16.8 MB in 74 µs
    // and 67 MB in 196 µs (VIDUR h100_dgx/all_reduce.csv).
    const CollectiveLink h100{450e9 * 1.6, 37e-6, 0};
    const double bytes = 33554432.0 * 2;
    CHECK_THAT(all_reduce_s(bytes, 8, h100), WithinRel(2.0 * 7 / 8 * bytes / (450e9 * 1.6) + 37e-6, 1e-12));
    CHECK(all_reduce_s(bytes, 8, h100) == Approx(196e-6).epsilon(0.05));
    CHECK(all_reduce_s(bytes / 4, 8, h100) == Approx(74e-6).epsilon(0.06));
    // The floor: a third of it at 2 ranks, whole from 4 on.
    CHECK_THAT(all_reduce_s(1, 2, h100), WithinRel(2.0 / 2 / (450e9 * 1.6) + 37e-6 / 3, 1e-12));
    CHECK_THAT(all_gather_s(1e9, 4, CollectiveLink{50e9, 0, 10e-6}), WithinRel(0.015 + 3 * 10e-6, 1e-12));
    CHECK(all_reduce_s(1e9, 1, h100) == 0);
    CHECK(all_gather_s(0, 8, h100) == 0);
    // All-to-all: every rank sends its bytes at once, one step: 1 MB at 450 GB/s + the floor
    // (a third of it at 2 ranks, whole from 4 on) + one step latency.
    const CollectiveLink nvlink{450e9, 37e-6, 2e-6};
    CHECK_THAT(all_to_all_s(1e6, 8, nvlink), WithinRel(1e6 / 450e9 + 37e-6 + 2e-6, 1e-12));
    CHECK_THAT(all_to_all_s(1e6, 2, nvlink), WithinRel(1e6 / 450e9 + 37e-6 / 3 + 2e-6, 1e-12));
    CHECK(all_to_all_s(1e6, 1, nvlink) == 0);
    // Network tiers: a node's ranks share the node's NICs, one ring each.
    LinkTier network{"infiniband", 40e9, 25e-6, false, true};
    CHECK(spread_over_nics(CollectiveLink{40e9, 0, 25e-6}, network, 4).bus_bytes_per_s == 160e9);
    network.network = false;
    CHECK(spread_over_nics(CollectiveLink{40e9, 0, 25e-6}, network, 4).bus_bytes_per_s == 40e9);
}

TEST_CASE("perf::GEMM efficiency by shape: plateau, half size scaling with peak, floor", "[perf]") {
    // F = 2·512·4096·2752 = 11.5 GFLOP: on a 989 TF part with an 8 µs half time the GEMM reaches
    // 0.75 · F / (F + 7.9 GFLOP); on a 312 TF part (F_half 2.5 GFLOP) much nearer the plateau.
    const double fast = gemm_efficiency_for_shape(512, 2752, 4096, 989e12, 0.75, 8e-6);
    const double slow = gemm_efficiency_for_shape(512, 2752, 4096, 312e12, 0.75, 8e-6);
    CHECK(fast == Approx(0.75 * 11.54e9 / (11.54e9 + 7.91e9)).epsilon(0.01));
    CHECK(slow > fast);
    CHECK(gemm_efficiency_for_shape(65536, 65536, 65536, 989e12, 0.75, 8e-6) == Approx(0.75).epsilon(1e-4));
    CHECK(gemm_efficiency_for_shape(0, 10, 10, 989e12, 0.75, 8e-6) == 0);
    TrainingGemmRates rates;
    rates.peak_flops_per_s = 989e12;
    rates.plateau = 0.75;
    rates.half_time_s = 8e-6;
    rates.bytes_per_s = 3.35e12 * 0.84;
    rates.element_bytes = 2;
    rates.floor_s = 4e-6;
    // The VIDUR H100 TP8 up/gate GEMM at 512 tokens measures 27 µs.
    CHECK(training_gemm_time_s(512, 2752, 4096, rates) == Approx(27e-6).epsilon(0.1));
    CHECK_THAT(training_gemm_time_s(512, 2752, 4096, rates),
               WithinRel(2.0 * 512 * 2752 * 4096 / (989e12 * fast), 1e-12));
    // A tiny GEMM costs the fixed half_time / plateau; a skinny one its operands' bytes.
    CHECK(training_gemm_time_s(1, 1, 1, rates) == Approx(8e-6 / 0.75).epsilon(1e-6));
    CHECK(training_gemm_time_s(1, 65536, 65536, rates) == Approx((65536.0 * 65536 + 2 * 65536) * 2 / (3.35e12 * 0.84)));
}

TEST_CASE("perf::pipeline bubble is (p-1)/(m+p-1)", "[perf]") {
    CHECK_THAT(pipeline_bubble_fraction(4, 12), WithinRel(3.0 / 15.0, 1e-12));
    CHECK_THAT(pipeline_bubble_fraction(64, 512), WithinRel(63.0 / 575.0, 1e-12));
    CHECK(pipeline_bubble_fraction(1, 8) == 0);
    // Interleaved: (p − 1)/v slots of bubble.
    CHECK_THAT(pipeline_bubble_fraction(8, 16, 4), WithinRel(1.75 / 17.75, 1e-12));
}

TEST_CASE("perf::roofline and Erlang C", "[perf]") {
    CHECK(roofline_time_s(3, 4) == 5);
    CHECK(roofline_time_s(2, 0) == 2);
    // One server: the probability of waiting is the utilisation.
    CHECK_THAT(erlang_c_wait_probability(1, 0.3), WithinRel(0.3, 1e-12));
    // Two servers, one Erlang: B = 0.2, C = 2·0.2 / (2 − 1·0.8) = 1/3.
    CHECK_THAT(erlang_c_wait_probability(2, 1.0), WithinRel(1.0 / 3.0, 1e-12));
    CHECK(erlang_c_wait_probability(4, 4.0) == 1);
    CHECK(erlang_c_wait_probability(4, 0) == 0);
}

TEST_CASE("perf::smallest_holding finds the first whole number from which a condition holds", "[perf]") {
    for (const int first : {1, 2, 3, 7, 8, 9, 100, 1000, 65537}) {
        int calls = 0;
        const auto holds = [&](int n) {
            ++calls;
            return n >= first;
        };
        INFO(first);
        CHECK(gpusel::smallest_holding(1, 1 << 20, holds) == first);
        CHECK(calls <= 2 * 18 + 2);  // doubling, then halving: logarithmic
        CHECK(gpusel::smallest_holding(first, 1 << 20, holds) == first);
    }
    // Starting above the answer: the start. Never holding by the limit: none.
    CHECK(gpusel::smallest_holding(50, 1 << 20, [](int n) { return n >= 10; }) == 50);
    CHECK_FALSE(gpusel::smallest_holding(1, 1024, [](int n) { return n > 5000; }));
}

TEST_CASE("perf::Erlang C agrees with the textbook recursion, negligible values as 0", "[perf]") {
    // The textbook form: Erlang B by B(k) = a·B(k−1) / (k + a·B(k−1)), then C = c·B / (c − a(1 − B)).
    const auto textbook = [](int servers, double load) {
        double erlang_b = 1;
        for (int k = 1; k <= servers; ++k) {
            erlang_b = load * erlang_b / (k + load * erlang_b);
        }
        return servers * erlang_b / (servers - load * (1 - erlang_b));
    };
    int compared = 0;
    int negligible = 0;
    // From 12,800 servers on, large loads start the recursion near the load (issue 38).
    for (const int servers : {1, 2, 3, 8, 64, 256, 1024, 12800, 100000, 1 << 20}) {
        for (const double share : {1e-4, 0.01, 0.2, 0.5, 0.8, 0.95, 0.999, 0.99999}) {
            const double load = servers * share;
            const double expected = textbook(servers, load);
            const double got = erlang_c_wait_probability(servers, load);
            INFO(servers << " servers, load " << load << ": textbook " << expected << ", got " << got);
            if (got == 0) {
                CHECK(expected < 1e-30);
                ++negligible;
            } else {
                CHECK_THAT(got, WithinRel(expected, 1e-11));
                ++compared;
            }
        }
    }
    CHECK(compared >= 30);
    CHECK(negligible >= 10);
}

TEST_CASE("perf::a GEMM's time is the cube norm of its compute and memory times", "[perf]") {
    GemmRates rates;
    rates.peak_flops_per_s = 989e12;
    rates.bandwidth_bytes_per_s = 3.35e12;
    rates.kernel_floor_s = 4e-6;
    // From a weight stream far above the compute time to the reverse, through the ridge point.
    for (const double rows : {1.0, 8.0, 64.0, 128.0, 256.0, 1024.0, 8192.0, 65536.0}) {
        const double weight_bytes = 2.0 * 8192 * 8192;
        const GemmTime time = gemm_timing(rows, 8192, 8192, weight_bytes, rates);
        const double memory_s = weight_bytes / rates.bandwidth_bytes_per_s + rates.kernel_floor_s;
        const double expected = std::cbrt(std::pow(time.compute_s, 3) + std::pow(memory_s, 3));
        INFO(rows << " rows");
        CHECK_THAT(time.time_s, WithinRel(expected, 2e-15));
        CHECK(time.time_s >= std::max(time.compute_s, memory_s));
        CHECK(time.time_s <= 1.26 * std::max(time.compute_s, memory_s));
    }
}

namespace {
// The definition smallest_fixed_point must agree with: plain iteration from below, as the
// serving queue solved it before (stop at a 1e-9 relative step; above `limit`: none).
std::optional<double> plain_fixed_point(const std::function<double(double)>& map, double from, double limit) {
    double x = from;
    for (int iteration = 0; iteration < 100000; ++iteration) {
        const double next = map(x);
        if (next > limit) {
            return std::nullopt;
        }
        if (std::abs(next - x) <= 1e-9 * std::max(1.0, next)) {
            return next;
        }
        x = next;
    }
    return x;
}
}  // namespace

TEST_CASE("perf::smallest fixed point: the plain iteration's point in a few evaluations", "[perf]") {
    int evaluations = 0;
    // Linear, slope 0.98 (a queue near capacity): x* = 2 / 0.02 = 100 exactly.
    const std::function<double(double)> linear = [&evaluations](double x) {
        ++evaluations;
        return 2 + 0.98 * x;
    };
    const std::optional<double> solved = smallest_fixed_point(linear, 0, 1000);
    REQUIRE(solved);
    CHECK_THAT(*solved, WithinRel(100.0, 1e-12));
    CHECK(evaluations <= 6);
    evaluations = 0;
    REQUIRE(plain_fixed_point(linear, 0, 1000));
    CHECK(evaluations > 800);  // what the plain iteration costs there: 2 · 0.98^k <= 1e-9 · 100 at k = 834
    CHECK_FALSE(smallest_fixed_point(linear, 0, 99));  // x* above the limit

    // Shaped like a decode step: weights streamed (flat) until the GEMMs turn compute-bound, in
    // the cube norm, at loads up to just below instability; each load from the previous one's point.
    for (const double load : {0.05, 0.5, 2.0, 5.0, 8.0, 9.0, 9.5}) {
        const std::function<double(double)> queue = [load](double n) {
            const double compute_s = 1e-4 * n;
            const double memory_s = 0.02 + 5e-5 * n;
            return load * std::cbrt(compute_s * compute_s * compute_s + memory_s * memory_s * memory_s) / 0.002;
        };
        const std::optional<double> expected = plain_fixed_point(queue, 0, 4096);
        const std::optional<double> got = smallest_fixed_point(queue, 0, 4096);
        INFO("load " << load);
        REQUIRE(expected.has_value() == got.has_value());
        if (expected) {
            CHECK_THAT(*got, WithinRel(*expected, 2e-8));  // both within 1e-9 of x*, times 1/(1 − slope)
        }
    }

    // Two crossings, 0.5 + 0.2x + 0.01x² = x at 0.630 (stable) and 79.4 (unstable): the first.
    const std::function<double(double)> convex = [](double x) { return 0.5 + 0.2 * x + 0.01 * x * x; };
    REQUIRE(smallest_fixed_point(convex, 0, 1000));
    CHECK_THAT(*smallest_fixed_point(convex, 0, 1000), WithinRel((0.8 - std::sqrt(0.62)) / 0.02, 1e-8));
    // 4 + 0.9x + 0.0005x² crosses at 55.3 (stable) and 144.7: below a limit of 100 or 60, 55.3; a
    // limit of 50 is below it.
    const std::function<double(double)> steep = [](double x) { return 4 + 0.9 * x + 0.0005 * x * x; };
    const double stable = (0.1 - std::sqrt(0.002)) / 0.001;
    CHECK_THAT(*smallest_fixed_point(steep, 0, 100), WithinRel(stable, 1e-8));
    CHECK_THAT(*smallest_fixed_point(steep, 0, 60), WithinRel(stable, 1e-8));
    CHECK_FALSE(smallest_fixed_point(steep, 0, 50));
    // Not convex: slope 0.99 at first (the extrapolation aims at 100), then 0.1 (the stable crossing,
    // 6.06), then 5 from 30 on (unstable crossing at 35.4). The estimate lands past both; with the
    // limit at 200 it is left behind, with 50 the estimate is clipped there, and map(50) > 50: the
    // plain iteration decides, 6.06 both times.
    const std::function<double(double)> kinked = [](double x) {
        if (x <= 5) {
            return 1 + 0.99 * x;
        }
        return x <= 30 ? 5.95 + 0.1 * (x - 5) : 8.45 + 5 * (x - 30);
    };
    for (const double limit : {200.0, 50.0}) {
        INFO("limit " << limit);
        REQUIRE(smallest_fixed_point(kinked, 0, limit));
        CHECK_THAT(*smallest_fixed_point(kinked, 0, limit), WithinRel(5.45 / 0.9, 1e-8));
    }
    // No crossing at all (10 + 0.9x + 0.0005x² > x everywhere): unstable, however high the limit.
    CHECK_FALSE(smallest_fixed_point([](double x) { return 10 + 0.9 * x + 0.0005 * x * x; }, 0, 1e6));
    // Starting on the fixed point.
    CHECK(*smallest_fixed_point([](double x) { return 0.5 * x + 1; }, 2, 10) == 2);
}

TEST_CASE("perf::link tiers: NVLink inside a domain, PCIe otherwise, network across nodes", "[perf]") {
    const GpuSpec gpu = test_gpu();
    const Workload workload = inference_workload(1, 1, 1);
    EfficiencyFactors factors;
    factors.interconnect = 0.75;
    factors.host_link = 0.78;
    factors.network = 0.8;
    PlatformFactors platform;
    platform.infiniband_bytes_per_s_per_gpu = 50e9;
    // 600 GB/s bidirectional = 300 GB/s one way, × 0.75.
    CHECK_THAT(link_for_group(workload, gpu, 8, factors, platform).bytes_per_s, WithinRel(225e9, 1e-12));
    // 16 GPUs span two nodes of 8: InfiniBand NDR 50 GB/s × 0.8 for an SXM part.
    const LinkTier network = link_for_group(workload, gpu, 16, factors, platform);
    CHECK(network.name == "infiniband");
    CHECK_THAT(network.bytes_per_s, WithinRel(40e9, 1e-12));
    GpuSpec pcie_only = gpu;
    pcie_only.interconnect = GpuInterconnect{};
    // PCIe 4.0 x16: 0.985 GB/s × 2 per lane × 16 lanes × 0.78.
    CHECK_THAT(link_for_group(workload, pcie_only, 2, factors, platform).bytes_per_s,
               WithinRel(0.985e9 * 2 * 16 * 0.78, 1e-12));
}

TEST_CASE("perf::batch-1 decode of a 7B FP16 model is the weight stream plus kernel and step floors", "[perf]") {
    const GpuSpec gpu = test_gpu();
    const EfficiencyTable table = test_efficiency();
    const Workload workload = inference_workload(1, 128, 0.001);
    const PerfEstimate estimate = run(workload, gpu, table);
    REQUIRE(estimate.inference);
    // Matmul weights: 6.74e9 − 32000·4096 (input embedding) = 6.608928e9 params × 2 B.
    CHECK_THAT(weight_bytes(workload), WithinRel(13.217856e9, 1e-12));
    CHECK_THAT(kv_bytes_per_token(workload), WithinRel(524288.0, 1e-12));  // 2·32·32·128·2
    // Per operator: the weights and 65 tokens of KV over 2039e9 × 0.84 = 7.737 ms; per layer 4 GEMMs,
    // one attention and 6 element-wise kernels of 5 µs (32 × 11 × 5 µs = 1.76 ms), the logits GEMM's
    // floor, 32 × 67 µs per-layer overhead = 2.144 ms and the 1 ms step floor: 12.646 ms, plus the
    // few kB of activations the element-wise kernels move and the cube-norm's share of compute.
    const EfficiencyFactors& f = table.defaults;
    const double stream = (13.217856e9 + 65 * 524288.0) / (2039e9 * f.decode_bandwidth);
    const double floors = 32 * 11 * f.kernel_floor_s + f.kernel_floor_s + 32 * f.overhead_per_layer_s + f.step_floor_s;
    CHECK(estimate.inference->tpot_s >= stream + floors);
    CHECK(estimate.inference->tpot_s <= 1.01 * (stream + floors));
}

TEST_CASE("perf::prefill of a 2048-token prompt: GEMMs on the size-dependent curve plus flash attention", "[perf]") {
    const GpuSpec gpu = test_gpu();
    const EfficiencyTable table = test_efficiency();
    const Workload workload = inference_workload(2048, 1, 0.001);
    const PerfEstimate estimate = run(workload, gpu, table);
    REQUIRE(estimate.inference);
    // GEMMs: 2048·2·6.608928e9 FLOPs over 312e12 × 0.73 = 118.8 ms at the plateau; 2048-row GEMMs
    // (>= 25 GFLOP each) reach 0.9 of it and more (half at 7.8 µs × 312 TFLOP/s = 2.4 GFLOP). Causal attention
    // 2·32·2048²·4096 FLOPs over 312e12 × 0.5 = 7.0 ms. Element-wise kernels, floors and the
    // per-layer overhead add a few ms.
    const double gemm_s = 2048 * 2 * 6.608928e9 / (312e12 * 0.73);
    const double attention_s = 2.0 * 32 * 2048.0 * 2048 * 4096 / (312e12 * 0.5);
    CHECK(estimate.inference->ttft_s >= gemm_s + attention_s);
    CHECK(estimate.inference->ttft_s <= 1.15 * (gemm_s + attention_s));
    CHECK_THAT(estimate.inference->prefill_tokens_per_s, WithinRel(2048 / estimate.inference->ttft_s, 1e-9));
}

TEST_CASE("perf::attention without flash attention moves every score through DRAM", "[perf]") {
    const GpuSpec gpu = test_gpu();
    const EfficiencyTable flash = test_efficiency();
    EfficiencyTable materialized = test_efficiency();
    materialized.defaults.attention_score_bytes = 16;
    const double bandwidth = 2039e9 * 0.84;
    // Prefill of 2048 tokens in one pass: 32 heads score 2048 × 2048 keys in each of 32 layers, 16 B
    // per score = 68.72 GB. The attention kernel becomes memory-bound: its time goes from the flash
    // compute (2·32·2048²·4096 FLOPs over 312e12 × 0.5 = 7.05 ms) to scores plus the 33.5 MB per layer
    // KV write over the bandwidth (40.74 ms).
    const Workload prompt = inference_workload(2048, 1, 0.001);
    const double scores_bytes = 32.0 * 32 * 2048 * 2048 * 16;
    const double kv_write_bytes = 2048.0 * 524288;
    const double flash_attention_s = 2.0 * 32 * 2048.0 * 2048 * 4096 / (312e12 * 0.5);
    const double prefill_added_s = (scores_bytes + kv_write_bytes) / bandwidth - flash_attention_s;
    CHECK_THAT(run(prompt, gpu, materialized).inference->ttft_s - run(prompt, gpu, flash).inference->ttft_s,
               WithinRel(prefill_added_s, 1e-6));
    // Decode at batch 1 is memory-bound with or without them: each step adds 32 layers × 32 heads ×
    // the mean context (1 prompt token + 128 / 2 output tokens = 65) × 16 B.
    const Workload chat = inference_workload(1, 128, 0.001);
    const double decode_added_s = 32.0 * 32 * 65 * 16 / bandwidth;
    CHECK_THAT(run(chat, gpu, materialized).inference->tpot_s - run(chat, gpu, flash).inference->tpot_s,
               WithinRel(decode_added_s, 1e-6));
}

TEST_CASE("perf::GEMM curve: plateau, a half point that grows with the peak, weight stream and floor", "[perf]") {
    // docs/reference/perf_modelling.md §1.2: Llama-2-7B TP8 up/gate (K 4096, N 2752), 512 tokens:
    // 0.43 of peak on H100, 0.65 on A100, 0.64 on A40 (plateau ~0.72).
    GemmRates h100{989e12, 0.72, 7.8e-6, 3350e9 * 0.86, 6e-6};
    GemmRates a100{312e12, 0.72, 7.8e-6, 2039e9 * 0.86, 6e-6};
    GemmRates a40{149.7e12, 0.72, 7.8e-6, 696e9 * 0.86, 6e-6};
    CHECK_THAT(gemm_efficiency(512, 2752, 4096, h100), WithinRel(0.43, 0.1));
    CHECK_THAT(gemm_efficiency(512, 2752, 4096, a100), WithinRel(0.65, 0.1));
    CHECK_THAT(gemm_efficiency(512, 2752, 4096, a40), WithinRel(0.64, 0.1));
    CHECK(gemm_efficiency(1e6, 1e5, 1e4, h100) > 0.71);
    // Skinny GEMMs stream the weight plus the floor: 22.5 MB at 8 tokens, 14 / 21 / 44 µs measured.
    const double weight = 4096.0 * 2752 * 2;
    CHECK_THAT(gemm_time_s(8, 2752, 4096, weight, h100), WithinRel(14e-6, 0.1));
    CHECK_THAT(gemm_time_s(8, 2752, 4096, weight, a100), WithinRel(21e-6, 0.15));
    CHECK_THAT(gemm_time_s(8, 2752, 4096, weight, a40), WithinRel(44e-6, 0.1));
    // Large GEMMs are compute-bound: 7B up/gate TP1 (N 22016) at 4096 tokens, 999 µs on H100.
    CHECK_THAT(gemm_time_s(4096, 22016, 4096, 4096.0 * 22016 * 2, h100), WithinRel(999e-6, 0.1));
    CHECK(gemm_time_s(0, 10, 10, 100, h100) == 0);
    // gemm_timing: the same time, and its compute part (F / (peak · efficiency)).
    const GemmTime skinny = gemm_timing(8, 2752, 4096, weight, h100);
    CHECK(skinny.time_s == gemm_time_s(8, 2752, 4096, weight, h100));
    CHECK(skinny.compute_s == 2.0 * 8 * 2752 * 4096 / (989e12 * gemm_efficiency(8, 2752, 4096, h100)));
    CHECK(skinny.compute_s < skinny.time_s / 5);  // weight-bound: 2.4 µs of compute in 14 µs
    const GemmTime large = gemm_timing(4096, 22016, 4096, 4096.0 * 22016 * 2, h100);
    CHECK_THAT(large.compute_s, WithinRel(large.time_s, 0.01));  // compute-bound: the cube norm is the max
}

TEST_CASE("perf::serving under load: light load adds nothing, overload has no P99", "[perf]") {
    const GpuSpec gpu = test_gpu();
    const EfficiencyTable table = test_efficiency();
    const PerfEstimate light = run(inference_workload(512, 128, 1e-6), gpu, table);
    REQUIRE(light.inference);
    REQUIRE(light.inference->p99_ttft_s);
    // Nothing queues: P99 TTFT = prefill + the decode step in flight; P99 TPOT = one step.
    CHECK_THAT(*light.inference->p99_ttft_s, WithinRel(light.inference->ttft_s + light.inference->tpot_s, 1e-3));
    CHECK_THAT(*light.inference->p99_tpot_s, WithinRel(light.inference->tpot_s, 1e-3));
    CHECK(light.inference->meets_slo);

    const PerfEstimate overloaded = run(inference_workload(512, 128, 1000), gpu, table);
    REQUIRE(overloaded.inference);
    CHECK_FALSE(overloaded.inference->p99_ttft_s.has_value());
    CHECK_FALSE(overloaded.inference->p99_e2e_s.has_value());
    CHECK_FALSE(overloaded.inference->meets_slo);
}

TEST_CASE("perf::the SLO capacity is where the SLO stops holding, and a threshold query decides it alike", "[perf]") {
    // max_load_meeting's bracket is ITP on the SLO margin, 1e-9 of the capacity wide: a load a
    // millionth below the capacity meets the SLO, a millionth above does not, for every target
    // that binds (TTFT's queue, TPOT's batch, e2e), batch and replica count.
    const GpuSpec gpu = test_gpu();
    const EfficiencyTable table = test_efficiency();
    const std::vector<std::string> targets = {"    ttft: 300ms\n    tpot: 30ms\n", "    tpot: 25ms\n",
                                              "    ttft: 150ms\n", "    e2e: 4s\n"};
    for (const std::string& target : targets) {
        for (const int batch : {4, 16}) {
            for (const int replicas : {1, 3}) {
                CAPTURE(target, batch, replicas);
                const std::string extra = "  slo:\n" + target;
                Workload workload = inference_workload(512, 128, 0.01, extra);
                workload.inference.batch = batch;
                PerfQuery query;
                query.layout = fitting_layout(workload, gpu, 1, ServingStack::automatic).layout;
                query.layout.data_parallel = replicas;
                const PerfEstimate found = estimate_perf(workload, gpu, query, table);
                REQUIRE(found.inference);
                const double capacity = found.inference->max_requests_per_s_meeting_slo;
                REQUIRE(capacity > 0);
                workload.inference.requests_per_s = capacity * (1 - 1e-6);
                CHECK(estimate_perf(workload, gpu, query, table).inference->meets_slo);
                workload.inference.requests_per_s = capacity * (1 + 1e-6);
                CHECK_FALSE(estimate_perf(workload, gpu, query, table).inference->meets_slo);
                // Asked only whether it reaches a load, the search says so on the same side.
                workload.inference.requests_per_s = 0.01;
                for (const double share : {1 - 1e-6, 1 + 1e-6}) {
                    PerfQuery asked = query;
                    asked.capacity_needed_rps = capacity * share;
                    asked.capacity_factor = 1;
                    const PerfEstimate decided = estimate_perf(workload, gpu, asked, table);
                    REQUIRE(decided.inference);
                    CHECK((decided.inference->max_requests_per_s_meeting_slo >= capacity * share) == (share < 1));
                }
            }
        }
    }
}

TEST_CASE("perf::batch auto takes the largest batch whose full step meets the TPOT target", "[perf]") {
    const GpuSpec gpu = test_gpu();
    const EfficiencyTable table = test_efficiency();
    const std::string text = "format: 1\nname: t\nkind: inference\n" + llama2_7b_model +
                             "precision: fp16\nweights: fp16\ninference:\n  input_tokens: 128\n  output_tokens: 128\n"
                             "  batch: auto\n  requests_per_s: 1\n  slo:\n    tpot: 20ms\n";
    const Workload workload = load_workload_text(text, "test.yaml", LoadContext{});
    const PerfEstimate estimate = run(workload, gpu, table);
    REQUIRE(estimate.inference);
    const int batch = estimate.inference->batch;
    REQUIRE(batch > 1);
    // One more sequence would push the full-batch step over 20 ms, unless memory stopped it first.
    PerfQuery query;
    query.layout = estimate.layout;
    query.batch = batch + 1;
    const PerfEstimate larger = estimate_perf(workload, gpu, query, table);
    CHECK((larger.inference->decode_step_s > 0.020 || batch == estimate.inference->max_batch_memory));
    CHECK(estimate.inference->decode_step_s <= 0.020);
}

TEST_CASE("perf::training step of a small transformer on one GPU", "[perf]") {
    const GpuSpec gpu = test_gpu();
    EfficiencyTable table = test_efficiency();
    table.defaults.decode_bandwidth = 0.8;
    table.defaults.gemm_half_work_s = 8e-6;  // the figures below are worked with these two
    table.defaults.kernel_floor_s = 4e-6;
    GpuSpec round = gpu;
    round.dense_flops_per_s[static_cast<std::size_t>(Precision::bf16)] = 100e12;
    round.memory_bandwidth_bytes_per_s = 1e12;
    const Workload workload = load_workload_text(R"(format: 1
name: small
kind: training
model:
  family: decoder
  layers: 2
  hidden: 1024
  heads: 8
  ffn: 4096
  vocab: 1000
  tied_embeddings: true
precision: bf16
training:
  optimizer: adamw
  micro_batch: 8
  global_batch: 8
  seq_len: 1024
  flash_attention: true
  dataset_tokens: 1B
)",
                                                 "test.yaml", LoadContext{});
    REQUIRE(workload.model.params == 26189824);  // 2·(4·1024² + 2·1024·4096) + 1000·1024
    const PerfEstimate estimate = run(workload, round, table);
    REQUIRE(estimate.training);
    // Per operator, M = 8192 tokens, each GEMM (2MNK + peak·8 µs) / (peak · 0.6): QKV (N 3072, K 1024)
    // 872.4 µs, attention output 299.7, FFN up and down 1158.7 each = 3489.3 µs per layer forward;
    // logits (N 1000) 293.0 µs. Flash attention 8192 · 4·s·h/2 FLOPs at 0.5 of peak 343.6 µs;
    // element-wise 8192 · (4h + 6h + 2·ffn) elements · 2 B at 0.8 TB/s 377.5 µs. Forward + 2×
    // backward: 2 · 3 · (3489.3 + 343.6 + 377.5) + 3 · 293.0 = 26.1412 ms. AdamW with master weights
    // moves 2·8 + 2 + 4 + 4 + 2 = 28 B per parameter: 0.9166 ms at 0.8 TB/s.
    CHECK_THAT(estimate.training->step_time_s, WithinRel(0.02705785612288, 1e-9));
    CHECK_THAT(estimate.training->tokens_per_s, WithinRel(8192 / 0.02705785612288, 1e-9));
    // MFU counts 6Ψ + 12·L·s·h per token against the dense BF16 peak.
    CHECK_THAT(estimate.training->mfu, WithinRel(0.5519434550445235, 1e-9));
    REQUIRE(estimate.training->time_to_train_s);
    CHECK_THAT(*estimate.training->time_to_train_s, WithinRel(1e9 / (8192 / 0.02705785612288), 1e-9));
    CHECK(estimate.bottleneck.resource == Resource::compute);
}

TEST_CASE("perf::context parallelism exchanges K and V in a ring behind the attention", "[perf]") {
    perf_detail::TransformerTrainingOps ops;
    ops.valid = true;
    ops.layers = 2;
    ops.context_parallel = 2;
    ops.sequence_tokens = 512;  // a 1024-token sequence over 2 GPUs
    ops.kv_width = 1024;        // 8 KV heads of 128
    ops.activation_bytes = 2;
    ops.attention_flops_per_token = 4.0 * 1024 * 1024 * 0.5;  // causal flash attention over 1024 tokens
    ops.attention_flops_per_s = 50e12;
    ops.floor_s = 4e-6;
    // A ring step sends K and V of 512 tokens: 2 · 512 · 1024 · 2 B = 2,097,152 B, at 10 GB/s + 10 µs
    // = 219.7152 µs, against half the attention of the chunk: 512 · 2,097,152 FLOP / 50 TFLOP/s / 2
    // = 10.737418 µs. Exposed 208.977782 µs per step, 1 step (cp − 1), forward + 2× backward, 2 layers.
    CHECK_THAT(perf_detail::context_parallel_exchange_s(ops, 1, 1, 1, 10e9, 10e-6),
               WithinRel(2 * 3 * (219.7152e-6 - 512 * 2097152.0 / 50e12 / 2), 1e-12));
    // Tensor parallel 2 halves both the bytes and the attention; 2 pipeline stages hold 1 layer each.
    CHECK_THAT(perf_detail::context_parallel_exchange_s(ops, 2, 2, 1, 10e9, 10e-6),
               WithinRel(3 * (1048576.0 / 10e9 + 10e-6 - 512 * 2097152.0 / 50e12 / 2 / 2), 1e-12));
    // NVLink-class links hide the exchange entirely; cp = 1 has none.
    CHECK(perf_detail::context_parallel_exchange_s(ops, 1, 1, 1, 900e9, 1e-6) == 0);
    ops.context_parallel = 1;
    CHECK(perf_detail::context_parallel_exchange_s(ops, 1, 1, 1, 10e9, 10e-6) == 0);
}

TEST_CASE("perf::context parallelism counts sequence replicas, not GPUs, in the global batch", "[perf]") {
    const GpuSpec gpu = test_gpu();
    // The two-layer decoder of "perf::training step of a small transformer on one GPU".
    const auto workload = [&](int context_parallel) {
        return load_workload_text(
            "format: 1\nname: cp\nkind: training\nmodel: {family: decoder, layers: 2, "
            "hidden: 1024, heads: 8, ffn: 4096, vocab: 1000}\nprecision: bf16\ntraining:\n"
            "  micro_batch: 1\n  global_batch: 8\n  seq_len: 1024\n  context_parallel: " +
                std::to_string(context_parallel) + "\n",
            "test.yaml", LoadContext{});
    };
    PerfQuery query;
    query.layout.data_parallel = 4;
    const PerfEstimate split = estimate_perf(workload(2), gpu, query, test_efficiency());
    const PerfEstimate replicated = estimate_perf(workload(1), gpu, query, test_efficiency());
    REQUIRE(split.training);
    REQUIRE(replicated.training);
    // dp 4 = 2 sequence replicas × cp 2: 8 / (1 · 2) = 4 accumulation steps of half-sequences,
    // against 8 / (1 · 4) = 2 of whole ones.
    CHECK(split.training->gradient_accumulation == 4);
    CHECK(replicated.training->gradient_accumulation == 2);
    CHECK(split.training->global_batch == 8);
    CHECK(std::any_of(split.notes.begin(), split.notes.end(), [](const std::string& note) {
        return note.find("context parallel 2: each sequence's 1024 tokens split over 2 GPUs") == 0 &&
               note.find("data parallel 4 = 2 sequence replicas × 2") != std::string::npos;
    }));
    // The same tokens per step in twice the micro-batches of half the rows: these GEMMs are below
    // their half-plateau size, so splitting the sequence costs speed on a model this small.
    CHECK_THAT(split.training->tokens_per_s, WithinRel(8 * 1024 / split.training->step_time_s, 1e-12));
    CHECK(split.training->tokens_per_s < replicated.training->tokens_per_s);
}

TEST_CASE("perf::a training layout that does not fit says whether the states or the activations overflow", "[perf]") {
    const GpuSpec gpu = test_gpu();  // 80 GB: 72 GB usable under the default 10 % headroom
    const auto training = [&](const std::string& fields) {
        return load_workload_text("format: 1\nname: fit\nkind: training\n" + llama2_7b_model +
                                      "precision: bf16\ntraining:\n  optimizer: adamw\n" + fields,
                                  "test.yaml", LoadContext{});
    };
    // Llama 2 7B with AdamW and fp32 master weights on one GPU: at least 2 + 2 + 12 bytes per
    // parameter, 108 GB, before any activation.
    const PerfEstimate states = run(training("  micro_batch: 1\n  seq_len: 128\n"), gpu, test_efficiency());
    CHECK(states.bottleneck.resource == Resource::memory_capacity);
    REQUIRE(states.training);
    REQUIRE(states.training->memory_use);
    // 80 GB less the 10 % headroom; the states alone overflow it.
    CHECK_THAT(states.training->memory_use->usable_bytes, WithinRel(72e9, 1e-12));
    CHECK(states.training->memory_use->states_bytes > 108e9);
    // The same model sharded over 64 GPUs (ZeRO-3: 108 GB / 64 of states) with 64 sequences of 4096
    // tokens per micro-batch and nothing recomputed: the activations overflow.
    PerfQuery query;
    query.layout.data_parallel = 64;
    query.layout.sharding = Sharding::zero3;
    const PerfEstimate activations =
        estimate_perf(training("  micro_batch: 64\n  seq_len: 4096\n  checkpointing: none\n  sharding: zero3\n"), gpu,
                      query, test_efficiency());
    CHECK(activations.bottleneck.resource == Resource::memory_capacity);
    REQUIRE(activations.training);
    REQUIRE(activations.training->memory_use);
    const TrainingMemoryUse& use = *activations.training->memory_use;
    CHECK(use.states_bytes <= use.usable_bytes);
    CHECK(use.states_bytes + use.activations_bytes + use.overhead_bytes > use.usable_bytes);
    // One short sequence on the same 64 sharded GPUs fits: nothing overflows, nothing is measured.
    const PerfEstimate fits =
        estimate_perf(training("  micro_batch: 1\n  seq_len: 128\n  sharding: zero3\n"), gpu, query, test_efficiency());
    REQUIRE(fits.training);
    CHECK(fits.bottleneck.resource != Resource::memory_capacity);
    CHECK_FALSE(fits.training->memory_use);
}

TEST_CASE("perf::input-bound CNN training names the input pipeline and the loader workers it needs", "[perf]") {
    const GpuSpec gpu = test_gpu();
    const EfficiencyTable table = test_efficiency();
    const Workload workload = load_workload_text(R"(format: 1
name: cnn
kind: training
model:
  family: cnn
  params: 25.6M
  flops_per_sample: 8.2GFLOP
  input: 224x224x3
precision: fp16
training:
  optimizer: sgd-momentum
  micro_batch: 256
data:
  sample_bytes: 110KiB
  decode: cpu
  cpu_cores: 32
  cpu_samples_per_s_per_core: 150
  loader_workers: 8
  storage: nvme
  pin_memory: true
)",
                                                 "test.yaml", LoadContext{});
    PerfEstimate estimate = run(workload, gpu, table);
    REQUIRE(estimate.training);
    fill_bottleneck_explanation(workload, gpu, estimate);
    // 8 workers × 150 samples/s: the GPU waits for the CPUs.
    CHECK_THAT(estimate.training->samples_per_s, WithinRel(1200.0, 1e-9));
    CHECK(estimate.bottleneck.resource == Resource::input_pipeline);
    CHECK_THAT(estimate.bottleneck.remedy,
               Contains("DALI") && Contains("loader workers") && Contains("a faster GPU would not help"));
    CHECK(estimate.bottleneck.gpu_utilization < 1.0);
}

TEST_CASE("perf::image training without data: decodes on the host vCPUs its GPU's offers publish", "[perf]") {
    GpuSpec gpu = test_gpu();
    // The built-in platform figures (data/efficiency.yaml), on the test's efficiency factors.
    const EfficiencyTable builtin = builtin_efficiency();
    CHECK(builtin.platform.image_decode_samples_per_s_per_vcpu == 250);
    CHECK(builtin.platform.host_vcpus_per_gpu == 22);
    EfficiencyTable table = test_efficiency();
    table.platform.image_decode_samples_per_s_per_vcpu = builtin.platform.image_decode_samples_per_s_per_vcpu;
    table.platform.host_vcpus_per_gpu = builtin.platform.host_vcpus_per_gpu;
    const std::string model = R"(format: 1
name: cnn
kind: training
model:
  family: cnn
  params: 25.6M
  flops_per_sample: 8.2GFLOP
  input: INPUT
precision: fp16
training:
  optimizer: sgd-momentum
  micro_batch: 256
)";
    const auto with_input = [&](const std::string& input) {
        std::string text = model;
        text.replace(text.find("INPUT"), 5, input);
        return load_workload_text(text, "test.yaml", LoadContext{});
    };
    const Workload workload = with_input("224x224x3");
    REQUIRE(workload.assumes_image_pipeline());
    CHECK(std::any_of(workload.assumptions.begin(), workload.assumptions.end(),
                      [](const Assumption& assumption) { return assumption.field == "data"; }));
    // 4 vCPUs per GPU from its offers: 4 workers × 250 samples/s on one GPU.
    gpu.host_vcpus_per_gpu = 4;
    gpu.host_vcpus_offers = 2;
    PerfEstimate estimate = run(workload, gpu, table);
    REQUIRE(estimate.training);
    REQUIRE(estimate.training->input_data);
    CHECK_FALSE(estimate.training->input_data->given);
    CHECK(estimate.training->input_data->cpu_cores == 4);
    CHECK(estimate.training->input_data->loader_workers == 4);
    CHECK_THAT(estimate.training->input_samples_per_s, WithinRel(1000.0, 1e-12));
    CHECK_THAT(estimate.training->samples_per_s, WithinRel(1000.0, 1e-9));
    CHECK(std::any_of(estimate.notes.begin(), estimate.notes.end(), [](const std::string& note) {
        return note.find("250 samples/s per vCPU") != std::string::npos &&
               note.find("4 vCPUs per node (4 per GPU, the median of 2 TEST-A100 offer(s))") != std::string::npos;
    }));
    fill_bottleneck_explanation(workload, gpu, estimate);
    CHECK(estimate.bottleneck.resource == Resource::input_pipeline);
    CHECK_THAT(estimate.bottleneck.detail, Contains("(assumed: no data: section)"));
    CHECK_THAT(estimate.bottleneck.remedy,
               Contains("nvJPEG") && Contains("vCPUs per node (has 4)") && Contains("LMDB"));
    // Eight GPUs on one node: eight GPUs' vCPUs.
    PerfEstimate eight = run(workload, gpu, table, 8);
    REQUIRE(eight.training);
    CHECK_THAT(eight.training->input_samples_per_s, WithinRel(32 * 250.0, 1e-12));
    // No offer publishes vCPUs: the platform's 22 per GPU.
    gpu.host_vcpus_per_gpu = 0;
    gpu.host_vcpus_offers = 0;
    const PerfEstimate fallback = run(workload, gpu, table);
    REQUIRE(fallback.training);
    CHECK_THAT(fallback.training->input_samples_per_s, WithinRel(22 * 250.0, 1e-12));
    // Volumes and latents are not JPEG samples; inference has no loader.
    CHECK_FALSE(with_input("128x128x128x1").assumes_image_pipeline());
    CHECK_FALSE(with_input("128x128x4").assumes_image_pipeline());
    const PerfEstimate volume = run(with_input("128x128x128x1"), gpu, table);
    REQUIRE(volume.training);
    CHECK_FALSE(volume.training->input_data);
    CHECK(volume.training->input_samples_per_s == 0);
}

TEST_CASE("perf::default layouts", "[perf]") {
    const GpuSpec gpu = test_gpu();
    const Workload training = load_workload_text(R"(format: 1
name: tp
kind: training
model: {family: decoder, layers: 32, hidden: 4096, heads: 32, ffn: 11008, ffn_gated: true, vocab: 32000}
training: {tensor_parallel: 2, pipeline_parallel: 1, micro_batch: 1}
)",
                                                 "test.yaml", LoadContext{});
    const FittingLayout eight = fitting_layout(training, gpu, 8, ServingStack::automatic);
    REQUIRE(eight.found());
    const Layout& layout = eight.layout;
    CHECK(layout.tensor_parallel == 2);
    CHECK(layout.data_parallel == 4);
    const FittingLayout three = fitting_layout(training, gpu, 3, ServingStack::automatic);
    CHECK(three.problem == LayoutProblem::count_not_multiple_of_split);
    CHECK(three.tensor_parallel == 2);
    CHECK(three.pipeline_parallel == 1);
    CHECK(fitting_layout(training, gpu, 0, ServingStack::automatic).problem == LayoutProblem::no_gpus);
    // A 7B FP16 model fits one 80 GB GPU: 4 GPUs are 4 replicas.
    const FittingLayout four = fitting_layout(inference_workload(512, 128, 1), gpu, 4, ServingStack::automatic);
    REQUIRE(four.found());
    const Layout& replicas = four.layout;
    CHECK(replicas.tensor_parallel == 1);
    CHECK(replicas.data_parallel == 4);
    // 13.5 GB of FP16 weights do not fit one 12 GB GPU but do fit two: 3 GPUs are no whole replicas.
    GpuSpec small = gpu;
    small.memory_bytes = 12e9;
    const FittingLayout odd = fitting_layout(inference_workload(512, 128, 1), small, 3, ServingStack::automatic);
    CHECK(odd.problem == LayoutProblem::replica_does_not_divide);
    CHECK(odd.replica_gpus == 2);
    // A stated tensor_parallel is kept (the layout a measurement used), although one GPU would hold it.
    const FittingLayout stated =
        fitting_layout(inference_workload(512, 128, 1, "  tensor_parallel: 4\n"), gpu, 8, ServingStack::automatic);
    REQUIRE(stated.found());
    CHECK(stated.layout.tensor_parallel == 4);
    CHECK(stated.layout.data_parallel == 2);
    const FittingLayout uneven =
        fitting_layout(inference_workload(512, 128, 1, "  tensor_parallel: 4\n"), gpu, 6, ServingStack::automatic);
    CHECK(uneven.problem == LayoutProblem::replica_does_not_divide);
}

TEST_CASE("perf::stack resolution", "[perf]") {
    Workload workload = inference_workload(1, 1, 1);
    CHECK(resolve_stack(workload, ServingStack::automatic) == ServingStack::optimized);
    workload.weights = WeightFormat::q4_k_m;
    CHECK(resolve_stack(workload, ServingStack::automatic) == ServingStack::llama_cpp);
    CHECK(resolve_stack(workload, ServingStack::eager) == ServingStack::eager);
    CHECK(parse_serving_stack("llama.cpp") == ServingStack::llama_cpp);
    CHECK_FALSE(parse_serving_stack("vllm").has_value());
}

TEST_CASE("bottleneck::binding resource and utilisation", "[perf][bottleneck]") {
    ResourceTimes times;
    times.compute_s = 1;
    times.memory_bandwidth_s = 3;
    times.launch_overhead_s = 1;
    const Bottleneck bottleneck = binding_resource(times);
    CHECK(bottleneck.resource == Resource::memory_bandwidth);
    CHECK_THAT(bottleneck.share, WithinRel(0.6, 1e-12));
    // Launch gaps leave the GPU idle: 4 of 5 seconds busy.
    CHECK_THAT(bottleneck.gpu_utilization, WithinRel(0.8, 1e-12));
    CHECK(to_string(Resource::interconnect) == "communication");
    CHECK(binding_resource(ResourceTimes{}).share == 0);
}

TEST_CASE("efficiency::rules resolve by specificity, values need sources", "[perf][efficiency]") {
    const std::string head = R"(format: 1
defaults:
  training_compute: {value: 0.45, source: a}
  training_gemm: {value: 0.6, source: a}
  training_gemm_fp8: {value: 0.45, source: a}
  gemm_half_work: {value: 0.008ms, source: a}
  kernel_floor: {value: 0.004ms, source: a}
  attention_compute: {value: 0.5, source: a}
  tp_comm_overlap: {value: 0.8, source: a, fitted_on: [x, y]}
  cnn_flops_per_byte: {value: 27, source: a}
  cnn_inference_flops_per_byte: {value: 27, source: a}
  prefill_compute: {value: 0.6, source: a}
  prefill_compute_8bit: {value: 0.45, source: a}
  decode_bandwidth: {value: 0.84, source: a}
  overhead_per_layer: {value: 0.067ms, source: a}
  request_floor: {value: 0ms, source: a}
  diffusion_compute: {value: 0.5, source: a}
  interconnect: {value: 0.75, source: a}
  host_link: {value: 0.78, source: a}
  network: {value: 0.8, source: a}
  nvlink_latency: {value: 0.01ms, source: a}
  pcie_latency: {value: 0.027ms, source: a}
  network_latency: {value: 0.025ms, source: a}
  collective_bus: {value: 1.12, source: a}
  collective_latency: {value: 0.061ms, source: a}
platform:
  infiniband_per_gpu: {value: 50GB/s, source: a}
  ethernet_per_gpu: {value: 12.5GB/s, source: a}
  pageable_copy_fraction: {value: 0.5, source: a}
  storage:
    hdd: {value: 200MB/s, source: a}
    sata-ssd: {value: 550MB/s, source: a}
    nvme: {value: 3.5GB/s, source: a}
    network: {value: 1.25GB/s, source: a}
    ram: {value: 10GB/s, source: a}
)";
    const std::string rules = R"(rules:
  - label: hopper
    match: {family: hopper}
    factors:
      training_compute: {value: 0.5, source: b}
  - label: llama.cpp on hopper
    match: {family: hopper, stack: llama.cpp}
    factors:
      training_compute: {value: 0.3, source: c}
)";
    const EfficiencyTable table = parse_efficiency_text(head + rules, "e.yaml");
    GpuSpec hopper = test_gpu();
    hopper.architecture = "Hopper";
    CHECK(table.resolve(hopper, ServingStack::llama_cpp).training_compute == 0.3);
    CHECK(table.resolve(hopper, ServingStack::optimized).training_compute == 0.5);
    CHECK(table.resolve(test_gpu(), ServingStack::llama_cpp).training_compute == 0.45);
    CHECK_THAT(table.defaults.overhead_per_layer_s, WithinRel(67e-6, 1e-12));
    CHECK(table.platform.storage_bytes_per_s.at(Storage::nvme) == 3.5e9);

    const std::string no_source = head +
                                  "rules:\n  - label: x\n    match: {memory: gddr}\n    factors:\n"
                                  "      decode_bandwidth: {value: 0.9}\n";
    CHECK_THROWS_WITH(parse_efficiency_text(no_source, "e.yaml"), Contains("source"));
    const std::string unknown = head +
                                "rules:\n  - label: x\n    match: {memory: gddr}\n    factors:\n"
                                "      decode_bandwith: {value: 0.9, source: a}\n";
    try {
        parse_efficiency_text(unknown, "e.yaml");
        FAIL("an unknown factor must be rejected");
    } catch (const InputError& error) {
        CHECK_THAT(format_diagnostic(error.diagnostics().front()),
                   Contains("unknown field 'decode_bandwith'") && Contains("did you mean 'decode_bandwidth'"));
    }
    // Rules can match the engine; fitted values list the cases they were fitted to.
    const std::string engines = head + R"(rules:
  - label: vllm
    match: {engine: vllm}
    factors:
      training_compute: {value: 0.4, source: "fitted", fitted_on: [B24, B25]}
  - label: tensorrt-llm on hopper
    match: {engine: tensorrt-llm, family: hopper}
    factors:
      training_compute: {value: 0.6, source: d}
)";
    const EfficiencyTable by_engine = parse_efficiency_text(engines, "e.yaml");
    CHECK(by_engine.resolve(hopper, ServingStack::optimized, "vllm").training_compute == 0.4);
    CHECK(by_engine.resolve(hopper, ServingStack::optimized, "tensorrt-llm").training_compute == 0.6);
    CHECK(by_engine.resolve(test_gpu(), ServingStack::optimized, "tensorrt-llm").training_compute == 0.45);
    CHECK(by_engine.resolve(hopper, ServingStack::optimized).training_compute == 0.45);
    CHECK_THROWS_WITH(parse_efficiency_text(head + "rules:\n  - label: x\n    match: {engine: vlm}\n    factors:\n"
                                                   "      decode_bandwidth: {value: 0.9, source: a}\n",
                                            "e.yaml"),
                      Contains("unknown engine"));
    CHECK(is_known_engine("TensorRT-LLM"));
    CHECK(stack_of_engine("hf-generate") == ServingStack::eager);
    CHECK(stack_of_engine("vllm-rocm") == ServingStack::optimized);
    const std::string out_of_range = head +
                                     "rules:\n  - label: x\n    match: {memory: gddr}\n    factors:\n"
                                     "      decode_bandwidth: {value: 75, source: a}\n";
    CHECK_THROWS_AS(parse_efficiency_text(out_of_range, "e.yaml"), InputError);
}

TEST_CASE("efficiency::the compiled-in table loads and its defaults match the header", "[perf][efficiency]") {
    const EfficiencyTable table = builtin_efficiency();
    const EfficiencyFactors header;
    CHECK(table.defaults.training_compute == header.training_compute);
    CHECK(table.defaults.training_gemm == header.training_gemm);
    CHECK(table.defaults.training_gemm_fp8 == header.training_gemm_fp8);
    CHECK(table.defaults.tp_comm_overlap == header.tp_comm_overlap);
    CHECK(table.defaults.collective_bus == header.collective_bus);
    CHECK_THAT(table.defaults.collective_latency_s, WithinRel(header.collective_latency_s, 1e-12));
    CHECK(table.defaults.cnn_flops_per_byte == header.cnn_flops_per_byte);
    CHECK(table.defaults.cnn_inference_flops_per_byte == header.cnn_inference_flops_per_byte);
    CHECK(table.defaults.prefill_compute == header.prefill_compute);
    CHECK(table.defaults.prefill_compute_8bit == header.prefill_compute_8bit);
    CHECK(table.defaults.decode_bandwidth == header.decode_bandwidth);
    CHECK_THAT(table.defaults.overhead_per_layer_s, WithinRel(header.overhead_per_layer_s, 1e-12));
    CHECK(table.defaults.request_floor_s == header.request_floor_s);
    CHECK(table.defaults.diffusion_compute == header.diffusion_compute);
    CHECK(table.defaults.interconnect == header.interconnect);
    CHECK(table.defaults.host_link == header.host_link);
    CHECK(table.defaults.network == header.network);
    CHECK_THAT(table.defaults.nvlink_latency_s, WithinRel(header.nvlink_latency_s, 1e-12));
    CHECK_THAT(table.defaults.pcie_latency_s, WithinRel(header.pcie_latency_s, 1e-12));
    CHECK_THAT(table.defaults.network_latency_s, WithinRel(header.network_latency_s, 1e-12));
    CHECK_THAT(table.defaults.gemm_half_work_s, WithinRel(header.gemm_half_work_s, 1e-12));
    CHECK_THAT(table.defaults.kernel_floor_s, WithinRel(header.kernel_floor_s, 1e-12));
    CHECK(table.defaults.elementwise_kernels == header.elementwise_kernels);
    CHECK_THAT(table.defaults.step_floor_s, WithinRel(header.step_floor_s, 1e-12));
    CHECK(table.defaults.kv_read_factor == header.kv_read_factor);
    CHECK(table.defaults.attention_compute == header.attention_compute);
    CHECK(table.rules.size() >= 5);
    // Every GPU family of the catalog has a rule or uses the defaults; GDDR parts get their own.
    GpuSpec gddr = test_gpu();
    gddr.memory_type = "GDDR6X";
    gddr.architecture = "ada";
    CHECK(table.resolve(gddr, ServingStack::llama_cpp).decode_bandwidth == 0.9);
    CHECK(table.resolve(test_gpu(), ServingStack::llama_cpp).decode_bandwidth == 0.6);
}

namespace {

// A UNet of round numbers: 5 TFLOP per latent, 1B parameters, a 10 TFLOP decoder.
Workload diffusion_workload(const std::string& inference) {
    const std::string text = R"(format: 1
name: d
kind: inference
model:
  family: diffusion
  params: 1B
  flops_per_sample: 5TFLOP
  decoder_flops_per_sample: 10TFLOP
precision: fp16
inference:
)" + inference;
    return load_workload_text(text, "test.yaml", LoadContext{});
}

}  // namespace

TEST_CASE("perf::diffusion is steps × the denoiser (doubled by guidance) plus the VAE decode", "[perf][diffusion]") {
    const GpuSpec gpu = test_gpu();
    EfficiencyTable table = test_efficiency();
    table.defaults.diffusion_compute = 0.5;
    const Workload guided = diffusion_workload("  steps: 20\n  batch: 2\n  requests_per_s: 0.01\n");
    CHECK(guided.task() == InferenceTask::diffusion);
    PerfEstimate estimate = run(guided, gpu, table);
    REQUIRE(estimate.inference);
    fill_bottleneck_explanation(guided, gpu, estimate);
    // Denoising step at batch 2 with CFG: 4 latents × 5 TFLOP / (312 T × 0.5) = 128.205 ms of
    // compute against 2 GB of fp16 weights / (2039 GB/s × 0.84) = 1.1677 ms, combined as
    // sqrt(c² + m²); VAE: 2 × 10 TFLOP / 156 T = 128.205 ms.
    const double compute_s = 4 * 5e12 / (312e12 * 0.5);
    const double memory_s = 2e9 / (2039e9 * 0.84);
    const double step_s = std::sqrt(compute_s * compute_s + memory_s * memory_s);
    const double vae_s = 2 * 10e12 / (312e12 * 0.5);
    CHECK_THAT(estimate.inference->denoising_step_s, WithinRel(step_s, 1e-9));
    CHECK_THAT(estimate.inference->vae_decode_s, WithinRel(vae_s, 1e-9));
    CHECK_THAT(estimate.inference->images_per_s, WithinRel(2 / (20 * step_s + vae_s), 1e-9));
    CHECK(estimate.inference->images_per_s == estimate.inference->requests_per_s);
    CHECK(estimate.bottleneck.resource == Resource::compute);
    CHECK_THAT(estimate.bottleneck.remedy, Contains("denoising steps"));
    CHECK_THAT(estimate.bottleneck.detail + estimate.bottleneck.remedy,
               !Contains("decode reads") && !Contains("KV") && !Contains("TPOT") && !Contains("TensorRT-LLM"));
    // Without guidance the denoiser runs half the latents; the default stack is the optimised one.
    const Workload unguided =
        diffusion_workload("  steps: 20\n  guidance: false\n  batch: 2\n  requests_per_s: 0.01\n");
    const PerfEstimate half = run(unguided, gpu, table);
    REQUIRE(half.inference);
    CHECK(half.inference->denoising_step_s < 0.51 * estimate.inference->denoising_step_s);
    CHECK(estimate.stack == ServingStack::optimized);
    CHECK_THAT(estimate.notes.front(), Contains("diffusion pipeline"));
}

TEST_CASE("perf::diffusion defaults: 50 steps with guidance, printed — steps refused for other models",
          "[perf][diffusion]") {
    const Workload workload = diffusion_workload("  requests_per_s: 1\n");
    CHECK(workload.inference.denoising_steps == 50);
    CHECK(workload.inference.classifier_free_guidance);
    const auto assumed = [&](const std::string& field) {
        return std::any_of(workload.assumptions.begin(), workload.assumptions.end(),
                           [&](const Assumption& assumption) { return assumption.field == field; });
    };
    CHECK(assumed("inference.steps"));
    CHECK(assumed("inference.guidance"));
    CHECK(assumed("runtime.engine"));
    CHECK_THROWS_WITH(load_workload_text(R"(format: 1
name: t
kind: inference
model: {family: cnn, params: 25M, flops_per_sample: 8GFLOP}
inference: {steps: 20}
)",
                                         "test.yaml", LoadContext{}),
                      Contains("inference.steps applies to diffusion models"));
}

TEST_CASE("perf::CNN serving has no fixed floor: GPUs of different speed serve different req/s", "[perf]") {
    const Catalog catalog = builtin_catalog();
    const EfficiencyTable efficiency = builtin_efficiency();
    const Workload workload = load_workload_text(R"(format: 1
name: rn50
kind: inference
model: {family: cnn, params: 25.6M, flops_per_sample: 8.2GFLOP}
precision: fp16
inference: {batch: 8, requests_per_s: 1}
)",
                                                 "test.yaml", LoadContext{});
    CHECK(workload.task() == InferenceTask::vision);
    CHECK(resolve_stack(workload, ServingStack::automatic) == ServingStack::optimized);
    const auto speed = [&](const std::string& id) {
        const GpuSpec* gpu = catalog.find(id);
        REQUIRE(gpu != nullptr);
        PerfQuery query;
        const FittingLayout fitting = fitting_layout(workload, *gpu, 1, query.stack);
        REQUIRE(fitting.problem == LayoutProblem::none);
        query.layout = fitting.layout;
        const PerfEstimate estimate = estimate_perf(workload, *gpu, query, efficiency);
        REQUIRE(estimate.inference);
        return estimate.inference->requests_per_s;
    };
    // MI210: 181 TFLOPS FP16, 1.6 TB/s; Jetson Orin Nano: about 17 TFLOPS, 68 GB/s.
    CHECK(speed("MI210") > 5 * speed("JETSON-ORIN-NANO-8GB"));
}

TEST_CASE("perf::an encoder's bottleneck speaks of requests, not decode steps or TPOT", "[perf]") {
    const GpuSpec gpu = test_gpu();
    const EfficiencyTable table = test_efficiency();
    const Workload workload = load_workload_text(R"(format: 1
name: bert
kind: inference
model: {family: encoder, params: 110M, layers: 12, hidden: 768, heads: 12, ffn: 3072, vocab: 30522, max_context: 512}
precision: fp16
inference: {input_tokens: 128, batch: 64, requests_per_s: 1}
)",
                                                 "test.yaml", LoadContext{});
    CHECK(workload.task() == InferenceTask::encoder);
    PerfEstimate estimate = run(workload, gpu, table);
    REQUIRE(estimate.inference);
    fill_bottleneck_explanation(workload, gpu, estimate);
    const std::string text = estimate.bottleneck.detail + " " + estimate.bottleneck.remedy;
    CHECK_THAT(text, !Contains("decode") && !Contains("TPOT") && !Contains("KV cache") && !Contains("TensorRT-LLM"));
    CHECK_THAT(estimate.notes.front(), Contains("encoder engine"));
}

// ---------------------------------------------------------------------------------------
// A query's precision and recompute level (the planner's candidates) against a copy of the
// workload with those fields set: the same figures, exactly.

namespace {

void check_same_perf(const PerfEstimate& query, const PerfEstimate& copy) {
    REQUIRE(query.training.has_value() == copy.training.has_value());
    REQUIRE(query.inference.has_value() == copy.inference.has_value());
    if (query.training) {
        const TrainingPerf& a = *query.training;
        const TrainingPerf& b = *copy.training;
        CHECK(a.step_time_s == b.step_time_s);
        CHECK(a.tokens_per_s == b.tokens_per_s);
        CHECK(a.samples_per_s == b.samples_per_s);
        CHECK(a.mfu == b.mfu);
        CHECK(a.time_to_train_s == b.time_to_train_s);
        CHECK(a.scaling_efficiency == b.scaling_efficiency);
        CHECK(a.meets_deadline == b.meets_deadline);
        CHECK(a.compute_s == b.compute_s);
        CHECK(a.memory_s == b.memory_s);
        CHECK(a.communication_s == b.communication_s);
        CHECK(a.host_transfer_s == b.host_transfer_s);
        CHECK(a.bubble_fraction == b.bubble_fraction);
        CHECK(a.model_flops_per_step == b.model_flops_per_step);
        CHECK(a.micro_batch == b.micro_batch);
        CHECK(a.gradient_accumulation == b.gradient_accumulation);
        CHECK(a.global_batch == b.global_batch);
    }
    if (query.inference) {
        const InferencePerf& a = *query.inference;
        const InferencePerf& b = *copy.inference;
        CHECK(a.ttft_s == b.ttft_s);
        CHECK(a.tpot_s == b.tpot_s);
        CHECK(a.output_tokens_per_s == b.output_tokens_per_s);
        CHECK(a.prefill_tokens_per_s == b.prefill_tokens_per_s);
        CHECK(a.requests_per_s == b.requests_per_s);
        CHECK(a.p99_ttft_s == b.p99_ttft_s);
        CHECK(a.p99_tpot_s == b.p99_tpot_s);
        CHECK(a.p99_e2e_s == b.p99_e2e_s);
        CHECK(a.batch == b.batch);
        CHECK(a.max_batch_memory == b.max_batch_memory);
        CHECK(a.fits == b.fits);
        CHECK(a.batch_fits == b.batch_fits);
        CHECK(a.meets_slo == b.meets_slo);
        CHECK(a.max_requests_per_s_meeting_slo == b.max_requests_per_s_meeting_slo);
        CHECK(a.binding_target == b.binding_target);
        CHECK(a.decode_step_s == b.decode_step_s);
        CHECK(a.batch_prefill_s == b.batch_prefill_s);
        CHECK(a.decode_bytes_per_step == b.decode_bytes_per_step);
    }
    CHECK(query.bottleneck.resource == copy.bottleneck.resource);
    CHECK(query.bottleneck.phase == copy.bottleneck.phase);
    CHECK(query.bottleneck.share == copy.bottleneck.share);
    CHECK(query.bottleneck.gpu_utilization == copy.bottleneck.gpu_utilization);
    CHECK(query.notes == copy.notes);
}

}  // namespace

TEST_CASE("perf: a query's precision and checkpointing give the estimate of a workload copy with them set", "[perf]") {
    const GpuSpec* gpu = test::catalog().find("H100-SXM5");
    REQUIRE(gpu != nullptr);
    const Workload training = load_workload_text("format: 1\nname: t\nkind: training\n" + llama2_7b_model +
                                                     "precision: bf16\ntraining:\n  optimizer: adamw\n  micro_batch: "
                                                     "2\n  seq_len: 2048\n  dataset_tokens: 10B\n  deadline: 30d\n",
                                                 "test.yaml", LoadContext{});
    const Workload serving = inference_workload(512, 128, 4);
    REQUIRE(training.training.checkpointing == Checkpointing::none);
    // A split layout (tensor, pipeline and data parallel traffic) and one GPU, which a 7B model in
    // fp32 with AdamW does not fit (the memory-capacity explanation).
    Layout split;
    split.tensor_parallel = 2;
    split.pipeline_parallel = 2;
    split.data_parallel = 2;
    for (const Workload* workload : {&training, &serving}) {
        for (const Layout& layout : {split, Layout{}}) {
            for (const Precision precision : {Precision::fp32, Precision::bf16, Precision::fp16, Precision::fp8}) {
                for (const Checkpointing checkpointing :
                     {Checkpointing::none, Checkpointing::selective, Checkpointing::full}) {
                    CAPTURE(workload->name, layout.gpu_count(), to_string(precision), to_string(checkpointing));
                    Workload copy = *workload;
                    copy.precision = precision;
                    copy.training.checkpointing = checkpointing;
                    PerfQuery plain;
                    plain.layout = layout;
                    if (!workload->is_training()) {
                        plain.layout.pipeline_parallel = 1;
                    }
                    PerfQuery chosen = plain;
                    chosen.precision = precision;
                    chosen.checkpointing = checkpointing;
                    const PerfEstimate by_query = estimate_perf(*workload, *gpu, chosen, test::efficiency());
                    const PerfEstimate by_copy = estimate_perf(copy, *gpu, plain, test::efficiency());
                    check_same_perf(by_query, by_copy);
                    // The prose, written from the estimate, reads the precision it carries.
                    CHECK(by_query.precision == precision);
                    const BottleneckExplanation query_text = explain_bottleneck(*workload, *gpu, by_query);
                    const BottleneckExplanation copy_text = explain_bottleneck(copy, *gpu, by_copy);
                    CHECK(query_text.detail == copy_text.detail);
                    CHECK(query_text.remedy == copy_text.remedy);
                    if (!workload->is_training()) {
                        CHECK(inference_batch_capacity(*workload, *gpu, plain.layout, precision) ==
                              inference_batch_capacity(copy, *gpu, plain.layout));
                    }
                }
            }
        }
    }
}

TEST_CASE("perf::moe: DeepSeek-V3 decode reads the experts its batch touches and the whole MLA latent per GPU",
          "[perf][moe]") {
    const auto workload_with = [](const std::string& inference) {
        return load_workload_text(
            fmt::format("format: 1\nname: ds\nkind: inference\nmodel: {{hf_config: {}}}\nprecision: bf16\n"
                        "weights: fp8\nkv_cache: bf16\ninference: {{requests_per_s: 2, input_tokens: 1000, "
                        "output_tokens: 1000, tensor_parallel: 8{}}}\nruntime: {{engine: vllm}}\n",
                        test::source_path("tests/data/hf/hf-config-deepseek-v3.json"), inference),
            "ds.yaml", LoadContext{&test::catalog(), &test::models()});
    };
    const Workload workload = workload_with("");
    const GpuSpec* gpu = test::catalog().find("H200-SXM");
    REQUIRE(gpu != nullptr);
    PerfQuery query;
    query.layout.tensor_parallel = 8;
    query.batch = 31;
    query.search_capacity = false;
    const PerfEstimate estimate = estimate_perf(workload, *gpu, query, test::efficiency());
    REQUIRE(estimate.inference);
    const InferencePerf& perf = *estimate.inference;
    // One expert over the 58 MoE layers is (total − active) / (256 − 8) parameters; 31 tokens
    // touch 256 · (1 − (1 − 8/256)^31) = 160.5 of each layer's 256 experts; the rest (attention,
    // dense layers, shared experts, router, output layer) is read whole. FP8: 1 B per parameter,
    // split over 8 GPUs. The MLA latent, 61 × 576 × 2 B per token, is read whole by every GPU for
    // 31 sequences at the mean context of 1,500 tokens.
    const ModelSpec& model = workload.model;
    const double expert = (model.params - model.active_params) / (256 - 8);
    const double shared = matmul_params(model) - 8 * expert;
    const double touched = 256 * (1 - std::pow(1 - 8.0 / 256, 31));
    const double weights = (shared + touched * expert) / 8;
    const double kv = 31 * 1500.0 * 61 * 576 * 2;
    CHECK(perf.decode_bytes_per_step >= weights + kv);
    CHECK(perf.decode_bytes_per_step <= 1.02 * (weights + kv));  // + the element-wise activations
    // The step takes at least those bytes at the achieved bandwidth: never above the peak.
    CHECK(perf.decode_bytes_per_step / perf.decode_step_s < gpu->memory_bandwidth_bytes_per_s);
    CHECK(perf.decode_step_s > (weights + kv) / gpu->memory_bandwidth_bytes_per_s);
    // Expert parallelism swaps the FFN all-reduce of the 58 MoE layers for dispatch and combine.
    PerfQuery ep_query = query;
    const PerfEstimate ep = estimate_perf(workload_with(", expert_parallel: 8"), *gpu, ep_query, test::efficiency());
    REQUIRE(ep.inference);
    CHECK(ep.inference->decode_link_bytes_per_step != Approx(perf.decode_link_bytes_per_step));
    // Each GPU dispatches ⌈31/8⌉ = 4 tokens to 8 · (1 − (7/8)^8) = 5.25 ranks, 7/8 of them remote,
    // 7168 bf16 activations each, twice (dispatch, combine) per MoE layer; the 61 attention and 3
    // dense-FFN all-reduces stay (2 · 7/8 of 31 × 7168 × 2 B, over NVLink SHARP's bus factor).
    const double ranks = 8 * (1 - std::pow(7.0 / 8, 8));
    const double all_to_all = 58 * 2 * 4 * ranks * 7 / 8 * 7168 * 2;
    const double all_reduces = 64 * 2.0 * 7 / 8 * 31 * 7168 * 2;
    CHECK(ep.inference->decode_link_bytes_per_step > all_to_all);
    CHECK(ep.inference->decode_link_bytes_per_step <= all_to_all + all_reduces + 1);
}

TEST_CASE("perf::closed loop: one client is one request alone, and clients beyond the batch wait",
          "[perf][serving-load]") {
    const GpuSpec gpu = test_gpu();
    const EfficiencyTable table = test_efficiency();
    const std::string engine = "runtime: {engine: vllm, max_num_seqs: 8}\n";
    const Workload open = inference_workload(512, 128, 0.001, engine);
    Workload closed = open;
    closed.inference.requests_per_s = 0;
    closed.inference.batch = 0;
    closed.inference.concurrency = 1;
    const PerfEstimate alone = run(open, gpu, table);
    const PerfEstimate one = run(closed, gpu, table);
    REQUIRE(alone.inference);
    REQUIRE(one.inference);
    const double ttft = alone.inference->ttft_s;
    const double tpot = alone.inference->tpot_s;
    // One client: nothing stalls its decode; its prefill waits for half a step in flight and, at
    // the median, for no other prefill (the prefill utilisation X·TTFT is below one half).
    CHECK(one.inference->concurrency == 1);
    CHECK(one.inference->tpot_s == Approx(tpot).epsilon(1e-9));
    CHECK(one.inference->ttft_s == Approx(ttft + tpot / 2).epsilon(1e-9));
    // X = m / (S_out · step(m) + m · prefill) with m = 1.
    const double throughput = 1 / (128 * tpot + ttft);
    CHECK(one.inference->requests_per_s == Approx(throughput).epsilon(1e-9));
    CHECK(one.inference->output_tokens_per_s == Approx(128 * throughput).epsilon(1e-9));

    // 24 clients on 8 slots: 8 decode, 16 wait (16 / X by Little's law); the TPOT is that of 8.
    closed.inference.concurrency = 8;
    const PerfEstimate eight = run(closed, gpu, table);
    closed.inference.concurrency = 24;
    const PerfEstimate twenty_four = run(closed, gpu, table);
    REQUIRE(eight.inference);
    REQUIRE(twenty_four.inference);
    CHECK(eight.inference->batch == 8);
    CHECK(twenty_four.inference->tpot_s == Approx(eight.inference->tpot_s).epsilon(1e-12));
    CHECK(twenty_four.inference->requests_per_s == Approx(eight.inference->requests_per_s).epsilon(1e-12));
    CHECK(twenty_four.inference->ttft_s ==
          Approx(eight.inference->ttft_s + 16 / eight.inference->requests_per_s).epsilon(1e-9));
    // More clients decoding together: each is slower, all together faster.
    CHECK(eight.inference->tpot_s > tpot);
    CHECK(eight.inference->output_tokens_per_s > one.inference->output_tokens_per_s);
}

TEST_CASE("perf::SGLang's scheduler_recv_interval: a request waits for the next poll while others decode",
          "[perf][serving-load]") {
    const GpuSpec gpu = test_gpu();
    const EfficiencyTable table = test_efficiency();
    const auto closed_loop = [](int clients, const std::string& knobs) {
        Workload workload =
            inference_workload(512, 128, 0.001, "runtime: {engine: sglang, max_num_seqs: 8" + knobs + "}\n");
        workload.inference.requests_per_s = 0;
        workload.inference.batch = 0;
        workload.inference.concurrency = clients;
        return workload;
    };
    const PerfEstimate every = run(closed_loop(8, ""), gpu, table);
    const PerfEstimate thirty = run(closed_loop(8, ", scheduler_recv_interval: 30"), gpu, table);
    REQUIRE(every.inference);
    REQUIRE(thirty.inference);
    // The poll comes once per 30 steps: uniform on [0, 29 steps] beyond the step in flight, so the
    // median waits 14.5 steps more and the p99 28.71; decoding itself is unchanged.
    const double step_s = every.inference->decode_step_s;
    CHECK(thirty.inference->tpot_s == Approx(every.inference->tpot_s).epsilon(1e-12));
    CHECK(thirty.inference->ttft_s - every.inference->ttft_s == Approx(14.5 * step_s).epsilon(1e-9));
    REQUIRE(thirty.inference->p99_ttft_s);
    REQUIRE(every.inference->p99_ttft_s);
    CHECK(*thirty.inference->p99_ttft_s - *every.inference->p99_ttft_s == Approx(0.99 * 29 * step_s).epsilon(1e-9));
    // One client: the engine is idle when its next request comes, and polls at once.
    const PerfEstimate alone = run(closed_loop(1, ""), gpu, table);
    const PerfEstimate alone_thirty = run(closed_loop(1, ", scheduler_recv_interval: 30"), gpu, table);
    CHECK(alone_thirty.inference->ttft_s == Approx(alone.inference->ttft_s).epsilon(1e-12));
    // Speculative decoding: the skipper counts iterations, each a verify pass (decode_step_s) and
    // two passes of the one-layer draft head, at most 2/32 of a 32-layer pass more.
    const std::string mtp = ", speculative: {method: mtp, draft_tokens: 2, acceptance: 0.5}";
    const PerfEstimate drafted = run(closed_loop(8, mtp), gpu, table);
    const PerfEstimate drafted_thirty = run(closed_loop(8, mtp + ", scheduler_recv_interval: 30"), gpu, table);
    const double drafted_wait_s = drafted_thirty.inference->ttft_s - drafted.inference->ttft_s;
    CHECK(drafted_wait_s > 14.5 * drafted.inference->decode_step_s);
    CHECK(drafted_wait_s <= 14.5 * drafted.inference->decode_step_s * (1 + 2.0 / 32));
    // Other engines have no such knob.
    CHECK_THROWS_WITH(inference_workload(512, 128, 1, "runtime: {engine: vllm, scheduler_recv_interval: 30}\n"),
                      Catch::Contains("SGLang's --scheduler-recv-interval"));
}

TEST_CASE("perf::speculative decoding: the verify pass costs at least one step, yields tokens_per_step",
          "[perf][serving-load]") {
    const GpuSpec gpu = test_gpu();
    const EfficiencyTable table = test_efficiency();
    const Workload plain = inference_workload(512, 128, 0.001, "runtime: {engine: vllm}\n");
    const Workload drafted = inference_workload(
        512, 128, 0.001, "runtime: {engine: vllm, speculative: {method: eagle, draft_tokens: 3, acceptance: 0.8}}\n");
    const double tpot = run(plain, gpu, table).inference->tpot_s;
    const double speculative_tpot = run(drafted, gpu, table).inference->tpot_s;
    const double tokens = 1 + 0.8 + 0.64 + 0.512;
    // Batch 1 on a 7B model is bound by reading the weights: verifying 4 tokens costs little more
    // than 1, and three one-layer draft passes add 3/32 of a step's kernels at most.
    CHECK(speculative_tpot * tokens >= tpot);
    CHECK(speculative_tpot * tokens <= tpot * (1 + 3.0 / 32 + 0.15));
}

TEST_CASE("perf::FP4 weights: the FP4 peak where the GPU has it, weight-only elsewhere", "[perf][fp4]") {
    GpuSpec blackwell = test_gpu();  // B200's catalog rates (TFLOPS): bf16 2250, fp8 4500, fp4 9000
    blackwell.id = "TEST-B200";
    blackwell.dense_flops_per_s[static_cast<std::size_t>(Precision::bf16)] = 2250e12;
    blackwell.dense_flops_per_s[static_cast<std::size_t>(Precision::fp8)] = 4500e12;
    blackwell.dense_flops_per_s[static_cast<std::size_t>(Precision::fp4)] = 9000e12;
    GpuSpec hopper = test_gpu();  // H100 SXM: bf16 989.5, fp8 1979, no FP4 path
    hopper.id = "TEST-H100";
    hopper.dense_flops_per_s[static_cast<std::size_t>(Precision::bf16)] = 989.5e12;
    hopper.dense_flops_per_s[static_cast<std::size_t>(Precision::fp8)] = 1979e12;
    GpuSpec amd = blackwell;  // an FP4 path that takes only the OCP MX scales
    amd.id = "TEST-AMD";
    amd.vendor = "amd";
    const EfficiencyTable table = test_efficiency();
    const auto peak = [&](const char* weights, const GpuSpec& gpu, ServingStack stack, Precision precision,
                          bool& eight_bit, std::vector<std::string>& notes) {
        Workload workload = inference_workload(1, 1, 1);
        workload.weights = *parse_weight_format(weights);
        const perf_detail::Setting setting{workload, gpu,   table.defaults, table.platform,     Layout{},
                                           stack,    notes, precision,      Checkpointing::none};
        return perf_detail::inference_peak(setting, eight_bit);
    };
    bool eight_bit = false;
    std::vector<std::string> notes;
    // NVFP4 (W4A4) on Blackwell: the FP4 peak, with the 8-bit fraction and a note naming the path.
    CHECK(peak("nvfp4", blackwell, ServingStack::optimized, Precision::bf16, eight_bit, notes) == 9000e12);
    CHECK(eight_bit);
    REQUIRE(notes.size() == 1);
    CHECK_THAT(notes[0], Contains("nvfp4 weights and activations: the GEMMs at TEST-B200's FP4 peak (9000 TFLOPS)"));
    // MXFP4 × MXFP8 on Blackwell: the FP8 peak.
    notes.clear();
    CHECK(peak("mxfp4", blackwell, ServingStack::optimized, Precision::bf16, eight_bit, notes) == 4500e12);
    CHECK(eight_bit);
    CHECK_THAT(notes.at(0), Contains("FP8 peak (4500 TFLOPS)"));
    // Hopper: weight-only, the 16-bit peak (or FP8 when the compute precision is FP8).
    notes.clear();
    CHECK(peak("nvfp4", hopper, ServingStack::optimized, Precision::bf16, eight_bit, notes) == 989.5e12);
    CHECK_FALSE(eight_bit);
    CHECK_THAT(notes.at(0), Contains("nvfp4 weights weight-only on TEST-H100 (no FP4 tensor path for it in the "
                                     "catalog): dequantized inside the GEMM, read at 4.5 bits, multiplied at the "
                                     "16-bit peak"));
    notes.clear();
    CHECK(peak("mxfp4", hopper, ServingStack::optimized, Precision::fp8, eight_bit, notes) == 1979e12);
    CHECK(eight_bit);
    CHECK_THAT(notes.at(0), Contains("read at 4.25 bits, multiplied at the FP8 peak"));
    // Eager PyTorch has no FP4 GEMMs even on Blackwell; NVFP4 has no path on an MX-only FP4 unit.
    notes.clear();
    CHECK(peak("nvfp4", blackwell, ServingStack::eager, Precision::bf16, eight_bit, notes) == 2250e12);
    CHECK_THAT(notes.at(0), Contains("(this stack has no FP4 GEMMs)"));
    CHECK(peak("nvfp4", amd, ServingStack::optimized, Precision::bf16, eight_bit, notes) == 2250e12);
    CHECK(peak("mxfp4", amd, ServingStack::optimized, Precision::bf16, eight_bit, notes) == 4500e12);
    // FP8 block-scaled weights run FP8 GEMMs like per-tensor FP8.
    CHECK(peak("fp8-block", hopper, ServingStack::optimized, Precision::bf16, eight_bit, notes) == 1979e12);
    CHECK(eight_bit);
}

TEST_CASE("perf::NVFP4 decode streams 4.5 bits per weight, prefill runs at the FP4 peak", "[perf][fp4]") {
    GpuSpec gpu = test_gpu();
    gpu.dense_flops_per_s[static_cast<std::size_t>(Precision::fp8)] = 624e12;
    gpu.dense_flops_per_s[static_cast<std::size_t>(Precision::fp4)] = 1248e12;
    Workload workload = inference_workload(2048, 128, 0.001);
    workload.weights = WeightFormat::nvfp4;
    // Matmul weights: 6.608928e9 params × 4.5 / 8 = 3.717522e9 bytes (fp16: 13.217856e9).
    CHECK_THAT(weight_bytes(workload), WithinRel(3.717522e9, 1e-12));
    EfficiencyTable table = test_efficiency();
    table.defaults.prefill_compute_8bit = 0.5;
    const PerfEstimate estimate = run(workload, gpu, table);
    REQUIRE(estimate.inference);
    // GEMMs: 2048 · 2 · 6.608928e9 FLOPs over 1248e12 × 0.5 = 43.4 ms; attention at the 16-bit peak
    // 2·32·2048²·4096 / (312e12 × 0.5) = 7.0 ms; floors and element-wise kernels a few ms more.
    const double gemm_s = 2048 * 2 * 6.608928e9 / (1248e12 * 0.5);
    const double attention_s = 2.0 * 32 * 2048.0 * 2048 * 4096 / (312e12 * 0.5);
    CHECK(estimate.inference->ttft_s >= gemm_s + attention_s);
    // The same prompt with fp16 weights runs its GEMMs at 312e12 × 0.73: 118.8 ms. Attention, the
    // element-wise kernels and the floors are the same, so TTFT drops by the GEMMs' difference,
    // 75.4 ms, less what the GEMM curve loses at the higher peak (half work 4× larger).
    const PerfEstimate sixteen = run(inference_workload(2048, 128, 0.001), gpu, table);
    REQUIRE(sixteen.inference);
    const double gemm_difference_s = 2048 * 2 * 6.608928e9 / (312e12 * 0.73) - gemm_s;
    const double drop_s = sixteen.inference->ttft_s - estimate.inference->ttft_s;
    CAPTURE(drop_s, gemm_difference_s, estimate.inference->ttft_s);
    CHECK(drop_s <= gemm_difference_s);
    CHECK(drop_s >= 0.95 * gemm_difference_s);
    CHECK(std::find_if(estimate.notes.begin(), estimate.notes.end(), [](const std::string& note) {
              return note.find("FP4 peak (1248 TFLOPS)") != std::string::npos;
          }) != estimate.notes.end());
}

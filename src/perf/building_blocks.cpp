// Communication, roofline and queueing primitives of the performance model, and the model
// quantities (bytes and FLOPs per token) every phase shares. Sources: docs/perf-model.md.

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "base/text.hpp"
#include "perf/perf.hpp"

namespace gpusel {

namespace {
// Rows at which a GEMM is half a tensor-core tile kernel (tiles of 64-128 rows) and half a
// GEMV/split-K kernel; docs/perf-model.md, "Per-operator steps".
constexpr double skinny_rows = 32;
}  // namespace

double ring_all_reduce_s(double bytes, int ranks, double bytes_per_s, double latency_s) {
    if (ranks <= 1 || bytes <= 0) {
        return 0;
    }
    // A ring all-reduce is a reduce-scatter plus an all-gather: 2(n−1) steps, each moving B/n
    // per GPU (docs/reference/formulas.md, "Communication").
    const double n = ranks;
    return 2.0 * (n - 1) / n * bytes / bytes_per_s + 2.0 * (n - 1) * latency_s;
}

double ring_all_gather_s(double bytes, int ranks, double bytes_per_s, double latency_s) {
    if (ranks <= 1 || bytes <= 0) {
        return 0;
    }
    const double n = ranks;
    return (n - 1) / n * bytes / bytes_per_s + (n - 1) * latency_s;
}

double pipeline_bubble_fraction(int stages, int micro_batches, int virtual_stages) {
    if (stages <= 1) {
        return 0;
    }
    const double bubble = (stages - 1.0) / std::max(1, virtual_stages);
    const double m = std::max(1, micro_batches);
    return bubble / (m + bubble);
}

double gemm_efficiency_for_shape(double m, double n, double k, double peak_flops_per_s, double plateau,
                                 double half_time_s) {
    const double flops = 2 * m * n * k;
    if (!(flops > 0) || !(peak_flops_per_s > 0)) {
        return 0;
    }
    return plateau * flops / (flops + peak_flops_per_s * std::max(0.0, half_time_s));
}

double training_gemm_time_s(double m, double n, double k, const TrainingGemmRates& rates) {
    const double flops = 2 * m * n * k;
    if (!(flops > 0)) {
        return 0;
    }
    // F / (peak · plateau · F / (F + peak · τ)) written without the division by the efficiency.
    const double compute_s =
        (flops + rates.peak_flops_per_s * std::max(0.0, rates.half_time_s)) / (rates.peak_flops_per_s * rates.plateau);
    const double memory_s = (m * k + k * n + m * n) * rates.element_bytes / rates.bytes_per_s;
    return std::max({compute_s, memory_s, rates.floor_s});
}

namespace {
// The floor is reached from 4 ranks on (VIDUR all_reduce.csv: 2 K elements, 7 µs on 2 H100s,
// 37-38 µs on 4 and 8).
double collective_floor_s(int ranks, double floor_s) {
    return floor_s * std::min(1.0, (ranks - 1) / 3.0);
}
}  // namespace

double all_reduce_s(double bytes, int ranks, const CollectiveLink& link) {
    if (ranks <= 1 || bytes <= 0) {
        return 0;
    }
    const double n = ranks;
    return 2.0 * (n - 1) / n * bytes / link.bus_bytes_per_s + collective_floor_s(ranks, link.floor_s) +
           2.0 * (n - 1) * link.step_latency_s;
}

double all_gather_s(double bytes, int ranks, const CollectiveLink& link) {
    if (ranks <= 1 || bytes <= 0) {
        return 0;
    }
    const double n = ranks;
    return (n - 1) / n * bytes / link.bus_bytes_per_s + collective_floor_s(ranks, link.floor_s) +
           (n - 1) * link.step_latency_s;
}

double all_to_all_s(double bytes_sent, int ranks, const CollectiveLink& link) {
    if (ranks <= 1) {
        return 0;
    }
    // Every rank sends to every other at once over its own link (NVSwitch, rail-optimised
    // networks): one step, its bytes at the bus bandwidth.
    return bytes_sent / link.bus_bytes_per_s + collective_floor_s(ranks, link.floor_s) + link.step_latency_s;
}

CollectiveLink collective_link(const LinkTier& link, const GpuSpec& gpu, const EfficiencyFactors& factors) {
    if (link.nvlink) {
        return CollectiveLink{gpu.interconnect.bidirectional_bytes_per_s / 2 * factors.collective_bus,
                              factors.collective_latency_s, 0};
    }
    return CollectiveLink{link.bytes_per_s, 0, link.latency_s};
}

CollectiveLink spread_over_nics(CollectiveLink collective, const LinkTier& link, int ranks_per_node) {
    if (link.network && ranks_per_node > 1) {
        collective.bus_bytes_per_s *= ranks_per_node;
    }
    return collective;
}

double roofline_time_s(double compute_s, double memory_s) {
    // Near the ridge point kernels reach neither ceiling; the 2-norm matches the max() far
    // from it and the measured TensorRT-LLM static-batch steps near it (docs/reference/perf_cases.md B1, B7,
    // lmdeploy D5), where max() is 18-28 % optimistic.
    // sqrt(a² + b²) rather than std::hypot: the times are far from overflow or underflow, and
    // hypot's scaling made it a tenth of a serving plan's cost; the two differ by an ulp.
    return std::sqrt(compute_s * compute_s + memory_s * memory_s);
}

double gemm_efficiency(double rows, double columns, double inner, const GemmRates& rates) {
    if (rows <= 0 || columns <= 0 || inner <= 0) {
        return 0;
    }
    // docs/reference/perf_modelling.md §1.2 (Vidur mlp.csv, FP16 up/gate GEMMs): large GEMMs
    // plateau at 0.68-0.79 of the dense peak on A40, A100 and H100 alike, and a small one (512
    // tokens × 2,752 columns × 4,096) reaches 0.64 on A40/A100 but 0.43 on H100: the half point
    // grows with the peak, 7.8 µs of peak work from the H100 reading, which gives 0.60 on A100 and
    // 0.65 on A40.
    // Skinny GEMMs (decode: a few rows) run as GEMV / split-K kernels that spread K over the SMs
    // instead of filling output tiles, so the unfilled-wave penalty fades below ~32 rows: at 8
    // tokens all three GPUs of §1.2 run at the weight stream (0.48-0.92 of DRAM bandwidth).
    const double tile_share = rows / (rows + skinny_rows);
    return gemm_efficiency_for_shape(rows, columns, inner, rates.peak_flops_per_s, rates.plateau,
                                     rates.half_work_s * tile_share);
}

namespace {
// (a³ + b³)^(1/3) for a, b >= 0, to within a few units in the last place: the larger term times
// the cube root of 1 + r³ (r = the ratio, so the root's argument lies in [1, 2]), from a linear
// first guess (error < 3 %) and two Halley steps (cubic convergence: 3e-2 → 1e-5 → 1e-16).
// std::cbrt is the serving search's single largest cost (a dozen GEMMs per decode step, tens of
// thousands of steps per plan) and needs no more than this precision here.
double cube_norm(double a, double b) {
    const double larger = std::max(a, b);
    if (!(larger > 0) || !std::isfinite(larger)) {
        return std::cbrt(a * a * a + b * b * b);
    }
    const double ratio = std::min(a, b) / larger;
    const double argument = 1 + ratio * ratio * ratio;
    double root = 0.74 + 0.26 * argument;
    for (int step = 0; step < 2; ++step) {
        const double cube = root * root * root;
        root *= (cube + 2 * argument) / (2 * cube + argument);
    }
    return larger * root;
}
}  // namespace

GemmTime gemm_timing(double rows, double columns, double inner, double weight_bytes, const GemmRates& rates) {
    if (rows <= 0 || columns <= 0 || inner <= 0) {
        return {};
    }
    const double compute_s =
        2 * rows * columns * inner / (rates.peak_flops_per_s * gemm_efficiency(rows, columns, inner, rates));
    // Skinny (decode) GEMMs stream the weight: bytes / bandwidth plus a kernel floor reproduces
    // 0.45-0.55 of DRAM bandwidth at ~20 MB and 0.8-0.92 at >= 100 MB (§1.2 readings (c)).
    const double memory_s = weight_bytes / rates.bandwidth_bytes_per_s + rates.kernel_floor_s;
    // The cube norm: max() far from the ridge point, 1.26 × max() on it (A100 128-token GEMMs of
    // §1.2 sit there and run 1.2-1.4 × slower than either bound).
    return {cube_norm(compute_s, memory_s), compute_s};
}

double gemm_time_s(double rows, double columns, double inner, double weight_bytes, const GemmRates& rates) {
    return gemm_timing(rows, columns, inner, weight_bytes, rates).time_s;
}

namespace {
// The root of map(x) − x between `low` (residual > 0) and `high` (residual <= 0), by regula falsi
// with the Illinois halving of a stale end; returned as map(root) (plain iteration's convention).
double bracketed_fixed_point(const std::function<double(double)>& map, double low, double low_residual, double high,
                             double high_residual) {
    int last_moved = 0;  // +1: low moved last, −1: high moved last
    for (int iteration = 0; iteration < 100 && high_residual < 0; ++iteration) {
        double x = high - high_residual * (high - low) / (high_residual - low_residual);
        if (!(x > low && x < high)) {
            x = (low + high) / 2;
        }
        const double residual = map(x) - x;
        if (std::abs(residual) <= 1e-12 * std::max(1.0, x) || high - low <= 1e-12 * std::max(1.0, high)) {
            return x + residual;
        }
        if (residual > 0) {
            low = x;
            low_residual = residual;
            high_residual /= last_moved == 1 ? 2 : 1;
            last_moved = 1;
        } else {
            high = x;
            high_residual = residual;
            low_residual /= last_moved == -1 ? 2 : 1;
            last_moved = -1;
        }
    }
    return high;
}
}  // namespace

std::optional<int> smallest_holding(int from, int most, const std::function<bool(int)>& holds) {
    int high = std::max(1, from);
    while (!holds(high)) {
        if (high >= most) {
            return std::nullopt;
        }
        high *= 2;
    }
    int low = high == from ? from : high / 2 + 1;
    while (low < high) {
        const int middle = low + (high - low) / 2;
        if (holds(middle)) {
            high = middle;
        } else {
            low = middle + 1;
        }
    }
    return high;
}

std::optional<double> smallest_fixed_point(const std::function<double(double)>& map, double from, double limit) {
    // An increasing map iterated from below its smallest fixed point x* climbs to x* (never past
    // it: x <= x* gives map(x) <= x*), but slowly when map's slope is near 1, as the serving queue's
    // is near capacity (about 25 decode steps per load). Aitken's Δ² on three iterates
    // extrapolates towards x*. Where map(estimate) <= estimate, a crossing lies between the last
    // iterate and the estimate, and regula falsi closes in on it. Where map(estimate) > estimate,
    // the estimate is below x* (always, for a convex map such as a sum of roofline norms) and the
    // climb goes on from there; should it then leave `limit` behind, the estimate may have jumped
    // an unstable second crossing, so plain iteration from the last iterate decides, as the
    // definition does.
    const auto converged = [](double x, double next) { return std::abs(next - x) <= 1e-9 * std::max(1.0, next); };
    double x = from;
    double next = map(x);
    double below = x;  // the last point reached by plain iteration: at or below x*
    double below_next = next;
    bool jumped = false;
    bool accelerate = true;
    for (int iteration = 0; iteration < 400; ++iteration) {
        if (next > limit || (jumped && iteration >= 200)) {
            if (!jumped) {
                return std::nullopt;
            }
            x = below;
            next = below_next;
            jumped = false;
            accelerate = false;
            continue;
        }
        if (converged(x, next)) {
            return next;
        }
        const double after = map(next);
        const double rise = next - x;
        const double second_rise = after - next;
        if (accelerate && after <= limit && rise > 0 && second_rise > 0 && second_rise < rise &&
            !converged(next, after)) {
            const double extrapolated = after + second_rise * second_rise / (rise - second_rise);
            const double estimate = std::min(extrapolated, limit);
            const double at_estimate = map(estimate);
            if (at_estimate <= estimate) {
                return bracketed_fixed_point(map, next, second_rise, estimate, at_estimate - estimate);
            }
            if (extrapolated <= limit) {
                below = next;
                below_next = after;
                jumped = true;
                x = estimate;
                next = at_estimate;
                continue;
            }
            accelerate = false;
        }
        x = next;
        next = after;
        if (!jumped) {
            below = x;
            below_next = next;
        }
    }
    return next;
}

double erlang_c_wait_probability(int servers, double load) {
    if (servers <= 0 || load >= servers) {
        return 1;
    }
    if (load <= 0) {
        return 0;
    }
    // Far below capacity the answer is negligible, and cheaper to bound than to compute: with
    // X ~ Poisson(a), B(c) = P(X = c) / P(X <= c), and P(X <= c) >= 1/2 once c >= a + 1 (the
    // median of a Poisson lies below a + 1/3), so C <= c/(c − a) · 2 · e^−a · a^c / c!.
    const double c_minus_a = servers - load;
    if (c_minus_a >= 1) {
        const double log_bound =
            std::log(2.0 * servers / c_minus_a) - load + servers * std::log(load) - std::lgamma(servers + 1.0);
        if (log_bound < std::log(1e-30)) {
            return 0;
        }
    }
    // Erlang B by its stable recursion on the reciprocal, 1/B(k) = 1 + (k/a)·1/B(k − 1) (one
    // multiply-add per server, not a division: the queue model calls this for thousands of slots
    // per load point), then C = c·B / (c − a(1 − B)). Past the load the reciprocal only grows;
    // once it passes 1e250 the wait probability is below 1e-250, zero for every percentile.
    //
    // Far below the load the reciprocal sits at the recursion's fixed point a/(a − k), and the
    // recursion forgets where it started: an error at k0 = a − 12√a shrinks by
    // Π k/a ≈ e^(−12²/2) ≈ 1e-31 by k = a. So a large load starts there, and the loop runs
    // O(√a) steps rather than one per server (2^20 replicas × 107 slots took 48 s, issue 38);
    // loads below 4096 start at 1 as before, bit for bit.
    int first = 1;
    double inverse_b = 1;
    if (const double fixed_from = load - 12 * std::sqrt(load); fixed_from > 4096) {
        const int start = static_cast<int>(fixed_from);
        inverse_b = load / (load - start);
        first = start + 1;
    }
    const double inverse_load = 1 / load;
    for (int k = first; k <= servers; ++k) {
        inverse_b = 1 + k * inverse_load * inverse_b;
        if (inverse_b > 1e250) {
            return 0;
        }
    }
    const double erlang_b = 1 / inverse_b;
    const double c = servers;
    return c * erlang_b / (c - load * (1 - erlang_b));
}

namespace {

// "pcie5": formatted once per generation (every layout the search tries asks, thousands per plan).
std::string pcie_link_name(int generation) {
    constexpr int named = 10;
    static const std::array<std::string, named> names = [] {
        std::array<std::string, named> list;
        for (int index = 0; index < named; ++index) {
            list[static_cast<std::size_t>(index)] = fmt::format("pcie{}", index);
        }
        return list;
    }();
    return generation >= 0 && generation < named ? names[static_cast<std::size_t>(generation)]
                                                 : fmt::format("pcie{}", generation);
}

}  // namespace

LinkTier link_for_group(const Workload& workload, const GpuSpec& gpu, int group_size, const EfficiencyFactors& factors,
                        const PlatformFactors& platform) {
    const double pcie_bytes_per_s = gpu.host_link_bytes_per_s() * factors.host_link;
    const LinkTier pcie{pcie_link_name(gpu.host_link_generation), pcie_bytes_per_s, factors.pcie_latency_s};
    const NetworkKind requested = workload.deployment.interconnect;
    LinkTier in_node = pcie;
    // Vendors print NVLink bandwidth bidirectional; one direction carries half (docs/reference/formulas.md).
    if (gpu.has_gpu_interconnect() && requested != NetworkKind::pcie &&
        std::min(group_size, workload.constraints.gpus_per_node) <= gpu.interconnect.domain_size) {
        in_node = LinkTier{gpu.interconnect.kind, gpu.interconnect.bidirectional_bytes_per_s / 2 * factors.interconnect,
                           factors.nvlink_latency_s, true};
    }
    if (group_size <= workload.constraints.gpus_per_node) {
        return in_node;
    }
    in_node.nvlink = false;
    bool infiniband = requested == NetworkKind::infiniband;
    if (requested == NetworkKind::automatic || requested == NetworkKind::nvlink || requested == NetworkKind::pcie) {
        // SXM/OAM servers ship with one InfiniBand port per GPU (DGX/HGX reference designs);
        // PCIe servers usually with Ethernet.
        infiniband = gpu.form_factor == FormFactor::sxm || gpu.form_factor == FormFactor::oam;
    }
    const double network_bytes_per_s =
        (infiniband ? platform.infiniband_bytes_per_s_per_gpu : platform.ethernet_bytes_per_s_per_gpu) *
        factors.network;
    // A hierarchical collective is as slow as its slowest hop.
    if (in_node.bytes_per_s < network_bytes_per_s) {
        return LinkTier{in_node.name + "+" + (infiniband ? "infiniband" : "ethernet"), in_node.bytes_per_s,
                        factors.network_latency_s};
    }
    return LinkTier{infiniband ? "infiniband" : "ethernet", network_bytes_per_s, factors.network_latency_s, false,
                    true};
}

double matmul_params(const ModelSpec& model) {
    const double active = model.active_params > 0 ? model.active_params : model.params;
    if (!model.is_transformer() || model.vocab <= 0 || model.tied_embeddings) {
        return active;
    }
    // The input embedding is a table lookup, not a matrix multiply, and is read one row per token.
    const double input_embedding = static_cast<double>(model.vocab) * model.hidden;
    return std::max(active - input_embedding, active * 0.5);
}

double weight_bytes(const Workload& workload) {
    return matmul_params(workload.model) * bits_per_weight(workload.weights) / 8.0;
}

double kv_bytes_per_token(const Workload& workload) {
    const ModelSpec& model = workload.model;
    if (!model.is_transformer()) {
        return 0;
    }
    // The average over a sequence of the workload's whole context: sliding-window layers stop
    // growing at the window (models.hpp).
    const double context = std::max(workload.inference.input_tokens + workload.inference.output_tokens, 1);
    return kv_cache_bytes_per_sequence(model, element_bytes(workload.kv_cache), context) / context;
}

std::string resolve_engine(const Workload& workload, ServingStack stack, std::string_view requested) {
    if (!requested.empty()) {
        return to_lower(std::string(requested));
    }
    if (stack == ServingStack::llama_cpp) {
        return "llama.cpp";
    }
    if (stack == ServingStack::eager) {
        return "hf-generate";
    }
    if (workload.runtime.engine == Engine::automatic || workload.runtime.engine == Engine::llama_cpp ||
        workload.runtime.engine == Engine::hf_generate) {
        return "";
    }
    return std::string(to_string(workload.runtime.engine));
}

ServingStack resolve_stack(const Workload& workload, ServingStack requested) {
    if (requested != ServingStack::automatic) {
        return requested;
    }
    // The engine named in the workload runs the model.
    if (workload.runtime.engine == Engine::hf_generate) {
        return ServingStack::eager;
    }
    if (workload.runtime.engine == Engine::llama_cpp) {
        return ServingStack::llama_cpp;
    }
    switch (workload.weights) {
        case WeightFormat::q4_0:
        case WeightFormat::q4_k_m:
        case WeightFormat::q8_0:
            return ServingStack::llama_cpp;
        default:
            break;
    }
    // CNNs, recommenders and diffusion pipelines are served compiled (TensorRT, ONNX Runtime,
    // torch.compile) like LLMs; eager PyTorch is `--stack eager` or runtime.engine hf-generate.
    return ServingStack::optimized;
}

std::string_view to_string(ObservedBottleneck bottleneck) {
    for (const auto& [entry, name] : observed_bottleneck_names) {
        if (entry == bottleneck) {
            return name;
        }
    }
    return "?";
}

std::optional<ObservedBottleneck> parse_observed_bottleneck(std::string_view name) {
    for (const auto& [entry, entry_name] : observed_bottleneck_names) {
        if (entry_name == name) {
            return entry;
        }
    }
    return std::nullopt;
}

ObservedBottleneck from_resource(Resource resource) {
    switch (resource) {
        case Resource::compute:
            return ObservedBottleneck::compute;
        case Resource::memory_bandwidth:
            return ObservedBottleneck::memory_bandwidth;
        case Resource::memory_capacity:
            return ObservedBottleneck::memory_capacity;
        case Resource::interconnect:
            return ObservedBottleneck::communication;
        case Resource::host_link:
            return ObservedBottleneck::host_transfer;
        case Resource::input_pipeline:
            return ObservedBottleneck::input_pipeline;
        case Resource::launch_overhead:
            return ObservedBottleneck::launch_overhead;
    }
    return ObservedBottleneck::compute;  // unreachable: every Resource is a case above
}

std::string_view to_string(Resource resource) {
    return to_string(from_resource(resource));
}

std::string_view to_string(BottleneckPhase phase) {
    switch (phase) {
        case BottleneckPhase::none:
            return "";
        case BottleneckPhase::step:
            return "step";
        case BottleneckPhase::full_batch:
            return "full batch";
        case BottleneckPhase::prefill:
            return "prefill";
        case BottleneckPhase::decode:
            return "decode";
        case BottleneckPhase::memory:
            return "memory";
    }
    return "?";
}

std::string_view to_string(SloTarget target) {
    switch (target) {
        case SloTarget::capacity:
            return "capacity";
        case SloTarget::ttft:
            return "ttft";
        case SloTarget::tpot:
            return "tpot";
        case SloTarget::e2e:
            return "e2e";
    }
    return "?";
}

Bottleneck binding_resource(const ResourceTimes& times) {
    Bottleneck result;
    const double total = times.total_s();
    if (!(total > 0)) {
        return result;
    }
    const std::pair<Resource, double> slices[] = {
        {Resource::compute, times.compute_s},
        {Resource::memory_bandwidth, times.memory_bandwidth_s},
        {Resource::interconnect, times.interconnect_s},
        {Resource::host_link, times.host_link_s},
        {Resource::input_pipeline, times.input_pipeline_s},
        {Resource::launch_overhead, times.launch_overhead_s},
    };
    double largest = -1;
    for (const auto& [resource, seconds] : slices) {
        if (seconds > largest) {
            largest = seconds;
            result.resource = resource;
        }
    }
    result.share = largest / total;
    // nvidia-smi counts a GPU busy while any kernel runs; NCCL kernels count, waits on the
    // host, the input pipeline and launch gaps do not.
    result.gpu_utilization =
        std::clamp(1 - (times.input_pipeline_s + times.host_link_s + times.launch_overhead_s) / total, 0.0, 1.0);
    return result;
}

}  // namespace gpusel

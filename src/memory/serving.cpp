// Paged serving engines' start-up memory arithmetic (vLLM, SGLang, TensorRT-LLM).
// Mechanism and measured cases: docs/reference/serving_memory_cases.md §2–3;
// constants and their basis: docs/memory-model.md, "Serving engines".

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "base/format.hpp"
#include "base/units.hpp"
#include "inputs/length_distribution.hpp"
#include "memory/memory.hpp"
#include "memory/terms.hpp"

namespace gpusel {

namespace {

// cudaMemGetInfo reports about 1 % less than the nominal size as total (79.19 GiB of an 80 GiB
// H100 80GB HBM3 in every v0.19 log, 79.18 in the v0.11 rows): the engines' fractions apply to it.
constexpr double driver_visible_fraction = 0.99;
// Memory outside PyTorch measured in the profiling run (vLLM v0.19 H100 rows D-05…D-52): ≈0.25 GiB
// on one GPU (context growth, cuBLAS workspace); ≈2.1 GiB with tensor parallelism, NCCL and the
// custom all-reduce buffers (2.06–2.21 GiB at TP2 and TP4).
constexpr double non_torch_single_bytes = 0.25 * bytes_per_gib;
constexpr double non_torch_tensor_parallel_bytes = 2.1 * bytes_per_gib;
// The profiling run samples one token for each of max_num_seqs dummy requests: fp32 logits and the
// sampler's fp32 probabilities and sort temporaries, ≈10 B per logit. Calibrated on two rows that
// differ mostly in vocabulary (D-05 CodeLlama-7b 32k vocab, D-24 Llama-3.1-8B 128k: 8.7 and 10.1 B);
// every other row is a test.
constexpr double sampler_bytes_per_logit = 10.0;

// vLLM V1 defaults for the OpenAI server (vllm/engine/arg_utils.py, _set_default_args): GPUs with
// ≥ 70 GiB other than the A100 get max_num_batched_tokens 8192 and max_num_seqs 1024, others 2048
// and 256 (the A100 80GB rows D-01…D-04 print 2048; the H100 rows 8192).
bool large_gpu(const GpuSpec& gpu) {
    const bool a100 = gpu.id.find("A100") != std::string::npos;
    return gpu.memory_bytes >= 70 * bytes_per_gib && !a100;
}

// SGLang's mem_fraction_static when not set (server_args.py _handle_gpu_memory_settings, from
// v0.5.4: sgl-project/sglang PR #10975, "General heuristics for --mem-fraction-static"; the
// InferenceX rows ran v0.5.5-v0.5.12): (G − R) / G, G the device's memory in MiB and R the MiB
// kept for activations and CUDA graphs: 512 + 1.5 × the chunked-prefill size (at least 2048) +
// 2 × the largest CUDA-graph batch + 1024 × TP·PP / 8; under DP attention 3 × that batch × the
// DP size more (4.5 × above a batch of 300); at least 10 GiB on a device over 60 GiB; an EAGLE or
// MTP draft 2 GiB more. Rounded to three decimals, as the engine does. The chunk and the batch
// follow the device's memory (the same function): under 20 GiB 2k and 8; under 35 GiB 2k and
// 24 (80 from TP4); under 60 GiB 4k and 32 (160 from TP4); under 160 GiB 8k and 256 (512 from
// TP4); beyond, 16k and 512. Before v0.5.4 it was a table by TP size (0.88 at TP1 to 0.81 at TP8).
double sglang_memory_fraction(const Workload& workload, double device_bytes, const Layout& layout) {
    const double memory_mib = device_bytes / bytes_per_mib;
    const int t = std::max(1, layout.tensor_parallel);
    const int p = std::max(1, layout.pipeline_parallel);
    double chunk = 16384;
    double graph_batch = 512;
    if (memory_mib < 20 * 1024) {
        chunk = 2048;
        graph_batch = 8;
    } else if (memory_mib < 35 * 1024) {
        chunk = 2048;
        graph_batch = t < 4 ? 24 : 80;
    } else if (memory_mib < 60 * 1024) {
        chunk = 4096;
        graph_batch = t < 4 ? 32 : 160;
    } else if (memory_mib < 160 * 1024) {
        chunk = 8192;
        graph_batch = t < 4 ? 256 : 512;
    }
    if (workload.runtime.max_num_batched_tokens > 0) {
        chunk = workload.runtime.max_num_batched_tokens;  // docs/workload.md: SGLang's chunked_prefill_size
    }
    double reserved_mib = 512 + std::max(chunk, 2048.0) * 1.5 + graph_batch * 2 + t * p / 8.0 * 1024;
    if (workload.inference.dp_attention) {
        reserved_mib += graph_batch * t * (graph_batch > 300 ? 4.5 : 3.0);
    }
    if (memory_mib > 60 * 1024) {
        reserved_mib = std::max(reserved_mib, 10.0 * 1024);
    }
    if (workload.runtime.speculative.enabled()) {
        reserved_mib += 2 * 1024;
    }
    return std::round((memory_mib - reserved_mib) / memory_mib * 1000) / 1000;
}

double default_fraction(const Workload& workload, double device_bytes, const Layout& layout) {
    switch (workload.runtime.engine) {
        case Engine::sglang:
            return sglang_memory_fraction(workload, device_bytes, layout);
        case Engine::tensorrt_llm:
            return 0.9;  // KvCacheConfig.free_gpu_memory_fraction default (of the memory still free)
        default:
            return 0.9;  // vLLM --gpu-memory-utilization default
    }
}

int default_block_size(Engine engine) {
    switch (engine) {
        case Engine::sglang:
            return 1;  // SGLang's token-to-KV pool: pages of one token (page_size 1)
        case Engine::tensorrt_llm:
            return 32;  // KvCacheConfig tokens_per_block default
        default:
            return 16;  // vLLM CUDA default --block-size
    }
}

// Activation peak of the profiling step: the largest per-layer transient of a batch of
// max_num_batched_tokens tokens (the FFN's gate/up output and its activation, 3 × ffn wide for
// gated FFNs, 2 × otherwise, times the experts each token visits), plus the sampler's logits for
// min(max_num_seqs, tokens) sequences. It does not grow with the layers (freed layer by layer)
// nor shrink with TP for the sampler (logits are gathered on every rank).
double activation_peak(const Workload& workload, Precision precision, const Layout& layout, int batched_tokens,
                       int sequences) {
    const ModelSpec& model = workload.model;
    const memory_detail::TransformerWidths w = memory_detail::transformer_widths(model);
    const double compute_bytes = memory_detail::activation_element_bytes(precision);
    const double ffn_tensors = model.ffn_gated ? 3.0 : 2.0;
    const double forward = static_cast<double>(batched_tokens) * w.moe_top_k * ffn_tensors * w.ffn /
                           std::max(layout.tensor_parallel, 1) * compute_bytes;
    const double sampler =
        static_cast<double>(std::min(sequences, batched_tokens)) * model.vocab * sampler_bytes_per_logit;
    return forward + sampler;
}

// This GPU's share of one token's KV cache: its pipeline stage's layers and its KV heads
// (replicated when there are fewer heads than tensor-parallel ranks). MLA caches one latent and
// RoPE key per token and layer for all heads, and every tensor-parallel rank keeps all of it:
// vLLM's MLA backends and SGLang's MLA token pool allocate the whole kv_lora_rank + rope width
// per rank (SGLang's DP-attention guide: "The Problem with Tensor Parallelism for MLA Models",
// the KV cache duplicated on every rank; arXiv:2508.15881 §1). Under DP attention each rank
// holds only its own sequences, whole: per GPU, on average, 1/t of a token.
double kv_bytes_per_token_per_gpu(const Workload& workload, const Layout& layout) {
    const ModelSpec& model = workload.model;
    const memory_detail::TransformerWidths w = memory_detail::transformer_widths(model);
    const double t = std::max(layout.tensor_parallel, 1);
    const double layers_here = std::ceil(static_cast<double>(model.layers) / std::max(layout.pipeline_parallel, 1));
    const double dp_share = workload.inference.dp_attention ? 1 / t : 1.0;
    if (model.is_mla()) {
        return layers_here * (model.kv_lora_rank + model.qk_rope_head_dim) * element_bytes(workload.kv_cache) *
               dp_share;
    }
    const double kv_heads = model.kv_heads > 0 ? model.kv_heads : model.heads;
    const double head_dim = w.kv_width / kv_heads;
    const double heads_here = workload.inference.dp_attention ? kv_heads : std::ceil(kv_heads / t);
    return 2.0 * layers_here * heads_here * head_dim * element_bytes(workload.kv_cache) * dp_share;
}

// calibration.serving_memory: what the engine printed at start-up on this GPU at this
// tensor-parallel size replaces the estimated weights, activation peak and non-torch terms (the
// KV pool is then what is left, as the engine computes it). A replica with pipeline stages holds
// other layers per GPU than the measured one, so it keeps the estimate.
// Returns the point taken, nullptr when none applies.
const ServingMemoryCalibrationPoint* take_measured_terms(const Workload& workload, const GpuSpec& gpu,
                                                         const Layout& layout, ServingMemory& s) {
    if (std::max(layout.pipeline_parallel, 1) > 1) {
        return nullptr;
    }
    for (const ServingMemoryCalibrationPoint& point : workload.calibration.serving_memory) {
        if (point.gpu != gpu.id || point.tensor_parallel != std::max(layout.tensor_parallel, 1)) {
            continue;
        }
        const std::string from = point.from.empty() ? std::string("calibration.serving_memory") : point.from;
        const auto take = [&](std::string_view term, double measured, double& term_bytes) {
            if (measured <= 0) {
                return;
            }
            // In GB like the other notes, with the figure as the engine printed it (GiB).
            s.measured.push_back(fmt::format("{} {:.2f} GB measured ({}: {:.2f} GiB), estimate was {:.2f} GB", term,
                                             measured / 1e9, from, measured / bytes_per_gib, term_bytes / 1e9));
            term_bytes = measured;
        };
        take("weights", point.weights_bytes, s.weights_bytes);
        take("activation peak", point.activation_peak_bytes, s.activation_peak_bytes);
        take("non-torch memory", point.non_torch_bytes, s.non_torch_bytes);
        return &point;  // the first point for this GPU and size
    }
    return nullptr;
}

}  // namespace

bool uses_serving_engine(const Workload& workload) {
    return workload.kind == WorkloadKind::inference && is_paged_engine(workload.runtime.engine) &&
           workload.model.is_transformer() && workload.model.family != ModelFamily::encoder;
}

std::optional<ServingMemory> serving_memory(const Workload& workload, const GpuSpec& gpu, const Layout& layout,
                                            std::optional<Precision> precision) {
    if (!uses_serving_engine(workload)) {
        return std::nullopt;
    }
    const RuntimeSpec& runtime = workload.runtime;
    ServingMemory s;
    s.engine = runtime.engine;
    s.device_total_bytes = gpu.memory_bytes * driver_visible_fraction;
    // Unless set, the engine's fraction leaves the workload's memory headroom free (the 10 % default
    // headroom is vLLM's 0.9); TensorRT-LLM's applies to free memory and keeps its default.
    double fraction = default_fraction(workload, s.device_total_bytes, layout);
    if (runtime.engine != Engine::tensorrt_llm) {
        fraction = std::min(fraction, 1.0 - workload.constraints.memory_headroom_fraction);
    }
    s.memory_fraction = runtime.gpu_memory_utilization > 0 ? runtime.gpu_memory_utilization : fraction;
    s.block_size = runtime.block_size > 0 ? runtime.block_size : default_block_size(runtime.engine);
    const bool large = large_gpu(gpu);
    s.max_num_batched_tokens =
        runtime.max_num_batched_tokens > 0 ? runtime.max_num_batched_tokens : (large ? 8192 : 2048);
    s.max_num_seqs = runtime.max_num_seqs > 0 ? runtime.max_num_seqs : (large ? 1024 : 256);
    // With a request-length distribution, the engine must accept its longest bins, not the mean.
    s.max_model_len = runtime.max_model_len > 0 ? runtime.max_model_len : longest_request_tokens(workload.inference);

    // Weights as loaded: no dequantized copy (Marlin/Machete and fp8 kernels read the packed weights).
    const ParameterSplit split = split_parameters(workload.model);
    const memory_detail::ShardParams shard = memory_detail::shard_parameters(workload.model, split, layout);
    s.weights_bytes = memory_detail::stored_weight_bytes(shard, workload.weights);
    if (workload.inference.dp_attention && layout.tensor_parallel > 1) {
        // DP attention keeps the attention projections whole on every rank.
        const double layers_here =
            std::ceil(static_cast<double>(workload.model.layers) / std::max(layout.pipeline_parallel, 1));
        s.weights_bytes += layers_here * attention_params(workload.model) * bits_per_weight(workload.weights) / 8 *
                           (1 - 1.0 / layout.tensor_parallel);
    }
    s.activation_peak_bytes = activation_peak(workload, precision.value_or(workload.precision), layout,
                                              s.max_num_batched_tokens, s.max_num_seqs);
    s.non_torch_bytes = layout.tensor_parallel > 1 ? non_torch_tensor_parallel_bytes : non_torch_single_bytes;
    const ServingMemoryCalibrationPoint* measured = take_measured_terms(workload, gpu, layout, s);
    const double fixed = s.weights_bytes + s.activation_peak_bytes + s.non_torch_bytes;
    switch (s.engine) {
        case Engine::sglang:
            // mem_fraction_static covers the weights and the KV pool; activations and graphs use the rest.
            s.budget_bytes = std::min(s.device_total_bytes, s.memory_fraction * s.device_total_bytes +
                                                                s.activation_peak_bytes + s.non_torch_bytes);
            break;
        case Engine::tensorrt_llm:
            // The fraction applies to what is still free once the weights and runtime buffers are in place.
            s.budget_bytes = fixed + s.memory_fraction * std::max(0.0, s.device_total_bytes - fixed);
            break;
        default:
            s.budget_bytes = s.memory_fraction * s.device_total_bytes;
            break;
    }
    s.kv_bytes_per_token = kv_bytes_per_token_per_gpu(workload, layout);
    const double pool = s.budget_bytes - fixed;
    if (pool > 0 && s.kv_bytes_per_token > 0) {
        s.kv_cache_blocks = static_cast<long long>(std::floor(pool / (s.kv_bytes_per_token * s.block_size)));
        s.kv_cache_tokens = s.kv_cache_blocks * s.block_size;
        s.kv_cache_bytes = static_cast<double>(s.kv_cache_blocks) * s.block_size * s.kv_bytes_per_token;
    }
    if (measured != nullptr && measured->kv_cache_tokens > 0) {
        // Kept as a check, not taken: the pool follows the run's gpu_memory_utilization.
        s.measured.push_back(
            fmt::format("KV cache {} tokens measured ({}, at that run's gpu_memory_utilization), "
                        "estimate {} tokens",
                        measured->kv_cache_tokens,
                        measured->from.empty() ? "calibration.serving_memory" : measured->from, s.kv_cache_tokens));
    }
    s.max_concurrency = static_cast<double>(s.kv_cache_tokens) / std::max(s.max_model_len, 1);
    s.fits = s.kv_cache_tokens >= s.max_model_len;
    if (pool <= 0) {
        // vLLM: "No available memory for the cache blocks. Try increasing `gpu_memory_utilization`".
        s.refusal = fmt::format(
            "no available memory for the cache blocks: weights {} + activation peak {} + "
            "non-torch {} exceed {} ({} × {}); increase gpu_memory_utilization or shard the model",
            format_gb(s.weights_bytes), format_gb(s.activation_peak_bytes), format_gb(s.non_torch_bytes),
            format_gb(s.budget_bytes), s.memory_fraction, format_gb(s.device_total_bytes));
    } else if (!s.fits) {
        // vLLM kv_cache_utils.check_enough_kv_cache_memory wording, with its estimate.
        s.refusal = fmt::format(
            "to serve at least one request with max_model_len ({}), {} KV cache is needed, "
            "larger than the available KV cache memory ({}); the estimated maximum model length "
            "is {}: increase gpu_memory_utilization or decrease max_model_len",
            s.max_model_len, format_gb(s.max_model_len * s.kv_bytes_per_token), format_gb(s.kv_cache_bytes),
            s.kv_cache_tokens);
    }
    return s;
}

int serving_concurrency(const ServingMemory& serving, int context_tokens) {
    if (!serving.fits || context_tokens <= 0) {
        return 0;
    }
    const long long blocks_per_request = (context_tokens + serving.block_size - 1) / serving.block_size;
    const long long requests = serving.kv_cache_blocks / std::max(blocks_per_request, 1LL);
    return static_cast<int>(std::min<long long>(requests, serving.max_num_seqs));
}

}  // namespace gpusel

// Inference: prefill (TTFT) and decode (TPOT) as a roofline with measured efficiency, static-batch
// capacity, and the tail latencies of continuous batching under a Poisson load; models without
// tokens (CNNs, recommenders) as one forward pass per batch, diffusion as denoising steps and a
// VAE decode per batch of images.
// Equations and sources: docs/perf-model.md, "Inference".

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "base/text.hpp"
#include "memory/memory.hpp"
#include "perf/internal.hpp"

namespace gpusel::perf_detail {

namespace {

// llama.cpp processes prompts in micro-batches of 512 tokens (n_ubatch default) and dequantizes
// each weight matrix to FP16 once per micro-batch before the cuBLAS GEMM.
constexpr double llama_cpp_ubatch_tokens = 512;
// The element-wise kernels of an unfused layer: two norms, two residual adds, the activation, RoPE.
constexpr double unfused_elementwise_kernels = 6;
// vLLM's default max_num_seqs: the largest batch `batch: auto` considers.
constexpr int auto_batch_limit = 256;

// Everything a step of one replica needs, derived once.
struct ReplicaModel {
    bool transformer = true;
    int tensor_parallel = 1;
    int pipeline_parallel = 1;
    int layers = 0;
    double hidden = 0;
    double attention_width = 0;            // heads × head_dim
    double flops_per_token = 0;            // 2 × active matmul parameters
    double dense_weight_bytes = 0;         // read every step (MoE: the shared part)
    double expert_weight_bytes = 0;        // MoE: all experts together
    double expert_fraction_per_token = 0;  // top_k / experts
    // MoE, per MoE layer: routed experts, the experts each token visits, one expert's bytes and
    // FFN width, and the share of the layers that are MoE layers (DeepSeek's first dense layers
    // are not); the dense FFNs and shared experts are the per-layer `ffn_width` below.
    double experts = 0;
    double top_k = 0;
    double expert_layer_bytes = 0;
    double expert_ffn_width = 0;
    double moe_layer_share = 0;
    // GPUs the experts are spread over, whole (1: split by tensor parallelism); dispatch and
    // combine then run as all-to-alls among them instead of the all-reduce.
    int expert_parallel = 1;
    // Data-parallel attention: each tensor-parallel rank runs attention, with whole attention
    // weights, for its own share of the sequences and holds their KV cache alone.
    bool dp_attention = false;
    double kv_bytes_per_token = 0;  // whole model
    // Of one token's KV cache (whole model), what one GPU of the tensor-parallel group holds and
    // reads: its KV heads, all of them when there are fewer heads than ranks, MLA's whole latent
    // (every rank keeps it: vLLM, SGLang), or under DP attention its own sequences' whole cache.
    double kv_share = 1;
    double activation_bytes = 2;       // element size of activations exchanged between GPUs
    double peak_flops_per_s = 0;       // per GPU, the GEMM precision's dense peak
    double peak_fraction = 0;          // of that peak for large GEMMs
    double bandwidth_bytes_per_s = 0;  // per GPU, achieved
    double overhead_per_layer_s = 0;
    double request_floor_s = 0;
    bool dequantize_pass = false;         // llama.cpp prefill of quantized weights
    double fp16_weight_bytes = 0;         // matmul parameters × 2
    double forward_flops_per_sample = 0;  // non-transformers
    double flops_per_byte = 0;            // non-transformers: DRAM traffic
    // Diffusion: the denoiser runs `denoiser_passes` latents per image (2 with classifier-free
    // guidance) at every one of `denoising_steps`, reading its weights once per step; the VAE
    // decoder runs once per image.
    bool diffusion = false;
    double denoiser_passes = 1;
    double denoising_steps = 1;
    double decoder_flops_per_sample = 0;
    double denoiser_weight_bytes = 0;
    LinkTier tensor_link;
    LinkTier pipeline_link;
    // Per-operator model (docs/perf-model.md, "Inference"): one layer's GEMM widths, whole model
    // (tensor parallel divides them), and the rates its kernels reach on this GPU.
    double qkv_width = 0;     // the input projections' output width: (heads + 2 kv_heads) × head_dim; MLA: its
                              // query and latent projections' parameters / hidden
    double output_inner = 0;  // the output projection's input width: heads × head_dim (MLA: heads × v_head_dim)
    double kv_width = 0;      // kv_heads × head_dim
    // Attention FLOPs per query token, context token and layer, whole model: 4 × heads × head_dim
    // (QKᵀ and AV); MLA decode attends in the latent (weights absorbed: 2 × heads × (2 × kv_lora +
    // rope)), MLA prefill in the heads (2 × heads × (nope + rope + v)).
    double decode_attention_flops = 0;
    double prefill_attention_flops = 0;
    double ffn_width = 0;  // FFN width a token passes through (MoE: its top_k experts)
    bool ffn_gated = false;
    double vocab = 0;
    double bytes_per_param = 0;         // stored weight format
    double attention_weight_bytes = 0;  // per layer: QKV and output projections
    double logits_weight_bytes = 0;     // the output layer
    GemmRates gemm;
    double attention_peak_flops_per_s = 0;  // flash attention runs at the 16-bit peak
    double attention_fraction = 0.5;
    double kernel_floor_s = 0;
    double elementwise_kernels = 0;
    double step_floor_s = 0;
    double request_latency_s = 0;  // a generating engine's per-request latency outside the GPU's work
    // Decode (or verify) steps between the scheduler's looks for new requests while it decodes
    // (SGLang --scheduler-recv-interval; 1 = every step).
    int scheduler_recv_interval = 1;
    double kv_read_factor = 1;
    double attention_heads = 0;        // query heads
    double attention_score_bytes = 0;  // per score, when the attention kernels materialize them
    CollectiveLink tensor_collective;  // the tensor-parallel all-reduce's link
    // Speculative decoding: each step verifies draft_tokens + 1 tokens per sequence (one pass of
    // the model over them), after draft_tokens passes of a one-layer draft head (DeepSeek MTP
    // module, EAGLE), and yields tokens_per_step tokens per sequence on average.
    int draft_tokens = 0;
    double tokens_per_step = 1;
    double collective_bus = 1;  // its bus bandwidth over the NVLink's one-way bandwidth
};

struct StepTime {
    double compute_s = 0;
    double memory_s = 0;
    double extra_memory_s = 0;  // a separate bandwidth-bound kernel (dequantization)
    double overhead_s = 0;
    double communication_s = 0;
    double bytes_per_gpu = 0;       // DRAM bytes the kernels timed above move, one GPU
    double flops_per_gpu = 0;       // FLOPs of those kernels, one GPU
    double link_bytes_per_gpu = 0;  // bytes one GPU sends over its links in communication_s
    // Per-operator steps: compute_s and memory_s are sums of kernels, each charged to the bound
    // it ran at, so they add; single-kernel steps (CNNs, diffusion) combine them as a roofline.
    bool summed = false;

    double kernels_s() const { return summed ? compute_s + memory_s : roofline_time_s(compute_s, memory_s); }
    double total_s() const { return kernels_s() + extra_memory_s + overhead_s + communication_s; }
};

void add_note(std::vector<std::string>& notes, std::string note) {
    if (std::find(notes.begin(), notes.end(), note) == notes.end()) {
        notes.push_back(std::move(note));
    }
}

// NVFP4/MXFP4 weights: the GEMM peak where the GPU has an FP4 tensor path (the catalog's
// dense_tflops.fp4) and a serving engine runs its block-scaled kernels; 0 where they are
// weight-only, with a note saying which path was assumed.
// - NVFP4 checkpoints (ModelOpt quant_algo NVFP4, compressed-tensors W4A4) quantize the
//   activations too: TensorRT-LLM, SGLang and vLLM run CUTLASS/FlashInfer NVFP4 GEMMs on
//   Blackwell at the FP4 rate (NVIDIA "Introducing NVFP4", 2025-06; vLLM CompressedTensorsW4A4Fp4).
//   NVFP4 is NVIDIA's format (E4M3 scales per 16); AMD's FP4 path takes the OCP MX scales only.
// - MXFP4 (gpt-oss) keeps 16-bit activations or quantizes them to MXFP8: the Blackwell MoE
//   kernels (FlashInfer trtllm-gen MXFP4 × MXFP8, vLLM blog "vLLM Now Supports gpt-oss",
//   2025-08-05) multiply FP4 by FP8, which the tensor cores run at the FP8 rate.
// Elsewhere the weights are dequantized inside the GEMM (vLLM's Marlin FP4 kernels, Triton
// matmul_ogs for gpt-oss on Hopper): read at 4.5/4.25 bits, multiplied at the 16-bit peak.
double fp4_weight_peak(const Setting& setting, bool& eight_bit) {
    const GpuSpec& gpu = setting.gpu;
    const WeightFormat weights = setting.workload.weights;
    const bool nvfp4 = weights == WeightFormat::nvfp4;
    const bool engine_kernels = setting.stack == ServingStack::optimized;
    const bool fp4_path = gpu.supports(Precision::fp4) && (!nvfp4 || equals_ignore_case(gpu.vendor, "nvidia"));
    if (engine_kernels && fp4_path && nvfp4) {
        eight_bit = true;
        add_note(setting.notes, fmt::format("nvfp4 weights and activations: the GEMMs at {}'s FP4 peak ({:g} TFLOPS) "
                                            "× the 8-bit fraction (no FP4 measurement); attention at 16-bit",
                                            gpu.id, gpu.peak_flops_per_s(Precision::fp4) / 1e12));
        return gpu.peak_flops_per_s(Precision::fp4);
    }
    if (engine_kernels && fp4_path && gpu.supports(Precision::fp8)) {
        eight_bit = true;
        add_note(setting.notes,
                 fmt::format("mxfp4 weights × MXFP8 activations: the GEMMs at {}'s FP8 peak ({:g} TFLOPS); "
                             "weights read at 4.25 bits",
                             gpu.id, gpu.peak_flops_per_s(Precision::fp8) / 1e12));
        return gpu.peak_flops_per_s(Precision::fp8);
    }
    add_note(setting.notes,
             fmt::format("{} weights weight-only on {}{}: dequantized inside the GEMM, read at {:g} "
                         "bits, multiplied at the {} peak",
                         to_string(weights), gpu.id,
                         !engine_kernels ? " (this stack has no FP4 GEMMs)"
                         : fp4_path      ? ""
                                         : " (no FP4 tensor path for it in the catalog)",
                         bits_per_weight(weights),
                         setting.precision == Precision::fp8 && gpu.supports(Precision::fp8) ? "FP8" : "16-bit"));
    return 0;
}

}  // namespace

double inference_peak(const Setting& setting, bool& eight_bit) {
    const GpuSpec& gpu = setting.gpu;
    const Workload& workload = setting.workload;
    eight_bit = false;
    if (setting.stack == ServingStack::llama_cpp) {
        // llama.cpp calls cuBLAS with FP16 accumulation; GeForce cards run that at twice the
        // FP32-accumulate rate the catalog lists (docs/reference/gpu_specs.md §0, docs/reference/formulas.md).
        double fp16 = gpu.peak_flops_per_s(Precision::fp16);
        if (fp16 <= 0) {
            return matmul_peak_flops_per_s(gpu, Precision::fp16, setting.notes);
        }
        if (gpu.segment == Segment::consumer && equals_ignore_case(gpu.vendor, "nvidia")) {
            fp16 *= 2;
        }
        return fp16;
    }
    if (is_fp4_format(workload.weights)) {
        if (const double fp4 = fp4_weight_peak(setting, eight_bit); fp4 > 0) {
            return fp4;
        }
    }
    const bool fp8_weights = is_fp8_format(workload.weights) || setting.precision == Precision::fp8;
    if (fp8_weights && gpu.supports(Precision::fp8)) {
        eight_bit = true;
        return gpu.peak_flops_per_s(Precision::fp8);
    }
    // INT8 weights of convolutional networks run as INT8 kernels (TensorRT); for transformers
    // int8/int4 weights are weight-only and the GEMMs run in 16-bit.
    if (!workload.model.is_transformer() && workload.weights == WeightFormat::int8 && gpu.supports(Precision::int8)) {
        eight_bit = true;
        return gpu.peak_flops_per_s(Precision::int8);
    }
    const Precision precision = setting.precision == Precision::fp8 ? Precision::bf16 : setting.precision;
    return matmul_peak_flops_per_s(gpu, precision, setting.notes);
}

namespace {

// The per-operator shapes of one layer and the rates of this GPU's kernels. The GEMM widths
// come from the model's fields; the FFN width is what the model's matmul parameters leave after
// attention and the output layer, so the operators add up to the model's FLOPs and bytes (MoE:
// the top_k experts a token visits; MLA and odd layers fold in the same way).
void fill_operators(const Setting& setting, double matmul, double bytes_per_param, ReplicaModel& replica) {
    const ModelSpec& model = setting.workload.model;
    const EfficiencyFactors& factors = setting.factors;
    const double kv_heads = model.attention_kv_heads();
    const double head_dim = model.attention_head_dim();
    replica.kv_width = kv_heads * head_dim;
    replica.vocab = model.vocab;
    replica.ffn_gated = model.ffn_gated;
    const double layers = std::max(1, model.layers);
    const double heads = model.heads;
    if (model.is_mla()) {
        const double nope = model.qk_nope_head_dim > 0 ? model.qk_nope_head_dim : head_dim;
        const double v = model.v_head_dim > 0 ? model.v_head_dim : nope;
        replica.output_inner = heads * v;
        replica.decode_attention_flops = 2 * heads * (2.0 * model.kv_lora_rank + model.qk_rope_head_dim);
        replica.prefill_attention_flops = 2 * heads * (nope + model.qk_rope_head_dim + v);
    } else {
        replica.output_inner = replica.attention_width;
        replica.decode_attention_flops = 4 * replica.attention_width;
        replica.prefill_attention_flops = replica.decode_attention_flops;
    }
    const double attention_params = gpusel::attention_params(model);
    replica.qkv_width =
        replica.hidden > 0 ? std::max(0.0, attention_params / replica.hidden - replica.output_inner) : 0;
    const double logits_params = replica.vocab * replica.hidden;
    // The FFN every token passes through: dense models' whole FFN; MoE, the dense layers' and
    // shared experts' (what stays of the parameters read every step), the routed experts apart.
    const double always = replica.expert_layer_bytes > 0 ? replica.dense_weight_bytes / bytes_per_param : matmul;
    const double ffn_params = std::max(0.0, always - layers * attention_params - logits_params) / layers;
    replica.ffn_width = replica.hidden > 0 ? ffn_params / (replica.hidden * (replica.ffn_gated ? 3 : 2)) : 0;
    replica.bytes_per_param = bytes_per_param;
    replica.attention_weight_bytes = attention_params * bytes_per_param;
    replica.logits_weight_bytes = logits_params * bytes_per_param;
    replica.gemm.peak_flops_per_s = replica.peak_flops_per_s;
    replica.gemm.plateau = replica.peak_fraction;
    replica.gemm.half_work_s = factors.gemm_half_work_s;
    replica.gemm.bandwidth_bytes_per_s = replica.bandwidth_bytes_per_s;
    replica.gemm.kernel_floor_s = factors.kernel_floor_s;
    const Precision sixteen = setting.precision == Precision::fp32 ? Precision::fp32 : Precision::bf16;
    replica.attention_peak_flops_per_s = matmul_peak_flops_per_s(setting.gpu, sixteen, setting.notes);
    replica.attention_fraction = factors.attention_compute;
    replica.kernel_floor_s = factors.kernel_floor_s;
    replica.elementwise_kernels = factors.elementwise_kernels;
    // The step floor is a serving engine's scheduler and sampler; encoders and prefill-only scoring
    // have neither, only the per-call cost of their engine (request_floor).
    replica.step_floor_s =
        setting.workload.task() == InferenceTask::generation ? factors.step_floor_s : factors.request_floor_s;
    replica.request_latency_s = setting.workload.task() == InferenceTask::generation ? factors.request_latency_s : 0;
    replica.scheduler_recv_interval =
        setting.workload.runtime.engine == Engine::sglang ? setting.workload.runtime.scheduler_recv_interval : 1;
    // A KV head is read at most once per query head of its group.
    replica.kv_read_factor = std::clamp(factors.kv_read_factor, 1.0, std::max(1.0, model.heads / kv_heads));
    replica.attention_heads = model.heads;
    replica.attention_score_bytes = factors.attention_score_bytes;
    // Tensor parallel inside an NVLink/Infinity Fabric domain: the measured NCCL all-reduce (bus
    // bandwidth and small-message floor, docs/reference/perf_modelling.md §1.2, Vidur
    // all_reduce.csv), the same collectives training uses; engines with their own all-reduce
    // kernels (TensorRT-LLM, vLLM) lower the floor by rule. Over PCIe and networks, the ring.
    replica.tensor_collective = collective_link(replica.tensor_link, setting.gpu, factors);
    replica.collective_bus = factors.collective_bus;
}

ReplicaModel build_model(const Setting& setting) {
    const Workload& workload = setting.workload;
    const ModelSpec& model = workload.model;
    const EfficiencyFactors& factors = setting.factors;
    ReplicaModel replica;
    replica.transformer = model.is_transformer();
    replica.tensor_parallel = std::max(1, setting.layout.tensor_parallel);
    replica.pipeline_parallel = std::max(1, setting.layout.pipeline_parallel);
    replica.layers = model.layers;
    replica.hidden = model.hidden;
    replica.attention_width = static_cast<double>(model.heads) * model.attention_head_dim();
    bool eight_bit = false;
    replica.peak_flops_per_s = inference_peak(setting, eight_bit);
    replica.peak_fraction = eight_bit ? factors.prefill_compute_8bit : factors.prefill_compute;
    replica.bandwidth_bytes_per_s = setting.gpu.memory_bandwidth_bytes_per_s * factors.decode_bandwidth;
    replica.overhead_per_layer_s = factors.overhead_per_layer_s;
    replica.request_floor_s = factors.request_floor_s;
    replica.activation_bytes = element_bytes(setting.precision == Precision::fp8 ? Precision::bf16 : setting.precision);
    if (!replica.transformer) {
        replica.forward_flops_per_sample = model.flops_per_sample;
        replica.flops_per_byte = factors.cnn_inference_flops_per_byte;
        if (model.family == ModelFamily::diffusion) {
            // UNet and VAE convolutions and attention at small widths (320 channels at 128×128)
            // reach a lower fraction of peak than LLM GEMMs: their own factor.
            replica.diffusion = true;
            replica.peak_fraction = factors.diffusion_compute;
            replica.denoiser_passes = workload.inference.classifier_free_guidance ? 2 : 1;
            replica.denoising_steps = workload.inference.denoising_steps;
            replica.decoder_flops_per_sample = model.decoder_flops_per_sample;
            replica.denoiser_weight_bytes = model.params * bits_per_weight(workload.weights) / 8;
        }
        return replica;
    }
    const double matmul = matmul_params(model);
    const double bytes_per_param = bits_per_weight(workload.weights) / 8;
    replica.flops_per_token = 2 * matmul;
    if (model.is_moe() && model.experts > model.top_k && model.params > model.active_params) {
        // Total minus active = (E − k) experts; the shared part is active minus k experts.
        const double expert_params = (model.params - model.active_params) / (model.experts - model.top_k);
        const double dense = matmul - model.top_k * expert_params;
        replica.dense_weight_bytes = dense * bytes_per_param;
        replica.expert_weight_bytes = model.experts * expert_params * bytes_per_param;
        replica.expert_fraction_per_token = static_cast<double>(model.top_k) / model.experts;
        // "Total minus active" counts one expert over all MoE layers; the first dense layers
        // (first_k_dense_replace) have none.
        const double moe_layers = std::max(1, model.layers - std::clamp(model.dense_layers, 0, model.layers - 1));
        replica.experts = model.experts;
        replica.top_k = model.top_k;
        replica.expert_layer_bytes = expert_params / moe_layers * bytes_per_param;
        replica.expert_ffn_width =
            model.hidden > 0 ? expert_params / moe_layers / (model.hidden * (model.ffn_gated ? 3.0 : 2.0)) : 0;
        replica.moe_layer_share = moe_layers / std::max(1, model.layers);
        const InferenceSpec& spec = workload.inference;
        // auto: the experts whole on the tensor-parallel ranks under DP attention (SGLang's
        // DeepEP layout for DeepSeek), else split by tensor parallelism (the engines' default:
        // vLLM enable_expert_parallel False, SGLang ep_size 1).
        const int ep =
            spec.expert_parallel > 0 ? spec.expert_parallel : (spec.dp_attention ? setting.layout.tensor_parallel : 1);
        replica.expert_parallel = std::clamp(ep, 1, std::min(replica.tensor_parallel, model.experts));
    } else {
        replica.dense_weight_bytes = matmul * bytes_per_param;
    }
    replica.kv_bytes_per_token = kv_bytes_per_token(workload);
    if (workload.runtime.speculative.enabled()) {
        replica.draft_tokens = workload.runtime.speculative.draft_tokens;
        replica.tokens_per_step = workload.runtime.speculative.tokens_per_step();
    }
    replica.dp_attention = workload.inference.dp_attention && replica.tensor_parallel > 1;
    const double kv_heads = model.attention_kv_heads();
    replica.kv_share = model.is_mla() || replica.dp_attention || kv_heads <= 0
                           ? 1.0
                           : std::ceil(kv_heads / replica.tensor_parallel) / kv_heads;
    replica.dequantize_pass = setting.stack == ServingStack::llama_cpp && is_quantized(workload.weights);
    replica.fp16_weight_bytes = matmul * 2;
    const Layout& layout = setting.layout;
    replica.tensor_link = link_for_group(workload, setting.gpu, layout.tensor_parallel, factors, setting.platform);
    replica.pipeline_link = link_for_group(workload, setting.gpu, layout.tensor_parallel * layout.pipeline_parallel,
                                           factors, setting.platform);
    fill_operators(setting, matmul, bytes_per_param, replica);
    return replica;
}

// The expected maximum over `ranks` GPUs of a load whose mean is `mean` and standard deviation
// `deviation` on each: mean + deviation · sqrt(2 ln ranks), the bound on the expected maximum of
// `ranks` normal variables (uniform routing's binomial counts are near normal). The straggler
// sets an expert-parallel layer's time.
double straggler_load(double mean, double deviation, int ranks) {
    return ranks > 1 ? mean + deviation * std::sqrt(2 * std::log(static_cast<double>(ranks))) : mean;
}

// Distinct routed experts of one MoE layer that `tokens` tokens touch, top_k each, routed
// uniformly: E · (1 − (1 − k/E)^tokens) in expectation.
double touched_experts(const ReplicaModel& model, double tokens) {
    return model.experts * (1 - std::pow(1 - model.top_k / model.experts, std::max(1.0, tokens)));
}

// The tensor-parallel all-reduces and expert-parallel all-to-alls of a step of `rows` tokens and
// their bytes, and the pipeline's stage hand-offs. Per layer: one all-reduce after attention
// (none under DP attention: each rank attends to its own sequences) and one after the FFN
// (Megatron); a MoE layer with expert parallelism instead dispatches each rank's share of the
// tokens to the ranks holding its top_k experts and combines the results back (DeepEP's
// dispatch/combine), one copy per distinct rank: ep · (1 − (1 − 1/ep)^k) ranks, (ep − 1)/ep of
// them remote.
void add_communication(const ReplicaModel& model, double rows, StepTime& step) {
    const double activation_bytes = rows * model.hidden * model.activation_bytes;
    const double t = model.tensor_parallel;
    const double layers = model.layers;
    if (model.tensor_parallel > 1) {
        const double all_reduce = all_reduce_s(activation_bytes, model.tensor_parallel, model.tensor_collective);
        // What leaves one GPU: a ring's 2(t − 1)/t of the data; NVLink SHARP reduces in the switch,
        // so a bus bandwidth above the link's (collective_bus > 1) means fewer bytes on the link.
        const double in_switch = model.tensor_link.nvlink ? std::max(1.0, model.collective_bus) : 1.0;
        const double all_reduce_bytes = 2 * (t - 1) / t * activation_bytes / in_switch;
        const double all_reduces = (model.dp_attention ? 0.0 : layers) +
                                   layers * (model.expert_parallel > 1 ? 1 - model.moe_layer_share : 1.0);
        step.communication_s += all_reduces * all_reduce;
        step.link_bytes_per_gpu += all_reduces * all_reduce_bytes;
    }
    if (model.expert_parallel > 1) {
        const double ep = model.expert_parallel;
        const double ranks_per_token = ep * (1 - std::pow(1 - 1 / ep, model.top_k));
        const double sent =
            std::ceil(rows / ep) * ranks_per_token * (ep - 1) / ep * model.hidden * model.activation_bytes;
        const double moe_layers = layers * model.moe_layer_share;
        // An all-to-all gains nothing from in-switch reduction: at most the link's own rate.
        CollectiveLink link = model.tensor_collective;
        link.bus_bytes_per_s = std::min(link.bus_bytes_per_s, model.tensor_link.bytes_per_s);
        step.communication_s += moe_layers * 2 * all_to_all_s(sent, model.expert_parallel, link);
        step.link_bytes_per_gpu += moe_layers * 2 * sent;
    }
    if (model.pipeline_parallel > 1) {
        step.communication_s += (model.pipeline_parallel - 1) *
                                (activation_bytes / model.pipeline_link.bytes_per_s + model.pipeline_link.latency_s);
        step.link_bytes_per_gpu += activation_bytes;
    }
}

StepTime non_transformer_forward(const ReplicaModel& model, double batch) {
    StepTime step;
    const double flops = model.forward_flops_per_sample * batch;
    // Convolutions are large GEMMs even at batch 1 (rows = output pixels), so the peak fraction
    // applies without the small-problem discount.
    step.compute_s = flops / (model.peak_flops_per_s * model.peak_fraction);
    step.bytes_per_gpu = flops / model.flops_per_byte;
    step.memory_s = step.bytes_per_gpu / model.bandwidth_bytes_per_s;
    step.overhead_s = model.request_floor_s;
    return step;
}

// One denoising step of `batch` images: the whole batch (doubled by classifier-free guidance) in
// one denoiser call, its weights streamed once.
StepTime denoising_step(const ReplicaModel& model, double batch) {
    StepTime step;
    const double flops = model.denoiser_passes * batch * model.forward_flops_per_sample;
    step.compute_s = flops / model.tensor_parallel / (model.peak_flops_per_s * model.peak_fraction);
    step.bytes_per_gpu = model.denoiser_weight_bytes / model.tensor_parallel;
    step.memory_s = step.bytes_per_gpu / model.bandwidth_bytes_per_s;
    step.overhead_s = model.request_floor_s;
    return step;
}

// The VAE decode of `batch` latents into pixels, once per image after the last step.
StepTime vae_decode(const ReplicaModel& model, double batch) {
    StepTime step;
    if (model.decoder_flops_per_sample <= 0) {
        return step;
    }
    step.compute_s =
        batch * model.decoder_flops_per_sample / model.tensor_parallel / (model.peak_flops_per_s * model.peak_fraction);
    step.overhead_s = model.request_floor_s;
    return step;
}

// One batch of a model without a decode phase: a forward pass, or a whole diffusion generation.
double forward_batch_s(const ReplicaModel& model, double batch) {
    if (model.diffusion) {
        return model.denoising_steps * denoising_step(model, batch).total_s() + vae_decode(model, batch).total_s();
    }
    return non_transformer_forward(model, batch).total_s();
}

// Charges one kernel of `compute_s` and `memory_s` (its floor included) to the bound it runs at,
// `repeats` times, with the DRAM bytes and FLOPs it moves and computes.
void add_kernel(StepTime& step, double compute_s, double memory_s, double kernel_s, double bytes, double flops,
                double repeats = 1) {
    (compute_s >= memory_s ? step.compute_s : step.memory_s) += repeats * kernel_s;
    step.bytes_per_gpu += repeats * bytes;
    step.flops_per_gpu += repeats * flops;
}

// One GEMM (rows × inner) · (inner × columns) on this GPU streaming `bytes` of weight.
void add_gemm(const ReplicaModel& model, double rows, double columns, double inner, double bytes, StepTime& step,
              double repeats = 1) {
    if (rows <= 0 || columns <= 0 || inner <= 0) {
        return;
    }
    const GemmTime time = gemm_timing(rows, columns, inner, bytes, model.gemm);
    add_kernel(step, time.compute_s, bytes / model.gemm.bandwidth_bytes_per_s, time.time_s, bytes,
               2 * rows * columns * inner, repeats);
}

// The rows one GPU's attention runs: all of them, or under DP attention its share of the
// sequences (the most loaded rank's, whole sequences).
double attention_rows(const ReplicaModel& model, double sequences, double tokens_per_sequence) {
    return model.dp_attention ? std::ceil(sequences / model.tensor_parallel) * tokens_per_sequence
                              : sequences * tokens_per_sequence;
}

// One layer's GEMMs (QKV, attention output, FFN up/gate, down) for `rows` tokens (of which
// `attention` go through this GPU's attention) on one GPU of the tensor-parallel group. The FFN
// is the one every token passes (MoE: dense layers and shared experts; the routed experts are
// add_routed_experts). Column-parallel GEMMs split N, row-parallel K; under DP attention the
// attention projections are whole on every rank.
void add_layer_gemms(const ReplicaModel& model, double rows, double attention, double weight_scale, StepTime& step) {
    const double t = model.tensor_parallel;
    const double at = model.dp_attention ? 1.0 : t;
    const double h = model.hidden;
    const double f = model.ffn_width;
    const double attention_bytes = model.attention_weight_bytes * weight_scale / at;
    const double qkv_share = model.qkv_width / (model.qkv_width + model.output_inner);
    const double ffn_bytes = f * h * (model.ffn_gated ? 3 : 2) * model.bytes_per_param * weight_scale / t;
    const double up_share = model.ffn_gated ? 2.0 / 3 : 0.5;
    add_gemm(model, attention, model.qkv_width / at, h, attention_bytes * qkv_share, step);
    add_gemm(model, attention, h, model.output_inner / at, attention_bytes * (1 - qkv_share), step);
    add_gemm(model, rows, (model.ffn_gated ? 2 : 1) * f / t, h, ffn_bytes * up_share, step);
    add_gemm(model, rows, h, f / t, ffn_bytes * (1 - up_share), step);
}

// The routed experts of a MoE layer for `rows` tokens, averaged over the layers (moe_layer_share
// of them are MoE layers), as one grouped GEMM per projection on this GPU: the experts the tokens
// touch (touched_experts) and the token-expert pairs. Split by tensor parallelism every rank
// reads 1/t of each touched expert and computes 1/t of each pair; with expert parallelism each
// rank holds E/ep whole experts and the step waits for the most loaded rank (straggler_load over
// binomial counts of touched experts and of pairs).
void add_routed_experts(const ReplicaModel& model, double rows, double weight_scale, StepTime& step) {
    if (model.expert_layer_bytes <= 0 || rows <= 0) {
        return;
    }
    const double touched = touched_experts(model, rows);
    const double pairs = rows * model.top_k;
    double experts_here = touched;
    double pairs_here = pairs;
    double split = model.tensor_parallel;
    if (model.expert_parallel > 1) {
        const double ep = model.expert_parallel;
        const double held = model.experts / ep;
        const double p = touched / model.experts;
        experts_here = std::min(held, straggler_load(held * p, std::sqrt(held * p * (1 - p)), model.expert_parallel));
        pairs_here =
            std::min(pairs, straggler_load(pairs / ep, std::sqrt(pairs / ep * (1 - 1 / ep)), model.expert_parallel));
        split = 1;
    }
    const double f = model.expert_ffn_width;
    const double h = model.hidden;
    const double bytes = experts_here * model.expert_layer_bytes * weight_scale / split;
    const double up_share = model.ffn_gated ? 2.0 / 3 : 0.5;
    add_gemm(model, pairs_here, (model.ffn_gated ? 2 : 1) * f / split, h, bytes * up_share, step,
             model.moe_layer_share);
    add_gemm(model, pairs_here, h, f / split, bytes * (1 - up_share), step, model.moe_layer_share);
}

// One layer's memory-bound element-wise kernels (two norms, two residual adds, the activation,
// RoPE) for `rows` tokens: their bytes at the weight-stream bandwidth, plus a floor per kernel
// (Vidur: 2-8 µs at 8 tokens on every GPU, docs/reference/perf_modelling.md §1.2 (d)). Fused
// engines run fewer kernels (elementwise_kernels).
void add_layer_elementwise(const ReplicaModel& model, double rows, StepTime& step) {
    const double t = model.tensor_parallel;
    const double a = model.activation_bytes;
    const double per_row = a * (2 * 2 * model.hidden + 2 * 3 * model.hidden +
                                (model.ffn_gated ? 3 : 2) * model.ffn_width / t + 2 * model.qkv_width / t);
    // A fused engine folds kernels into its neighbours (residual add into the norm, the activation
    // into the GEMM epilogue): their traffic goes with them.
    const double bytes = rows * per_row * model.elementwise_kernels / unfused_elementwise_kernels;
    step.memory_s += bytes / model.bandwidth_bytes_per_s + model.elementwise_kernels * model.kernel_floor_s;
    step.bytes_per_gpu += bytes;
}

// The output layer for `sequences` rows (one token per sequence: the last prompt token in
// prefill), vocabulary split over the tensor-parallel group.
void add_logits(const ReplicaModel& model, double sequences, double weight_scale, StepTime& step) {
    if (model.vocab <= 0) {
        return;
    }
    const double bytes = model.logits_weight_bytes * weight_scale / model.tensor_parallel;
    add_gemm(model, sequences, model.vocab / model.tensor_parallel, model.hidden, bytes, step);
}

// Attention over the cache: `flops` and `bytes` on this GPU, at the attention kernels' rate and
// the weight-stream bandwidth, plus a kernel floor.
void add_attention(const ReplicaModel& model, double flops, double bytes, StepTime& step) {
    const double compute = flops / (model.attention_peak_flops_per_s * model.attention_fraction);
    const double memory = bytes / model.bandwidth_bytes_per_s;
    add_kernel(step, compute, memory, std::max(compute, memory) + model.kernel_floor_s, bytes, flops);
}

// Whether an M/M/c queue's wait probability (erlang_c_wait_probability) is certainly at most
// `probability`, by the bound erlang_c_wait_probability uses to skip its recursion: for
// c >= a + 1, C <= c/(c − a) · 2 · e^−a · a^c / c!. A few logarithms instead of one step per
// server: a load search asks it of every batch slot of every replica at each point, and a
// probability under the SLO's miss share gives no tail wait whatever its value (wait_at).
bool wait_probability_at_most(int servers, double load, double probability) {
    if (load <= 0) {
        return true;
    }
    const double c_minus_a = servers - load;
    if (servers <= 0 || c_minus_a < 1) {
        return false;
    }
    const double log_bound =
        std::log(2.0 * servers / c_minus_a) - load + servers * std::log(load) - std::lgamma(servers + 1.0);
    // A margin far above the rounding of the terms (about 1e-13 of the largest, c·log a).
    return log_bound < std::log(probability) - 1e-6;
}

// One decode step of `batch` sequences whose mean context is `context` tokens, each with
// `tokens` query tokens (1; a speculative verify pass: the draft tokens + 1): per layer the
// GEMMs, the routed experts, paged decode attention (reads this GPU's share of each sequence's KV
// cache once, kv_read_factor times with old GQA kernels), the element-wise kernels and the
// collectives; then the logits and the step floor.
StepTime decode_step(const ReplicaModel& model, double batch, double context, double tokens = 1) {
    if (!model.transformer) {
        return non_transformer_forward(model, batch);
    }
    StepTime step;
    step.summed = true;
    const double t = model.tensor_parallel;
    const double layers = model.layers;
    const double rows = batch * tokens;
    const double attention = attention_rows(model, batch, 1);
    const double heads_share = model.dp_attention ? 1.0 : 1.0 / t;
    StepTime layer;
    layer.summed = true;
    add_layer_gemms(model, rows, attention * tokens, 1, layer);
    add_routed_experts(model, rows, 1, layer);
    // Each sequence's cache is read once however many query tokens it verifies.
    const double kv_bytes = attention * context * model.kv_bytes_per_token / std::max(1.0, layers) * model.kv_share;
    const double attention_flops = attention * tokens * context * model.decode_attention_flops * heads_share;
    // Without flash attention every query head's scores over the context go through DRAM.
    const double score_bytes =
        attention * tokens * model.attention_heads * context * model.attention_score_bytes * heads_share;
    add_attention(model, attention_flops, kv_bytes * model.kv_read_factor + score_bytes, layer);
    add_layer_elementwise(model, rows, layer);
    step.compute_s = layers * layer.compute_s;
    step.memory_s = layers * layer.memory_s;
    step.bytes_per_gpu = layers * layer.bytes_per_gpu;
    step.flops_per_gpu = layers * layer.flops_per_gpu;
    add_logits(model, rows, 1, step);
    // Pipeline stages run one after another: each GPU moves its stage's share.
    step.bytes_per_gpu /= model.pipeline_parallel;
    step.flops_per_gpu /= model.pipeline_parallel;
    step.overhead_s = layers * model.overhead_per_layer_s + model.step_floor_s;
    add_communication(model, rows, step);
    return step;
}

// The time per generated token of `batch` sequences: one decode step, or with speculative
// decoding the draft head's passes (each one layer of the model's kernels and communication)
// and the verify pass, divided by the tokens a step yields (docs/perf-model.md, "Speculative
// decoding").
double token_step_s(const ReplicaModel& model, double batch, double context) {
    if (model.draft_tokens <= 0 || !model.transformer) {
        return decode_step(model, batch, context).total_s();
    }
    const StepTime draft = decode_step(model, batch, context);
    const double draft_pass_s = (draft.kernels_s() + draft.communication_s) / std::max(1, model.layers);
    const StepTime verify = decode_step(model, batch, context, model.draft_tokens + 1.0);
    return (verify.total_s() + model.draft_tokens * draft_pass_s) / model.tokens_per_step;
}

// Prefill of `batch` prompts of `prompt_tokens` tokens together: per layer the GEMMs on all
// prompt tokens, causal flash attention, the element-wise kernels and the KV write; the logits
// for each prompt's last token; llama.cpp in micro-batches of 512 tokens on FP16 copies of
// quantized weights.
StepTime prefill(const ReplicaModel& model, double batch, double prompt_tokens, bool llama_cpp) {
    if (!model.transformer) {
        return non_transformer_forward(model, batch);
    }
    StepTime step;
    step.summed = true;
    const double t = model.tensor_parallel;
    const double layers = model.layers;
    const double rows = batch * prompt_tokens;
    const double passes = llama_cpp ? std::ceil(rows / llama_cpp_ubatch_tokens) : 1.0;
    const double gemm_rows = llama_cpp ? std::min(rows, llama_cpp_ubatch_tokens) : rows;
    // llama.cpp multiplies the dequantized FP16 copy: its bytes, not the stored format's.
    const double stored = model.dense_weight_bytes + model.expert_weight_bytes;
    const double weight_scale = model.dequantize_pass && stored > 0 ? model.fp16_weight_bytes / stored : 1;
    const double attention = llama_cpp ? gemm_rows : attention_rows(model, batch, prompt_tokens);
    const double sequences_here = llama_cpp || !model.dp_attention ? batch : std::ceil(batch / t);
    const double heads_share = model.dp_attention ? 1.0 : 1.0 / t;
    StepTime layer;
    layer.summed = true;
    add_layer_gemms(model, gemm_rows, attention, weight_scale, layer);
    add_routed_experts(model, gemm_rows, weight_scale, layer);
    add_layer_elementwise(model, gemm_rows, layer);
    // Causal attention: QKᵀ and AV over the lower triangle, s²/2 query-key pairs per sequence and layer.
    const double attention_flops =
        sequences_here * prompt_tokens * prompt_tokens / 2 * model.prefill_attention_flops * heads_share / passes;
    const double kv_write = attention * model.kv_bytes_per_token / std::max(1.0, layers) * model.kv_share;
    // Kernels that materialize the scores (no flash attention) write and read them per query head:
    // a micro-batch of `chunk` tokens scores the whole cache so far, s·(s + chunk)/2 per sequence.
    const double chunk = std::min(prompt_tokens, gemm_rows);
    const double scores =
        sequences_here * model.attention_heads * prompt_tokens * (prompt_tokens + chunk) / 2 * heads_share / passes;
    add_attention(model, attention_flops, kv_write + scores * model.attention_score_bytes, layer);
    step.compute_s = passes * layers * layer.compute_s;
    step.memory_s = passes * layers * layer.memory_s;
    step.bytes_per_gpu = passes * layers * layer.bytes_per_gpu;
    step.flops_per_gpu = passes * layers * layer.flops_per_gpu;
    add_logits(model, batch, weight_scale, step);
    step.bytes_per_gpu /= model.pipeline_parallel;
    step.flops_per_gpu /= model.pipeline_parallel;
    if (model.dequantize_pass) {
        // Read the quantized matrix and write its FP16 copy, once per micro-batch.
        const double dequantize_bytes = passes * (stored + model.fp16_weight_bytes) / t;
        step.extra_memory_s = dequantize_bytes / model.bandwidth_bytes_per_s;
        step.bytes_per_gpu += dequantize_bytes / model.pipeline_parallel;
    }
    step.overhead_s = passes * layers * model.overhead_per_layer_s + model.step_floor_s;
    add_communication(model, rows, step);
    return step;
}

// Latency of a replica with at most `batch` sequences in flight, under Poisson arrivals of
// `load` requests/s (docs/perf-model.md, "Serving under load").
struct LoadPoint {
    bool stable = false;
    // Serving::at with a SLO to decide: missed already on the decode step alone, so the rest was
    // not computed; tpot_s, ttft_s and e2e_s hold lower bounds (for slo_margin).
    bool missed = false;
    double concurrency = 0;
    double ttft_s = 0;  // at the percentile
    double tpot_s = 0;
    double e2e_s = 0;
};

struct Serving {
    const ReplicaModel& model;
    double input_tokens;
    double output_tokens;
    double percentile;  // 0.99
    bool llama_cpp;
    int replicas;  // behind one load balancer that sends each request to a free replica

    // The load searches ask for the same few step times thousands of times (one prefill per
    // load point, one batch time per iteration of the batching fixed point); each is a pure
    // function of this replica, so it is computed once. Copies (other replica counts) share
    // the values, which do not depend on the count.
    mutable std::optional<double> prefill_one_cache_s;
    mutable std::optional<double> step_one_cache_s;  // every load point's fixed point starts at step(1)
    mutable std::vector<double> batch_time_cache_s;

    double mean_context() const { return input_tokens + output_tokens / 2; }
    double prefill_one() const {
        if (!prefill_one_cache_s) {
            prefill_one_cache_s = prefill(model, 1, input_tokens, llama_cpp).total_s();
        }
        return *prefill_one_cache_s;
    }
    // The last batch asked for besides 1: a load search's next point starts its fixed point from
    // the concurrency of the last point that met the SLO, whose step was the last one computed.
    mutable double step_last_batch = std::numeric_limits<double>::quiet_NaN();  // none yet
    mutable double step_last_s = 0;
    double step(double batch) const {
        if (batch == 1) {
            if (!step_one_cache_s) {
                step_one_cache_s = token_step_s(model, 1, mean_context());
            }
            return *step_one_cache_s;
        }
        if (batch != step_last_batch) {
            step_last_s = token_step_s(model, batch, mean_context());
            step_last_batch = batch;
        }
        return step_last_s;
    }

    // Static batch: prefill all prompts together, then decode them together.
    double batch_time(int batch) const {
        constexpr int cached_batches = 1 << 16;
        if (batch < 0 || batch >= cached_batches) {
            return uncached_batch_time(batch);
        }
        const auto index = static_cast<std::size_t>(batch);
        if (batch_time_cache_s.size() <= index) {
            batch_time_cache_s.resize(index + 1, -1.0);
        }
        if (batch_time_cache_s[index] < 0) {
            batch_time_cache_s[index] = uncached_batch_time(batch);
        }
        return batch_time_cache_s[index];
    }
    double uncached_batch_time(int batch) const {
        if (!model.transformer) {
            return forward_batch_s(model, batch);
        }
        return prefill(model, batch, input_tokens, llama_cpp).total_s() + output_tokens * step(batch);
    }

    // Seconds of waiting in an exponential-tail queue whose mean wait is `mean_wait` and
    // whose probability of waiting at all is `wait_probability`: P(W > x) = P_w·exp(−P_w·x / W̄).
    double tail_wait(double wait_probability, double mean_wait) const {
        return wait_at(wait_probability, mean_wait, percentile);
    }
    static double wait_at(double wait_probability, double mean_wait, double quantile) {
        const double miss = 1 - quantile;
        if (wait_probability <= miss || mean_wait <= 0) {
            return 0;
        }
        return mean_wait / wait_probability * std::log(wait_probability / miss);
    }

    // SGLang's receive skipper (--scheduler-recv-interval N, python/sglang/srt/managers/
    // scheduler_recv_skipper.py): while the engine decodes, the scheduler polls for new requests once
    // every N decode or verify steps (after a prefill, at once). A request arriving at a uniform
    // moment of that cycle waits for the next poll: uniform on [0, (N − 1) steps] beyond the step in
    // flight the queue terms count. `busy` is the probability that the engine is decoding then; the
    // wait's `quantile` is that of the mixture (no wait with probability 1 − busy).
    double receive_wait(double quantile, double token_step_s, double busy) const {
        if (model.scheduler_recv_interval <= 1 || busy <= 0 || quantile <= 1 - busy) {
            return 0;
        }
        const double longest_s = (model.scheduler_recv_interval - 1) * token_step_s * model.tokens_per_step;
        return longest_s * std::min(1.0, (quantile - (1 - busy)) / busy);
    }

    // `start` is a concurrency at or below this load's (that of a lower load): the decode phase's
    // fixed point is reached by iterating up from it, so a search over loads need not climb from
    // one sequence each time (the limit is the same). `deciding`: the caller asks only whether
    // the point meets this SLO (a load search), so a point that misses it on its TPOT, or on a
    // TTFT or end-to-end latency without the queueing waits (which only add), is returned as
    // not stable before the waits' Erlang C sums are computed: the verdict is the same.
    LoadPoint at(double load, int batch, double start = 0, const SloSpec* deciding = nullptr) const {
        LoadPoint point;
        if (load <= 0) {
            point.stable = true;
            const double single = model.transformer ? prefill_one() : batch_time(1);
            point.ttft_s = single + model.request_latency_s;
            const bool decodes = model.transformer && output_tokens > 0;
            point.tpot_s = decodes ? step(1) : 0;
            point.e2e_s = point.ttft_s + (decodes ? (output_tokens - 1) * point.tpot_s : 0);
            return point;
        }
        // Encoders and prefill-only scoring are one pass per request too: served by dynamic
        // batching (Triton, text-embeddings-inference), not by continuous decode batching.
        if (!model.transformer || output_tokens <= 0) {
            return at_batched_forward(load, batch);
        }
        // Each replica sees its share of the load; the queues are pooled over all replicas.
        const double replica_load = load / replicas;
        const double prefill_s = prefill_one();
        const double prefill_busy = replica_load * prefill_s;
        if (prefill_busy >= 1) {
            return point;
        }
        // Little's law over the decode phase: n = λ · S_out · TPOT, TPOT = step(n) / (1 − ρ_prefill).
        const double scale = replica_load * output_tokens / (1 - prefill_busy);
        const auto concurrency_for = [&](double n) { return scale * step(std::max(1.0, n)); };
        const std::optional<double> fixed_point =
            smallest_fixed_point(concurrency_for, std::max(start, concurrency_for(1)), batch);
        if (!fixed_point) {
            return point;
        }
        const double concurrency = *fixed_point;
        const double decode_step_s = step(std::max(1.0, concurrency));
        const double mean_tpot = decode_step_s / (1 - prefill_busy);
        // Prefills that arrive on the same replica during a request's decoding stall it; their
        // count is Poisson.
        const double stalls = replica_load * output_tokens * mean_tpot;
        const double z = normal_quantile(percentile);
        const double stalls_at_percentile = stalls + z * std::sqrt(stalls);
        point.tpot_s = decode_step_s + prefill_s * stalls_at_percentile / std::max(1.0, output_tokens);
        if (deciding != nullptr) {
            const double ttft_floor_s = decode_step_s + prefill_s + model.request_latency_s;
            if ((deciding->tpot_seconds > 0 && point.tpot_s > deciding->tpot_seconds) ||
                (deciding->ttft_seconds > 0 && ttft_floor_s > deciding->ttft_seconds) ||
                (deciding->e2e_seconds > 0 &&
                 ttft_floor_s + (output_tokens - 1) * point.tpot_s > deciding->e2e_seconds)) {
                point.missed = true;
                point.ttft_s = ttft_floor_s;
                point.e2e_s = ttft_floor_s + (output_tokens - 1) * point.tpot_s;
                return point;
            }
        }
        // Waiting for a free slot: M/M/c with c = all replicas' batch slots, each held for a
        // request's lifetime.
        const int slots = batch * replicas;
        const double busy_slots = concurrency * replicas;
        const double holding_s = output_tokens * mean_tpot;
        // Under the miss share the probability's value changes nothing (tail_wait gives 0).
        const double slot_wait_probability = wait_probability_at_most(slots, busy_slots, 1 - percentile)
                                                 ? 0
                                                 : erlang_c_wait_probability(slots, busy_slots);
        const double slot_mean_wait = slot_wait_probability * holding_s / (slots - busy_slots);
        // Waiting for a replica to finish the prefill it is running: M/D/c with c = replicas,
        // approximated as half the M/M/c wait (deterministic service, Allen–Cunneen); for one
        // replica this is the M/D/1 mean ρ·s / (2(1 − ρ)).
        const double prefill_load = load * prefill_s;
        const double prefill_wait_probability = erlang_c_wait_probability(replicas, prefill_load);
        const double prefill_mean_wait = prefill_wait_probability * prefill_s / (replicas - prefill_load) / 2;
        // Poisson arrivals find n sequences decoding with probability 1 − e^−n of finding any.
        const double decoding = 1 - std::exp(-concurrency);
        point.ttft_s = tail_wait(slot_wait_probability, slot_mean_wait) +
                       tail_wait(prefill_wait_probability, prefill_mean_wait) + decode_step_s + prefill_s +
                       receive_wait(percentile, decode_step_s, decoding) + model.request_latency_s;
        point.e2e_s = point.ttft_s + (output_tokens - 1) * point.tpot_s;
        point.concurrency = concurrency;
        point.stable = true;
        return point;
    }

    // Closed loop (inference.concurrency): `clients` requests always in flight over all
    // replicas, each client sending its next request when the last one ends, as `vllm bench
    // serve --max-concurrency` and SGLang bench_serving drive a server (docs/perf-model.md,
    // "Closed-loop concurrency"). A replica runs m = min(clients per replica, batch) sequences;
    // over one request's life it decodes output_tokens steps of m sequences and prefills the m
    // prompts that start meanwhile, so it completes X = m / (O·step(m) + m·prefill) requests/s.
    // A request's own prefill does not stall its decode; the m − 1 others' do, once each.
    // Clients beyond the batch wait for a slot: (clients − m) / X by Little's law. Medians in
    // `median`, the SLO percentile in the returned point.
    struct ClosedLoop {
        LoadPoint at_percentile;
        LoadPoint median;
        double requests_per_s = 0;  // all replicas
        double running = 0;         // sequences decoding per replica
    };
    ClosedLoop closed_loop(double clients, int batch) const {
        ClosedLoop result;
        const double per_replica = clients / replicas;
        const double running = std::max(1.0, std::min(per_replica, static_cast<double>(batch)));
        const double queued = std::max(0.0, per_replica - running);
        const double prefill_s = prefill_one();
        const double step_s = step(running);
        const double out = std::max(1.0, output_tokens);
        const double throughput = running / (out * step_s + running * prefill_s);
        const double prefill_busy = std::min(0.999, throughput * prefill_s);
        const double stalls = (running - 1) * (out - 1) / out;
        const double z = normal_quantile(percentile);
        const auto tpot_with = [&](double stall_count) {
            return step_s + prefill_s * std::max(0.0, stall_count) / std::max(1.0, out - 1);
        };
        // A new request waits for the step in flight (half of one on average) and for the
        // prefills queued ahead of it: M/D/1 with the prefill utilisation, half the M/M/1 wait.
        const double prefill_mean_wait = prefill_busy * prefill_s / (1 - prefill_busy) / 2;
        const double slot_wait = queued / throughput;
        // A client's next request finds the others decoding unless it is the replica's only one.
        const double decoding = std::clamp(per_replica - 1, 0.0, 1.0);
        const auto ttft_at = [&](double quantile) {
            return slot_wait + wait_at(prefill_busy, prefill_mean_wait, quantile) + step_s / 2 + prefill_s +
                   receive_wait(quantile, step_s, decoding) + model.request_latency_s;
        };
        result.median.stable = result.at_percentile.stable = true;
        result.median.concurrency = result.at_percentile.concurrency = running;
        result.median.tpot_s = tpot_with(stalls);
        result.median.ttft_s = ttft_at(0.5);
        result.median.e2e_s = result.median.ttft_s + (out - 1) * result.median.tpot_s;
        result.at_percentile.tpot_s = tpot_with(stalls + z * std::sqrt(std::max(0.0, stalls)));
        result.at_percentile.ttft_s = ttft_at(percentile);
        result.at_percentile.e2e_s = result.at_percentile.ttft_s + (out - 1) * result.at_percentile.tpot_s;
        result.requests_per_s = throughput * replicas;
        result.running = running;
        return result;
    }

    // Workloads without a decode phase: each batch takes forward(b) and holds the requests that
    // arrived during the previous one, b = λ·forward(b); a request waits for the batch in
    // flight and then its own.
    LoadPoint at_batched_forward(double total_load, int batch) const {
        LoadPoint point;
        const double load = total_load / replicas;
        double size = 1;
        for (int iteration = 0; iteration < 200; ++iteration) {
            const double next = std::max(1.0, load * batch_time(static_cast<int>(std::ceil(size))));
            if (next > batch) {
                return point;
            }
            if (std::abs(next - size) < 1e-9) {
                break;
            }
            size = next;
        }
        const double forward_s = batch_time(static_cast<int>(std::ceil(size)));
        point.concurrency = size;
        point.ttft_s = 2 * forward_s;
        point.e2e_s = point.ttft_s;
        point.stable = true;
        return point;
    }
};

bool meets(const LoadPoint& point, const SloSpec& slo, bool transformer) {
    if (!point.stable) {
        return false;
    }
    return (slo.ttft_seconds <= 0 || point.ttft_s <= slo.ttft_seconds) &&
           (slo.tpot_seconds <= 0 || !transformer || point.tpot_s <= slo.tpot_seconds) &&
           (slo.e2e_seconds <= 0 || point.e2e_s <= slo.e2e_seconds);
}

// How far a point is from its SLO, for interpolating between loads: the logarithm of the largest
// ratio of a percentile to its target (≤ 0 where the SLO holds; from the lower bounds of a
// `missed` point; the logarithm tames the queue's 1 / (1 − ρ) growth near capacity); −∞ without
// a target, +∞ for an unstable point. The decision itself is meets()'s: the division's
// rounding may put a ratio a hair off 1.
double slo_margin(const LoadPoint& point, const SloSpec& slo, bool transformer) {
    if (!point.stable && !point.missed) {
        return std::numeric_limits<double>::infinity();
    }
    double worst = 0;
    if (slo.ttft_seconds > 0) {
        worst = std::max(worst, point.ttft_s / slo.ttft_seconds);
    }
    if (slo.tpot_seconds > 0 && transformer) {
        worst = std::max(worst, point.tpot_s / slo.tpot_seconds);
    }
    if (slo.e2e_seconds > 0) {
        worst = std::max(worst, point.e2e_s / slo.e2e_seconds);
    }
    return std::log(worst);
}

// The largest load (requests/s, all replicas) that meets the SLO at `batch`, to within 2^-30 of
// the capacity (1e-9 relative: the queue's fixed point behind each step is solved to 1e-9
// (smallest_fixed_point), so a finer bracket only chases its rounding; each step is the
// planner's inner loop). The bracket [meets, fails] shrinks by the ITP method (Oliveira &
// Takahashi, ACM TOMS 47(1), 2020): regula falsi on the SLO margin, truncated and projected so
// that it never needs more steps than bisection's 31 plus one, and often half of them where the
// margin is smooth in the load (the queue's latency curves); an end whose margin is not finite
// (unstable, or no target) is bisected. With a threshold
// (CapacitySearch::needed_rps > 0), the search stops once its bracket puts the result's product
// with the factor on one side of it: `low` only rises and `high` only falls, so the full search's
// result would be on the same side.
double max_load_meeting(const Serving& serving, const SloSpec& slo, int batch, const CapacitySearch& threshold = {}) {
    const double capacity = serving.replicas * batch / serving.batch_time(batch);
    const bool transformer = serving.model.transformer;
    const LoadPoint idle = serving.at(1e-9 * capacity, batch);
    if (!meets(idle, slo, transformer)) {
        return 0;
    }
    double low = 0;
    double high = 2 * capacity;
    double low_margin = std::min(0.0, slo_margin(idle, slo, transformer));
    double high_margin = std::numeric_limits<double>::infinity();  // not evaluated: bisected
    double low_concurrency = 0;  // the decode concurrency at `low`: the fixed point at a higher load is above it
    const double tolerance = high * 0x1p-32;  // half the final bracket: 31 halvings of [0, high]
    const int most_steps = 32;                // ITP's n_1/2 + n_0 with n_0 = 1
    const double truncation_scale = 0.2 / high;
    const bool deciding = threshold.needed_rps > 0;
    // Deciding, the load asked about is the first probe: where it meets the SLO, nothing more is
    // needed; where it does not, the next probe that fails decides.
    double asked = deciding ? threshold.needed_rps / threshold.factor : 0;
    if (asked * threshold.factor < threshold.needed_rps) {
        asked = std::nextafter(asked, std::numeric_limits<double>::infinity());
    }
    // The step cap and the adjacent-doubles stop end the search where rounding leaves no room
    // (a capacity so small that the tolerance underflows); both are beyond ITP's own bound.
    for (int iteration = 0; high - low > 2 * tolerance && iteration < 2 * most_steps; ++iteration) {
        if (deciding &&
            (low * threshold.factor >= threshold.needed_rps || high * threshold.factor < threshold.needed_rps)) {
            break;
        }
        const double width = high - low;
        const double middle = low + width / 2;
        double probe = middle;
        if (iteration == 0 && deciding && asked > low && asked < high) {
            probe = asked;
        } else if (std::isfinite(high_margin) && std::isfinite(low_margin) && high_margin > low_margin) {
            const double falsi = (high_margin * low - low_margin * high) / (high_margin - low_margin);
            const double toward_middle = middle >= falsi ? 1.0 : -1.0;
            const double truncation = truncation_scale * width * width;
            const double truncated =
                truncation <= std::fabs(middle - falsi) ? falsi + toward_middle * truncation : middle;
            const double radius = std::max(0.0, tolerance * std::ldexp(1.0, most_steps - iteration) - width / 2);
            probe = std::fabs(truncated - middle) <= radius ? truncated : middle - toward_middle * radius;
        }
        if (!(probe > low && probe < high)) {
            probe = middle;
            if (!(probe > low && probe < high)) {
                break;
            }
        }
        const LoadPoint point = serving.at(probe, batch, low_concurrency, &slo);
        if (meets(point, slo, transformer)) {
            low = probe;
            low_margin = std::min(0.0, slo_margin(point, slo, transformer));
            low_concurrency = point.concurrency;
        } else {
            high = probe;
            high_margin = std::max(std::numeric_limits<double>::min(), slo_margin(point, slo, transformer));
        }
    }
    return low;
}

// The batch per replica: the one asked for, or (auto) the largest (up to memory and the engine
// limit) whose full-batch decode step still meets the TPOT target, so that TPOT holds even when
// every slot is busy; without a TPOT target, as many as memory holds.
struct BatchChoice {
    int memory_cap = 1;
    int engine_limit = auto_batch_limit;
    bool engine_known = false;

    int largest_for_tpot(const Serving& serving, const SloSpec& slo, int limit) const {
        if (slo.tpot_seconds <= 0 || !serving.model.transformer) {
            return limit;
        }
        if (serving.step(1) > slo.tpot_seconds) {
            return 1;
        }
        int low = 1;
        int high = limit;
        while (low < high) {
            const int middle = low + (high - low + 1) / 2;
            if (serving.step(middle) <= slo.tpot_seconds) {
                low = middle;
            } else {
                high = middle - 1;
            }
        }
        return low;
    }
};

int choose_batch(const Setting& setting, const Serving& serving, const BatchChoice& choice, int requested,
                 InferencePerf& result) {
    const InferenceSpec& spec = setting.workload.inference;
    int batch = requested;
    if (batch > choice.memory_cap && result.fits) {
        // A batch the user fixed is kept: the speed is what they asked about; memory says no.
        result.batch_fits = false;
        const std::string what = serving.model.transformer
                                     ? fmt::format("more KV cache than memory holds ({} sequences of {} tokens)",
                                                   choice.memory_cap, spec.input_tokens + spec.output_tokens)
                                     : fmt::format("more memory than the GPU holds (at most {})", choice.memory_cap);
        setting.notes.push_back(fmt::format("batch {} needs {}", batch, what));
    }
    if (batch > 0) {
        return batch;
    }
    batch = choice.largest_for_tpot(serving, spec.slo, std::min(choice.memory_cap, choice.engine_limit));
    if (serving.model.transformer && setting.workload.task() == InferenceTask::generation) {
        setting.notes.push_back(
            fmt::format("batch auto: {} sequences per replica, the most whose full-batch decode "
                        "step meets the TPOT target ({} {}, engine limit {})",
                        batch, choice.engine_known ? "the KV cache holds" : "memory holds", result.max_batch_memory,
                        choice.engine_limit));
    } else {
        setting.notes.push_back(fmt::format("batch auto: {} {} per replica, as many as memory holds (limit {})", batch,
                                            serving.model.diffusion ? "images" : "requests", choice.engine_limit));
    }
    return batch;
}

// The full-batch step figures that set capacity, and each kernel's time by the resource that bounds it.
void fill_step_figures(const ReplicaModel& model, const Serving& serving, int batch, InferencePerf& result,
                       InferenceTimes& times) {
    times = InferenceTimes{};
    const auto charge = [](ResourceTimes& into, const StepTime& step, double repeats) {
        if (step.summed) {
            into.compute_s += repeats * step.compute_s;
            into.memory_bandwidth_s += repeats * step.memory_s;
        } else {
            const double kernel_s = roofline_time_s(step.compute_s, step.memory_s);
            (step.compute_s >= step.memory_s ? into.compute_s : into.memory_bandwidth_s) += repeats * kernel_s;
        }
        into.memory_bandwidth_s += repeats * step.extra_memory_s;
        into.launch_overhead_s += repeats * step.overhead_s;
        into.interconnect_s += repeats * step.communication_s;
    };
    const auto report_step = [&](const StepTime& step) {
        result.decode_step_s = step.total_s();
        result.decode_compute_s = step.compute_s;
        result.decode_memory_s = step.memory_s;
        result.decode_overhead_s = step.overhead_s;
        result.decode_communication_s = step.communication_s;
        result.decode_bytes_per_step = step.bytes_per_gpu;
        result.decode_flops_per_step = step.flops_per_gpu;
        result.decode_link_bytes_per_step = step.link_bytes_per_gpu;
    };
    if (model.transformer) {
        const StepTime full_prefill = prefill(model, batch, serving.input_tokens, serving.llama_cpp);
        result.batch_prefill_s = full_prefill.total_s();
        result.batch_prefill_bytes = full_prefill.bytes_per_gpu;
        result.batch_prefill_flops = full_prefill.flops_per_gpu;
        result.batch_prefill_link_bytes = full_prefill.link_bytes_per_gpu;
        result.batch_prefill_communication_s = full_prefill.communication_s;
        result.prefill_tokens_per_s = result.replicas * batch * serving.input_tokens / result.batch_prefill_s;
        const StepTime step = decode_step(model, batch, serving.mean_context());
        report_step(step);
        charge(times.prefill, full_prefill, 1);
        charge(times.decode, step, serving.output_tokens);
    } else if (model.diffusion) {
        const StepTime step = denoising_step(model, batch);
        const StepTime decode = vae_decode(model, batch);
        report_step(step);
        result.batch_prefill_s = forward_batch_s(model, batch);
        result.denoising_step_s = step.total_s();
        result.vae_decode_s = decode.total_s();
        result.images_per_s = result.requests_per_s;
        charge(times.decode, step, model.denoising_steps);
        charge(times.decode, decode, 1);
    } else {
        const StepTime forward = non_transformer_forward(model, batch);
        report_step(forward);
        result.batch_prefill_s = forward.total_s();
        charge(times.decode, forward, 1);
    }
}

// The fewest replicas that meet the SLO at the offered load: pooling makes more than offered /
// per-replica maximum unnecessary, so search from below. 0 when none would.
int replicas_meeting(const Serving& serving, const InferenceSpec& spec, int batch, int from) {
    const auto meets_with = [&](int replicas) {
        Serving pooled = serving;
        pooled.replicas = replicas;
        return meets(pooled.at(spec.requests_per_s, batch), spec.slo, serving.model.transformer);
    };
    return smallest_holding(from, 1 << 20, meets_with).value_or(0);
}

// Which target stops a higher load: the first to fail just above the largest load meeting them.
// Within 15 % of full-batch capacity the queues, not one phase, stop the load.
SloTarget binding_target(const Serving& serving, const SloSpec& slo, int batch, double max_load, double capacity) {
    const LoadPoint beyond = serving.at(std::max(max_load * 1.02, 1e-9), batch);
    if (!beyond.stable || max_load >= 0.85 * capacity) {
        return SloTarget::capacity;
    }
    if (slo.ttft_seconds > 0 && beyond.ttft_s > slo.ttft_seconds) {
        return SloTarget::ttft;
    }
    if (slo.tpot_seconds > 0 && serving.model.transformer && beyond.tpot_s > slo.tpot_seconds) {
        return SloTarget::tpot;
    }
    if (slo.e2e_seconds > 0 && beyond.e2e_s > slo.e2e_seconds) {
        return SloTarget::e2e;
    }
    return SloTarget::capacity;
}

// Latencies at the offered load, the SLO verdict, the largest load meeting it and what binds.
void apply_load(const Setting& setting, const Serving& serving, int batch, const CapacitySearch& capacity,
                InferencePerf& result) {
    const InferenceSpec& spec = setting.workload.inference;
    const bool transformer = serving.model.transformer;
    const LoadPoint loaded = serving.at(spec.requests_per_s, batch);
    if (loaded.stable) {
        result.p99_ttft_s = loaded.ttft_s;
        result.p99_tpot_s =
            transformer && serving.output_tokens > 0 ? std::optional<double>(loaded.tpot_s) : std::nullopt;
        result.p99_e2e_s = loaded.e2e_s;
        result.mean_concurrency = loaded.concurrency;
    } else {
        setting.notes.push_back(fmt::format(
            "the offered load {:g} req/s exceeds what {} replica(s) at batch {} sustain; queues grow without bound, "
            "so no P{:g} latency",
            spec.requests_per_s, result.replicas, batch, spec.slo.percentile));
    }
    result.meets_slo = result.fits && result.batch_fits && meets(loaded, spec.slo, transformer);
    if (!capacity.search) {
        return;
    }
    if (capacity.needed_rps > 0) {
        // Only whether the capacity reaches a threshold (PerfQuery::capacity_needed_rps).
        result.max_requests_per_s_meeting_slo =
            result.fits && result.meets_slo ? max_load_meeting(serving, spec.slo, batch, capacity) : 0;
        return;
    }
    const double max_load = result.fits ? max_load_meeting(serving, spec.slo, batch) : 0;
    result.max_requests_per_s_meeting_slo = max_load;
    if (!result.meets_slo && result.fits && max_load > 0) {
        result.replicas_needed = replicas_meeting(serving, spec, batch, result.replicas);
    }
    result.binding_target = binding_target(serving, spec.slo, batch, max_load, result.requests_per_s);
}

// Closed-loop clients (inference.concurrency): the latencies and throughput at that many
// clients, the SLO verdict on the percentile point, and with a capacity search the replicas
// that meet the SLO with these clients and the throughput at the most clients these replicas
// serve within it.
void apply_closed_loop(const Setting& setting, const Serving& serving, int batch, const CapacitySearch& capacity,
                       InferencePerf& result) {
    const InferenceSpec& spec = setting.workload.inference;
    const double clients = spec.concurrency;
    const Serving::ClosedLoop point = serving.closed_loop(clients, batch);
    result.concurrency = spec.concurrency;
    result.ttft_s = point.median.ttft_s;
    result.tpot_s = point.median.tpot_s;
    result.requests_per_s = point.requests_per_s;
    result.output_tokens_per_s = point.requests_per_s * serving.output_tokens;
    result.offered_requests_per_s = point.requests_per_s;
    result.mean_concurrency = point.running;
    result.p99_ttft_s = point.at_percentile.ttft_s;
    result.p99_tpot_s = point.at_percentile.tpot_s;
    result.p99_e2e_s = point.at_percentile.e2e_s;
    result.meets_slo = result.fits && result.batch_fits && meets(point.at_percentile, spec.slo, true);
    if (clients > serving.replicas * static_cast<double>(batch)) {
        setting.notes.push_back(fmt::format("{} clients over {} replica(s) of {} sequences: {:g} wait for a free slot",
                                            spec.concurrency, serving.replicas, batch,
                                            clients - serving.replicas * static_cast<double>(batch)));
    }
    if (!capacity.search || !result.fits) {
        return;
    }
    const auto meets_with = [&](const Serving& fleet, double count) {
        return meets(fleet.closed_loop(count, batch).at_percentile, spec.slo, true);
    };
    // The most clients these replicas serve within the SLO (latency grows with clients).
    const int most =
        smallest_holding(1, 1 << 24, [&](int count) { return !meets_with(serving, count); }).value_or((1 << 24) + 1) -
        1;
    result.max_requests_per_s_meeting_slo = most > 0 ? serving.closed_loop(most, batch).requests_per_s : 0;
    result.binding_target = SloTarget::capacity;
    if (!result.meets_slo && most > 0) {
        result.replicas_needed = smallest_holding(serving.replicas, 1 << 20, [&](int replicas) {
                                     Serving pooled = serving;
                                     pooled.replicas = replicas;
                                     return meets_with(pooled, clients);
                                 }).value_or(0);
    }
}

}  // namespace

InferencePerf estimate_inference(const Setting& setting, int batch_override, const CapacitySearch& capacity,
                                 InferenceTimes& times) {
    const Workload& workload = setting.workload;
    const InferenceSpec& spec = workload.inference;
    InferencePerf result;
    const Layout& layout = setting.layout;
    const int shards = std::max(1, layout.tensor_parallel * layout.pipeline_parallel);
    result.replicas = std::max(1, layout.data_parallel);
    result.percentile = spec.slo.percentile;
    result.offered_requests_per_s = spec.requests_per_s;
    const ReplicaModel model = build_model(setting);
    result.expert_parallel = model.expert_parallel;
    const Serving serving{model,
                          static_cast<double>(spec.input_tokens),
                          static_cast<double>(spec.output_tokens),
                          spec.slo.percentile / 100,
                          setting.stack == ServingStack::llama_cpp,
                          result.replicas,
                          {},
                          {},
                          {},
                          std::numeric_limits<double>::quiet_NaN(),
                          0};
    if (!model.transformer && model.forward_flops_per_sample <= 0) {
        setting.notes.push_back("the model has neither transformer fields nor flops_per_sample; no speed estimate");
        result.batch = 0;
        return result;
    }

    result.max_batch_memory = inference_batch_capacity(workload, setting.gpu, layout, setting.precision);
    result.fits = result.max_batch_memory > 0;
    if (!result.fits) {
        setting.notes.push_back(
            fmt::format("the weights do not fit {} × {} per replica; speeds assume they did", shards, setting.gpu.id));
    }
    // The scheduler's own limit: a paged engine's max_num_seqs, else a typical engine default.
    const std::optional<ServingMemory> engine = serving_memory(workload, setting.gpu, layout, setting.precision);
    BatchChoice choice;
    choice.memory_cap = std::max(1, result.max_batch_memory);
    choice.engine_limit = engine ? engine->max_num_seqs : auto_batch_limit;
    choice.engine_known = engine.has_value();
    const int requested = batch_override > 0 ? batch_override : spec.batch;
    if (spec.concurrency > 0 && model.transformer) {
        // A closed loop runs every client the engine admits: its scheduler's limit and what the
        // KV cache holds, not a batch chosen for a TPOT target.
        const int batch = requested > 0 ? requested : std::min(choice.memory_cap, choice.engine_limit);
        if (requested > 0 && requested > choice.memory_cap) {
            choose_batch(setting, serving, choice, requested, result);
        } else if (requested <= 0) {
            setting.notes.push_back(fmt::format("closed loop: up to {} sequences per replica ({} {}, engine limit {})",
                                                batch, choice.engine_known ? "the KV cache holds" : "memory holds",
                                                result.max_batch_memory, choice.engine_limit));
        }
        result.batch = batch;
        apply_closed_loop(setting, serving, batch, capacity, result);
        // The step figures and the bottleneck are those of the sequences the clients keep
        // decoding, not of a full batch they never fill.
        fill_step_figures(model, serving, static_cast<int>(std::ceil(result.mean_concurrency)), result, times);
        return result;
    }
    const int batch = choose_batch(setting, serving, choice, requested, result);
    result.batch = batch;

    const LoadPoint alone = serving.at(0, batch);
    result.ttft_s = alone.ttft_s;
    result.tpot_s = alone.tpot_s;
    result.requests_per_s = result.replicas * batch / serving.batch_time(batch);
    result.output_tokens_per_s = model.transformer ? result.requests_per_s * spec.output_tokens : 0;
    fill_step_figures(model, serving, batch, result, times);
    apply_load(setting, serving, batch, capacity, result);
    if (!capacity.search || capacity.needed_rps > 0) {
        return result;
    }
    // Would more memory (a larger batch) raise the load meeting the SLO by 10 % or more?
    if (requested <= 0 && result.fits && batch == choice.memory_cap && choice.memory_cap < choice.engine_limit) {
        const int unconstrained = choice.largest_for_tpot(serving, spec.slo, choice.engine_limit);
        result.memory_limits_load = unconstrained > batch && max_load_meeting(serving, spec.slo, unconstrained) >
                                                                 1.1 * result.max_requests_per_s_meeting_slo;
    }
    return result;
}

}  // namespace gpusel::perf_detail

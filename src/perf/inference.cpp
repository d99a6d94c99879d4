// Inference: prefill (TTFT) and decode (TPOT) as a roofline with measured efficiency, static-batch
// capacity, and the tail latencies of continuous batching under a Poisson load; models without
// tokens (CNNs, recommenders) as one forward pass per batch, diffusion as denoising steps and a
// VAE decode per batch of images.
// Equations and sources: docs/perf-model.md, "Inference".

#include <algorithm>
#include <cmath>
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
    double kv_bytes_per_token = 0;
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
    double qkv_width = 0;  // (heads + 2 kv_heads) × head_dim
    double kv_width = 0;   // kv_heads × head_dim
    double ffn_width = 0;  // FFN width a token passes through (MoE: its top_k experts)
    bool ffn_gated = false;
    double vocab = 0;
    double attention_weight_bytes = 0;  // per layer: QKV and output projections
    double logits_weight_bytes = 0;     // the output layer
    GemmRates gemm;
    double attention_peak_flops_per_s = 0;  // flash attention runs at the 16-bit peak
    double attention_fraction = 0.5;
    double kernel_floor_s = 0;
    double elementwise_kernels = 0;
    double step_floor_s = 0;
    double kv_read_factor = 1;
    double attention_heads = 0;        // query heads
    double attention_score_bytes = 0;  // per score, when the attention kernels materialize them
    CollectiveLink tensor_collective;  // the tensor-parallel all-reduce's link
};

struct StepTime {
    double compute_s = 0;
    double memory_s = 0;
    double extra_memory_s = 0;  // a separate bandwidth-bound kernel (dequantization)
    double overhead_s = 0;
    double communication_s = 0;
    double bytes_per_gpu = 0;
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
    replica.kv_width = kv_heads * model.attention_head_dim();
    replica.qkv_width = replica.attention_width + 2 * replica.kv_width;
    replica.vocab = model.vocab;
    replica.ffn_gated = model.ffn_gated;
    const double layers = std::max(1, model.layers);
    const double attention_params = replica.hidden * (replica.qkv_width + replica.attention_width);
    const double logits_params = replica.vocab * replica.hidden;
    const double ffn_params = std::max(0.0, matmul - layers * attention_params - logits_params) / layers;
    replica.ffn_width = replica.hidden > 0 ? ffn_params / (replica.hidden * (replica.ffn_gated ? 3 : 2)) : 0;
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
    // A KV head is read at most once per query head of its group.
    replica.kv_read_factor = std::clamp(factors.kv_read_factor, 1.0, std::max(1.0, model.heads / kv_heads));
    replica.attention_heads = model.heads;
    replica.attention_score_bytes = factors.attention_score_bytes;
    // Tensor parallel inside an NVLink/Infinity Fabric domain: the measured NCCL all-reduce (bus
    // bandwidth and small-message floor, docs/reference/perf_modelling.md §1.2, Vidur
    // all_reduce.csv), the same collectives training uses; engines with their own all-reduce
    // kernels (TensorRT-LLM, vLLM) lower the floor by rule. Over PCIe and networks, the ring.
    replica.tensor_collective = collective_link(replica.tensor_link, setting.gpu, factors);
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
    } else {
        replica.dense_weight_bytes = matmul * bytes_per_param;
    }
    replica.kv_bytes_per_token = kv_bytes_per_token(workload);
    replica.dequantize_pass = setting.stack == ServingStack::llama_cpp && is_quantized(workload.weights);
    replica.fp16_weight_bytes = matmul * 2;
    const Layout& layout = setting.layout;
    replica.tensor_link = link_for_group(workload, setting.gpu, layout.tensor_parallel, factors, setting.platform);
    replica.pipeline_link = link_for_group(workload, setting.gpu, layout.tensor_parallel * layout.pipeline_parallel,
                                           factors, setting.platform);
    fill_operators(setting, matmul, bytes_per_param, replica);
    return replica;
}

// Weight bytes one decode step reads for `batch` sequences: MoE batches touch more experts,
// 1 − (1 − k/E)^batch of them in expectation.
double decode_weight_bytes(const ReplicaModel& model, double batch) {
    if (model.expert_weight_bytes <= 0) {
        return model.dense_weight_bytes;
    }
    const double touched = 1 - std::pow(1 - model.expert_fraction_per_token, std::max(1.0, batch));
    return model.dense_weight_bytes + model.expert_weight_bytes * touched;
}

double communication_s(const ReplicaModel& model, double rows) {
    double seconds = 0;
    const double activation_bytes = rows * model.hidden * model.activation_bytes;
    if (model.tensor_parallel > 1) {
        // Megatron tensor parallelism: two all-reduces of the activations per layer.
        seconds += 2.0 * model.layers * all_reduce_s(activation_bytes, model.tensor_parallel, model.tensor_collective);
    }
    if (model.pipeline_parallel > 1) {
        seconds += (model.pipeline_parallel - 1) *
                   (activation_bytes / model.pipeline_link.bytes_per_s + model.pipeline_link.latency_s);
    }
    return seconds;
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

// Charges one kernel of `compute_s` and `memory_s` (its floor included) to the bound it runs at.
void add_kernel(StepTime& step, double compute_s, double memory_s, double kernel_s) {
    (compute_s >= memory_s ? step.compute_s : step.memory_s) += kernel_s;
}

// One layer's GEMMs (QKV, attention output, FFN up/gate, down) for `rows` tokens on one GPU of
// the tensor-parallel group, the weights read being `ffn_weight_bytes` for the FFN (MoE: the
// experts touched) and the attention projections'. Column-parallel GEMMs split N, row-parallel K.
void add_layer_gemms(const ReplicaModel& model, double rows, double ffn_weight_bytes, double weight_scale,
                     StepTime& step) {
    const double t = model.tensor_parallel;
    const double q = model.attention_width;
    const double h = model.hidden;
    const double f = model.ffn_width;
    const double attention_bytes = model.attention_weight_bytes * weight_scale / t;
    const double qkv_share = model.qkv_width / (model.qkv_width + q);
    const double up_share = model.ffn_gated ? 2.0 / 3 : 0.5;
    struct Gemm {
        double columns, inner, bytes;
    };
    const Gemm gemms[] = {
        {model.qkv_width / t, h, attention_bytes * qkv_share},
        {h, q / t, attention_bytes * (1 - qkv_share)},
        {(model.ffn_gated ? 2 : 1) * f / t, h, ffn_weight_bytes / t * up_share},
        {h, f / t, ffn_weight_bytes / t * (1 - up_share)},
    };
    for (const Gemm& gemm : gemms) {
        if (gemm.columns <= 0 || gemm.inner <= 0) {
            continue;
        }
        const GemmTime time = gemm_timing(rows, gemm.columns, gemm.inner, gemm.bytes, model.gemm);
        add_kernel(step, time.compute_s, gemm.bytes / model.gemm.bandwidth_bytes_per_s, time.time_s);
    }
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
    const double columns = model.vocab / model.tensor_parallel;
    const GemmTime time = gemm_timing(sequences, columns, model.hidden, bytes, model.gemm);
    add_kernel(step, time.compute_s, bytes / model.gemm.bandwidth_bytes_per_s, time.time_s);
    step.bytes_per_gpu += bytes;
}

// FFN weight bytes of one layer a step of `rows` tokens reads (MoE: the experts they touch).
double ffn_layer_bytes(const ReplicaModel& model, double rows, double weight_scale) {
    const double layers = std::max(1, model.layers);
    const double total = decode_weight_bytes(model, rows) * weight_scale;
    const double logits = model.logits_weight_bytes * weight_scale;
    return std::max(0.0, total - logits - layers * model.attention_weight_bytes * weight_scale) / layers;
}

// One decode step of `batch` sequences whose mean context is `context` tokens: per layer the
// GEMMs, paged decode attention (reads the KV cache, kv_read_factor times with old GQA kernels),
// the element-wise kernels and two all-reduces; then the logits and the step floor.
StepTime decode_step(const ReplicaModel& model, double batch, double context) {
    if (!model.transformer) {
        return non_transformer_forward(model, batch);
    }
    StepTime step;
    step.summed = true;
    const double t = model.tensor_parallel;
    const double layers = model.layers;
    StepTime layer;
    layer.summed = true;
    const double ffn_bytes = ffn_layer_bytes(model, batch, 1);
    add_layer_gemms(model, batch, ffn_bytes, 1, layer);
    const double kv_bytes = batch * context * model.kv_bytes_per_token / std::max(1.0, layers) / t;
    const double attention_flops = 4.0 * batch * context * model.attention_width / t;  // QKᵀ and AV, one query
    const double attention_compute = attention_flops / (model.attention_peak_flops_per_s * model.attention_fraction);
    // Without flash attention every query head's scores over the context go through DRAM.
    const double score_bytes = batch * model.attention_heads * context * model.attention_score_bytes / t;
    const double attention_memory = (kv_bytes * model.kv_read_factor + score_bytes) / model.bandwidth_bytes_per_s;
    add_kernel(layer, attention_compute, attention_memory,
               std::max(attention_compute, attention_memory) + model.kernel_floor_s);
    add_layer_elementwise(model, batch, layer);
    step.compute_s = layers * layer.compute_s;
    step.memory_s = layers * layer.memory_s;
    add_logits(model, batch, 1, step);
    const double weights = decode_weight_bytes(model, batch);
    step.bytes_per_gpu = (weights + batch * context * model.kv_bytes_per_token) / (t * model.pipeline_parallel);
    step.overhead_s = layers * model.overhead_per_layer_s + model.step_floor_s;
    step.communication_s = communication_s(model, batch);
    return step;
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
    StepTime layer;
    layer.summed = true;
    add_layer_gemms(model, gemm_rows, ffn_layer_bytes(model, gemm_rows, weight_scale), weight_scale, layer);
    add_layer_elementwise(model, gemm_rows, layer);
    // Causal attention: QKᵀ and AV over the lower triangle, 2·s²·width per sequence and layer.
    const double attention_flops = batch * 2.0 * prompt_tokens * prompt_tokens * model.attention_width / t / passes;
    const double attention_compute = attention_flops / (model.attention_peak_flops_per_s * model.attention_fraction);
    const double kv_write = gemm_rows * model.kv_bytes_per_token / std::max(1.0, layers) / t;
    // Kernels that materialize the scores (no flash attention) write and read them per query head:
    // a micro-batch of `chunk` tokens scores the whole cache so far, s·(s + chunk)/2 per sequence.
    const double chunk = std::min(prompt_tokens, gemm_rows);
    const double scores = batch * model.attention_heads * prompt_tokens * (prompt_tokens + chunk) / 2 / t / passes;
    const double attention_memory = (kv_write + scores * model.attention_score_bytes) / model.bandwidth_bytes_per_s;
    add_kernel(layer, attention_compute, attention_memory,
               std::max(attention_compute, attention_memory) + model.kernel_floor_s);
    step.compute_s = passes * layers * layer.compute_s;
    step.memory_s = passes * layers * layer.memory_s;
    add_logits(model, batch, weight_scale, step);
    const double weight_read = model.dequantize_pass ? model.fp16_weight_bytes : decode_weight_bytes(model, rows);
    const double bytes = passes * weight_read + rows * model.kv_bytes_per_token;
    step.bytes_per_gpu = bytes / (t * model.pipeline_parallel);
    if (model.dequantize_pass) {
        // Read the quantized matrix and write its FP16 copy, once per micro-batch.
        step.extra_memory_s = passes * (stored + model.fp16_weight_bytes) / t / model.bandwidth_bytes_per_s;
    }
    step.overhead_s = passes * layers * model.overhead_per_layer_s + model.step_floor_s;
    step.communication_s = communication_s(model, rows);
    return step;
}

// Latency of a replica with at most `batch` sequences in flight, under Poisson arrivals of
// `load` requests/s (docs/perf-model.md, "Serving under load").
struct LoadPoint {
    bool stable = false;
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
    double step(double batch) const {
        if (batch == 1) {
            if (!step_one_cache_s) {
                step_one_cache_s = decode_step(model, 1, mean_context()).total_s();
            }
            return *step_one_cache_s;
        }
        return decode_step(model, batch, mean_context()).total_s();
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
        const double miss = 1 - percentile;
        if (wait_probability <= miss || mean_wait <= 0) {
            return 0;
        }
        return mean_wait / wait_probability * std::log(wait_probability / miss);
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
            point.ttft_s = single;
            const bool decodes = model.transformer && output_tokens > 0;
            point.tpot_s = decodes ? step(1) : 0;
            point.e2e_s = single + (decodes ? (output_tokens - 1) * point.tpot_s : 0);
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
            const double ttft_floor_s = decode_step_s + prefill_s;
            if ((deciding->tpot_seconds > 0 && point.tpot_s > deciding->tpot_seconds) ||
                (deciding->ttft_seconds > 0 && ttft_floor_s > deciding->ttft_seconds) ||
                (deciding->e2e_seconds > 0 &&
                 ttft_floor_s + (output_tokens - 1) * point.tpot_s > deciding->e2e_seconds)) {
                return LoadPoint{};
            }
        }
        // Waiting for a free slot: M/M/c with c = all replicas' batch slots, each held for a
        // request's lifetime.
        const int slots = batch * replicas;
        const double busy_slots = concurrency * replicas;
        const double holding_s = output_tokens * mean_tpot;
        const double slot_wait_probability = erlang_c_wait_probability(slots, busy_slots);
        const double slot_mean_wait = slot_wait_probability * holding_s / (slots - busy_slots);
        // Waiting for a replica to finish the prefill it is running: M/D/c with c = replicas,
        // approximated as half the M/M/c wait (deterministic service, Allen–Cunneen); for one
        // replica this is the M/D/1 mean ρ·s / (2(1 − ρ)).
        const double prefill_load = load * prefill_s;
        const double prefill_wait_probability = erlang_c_wait_probability(replicas, prefill_load);
        const double prefill_mean_wait = prefill_wait_probability * prefill_s / (replicas - prefill_load) / 2;
        point.ttft_s = tail_wait(slot_wait_probability, slot_mean_wait) +
                       tail_wait(prefill_wait_probability, prefill_mean_wait) + decode_step_s + prefill_s;
        point.e2e_s = point.ttft_s + (output_tokens - 1) * point.tpot_s;
        point.concurrency = concurrency;
        point.stable = true;
        return point;
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

// The largest load (requests/s, all replicas) that meets the SLO at `batch`. With a threshold
// (CapacitySearch::needed_rps > 0), the bisection stops once its bracket puts the result's
// product with the factor on one side of it: `low` only rises and `high` only falls, so the
// full search's result would be on the same side.
double max_load_meeting(const Serving& serving, const SloSpec& slo, int batch, const CapacitySearch& threshold = {}) {
    const double capacity = serving.replicas * batch / serving.batch_time(batch);
    if (!meets(serving.at(1e-9 * capacity, batch), slo, serving.model.transformer)) {
        return 0;
    }
    double low = 0;
    double high = 2 * capacity;
    double low_concurrency = 0;  // the decode concurrency at `low`: the fixed point at a higher load is above it
    // 40 halvings leave 2^-39 of the capacity (2e-12 relative): far below the three significant
    // figures reported, and each step solves the queue's fixed point (the planner's inner loop).
    const bool deciding = threshold.needed_rps > 0;
    for (int iteration = 0; iteration < 40; ++iteration) {
        if (deciding &&
            (low * threshold.factor >= threshold.needed_rps || high * threshold.factor < threshold.needed_rps)) {
            break;
        }
        const double middle = (low + high) / 2;
        const LoadPoint point = serving.at(middle, batch, low_concurrency, &slo);
        if (meets(point, slo, serving.model.transformer)) {
            low = middle;
            low_concurrency = point.concurrency;
        } else {
            high = middle;
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
    };
    if (model.transformer) {
        const StepTime full_prefill = prefill(model, batch, serving.input_tokens, serving.llama_cpp);
        result.batch_prefill_s = full_prefill.total_s();
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
    const Serving serving{model,
                          static_cast<double>(spec.input_tokens),
                          static_cast<double>(spec.output_tokens),
                          spec.slo.percentile / 100,
                          setting.stack == ServingStack::llama_cpp,
                          result.replicas,
                          {},
                          {},
                          {}};
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

// Every sentence about a predicted bottleneck: the numbers that show it (detail) and the fix
// that pays most (remedy), written from perf's typed estimate. Kept out of estimate_perf so that
// the estimator returns numbers only and the planner formats prose once per candidate it shows,
// not once per configuration it evaluates.

#include "explain/explain.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "base/format.hpp"

namespace gpusel {

namespace {

std::string percent(double fraction) {
    return format_percent(fraction);
}

// What would let more sequences fit beside the weights, named only where the workload does not
// already use it: an 8-bit KV cache halves a 16-bit one, int4 weights free memory for KV.
// Empty when both are already done.
std::string smaller_sequence_remedy(const Workload& workload) {
    const bool kv_already_small = workload.kv_cache == KvCacheFormat::fp8 || workload.kv_cache == KvCacheFormat::int8;
    const bool weights_already_small = bits_per_weight(workload.weights) < 8;
    if (kv_already_small && weights_already_small) {
        return "";
    }
    if (kv_already_small) {
        return "int4 weights";
    }
    return weights_already_small ? "an FP8 KV cache" : "an FP8 KV cache or int4 weights";
}

// What one request of a workload that generates no tokens is called, and its model's part that
// holds the weights, for the wording of its bottlenecks.
std::string_view request_noun(InferenceTask task) {
    return task == InferenceTask::diffusion ? "image" : "request";
}

std::string single_pass_capacity_remedy(InferenceTask task) {
    switch (task) {
        case InferenceTask::recommendation:
            return "shard the embedding tables over more GPUs (or keep the cold rows in host memory), 8-bit "
                   "embeddings, "
                   "or a GPU with more memory";
        case InferenceTask::diffusion:
        case InferenceTask::vision:
            return "8-bit (FP8/INT8) weights, or a GPU with more memory";
        default:
            return "8-bit weights, tensor parallel over more GPUs, or a GPU with more memory";
    }
}

// Detail and remedy for a workload served in one pass per batch (encoders, prefill-only scoring,
// CNNs, recommenders) or in denoising steps (diffusion): no decode, no KV-cache remedies.
void explain_single_pass(const Workload& workload, Precision precision, const GpuSpec& gpu, const InferencePerf& perf,
                         ServingStack stack, Bottleneck& bottleneck) {
    const InferenceTask task = workload.task();
    const std::string noun(request_noun(task));
    const bool diffusion = task == InferenceTask::diffusion;
    const std::string pass = diffusion ? fmt::format("denoising step of {} image(s)", perf.batch)
                                       : fmt::format("forward pass of {} {}s", perf.batch, noun);
    const double pass_s = diffusion ? perf.denoising_step_s : perf.batch_prefill_s;
    switch (bottleneck.resource) {
        case Resource::memory_capacity:
            if (!perf.fits) {
                bottleneck.detail =
                    fmt::format("the weights do not fit {}'s {} with {} headroom", gpu.id, format_gb(gpu.memory_bytes),
                                percent(workload.constraints.memory_headroom_fraction));
                bottleneck.remedy = single_pass_capacity_remedy(task);
            } else if (!perf.batch_fits) {
                bottleneck.detail =
                    fmt::format("batch {} needs more memory than the GPU holds (at most {} {}s per replica)",
                                perf.batch, perf.max_batch_memory, noun);
                bottleneck.remedy = "lower the batch, or a GPU with more memory";
            } else {
                bottleneck.detail =
                    fmt::format("memory holds {} {}s per replica; the offered {:g} req/s needs more in flight",
                                perf.max_batch_memory, noun, workload.inference.requests_per_s);
                bottleneck.remedy = "memory-capacity-bound: more replicas or a GPU with more memory raise the batch";
            }
            return;
        case Resource::memory_bandwidth:
            bottleneck.detail =
                fmt::format("each {} moves {} per GPU: {} of its {}", pass, format_gb(perf.decode_bytes_per_step),
                            format_duration(perf.decode_memory_s), format_duration(pass_s));
            bottleneck.remedy =
                diffusion ? "memory-bandwidth-bound: a larger batch denoises more images per weight read"
                : task == InferenceTask::encoder || task == InferenceTask::scoring
                    ? "memory-bandwidth-bound: a larger batch reads the weights once for more requests; "
                      "8-bit weights cut the bytes per pass"
                    : "memory-bandwidth-bound: a fused INT8 engine (TensorRT) moves fewer bytes per "
                      "layer; a GPU with more memory bandwidth helps, more TFLOPS would not";
            return;
        case Resource::compute:
            bottleneck.detail =
                diffusion
                    ? fmt::format(
                          "the denoiser is bound by tensor throughput: {} steps × {} + VAE decode {} per "
                          "batch of {} image(s)",
                          workload.inference.denoising_steps, format_duration(perf.denoising_step_s),
                          format_duration(perf.vae_decode_s), perf.batch)
                    : fmt::format("bound by tensor throughput: one {} alone takes {}, a full batch of {} takes {}",
                                  noun, format_duration(perf.ttft_s), perf.batch, format_duration(pass_s));
            if (diffusion) {
                bottleneck.remedy =
                    "compute-bound: fewer denoising steps (a distilled model), an 8-bit denoiser "
                    "(TensorRT FP8/INT8), more replicas or a GPU with more tensor TFLOPS; more memory "
                    "bandwidth would not help";
            } else {
                // Transformers with 8-bit weights still run 16-bit GEMMs (weight-only); CNNs run INT8 kernels.
                const bool eight_bit = precision == Precision::fp8 ||
                                       (!workload.model.is_transformer() && bits_per_weight(workload.weights) <= 8);
                bottleneck.remedy =
                    !eight_bit && (gpu.supports(Precision::fp8) || gpu.supports(Precision::int8))
                        ? "compute-bound: 8-bit GEMMs (TensorRT INT8/FP8) roughly double the tensor rate "
                          "on this GPU; more replicas share the load; more memory bandwidth would not help"
                        : "compute-bound: more replicas or a GPU with more tensor TFLOPS; more memory "
                          "bandwidth would not help";
            }
            return;
        case Resource::launch_overhead:
            bottleneck.detail = fmt::format("fixed per-pass overhead {} of the {} {}",
                                            format_duration(perf.decode_overhead_s), format_duration(pass_s), pass);
            bottleneck.remedy =
                stack == ServingStack::optimized
                    ? "launch-bound: a larger batch amortises the fixed per-pass cost; a faster GPU would "
                      "not help"
                    : "launch-bound: a compiled engine (TensorRT, ONNX Runtime, torch.compile with CUDA "
                      "graphs) and a larger batch amortise the fixed per-pass cost; a faster GPU would "
                      "not help";
            return;
        case Resource::interconnect:
            bottleneck.detail =
                fmt::format("tensor-parallel traffic {} of the {} {}", format_duration(perf.decode_communication_s),
                            format_duration(pass_s), pass);
            bottleneck.remedy = "communication-bound: run one replica per GPU where the weights fit";
            return;
        case Resource::host_link:
        case Resource::input_pipeline:
            bottleneck.detail = "host-side time dominates";
            bottleneck.remedy = "keep inputs on the GPU; pin host memory";
            return;
    }
}

// Detail and remedy for an inference bottleneck.
void explain_inference(const Workload& workload, Precision precision, const GpuSpec& gpu, const InferencePerf& perf,
                       ServingStack stack, BottleneckPhase phase, Bottleneck& bottleneck) {
    if (workload.task() != InferenceTask::generation) {
        explain_single_pass(workload, precision, gpu, perf, stack, bottleneck);
        return;
    }
    const double step = perf.decode_step_s;
    switch (bottleneck.resource) {
        case Resource::memory_capacity:
            if (!perf.fits) {
                bottleneck.detail =
                    fmt::format("the weights do not fit {}'s {} with {} headroom", gpu.id, format_gb(gpu.memory_bytes),
                                percent(workload.constraints.memory_headroom_fraction));
                bottleneck.remedy =
                    "quantize the weights (AWQ/GPTQ int4 or FP8), shard over more GPUs "
                    "(tensor parallel), or choose a GPU with more memory";
            } else if (!perf.batch_fits) {
                bottleneck.detail = fmt::format(
                    "batch {} needs more KV cache than memory holds ({} sequences of {} tokens)", perf.batch,
                    perf.max_batch_memory, workload.inference.input_tokens + workload.inference.output_tokens);
                const std::string smaller = smaller_sequence_remedy(workload);
                bottleneck.remedy = smaller.empty()
                                        ? "lower the batch, or a GPU with more memory (weights and KV cache are "
                                          "already as small as gpusel models them)"
                                        : fmt::format("lower the batch, use {}, or a GPU with more memory", smaller);
            } else {
                bottleneck.detail = fmt::format(
                    "memory holds {} sequences of {} tokens per replica; the offered {} "
                    "needs more in flight",
                    perf.max_batch_memory, workload.inference.input_tokens + workload.inference.output_tokens,
                    workload.inference.load_text());
                const std::string smaller = smaller_sequence_remedy(workload);
                bottleneck.remedy =
                    smaller.empty() ? "memory-capacity-bound: more replicas or a GPU with more memory would raise the "
                                      "batch — more bandwidth alone would not help"
                                    : fmt::format(
                                          "memory-capacity-bound: {} would raise the batch, as would more replicas "
                                          "or a GPU with more memory — more bandwidth alone would not help",
                                          smaller);
            }
            return;
        case Resource::memory_bandwidth:
            bottleneck.detail = fmt::format(
                "decode reads {} per GPU per step: {} of the {} step at batch {} "
                "({} of {} end to end)",
                format_gb(perf.decode_bytes_per_step), format_duration(perf.decode_memory_s), format_duration(step),
                // Closed-loop clients decode fewer sequences than the batch allows: the step is theirs.
                perf.concurrency > 0 ? static_cast<int>(std::ceil(perf.mean_concurrency)) : perf.batch,
                format_bandwidth(step > 0 ? perf.decode_bytes_per_step / step : 0),
                format_bandwidth(gpu.memory_bandwidth_bytes_per_s));
            if (workload.inference.batch > 0 && perf.batch < std::min(perf.max_batch_memory, 64)) {
                bottleneck.remedy =
                    "memory-bandwidth-bound decode: a larger batch reads the weights once for more "
                    "sequences (continuous batching); int4/FP8 weights cut the bytes per step";
            } else if (bits_per_weight(workload.weights) >= 16) {
                bottleneck.remedy =
                    "memory-bandwidth-bound decode: int4 (AWQ) or FP8 weights and an FP8 KV cache cut "
                    "the bytes per step; a GPU with more memory bandwidth lowers TPOT, more TFLOPS would not";
            } else if (workload.kv_cache != KvCacheFormat::fp8 && workload.kv_cache != KvCacheFormat::int8) {
                bottleneck.remedy =
                    "memory-bandwidth-bound decode: an FP8 KV cache cuts the bytes per step; a GPU with "
                    "more memory bandwidth lowers TPOT, more TFLOPS would not";
            } else {
                bottleneck.remedy =
                    "memory-bandwidth-bound decode: weights and KV cache are already 8-bit or less; a GPU with "
                    "more memory bandwidth lowers TPOT, more TFLOPS would not";
            }
            return;
        case Resource::compute:
            if (phase == BottleneckPhase::prefill) {
                bottleneck.detail = fmt::format(
                    "P{:g} TTFT binds: each {}-token prompt takes {} of tensor-core time to "
                    "prefill, and prompts queue behind each other",
                    perf.percentile, workload.inference.input_tokens, format_duration(perf.ttft_s));
            } else {
                bottleneck.detail = fmt::format(
                    "GEMMs bound by tensor throughput: {} compute of the {} decode step at "
                    "batch {}, prefill of a full batch {}",
                    format_duration(perf.decode_compute_s), format_duration(step), perf.batch,
                    format_duration(perf.batch_prefill_s));
            }
            if (phase == BottleneckPhase::prefill) {
                bottleneck.remedy =
                    gpu.supports(Precision::fp8) && !is_fp8_format(workload.weights) && !is_fp4_format(workload.weights)
                        ? "compute-bound prefill: more replicas share the prompts; FP8 GEMMs double the "
                          "tensor rate on this GPU; more memory bandwidth would not help"
                        : "compute-bound prefill: more replicas share the prompts, or a GPU with more tensor "
                          "TFLOPS; more memory bandwidth would not help";
            } else {
                bottleneck.remedy =
                    gpu.supports(Precision::fp8) && !is_fp8_format(workload.weights) && !is_fp4_format(workload.weights)
                        ? "compute-bound: FP8 weights and activations roughly double the tensor rate on this GPU"
                        : "compute-bound: a GPU with more tensor TFLOPS, or a smaller batch for lower TPOT";
            }
            return;
        case Resource::launch_overhead:
            bottleneck.detail =
                fmt::format("per-layer launch and sync overhead {} of the {} step ({} layers)",
                            format_duration(perf.decode_overhead_s), format_duration(step), workload.model.layers);
            bottleneck.remedy =
                stack == ServingStack::optimized
                    ? "launch-bound: a larger batch amortises the fixed per-step cost; a faster GPU would "
                      "not help"
                    : "launch-bound: CUDA graphs or a compiled engine (TensorRT-LLM, vLLM) and a larger "
                      "batch amortise the fixed per-step cost; a faster GPU would not help";
            return;
        case Resource::interconnect:
            bottleneck.detail = fmt::format("tensor/pipeline-parallel traffic {} of the {} step",
                                            format_duration(perf.decode_communication_s), format_duration(step));
            bottleneck.remedy =
                "communication-bound: keep tensor parallel inside an NVLink domain, or run replicas of "
                "a quantized model that fits one GPU";
            return;
        case Resource::host_link:
        case Resource::input_pipeline:
            bottleneck.detail = "host-side time dominates";
            bottleneck.remedy = "keep inputs on the GPU; pin host memory";
            return;
    }
}

// Detail and remedy for a training bottleneck.
void explain_training(const Workload& workload, const GpuSpec& gpu, const PerfEstimate& estimate,
                      const TrainingPerf& perf, Bottleneck& bottleneck) {
    const Layout& layout = estimate.layout;
    const double gpu_samples_per_s = perf.global_batch / std::max(1e-12, perf.step_time_s - perf.input_s);
    switch (bottleneck.resource) {
        case Resource::compute:
            bottleneck.detail = fmt::format("MFU {} of {}'s dense {} peak; pipeline bubble {}", percent(perf.mfu),
                                            gpu.id, to_string(estimate.precision), percent(perf.bubble_fraction));
            if (perf.bubble_fraction > 0.15) {
                bottleneck.remedy = fmt::format(
                    "compute-bound with a {} pipeline bubble: more micro-batches per step "
                    "(gradient accumulation), an interleaved schedule "
                    "(training.virtual_stages) or fewer pipeline stages",
                    percent(perf.bubble_fraction));
            } else if (gpu.supports(Precision::fp8) && estimate.precision != Precision::fp8) {
                bottleneck.remedy =
                    "compute-bound, as training should be: FP8 (Transformer Engine GEMMs on the FP8 peak) or "
                    "more GPUs shorten the run";
            } else {
                bottleneck.remedy =
                    "compute-bound, as training should be: a GPU with more tensor TFLOPS or more GPUs "
                    "shorten the run";
            }
            return;
        case Resource::memory_bandwidth:
            bottleneck.detail = fmt::format("bandwidth-bound kernels and the optimizer take {} of the {} step",
                                            format_duration(perf.memory_s), format_duration(perf.step_time_s));
            bottleneck.remedy =
                workload.model.is_transformer()
                    ? "memory-bandwidth-bound: a larger micro-batch amortises the optimizer step; fused "
                      "optimizers (apex/fused AdamW) cut its traffic"
                    : "memory-bandwidth-bound (normalisation and activation layers): channels_last and "
                      "fused kernels (torch.compile, DALI), a larger batch; a GPU with more memory "
                      "bandwidth helps, more TFLOPS would not";
            return;
        case Resource::interconnect:
            bottleneck.detail =
                fmt::format("collectives not hidden behind compute: {} of the {} step (tp {}, pp {}, dp {})",
                            format_duration(perf.communication_s), format_duration(perf.step_time_s),
                            layout.tensor_parallel, layout.pipeline_parallel, layout.data_parallel);
            bottleneck.remedy =
                "communication-bound: keep tensor parallel inside NVLink, raise the micro-batch or "
                "gradient accumulation so all-reduces hide behind backward, prefer ZeRO-1/2 over ZeRO-3, "
                "or a faster network (InfiniBand NDR)";
            return;
        case Resource::host_link:
            bottleneck.detail = fmt::format("host-to-device copies {} of the {} step",
                                            format_duration(perf.host_transfer_s), format_duration(perf.step_time_s));
            bottleneck.remedy =
                workload.training.offload != Offload::none
                    ? "host-link-bound: keep the optimizer on the GPUs (ZeRO-1/2 sharding instead of CPU "
                      "offload) or a GPU with more memory"
                    : "host-link-bound: pin memory (pin_memory: true) so copies overlap compute";
            return;
        case Resource::input_pipeline: {
            const DataSpec& data = perf.input_data ? *perf.input_data : workload.data;
            bottleneck.detail = fmt::format("the input pipeline delivers {}{}, the GPUs could consume {}",
                                            format_rate(perf.input_samples_per_s, "samples/s"),
                                            data.given ? "" : " (assumed: no data: section)",
                                            format_rate(gpu_samples_per_s, "samples/s"));
            const int per_node = std::max(1, workload.constraints.gpus_per_node);
            const int gpus = layout.gpu_count();
            const int nodes = (gpus + per_node - 1) / per_node;
            const bool cpu_bound =
                data.decode == Decode::cpu && data.cpu_samples_per_s_per_core > 0 &&
                std::min(data.cpu_cores, std::max(1, data.loader_workers)) * data.cpu_samples_per_s_per_core * nodes <=
                    perf.input_samples_per_s * 1.0001;
            if (cpu_bound) {
                const int workers_needed =
                    static_cast<int>(std::ceil(gpu_samples_per_s / nodes / data.cpu_samples_per_s_per_core));
                const char* cores = data.given ? "CPU cores" : "vCPUs";
                std::string workers =
                    workers_needed <= data.cpu_cores
                        ? fmt::format("{} loader workers", workers_needed)
                        : fmt::format("{} {} per node (has {})", workers_needed, cores, data.cpu_cores);
                bottleneck.remedy = fmt::format(
                    "input-bound: move JPEG decode to the GPU (DALI, nvJPEG){}, {}, or store the samples "
                    "pre-decoded (LMDB, FFCV) — a faster GPU would not help",
                    data.pin_memory ? "" : ", pin memory", workers);
            } else {
                bottleneck.remedy =
                    "input-bound: storage cannot stream the samples fast enough — cache the dataset in RAM "
                    "or on local NVMe; a faster GPU would not help";
            }
            return;
        }
        case Resource::memory_capacity: {
            // estimate_perf measures what overflows whenever memory capacity binds.
            const TrainingMemoryUse use = perf.memory_use.value_or(TrainingMemoryUse{});
            if (use.states_bytes > use.usable_bytes) {
                bottleneck.detail =
                    fmt::format("weights, gradients and optimizer state alone need {} of {} usable per GPU",
                                format_gb(use.states_bytes), format_gb(use.usable_bytes));
                bottleneck.remedy =
                    "shard the optimizer state (ZeRO-1/2, FSDP), split the model further, or use more GPUs";
            } else {
                bottleneck.detail = fmt::format(
                    "the micro-batch's activations ({}) and the overheads ({}) do not fit "
                    "beside the weights, gradients and optimizer state ({}) in {} usable per GPU",
                    format_gb(use.activations_bytes), format_gb(use.overhead_bytes), format_gb(use.states_bytes),
                    format_gb(use.usable_bytes));
                bottleneck.remedy =
                    "recompute activations (training.checkpointing), a smaller micro-batch, or more "
                    "tensor, pipeline or context parallelism";
            }
            return;
        }
        case Resource::launch_overhead:
            bottleneck.detail = "kernel launch gaps";
            bottleneck.remedy = "a larger micro-batch or torch.compile / CUDA graphs";
            return;
    }
}

}  // namespace

BottleneckExplanation explain_bottleneck(const Workload& workload, const GpuSpec& gpu, const PerfEstimate& estimate) {
    Bottleneck bottleneck = estimate.bottleneck;
    if (estimate.training) {
        explain_training(workload, gpu, estimate, *estimate.training, bottleneck);
    } else if (estimate.inference) {
        explain_inference(workload, estimate.precision, gpu, *estimate.inference, estimate.stack, bottleneck.phase,
                          bottleneck);
    } else {
        bottleneck.detail = "no speed estimate for this model";
        bottleneck.remedy = "give flops_per_sample (forward FLOPs per sample) or the transformer fields";
    }
    return {std::move(bottleneck.detail), std::move(bottleneck.remedy)};
}

void fill_bottleneck_explanation(const Workload& workload, const GpuSpec& gpu, PerfEstimate& estimate) {
    BottleneckExplanation explanation = explain_bottleneck(workload, gpu, estimate);
    estimate.bottleneck.detail = std::move(explanation.detail);
    estimate.bottleneck.remedy = std::move(explanation.remedy);
}

}  // namespace gpusel
